//! The sleep timer: typed times, the end of N chapters, the extend key
//! (while fading and after the stop), the fade length, a countdown that
//! holds while paused (or counts on), and the whole way through the
//! player's backends on the null output and the reference server.

use crate::driver::Driver;
use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::event_loop::Backends;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;

fn engine(fx: &[Effect]) -> Vec<EngineCmd> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Engine(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn at(app: &mut App, state: PlayState, chapter: &str, position: f64) -> Vec<Effect> {
    app.update(Event::Answer(Answer::Engine(EngineView {
        playback_id: 1,
        book: BookId::new("moby"),
        chapter: ChapterId::new(chapter),
        position,
        state,
        speed: 1.25,
        volume: 0.8,
        approximate: false,
    })))
}

fn typed(app: &mut App, text: &str) {
    app.update(key('s'));
    for c in text.chars() {
        app.update(key(c));
    }
    app.update(code(KeyCode::Enter));
}

#[test]
fn a_typed_time_sets_the_timer() {
    let mut app = playing();
    typed(&mut app, "1:30");
    assert_eq!(
        app.sleep.and_then(|s| s.left_ms(app.now)),
        Some(90 * 60_000)
    );
    assert!(app.overlay.is_none());
    typed(&mut app, "1:75");
    assert!(app.toasts.back().unwrap().error, "a bad time is said");
}

#[test]
fn the_end_of_two_chapters_fades_near_the_end_of_the_second() {
    let mut app = playing(); // moby-2 at 600 of 1800 s, 1.25×
    typed(&mut app, "2ch");
    assert_eq!(app.sleep, Some(SleepTimer::Chapters { left: 2 }));
    at(&mut app, PlayState::Playing, "moby-2", 1795.0);
    assert_eq!(
        app.sleep,
        Some(SleepTimer::Chapters { left: 2 }),
        "not this one"
    );
    at(&mut app, PlayState::Playing, "moby-3", 0.0);
    assert_eq!(app.sleep, Some(SleepTimer::Chapters { left: 1 }));
    // 10 s fade at 1.25×: it starts 12.5 s of the book before the end.
    at(&mut app, PlayState::Playing, "moby-3", 1786.0);
    assert_eq!(app.sleep, Some(SleepTimer::Chapters { left: 1 }));
    at(&mut app, PlayState::Playing, "moby-3", 1788.0);
    assert!(matches!(app.sleep, Some(SleepTimer::Fading { .. })));
}

#[test]
fn extend_during_the_fade_gives_the_volume_back_and_five_more_minutes() {
    let mut app = playing();
    typed(&mut app, "1");
    let t = app.now;
    app.update(Event::Tick(t + 60_000));
    assert!(matches!(app.sleep, Some(SleepTimer::Fading { .. })));
    app.update(Event::Tick(t + 65_000));
    let fx = app.update(key('z'));
    assert_eq!(engine(&fx), [EngineCmd::FadeVolume(0.8)]);
    assert_eq!(app.sleep.and_then(|s| s.left_ms(app.now)), Some(300_000));
}

#[test]
fn extend_shortly_after_the_stop_resumes_and_later_it_does_not() {
    for (after, resumes) in [(30_000, true), (200_000, false)] {
        let mut app = playing();
        typed(&mut app, "1");
        let t = app.now;
        app.update(Event::Tick(t + 60_000));
        let fx = app.update(Event::Tick(t + 71_000));
        assert!(engine(&fx).contains(&EngineCmd::Pause), "{fx:?}");
        assert!(fx.iter().any(
            |e| matches!(e, Effect::MarkPlace { mark, .. } if mark.cause == JumpCause::Sleep)
        ));
        at(&mut app, PlayState::Paused, "moby-2", 660.0);
        app.update(Event::Tick(t + 71_000 + after));
        let fx = app.update(key('z'));
        assert_eq!(
            engine(&fx).contains(&EngineCmd::Toggle),
            resumes,
            "{after}: {fx:?}"
        );
    }
}

#[test]
fn the_fade_length_comes_from_the_settings() {
    let mut app = playing();
    app.settings.sleep.fade_ms = 2_000;
    typed(&mut app, "1");
    let t = app.now;
    app.update(Event::Tick(t + 60_000));
    let fx = app.update(Event::Tick(t + 62_100));
    assert!(engine(&fx).contains(&EngineCmd::Pause), "{fx:?}");
}

#[test]
fn the_countdown_holds_while_paused_unless_it_counts_on() {
    for (counts, left) in [(false, 600_000), (true, 300_000)] {
        let mut app = playing();
        app.settings.sleep.counts_while_paused = counts;
        typed(&mut app, "10");
        let t = app.now;
        at(&mut app, PlayState::Paused, "moby-2", 600.0);
        app.update(Event::Tick(t + 300_000));
        assert_eq!(
            app.sleep.and_then(|s| s.left_ms(app.now)),
            Some(left),
            "counts={counts}"
        );
    }
}

#[test]
fn sleep_bar_snapshots() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = playing();
        typed(&mut app, "1");
        let t = app.now;
        app.update(Event::Tick(t + 60_000));
        app.update(Event::Tick(t + 71_000));
        at(&mut app, PlayState::Paused, "moby-2", 612.0);
        insta::assert_snapshot!(format!("sleep_stopped_{w}x{h}"), render(&mut app, w, h));
        let mut app = playing();
        typed(&mut app, "1ch");
        insta::assert_snapshot!(
            format!("sleep_end_of_chapter_{w}x{h}"),
            render(&mut app, w, h)
        );
    }
}

/// Through the real backends: the timer fades, pauses the engine with the
/// volume given back, the place reaches the server and the history, and
/// the extend key resumes playback.
#[test]
fn the_timer_stops_the_engine_and_extend_resumes_it() {
    let mut settings = UiSettings::default();
    settings.sleep.fade_ms = 1_000;
    settings.smart_rewind = None;
    let mut d = Driver::start(settings);
    d.step(code(KeyCode::Enter)); // play chapter 1 from 0
    d.follow(
        "playing",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 1.0),
    );
    // Two seconds of timer (the menu's smallest is a minute).
    let now = d.app.now;
    d.app.sleep = Some(SleepTimer::Timed {
        left_ms: 2_000,
        since: Some(now),
    });
    d.follow("the stop", |a| {
        matches!(a.sleep, Some(SleepTimer::Stopped { .. }))
    });
    d.follow("paused", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    let (_, ch, stopped_at) = Driver::at(&d.app).unwrap();
    d.follow("the volume given back to the engine", |a| {
        a.playing
            .as_ref()
            .and_then(|p| p.engine.as_ref())
            .is_some_and(|e| e.volume > 0.99)
            && a.volume > 0.99
    });
    assert!(
        d.app
            .history
            .of(&d.book.id)
            .iter()
            .any(|m| m.cause == JumpCause::Sleep),
        "the stop is in the history"
    );
    d.step(key('z'));
    d.follow(
        "playing again",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p > stopped_at + 0.3),
    );
    d.step(key(' '));
    d.follow("paused by hand", |a| {
        matches!(Driver::at(a), Some((PlayState::Paused, _, _)))
    });
    d.live.shutdown();
    let p = d.server_progress();
    assert_eq!(p.chapter_id, ch);
    assert!(p.position > stopped_at, "{} vs {stopped_at}", p.position);
}

#[test]
fn times_left_are_at_the_speed_and_t_switches_to_book_time() {
    let mut app = playing(); // 1.25×, 20:00 of chapter 2 left
    let text = render(&mut app, 80, 24);
    assert!(text.contains("10:00 / 30:00 -16:00"), "{text}");
    assert!(text.contains("· 40:00 left"), "{text}"); // 50:00 of the book at 1.25×
    app.update(key('T'));
    let text = render(&mut app, 80, 24);
    assert!(text.contains("10:00 / 30:00 -20:00"), "{text}");
    assert!(text.contains("· 50:00 left"), "{text}");
    assert!(text.contains("left in book time"), "{text}");
    typed(&mut app, "1ch");
    assert!(render(&mut app, 80, 24).contains("sleep: ch end -20:00"));
    app.update(key('T'));
    assert!(render(&mut app, 80, 24).contains("sleep: ch end -16:00"));
}

fn remote(app: &mut App, cmd: RemoteCmd) -> Vec<Effect> {
    app.update(Event::Answer(Answer::Remote(cmd)))
}

#[test]
fn a_headset_play_pause_during_the_fade_extends_as_z_does() {
    for cmd in [RemoteCmd::PlayPause, RemoteCmd::Play] {
        let mut app = playing();
        typed(&mut app, "1");
        let t = app.now;
        app.update(Event::Tick(t + 60_000));
        app.update(Event::Tick(t + 65_000));
        assert!(matches!(app.sleep, Some(SleepTimer::Fading { .. })));
        let fx = remote(&mut app, cmd.clone());
        assert_eq!(
            engine(&fx),
            [EngineCmd::FadeVolume(0.8)],
            "{cmd:?}: the volume comes back, playback goes on"
        );
        assert_eq!(app.sleep.and_then(|s| s.left_ms(app.now)), Some(300_000));
    }
}

#[test]
fn a_headset_play_pause_after_the_stop_resumes_and_extends_for_two_minutes() {
    for (after, extends) in [(100_000, true), (121_000, false)] {
        let mut app = playing();
        typed(&mut app, "1");
        let t = app.now;
        app.update(Event::Tick(t + 60_000));
        app.update(Event::Tick(t + 71_000));
        at(&mut app, PlayState::Paused, "moby-2", 660.0);
        app.update(Event::Tick(t + 71_000 + after));
        let fx = remote(&mut app, RemoteCmd::PlayPause);
        assert!(engine(&fx).contains(&EngineCmd::Toggle), "{after}: {fx:?}");
        let timed = matches!(app.sleep, Some(SleepTimer::Timed { .. }));
        assert_eq!(timed, extends, "{after}: {:?}", app.sleep);
    }
}

#[test]
fn a_headset_play_pause_without_a_fading_timer_only_toggles() {
    let mut app = playing();
    typed(&mut app, "10");
    let fx = remote(&mut app, RemoteCmd::PlayPause);
    assert_eq!(engine(&fx), [EngineCmd::Toggle]);
    assert_eq!(
        app.sleep.and_then(|s| s.left_ms(app.now)),
        Some(600_000),
        "not extended while it runs"
    );
}

/// 23:10 UTC on 2026-11-22, the loop's clock at 0.
const LATE: EpochMillis = 1_795_389_000_000;

fn auto_settings(window: &str, timer: &str) -> UiSettings {
    let text = format!("[sleep]\nauto = \"{window}\"\nauto_timer = {timer}\n");
    earmark::ui::UiConfig::from_toml(&text, true, false)
        .unwrap()
        .settings
}

/// Moby Dick open with `settings`, the wall clock at `wall` (UTC).
fn at_clock(settings: UiSettings, wall: EpochMillis) -> App {
    let mut app = book_open();
    app.settings = settings;
    app.clock_origin = wall - app.now as EpochMillis;
    app.utc_offset_s = 0;
    app
}

fn start(app: &mut App) {
    app.update(key(' '));
    at(app, PlayState::Playing, "moby-2", 600.0);
}

#[test]
fn the_automatic_timer_sets_itself_when_playback_starts_between_its_hours() {
    let mut app = at_clock(auto_settings("22:30-06:00", "20"), LATE);
    start(&mut app);
    assert_eq!(
        app.sleep.and_then(|s| s.left_ms(app.now)),
        Some(20 * 60_000)
    );
    let toast = &app.toasts.back().unwrap().text;
    assert!(toast.contains("automatic, 22:30–06:00"), "{toast}");

    // At noon (UTC+1 of 11:10 UTC) nothing happens.
    let mut app = at_clock(auto_settings("22:30-06:00", "20"), LATE - 12 * 3_600_000);
    app.utc_offset_s = 3600;
    start(&mut app);
    assert_eq!(app.sleep, None);

    // The end of the chapter, in the small hours (across midnight).
    let mut app = at_clock(
        auto_settings("22:30-06:00", "\"chapter\""),
        LATE + 4 * 3_600_000,
    );
    start(&mut app);
    assert_eq!(app.sleep, Some(SleepTimer::Chapters { left: 1 }));
}

#[test]
fn the_automatic_timer_starts_when_the_clock_enters_its_hours_and_stays_off_once_turned_off() {
    // 23:09:50 local, playing; the window opens at 23:10.
    let mut app = at_clock(auto_settings("23:10-06:00", "30"), LATE - 10_000);
    start(&mut app);
    assert_eq!(app.sleep, None, "not yet");
    let t = app.now;
    app.update(Event::Tick(t + 5_000));
    assert_eq!(app.sleep, None);
    app.update(Event::Tick(t + 10_000));
    assert_eq!(
        app.sleep.and_then(|s| s.left_ms(app.now)),
        Some(30 * 60_000)
    );
    // Off by hand: it stays off while playback goes on…
    app.update(key('s'));
    for _ in 1..SLEEP_CHOICES.len() {
        app.update(key('j'));
    }
    app.update(code(KeyCode::Enter));
    assert_eq!(app.sleep, None, "turned off");
    app.update(Event::Tick(t + 60_000));
    assert_eq!(app.sleep, None, "stays off while it plays");
    // … and comes back when playback starts again.
    at(&mut app, PlayState::Paused, "moby-2", 650.0);
    app.update(Event::Tick(t + 70_000));
    at(&mut app, PlayState::Playing, "moby-2", 650.0);
    assert!(matches!(app.sleep, Some(SleepTimer::Timed { .. })));
}

/// Through the real backends: a headset's play/pause while the timer
/// fades keeps the engine playing, gives its volume back and extends the
/// timer (the D-Bus side of `Answer::Remote` is tests/ui/mpris.rs's).
#[test]
fn a_headset_play_pause_during_the_fade_keeps_the_engine_playing_at_full_volume() {
    let mut settings = UiSettings::default();
    settings.sleep.fade_ms = 6_000;
    settings.smart_rewind = None;
    let mut d = Driver::start(settings);
    d.step(code(KeyCode::Enter));
    d.follow(
        "playing",
        |a| matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p >= 0.5),
    );
    let now = d.app.now;
    d.app.sleep = Some(SleepTimer::Timed {
        left_ms: 500,
        since: Some(now),
    });
    d.follow("the engine fading", |a| {
        matches!(a.sleep, Some(SleepTimer::Fading { .. }))
            && a.playing
                .as_ref()
                .and_then(|p| p.engine.as_ref())
                .is_some_and(|e| e.volume < 0.8)
    });
    d.step(Event::Answer(Answer::Remote(RemoteCmd::PlayPause)));
    assert!(
        matches!(d.app.sleep, Some(SleepTimer::Timed { .. })),
        "{:?}",
        d.app.sleep
    );
    d.follow("full volume again", |a| {
        a.playing
            .as_ref()
            .and_then(|p| p.engine.as_ref())
            .is_some_and(|e| e.volume > 0.99)
    });
    let (state, _, at) = Driver::at(&d.app).unwrap();
    assert_eq!(state, PlayState::Playing);
    let later = d.app.now + 1_500;
    d.follow("still playing a while later", |a| {
        a.now >= later && matches!(Driver::at(a), Some((PlayState::Playing, _, p)) if p > at + 1.0)
    });
    d.live.shutdown();
}
