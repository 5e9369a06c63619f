//! Browsing: list, paging, search, categories, details, chapters, manifest.

use crate::common::*;
use crate::harness::TestServer;

#[tokio::test]
async fn list_pages_and_validates_parameters() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let d = api.get("/books").await.expect(200).clone();
    assert_eq!(d["total"], 3);
    assert_eq!(d["page"], 1);
    assert_eq!(d["pageSize"], 50);
    assert_eq!(d["hasMore"], false);
    let titles: Vec<&str> = d["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["A Tale of Two Cities", "Cosmos", "loose"]);
    let p2 = api
        .get("/books?page=2&pageSize=1")
        .await
        .expect(200)
        .clone();
    assert_eq!(p2["items"].as_array().unwrap().len(), 1);
    assert_eq!(p2["items"][0]["title"], "Cosmos");
    assert_eq!(p2["hasMore"], true);
    assert_eq!(p2["total"], 3);
    let p9 = api.get("/books?page=9").await.expect(200).clone();
    assert_eq!(p9["items"].as_array().unwrap().len(), 0);
    for bad in [
        "page=0",
        "pageSize=0",
        "pageSize=9999",
        "page=x",
        "sort=x",
        "favorites=maybe",
    ] {
        let r = api.get(&format!("/books?{bad}")).await;
        r.expect_error(400, "bad_request");
    }
    let by_author = api.get("/books?sort=author").await.expect(200).clone();
    assert_eq!(by_author["items"][0]["author"], "Charles Dickens");
    api.get("/books?sort=added").await.expect(200);
    api.get("/books?sort=recent").await.expect(200);
    let q = api.get("/books?q=DICKENS").await.expect(200).clone();
    assert_eq!(q["total"], 1);
    let q = api.get("/books?q=tess").await.expect(200).clone();
    assert_eq!(q["total"], 1, "narrator matches");
}

#[tokio::test]
async fn book_object_has_every_documented_field() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    assert!(b["id"].as_str().unwrap().starts_with("bk_"));
    assert_eq!(b["author"], "Charles Dickens");
    assert_eq!(b["narrator"], "Tess Ter");
    assert_eq!(b["description"], "It was the best of times");
    assert!(
        (b["durationSec"].as_f64().unwrap() - 4.5).abs() < 0.01,
        "{b}"
    );
    assert_eq!(b["chapterCount"], 3);
    assert_eq!(b["categories"][0]["name"], "Fiction");
    assert!(
        b["categories"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("cat_")
    );
    assert_eq!(
        b["coverUrl"],
        format!("/books/{}/cover", b["id"].as_str().unwrap())
    );
    assert_eq!(b["favorite"], false);
    assert!(b["addedAt"].as_i64().unwrap() > 0);
    assert!(b["progress"].is_null());
    let details = api
        .get(&format!("/books/{}", b["id"].as_str().unwrap()))
        .await;
    assert_eq!(details.expect(200), &b);
    let loose = api.book_titled("loose").await;
    assert!(loose["categories"].as_array().unwrap().is_empty());
    assert!(loose["coverUrl"].is_null());
    assert_eq!(loose["author"], "Unknown author");
    let cosmos = api.book_titled("Cosmos").await;
    assert_eq!(cosmos["categories"][0]["name"], "Science");
}

#[tokio::test]
async fn search_matches_every_word_and_needs_q() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    api.get("/books/search")
        .await
        .expect_error(400, "bad_request");
    api.get("/books/search?q=%20%20")
        .await
        .expect_error(400, "bad_request");
    let r = api
        .get("/books/search?q=best%20dickens")
        .await
        .expect(200)
        .clone();
    assert_eq!(r["total"], 1, "description and author words: {r}");
    let r = api
        .get("/books/search?q=best%20cosmos")
        .await
        .expect(200)
        .clone();
    assert_eq!(r["total"], 0);
}

#[tokio::test]
async fn categories_and_category_filter() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let cats = api.get("/categories").await.expect(200).clone();
    let items = cats["items"].as_array().unwrap();
    let names: Vec<&str> = items.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Fiction", "Science"]);
    assert_eq!(items[0]["bookCount"], 1);
    let id = items[1]["id"].as_str().unwrap();
    let r = api
        .get(&format!("/books?category={id}"))
        .await
        .expect(200)
        .clone();
    assert_eq!(r["total"], 1);
    assert_eq!(r["items"][0]["title"], "Cosmos");
    let r = api
        .get("/books?category=cat_nope")
        .await
        .expect(200)
        .clone();
    assert_eq!(r["total"], 0);
}

#[tokio::test]
async fn chapters_and_manifest_follow_natural_file_order() {
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let api = Api::login(&server).await;
    let b = api.book_titled("Two Cities").await;
    let id = b["id"].as_str().unwrap();
    let ch = api
        .get(&format!("/books/{id}/chapters"))
        .await
        .expect(200)
        .clone();
    assert_eq!(ch["total"], 3);
    assert_eq!(ch["hasMore"], false);
    let titles: Vec<&str> = ch["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["1", "2", "10"]);
    let starts: Vec<f64> = ch["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["startSec"].as_f64().unwrap())
        .collect();
    assert!(
        (starts[1] - 2.0).abs() < 0.01 && (starts[2] - 3.0).abs() < 0.01,
        "{starts:?}"
    );
    let m = api.manifest(id).await;
    assert_eq!(m["bookId"], id);
    assert!((m["totalDurationSec"].as_f64().unwrap() - 4.5).abs() < 0.01);
    let items = m["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    let sizes = [("1.wav", 0), ("2.wav", 1), ("10.wav", 2)];
    for (file, i) in sizes {
        let item = &items[i];
        let cid = item["chapterId"].as_str().unwrap();
        assert_eq!(cid, ch["items"][i]["id"].as_str().unwrap());
        assert!(cid.starts_with("ch_"));
        assert_eq!(item["url"], format!("/chapters/{cid}/play?raw=1"));
        assert_eq!(item["mimeType"], "audio/wav");
        let len = std::fs::metadata(lib.path().join("Fiction/Two Cities").join(file))
            .unwrap()
            .len();
        assert_eq!(item["sizeBytes"].as_u64(), Some(len));
        assert_eq!(item["startSec"], 0.0);
        assert!(item["endSec"].is_null());
    }
    assert!((items[0]["durationSec"].as_f64().unwrap() - 2.0).abs() < 0.01);
    // A single file without embedded chapters: one chapter named after the book.
    let loose = api.book_titled("loose").await;
    let m = api.manifest(loose["id"].as_str().unwrap()).await;
    assert_eq!(m["items"].as_array().unwrap().len(), 1);
    assert_eq!(m["items"][0]["title"], "loose");
    assert!((m["items"][0]["durationSec"].as_f64().unwrap() - 4.0).abs() < 0.01);
}

#[tokio::test]
async fn demo_library_has_embedded_chapters_and_every_format() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let api = Api::login(&server).await;
    let list = api.get("/books").await.expect(200).clone();
    assert!(list["total"].as_u64().unwrap() >= 4, "{list}");
    // m4b with embedded chapters: one file, several time ranges.
    let heart = api.book_titled("Tell-Tale").await;
    let m = api.manifest(heart["id"].as_str().unwrap()).await;
    let items = m["items"].as_array().unwrap();
    assert!(items.len() > 1, "m4b chapters: {m}");
    assert!(items.iter().all(|i| i["mimeType"] == "audio/mp4"));
    let size = items[0]["sizeBytes"].clone();
    assert!(items.iter().all(|i| i["sizeBytes"] == size), "same file");
    for w in items.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(b["startSec"].as_f64().unwrap() > a["startSec"].as_f64().unwrap());
        assert_eq!(a["endSec"].as_f64(), b["startSec"].as_f64());
    }
    assert!(
        items
            .iter()
            .all(|i| i["durationSec"].as_f64().unwrap() > 0.0)
    );
    // mp3 with ID3 CHAP frames.
    let bremen = api.book_titled("Bremer").await;
    let m = api.manifest(bremen["id"].as_str().unwrap()).await;
    assert!(
        m["items"].as_array().unwrap().len() > 1,
        "ID3 CHAP chapters: {m}"
    );
    assert_eq!(m["items"][0]["mimeType"], "audio/mpeg");
    // Multi-file mp3, ogg and flac books.
    let aesop = api.book_titled("Aesop").await;
    assert_eq!(aesop["chapterCount"], 10);
    let m = api.manifest(aesop["id"].as_str().unwrap()).await;
    assert!(
        m["items"][1]["title"].as_str().unwrap().contains("Hare"),
        "natural order: {m}"
    );
    let poe = api.book_titled("Poe").await;
    let m = api.manifest(poe["id"].as_str().unwrap()).await;
    assert_eq!(m["items"][0]["mimeType"], "audio/ogg");
    let verlaine = api.book_titled("Poèmes").await;
    let m = api.manifest(verlaine["id"].as_str().unwrap()).await;
    assert_eq!(m["items"][0]["mimeType"], "audio/flac");
    for b in list["items"].as_array().unwrap() {
        assert!(
            b["durationSec"].as_f64().unwrap() > 1.0,
            "duration of {}",
            b["title"]
        );
        assert!(!b["categories"].as_array().unwrap().is_empty());
    }
    let cats = api.get("/categories").await.expect(200).clone();
    assert!(cats["total"].as_u64().unwrap() >= 2);
}
