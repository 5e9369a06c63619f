//! The player bar, always at the bottom: state, title, chapter, a chapter
//! bar, a whole-book bar with chapter ticks, times at the current speed,
//! speed, volume, sleep countdown, sync state and what plays next. In the accessible mode
//! the rule has no `─`, the state is a sentence and the bars are text.

use super::layout::{Areas, bar_margins};
use super::spoken;
use super::text::{fit, fit_right, put, width};
use crate::domain::clock::ClockTimes;
use crate::domain::session::{Landing, Link, SoundNow};
use crate::ui::keymap::Action;
use crate::ui::state::{App, NowPlaying, PlayState, SleepTimer, fmt_time};
use crate::ui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

pub fn render(app: &App, theme: &Theme, buf: &mut Buffer, areas: &Areas) {
    let r = areas.bar;
    if r.height == 0 || r.width == 0 {
        return;
    }
    let status = status_text(app);
    let Some(np) = app.playing() else {
        return nothing_playing(app, theme, buf, r, &status);
    };
    let said = app.settings.accessible;
    let state = if said {
        spoken::sentence(app, np)
    } else {
        state_label(np, app)
    };
    let title = match np.chapter_title() {
        Some(ch) => format!("{} · {ch}", np.book.title),
        None => np.book.title.clone(),
    };
    if r.height == 1 {
        return one_line(np, theme, buf, r, &format!("{state} {title}"));
    }
    let mut y = r.y;
    if r.height >= 4 {
        rule(buf, theme, r, y, &state, &status, said);
        y += 1;
        title_line(app, np, theme, buf, r, y, &title);
    } else {
        // Compact: state and title share the first line.
        let sep = if said { ": " } else { " " };
        let first = format!("{state}{sep}{title}");
        rule(buf, theme, r, y, &first, &status, said);
    }
    y += 1;
    let times = Times::of(app, np);
    if said {
        spoken_lines(&times, theme, buf, r, y);
    } else {
        bars(&times, np, theme, buf, r, y);
    }
}

/// `~` before a place the engine estimated (not yet the audio's).
fn about(np: &NowPlaying) -> &'static str {
    match np.landed == Landing::Approximate {
        true => "~",
        false => "",
    }
}

/// The chapter's and the book's places, lengths and times left, by one
/// rule (`domain::clock`): elapsed and length in whole seconds, what is
/// left their difference (at the listener's speed), so the three add up.
struct Times {
    /// Place, length, shown place, left: the chapter's.
    chapter: (f64, Option<f64>, f64, Option<f64>),
    /// The same of the book (what is known of it).
    book: (Option<f64>, Option<f64>, Option<f64>, Option<f64>),
}

impl Times {
    fn of(app: &App, np: &NowPlaying) -> Times {
        let left = |p: f64, d: f64| app.shown_left(ClockTimes::new(p, d).remaining as f64);
        let (cpos, cdur) = np.chapter_progress();
        let (bpos, bdur) = np.book_progress();
        let cshown = cdur.map_or(cpos, |d| ClockTimes::new(cpos, d).elapsed as f64);
        let bshown = match (bpos, bdur) {
            (Some(p), Some(d)) => Some(ClockTimes::new(p, d).elapsed as f64),
            (p, _) => p,
        };
        let book_left = bpos.zip(bdur).map(|(p, d)| left(p, d));
        Times {
            chapter: (cpos, cdur, cshown, cdur.map(|d| left(cpos, d))),
            book: (bpos, bdur, bshown, book_left),
        }
    }
}

/// No book: the bar says so, and the first keys to know.
fn nothing_playing(app: &App, theme: &Theme, buf: &mut Buffer, r: Rect, status: &str) {
    let said = app.settings.accessible;
    let w = usize::from(r.width);
    let line = format!(
        "{}Nothing playing{}",
        if said { "" } else { "■ " },
        if w >= 50 {
            " · open a book, Enter plays"
        } else {
            ""
        }
    );
    rule(buf, theme, r, r.y, &line, status, said);
    let hints = [
        "Space play/pause · ←/→ skip · h/l long skip · [ ] speed",
        "/ search · Enter open · t filter · o sort · f favorite",
        "? every key · q back · Q quit",
    ];
    let rows = usize::from(r.height.saturating_sub(1));
    for (i, h) in hints.iter().enumerate().take(rows) {
        let y = r.y + 1 + i as u16;
        put(buf, r, r.x + 1, y, &fit(h, w.saturating_sub(2)), theme.dim);
    }
}

/// A bar of one line: the state and title, and where the book is.
fn one_line(np: &NowPlaying, theme: &Theme, buf: &mut Buffer, r: Rect, line: &str) {
    let (bpos, _) = np.book_progress();
    let times = format!(" {}{}", about(np), fmt_time(bpos.unwrap_or(np.position)));
    let room = usize::from(r.width).saturating_sub(width(&times));
    let line = fit(line, room);
    put(buf, r, r.x, r.y, &line, theme.accent);
    put(buf, r, r.x + width(&line) as u16, r.y, &times, theme.dim);
}

/// The title, and right of it boost, normalisation, skip silence and
/// what plays next.
#[allow(clippy::too_many_arguments)]
fn title_line(
    app: &App,
    np: &NowPlaying,
    theme: &Theme,
    buf: &mut Buffer,
    r: Rect,
    y: u16,
    title: &str,
) {
    let w = usize::from(r.width);
    let mut sound = match w >= 40 {
        true => sound_parts(&np.sound).join(" · "),
        false => String::new(),
    };
    let room = (w / 3).saturating_sub(width(&sound) + 3);
    if w >= 50
        && let Some(next) = super::up_next::bar_next(app, room)
    {
        sound = match sound.is_empty() {
            true => next,
            false => format!("{sound} · {next}"),
        };
    }
    let room = match sound.is_empty() {
        true => w.saturating_sub(1),
        false => w.saturating_sub(width(&sound) + 3),
    };
    put(buf, r, r.x + 1, y, &fit(title, room), theme.title);
    if !sound.is_empty() {
        let x = r.right().saturating_sub(width(&sound) as u16 + 1);
        put(buf, r, x, y, &sound, theme.dim);
    }
}

/// The accessible mode: the chapter and the book in words, no bars.
fn spoken_lines(t: &Times, theme: &Theme, buf: &mut Buffer, r: Rect, y: u16) {
    let (_, cdur, cshown, cleft) = t.chapter;
    let (_, bdur, bshown, bleft) = t.book;
    let lines = [
        spoken::progress("chapter", Some(cshown), cdur, cleft),
        spoken::progress("book", bshown, bdur, bleft),
    ];
    let w = usize::from(r.width).saturating_sub(2);
    for (i, line) in lines.iter().enumerate() {
        let yy = y + i as u16;
        if yy < r.bottom() {
            put(buf, r, r.x + 1, yy, &fit(line, w), theme.base);
        }
    }
}

/// The chapter's bar and the book's (with its chapter ticks).
fn bars(t: &Times, np: &NowPlaying, theme: &Theme, buf: &mut Buffer, r: Rect, y: u16) {
    let (cpos, cdur, cshown, cleft) = t.chapter;
    let about = about(np);
    let ch_times = match cdur {
        Some(d) => format!("{about}{} / {}", fmt_time(cshown), fmt_time(d)),
        None => format!("{about}{}", fmt_time(cpos)),
    };
    let frac = cdur.map(|d| cpos / d.max(0.001));
    progress_line(buf, theme, r, y, ("chapter", frac, &[]), &ch_times, cleft);
    if y + 1 >= r.bottom() {
        return;
    }
    let (bpos, bdur, bshown, bleft) = t.book;
    let bk_times = match (bshown, bdur) {
        (Some(p), Some(d)) => format!("{} / {}", fmt_time(p), fmt_time(d)),
        (Some(p), None) => fmt_time(p),
        (None, Some(d)) => format!("– / {}", fmt_time(d)),
        (None, None) => String::new(),
    };
    let frac = bpos.zip(bdur.filter(|d| *d > 0.0)).map(|(p, d)| p / d);
    let ticks = np.chapter_ticks();
    progress_line(
        buf,
        theme,
        r,
        y + 1,
        ("book", frac, &ticks),
        &bk_times,
        bleft,
    );
}

/// What the player bar shows of a book's sound: only what is on.
pub fn sound_parts(now: &SoundNow) -> Vec<String> {
    let s = &now.settings;
    let mut parts = Vec::new();
    if s.boost_db > 0.0 {
        parts.push(format!("+{:.0} dB", s.boost_db));
    }
    if s.normalize {
        parts.push(match now.norm_gain_db {
            Some(g) => format!("norm {g:+.1} dB"),
            None => "norm".into(),
        });
    }
    if s.skip_silence {
        parts.push(format!(
            "skip −{} (all −{})",
            fmt_time(now.saved_book),
            fmt_time(now.saved_total)
        ));
    }
    parts
}

fn state_label(np: &NowPlaying, app: &App) -> String {
    let s = match &np.state {
        PlayState::Ready => "⏵ Ready · Space resumes".to_owned(),
        PlayState::Loading => "◌ Loading".to_owned(),
        PlayState::Playing => "▶ Playing".to_owned(),
        PlayState::Paused => "⏸ Paused".to_owned(),
        PlayState::Buffering => "◌ Buffering".to_owned(),
        PlayState::Stalled => "⚠ Stalled: waiting for the server".to_owned(),
        PlayState::Ended => "■ Finished".to_owned(),
        PlayState::Error(e) => format!("✖ {e}"),
    };
    if app.license_block.is_some() {
        return "✖ Stopped: license required".into();
    }
    s
}

/// Speed, volume, sleep countdown, the address in use (of several), sync
/// state: the right side of the rule.
fn status_text(app: &App) -> String {
    let said = app.settings.accessible;
    // Speed and volume belong to a book: none without one.
    let mut parts = match (app.playing(), said) {
        (None, _) => Vec::new(),
        (Some(p), true) => vec![
            format!("speed {:.2}×", p.speed),
            format!("volume {:.0}%", p.volume * 100.0),
        ],
        (Some(p), false) => vec![
            format!("{:.2}×", p.speed),
            format!("vol {:.0}%", p.volume * 100.0),
        ],
    };
    if let Some(t) = sleep_label(app) {
        parts.push(match said {
            true => t.replace(" ⏸", " held while paused"),
            false => t,
        });
    }
    if app.player.media_times && app.speed() != 1.0 {
        parts.push("left in book time".into());
    }
    if let Some(v) = &app.via {
        parts.push(format!("via {v}"));
    }
    match app.snap.link {
        Link::Offline => parts.push("offline".into()),
        Link::Throttled(t) => parts.push(slowdown_words(t)),
        _ => {}
    }
    let q = &app.snap.queue;
    if q.queued > 0 {
        parts.push(format!("{} queued", q.queued));
    }
    if q.refused > 0 {
        parts.push(format!("{} refused", q.refused));
    }
    if app.unconfirmed() {
        parts.push("unconfirmed".into());
    }
    let estimated = |np: &NowPlaying| np.landed == crate::domain::session::Landing::Approximate;
    if said && app.playing().is_some_and(estimated) {
        parts.push("place estimated".into());
    }
    parts.join(if said { ", " } else { " · " })
}

/// A server's "slow down" in the bar's words.
fn slowdown_words(t: crate::domain::backoff::Slowdown) -> String {
    use crate::domain::backoff::Slowdown;
    match t {
        Slowdown::Asked { secs } => format!("the server asked to wait {secs} s"),
        Slowdown::Busy => "the server is busy".into(),
    }
}

/// The sleep timer's countdown, as the bar shows it.
fn sleep_label(app: &App) -> Option<String> {
    let extend = app.keymap.first_label(Action::SleepExtend);
    Some(match app.snap.sleep? {
        t @ SleepTimer::Timed { since, .. } => {
            let left = t.left_ms(app.wall_now()).unwrap_or(0) as f64 / 1000.0;
            let held = if since.is_none() { " ⏸" } else { "" };
            format!("sleep {}{held}", fmt_time(left))
        }
        SleepTimer::Chapters { left: 1 } => match app.playing().and_then(|p| p.chapter_left()) {
            Some(l) => format!("sleep: ch end -{}", fmt_time(app.shown_left(l))),
            None => "sleep: ch end".into(),
        },
        SleepTimer::Chapters { left } => format!("sleep: {left} ch"),
        SleepTimer::Fading { .. } => format!("sleep: fading · {extend} more"),
        SleepTimer::Stopped { .. } => format!("slept · {extend} more"),
    })
}

/// `─ left ──────── right ─`, the bar's first line. In the accessible mode
/// (`said`) a plain line, and the state (left) goes first: the speed and
/// the rest get what is left over.
fn rule(buf: &mut Buffer, theme: &Theme, r: Rect, y: u16, left: &str, right: &str, said: bool) {
    let w = usize::from(r.width);
    if said {
        let left = fit(left, w.saturating_sub(2));
        let x = put(buf, r, r.x + 1, y, &left, theme.accent);
        let room = usize::from(r.right().saturating_sub(x)).saturating_sub(4);
        if room >= 8 {
            let right = fit(right, room);
            let at = r.right().saturating_sub(width(&right) as u16 + 1);
            put(buf, r, at, y, &right, theme.base);
        }
        return;
    }
    put(buf, r, r.x, y, &"─".repeat(w), theme.dim);
    let right_w = if w >= 40 { width(right).min(w / 2) } else { 0 };
    // `─`, left, right with its spaces, `─`: the cut left keeps its `…`.
    let left = fit(&format!(" {left} "), w.saturating_sub(right_w + 4));
    put(buf, r, r.x + 1, y, &left, theme.accent);
    if right_w > 0 {
        let right = fit(&format!(" {right} "), right_w + 2);
        let x = r.right().saturating_sub(width(&right) as u16 + 1);
        put(buf, r, x, y, &right, theme.base);
    }
}

/// One bar: its label, how far (and its ticks), its times and what is left.
fn progress_line(
    buf: &mut Buffer,
    theme: &Theme,
    r: Rect,
    y: u16,
    (label, frac, ticks): (&str, Option<f64>, &[f64]),
    times: &str,
    left_at_speed: Option<f64>,
) {
    let (label_w, times_w) = bar_margins(r.width);
    let (label_w, times_w) = (usize::from(label_w), usize::from(times_w));
    let w = usize::from(r.width);
    let mut x = r.x;
    if label_w > 0 {
        let l = if label_w >= 9 {
            format!(" {label:<7} ")
        } else {
            format!(" {} ", &label[..1])
        };
        x = put(buf, r, x, y, &fit(&l, label_w), theme.dim);
    }
    let bar_w = w.saturating_sub(label_w + times_w);
    if bar_w >= 4 {
        let cells = bar_cells(frac, ticks, bar_w);
        let done = frac.map_or(0, |f| (f.clamp(0.0, 1.0) * bar_w as f64).round() as usize);
        for (i, c) in cells.chars().enumerate() {
            let style = if i < done {
                theme.bar_done
            } else {
                theme.bar_todo
            };
            x = put(buf, r, x, y, c.encode_utf8(&mut [0; 4]), style);
        }
    }
    if times_w > 0 {
        let rem = left_at_speed
            .map(|s| format!(" -{}", fmt_time(s)))
            .unwrap_or_default();
        let short = times.split(" / ").next().unwrap_or(times);
        let t = [
            format!("{times}{rem}"),
            times.to_owned(),
            format!("{short}{rem}"),
            short.to_owned(),
        ]
        .into_iter()
        .find(|t| width(t) < times_w)
        .unwrap_or_default();
        put(buf, r, x, y, &fit_right(&t, times_w), theme.base);
    } else if bar_w < 4 {
        put(buf, r, x, y, &fit(times, w), theme.base);
    }
}

/// The bar's glyphs: filled `█`, empty `░`, chapter starts `┊` (on the
/// empty part) or `▌` (on the filled part), so it reads without color.
pub fn bar_cells(frac: Option<f64>, ticks: &[f64], cells: usize) -> String {
    let done = frac.map_or(0, |f| (f.clamp(0.0, 1.0) * cells as f64).round() as usize);
    let mut out: Vec<char> = (0..cells)
        .map(|i| if i < done { '█' } else { '░' })
        .collect();
    if cells >= 8 {
        for t in ticks {
            let i = (t * cells as f64).floor() as usize;
            if i > 0 && i < cells {
                out[i] = if i < done { '▌' } else { '┊' };
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn bar_cells_mark_progress_and_ticks() {
        assert_eq!(super::bar_cells(Some(0.5), &[0.25, 0.75], 8), "██▌█░░┊░");
        assert_eq!(super::bar_cells(None, &[], 4), "░░░░");
        assert_eq!(super::bar_cells(Some(7.0), &[], 4), "████");
    }
}
