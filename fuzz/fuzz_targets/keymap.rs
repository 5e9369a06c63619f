//! The keymap: a `[keys]` table over the defaults, and key specs alone.
#![no_main]
use earmark::ui::keymap::{Key, Keymap};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(table) = text.parse::<toml::Table>() {
        if let Ok(map) = Keymap::with_overrides(&table) {
            for action in earmark::ui::keymap::Action::ALL {
                let _ = map.label(*action);
            }
        }
    }
    for spec in text.lines() {
        if let Ok(key) = Key::parse(spec) {
            let _ = Keymap::default().action(key);
        }
    }
});
