//! The accessible mode's words: the player's state as a sentence
//! ("Playing, chapter 3 of 10, 12 minutes left"), progress as text instead
//! of bars, and durations as a reader says them. Screen readers and
//! braille displays would otherwise meet glyphs (▶ ⏸ ◌) and rows of `█░`.

use crate::ui::state::{App, NowPlaying, PlayState, fmt_time};

/// "45 seconds", "12 minutes", "1 hour 5 minutes", "3 hours".
pub fn duration(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    let unit = |n: u64, word: &str| crate::ui::state::count(n as usize, word);
    if secs < 60 {
        return unit(secs, "second");
    }
    let minutes = (secs + 30) / 60;
    match (minutes / 60, minutes % 60) {
        (0, m) => unit(m, "minute"),
        (h, 0) => unit(h, "hour"),
        (h, m) => format!("{} {}", unit(h, "hour"), unit(m, "minute")),
    }
}

/// The state in a word or two.
pub fn state_word(state: &PlayState) -> String {
    match state {
        PlayState::Ready => "Ready, Space resumes".into(),
        PlayState::Loading => "Loading".into(),
        PlayState::Playing => "Playing".into(),
        PlayState::Paused => "Paused".into(),
        PlayState::Buffering => "Buffering".into(),
        PlayState::Stalled => "Stalled, waiting for the server".into(),
        PlayState::Ended => "Finished".into(),
        PlayState::Error(e) => format!("Error: {e}"),
    }
}

/// "Playing, chapter 3 of 10, 12 minutes left": the state, the chapter,
/// and the time left in the book as the bar shows it (at the speed, or
/// in the book's time after `T`).
pub fn sentence(app: &App, np: &NowPlaying) -> String {
    if app.license_block.is_some() {
        return "Stopped: license required".into();
    }
    let mut parts = vec![state_word(&np.state)];
    if let Some(i) = np.chapter_index() {
        parts.push(format!("chapter {} of {}", i + 1, np.manifest.items.len()));
    }
    if let (Some(p), Some(d)) = np.book_progress() {
        let left = duration(app.shown_left((d - p).max(0.0)));
        parts.push(format!("{left} left"));
    }
    parts.join(", ")
}

/// A progress bar's line as text: "chapter 1:05 of 25:00, 23:55 left",
/// "book 26:05 of 2:30:00 (17%), 2:03:55 left".
pub fn progress(label: &str, pos: Option<f64>, dur: Option<f64>, left: Option<f64>) -> String {
    let mut s = label.to_owned();
    match (pos, dur) {
        (Some(p), Some(d)) => {
            s.push_str(&format!(" {} of {}", fmt_time(p), fmt_time(d)));
            if label == "book" && d > 0.0 {
                s.push_str(&format!(" ({:.0}%)", (p / d * 100.0).clamp(0.0, 100.0)));
            }
        }
        (Some(p), None) => s.push_str(&format!(" at {}", fmt_time(p))),
        (None, Some(d)) => s.push_str(&format!(" of {}", fmt_time(d))),
        (None, None) => {}
    }
    if let Some(l) = left {
        s.push_str(&format!(", {} left", fmt_time(l)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration(0.4), "0 seconds");
        assert_eq!(duration(1.0), "1 second");
        assert_eq!(duration(45.0), "45 seconds");
        assert_eq!(duration(60.0), "1 minute");
        assert_eq!(duration(12.0 * 60.0 + 20.0), "12 minutes");
        assert_eq!(duration(3600.0), "1 hour");
        assert_eq!(duration(2.0 * 3600.0 + 5.0 * 60.0), "2 hours 5 minutes");
        assert_eq!(duration(3599.0), "1 hour");
    }

    #[test]
    fn progress_reads_as_text() {
        assert_eq!(
            progress("chapter", Some(65.0), Some(1500.0), Some(1435.0)),
            "chapter 1:05 of 25:00, 23:55 left"
        );
        assert_eq!(
            progress("book", Some(1565.0), Some(9000.0), None),
            "book 26:05 of 2:30:00 (17%)"
        );
        assert_eq!(progress("book", None, None, None), "book");
    }
}
