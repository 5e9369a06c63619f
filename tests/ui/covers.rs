//! Cover art in the book screen: half-block covers fetched from the
//! reference server by the backends, the placeholder box for missing and
//! broken covers (the layout never moves), small screens and
//! `[ui] covers = "off"` without a box, and a screen that draws while its
//! cover is still on its way.

use crate::backend::{log_in, next_answer};
use crate::fixtures::*;
use crate::harness::TestServer;
use earmark::api::BookQuery;
use earmark::domain::*;
use earmark::player::AudioMode;
use earmark::runtime::Live;
use earmark::ui::covers::{CoverImage, CoverMode, CoverState};
use earmark::ui::event_loop::{Backends, UiSender};
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use std::path::Path;

const RED: [u8; 3] = [220, 30, 30];
const BLUE: [u8; 3] = [30, 60, 220];

/// A 40×40 PNG: red top half, blue bottom half.
fn red_over_blue_png() -> Vec<u8> {
    let img = image::RgbImage::from_fn(40, 40, |_, y| image::Rgb(if y < 20 { RED } else { BLUE }));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// The first half of a real JPEG.
fn truncated_jpeg() -> Vec<u8> {
    let img = image::RgbImage::from_fn(64, 64, |x, y| image::Rgb([x as u8 * 4, y as u8 * 4, 90]));
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    let mut bytes = out.into_inner();
    bytes.truncate(bytes.len() / 2);
    bytes
}

/// Four books, each a real WAV chapter: `Painted` (a PNG cover), `Gateway`
/// (cover.jpg is a gateway's HTML page), `Cut` (a truncated JPEG) and
/// `Bare` (no cover: 404).
fn library_with_covers() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wav = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tone.wav");
    for (name, cover) in [
        ("Painted", Some(("cover.png", red_over_blue_png()))),
        (
            "Gateway",
            Some((
                "cover.jpg",
                b"<!DOCTYPE html><html><body>Please sign in</body></html>".to_vec(),
            )),
        ),
        ("Cut", Some(("cover.jpg", truncated_jpeg()))),
        ("Bare", None),
    ] {
        let book = dir.path().join("Covers").join(name);
        std::fs::create_dir_all(&book).unwrap();
        std::fs::copy(&wav, book.join("1.wav")).unwrap();
        if let Some((file, bytes)) = cover {
            std::fs::write(book.join(file), bytes).unwrap();
        }
    }
    dir
}

/// The book screen of `book` (found in the library list by moving down).
fn open(app: &mut App, book: &Book) {
    if app.screen == Screen::Book {
        app.update(code(earmark::ui::keymap::KeyCode::Esc));
    }
    app.update(key('g'));
    for _ in 0..10 {
        if app.library.selected().map(|b| &b.id) == Some(&book.id) {
            break;
        }
        app.update(key('j'));
    }
    app.update(code(earmark::ui::keymap::KeyCode::Enter));
    assert_eq!(app.book.id, book.id);
}

fn draw(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.update(Event::Resize(w, h));
    term.draw(|f| views::render(app, &Theme::monochrome(), f))
        .unwrap();
    term.backend().buffer().clone()
}

fn rgb(c: Color) -> [u8; 3] {
    match c {
        Color::Rgb(r, g, b) => [r, g, b],
        other => panic!("not an RGB colour: {other:?}"),
    }
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 24)
}

/// The screen's text with the cover box's inside blanked.
fn outside_the_box(buf: &Buffer) -> String {
    let mut b = buf.clone();
    for y in 2..12 {
        for x in 2..22 {
            b[(x, y)].set_symbol(" ");
        }
    }
    let w = b.area.width as usize;
    b.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Against the reference server: the backends fetch each book's cover
/// (with the token), decode and encode it off the UI thread; the book
/// screen shows the PNG in half-blocks, red over blue, and keeps the
/// placeholder box, with the layout unchanged, for an HTML page, a
/// truncated JPEG and a 404.
#[test]
fn half_block_covers_from_the_server_and_broken_ones_keep_the_layout() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lib = library_with_covers();
    let server = rt.block_on(TestServer::start(lib.path())).unwrap();
    let home = tempfile::tempdir().unwrap();
    let (profile, done) = log_in(&rt, &server, home.path());
    let books = rt
        .block_on(done.client.books(&BookQuery::default()))
        .unwrap();
    let by = |title: &str| crate::harness::titled(&books, title).clone();
    let (ui, rx) = UiSender::channel();
    let mut live = Live::start(
        ui,
        profile,
        Some(done.session),
        AudioMode::Null,
        Default::default(),
    )
    .unwrap();

    let mut app = logged_in();
    app.update(Event::Answer(Answer::Library {
        books: books.clone(),
        from_cache: false,
    }));
    let mut cover_of = |book: &Book, app: &mut App| -> Option<CoverImage> {
        open(app, book);
        assert_eq!(app.book.cover, CoverState::Loading, "asked at once");
        live.handle(Effect::LoadBook(book.id.clone()));
        let loaded = next_answer(
            &rx,
            "the book",
            |a| matches!(a, Answer::BookLoaded { book: b, .. } if b.id == book.id),
        );
        app.update(Event::Answer(loaded));
        let loading = draw(app, 80, 24);
        live.handle(Effect::LoadCover {
            book: book.id.clone(),
            url: book.cover_url.clone(),
        });
        let answer = next_answer(
            &rx,
            "the cover",
            |a| matches!(a, Answer::Cover { book: b, .. } if *b == book.id),
        );
        app.update(Event::Answer(answer));
        let shown = draw(app, 80, 24);
        assert_eq!(
            outside_the_box(&shown),
            outside_the_box(&loading),
            "{}: the layout around the cover does not move",
            book.title
        );
        match &app.book.cover {
            CoverState::Shown(img) => Some(img.clone()),
            CoverState::Missing => {
                assert_eq!(text(&shown), text(&loading), "{}: placeholder", book.title);
                None
            }
            other => panic!("{}: {other:?}", book.title),
        }
    };

    let painted = by("Painted");
    let img = cover_of(&painted, &mut app).expect("the PNG cover is shown");
    let size = img.protocol().size();
    assert_eq!((size.width, size.height), (20, 10), "scaled up to the box");
    // Drawn again: the snapshot, and the colours of its half-blocks.
    open(&mut app, &painted);
    app.update(Event::Answer(Answer::BookLoaded {
        book: painted.clone(),
        manifest: None,
        bookmarks: vec![],
    }));
    app.update(Event::Answer(Answer::Cover {
        book: painted.id.clone(),
        image: Some(img),
    }));
    let buf = draw(&mut app, 80, 24);
    insta::assert_snapshot!("book_cover_halfblocks_80x24", text(&buf));
    // Half-blocks: a cell's foreground is its upper pixel, its background
    // the lower one (a space where both are one colour). The square cover
    // fills the 20×10 box: red above, blue below, `▀` where they meet.
    let (top, bottom) = (&buf[(12, 3)], &buf[(12, 10)]);
    assert!(close(rgb(top.bg), RED), "top: {:?}", top.bg);
    assert!(close(rgb(bottom.bg), BLUE), "bottom: {:?}", bottom.bg);
    assert!(close(rgb(buf[(2, 2)].bg), RED) && close(rgb(buf[(21, 11)].bg), BLUE));
    assert_eq!(buf[(12, 7)].symbol(), "▀");
    // It was cached on disk, keyed by scope and book.
    let cached = std::fs::read_dir(home.path().join("cache/covers"))
        .unwrap()
        .count();
    assert_eq!(cached, 1, "the PNG is cached");

    assert!(cover_of(&by("Gateway"), &mut app).is_none(), "HTML");
    assert!(cover_of(&by("Bare"), &mut app).is_none(), "404");
    // A truncated JPEG may decode in part; either way the layout holds.
    let _ = cover_of(&by("Cut"), &mut app);
    let cached = std::fs::read_dir(home.path().join("cache/covers"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".part"))
        .count();
    assert!(cached <= 2, "nothing unreadable is cached ({cached})");
    live.shutdown();
}

/// The cover is asked for when the book screen opens and drawn when it
/// comes: until then (a slow server) the screen draws in full, with the
/// placeholder, exactly as when the book turns out to have no cover.
#[test]
fn the_book_screen_draws_in_full_while_its_cover_is_on_its_way() {
    let mut app = logged_in();
    for _ in 0..2 {
        app.update(key('j'));
    }
    let fx = app.update(code(earmark::ui::keymap::KeyCode::Enter));
    assert!(
        fx.contains(&Effect::LoadCover {
            book: BookId::new("moby"),
            url: None
        }),
        "{fx:?}"
    );
    let pending = render(&mut app, 80, 24);
    assert!(pending.contains("Moby Dick") && pending.contains("╭────"));
    insta::assert_snapshot!("book_cover_pending_80x24", pending);
    app.update(Event::Answer(Answer::Cover {
        book: BookId::new("moby"),
        image: None,
    }));
    assert_eq!(render(&mut app, 80, 24), pending);
    // A late answer for another book changes nothing.
    app.update(Event::Answer(Answer::Cover {
        book: BookId::new("emma"),
        image: None,
    }));
    assert_eq!(app.book.cover, CoverState::Missing);
}

/// At 40×12 there is no box and nothing is fetched; growing the terminal
/// shows the box and asks for the cover once.
#[test]
fn small_screens_have_no_cover_box_until_the_terminal_grows() {
    let mut app = logged_in();
    app.update(Event::Resize(40, 12));
    for _ in 0..2 {
        app.update(key('j'));
    }
    let fx = app.update(code(earmark::ui::keymap::KeyCode::Enter));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::LoadCover { .. })),
        "{fx:?}"
    );
    assert!(!render(&mut app, 40, 12).contains('╭'));
    let fx = app.update(Event::Resize(80, 24));
    assert_eq!(
        fx,
        vec![Effect::LoadCover {
            book: BookId::new("moby"),
            url: None
        }]
    );
    assert!(app.update(Event::Resize(100, 30)).is_empty(), "asked once");
}

/// `[ui] covers = "off"`: no box, nothing fetched, the details use the
/// whole width.
#[test]
fn covers_off_fetches_nothing_and_draws_no_box() {
    let ui = earmark::ui::UiConfig::from_toml("[ui]\ncovers = \"off\"\n", true, false).unwrap();
    assert_eq!(ui.settings.covers, CoverMode::Off);
    let mut app = App::new(Default::default(), ui.settings);
    app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://127.0.0.1:8686/api/v1".into(),
        user: "demo".into(),
        profile: None,
    })));
    app.update(Event::Answer(Answer::Library {
        books: library(),
        from_cache: false,
    }));
    for _ in 0..2 {
        app.update(key('j'));
    }
    let fx = app.update(code(earmark::ui::keymap::KeyCode::Enter));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::LoadCover { .. })),
        "{fx:?}"
    );
    let screen = render(&mut app, 80, 24);
    assert!(!screen.contains('╭'));
    assert!(screen.contains("\" Moby Dick ♥"), "{screen}");
    let bad =
        earmark::ui::UiConfig::from_toml("[ui]\ncovers = \"sixel\"\n", true, false).unwrap_err();
    assert!(
        bad.contains("covers") && bad.contains("halfblocks"),
        "{bad}"
    );
}

/// In a real pseudo-terminal: the player asks the terminal at start-up;
/// answered "kitty graphics, sixel, cells of 10×20 pixels", it picks kitty
/// (the log says so), and a late copy of the kitty answer is never taken
/// for keys.
#[test]
fn the_terminal_answers_the_graphics_query_and_its_answers_are_no_keys() {
    let home = tempfile::tempdir().unwrap();
    let mut tui = crate::e2e::Tui::start_on_bus(home.path(), "", "", &["--audio", "null"], None);
    // The query ends with a status report request, which every terminal answers.
    tui.wait_for_output(b"\x1b[5n");
    tui.keys("\x1b_Gi=31;OK\x1b\\\x1b[?62;4;22c\x1b[6;20;10t\x1b[0n");
    tui.wait_for("Log in to your audiobook server");
    let log = home.path().join("data/earmark/earmark.log");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("covers: Kitty, cells of 10x20 pixels") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the log: {text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // A late answer, then typing into the address field.
    tui.keys("\x1b_Gi=31;OK\x1b\\");
    tui.keys("nas.example");
    tui.wait_for("nas.example");
    assert!(!tui.text().contains("Gi=31"), "{}", tui.text());
}
