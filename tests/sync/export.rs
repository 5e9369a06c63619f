//! `earmark bookmarks … --export md|csv` and `earmark history … --export`
//! as a user runs them (issue 24 §4): the real binary, a real login, the
//! reference server; a book title, a chapter title and a note with commas,
//! quotes, line breaks and non-ASCII letters come out whole, CSV as RFC
//! 4180 says, Markdown as a readable list.

use crate::harness::TestServer;
use crate::harness::{logged_in, text, titled};
use crate::support::wav;
use earmark::api::NewBookmark;
use earmark::domain::Book;

const ODD_TITLE: &str = "Moby-Dick; or, \"The Whale\"\nvolume 1 – Ахав 🐋";
const CH1_TITLE: &str = "01 Loomings, \"the\" start – é";
const NOTE: &str = "a \"quoted\", note\nsecond line – Ærø 🐋";

/// "Alpha", "Beta" (2 × 120 s) and the odd book: chapter 1 (10 s) named
/// with a comma, quotes and an é, chapter 2 (20 s).
fn library() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("earmark-export-lib-")
        .tempdir()
        .unwrap();
    for name in ["Alpha", "Beta"] {
        let b = dir.path().join(name);
        std::fs::create_dir_all(&b).unwrap();
        wav(&b.join("01.wav"), 120);
        wav(&b.join("02.wav"), 120);
        std::fs::write(
            b.join("book.toml"),
            format!("title = \"{name}\"\nauthor = \"Test\"\n"),
        )
        .unwrap();
    }
    let odd = dir.path().join("Odd");
    std::fs::create_dir_all(&odd).unwrap();
    wav(&odd.join(format!("{CH1_TITLE}.wav")), 10);
    wav(&odd.join("02 The Carpet-Bag.wav"), 20);
    let toml_title = ODD_TITLE.replace('"', "\\\"").replace('\n', "\\n");
    std::fs::write(
        odd.join("book.toml"),
        format!("title = \"{toml_title}\"\nauthor = \"Herman Melville\"\n"),
    )
    .unwrap();
    dir
}

/// RFC 4180 records; panics on a record line that does not end in CRLF.
fn parse_csv(s: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = s.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF in {s:?}");
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, '\n') => panic!("a record ends in LF, not CRLF: {s:?}"),
            (false, c) => field.push(c),
        }
    }
    assert!(
        field.is_empty() && row.is_empty(),
        "unterminated record: {s:?}"
    );
    rows
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8(o.stdout.clone()).expect("UTF-8")
}

/// The rows as maps from the header's names.
fn records(csv: &str) -> (Vec<String>, Vec<std::collections::HashMap<String, String>>) {
    let mut rows = parse_csv(csv);
    let header = rows.remove(0);
    let maps = rows
        .into_iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "{r:?}");
            header.iter().cloned().zip(r).collect()
        })
        .collect();
    (header, maps)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_export_as_csv_and_markdown_with_every_character_whole() {
    let lib = library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let find = |t: &str| -> Book { titled(&books, t).clone() };
    let (odd, alpha) = (find(ODD_TITLE), find("Alpha"));
    let m = direct.manifest(&odd.id).await.unwrap();
    assert_eq!(m.items[0].title, CH1_TITLE, "the server names chapter 1 so");
    let mark = |i: usize, at: f64, note: Option<&str>| NewBookmark {
        book_id: odd.id.clone(),
        chapter_id: m.items[i].chapter_id.clone(),
        position: at,
        note: note.map(str::to_owned),
        client_id: None,
    };
    // Added out of order: the export is in the book's order.
    direct
        .add_bookmark(&mark(1, 12.5, Some(NOTE)))
        .await
        .unwrap();
    direct.add_bookmark(&mark(0, 3.0, None)).await.unwrap();
    let alpha_ch = direct.manifest(&alpha.id).await.unwrap().items[1]
        .chapter_id
        .clone();
    direct
        .add_bookmark(&NewBookmark {
            book_id: alpha.id.clone(),
            chapter_id: alpha_ch,
            position: 61.0,
            note: Some("plain".into()),
            client_id: None,
        })
        .await
        .unwrap();

    // One book, CSV.
    let csv = stdout(&home.run(&["bookmarks", odd.id.as_str(), "--export", "csv"], None));
    assert!(
        csv.contains(",\"a \"\"quoted\"\", note\nsecond line – Ærø 🐋\","),
        "{csv}"
    );
    let (header, rows) = records(&csv);
    assert_eq!(
        header,
        [
            "book_id",
            "book_title",
            "chapter_number",
            "chapter_id",
            "chapter_title",
            "time_in_chapter",
            "time_in_book",
            "note",
            "created"
        ]
    );
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!(rows[0]["chapter_title"], CH1_TITLE);
    assert_eq!(rows[0]["time_in_chapter"], "0:00:03");
    assert_eq!(rows[0]["note"], "");
    assert_eq!(rows[1]["book_title"], ODD_TITLE);
    assert_eq!(rows[1]["chapter_number"], "2");
    assert_eq!(rows[1]["chapter_id"], m.items[1].chapter_id.as_str());
    assert_eq!(rows[1]["chapter_title"], "02 The Carpet-Bag");
    assert_eq!(rows[1]["time_in_chapter"], "0:00:12");
    assert_eq!(
        rows[1]["time_in_book"], "0:00:22",
        "10 s of chapter 1 + 12.5 s"
    );
    assert_eq!(rows[1]["note"], NOTE);
    let created = &rows[1]["created"];
    assert!(
        created.len() == 20 && created.ends_with('Z') && created.as_bytes()[10] == b'T',
        "RFC 3339 UTC: {created:?}"
    );

    // One book, Markdown: a readable list, the note indented under its item.
    let md = stdout(&home.run(&["bookmarks", odd.id.as_str(), "--export", "md"], None));
    assert!(
        md.starts_with("# Bookmarks: Moby-Dick; or, \"The Whale\" volume 1 – Ахав 🐋\n\n"),
        "{md}"
    );
    let ch1 = md.find("- **Chapter 1 · 01 Loomings, \"the\" start – é** · 0:00:03 into the chapter · 0:00:03 into the book · ");
    let ch2 = md.find(
        "- **Chapter 2 · 02 The Carpet-Bag** · 0:00:12 into the chapter · 0:00:22 into the book · ",
    );
    assert!(ch1.is_some() && ch2 > ch1, "{md}");
    assert!(
        md[ch2.unwrap()..]
            .split_once('\n')
            .is_some_and(|(_, rest)| rest == "\n  a \"quoted\", note  \n  second line – Ærø 🐋\n"),
        "{md}"
    );

    // Every book: only those with bookmarks, by title.
    let all = stdout(&home.run(&["bookmarks", "--all", "--export", "csv"], None));
    let (_, rows) = records(&all);
    let titles: Vec<&str> = rows.iter().map(|r| r["book_title"].as_str()).collect();
    assert_eq!(titles, ["Alpha", ODD_TITLE, ODD_TITLE], "{all}");
    assert_eq!(rows[0]["note"], "plain");
    assert_eq!(rows[0]["time_in_book"], "0:03:01", "120 s + 61 s");
    let all_md = stdout(&home.run(&["bookmarks", "--all", "--export", "md"], None));
    assert!(
        all_md.starts_with("# Bookmarks\n\n## Alpha\n\n- **Chapter 2"),
        "{all_md}"
    );
    assert!(
        all_md.contains("\n## Moby-Dick; or, \"The Whale\" volume 1"),
        "{all_md}"
    );
    assert!(!all_md.contains("## Beta"), "{all_md}");

    // A book the server does not know: its exit code, nothing written.
    let o = home.run(&["bookmarks", "no-such-book", "--export", "csv"], None);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    // --json and --export do not go together.
    let o = home.run(&["--json", "bookmarks", "--all", "--export", "md"], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_export_names_the_chapters_and_says_when_the_server_is_away() {
    let lib = library();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let (home, direct, books) = logged_in(&server).await;
    let odd = titled(&books, ODD_TITLE).clone();
    let m = direct.manifest(&odd.id).await.unwrap();
    // Play chapter 1, then pick chapter 2: the place in chapter 1 is kept.
    let o = home.run(
        &["play", odd.id.as_str(), "--audio", "null", "--for", "2"],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let ch2 = m.items[1].chapter_id.as_str();
    let o = home.run(
        &[
            "play",
            odd.id.as_str(),
            "--chapter",
            ch2,
            "--at",
            "1",
            "--for",
            "1",
            "--audio",
            "null",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));

    let csv = stdout(&home.run(&["history", odd.id.as_str(), "--export", "csv"], None));
    let (header, rows) = records(&csv);
    assert_eq!(header[7..], ["cause", "at"]);
    assert_eq!(rows.len(), 1, "{csv}");
    let r = &rows[0];
    assert_eq!(r["book_title"], ODD_TITLE);
    assert_eq!(r["chapter_number"], "1");
    assert_eq!(r["chapter_title"], CH1_TITLE);
    assert_eq!(r["cause"], "chapter");
    assert!(r["time_in_chapter"].starts_with("0:00:0"), "{r:?}");
    assert_eq!(
        r["time_in_chapter"], r["time_in_book"],
        "chapter 1 starts the book"
    );
    let md = stdout(&home.run(&["history", odd.id.as_str(), "--export", "md"], None));
    assert!(md.starts_with("# Place history: Moby-Dick; or,"), "{md}");
    assert!(
        md.contains("- **Chapter 1 · 01 Loomings, \"the\" start – é** · 0:00:0"),
        "{md}"
    );
    assert!(md.contains(" into the book · chapter · "), "{md}");

    // The server away: the history is this device's, the chapters are not.
    server.stop().await;
    let o = home.run(&["history", odd.id.as_str(), "--export", "csv"], None);
    let csv = stdout(&o);
    let (_, rows) = records(&csv);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["chapter_id"], m.items[0].chapter_id.as_str());
    assert_eq!(rows[0]["chapter_title"], "", "unknown, not made up");
    assert_eq!(rows[0]["time_in_book"], "");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("chapter titles and times in the book are left empty"),
        "{err}"
    );
}
