//! config.toml as the player reads it: the profile resolved from it (the
//! real file path, in a temp dir) and the UI's tables ([keys], [theme],
//! [player], [ui]).
#![no_main]
use earmark::config::{Config, Dirs, Profile, ProfileSelector};
use earmark::ui::UiConfig;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn dirs() -> &'static (tempfile::TempDir, Dirs) {
    static DIRS: OnceLock<(tempfile::TempDir, Dirs)> = OnceLock::new();
    DIRS.get_or_init(|| {
        let t = tempfile::tempdir().unwrap();
        let d = Dirs {
            config: t.path().join("config"),
            data: t.path().join("data"),
            cache: t.path().join("cache"),
        };
        std::fs::create_dir_all(&d.config).unwrap();
        (t, d)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (_, d) = dirs();
    std::fs::write(d.config_file(), data).unwrap();
    let _ = Profile::resolve_in(&ProfileSelector::default(), d.clone());
    if let Ok(c) = toml::from_str::<Config>(text) {
        // `[sound]` and `[downloads]` as `earmark play` and downloads check them.
        let _ = c.sound.map(|s| s.check());
        let _ = c.downloads.and_then(|d| d.max_size).map(|m| m.bytes());
    }
    let _ = UiConfig::from_toml(text, false);
    let _ = UiConfig::from_toml(text, true);
});
