//! The sleep timer and the times left as the player shows them: the
//! menu's words, the countdown, times at the book's speed. The timer
//! itself is the session's (its owner counts, fades and stops it for every
//! client); the menu sends it the listener's choice.

use super::*;

/// A menu line: "15 minutes", "End of chapter", "Off".
pub fn choice_label(c: SleepChoice) -> String {
    match c {
        SleepChoice::Minutes(m) => format!("{m} minutes"),
        SleepChoice::Chapters(1) => "End of chapter".into(),
        SleepChoice::Chapters(n) => format!("End of {n} chapters"),
        SleepChoice::Off => "Off".into(),
    }
}

impl App {
    /// The session's speed (1 without a book).
    pub fn speed(&self) -> f32 {
        player::speed(self.playing())
    }

    /// A time left as the listener chose to see it: at the book's speed
    /// (what it takes them), or the book's own time.
    pub fn shown_left(&self, media_secs: f64) -> f64 {
        self.player.shown_left(self.playing(), media_secs)
    }
}
