//! The sentences the player and the scripted commands say of what the
//! session reports as data: one wording for the screen and for stderr.

use crate::domain::session::{NotMarked, QuitSummary, SyncNews};

/// "1 book", "12 books": a count with its word, plural when it is not 1.
pub fn count(n: usize, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}

/// What quitting left behind, in one sentence (`None`: nothing).
pub fn farewell(q: &QuitSummary) -> Option<String> {
    if q.left == 0 {
        return None;
    }
    let left = count(q.left, "change");
    let asked = match q.asked_to_wait {
        Some(w) => format!(" (the server asked to wait {} s)", w.as_secs().max(1)),
        None => String::new(),
    };
    let (they, are) = match q.left {
        1 => ("it", "is"),
        _ => ("they", "are"),
    };
    Some(match &q.in_memory {
        None => format!(
            "{left} could not be sent yet{asked}; {they} {are} kept and sent next time (see `earmark sync pending`)"
        ),
        Some(why) => format!(
            "{left} could not be sent, and {they} {are} lost: the sync journal could not keep {} on this device ({why})",
            if q.left == 1 { "it" } else { "them" }
        ),
    })
}

/// Sync's news in one sentence.
pub fn sync_news(n: &SyncNews) -> String {
    match n {
        SyncNews::JournalDamaged { recovered, skipped } => format!(
            "The sync journal was damaged (a crash or a full disk): {} recovered, {} skipped.",
            count(*recovered, "whole change"),
            count(*skipped, "damaged record")
        ),
        SyncNews::HistoryDamaged { kept, skipped } => format!(
            "The listening history was damaged (a crash or a full disk): {} kept, {} skipped.",
            count(*kept, "whole record"),
            count(*skipped, "damaged record")
        ),
        SyncNews::JournalLocked => "Progress sync keeps changes in memory only (another earmark is using this profile's journal): quit the other player, or changes made now are lost when you quit.".into(),
        SyncNews::NotSaved { history, why } => format!(
            "Progress sync cannot save {} on this device ({why}); changes are kept in memory and sent while the server is reachable, and lost if earmark quits before that.",
            if *history { "changes or the listening history" } else { "changes" }
        ),
        SyncNews::SavedAgain => "Progress sync saves changes on this device again.".into(),
        SyncNews::HistoryNotSaved { why } => {
            format!("{why}; it is kept in memory until you quit.")
        }
        SyncNews::SetAside { book, times, why } => format!(
            "The server refused a change for book {book} {times} times ({why}); it is set aside: `earmark sync pending` shows it, `earmark sync retry` sends it again, `earmark sync discard --refused` drops it."
        ),
        SyncNews::NotMarked(NotMarked::PlaceUnreadable) => "Could not mark the book: its place on the server could not be read, and earmark does not write over a place it cannot see.".into(),
        SyncNews::NotMarked(NotMarked::OfflineUnknown) => "Could not mark the book: the server cannot be reached and this device does not know your place in it.".into(),
        SyncNews::NotMarked(NotMarked::NoChapters) => {
            "Could not mark the book: its chapters could not be read.".into()
        }
        SyncNews::KeptOffline => {
            "Offline: the change is saved here and sent when the server is back.".into()
        }
        SyncNews::PlaceUnreadable { book } => format!(
            "The place of book {book} on the server could not be read (an answer earmark does not understand), so nothing is reported for it until you pick a place; see the log."
        ),
    }
}

/// Whether a piece of news is a failure (shown as an error).
pub fn sync_news_failed(n: &SyncNews) -> bool {
    matches!(n, SyncNews::NotMarked(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_the_farewell_say_one_and_many_in_words() {
        assert_eq!(count(1, "change"), "1 change");
        assert_eq!(count(2, "change"), "2 changes");
        let mut q = QuitSummary {
            left: 1,
            timed_out: true,
            in_memory: None,
            asked_to_wait: None,
        };
        let one = farewell(&q).unwrap();
        assert!(
            one.starts_with("1 change could not be sent yet; it is kept"),
            "{one}"
        );
        q.left = 3;
        q.in_memory = Some("the disk is full".into());
        let many = farewell(&q).unwrap();
        assert!(
            many.starts_with("3 changes could not be sent, and they are lost"),
            "{many}"
        );
        q.left = 0;
        assert_eq!(farewell(&q), None);
    }
}
