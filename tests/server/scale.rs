//! Listing at scale: paging through a generated library returns every book
//! exactly once, in the documented order, for every sort and filter;
//! search folds accents and case; a rescan of an unchanged library
//! rewrites nothing.

use crate::common::*;
use crate::harness::TestServer;
use earmark::server::fold::sort_key;
use serde_json::Value;
use std::collections::HashSet;

const AUTHORS: [&str; 5] = [
    "Émile Zola",
    "anna Seghers",
    "Zadie Smith",
    "Ōe Kenzaburō",
    "10 Authors",
];

/// `n` one-chapter books in category folders, with titles that exercise
/// numbers, case, accents and duplicates; one is "Poèmes saturniens".
fn generated_library(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.wav");
    write_wav(&template, 0.05, 440.0);
    let words = ["Book", "book", "Éclat", "eclair", "Zebra", "Ärger", "Abend"];
    for i in 0..n {
        let folder = dir.path().join(format!("Cat{}/b{i:04}", i % 4));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(&template, folder.join("01.wav")).unwrap();
        let title = if i == 7 {
            "Poèmes saturniens".to_owned()
        } else if i % 10 == 3 {
            "Same Title".to_owned() // ties are broken by id
        } else {
            format!("{} {}", words[i % words.len()], (i * 37) % 101)
        };
        std::fs::write(
            folder.join("book.toml"),
            format!(
                "title = \"{title}\"\nauthor = \"{}\"\n",
                AUTHORS[i % AUTHORS.len()]
            ),
        )
        .unwrap();
    }
    std::fs::remove_file(&template).unwrap();
    dir
}

/// Every item of a listing, page by page.
async fn page_through(api: &Api, query: &str, page_size: usize) -> (Vec<Value>, u64) {
    let mut items = Vec::new();
    let mut total = None;
    for page in 1.. {
        let d = api
            .get(&format!("/books?{query}&page={page}&pageSize={page_size}"))
            .await
            .expect(200)
            .clone();
        let got = d["items"].as_array().unwrap().clone();
        let t = d["total"].as_u64().unwrap();
        assert_eq!(*total.get_or_insert(t), t, "total changed between pages");
        assert!(got.len() <= page_size);
        let more = d["hasMore"].as_bool().unwrap();
        items.extend(got);
        if !more {
            break;
        }
        assert!(page < 10_000);
    }
    let total = total.unwrap();
    assert_eq!(items.len() as u64, total, "{query}: pages add up to total");
    let ids: HashSet<&str> = items.iter().map(|b| b["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), items.len(), "{query}: a book appeared twice");
    (items, total)
}

fn key(b: &Value, field: &str) -> String {
    sort_key(b[field].as_str().unwrap())
}

fn id(b: &Value) -> &str {
    b["id"].as_str().unwrap()
}

#[tokio::test]
async fn paging_returns_every_book_once_in_order_for_each_sort_and_filter() {
    const N: usize = 120;
    let lib = generated_library(N);
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;

    let (by_title, total) = page_through(&api, "sort=title", 7).await;
    assert_eq!(total, N as u64);
    for w in by_title.windows(2) {
        let (a, b) = (
            (key(&w[0], "title"), id(&w[0])),
            (key(&w[1], "title"), id(&w[1])),
        );
        assert!(a < b, "title order: {a:?} then {b:?}");
    }

    let (by_author, _) = page_through(&api, "sort=author", 9).await;
    assert_eq!(by_author.len(), N);
    for w in by_author.windows(2) {
        let a = (key(&w[0], "author"), key(&w[0], "title"), id(&w[0]));
        let b = (key(&w[1], "author"), key(&w[1], "title"), id(&w[1]));
        assert!(a < b, "author order: {a:?} then {b:?}");
    }

    let (by_added, _) = page_through(&api, "sort=added", 11).await;
    assert_eq!(by_added.len(), N);
    for w in by_added.windows(2) {
        assert!(w[0]["addedAt"].as_i64() >= w[1]["addedAt"].as_i64());
    }

    // Recent: books with progress first (latest write first), then by title.
    let picks = [&by_title[50], &by_title[3], &by_title[90]];
    let base = now_ms() - 10_000;
    for (i, b) in picks.iter().enumerate() {
        let m = api.manifest(id(b)).await;
        let ch = m["items"][0]["chapterId"].as_str().unwrap();
        api.progress_write(id(b), ch, 0.01, base + i as i64)
            .await
            .expect(200);
    }
    let (recent, _) = page_through(&api, "sort=recent", 8).await;
    let head: Vec<&str> = recent[..3].iter().map(id).collect();
    assert_eq!(head, [id(picks[2]), id(picks[1]), id(picks[0])]);
    let rest: Vec<&str> = recent[3..].iter().map(id).collect();
    let expected: Vec<&str> = by_title
        .iter()
        .map(id)
        .filter(|i| !head.contains(i))
        .collect();
    assert_eq!(rest, expected);

    // Filters page the same way: a category, a text query, favorites.
    let cats = api.get("/categories").await.expect(200).clone();
    let cat = cats["items"][1].clone();
    let (in_cat, t) = page_through(
        &api,
        &format!("category={}&sort=author", cat["id"].as_str().unwrap()),
        4,
    )
    .await;
    assert_eq!(t, cat["bookCount"].as_u64().unwrap());
    assert!(in_cat.iter().all(|b| b["categories"][0]["id"] == cat["id"]));
    let (books, _) = page_through(&api, "q=BOOK&sort=title", 5).await;
    let want = by_title
        .iter()
        .filter(|b| b["title"].as_str().unwrap().to_lowercase().contains("book"))
        .count();
    assert_eq!(books.len(), want);
    for b in &by_title[10..13] {
        api.post(&format!("/auth/favorites/{}", id(b)), serde_json::json!({}))
            .await
            .expect(200);
    }
    let (favs, _) = page_through(&api, "favorites=true&sort=title", 2).await;
    let fav_ids: Vec<&str> = favs.iter().map(id).collect();
    assert_eq!(fav_ids, by_title[10..13].iter().map(id).collect::<Vec<_>>());
}

#[tokio::test]
async fn search_folds_accents_and_case() {
    let lib = generated_library(12);
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    for q in ["poemes", "POEMES", "Poèmes", "poe\u{300}mes saturn"] {
        let r = api
            .get(&format!("/books/search?q={}", urlencode(q)))
            .await
            .expect(200)
            .clone();
        assert_eq!(r["total"], 1, "{q}: {r}");
        assert_eq!(r["items"][0]["title"], "Poèmes saturniens");
    }
    let r = api.get("/books?q=emile%20zola").await.expect(200).clone();
    assert!(
        r["total"].as_u64().unwrap() >= 1,
        "author without accents: {r}"
    );
    let r = api.get("/books?q=%C3%A9CLAT").await.expect(200).clone();
    let r2 = api.get("/books?q=eclat").await.expect(200).clone();
    assert_eq!(r["total"], r2["total"]);
    assert!(r["total"].as_u64().unwrap() >= 1);
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn a_rescan_of_an_unchanged_library_rewrites_no_book() {
    let lib = generated_library(30);
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let before = api.get("/books?pageSize=500").await.expect(200).clone();
    let s = earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!(
        (s.books, s.unchanged_books, s.new_books, s.removed_books),
        (30, 30, 0, 0)
    );
    // One changed book is rewritten, the rest reused.
    let folder = lib.path().join("Cat1/b0005");
    std::fs::write(
        folder.join("book.toml"),
        "title = \"Renamed by its toml\"\n",
    )
    .unwrap();
    let s = earmark::server::rescan(lib.path(), server.data_path()).unwrap();
    assert_eq!((s.books, s.unchanged_books, s.new_books), (30, 29, 0));
    let after = api.get("/books?pageSize=500").await.expect(200).clone();
    assert_eq!(after["total"], before["total"]);
    let renamed = api.book_titled("Renamed by its toml").await;
    let old = before["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == renamed["id"])
        .expect("the changed book keeps its id");
    assert_ne!(old["title"], renamed["title"]);
}

/// Both absent, or equal to a microsecond.
fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() < 1e-6,
        (a, b) => a.is_none() && b.is_none(),
    }
}

#[tokio::test]
async fn every_listed_page_shows_the_callers_own_progress_and_favorites_for_its_books() {
    let lib = generated_library(40);
    let server = TestServer::start(lib.path()).await.unwrap();
    let alice = Api::login(&server).await;
    server.add_user("bob", "bob-password-1").unwrap();
    let bob = Api::from_session(
        &server,
        server.login_as("bob", "bob-password-1").await.unwrap(),
    );
    let (books, _) = page_through(&alice, "sort=title", 40).await;
    // book id → (alice's position, bob's position); favorites likewise.
    let mut written = std::collections::HashMap::new();
    let mut favorites = std::collections::HashMap::new();
    for (i, b) in books.iter().enumerate() {
        let m = alice.manifest(id(b)).await;
        let ch = m["items"][0]["chapterId"].as_str().unwrap();
        // Whole milliseconds: what the server keeps.
        let a = (i % 3 == 0).then_some((10 + i) as f64 / 1000.0);
        let o = (i % 4 == 0).then_some((5 + i) as f64 / 1000.0);
        for (api, pos) in [(&alice, a), (&bob, o)] {
            if let Some(pos) = pos {
                api.progress_write(id(b), ch, pos, now_ms() - 1000)
                    .await
                    .expect(200);
            }
        }
        written.insert(id(b).to_owned(), (a, o));
        let (fa, fo) = (i % 5 == 1, i % 2 == 1);
        for (api, fav) in [(&alice, fa), (&bob, fo)] {
            if fav {
                api.post(&format!("/auth/favorites/{}", id(b)), serde_json::json!({}))
                    .await
                    .expect(200);
            }
        }
        favorites.insert(id(b).to_owned(), (fa, fo));
    }
    for (who, api) in [(0, &alice), (1, &bob)] {
        let pick = |pair: (Option<f64>, Option<f64>)| if who == 0 { pair.0 } else { pair.1 };
        for query in ["sort=title", "sort=author", "sort=recent"] {
            let (items, total) = page_through(api, query, 7).await;
            assert_eq!(total, 40);
            for b in &items {
                let pos = pick(written[id(b)]);
                assert!(
                    same(b["progress"]["positionSec"].as_f64(), pos),
                    "{who} {query} {b}"
                );
                let fav = favorites[id(b)];
                let fav = if who == 0 { fav.0 } else { fav.1 };
                assert_eq!(b["favorite"], fav, "{who} {query} {b}");
            }
        }
        let (favs, _) = page_through(api, "favorites=true", 3).await;
        assert!(!favs.is_empty());
        for b in &favs {
            assert_eq!(b["favorite"], true);
            assert!(same(
                b["progress"]["positionSec"].as_f64(),
                pick(written[id(b)])
            ));
        }
        let list = api
            .get("/auth/favorites?pageSize=100")
            .await
            .expect(200)
            .clone();
        assert_eq!(list["total"].as_u64(), Some(favs.len() as u64));
        for f in list["items"].as_array().unwrap() {
            let b = &f["book"];
            assert_eq!(b["favorite"], true);
            assert!(same(
                b["progress"]["positionSec"].as_f64(),
                pick(written[id(b)])
            ));
        }
        let one = &books[3];
        let d = api
            .get(&format!("/books/{}", id(one)))
            .await
            .expect(200)
            .clone();
        assert!(same(
            d["progress"]["positionSec"].as_f64(),
            pick(written[id(one)])
        ));
    }
}
