//! Keys, actions and the keymap: the defaults, `[keys]` overrides from
//! config.toml, and the conflict check. Pure: no terminal, no I/O.
//!
//! Format of the `[keys]` table (documented in docs/ui.md):
//!
//! ```toml
//! [keys]
//! play_pause = "space"             # one key
//! skip_back_long = ["H", "shift+left"]  # or a list; replaces the defaults
//! favorite = []                    # unbinds the action
//! ```

use std::collections::BTreeMap;
use std::fmt;

/// A key as the keymap sees it. Letters carry their case (`H` is shift+h),
/// so `shift` is only ever set for non-character keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCode {
    Char(char),
    Left,
    Right,
    Up,
    Down,
    Home,
    End,
    PageUp,
    PageDown,
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Insert,
    F(u8),
}

impl Key {
    pub const fn plain(code: KeyCode) -> Self {
        Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }
    pub const fn ch(c: char) -> Self {
        Self::plain(KeyCode::Char(c))
    }
    pub const fn shift(code: KeyCode) -> Self {
        Key {
            shift: true,
            ..Self::plain(code)
        }
    }
    pub const fn ctrl(c: char) -> Self {
        Key {
            ctrl: true,
            ..Self::ch(c)
        }
    }

    /// Canonical form: the case of a letter stands for shift.
    pub fn normalized(mut self) -> Self {
        if let KeyCode::Char(c) = self.code {
            if self.shift && c.is_ascii_lowercase() {
                self.code = KeyCode::Char(c.to_ascii_uppercase());
            }
            self.shift = false;
            if self.ctrl && c.is_ascii_uppercase() {
                self.code = KeyCode::Char(c.to_ascii_lowercase());
            }
        }
        if self.code == KeyCode::BackTab {
            self.shift = false;
        }
        self
    }

    /// Parses `space`, `left`, `shift+left`, `ctrl+c`, `H`, `pgdn`, `f5`, `+`…
    pub fn parse(spec: &str) -> Result<Key, KeyParseError> {
        let err = |why: &str| KeyParseError {
            spec: spec.to_owned(),
            why: why.to_owned(),
        };
        if spec.is_empty() {
            return Err(err("the key is empty"));
        }
        // A lone "+" or "-" is the key itself, not a separator.
        let (mods, name) = match spec.rfind('+') {
            Some(i) if i + 1 < spec.len() => (&spec[..i], &spec[i + 1..]),
            Some(i) if i > 0 && spec.ends_with("++") => (&spec[..i - 1], "+"),
            _ => ("", spec),
        };
        let mut key = Key::plain(KeyCode::Esc);
        for m in mods.split('+').filter(|m| !m.is_empty()) {
            match m.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => key.ctrl = true,
                "alt" | "meta" => key.alt = true,
                "shift" => key.shift = true,
                other => return Err(err(&format!("unknown modifier `{other}`"))),
            }
        }
        let mut chars = name.chars();
        key.code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(c),
            _ => {
                let lower = name.to_ascii_lowercase();
                let named = NAMED
                    .iter()
                    .find(|(_, _, names)| names.contains(&lower.as_str()));
                match (named, lower.strip_prefix('f')) {
                    (Some(&(code, _, _)), _) => code,
                    (None, Some(n)) if !n.is_empty() => match n.parse::<u8>() {
                        Ok(n @ 1..=24) => KeyCode::F(n),
                        _ => return Err(err("function keys are f1 to f24")),
                    },
                    _ => return Err(err("not a key name (try `space`, `left`, `ctrl+x`, `H`)")),
                }
            }
        };
        let key = key.normalized();
        if key.ctrl && key.code == KeyCode::Char('c') {
            return Err(err("ctrl+c always quits and cannot be rebound"));
        }
        Ok(key)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl+")?;
        }
        if self.alt {
            f.write_str("Alt+")?;
        }
        if self.shift {
            f.write_str("Shift+")?;
        }
        match self.code {
            KeyCode::Char(c) if c != ' ' => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            code => {
                let shown = NAMED.iter().find(|(k, _, _)| *k == code);
                f.write_str(shown.map_or("", |(_, shown, _)| shown))
            }
        }
    }
}

/// Named keys: how a key is shown, and the names `[keys]` accepts for it.
const NAMED: &[(KeyCode, &str, &[&str])] = &[
    (KeyCode::Char(' '), "Space", &["space", "spc"]),
    (KeyCode::Left, "←", &["left"]),
    (KeyCode::Right, "→", &["right"]),
    (KeyCode::Up, "↑", &["up"]),
    (KeyCode::Down, "↓", &["down"]),
    (KeyCode::Home, "Home", &["home"]),
    (KeyCode::End, "End", &["end"]),
    (KeyCode::PageUp, "PgUp", &["pgup", "pageup"]),
    (KeyCode::PageDown, "PgDn", &["pgdn", "pgdown", "pagedown"]),
    (KeyCode::Enter, "Enter", &["enter", "return"]),
    (KeyCode::Esc, "Esc", &["esc", "escape"]),
    (KeyCode::Tab, "Tab", &["tab"]),
    (KeyCode::BackTab, "Shift+Tab", &["backtab"]),
    (KeyCode::Backspace, "Backspace", &["backspace", "bs"]),
    (KeyCode::Delete, "Del", &["delete", "del"]),
    (KeyCode::Insert, "Ins", &["insert", "ins"]),
    (KeyCode::Char('+'), "+", &["plus"]),
    (KeyCode::Char('-'), "-", &["minus"]),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("key `{spec}`: {why}")]
pub struct KeyParseError {
    pub spec: String,
    pub why: String,
}

macro_rules! actions {
    ($($variant:ident = $name:literal, $group:literal, $help:literal, [$($key:expr),*];)*) => {
        /// Everything a key can do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action { $($variant),* }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];
            /// The name used in the `[keys]` table.
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name),* }
            }
            pub fn group(self) -> &'static str {
                match self { $(Action::$variant => $group),* }
            }
            pub fn help(self) -> &'static str {
                match self { $(Action::$variant => $help),* }
            }
            pub fn from_name(name: &str) -> Option<Action> {
                match name { $($name => Some(Action::$variant),)* _ => None }
            }
            /// The keys it has unless `[keys]` says otherwise.
            fn defaults(self) -> Vec<Key> {
                match self { $(Action::$variant => vec![$($key),*]),* }
            }
        }
    };
}

// The default keys' shorthands: a letter, a key without modifiers.
const fn c(ch: char) -> Key {
    Key::ch(ch)
}
const fn p(code: KeyCode) -> Key {
    Key::plain(code)
}
use KeyCode as K;

actions! {
    Up = "up", "move", "move up", [c('k'), p(K::Up)];
    Down = "down", "move", "move down", [c('j'), p(K::Down)];
    Top = "top", "move", "first row", [c('g'), p(K::Home)];
    Bottom = "bottom", "move", "last row", [c('G'), p(K::End)];
    PageUp = "page_up", "move", "page up", [p(K::PageUp), Key::ctrl('u')];
    PageDown = "page_down", "move", "page down", [p(K::PageDown), Key::ctrl('d')];
    Open = "open", "move", "open / choose", [p(K::Enter)];
    Back = "back", "move", "back (quits from the library)", [p(K::Esc), c('q')];
    Quit = "quit", "move", "quit", [c('Q')];
    LeavePlaying = "leave_playing", "move", "quit, leaving the book playing (earmark ctl reaches it)", [c('x')];
    PlayPause = "play_pause", "playback", "play / pause", [c(' ')];
    SkipBackShort = "skip_back_short", "playback", "short skip back", [p(K::Left)];
    SkipForwardShort = "skip_forward_short", "playback", "short skip forward", [p(K::Right)];
    SkipBackLong = "skip_back_long", "playback", "long skip back", [Key::shift(K::Left), c('h'), c('H')];
    SkipForwardLong = "skip_forward_long", "playback", "long skip forward", [Key::shift(K::Right), c('l'), c('L')];
    SpeedDown = "speed_down", "playback", "speed -0.05", [c('[')];
    SpeedUp = "speed_up", "playback", "speed +0.05", [c(']')];
    SpeedDownBig = "speed_down_big", "playback", "speed -0.25", [c('{')];
    SpeedUpBig = "speed_up_big", "playback", "speed +0.25", [c('}')];
    VolumeDown = "volume_down", "playback", "volume down", [c('-')];
    VolumeUp = "volume_up", "playback", "volume up", [c('+'), c('=')];
    BoostDown = "boost_down", "playback", "boost −1 dB (this book)", [c('(')];
    BoostUp = "boost_up", "playback", "boost +1 dB, up to +12 (this book)", [c(')')];
    Normalize = "normalize", "playback", "loudness normalisation on/off (this book)", [c('N')];
    SkipSilence = "skip_silence", "playback", "skip silence on/off (this book)", [c('Z')];
    NextChapter = "next_chapter", "playback", "next chapter", [c('n')];
    PrevChapter = "prev_chapter", "playback", "previous chapter (restart if >3 s in)", [c('p')];
    SleepTimer = "sleep_timer", "playback", "sleep timer (type 25, 1:30 or 3ch for your own)", [c('s')];
    TimeLeftMode = "time_left_mode", "playback", "times left: at your speed / in book time", [c('T')];
    SleepExtend = "sleep_extend", "playback", "sleep timer: more time (also while it fades and after it stopped)", [c('z')];
    Search = "search", "library", "search", [c('/')];
    Favorite = "favorite", "library", "toggle favorite", [c('f')];
    Filter = "filter", "library", "filter: all/favorites/in progress/finished", [c('t')];
    Category = "category", "library", "next category", [c('c')];
    Sort = "sort", "library", "sort: title/author/recent", [c('o')];
    Group = "group", "library", "group by: none/author/narrator/series (Enter opens a group)", [c('v')];
    AuthorBooks = "author_books", "library", "the author's books (again: the book's next author)", [c('a')];
    NarratorBooks = "narrator_books", "library", "the narrator's books (again: the next narrator)", [c('w')];
    SeriesBooks = "series_books", "library", "the series' books in order (again: the book's next series)", [c('e')];
    Refresh = "refresh", "library", "refresh from the server", [c('r')];
    NowPlaying = "now_playing", "library", "open the playing book", [c('.')];
    Bookmark = "bookmark", "book", "add a bookmark here", [c('b')];
    Bookmarks = "bookmarks", "book", "switch chapters / bookmarks", [c('B'), p(K::Tab)];
    Delete = "delete", "book", "delete the selected bookmark", [c('d'), p(K::Delete)];
    MarkFinished = "mark_finished", "book", "mark finished / unfinished", [c('m')];
    Restart = "restart", "book", "restart the book from 0", [c('R')];
    UndoJump = "undo_jump", "book", "undo the last jump (again: redo)", [c('u')];
    History = "history", "book", "place history of the book (Enter jumps)", [c('U')];
    Stats = "stats", "other", "listening statistics", [c('S')];
    Download = "download", "book", "download for offline listening", [c('D')];
    UpNextAdd = "up_next_add", "up next", "play the book next (again: take it off the list)", [c('A')];
    UpNext = "up_next", "up next", "the up next list (Enter opens, d removes)", [c('>')];
    MoveEarlier = "move_earlier", "up next", "up next list: move the book earlier", [c('K')];
    MoveLater = "move_later", "up next", "up next list: move the book later", [c('J')];
    License = "license", "other", "license status", [c('i')];
    RetryRefused = "retry_refused", "other", "send the changes the server refused again", [c('Y')];
    DiscardRefused = "discard_refused", "other", "drop the changes the server refused (asks first)", [c('X')];
    Profiles = "profiles", "other", "log in / switch profile", [c('P')];
    Help = "help", "other", "this help", [c('?'), p(K::F(1))];
}

/// The active keymap: every key maps to at most one action.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    bindings: BTreeMap<Action, Vec<Key>>,
    lookup: BTreeMap<Key, Action>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeymapError {
    #[error("[keys] in config.toml: `{0}` is not an action; known actions: {1}")]
    UnknownAction(String, String),
    #[error("[keys] in config.toml: `{action}`: {source}")]
    BadKey {
        action: String,
        source: KeyParseError,
    },
    #[error("[keys] in config.toml: `{action}` must be a key string or a list of them")]
    BadValue { action: String },
    #[error("[keys] in config.toml: {}", .0.join("; "))]
    Conflicts(Vec<String>),
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = Action::ALL.iter().map(|&a| (a, a.defaults())).collect();
        Self::build(bindings).expect("the default keymap has no conflicts")
    }
}

impl Keymap {
    fn build(bindings: BTreeMap<Action, Vec<Key>>) -> Result<Self, KeymapError> {
        let mut lookup: BTreeMap<Key, Action> = BTreeMap::new();
        let mut conflicts = Vec::new();
        for (&action, keys) in &bindings {
            for &key in keys {
                match lookup.get(&key) {
                    Some(&other) if other != action => conflicts.push(format!(
                        "key `{key}` is bound to both `{}` and `{}`",
                        other.name(),
                        action.name()
                    )),
                    _ => {
                        lookup.insert(key, action);
                    }
                }
            }
        }
        if !conflicts.is_empty() {
            return Err(KeymapError::Conflicts(conflicts));
        }
        Ok(Keymap { bindings, lookup })
    }

    /// Applies a `[keys]` table over the defaults. Each action named replaces
    /// its default keys; conflicts are reported all at once.
    pub fn with_overrides(table: &toml::Table) -> Result<Self, KeymapError> {
        let mut bindings: BTreeMap<Action, Vec<Key>> =
            Action::ALL.iter().map(|&a| (a, a.defaults())).collect();
        for (name, value) in table {
            let action = Action::from_name(name).ok_or_else(|| {
                let known: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                KeymapError::UnknownAction(name.clone(), known.join(", "))
            })?;
            let bad = || KeymapError::BadValue {
                action: name.clone(),
            };
            let specs: Vec<&str> = match value {
                toml::Value::String(s) => Some(vec![s.as_str()]),
                toml::Value::Array(items) => {
                    items.iter().map(|v| v.as_str()).collect::<Option<_>>()
                }
                _ => None,
            }
            .ok_or_else(bad)?;
            let mut keys = Vec::new();
            for spec in specs {
                let key = Key::parse(spec).map_err(|source| KeymapError::BadKey {
                    action: name.clone(),
                    source,
                })?;
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            bindings.insert(action, keys);
        }
        Self::build(bindings)
    }

    pub fn action(&self, key: Key) -> Option<Action> {
        self.lookup.get(&key.normalized()).copied()
    }

    pub fn keys(&self, action: Action) -> &[Key] {
        self.bindings.get(&action).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first key of `action`, as the label shows it.
    pub fn first_label(&self, action: Action) -> String {
        let first = self.keys(action).first();
        first.map_or_else(|| "(unbound)".into(), Key::to_string)
    }

    /// "j/↓" style label of an action's keys, for the help overlay and hints.
    pub fn label(&self, action: Action) -> String {
        let keys = self.keys(action);
        if keys.is_empty() {
            return "(unbound)".into();
        }
        keys.iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(src: &str) -> toml::Table {
        src.parse::<toml::Table>().unwrap()
    }

    #[test]
    fn parses_key_names() {
        assert_eq!(Key::parse("space").unwrap(), Key::ch(' '));
        assert_eq!(Key::parse("H").unwrap(), Key::ch('H'));
        assert_eq!(Key::parse("shift+h").unwrap(), Key::ch('H'));
        assert_eq!(Key::parse("shift+left").unwrap(), Key::shift(KeyCode::Left));
        assert_eq!(Key::parse("Ctrl+X").unwrap(), Key::ctrl('x'));
        assert_eq!(Key::parse("+").unwrap(), Key::ch('+'));
        assert_eq!(Key::parse("-").unwrap(), Key::ch('-'));
        assert_eq!(Key::parse("alt++").unwrap().code, KeyCode::Char('+'));
        assert_eq!(Key::parse("pgdn").unwrap(), Key::plain(KeyCode::PageDown));
        assert_eq!(Key::parse("f5").unwrap(), Key::plain(KeyCode::F(5)));
        assert_eq!(Key::parse("é").unwrap(), Key::ch('é'));
    }

    #[test]
    fn rejects_bad_keys_with_the_reason() {
        let e = Key::parse("hyper+x").unwrap_err();
        assert!(e.to_string().contains("unknown modifier `hyper`"), "{e}");
        assert!(Key::parse("").is_err());
        assert!(Key::parse("f99").is_err());
        assert!(
            Key::parse("spacebar")
                .unwrap_err()
                .to_string()
                .contains("spacebar")
        );
        assert!(
            Key::parse("ctrl+c")
                .unwrap_err()
                .to_string()
                .contains("always quits")
        );
    }

    #[test]
    fn display_round_trips_through_parse_for_defaults() {
        let km = Keymap::default();
        for &a in Action::ALL {
            for k in km.keys(a) {
                let shown = match k.code {
                    KeyCode::Left => k.to_string().replace('←', "left"),
                    KeyCode::Right => k.to_string().replace('→', "right"),
                    KeyCode::Up => k.to_string().replace('↑', "up"),
                    KeyCode::Down => k.to_string().replace('↓', "down"),
                    _ => k.to_string(),
                };
                assert_eq!(Key::parse(&shown).unwrap(), *k, "{a:?} {shown}");
            }
        }
    }

    #[test]
    fn defaults_follow_the_issue() {
        let km = Keymap::default();
        // The last: a terminal that reports shift with an upper-case letter.
        let shifted = Key {
            shift: true,
            ..Key::ch('G')
        };
        for (key, action) in [
            (Key::ch('j'), Action::Down),
            (Key::plain(KeyCode::Up), Action::Up),
            (Key::ch(' '), Action::PlayPause),
            (Key::plain(KeyCode::Left), Action::SkipBackShort),
            (Key::shift(KeyCode::Right), Action::SkipForwardLong),
            (Key::ch('h'), Action::SkipBackLong),
            (Key::ch('L'), Action::SkipForwardLong),
            (Key::ch('{'), Action::SpeedDownBig),
            (Key::ch('q'), Action::Back),
            (Key::ch('?'), Action::Help),
            (Key::ch('v'), Action::Group),
            (Key::ch('a'), Action::AuthorBooks),
            (Key::ch('w'), Action::NarratorBooks),
            (Key::ch('e'), Action::SeriesBooks),
            (shifted, Action::Bottom),
        ] {
            assert_eq!(km.action(key), Some(action), "{key:?}");
        }
    }

    #[test]
    fn overrides_replace_defaults_and_unbind() {
        let km = Keymap::with_overrides(&table(
            "play_pause = \"p\"\nprev_chapter = [\"P\", \"ctrl+p\"]\nprofiles = []",
        ))
        .unwrap();
        assert_eq!(km.action(Key::ch('p')), Some(Action::PlayPause));
        assert_eq!(km.action(Key::ch(' ')), None);
        assert_eq!(km.action(Key::ctrl('p')), Some(Action::PrevChapter));
        assert_eq!(km.label(Action::Profiles), "(unbound)");
    }

    #[test]
    fn conflicts_are_reported_clearly() {
        let err = Keymap::with_overrides(&table("favorite = \"j\"\nhelp = \"n\"")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("key `j` is bound to both `down` and `favorite`"),
            "{msg}"
        );
        assert!(msg.contains("key `n`"), "{msg}");
    }

    #[test]
    fn unknown_actions_and_bad_values_are_named() {
        let e = Keymap::with_overrides(&table("jump = \"x\"")).unwrap_err();
        assert!(e.to_string().contains("`jump` is not an action"), "{e}");
        let e = Keymap::with_overrides(&table("help = 3")).unwrap_err();
        assert!(e.to_string().contains("`help` must be"), "{e}");
        let e = Keymap::with_overrides(&table("help = [\"nope-key\"]")).unwrap_err();
        assert!(e.to_string().contains("nope-key"), "{e}");
    }
}
