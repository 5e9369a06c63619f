//! `earmark history BOOK_ID` and `earmark stats`: what this device
//! remembers about listening (read through sync's read-only view,
//! `sync::Records`; no server needed, and a running player is not
//! disturbed).

use super::Invocation;
use super::output::{Out, clock};
use crate::config::Profile;
use crate::domain::{BookId, now_millis};
use crate::sync::{Records, day_name, local_clock};
use serde_json::json;
use std::process::ExitCode;

fn fail(out: &mut Out, msg: &str) -> ExitCode {
    eprintln!("earmark: {msg}");
    out.error(1, msg);
    out.finish();
    ExitCode::from(1)
}

/// `earmark history BOOK_ID`: the place before each jump, newest first.
pub fn history(global: &Invocation, book: String) -> ExitCode {
    let mut out = Out::new(global.json);
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return fail(&mut out, &e.to_string()),
    };
    let book = BookId::new(book);
    let marks = match Records::new(profile.sync_dir()).history(&book) {
        Ok(m) => m,
        Err(e) => return fail(&mut out, &e),
    };
    out.json(json!({
        "bookId": book,
        "marks": marks.iter().rev().collect::<Vec<_>>(),
    }));
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
                m.chapter_id
            ));
        }
    }
    out.finish();
    ExitCode::SUCCESS
}

/// `earmark stats`: time listened on this device.
pub fn stats(global: &Invocation) -> ExitCode {
    let mut out = Out::new(global.json);
    let profile = match Profile::resolve(&global.select) {
        Ok(p) => p,
        Err(e) => return fail(&mut out, &e.to_string()),
    };
    let s = match Records::new(profile.sync_dir()).stats(now_millis()) {
        Ok(s) => s,
        Err(e) => return fail(&mut out, &e),
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
