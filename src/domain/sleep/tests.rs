use super::*;

fn w(text: &str) -> SleepWindow {
    SleepWindow::parse(text).unwrap()
}

fn look(now: EpochMillis, playing: bool, started: bool) -> Playing {
    Playing {
        now,
        playing,
        started,
        chapter_changed: false,
        chapter_left: Some(600.0),
        volume: 0.8,
        minute: 23 * 60,
    }
}

#[test]
fn typed_sleep_times() {
    use SleepChoice::*;
    assert_eq!(parse_sleep("25"), Ok(Minutes(25)));
    assert_eq!(parse_sleep(" 90m "), Ok(Minutes(90)));
    assert_eq!(parse_sleep("1:30"), Ok(Minutes(90)));
    assert_eq!(parse_sleep("1h"), Ok(Minutes(60)));
    assert_eq!(parse_sleep("1h05"), Ok(Minutes(65)));
    assert_eq!(parse_sleep("3ch"), Ok(Chapters(3)));
    assert_eq!(parse_sleep("2C"), Ok(Chapters(2)));
    assert_eq!(parse_sleep("chapter"), Ok(Chapters(1)));
    assert_eq!(parse_sleep("OFF"), Ok(Off));
    assert!(parse_sleep("0").is_err());
    assert!(parse_sleep("1:75").is_err());
    assert!(parse_sleep("25:00:00").is_err());
    assert!(parse_sleep("abc").unwrap_err().contains("abc"));
    assert!(parse_sleep("0ch").is_err());
    assert!(parse_sleep("99999999999").is_err());
}

#[test]
fn a_held_countdown_keeps_what_was_left() {
    let t = SleepTimer::Timed {
        left_ms: 60_000,
        since: Some(1_000),
    };
    assert_eq!(t.left_ms(21_000), Some(40_000));
    assert_eq!(t.left_ms(100_000), Some(0));
    let held = SleepTimer::Timed {
        left_ms: 40_000,
        since: None,
    };
    assert_eq!(held.left_ms(1_000_000), Some(40_000));
}

#[test]
fn a_window_across_midnight_holds_the_late_evening_and_the_early_morning() {
    let night = w("22:30-06:00");
    let hm = |h: u32, m: u32| h * 60 + m;
    assert!(!night.contains(hm(22, 29)));
    assert!(night.contains(hm(22, 30)), "the start is in");
    assert!(night.contains(hm(0, 0)));
    assert!(!night.contains(hm(6, 0)), "the end is out");
    let nap = w("13:00-14:30");
    assert!(nap.contains(hm(13, 0)) && !nap.contains(hm(14, 30)));
    assert_eq!(night.label(), "22:30–06:00");
    assert_eq!(w(" 9:05 - 10:00 ").label(), "09:05–10:00");
    for bad in ["22:30", "25:00-06:00", "22:60-06:00", "2230-0600", "a-b"] {
        let e = SleepWindow::parse(bad).unwrap_err();
        assert!(e.contains("`auto`") && e.contains(bad), "{e}");
    }
    assert!(
        SleepWindow::parse("06:00-06:00")
            .unwrap_err()
            .contains("same time")
    );
}

#[test]
fn the_minute_of_the_day_follows_the_given_clock_and_offset() {
    let wall = 1_795_389_000_000; // 2026-11-22 23:10 UTC
    assert_eq!(minute_of_day(wall, 0), 23 * 60 + 10);
    assert_eq!(minute_of_day(wall, 3600), 10);
    assert_eq!(minute_of_day(-60_000, 0), 23 * 60 + 59);
}

fn auto(window: &str, choice: SleepChoice) -> Sleep {
    Sleep::new(SleepSettings {
        auto: Some(AutoSleep {
            window: w(window),
            choice,
        }),
        ..SleepSettings::default()
    })
}

/// A timer set at 0 while playing, with the default settings.
fn timer(choice: SleepChoice) -> Sleep {
    let mut s = Sleep::new(SleepSettings::default());
    s.set(choice, &look(0, true, false));
    s
}

#[test]
fn the_first_play_inside_the_automatic_hours_sets_the_timer() {
    let mut s = auto("22:00-06:00", SleepChoice::Minutes(30));
    // Nothing plays yet: nothing is set.
    assert!(s.follow(&look(0, false, false)).is_empty());
    let acts = s.follow(&look(1_000, true, true));
    assert!(matches!(
        s.timer,
        Some(SleepTimer::Timed {
            left_ms: 1_800_000,
            since: Some(1_000)
        })
    ));
    assert!(acts.contains(&SleepAct::Said(SleepNews::Set {
        choice: SleepChoice::Minutes(30),
        auto: Some(w("22:00-06:00")),
    })));
}

#[test]
fn an_automatic_timer_turned_off_stays_off_until_playback_starts_again() {
    let mut s = auto("22:00-06:00", SleepChoice::Minutes(30));
    s.follow(&look(0, true, true));
    s.set(SleepChoice::Off, &look(1_000, true, false));
    s.follow(&look(2_000, true, false));
    assert_eq!(s.timer, None);
    s.follow(&look(3_000, false, false));
    s.follow(&look(4_000, true, true));
    assert!(s.timer.is_some());
}

#[test]
fn a_timed_timer_fades_then_pauses_and_the_extend_key_resumes() {
    let mut s = timer(SleepChoice::Minutes(1));
    assert!(s.follow(&look(30_000, true, false)).is_empty());
    s.follow(&look(60_000, true, false));
    assert!(matches!(s.timer, Some(SleepTimer::Fading { .. })));
    let half = s.follow(&look(65_000, true, false));
    assert_eq!(half, vec![SleepAct::Fade(0.4)]);
    let end = s.follow(&look(70_000, true, false));
    assert!(end.contains(&SleepAct::Pause) && end.contains(&SleepAct::Fade(0.8)));
    let more = s.extend(&look(80_000, false, false));
    assert!(more.contains(&SleepAct::Play));
    assert_eq!(s.timer.and_then(|t| t.left_ms(80_000)), Some(300_000));
}

#[test]
fn a_held_timer_waits_while_paused() {
    let mut s = timer(SleepChoice::Minutes(1));
    s.follow(&look(10_000, false, false));
    s.follow(&look(500_000, false, false));
    assert_eq!(s.timer.and_then(|t| t.left_ms(500_000)), Some(50_000));
    s.follow(&look(510_000, true, true));
    assert_eq!(s.timer.and_then(|t| t.left_ms(520_000)), Some(40_000));
}

#[test]
fn the_end_of_chapter_timer_pauses_at_a_short_chapters_end() {
    let mut s = timer(SleepChoice::Chapters(2));
    let mut p = look(1_000, true, false);
    p.chapter_changed = true;
    s.follow(&p);
    assert_eq!(s.timer, Some(SleepTimer::Chapters { left: 1 }));
    p.now = 2_000;
    let acts = s.follow(&p);
    assert!(acts.contains(&SleepAct::Pause));
}

// What the player's tests asserted of its own timer before the session
// owned it (tests/ui/sleep.rs and flows.rs): now the machine's.

fn fading(fade_ms: u64) -> Sleep {
    let mut s = Sleep::new(SleepSettings {
        fade_ms,
        ..SleepSettings::default()
    });
    s.set(SleepChoice::Minutes(1), &look(0, true, false));
    s.follow(&look(60_000, true, false));
    assert!(matches!(s.timer, Some(SleepTimer::Fading { .. })));
    s
}

#[test]
fn five_minutes_fade_out_then_pause_and_write_the_place() {
    let mut s = Sleep::new(SleepSettings::default());
    s.set(SleepChoice::Minutes(5), &look(1_000, true, false));
    assert!(s.follow(&look(200_000, true, false)).is_empty());
    s.follow(&look(301_000, true, false));
    assert!(matches!(
        s.timer,
        Some(SleepTimer::Fading { since: 301_000, .. })
    ));
    assert_eq!(s.follow(&look(306_000, true, false)), [SleepAct::Fade(0.4)]);
    let end = s.follow(&look(311_500, true, false));
    assert_eq!(end[..2], [SleepAct::Pause, SleepAct::Fade(0.8)]);
    assert_eq!(s.timer, Some(SleepTimer::Stopped { at: 311_500 }));
}

#[test]
fn the_end_of_two_chapters_fades_near_the_end_of_the_second_at_the_speed() {
    let mut s = timer(SleepChoice::Chapters(2));
    // 4 s of listening left in the first: not this one.
    let mut p = look(1_000, true, false);
    p.chapter_left = Some(4.0);
    s.follow(&p);
    assert_eq!(s.timer, Some(SleepTimer::Chapters { left: 2 }));
    p.chapter_changed = true;
    p.chapter_left = Some(1440.0);
    s.follow(&p);
    assert_eq!(s.timer, Some(SleepTimer::Chapters { left: 1 }));
    // The 10 s fade starts 10 s of listening (12.5 s of the book at
    // 1.25×, as the owner counts it) before the end.
    p.chapter_changed = false;
    p.chapter_left = Some(10.4);
    s.follow(&p);
    assert_eq!(s.timer, Some(SleepTimer::Chapters { left: 1 }));
    p.chapter_left = Some(9.6);
    s.follow(&p);
    assert!(matches!(s.timer, Some(SleepTimer::Fading { .. })));
}

#[test]
fn extend_during_the_fade_gives_the_volume_back_and_five_more_minutes() {
    let mut s = fading(10_000);
    let acts = s.extend(&look(65_000, true, false));
    assert_eq!(acts[0], SleepAct::Fade(0.8));
    assert!(!acts.contains(&SleepAct::Pause) && !acts.contains(&SleepAct::Play));
    assert_eq!(s.timer.and_then(|t| t.left_ms(65_000)), Some(300_000));
}

#[test]
fn extend_shortly_after_the_stop_resumes_and_later_it_does_not() {
    for (after, resumes) in [(30_000, true), (200_000, false)] {
        let mut s = fading(10_000);
        let stop = s.follow(&look(71_000, true, false));
        assert!(stop.contains(&SleepAct::Pause));
        s.follow(&look(71_000 + after, false, false));
        let acts = s.extend(&look(71_000 + after, false, false));
        assert_eq!(acts.contains(&SleepAct::Play), resumes, "{after}: {acts:?}");
    }
}

#[test]
fn the_fade_length_comes_from_the_settings() {
    let mut s = fading(2_000);
    assert!(
        !s.follow(&look(61_900, true, false))
            .contains(&SleepAct::Pause)
    );
    assert!(
        s.follow(&look(62_100, true, false))
            .contains(&SleepAct::Pause)
    );
}

#[test]
fn the_countdown_holds_while_paused_unless_it_counts_on() {
    for (counts, left) in [(false, 600_000), (true, 300_000)] {
        let mut s = Sleep::new(SleepSettings {
            counts_while_paused: counts,
            ..SleepSettings::default()
        });
        s.set(SleepChoice::Minutes(10), &look(0, true, false));
        s.follow(&look(0, false, false));
        s.follow(&look(300_000, false, false));
        assert_eq!(
            s.timer.and_then(|t| t.left_ms(300_000)),
            Some(left),
            "counts={counts}"
        );
    }
}

#[test]
fn a_headset_play_during_the_fade_extends_as_the_key_does() {
    let mut s = fading(10_000);
    let acts = s
        .remote_play(&look(65_000, true, false))
        .expect("it extends");
    assert_eq!(acts[0], SleepAct::Fade(0.8), "the volume comes back");
    assert!(!acts.contains(&SleepAct::Play), "it plays already");
    assert_eq!(s.timer.and_then(|t| t.left_ms(65_000)), Some(300_000));
}

#[test]
fn a_headset_play_after_the_stop_resumes_and_extends_for_two_minutes() {
    for (after, extends) in [(100_000, true), (121_000, false)] {
        let mut s = fading(10_000);
        s.follow(&look(71_000, true, false));
        let p = look(71_000 + after, false, false);
        s.follow(&p);
        let acts = s.remote_play(&p);
        assert_eq!(acts.is_some(), extends, "{after}");
        if let Some(acts) = acts {
            assert!(acts.contains(&SleepAct::Play));
            assert!(matches!(s.timer, Some(SleepTimer::Timed { .. })));
        }
    }
}

#[test]
fn a_headset_play_without_a_fading_timer_only_plays() {
    let mut s = timer(SleepChoice::Minutes(10));
    assert_eq!(s.remote_play(&look(1_000, true, false)), None);
    assert_eq!(
        s.timer.and_then(|t| t.left_ms(0)),
        Some(600_000),
        "not extended"
    );
}

#[test]
fn the_automatic_timer_keeps_to_its_hours_and_its_choice() {
    // At noon nothing happens.
    let mut s = auto("22:30-06:00", SleepChoice::Minutes(20));
    let mut p = look(0, true, true);
    p.minute = 12 * 60;
    s.follow(&p);
    assert_eq!(s.timer, None);
    // The end of the chapter, in the small hours (across midnight).
    let mut s = auto("22:30-06:00", SleepChoice::Chapters(1));
    p.minute = 3 * 60 + 10;
    s.follow(&p);
    assert_eq!(s.timer, Some(SleepTimer::Chapters { left: 1 }));
}

#[test]
fn the_automatic_timer_starts_when_the_clock_enters_its_hours_while_playing() {
    let mut s = auto("23:10-06:00", SleepChoice::Minutes(30));
    let mut p = look(0, true, true);
    p.minute = 23 * 60 + 9;
    s.follow(&p);
    assert_eq!(s.timer, None, "not yet");
    p.started = false;
    p.now = 60_000;
    p.minute = 23 * 60 + 10;
    let acts = s.follow(&p);
    assert_eq!(s.timer.and_then(|t| t.left_ms(60_000)), Some(30 * 60_000));
    assert!(
        acts.iter()
            .any(|a| matches!(a, SleepAct::Said(SleepNews::Set { auto: Some(_), .. })))
    );
}
