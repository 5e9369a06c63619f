//! Series in the book object: read from `book.toml` and from tags, and
//! updated by a rescan.

use crate::common::*;
use crate::harness::TestServer;
use serde_json::{Value, json};

fn series(book: &Value) -> Value {
    book["series"].clone()
}

#[tokio::test]
async fn demo_series_come_from_book_toml_and_from_tags() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let api = Api::login(&server).await;
    let first = api.book_titled("Aesop's Fables").await;
    assert_eq!(
        series(&first),
        json!([{"name": "Aesop's Fables", "sequence": "1"}])
    );
    let second = api.book_titled("The Milk-Woman").await;
    assert_eq!(
        series(&second),
        json!([{"name": "Aesop's Fables", "sequence": "2"}])
    );
    // No series in its book.toml: the ID3 TXXX SERIES / SERIES-PART tags.
    let between = api.book_titled("The Oak and the Reeds").await;
    assert_eq!(
        series(&between),
        json!([{"name": "Aesop's Fables", "sequence": "1.5"}])
    );
    let detail = api
        .get(&format!("/books/{}", between["id"].as_str().unwrap()))
        .await;
    assert_eq!(series(detail.expect(200)), series(&between));
    let poe = api.book_titled("Tell-Tale").await;
    assert_eq!(series(&poe), json!([]), "a book in no series");
}

#[tokio::test]
async fn a_rescan_picks_up_a_changed_series_and_q_finds_it() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    assert_eq!(series(&api.book_titled("Two Cities").await), json!([]));
    let toml = lib.path().join("Fiction/Two Cities/book.toml");
    let base = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        format!(
            "{base}series = [{{ name = \"Dickens Novels\", sequence = 2 }}, {{ name = \"Revolutions\" }}]\n"
        ),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!(
        series(&api.book_titled("Two Cities").await),
        json!([{"name": "Dickens Novels", "sequence": "2"}, {"name": "Revolutions", "sequence": null}])
    );
    let found = api.get("/books?q=dickens%20novels").await;
    assert_eq!(found.expect(200)["total"], 1, "q matches a series name");

    std::fs::write(
        &toml,
        format!("{base}series = \"Dickens Novels\"\nsequence = \"#1.5\"\n"),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!(
        series(&api.book_titled("Two Cities").await),
        json!([{"name": "Dickens Novels", "sequence": "#1.5"}])
    );
}

#[tokio::test]
async fn a_database_from_before_series_upgrades_on_the_next_scan() {
    let lib = small_library();
    let toml = lib.path().join("Fiction/Two Cities/book.toml");
    let base = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        format!("{base}series = \"Dickens Novels\"\nsequence = 3\n"),
    )
    .unwrap();
    let mut server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let id = api.book_titled("Two Cities").await["id"].clone();
    server.stop().await;
    // Rows as an older earmark wrote them: no `series` in the stored book,
    // and the signature of the older scan layout.
    let db = rusqlite::Connection::open(server.data_path().join("earmark.sqlite3")).unwrap();
    let rows = db
        .execute(
            "UPDATE books SET data = json_remove(data, '$.series'), sig = 'older', stamp = ''",
            [],
        )
        .unwrap();
    assert_eq!(rows, 3);
    drop(db);
    server.restart().await.unwrap();
    let api = Api::login(&server).await;
    let book = api.book_titled("Two Cities").await;
    assert_eq!(book["id"], id, "same id after the upgrade");
    assert_eq!(
        series(&book),
        json!([{"name": "Dickens Novels", "sequence": "3"}])
    );
}

#[tokio::test]
async fn probes_cached_before_series_tags_are_read_again() {
    let mut server = TestServer::start(demo_library()).await.unwrap();
    server.stop().await;
    // As an older earmark left the database: probes without the series
    // tags (and without a layout), rows without series or a stamp (the
    // column such a database gains on upgrade holds '').
    let db = rusqlite::Connection::open(server.data_path().join("earmark.sqlite3")).unwrap();
    let probes = db
        .execute(
            "UPDATE probe_cache SET data = json_remove(data, '$.layout', \
             '$.probe.tags.series', '$.probe.tags.series_part')",
            [],
        )
        .unwrap();
    assert!(probes > 0, "the demo's probes are cached");
    db.execute(
        "UPDATE books SET data = json_remove(data, '$.series'), sig = 'older', stamp = ''",
        [],
    )
    .unwrap();
    drop(db);
    server.restart().await.unwrap();
    let api = Api::login(&server).await;
    // Its series is only in ID3 tags: the file must be probed again.
    let oak = api.book_titled("The Oak and the Reeds").await;
    assert_eq!(
        series(&oak),
        json!([{"name": "Aesop's Fables", "sequence": "1.5"}])
    );
}

#[tokio::test]
async fn a_bad_series_in_book_toml_loses_only_that_key() {
    let lib = small_library();
    let toml = lib.path().join("Fiction/Two Cities/book.toml");
    let base = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        format!("{base}categories = [\"Classics\"]\nseries = 3\n"),
    )
    .unwrap();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("A Tale of Two Cities").await;
    assert_eq!(b["author"], "Charles Dickens");
    assert_eq!(b["narrator"], "Tess Ter");
    assert_eq!(b["categories"][0]["name"], "Classics");
    assert_eq!(series(&b), json!([]), "an unreadable series is none");

    // A list keeps its readable entries; a bad sequence keeps the name.
    std::fs::write(
        &toml,
        format!(
            "{base}series = [{{ sequence = 1 }}, {{ name = \"Dickens Novels\", sequence = 2 }}, {{ name = \"Revolutions\", sequence = [3] }}]\n"
        ),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    let b = api.book_titled("A Tale of Two Cities").await;
    assert_eq!(b["author"], "Charles Dickens");
    assert_eq!(
        series(&b),
        json!([{"name": "Dickens Novels", "sequence": "2"}, {"name": "Revolutions", "sequence": null}])
    );
    std::fs::write(
        &toml,
        format!("{base}series = \"Dickens Novels\"\nsequence = {{ n = 4 }}\n"),
    )
    .unwrap();
    earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    let b = api.book_titled("A Tale of Two Cities").await;
    assert_eq!(b["narrator"], "Tess Ter");
    assert_eq!(
        series(&b),
        json!([{"name": "Dickens Novels", "sequence": null}])
    );
}
