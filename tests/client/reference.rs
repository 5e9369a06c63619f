//! Every CLI command, and the client calls the player and sync rely on,
//! against the reference server (`earmark::server`) over real HTTP.

use crate::harness::Home;
use crate::harness::TestServer;
use crate::security::out_and_err;
use earmark::api::{ApiError, BaseUrl, Client, ClientOptions, ProgressWrite, SettingsWrite};
use earmark::domain::*;
use earmark::server::LicenseSetting;
use serde_json::Value;
use std::process::Output;

fn demo_library() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo")
}

fn json_of(o: &Output) -> Value {
    let (out, err) = out_and_err(o);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out} / {err}"))
}

async fn ok_json(home: &Home, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let o = home.run_async(&all, None).await;
    assert!(o.status.success(), "{args:?}: {:?}", out_and_err(&o));
    json_of(&o)
}

async fn exit_code(home: &Home, args: &[&str]) -> (i32, String) {
    let o = home.run_async(args, None).await;
    (o.status.code().unwrap_or(-1), out_and_err(&o).1)
}

#[tokio::test]
async fn every_cli_command_against_the_reference_server() {
    let mut server = TestServer::start(demo_library()).await.unwrap();
    let home = Home::new();
    let base = server.base_url().to_owned();
    let pw = format!("{}\n", server.password);
    let o = home
        .run_async(
            &[
                "--server",
                &base,
                "--user",
                "alice",
                "login",
                "--password-stdin",
                "--json",
            ],
            Some(&pw),
        )
        .await;
    assert!(o.status.success(), "{:?}", out_and_err(&o));
    let v = json_of(&o);
    assert_eq!(v["userId"], server.user_id);
    assert_eq!(v["server"], base.as_str());
    assert_eq!(v["license"]["valid"], true);

    let st = ok_json(&home, &["status"]).await;
    assert_eq!(st["loggedIn"], true);
    assert_eq!(st["tokenStore"], "file");
    assert!(st["serverId"].as_str().unwrap().len() > 3);

    // books, search, book, chapters, manifest, categories
    let books = ok_json(&home, &["books"]).await;
    let items = books["items"].as_array().unwrap();
    assert!(items.len() >= 5, "{books}");
    let poe = items
        .iter()
        .find(|b| b["title"].as_str().unwrap().contains("Poe"))
        .expect("the Poe book is listed");
    let book_id = poe["id"].as_str().unwrap().to_owned();

    let found = ok_json(&home, &["search", "edgar", "poe"]).await;
    assert!(
        found["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["id"] == book_id.as_str()),
        "{found}"
    );
    let none = ok_json(&home, &["search", "zzzz-nothing"]).await;
    assert_eq!(none["total"], 0);

    let book = ok_json(&home, &["book", &book_id]).await;
    assert_eq!(book["id"], book_id.as_str());
    let chapters = ok_json(&home, &["chapters", &book_id]).await;
    let chapter_ids: Vec<&str> = chapters["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(chapter_ids.len(), 4);
    assert_eq!(book["chapterCount"], 4);
    let manifest = ok_json(&home, &["manifest", &book_id]).await;
    let order: Vec<&str> = manifest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["chapterId"].as_str().unwrap())
        .collect();
    assert_eq!(order, chapter_ids, "manifest in server order");
    assert!(
        manifest["items"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with(&base)
    );
    assert!(
        manifest["items"][0]["title"]
            .as_str()
            .unwrap()
            .contains("Eldorado")
    );

    let cats = ok_json(&home, &["categories"]).await;
    let cat = cats["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Poetry")
        .unwrap_or_else(|| panic!("{cats}"));
    let in_cat = ok_json(&home, &["books", "--category", cat["id"].as_str().unwrap()]).await;
    let in_cat = in_cat["items"].as_array().unwrap();
    assert!(!in_cat.is_empty() && in_cat.len() < items.len());
    assert!(in_cat.iter().any(|b| b["id"] == book_id.as_str()));

    // A series in its order (#1.5 from tags sits between #1 and #2), and
    // the people filters.
    let series = ok_json(&home, &["books", "--series", "aesop's fables"]).await;
    let places: Vec<(&str, &str)> = series["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["title"].as_str().unwrap(),
                b["series"][0]["sequence"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        places,
        [
            ("Aesop's Fables", "1"),
            ("The Oak and the Reeds", "1.5"),
            ("The Milk-Woman and Other Fables", "2")
        ]
    );
    let by_poe = ok_json(&home, &["books", "--author", "Edgar Allan Poe"]).await;
    assert_eq!(by_poe["total"], 2, "{by_poe}");
    // Streamed, the server's unfiltered total is not the selection's.
    let o = home
        .run_async(
            &["books", "--author", "Edgar Allan Poe", "--stream", "--json"],
            None,
        )
        .await;
    let (out, err) = out_and_err(&o);
    assert!(o.status.success(), "{err}");
    let pages: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(!pages.is_empty(), "{out}");
    assert!(pages.iter().all(|p| p["total"].is_null()), "{out}");
    let streamed: usize = pages
        .iter()
        .map(|p| p["items"].as_array().unwrap().len())
        .sum();
    assert_eq!(streamed, 2, "{out}");
    let read = ok_json(
        &home,
        &["books", "--narrator", "espeak-ng", "--author", "aesop"],
    )
    .await;
    assert_eq!(read["total"], 3, "{read}");
    assert_eq!(read["items"][0]["narrators"][0], "espeak-ng");

    // favorites
    let f = ok_json(&home, &["favorites", "add", &book_id]).await;
    assert_eq!(f["favorite"], true);
    let favs = ok_json(&home, &["favorites"]).await;
    assert_eq!(favs["items"][0]["id"], book_id.as_str());
    let fav_books = ok_json(&home, &["books", "--favorites"]).await;
    assert_eq!(fav_books["total"], 1);
    ok_json(&home, &["favorites", "remove", &book_id]).await;
    assert_eq!(ok_json(&home, &["favorites"]).await["total"], 0);

    // bookmarks
    let bm = ok_json(
        &home,
        &[
            "bookmarks",
            &book_id,
            "add",
            "--chapter",
            chapter_ids[1],
            "--at",
            "0:05",
            "--note",
            "great line",
        ],
    )
    .await;
    assert_eq!(bm["positionSec"], 5.0);
    assert_eq!(bm["note"], "great line");
    let bm_id = bm["id"].as_str().unwrap().to_owned();
    let list = ok_json(&home, &["bookmarks", &book_id]).await;
    assert_eq!(list["items"][0]["id"], bm_id.as_str());
    assert_eq!(list["items"][0]["chapterId"], chapter_ids[1]);
    let gone = ok_json(&home, &["bookmarks", &book_id, "remove", &bm_id]).await;
    assert_eq!(gone["deleted"], true);
    assert_eq!(ok_json(&home, &["bookmarks", &book_id]).await["total"], 0);
    let (code, err) = exit_code(
        &home,
        &[
            "bookmarks",
            &book_id,
            "add",
            "--chapter",
            "ch_nope",
            "--at",
            "1",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");

    // progress: none, then what a client wrote
    let p = ok_json(&home, &["progress", &book_id]).await;
    assert!(p["progress"].is_null(), "{p}");
    let session = session_client(&home, &base).await;
    session
        .post_progress(
            &BookId::new(&book_id),
            &write(chapter_ids[2], 3.5, 1_700_000_000_000),
        )
        .await
        .unwrap();
    let p = ok_json(&home, &["progress", &book_id]).await;
    assert_eq!(p["progress"]["chapterId"], chapter_ids[2]);
    assert_eq!(p["progress"]["positionSec"], 3.5);

    // text output works too
    let o = home.run_async(&["books"], None).await;
    assert!(out_and_err(&o).0.contains("Poe"), "{:?}", out_and_err(&o));

    // not found → 5
    let (code, err) = exit_code(&home, &["book", "bk_does_not_exist"]).await;
    assert_eq!(code, 5, "{err}");
    assert!(
        err.starts_with("earmark: ") && err.trim_end().ends_with('.'),
        "{err}"
    );

    // license → 4, browsing still works, login says so
    server.set_license(LicenseSetting::Expired).unwrap();
    let (code, err) = exit_code(&home, &["bookmarks", &book_id]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("license"), "{err}");
    ok_json(&home, &["books"]).await;
    let o = home
        .run_async(&["login", "--password-stdin"], Some(&pw))
        .await;
    assert!(o.status.success(), "{:?}", out_and_err(&o));
    assert!(
        out_and_err(&o).1.contains("license is expired"),
        "{:?}",
        out_and_err(&o)
    );
    let st = ok_json(&home, &["status"]).await;
    assert_eq!(st["license"]["status"], "expired");
    server.set_license(LicenseSetting::Valid).unwrap();

    // scope mismatch → 7: the cached serverId no longer matches
    let rec_path = home.path("data/earmark/sessions/default.json");
    let good = std::fs::read_to_string(&rec_path).unwrap();
    let mut rec: Value = serde_json::from_str(&good).unwrap();
    rec["serverId"] = "srv_rebuilt_elsewhere".into();
    std::fs::write(&rec_path, rec.to_string()).unwrap();
    let (code, err) = exit_code(&home, &["favorites", "add", &book_id]).await;
    assert_eq!(code, 7, "{err}");
    assert!(err.contains("log in again"), "{err}");
    std::fs::write(&rec_path, &good).unwrap();

    // invalid token → 3
    let tok_path = home.path("data/earmark/tokens/default.token");
    let tok = std::fs::read_to_string(&tok_path).unwrap();
    std::fs::write(&tok_path, "0000").unwrap();
    let (code, err) = exit_code(&home, &["books"]).await;
    assert_eq!(code, 3, "{err}");
    std::fs::write(&tok_path, tok).unwrap();

    // usage → 2
    let (code, _) = exit_code(&home, &["search"]).await;
    assert_eq!(code, 2);

    // server down → 6
    server.stop().await;
    let (code, err) = exit_code(&home, &["books"]).await;
    assert_eq!(code, 6, "{err}");
    assert!(err.contains(&base), "{err}");
    server.restart().await.unwrap();

    // logout revokes the token on the server
    let o = home.run_async(&["logout", "--json"], None).await;
    let v = json_of(&o);
    assert_eq!(
        (v["loggedOut"].clone(), v["revoked"].clone()),
        (true.into(), true.into())
    );
    let (code, _) = exit_code(&home, &["books"]).await;
    assert_eq!(code, 3);
    let (code, _) = exit_code(&home, &["status"]).await;
    assert_eq!(code, 3);
}

fn write(chapter: &str, pos: f64, at: i64) -> ProgressWrite {
    ProgressWrite {
        chapter_id: ChapterId::new(chapter),
        position: pos,
        client_updated_at: at,
        finished: false,
        device_id: Some("test-device".into()),
        reset: false,
    }
}

/// A client logged in as alice (its own token, not the CLI's).
async fn session_client(_home: &Home, base: &str) -> Client {
    let c = Client::new(BaseUrl::parse(base).unwrap(), ClientOptions::default()).unwrap();
    c.login("alice", "correct horse battery staple")
        .await
        .unwrap();
    c
}

#[tokio::test]
async fn sync_and_stream_calls_against_the_reference_server() {
    let server = TestServer::start_with(demo_library(), |c| {
        c.prefix = "/nas/earmark".into();
        c.header_prefix = "X-Acme".into();
    })
    .await
    .unwrap();
    let base = BaseUrl::parse(&format!("http://{}/nas/earmark", server.addr())).unwrap();
    assert_eq!(base.as_str(), server.base_url());
    let opts = ClientOptions {
        identity_header_prefix: "X-Acme".into(),
        ..ClientOptions::default()
    };
    let c = Client::new(base.clone(), opts).unwrap();
    let login = c.login(&server.username, &server.password).await.unwrap();
    assert_eq!(login.user_id, UserId::from(server.user_id));
    assert!(c.license_status().await.unwrap().valid);

    let books = c.books(&Default::default()).await.unwrap();
    let book = books
        .iter()
        .find(|b| b.chapter_count == Some(10))
        .expect("Aesop")
        .clone();
    let m = c.manifest(&book.id).await.unwrap();
    assert_eq!(m.items.len(), 10);
    let chapters = c.chapters(&book.id).await.unwrap();
    assert_eq!(
        m.items.iter().map(|i| &i.chapter_id).collect::<Vec<_>>(),
        chapters.iter().map(|c| &c.id).collect::<Vec<_>>()
    );

    // Lazy paging: one page at a time.
    let mut small = c.options().clone();
    small.paths.page_size = 2;
    let paged = Client::with_auth(base.clone(), small, c.auth().unwrap()).unwrap();
    let first = paged
        .books_page(&Default::default(), &earmark::api::NextPage::Page(1))
        .await
        .unwrap();
    assert_eq!(first.items.len(), 2);
    assert_eq!(first.next, Some(earmark::api::NextPage::Page(2)));
    assert_eq!(paged.books(&Default::default()).await.unwrap(), books);

    // Streams: Bearer header, access_token URL, ranges; through the prefix.
    let item = &m.items[0];
    let req = c.stream_request(item);
    assert!(req.url.as_str().starts_with(base.as_str()), "{}", req.url);
    let full = c.open_stream(&req, None).await.unwrap();
    assert_eq!(full.status(), 200);
    let bytes = full.bytes().await.unwrap();
    assert!(bytes.len() > 1000);
    let part = c.open_stream(&req, Some(100)).await.unwrap();
    assert_eq!(part.status(), 206);
    assert_eq!(part.bytes().await.unwrap()[..], bytes[100..]);
    let by_query = reqwest::get(c.stream_url_with_token(item)).await.unwrap();
    assert_eq!(by_query.status(), 200);
    let anonymous = reqwest::get(req.url.clone()).await.unwrap();
    assert_eq!(anonymous.status(), 401);

    // Progress: write, read back, stale write not applied, batch, delete.
    let ch = &m.items[3].chapter_id;
    let w = c
        .post_progress(&book.id, &write(ch.as_str(), 4.0, 1_700_000_000_000))
        .await
        .unwrap();
    assert!(w.applied);
    assert_eq!(w.record.as_ref().unwrap().chapter_id, *ch);
    let stale = c
        .post_progress(
            &book.id,
            &write(m.items[0].chapter_id.as_str(), 1.0, 1_600_000_000_000),
        )
        .await
        .unwrap();
    assert!(!stale.applied);
    assert_eq!(
        stale.record.unwrap().chapter_id,
        *ch,
        "the server's merged record comes back"
    );
    let state = c.progress(&book.id).await.unwrap();
    assert_eq!(state.progress.unwrap().position, 4.0);

    let other = books.iter().find(|b| b.id != book.id).unwrap();
    let other_m = c.manifest(&other.id).await.unwrap();
    let results = c
        .post_progress_batch(&[
            (book.id.clone(), write(ch.as_str(), 5.0, 1_700_000_001_000)),
            (
                other.id.clone(),
                write(other_m.items[0].chapter_id.as_str(), 2.0, 1_700_000_001_000),
            ),
            (
                BookId::new("bk_nope"),
                write("ch_x", 1.0, 1_700_000_001_000),
            ),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 3);
    assert!(results[0].outcome.as_ref().unwrap().applied);
    assert!(results[1].outcome.as_ref().unwrap().applied);
    assert!(
        matches!(results[2].outcome, Err(ApiError::NotFound { .. })),
        "{:?}",
        results[2].outcome
    );

    // Playback settings ride along with the progress read.
    let s = c
        .post_playback_settings(
            &book.id,
            &SettingsWrite {
                speed: 1.5,
                volume: Some(0.5),
                client_updated_at: 1_700_000_000_000,
            },
        )
        .await
        .unwrap();
    assert!(s.applied);
    assert_eq!(
        c.progress(&book.id).await.unwrap().settings.unwrap().speed,
        1.5
    );
    assert!(c.delete_playback_settings(&book.id).await.unwrap());
    assert!(c.progress(&book.id).await.unwrap().settings.is_none());
    assert!(c.delete_progress(&book.id).await.unwrap());
    assert!(!c.delete_progress(&book.id).await.unwrap());
    assert!(c.progress(&book.id).await.unwrap().progress.is_none());

    // The wrong header prefix: a 428 although both headers were sent says
    // the server expects other names and names the setting and its value.
    let plain =
        Client::with_auth(base.clone(), ClientOptions::default(), c.auth().unwrap()).unwrap();
    let e = plain
        .post_progress(&book.id, &write(ch.as_str(), 1.0, 1_700_000_002_000))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::IdentityHeadersIgnored { prefix, .. } if prefix == "X-Service"),
        "{e:?}"
    );
    let m = e.to_string();
    assert!(
        m.contains("other names")
            && m.contains("identity_header_prefix")
            && m.contains("\"X-Service\""),
        "{m}"
    );
    // A non-numeric user id header cannot be produced: UserId is a number.

    // License expired: writes and streams are 403 license_required; browsing works.
    server.set_license(LicenseSetting::Missing).unwrap();
    let e = c
        .post_progress(&book.id, &write(ch.as_str(), 1.0, 1_700_000_003_000))
        .await
        .unwrap_err();
    assert!(e.is_license(), "{e:?}");
    let e = c.open_stream(&req, None).await.unwrap_err();
    assert!(e.is_license(), "{e:?}");
    c.book(&book.id).await.unwrap();

    // Covers resolve against the base (through the prefix).
    let with_cover = books
        .iter()
        .find(|b| b.cover_url.is_some())
        .expect("demo books have covers");
    let img = c.cover(with_cover).await.unwrap().expect("a cover image");
    assert!(img.len() > 100);

    // Logout revokes the token.
    c.logout().await.unwrap();
    let e = plain.book(&book.id).await.unwrap_err();
    assert!(matches!(e, ApiError::Unauthorized { .. }), "{e:?}");
}

/// A profile from config.toml: gateway prefix, another identity header
/// prefix, selected by `default_profile` and by `--profile`.
#[tokio::test]
async fn config_profiles_with_gateway_and_header_prefix() {
    let server = TestServer::start_with(demo_library(), |c| {
        c.prefix = "/apps/earmark".into();
        c.header_prefix = "X-Acme".into();
    })
    .await
    .unwrap();
    let home = Home::new();
    let cfg_dir = home.path("config/earmark");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    std::fs::write(
        cfg_dir.join("config.toml"),
        format!(
            "default_profile = \"nas\"\n\n[profiles.nas]\nserver = \"http://{}/apps/earmark/\"\nuser = \"alice\"\nidentity_header_prefix = \"X-Acme\"\n\n[profiles.plain]\nserver = \"http://{}/apps/earmark\"\nuser = \"alice\"\n",
            server.addr(),
            server.addr()
        ),
    )
    .unwrap();
    let pw = format!("{}\n", server.password);
    let o = home
        .run_async(&["login", "--password-stdin"], Some(&pw))
        .await;
    assert!(o.status.success(), "{:?}", out_and_err(&o));
    let st = ok_json(&home, &["status"]).await;
    assert_eq!(st["profile"], "nas");
    assert_eq!(st["server"], server.base_url());
    let books = ok_json(&home, &["books"]).await;
    let id = books["items"][0]["id"].as_str().unwrap().to_owned();
    ok_json(&home, &["favorites", "add", &id]).await;

    // The other profile sends the default header prefix: the server says 428 → exit 7.
    let o = home
        .run_async(
            &["--profile", "plain", "login", "--password-stdin"],
            Some(&pw),
        )
        .await;
    assert!(o.status.success(), "{:?}", out_and_err(&o));
    let (code, err) = exit_code(&home, &["--profile", "plain", "favorites", "add", &id]).await;
    assert_eq!(code, 7, "{err}");
    // Each profile keeps its own session.
    assert!(home.path("data/earmark/sessions/nas.json").exists());
    assert!(home.path("data/earmark/sessions/plain.json").exists());
    let (code, err) = exit_code(&home, &["--profile", "nope/../x", "books"]).await;
    assert_eq!(code, 2, "{err}");
}

/// `earmark books --json | head -c0`: a reader that went away must end the
/// command quietly (like any Unix filter), never with a panic.
#[tokio::test]
async fn a_closed_stdout_pipe_ends_a_command_quietly() {
    let server = TestServer::start(demo_library()).await.unwrap();
    let home = Home::new();
    let base = server.base_url().to_owned();
    let pw = format!("{}\n", server.password);
    let login = [
        "--server",
        &base,
        "--user",
        "alice",
        "login",
        "--password-stdin",
    ];
    assert!(home.run_async(&login, Some(&pw)).await.status.success());

    let mut cmd = home.command(&["books", "--json"]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    drop(child.stdout.take()); // the reader is gone before anything is written
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "stderr: {err}");
    assert_ne!(out.status.code(), Some(101), "stderr: {err}");
}
