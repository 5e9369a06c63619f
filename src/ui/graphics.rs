//! What the terminal draws images with (kitty, sixel, iTerm2 or
//! half-blocks) and its cell size in pixels, asked once at start-up: in raw
//! mode, before the input thread reads the terminal, with a deadline. A
//! terminal that does not answer in time gets half-blocks. `[ui] covers`
//! may skip the question ("halfblocks") or turn covers off.

use super::covers::CoverMode;
use super::terminal::{readable, tty_input};
use ratatui_image::FontSize;
use ratatui_image::picker::cap_parser::{Parser, QueryStdioOptions, Response};
use ratatui_image::picker::{Picker, ProtocolType};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Every terminal answers the query's last part (a status report) at
/// once; this only bounds a silent one. Each answer that arrives extends it
/// (a slow link), up to `QUERY_MAX` in all.
const QUERY_WAIT: Duration = Duration::from_millis(1000);
const QUERY_MAX: Duration = Duration::from_secs(3);

/// How covers are drawn, or `None` when they are off. Call with the
/// terminal in raw mode and before anything else reads it.
pub fn detect(mode: CoverMode) -> Option<Picker> {
    match mode {
        CoverMode::Off => None,
        CoverMode::Halfblocks => Some(Picker::halfblocks()),
        CoverMode::Auto => Some(match query() {
            Some((protocol, font)) => {
                tracing::info!(
                    "covers: {protocol:?}, cells of {}x{} pixels",
                    font.width,
                    font.height
                );
                picker(protocol, font)
            }
            None => Picker::halfblocks(),
        }),
    }
}

#[allow(deprecated)] // the only way to make a picker from a query of ours
fn picker(protocol: ProtocolType, font: FontSize) -> Picker {
    let mut p = Picker::from_fontsize(font);
    p.set_protocol_type(protocol);
    p
}

fn env_is(name: &str, f: impl Fn(&str) -> bool) -> bool {
    std::env::var(name).is_ok_and(|v| f(&v))
}

/// Terminals whose kitty and sixel support is known to be broken for
/// this use (as ratatui-image's own detection treats them).
fn kitty_sixel_broken() -> bool {
    env_is("WEZTERM_EXECUTABLE", |v| !v.is_empty()) || env_is("KONSOLE_VERSION", |v| !v.is_empty())
}

fn iterm2_hint() -> bool {
    env_is("TERM_PROGRAM", |t| {
        [
            "iTerm",
            "WezTerm",
            "mintty",
            "vscode",
            "Tabby",
            "rio",
            "WarpTerminal",
        ]
        .iter()
        .any(|n| t.contains(n))
    }) || env_is("LC_TERMINAL", |t| t.contains("iTerm"))
}

/// The protocol from the terminal's answers and the environment's hints;
/// `None` for half-blocks (also when the cell size in pixels is unknown:
/// the other protocols cannot size an image without it).
pub fn choose(
    answers: &[Response],
    iterm2_hint: bool,
    window_cell: Option<FontSize>,
) -> Option<(ProtocolType, FontSize)> {
    let has = |r: &Response| answers.contains(r);
    let protocol = if has(&Response::Kitty) {
        ProtocolType::Kitty
    } else if has(&Response::Sixel) {
        ProtocolType::Sixel
    } else if iterm2_hint {
        ProtocolType::Iterm2
    } else {
        return None;
    };
    let cell = answers.iter().find_map(|r| match r {
        Response::CellSize(Some((w, h))) if *w > 0 && *h > 0 => Some(FontSize::new(*w, *h)),
        _ => None,
    });
    Some((protocol, cell.or(window_cell)?))
}

fn query() -> Option<(ProtocolType, FontSize)> {
    // SAFETY: isatty has no preconditions.
    if unsafe { libc::isatty(1) } != 1 || env_is("TERM", |t| t == "dumb") {
        return None;
    }
    let mut tty = tty_input().ok()?;
    let is_tmux =
        env_is("TERM", |t| t.starts_with("tmux")) || env_is("TERM_PROGRAM", |t| t == "tmux");
    let mut options = QueryStdioOptions::default();
    if kitty_sixel_broken() {
        options.blacklist_protocols = vec![ProtocolType::Kitty, ProtocolType::Sixel];
    }
    let mut out = std::io::stdout();
    out.write_all(Parser::query(is_tmux, options).as_bytes())
        .ok()?;
    out.flush().ok()?;
    let mut parser = Parser::new();
    let mut answers = Vec::new();
    let start = Instant::now();
    let mut deadline = start + QUERY_WAIT;
    let mut chunk = [0u8; 256];
    'read: loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            tracing::info!("covers: the terminal did not answer the graphics query; half-blocks");
            return None;
        }
        if !readable(tty.as_raw_fd(), left) {
            continue;
        }
        let n = match tty.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => n,
        };
        deadline = (Instant::now() + QUERY_WAIT).min(start + QUERY_MAX);
        for &b in &chunk[..n] {
            let got = parser.push(char::from(b));
            if got.contains(&Response::Status) {
                break 'read;
            }
            answers.extend(got);
        }
    }
    choose(&answers, iterm2_hint(), window_cell())
}

/// The cell size from the window's size in pixels, when the tty knows it.
fn window_cell() -> Option<FontSize> {
    // SAFETY: TIOCGWINSZ fills the winsize we own.
    let ws = unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        (libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0).then_some(ws)?
    };
    (ws.ws_xpixel > 0 && ws.ws_ypixel > 0 && ws.ws_col > 0 && ws.ws_row > 0)
        .then(|| FontSize::new(ws.ws_xpixel / ws.ws_col, ws.ws_ypixel / ws.ws_row))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_wins_then_sixel_then_iterm2_hint_else_halfblocks() {
        let cell = Response::CellSize(Some((9, 18)));
        let (p, f) = choose(
            &[Response::Sixel, Response::Kitty, cell.clone()],
            false,
            None,
        )
        .unwrap();
        assert_eq!((p, f.width, f.height), (ProtocolType::Kitty, 9, 18));
        let (p, _) = choose(&[Response::Sixel, cell.clone()], true, None).unwrap();
        assert_eq!(p, ProtocolType::Sixel);
        let (p, f) = choose(&[], true, Some(FontSize::new(8, 16))).unwrap();
        assert_eq!((p, f.height), (ProtocolType::Iterm2, 16));
        assert!(choose(&[cell], false, None).is_none(), "no image protocol");
        assert!(
            choose(&[Response::Sixel], false, None).is_none(),
            "sixel without a cell size cannot be sized"
        );
    }
}
