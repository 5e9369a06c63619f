//! One search scan, scored a chunk at a time and merged best first.

use super::match_key;
use crate::domain::Book;
use nucleo_matcher::pattern::Pattern;
use nucleo_matcher::{Matcher, Utf32Str};

/// Candidates scored per update step (about 2–5 ms on one slow core): a
/// keystroke's frame never waits for a full scan of a big library; the rest
/// is scored on the following ticks.
pub const SCAN_CHUNK: usize = 4_000;

/// A search scan that has not seen all its candidates yet.
pub(super) struct Scan {
    pub(super) query: String,
    pub(super) pattern: Pattern,
    pub(super) candidates: Vec<u32>,
    pub(super) next: usize,
    /// Matches so far, best first (score descending, then book index).
    pub(super) found: Vec<(u32, u32)>,
    /// Reused buffers for the candidate's key (see `match_key`).
    pub(super) key: String,
    pub(super) key_chars: Vec<char>,
}

fn better(a: &(u32, u32), b: &(u32, u32)) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then(a.1.cmp(&b.1))
}

impl Scan {
    /// Scores the next chunk (at most `SCAN_CHUNK` candidates) into `found`.
    pub(super) fn step(&mut self, books: &[Book], matcher: &mut Matcher) {
        let end = (self.next + SCAN_CHUNK).min(self.candidates.len());
        let chunk = &self.candidates[self.next..end];
        let (key, chars) = (&mut self.key, &mut self.key_chars);
        let mut chunk: Vec<(u32, u32)> = chunk
            .iter()
            .filter_map(|&i| {
                match_key(&books[i as usize], key);
                self.pattern
                    .score(Utf32Str::new(key, chars), matcher)
                    .map(|s| (s, i))
            })
            .collect();
        self.next = end;
        chunk.sort_unstable_by(better);
        // Two sorted runs: the stable sort merges them in linear time.
        self.found.extend(chunk);
        self.found.sort_by(better);
    }

    pub(super) fn done(&self) -> bool {
        self.next == self.candidates.len()
    }
}
