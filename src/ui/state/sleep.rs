//! The sleep timer as the player shows and sets it: the menu's words and
//! the times left the bar shows. The timer itself is the session's (its
//! owner counts, fades and stops it for every client).

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
    /// The listener's choice, for the session's book.
    pub(super) fn set_sleep(&mut self, choice: SleepChoice, fx: &mut Vec<Effect>) {
        fx.push(Effect::Session(Command::Sleep(choice)));
    }

    /// Seconds of the book to the end of the chapter.
    pub fn chapter_left_media(&self) -> Option<f64> {
        self.playing()?.chapter_left()
    }

    /// The session's speed (1 without a book).
    pub fn speed(&self) -> f32 {
        self.playing().map_or(1.0, |p| p.speed)
    }

    /// A time left as the listener chose to see it: at the current speed
    /// (what it takes them), or the book's own time.
    pub fn shown_left(&self, media_secs: f64) -> f64 {
        if self.media_times {
            media_secs
        } else {
            media_secs / f64::from(self.speed().max(0.1))
        }
    }

    /// Milliseconds left of a timed sleep timer now.
    pub fn sleep_left_ms(&self) -> Option<u64> {
        self.snap.sleep?.left_ms(self.wall_now())
    }
}
