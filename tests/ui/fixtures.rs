//! Apps in known states, built only through the reducer's public events.

use earmark::domain::session::{
    Command, Event as SessionEvent, Landing, LengthFrom, Listening, Said, SoundNow, Start,
};
use earmark::domain::*;
use earmark::ui::keymap::{Key, KeyCode, Keymap};
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;

pub fn book(id: &str, title: &str, author: &str, secs: f64) -> Book {
    Book {
        id: BookId::new(id),
        title: title.into(),
        authors: vec![author.into()],
        duration: Some(secs),
        chapter_count: Some(3),
        ..Book::default()
    }
}

pub fn progress(chapter: &str, position: f64, book_position: f64, finished: bool) -> Progress {
    Progress {
        chapter_id: ChapterId::new(chapter),
        position,
        book_position: Some(book_position),
        finished,
        client_updated_at: Some(1_700_000_000_000),
        server_updated_at: Some(1_700_000_000_000),
    }
}

pub fn library() -> Vec<Book> {
    let mut moby = book("moby", "Moby Dick", "Herman Melville", 3.0 * 1800.0);
    moby.narrators = vec!["Stewart Wills".into()];
    moby.description = Some(
        "Call me Ishmael. The sailor Ishmael tells of the obsessive quest of Ahab, captain of the whaler Pequod, for revenge on the white whale.".into(),
    );
    moby.favorite = true;
    moby.progress = Some(progress("moby-2", 600.0, 2400.0, false));
    let mut pride = book("pride", "Pride and Prejudice", "Jane Austen", 11.5 * 3600.0);
    pride.progress = Some(progress("pride-9", 100.0, 11.5 * 3600.0, true));
    pride.series = SeriesRef::new("Austen Novels", Some("#2"))
        .into_iter()
        .collect();
    let mut emma = book("emma", "Emma", "Jane Austen", 16.0 * 3600.0);
    emma.series = SeriesRef::new("Austen Novels", Some("4"))
        .into_iter()
        .collect();
    let cjk = book(
        "santi",
        "三体 · The Three-Body Problem",
        "刘慈欣 (Liu Cixin)",
        13.0 * 3600.0,
    );
    let cafe = book(
        "cafe",
        "Cafe\u{301} Stories, a very long title that will not fit anywhere",
        "Anonymous",
        42.0,
    );
    vec![moby, pride, emma, cjk, cafe]
}

pub fn manifest(book: &str, n: usize, secs: f64) -> Manifest {
    Manifest {
        book_id: BookId::new(book),
        items: (0..n)
            .map(|i| ManifestItem {
                chapter_id: ChapterId::new(format!("{book}-{}", i + 1)),
                title: format!("Chapter {}", i + 1),
                duration: Some(secs),
                duration_source: Default::default(),
                url: None,
                mime_type: Some("audio/mpeg".into()),
                size_bytes: None,
                start: 0.0,
                end: None,
            })
            .collect(),
    }
}

pub fn key(c: char) -> Event {
    Event::Key(Key::ch(c))
}

pub fn code(k: KeyCode) -> Event {
    Event::Key(Key::plain(k))
}

/// Logged in, library loaded.
pub fn logged_in() -> App {
    let mut app = App::new(Keymap::default(), UiSettings::default());
    app.update(Event::Tick(1_000));
    app.update(Event::Answer(Answer::LoggedIn(SessionInfo {
        address: "http://127.0.0.1:8686/api/v1".into(),
        user: "demo".into(),
        profile: Some("default".into()),
    })));
    app.update(Event::Answer(Answer::Library {
        books: library(),
        from_cache: false,
    }));
    app
}

/// Book screen of Moby Dick, with chapters and a bookmark.
pub fn book_open() -> App {
    let mut app = logged_in();
    // Library is sorted by title: Cafe, Emma, Moby, Pride, 三体.
    for _ in 0..2 {
        app.update(key('j'));
    }
    let fx = app.update(code(KeyCode::Enter));
    assert!(
        fx.contains(&Effect::LoadBook(BookId::new("moby"))),
        "{fx:?}"
    );
    app.update(Event::Answer(Answer::BookLoaded {
        book: library()[0].clone(),
        manifest: Some(manifest("moby", 3, 1800.0)),
        bookmarks: vec![Bookmark {
            id: BookmarkId::new("bm1"),
            book_id: BookId::new("moby"),
            chapter_id: ChapterId::new("moby-2"),
            position: 751.0,
            note: Some("the sermon".into()),
            created_at: None,
        }],
    }));
    app
}

/// The commands for the listening session among `fx`.
pub fn commands(fx: &[Effect]) -> Vec<Command> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Session(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// `book` as the session's book: in `chapter` at `position`, 1×, full
/// volume, the place confirmed by the server.
pub fn listening(
    book: Book,
    manifest: Manifest,
    chapter: &str,
    position: f64,
    state: PlayState,
) -> Listening {
    let chapter = ChapterId::new(chapter);
    let duration = manifest
        .items
        .iter()
        .find(|i| i.chapter_id == chapter)
        .and_then(|i| i.duration);
    Listening {
        book: Arc::new(book),
        manifest: Arc::new(manifest),
        chapter,
        position,
        duration,
        duration_from: LengthFrom::Server,
        book_position: None,
        state,
        landed: Landing::Exact,
        confirmed: true,
        speed: 1.0,
        volume: 1.0,
        sound: SoundNow::default(),
        load: 1,
        from_download: false,
    }
}

/// Moby Dick (3 chapters of 30 min) as the session's book, at 1.25× and
/// 80% volume.
pub fn moby(chapter: &str, position: f64, state: PlayState) -> Listening {
    Listening {
        speed: 1.25,
        volume: 0.8,
        ..listening(
            library()[0].clone(),
            manifest("moby", 3, 1800.0),
            chapter,
            position,
            state,
        )
    }
}

/// A snapshot of the session with `l` as its book, online.
pub fn snap(l: Listening) -> Snapshot {
    Snapshot {
        listening: Some(l),
        ..Snapshot::default()
    }
}

/// The session's owner publishes `s`.
pub fn session(app: &mut App, s: Snapshot) -> Vec<Effect> {
    app.update(Event::Answer(Answer::Session(s)))
}

/// The session's book (of the last snapshot) now `state` at `position`
/// of `chapter`.
pub fn heard(app: &mut App, chapter: &str, position: f64, state: PlayState) -> Vec<Effect> {
    let mut s = app.snap.clone();
    let l = s.listening.as_mut().expect("a session's book");
    l.chapter = ChapterId::new(chapter);
    l.position = position;
    l.state = state;
    l.duration = l
        .manifest
        .items
        .iter()
        .find(|i| i.chapter_id == l.chapter)
        .and_then(|i| i.duration);
    session(app, s)
}

/// The session says `s` (its one-off news).
pub fn said(app: &mut App, s: Said) -> Vec<Effect> {
    news(app, SessionEvent::Said(s))
}

pub fn news(app: &mut App, e: SessionEvent) -> Vec<Effect> {
    app.update(Event::Answer(Answer::SessionEvent(e)))
}

/// The newest toast's words.
pub fn toast(app: &App) -> String {
    app.toasts
        .back()
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// Moby Dick playing in chapter 2 at 10:00, speed 1.25×.
pub fn playing() -> App {
    let mut app = book_open();
    let fx = app.update(key(' '));
    assert!(
        matches!(
            commands(&fx).as_slice(),
            [Command::Open {
                start: Start::Resume,
                ..
            }]
        ),
        "{fx:?}"
    );
    session(&mut app, snap(moby("moby-2", 600.0, PlayState::Playing)));
    app
}

pub fn render(app: &mut App, w: u16, h: u16) -> String {
    render_with(app, w, h, &Theme::monochrome())
}

pub fn render_with(app: &mut App, w: u16, h: u16, theme: &Theme) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.update(Event::Resize(w, h));
    term.draw(|f| views::render(app, theme, f)).unwrap();
    if w == 0 {
        return String::new(); // TestBackend cannot print a zero-width buffer
    }
    term.backend().to_string()
}
