//! The terminal player: app state, events, views and keymap.
