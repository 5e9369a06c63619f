//! The listening statistics screen: opened with its key, read from sync
//! each time it opens (and on refresh), left with Back.

use super::*;

impl App {
    pub(super) fn show_stats(&mut self, fx: &mut Vec<Effect>) {
        if !matches!(self.screen, Screen::License | Screen::Stats) {
            self.prev_screen = self.screen;
        }
        self.screen = Screen::Stats;
        fx.push(Effect::LoadStats);
    }
}
