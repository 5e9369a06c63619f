//! Cover art as the UI sees it: the `[ui] covers` switch, the book
//! screen's cover state, and an image already encoded for the terminal
//! (the runtime fetches, decodes and encodes it off the UI thread; drawing
//! it is a copy into the frame).

use ratatui_image::protocol::Protocol;
use std::sync::Arc;

/// `[ui] covers` in config.toml.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoverMode {
    /// Ask the terminal at start-up: kitty, sixel or iTerm2 images where
    /// it has them, half-blocks elsewhere.
    #[default]
    Auto,
    /// Half-blocks always (coloured `▀` cells; any terminal, tmux, SSH).
    Halfblocks,
    /// No covers: nothing is fetched and the book screen has no cover box.
    Off,
}

impl CoverMode {
    pub fn parse(v: &toml::Value) -> Result<CoverMode, String> {
        match v.as_str() {
            Some("auto") => Ok(CoverMode::Auto),
            Some("halfblocks") => Ok(CoverMode::Halfblocks),
            Some("off") => Ok(CoverMode::Off),
            _ => Err(format!(
                "[ui] in config.toml: `covers` must be \"auto\", \"halfblocks\" or \"off\", not {v}"
            )),
        }
    }
}

/// A cover encoded for this terminal at the cover box's size. Cheap to
/// clone; equal only to itself.
#[derive(Clone)]
pub struct CoverImage(Arc<Protocol>);

impl CoverImage {
    pub fn new(p: Protocol) -> CoverImage {
        CoverImage(Arc::new(p))
    }

    pub fn protocol(&self) -> &Protocol {
        &self.0
    }
}

impl std::fmt::Debug for CoverImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0.size();
        write!(f, "CoverImage({}x{} cells)", s.width, s.height)
    }
}

impl PartialEq for CoverImage {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The open book's cover.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum CoverState {
    /// Not asked for yet (the box is hidden, or the book is not known yet).
    #[default]
    NotAsked,
    /// Asked for; the box shows the placeholder meanwhile.
    Loading,
    Shown(CoverImage),
    /// No cover, or one that could not be fetched or read (the log says
    /// why): the placeholder stays, the layout does not change.
    Missing,
}
