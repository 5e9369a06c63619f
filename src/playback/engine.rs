//! The audio engine, private to the owner: started here (with the stream
//! resolver, the judge of a stream's refusal and `[sound]` of config.toml).
//! Engine commands (`player::Command`) are built only in the owner: from
//! the session's commands, from sync's asks ([`EngineAsk`], here) and
//! from its own stops and timers.

use crate::player::{
    Command, Engine, EngineConfig, EngineHandle, StreamPool, clamp_speed, mpa::SeekMaps,
    silence::SilenceRule,
};
use crate::sync::EngineAsk;

/// How the engine is started: what the owner built for it.
pub(super) struct Start {
    pub audio: crate::player::AudioMode,
    pub resolve: crate::player::StreamResolver,
    /// Whose stream refusals the judge reads (the current login).
    pub client: super::CurrentClient,
    pub seek_maps: SeekMaps,
    pub sound: Option<crate::config::SoundConfig>,
}

/// Starts the engine (its thread and the output).
pub(super) fn spawn(s: Start) -> Result<EngineHandle, String> {
    let mut config = EngineConfig::new(s.audio, s.resolve);
    config.seek_maps = s.seek_maps;
    let current = s.client.clone();
    // The login's pools, asked for per stream: API calls and streams share
    // its kept-alive connections (a new login's from its first stream).
    config.pool = Some(std::sync::Arc::new(move || {
        current
            .get()
            .map(|c| std::sync::Arc::new(LoginPools(c)) as std::sync::Arc<dyn StreamPool>)
    }));
    config.judge = super::stop::judge(s.client, config.judge.clone());
    if let Some(sound) = s.sound {
        config.loudness_target = sound.loudness_target;
        config.silence = SilenceRule::from_ms(
            sound.silence_threshold_db,
            sound.silence_min_ms,
            sound.silence_gap_ms,
        );
    }
    Engine::spawn(config)
}

/// A login's pools for the player: h2c on the origin of an address that
/// speaks it, the negotiating pool elsewhere (a CDN), HTTP/1.1 again at
/// once when an h2c request fails.
struct LoginPools(crate::api::Client);

impl StreamPool for LoginPools {
    fn pool(&self, url: &str) -> reqwest::Client {
        self.0.pool_for(url)
    }
    fn retry_pool(&self, url: &str, error: &reqwest::Error) -> Option<reqwest::Client> {
        self.0.after_failure(url, error)
    }
    fn throttles(&self) -> std::sync::Arc<crate::domain::backoff::Throttles> {
        self.0.throttles()
    }
}

/// The engine command for one of sync's asks. Public so a scripted engine
/// (the sync tests) sees exactly what the real one would get.
pub fn command_for(ask: EngineAsk) -> Command {
    match ask {
        EngineAsk::Load { manifest, start } => Command::Load {
            manifest,
            start,
            autoplay: true,
        },
        EngineAsk::Seek { chapter, position } => Command::Seek { chapter, position },
        EngineAsk::Speed(s) => Command::SetSpeed(clamp_speed(s)),
        EngineAsk::Volume(v) => Command::SetVolume(volume(v)),
        EngineAsk::Play => Command::Play,
        EngineAsk::Pause => Command::Pause,
    }
}

/// The sleep timer's fade (and its restore): applied, never saved.
pub(super) fn fade(engine: &EngineHandle, v: f32) {
    engine.send(Command::SetVolume(volume(v)));
}

/// A volume the output takes (0–1; not a number: 1).
pub(super) fn volume(v: f32) -> f32 {
    if v.is_finite() {
        v.clamp(0.0, 1.0)
    } else {
        1.0
    }
}
