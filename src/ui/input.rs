//! Terminal input bytes to events. We read the tty ourselves instead of
//! through crossterm's event reader, which spins at full CPU once the tty
//! is gone (read returns EOF/EIO forever); our reader sees that and stops.
//! The parser is pure and covers what terminals send for the keys we use:
//! UTF-8 text, C0 controls, CSI/SS3 cursor and editing keys with modifiers,
//! SGR mouse reports and bracketed paste.

use crate::ui::keymap::{Key, KeyCode};
use crate::ui::state::{Event, Mouse};

/// Parses as many complete events as `buf` holds; returns them and how many
/// bytes were used. An incomplete sequence at the end is left unconsumed
/// unless `flush` is set (then a lone ESC is the Esc key).
pub fn parse(buf: &[u8], flush: bool) -> (Vec<Event>, usize) {
    let mut events = Vec::new();
    let mut i = 0;
    while i < buf.len() {
        match parse_one(&buf[i..], flush) {
            Parsed::Event(ev, n) => {
                if let Some(ev) = ev {
                    events.push(ev);
                }
                i += n;
            }
            Parsed::Incomplete => break,
        }
    }
    (events, i)
}

// Messages move a few times per keystroke; boxing would only add noise.
#[allow(clippy::large_enum_variant)]
enum Parsed {
    Event(Option<Event>, usize),
    Incomplete,
}

fn key(code: KeyCode) -> Option<Event> {
    Some(Event::Key(Key::plain(code)))
}

fn parse_one(b: &[u8], flush: bool) -> Parsed {
    let c = b[0];
    match c {
        0x1b => parse_escape(b, flush),
        b'\r' | b'\n' => Parsed::Event(key(KeyCode::Enter), 1),
        b'\t' => Parsed::Event(key(KeyCode::Tab), 1),
        0x7f | 0x08 => Parsed::Event(key(KeyCode::Backspace), 1),
        0x00 => Parsed::Event(Some(Event::Key(Key::ctrl(' '))), 1),
        0x01..=0x1a => Parsed::Event(Some(Event::Key(Key::ctrl((b'a' + c - 1) as char))), 1),
        0x1c..=0x1f => Parsed::Event(None, 1),
        _ => parse_utf8(b, flush),
    }
}

fn parse_utf8(b: &[u8], flush: bool) -> Parsed {
    let len = match b[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Parsed::Event(None, 1),
    };
    if b.len() < len {
        return if flush {
            Parsed::Event(None, b.len())
        } else {
            Parsed::Incomplete
        };
    }
    match std::str::from_utf8(&b[..len])
        .ok()
        .and_then(|s| s.chars().next())
    {
        Some(ch) => Parsed::Event(Some(Event::Key(Key::ch(ch))), len),
        None => Parsed::Event(None, 1),
    }
}

fn parse_escape(b: &[u8], flush: bool) -> Parsed {
    if b.len() == 1 {
        return if flush {
            Parsed::Event(key(KeyCode::Esc), 1)
        } else {
            Parsed::Incomplete
        };
    }
    match b[1] {
        b'[' => parse_csi(b, flush),
        // A terminal's reply (APC, e.g. the kitty graphics answer to the
        // start-up query arriving late) up to ST: never keys. A lone
        // ESC _ stays Alt+_.
        b'_' if b.len() > 2 => match find(&b[2..], b"\x1b\\") {
            Some(p) => Parsed::Event(None, p + 4),
            None if b.len() > 4096 => Parsed::Event(None, b.len()),
            None if !flush => Parsed::Incomplete,
            None => parse_one_alt(b, flush),
        },
        // A lone ESC O is Alt+O.
        b'O' if b.len() < 3 && flush => parse_one_alt(b, flush),
        b'O' if b.len() < 3 => Parsed::Incomplete,
        b'O' => {
            let code = match b[2] {
                b'R' => Some(KeyCode::F(3)),
                b'M' => Some(KeyCode::Enter),
                c => cursor_key(c),
            };
            Parsed::Event(code.and_then(key), 3)
        }
        0x1b => Parsed::Event(key(KeyCode::Esc), 1),
        _ => parse_one_alt(b, flush),
    }
}

/// Alt+key arrives as ESC then the key.
fn parse_one_alt(b: &[u8], flush: bool) -> Parsed {
    match parse_one(&b[1..], flush) {
        Parsed::Event(Some(Event::Key(mut k)), n) => {
            k.alt = true;
            Parsed::Event(Some(Event::Key(k)), n + 1)
        }
        Parsed::Event(other, n) => Parsed::Event(other, n + 1),
        Parsed::Incomplete => Parsed::Incomplete,
    }
}

fn parse_csi(b: &[u8], flush: bool) -> Parsed {
    // ESC [ params final; the final byte is 0x40..=0x7e.
    let Some(end) = b[2..]
        .iter()
        .position(|&c| (0x40..=0x7e).contains(&c))
        .map(|p| p + 2)
    else {
        if b.len() > 64 || flush {
            return Parsed::Event(None, b.len());
        }
        return Parsed::Incomplete;
    };
    let params = &b[2..end];
    let fin = b[end];
    let n = end + 1;
    if params.first() == Some(&b'<') && (fin == b'M' || fin == b'm') {
        return Parsed::Event(mouse(&params[1..], fin == b'M'), n);
    }
    let text = std::str::from_utf8(params).unwrap_or("");
    if text == "200" && fin == b'~' {
        // Bracketed paste: everything up to ESC[201~ is text.
        let rest = &b[n..];
        return match find(rest, b"\x1b[201~") {
            Some(p) => Parsed::Event(
                Some(Event::Paste(
                    String::from_utf8_lossy(&rest[..p]).into_owned(),
                )),
                n + p + 6,
            ),
            None if flush => Parsed::Event(
                Some(Event::Paste(String::from_utf8_lossy(rest).into_owned())),
                b.len(),
            ),
            None => Parsed::Incomplete,
        };
    }
    let mut nums = text.split(';').map(|s| s.parse::<u16>().ok());
    let first = nums.next().flatten();
    let modifier = nums.next().flatten().unwrap_or(1).saturating_sub(1);
    let code = match fin {
        b'Z' => KeyCode::BackTab,
        b'~' => match first {
            Some(1 | 7) => KeyCode::Home,
            Some(2) => KeyCode::Insert,
            Some(3) => KeyCode::Delete,
            Some(4 | 8) => KeyCode::End,
            Some(5) => KeyCode::PageUp,
            Some(6) => KeyCode::PageDown,
            Some(n @ 11..=15) => KeyCode::F((n - 10) as u8),
            Some(n @ 17..=21) => KeyCode::F((n - 11) as u8),
            Some(n @ 23..=24) => KeyCode::F((n - 12) as u8),
            _ => return Parsed::Event(None, n),
        },
        c => match cursor_key(c) {
            Some(code) => code,
            None => return Parsed::Event(None, n),
        },
    };
    let k = Key {
        code,
        shift: modifier & 1 != 0,
        alt: modifier & 2 != 0,
        ctrl: modifier & 4 != 0,
    };
    Parsed::Event(Some(Event::Key(k)), n)
}

/// The final byte of a cursor or F1–F4 key, after CSI or SS3 (not `R`:
/// after CSI it ends a cursor position report).
fn cursor_key(fin: u8) -> Option<KeyCode> {
    Some(match fin {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'S' => KeyCode::F(4),
        _ => return None,
    })
}

fn mouse(params: &[u8], press: bool) -> Option<Event> {
    let text = std::str::from_utf8(params).ok()?;
    let mut it = text.split(';').map(|s| s.parse::<u16>().ok());
    let (cb, x, y) = (it.next()??, it.next()??, it.next()??);
    let (x, y) = (x.saturating_sub(1), y.saturating_sub(1));
    match cb & !0b11100 {
        64 => Some(Event::Mouse(Mouse::ScrollUp)),
        65 => Some(Event::Mouse(Mouse::ScrollDown)),
        0 if press && cb & 32 == 0 => Some(Event::Mouse(Mouse::Click { x, y })),
        _ => None,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<Event> {
        parse(bytes, true).0
    }

    #[test]
    fn plain_keys_and_text() {
        assert_eq!(keys(b"j"), [Event::Key(Key::ch('j'))]);
        assert_eq!(keys(" \r\x7f\t".as_bytes()).len(), 4);
        assert_eq!(keys("三".as_bytes()), [Event::Key(Key::ch('三'))]);
        assert_eq!(keys(b"\x03"), [Event::Key(Key::ctrl('c'))]);
    }

    #[test]
    fn a_late_kitty_graphics_reply_is_no_keys() {
        assert_eq!(keys(b"\x1b_Gi=31;OK\x1b\\j"), [Event::Key(Key::ch('j'))]);
        let split = parse(b"\x1b_Gi=31;O", false);
        assert_eq!(split, (vec![], 0), "waits for the rest of the reply");
    }

    #[test]
    fn cursor_keys_with_modifiers() {
        assert_eq!(keys(b"\x1b[D"), [Event::Key(Key::plain(KeyCode::Left))]);
        assert_eq!(keys(b"\x1b[1;2C"), [Event::Key(Key::shift(KeyCode::Right))]);
        assert_eq!(
            keys(b"\x1b[6~\x1b[5~"),
            [
                Event::Key(Key::plain(KeyCode::PageDown)),
                Event::Key(Key::plain(KeyCode::PageUp))
            ]
        );
        assert_eq!(keys(b"\x1bOP"), [Event::Key(Key::plain(KeyCode::F(1)))]);
        assert_eq!(keys(b"\x1b[Z"), [Event::Key(Key::plain(KeyCode::BackTab))]);
    }

    #[test]
    fn esc_alone_alt_and_incomplete() {
        assert_eq!(keys(b"\x1b"), [Event::Key(Key::plain(KeyCode::Esc))]);
        assert_eq!(parse(b"\x1b", false), (vec![], 0));
        assert_eq!(parse(b"j\x1b[1;", false).1, 1);
        let alt_x = Key {
            alt: true,
            ..Key::ch('x')
        };
        assert_eq!(keys(b"\x1bx"), [Event::Key(alt_x)]);
    }

    #[test]
    fn mouse_and_paste() {
        assert_eq!(
            keys(b"\x1b[<0;5;3M"),
            [Event::Mouse(Mouse::Click { x: 4, y: 2 })]
        );
        assert_eq!(keys(b"\x1b[<0;5;3m"), []);
        assert_eq!(keys(b"\x1b[<65;1;1M"), [Event::Mouse(Mouse::ScrollDown)]);
        assert_eq!(
            keys(b"\x1b[200~hi there\x1b[201~j"),
            [Event::Paste("hi there".into()), Event::Key(Key::ch('j'))]
        );
    }

    #[test]
    fn garbage_never_panics() {
        for seed in 0u32..2000 {
            let bytes: Vec<u8> = (0..(seed % 17))
                .map(|i| (seed.wrapping_mul(2654435761).rotate_left(i) & 0xff) as u8)
                .collect();
            let (_, used) = parse(&bytes, true);
            assert_eq!(used, bytes.len());
        }
    }
}
