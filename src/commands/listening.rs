//! `earmark history BOOK_ID` and `earmark stats`: what this device
//! remembers about listening (read through sync's read-only view,
//! `sync::Records`; no server needed, and a running player is not
//! disturbed). The history names chapters by number and title from a
//! download's chapter list, else the server's when it answers.

use super::Invocation;
use super::output::{Out, chapter_name, clock};
use crate::config::{Profile, Session};
use crate::domain::{BookId, Manifest, now_millis};
use crate::offline::Store;
use crate::sync::{Records, day_name, local_clock};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;

/// `earmark history BOOK_ID`: the place before each jump, newest first.
pub fn history(global: &Invocation, book: String) -> ExitCode {
    let mut out = Out::new(global.json);
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return out.fail(1, &e.to_string()),
    };
    let book = BookId::new(book);
    let marks = match Records::new(profile.sync_dir()).history(&book) {
        Ok(m) => m,
        Err(e) => return out.fail(1, &e),
    };
    let chapters = match marks.is_empty() {
        true => None,
        false => chapter_list(&profile, &book),
    };
    let named: Vec<Value> = marks
        .iter()
        .rev()
        .map(|m| {
            let mut v = json!(m);
            let i = chapters.as_ref().and_then(|c| c.position_of(&m.chapter_id));
            v["chapterNumber"] = json!(i.map(|i| i + 1));
            v["chapterTitle"] = json!(i.and_then(|i| Some(&chapters.as_ref()?.items[i].title)));
            v
        })
        .collect();
    out.json(json!({"bookId": book, "marks": named}));
    if marks.is_empty() {
        out.line(format!(
            "No place history for book {book} on this device (profile {}).",
            profile.name
        ));
    } else {
        out.line(format!(
            "{:<16}  {:<11}  {:<10}  chapter",
            "when", "why", "at"
        ));
        for m in marks.iter().rev() {
            out.line(format!(
                "{:<16}  {:<11}  {:<10}  {}",
                local_clock(m.at),
                m.cause.word(),
                clock(m.position),
                chapter_name(chapters.as_ref(), &m.chapter_id)
            ));
        }
    }
    out.finish();
    ExitCode::SUCCESS
}

/// The book's chapter list, to name its chapters: a download's on this
/// device, else the server's (within a few seconds: the history needs no
/// server); `None` (chapters named by id, stderr says why) without either.
fn chapter_list(profile: &Profile, book: &BookId) -> Option<Manifest> {
    let download = Session::load(profile).ok().and_then(|s| {
        let d = Store::new(&profile.dirs.data)
            .get(&s.account(), book)
            .ok()??;
        Some(d.snapshot.manifest)
    });
    if download.is_some() {
        return download;
    }
    match super::export::read_book(profile, book, Some(Duration::from_secs(3))) {
        Ok((_, m)) => Some(m),
        Err(e) => {
            eprintln!(
                "earmark: the book's chapters could not be read ({e}); chapters are named by their ids."
            );
            None
        }
    }
}

/// `earmark stats`: time listened on this device.
pub fn stats(global: &Invocation) -> ExitCode {
    let mut out = Out::new(global.json);
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return out.fail(1, &e.to_string()),
    };
    let s = match Records::new(profile.sync_dir()).stats(now_millis()) {
        Ok(s) => s,
        Err(e) => return out.fail(1, &e),
    };
    let days: Vec<_> = s
        .last_30
        .iter()
        .map(|d| json!({"date": day_name(d.day), "wallSecs": d.wall_secs, "mediaSecs": d.media_secs}))
        .collect();
    out.json(json!({
        "today": day_name(s.today),
        "last30Days": days,
        "totalWallSecs": s.total_wall_secs,
        "totalMediaSecs": s.total_media_secs,
        "longestStreakDays": s.longest_streak_days,
        "currentStreakDays": s.current_streak_days,
        "booksFinished": s.books_finished,
        "books": s.books,
    }));
    out.line(format!(
        "Listened on this device: {} ({} of books at your speeds)",
        clock(s.total_wall_secs),
        clock(s.total_media_secs)
    ));
    out.line(format!(
        "Streak: {} day(s), longest {} · books finished: {}",
        s.current_streak_days, s.longest_streak_days, s.books_finished
    ));
    let most = s.last_30.iter().map(|d| d.wall_secs).fold(0.0, f64::max);
    for d in s.last_30.iter().filter(|d| d.wall_secs > 0.0) {
        let bar = "█".repeat(((d.wall_secs / most.max(1.0)) * 30.0).round() as usize);
        out.line(format!(
            "{}  {:>8}  {bar}",
            day_name(d.day),
            clock(d.wall_secs)
        ));
    }
    for b in &s.books {
        out.line(format!(
            "{:>8}  {}{}",
            clock(b.wall_secs),
            b.book_id,
            if b.finished { " (finished)" } else { "" }
        ));
    }
    out.finish();
    ExitCode::SUCCESS
}
