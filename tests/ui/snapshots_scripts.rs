//! Every script and width (issue 24 §6): titles in CJK, Hangul, Thai,
//! emoji (joined families, flags, skin tones), and letters with several
//! combining marks line up by terminal cells in the library, book and
//! chapter tables, and are cut between grapheme clusters, never inside
//! one, at 80 and 40 columns. Snapshots show the text; the assertions
//! check the cells themselves.

use crate::fixtures::*;
use earmark::domain::*;
use earmark::ui::keymap::KeyCode;
use earmark::ui::state::*;
use earmark::ui::theme::Theme;
use earmark::ui::views;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;
use unicode_segmentation::UnicodeSegmentation;

const FAMILY: &str = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}";
/// "Truyện Kiều" with its marks decomposed (e + circumflex + dot below).
const KIEU: &str = "Truye\u{302}\u{323}n Kie\u{302}\u{300}u";

fn titles() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "family",
            format!("{FAMILY} Family Stories 🇩🇪🇯🇵 👍🏽 told on long winter evenings"),
            "Émile Zola",
        ),
        (
            "kiku",
            "菊と刀 日本文化の型 ― 完全版の朗読".into(),
            "ルース・ベネディクト",
        ),
        (
            "kieu",
            format!("{KIEU} – the tale of Kiều in verse"),
            "Nguyễn Du",
        ),
        ("thai", "นิทานพื้นบ้านภาษาไทย เล่มที่หนึ่ง".into(), "ไม่ทราบชื่อ"),
        (
            "han",
            "채식주의자 The Vegetarian, a novel".into(),
            "한강 Han Kang",
        ),
        (
            "zalgo",
            "Z\u{324}\u{354}\u{367}\u{311}\u{313}a\u{308}\u{356}\u{32D}\u{308}\u{307}lgo".into(),
            "Anonymous",
        ),
    ]
}

fn scripts_library() -> Vec<Book> {
    titles()
        .into_iter()
        .enumerate()
        .map(|(i, (id, title, author))| {
            let mut b = book(id, &title, author, 3600.0 * (i as f64 + 1.5));
            if i % 2 == 0 {
                b.progress = Some(progress(&format!("{id}-2"), 60.0, 1800.0, false));
            }
            b.favorite = i == 1;
            b
        })
        .collect()
}

fn with_scripts() -> App {
    let mut app = logged_in();
    app.update(Event::Answer(Answer::Library {
        books: scripts_library(),
        from_cache: false,
    }));
    app
}

/// The family book open, its chapters named in every script, playing in
/// chapter 2 (so the current row has its position and time left).
fn book_with_scripts() -> App {
    let mut app = with_scripts();
    let family = scripts_library()[0].clone();
    let at = (0..app.library.len())
        .find(|i| app.library.row(*i).unwrap().id == family.id)
        .unwrap();
    app.update(code(KeyCode::Home));
    for _ in 0..at {
        app.update(key('j'));
    }
    app.update(code(KeyCode::Enter));
    let chapter_titles: Vec<String> = titles().into_iter().map(|(_, t, _)| t).collect();
    let mut m = manifest("family", chapter_titles.len(), 1500.0);
    for (item, t) in m.items.iter_mut().zip(&chapter_titles) {
        item.title = t.clone();
    }
    app.update(Event::Answer(Answer::BookLoaded {
        book: family,
        manifest: Some(m),
        bookmarks: vec![],
    }));
    let fx = app.update(key(' '));
    let Some(earmark::domain::session::Command::Open {
        known: Some(known), ..
    }) = commands(&fx).pop()
    else {
        panic!("{fx:?}")
    };
    let (book, manifest) = *known;
    let l = listening(book, manifest, "family-2", 65.0, PlayState::Paused);
    session(&mut app, snap(l));
    app
}

fn draw(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    app.update(Event::Resize(w, h));
    term.draw(|f| views::render(app, &Theme::monochrome(), f))
        .unwrap();
    term.backend().buffer().clone()
}

/// Row `y` as (x, symbol) of the cells that start a cluster: the cells a
/// wide cluster covers are left out.
fn row(buf: &Buffer, y: u16) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    let mut x = 0;
    while x < buf.area.width {
        let s = buf[(x, y)].symbol().to_owned();
        let w = ratatui::buffer::CellWidth::cell_width(s.as_str()).max(1);
        out.push((x, s));
        x += w;
    }
    out
}

/// The text drawn in cells `from..to` of row `y`; panics when a wide
/// cluster straddles either edge (the columns would not line up).
fn cells(buf: &Buffer, y: u16, from: u16, to: u16) -> String {
    let mut text = String::new();
    for (x, s) in row(buf, y) {
        let w = ratatui::buffer::CellWidth::cell_width(s.as_str()).max(1);
        if x < from && x + w > from || x < to && x + w > to {
            panic!("a cluster straddles the column edge at row {y}: {s:?} at {x}");
        }
        if x >= from && x < to {
            text.push_str(&s);
        }
    }
    text
}

/// `shown` is `full` cut between two of its grapheme clusters (or whole),
/// with `…` when cut.
fn assert_cut_between_clusters(full: &str, shown: &str) {
    let shown = shown.trim_end();
    let Some(prefix) = shown.strip_suffix('…') else {
        assert_eq!(shown, full.trim_end(), "not cut, so shown whole");
        return;
    };
    let mut boundary = 0;
    let ok = full.grapheme_indices(true).any(|(i, _)| {
        boundary = i;
        i == prefix.len()
    }) && full.starts_with(prefix);
    assert!(
        ok,
        "{shown:?} is not {full:?} cut between clusters (last boundary {boundary})"
    );
}

#[test]
fn library_rows_line_up_and_cut_between_clusters() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = with_scripts();
        let buf = draw(&mut app, w, h);
        insta::assert_snapshot!(
            format!("library_scripts_{w}x{h}"),
            crate::fixtures::render(&mut app, w, h)
        );
        // Columns as `views::library` lays them out at this width.
        let (title_w, author_w, dur_w, prog_w): (u16, u16, u16, u16) = match w {
            80 => (32, 21, 9, 16),
            _ => (33, 0, 0, 5),
        };
        let list_top = 2;
        for i in 0..app.library.len() {
            let y = list_top + i as u16;
            let book = app.library.row(i).unwrap().clone();
            let title = cells(&buf, y, 2, 2 + title_w);
            assert_cut_between_clusters(&book.title, &title);
            let mut x = 2 + title_w;
            if author_w > 0 {
                let author = cells(&buf, y, x, x + author_w);
                assert_cut_between_clusters(&format!(" {}", book.authors[0]), &author);
                x += author_w;
            }
            if dur_w > 0 {
                let dur = cells(&buf, y, x, x + dur_w);
                assert_eq!(dur.trim(), fmt_time(book.duration.unwrap()), "row {i}");
                assert!(!dur.ends_with(' '), "right-aligned: {dur:?}");
                x += dur_w;
            }
            let prog = cells(&buf, y, x, x + prog_w);
            assert_eq!(x + prog_w, w);
            if book.progress.is_some() {
                assert!(prog.trim_end().ends_with('%'), "row {i}: {prog:?}");
            }
        }
    }
}

#[test]
fn search_highlights_the_matched_letters_after_joined_emoji() {
    let mut app = with_scripts();
    for c in "/stories".chars() {
        app.update(key(c));
    }
    for (w, h) in [(80, 24), (40, 12)] {
        let buf = draw(&mut app, w, h);
        insta::assert_snapshot!(
            format!("library_scripts_search_{w}x{h}"),
            crate::fixtures::render(&mut app, w, h)
        );
        let lit: String = row(&buf, 2)
            .into_iter()
            .filter(|(x, _)| buf[(*x, 2)].modifier.contains(Modifier::UNDERLINED))
            .map(|(_, s)| s)
            .collect();
        assert_eq!(lit, "Stories", "the highlight is on the matched letters");
    }
}

#[test]
fn chapter_rows_line_up_and_cut_between_clusters() {
    for (w, h) in [(80, 24), (40, 12)] {
        let mut app = book_with_scripts();
        let buf = draw(&mut app, w, h);
        insta::assert_snapshot!(
            format!("book_scripts_{w}x{h}"),
            crate::fixtures::render(&mut app, w, h)
        );
        let text = crate::fixtures::render(&mut app, w, h);
        let lines: Vec<&str> = text.lines().collect();
        let rows: Vec<u16> = (0..h)
            .filter(|y| {
                let r: String = row(&buf, *y).into_iter().map(|(_, s)| s).collect();
                r.contains("25:00") && !r.contains(['░', '█'])
            })
            .collect();
        assert!(rows.len() >= 2, "chapter rows:\n{}", lines.join("\n"));
        // The duration column's right edge is the same cell on every row.
        let right = |y: u16| {
            row(&buf, y)
                .into_iter()
                .filter(|(_, s)| s != " ")
                .map(|(x, _)| x)
                .next_back()
                .unwrap()
        };
        let edge = right(rows[0]);
        for y in &rows {
            assert_eq!(right(*y), edge, "row {y}:\n{}", lines.join("\n"));
        }
        // Each chapter title is cut between clusters.
        let titles: Vec<String> = titles().into_iter().map(|(_, t, _)| t).collect();
        for y in rows {
            let r: String = row(&buf, y).into_iter().map(|(_, s)| s).collect();
            // Right of the cover box, when there is one.
            let r = r.rsplit_once('│').map_or(r.as_str(), |(_, r)| r);
            let Some((n, rest)) = r.trim_start_matches([' ', '▶']).split_once("  ") else {
                panic!("not a chapter row: {r:?}");
            };
            let n: usize = n.trim().parse().unwrap();
            let right = rest
                .find(" 1:05 /")
                .or_else(|| rest.rfind(" 25:00"))
                .unwrap();
            let shown = &rest[..right];
            assert_cut_between_clusters(&titles[n - 1], shown);
        }
    }
}
