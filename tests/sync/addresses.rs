//! One server, several addresses (issue 24 §2), against real servers over
//! real HTTP: the reference server reached through two proxies (home and
//! away), and another instance behind a third. The login goes through the
//! first; when it goes away mid-play, playback (the real engine on the
//! null output) and sync go on through the second without a restart, one
//! queue for both; the other instance is refused and never gets a token.

use crate::harness::TestServer;
use crate::harness::{Home, text, titled};
use crate::proxy::{Mode, Proxy};
use crate::support::library;
use earmark::api::{BaseUrl, BookQuery, Client};
use earmark::config::{Dirs, LoggedIn, Profile, ProfileSelector};
use earmark::domain::session::{Command, PlayState, Snapshot, Start};
use earmark::domain::{BookId, ChapterId, Manifest, now_millis};
use earmark::playback::{Login, Playback, Setup};
use earmark::player::AudioMode;
use std::path::Path;
use std::time::{Duration, Instant};

/// The server at two addresses, and another instance at a third.
struct Three {
    server: TestServer,
    home: Proxy,
    away: Proxy,
    other: Proxy,
    other_server: TestServer,
    _lib: tempfile::TempDir,
}

impl Three {
    async fn start() -> Three {
        let lib = library();
        let server = TestServer::start(lib.path()).await.unwrap();
        // Another instance with the same user and password.
        let other_server = TestServer::start(lib.path()).await.unwrap();
        Three {
            home: Proxy::start(server.addr()).await,
            away: Proxy::start(server.addr()).await,
            other: Proxy::start(other_server.addr()).await,
            server,
            other_server,
            _lib: lib,
        }
    }

    fn addresses(&self) -> [String; 3] {
        [&self.home, &self.away, &self.other].map(|p| p.base_url())
    }

    /// A client straight to the server, logged in.
    async fn direct(&self) -> Client {
        let c = Client::new(
            BaseUrl::parse(self.server.base_url()).unwrap(),
            Default::default(),
        )
        .unwrap();
        c.login(&self.server.username, &self.server.password)
            .await
            .unwrap();
        c
    }

    /// No request ever carried a token to the other instance.
    fn assert_other_never_got_a_token(&self) {
        let seen = self.other.requests();
        assert!(
            !seen.is_empty(),
            "the other instance was asked for its serverId"
        );
        for r in &seen {
            assert_eq!(r.authorization, None, "{} {}", r.method, r.path);
            assert!(!r.path.contains("access_token"), "{}", r.path);
        }
    }
}

/// config.toml with a profile of these addresses, in its own home.
fn write_config(home: &Path, addresses: &[String]) {
    let dir = home.join("config/earmark");
    std::fs::create_dir_all(&dir).unwrap();
    let list: Vec<String> = addresses.iter().map(|a| format!("{a:?}")).collect();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "default_profile = \"nas\"\n[profiles.nas]\nuser = \"alice\"\naddresses = [{}]\n",
            list.join(", ")
        ),
    )
    .unwrap();
}

fn profile(home: &Path) -> Profile {
    let dirs = Dirs {
        config: home.join("config/earmark"),
        data: home.join("data/earmark"),
        cache: home.join("cache/earmark"),
    };
    Profile::resolve_in(&ProfileSelector::named("nas"), dirs).unwrap()
}

/// Waits (generously) until what the owner publishes satisfies `f`.
async fn until(
    now: &mut tokio::sync::watch::Receiver<Snapshot>,
    what: &str,
    f: impl Fn(&Snapshot) -> bool,
) {
    let waited = tokio::time::timeout(Duration::from_secs(40), now.wait_for(|n| f(n)))
        .await
        .is_ok_and(|r| r.is_ok());
    assert!(
        waited,
        "timed out waiting until {what}: {:?}",
        now.borrow().listening
    );
}

fn playing_at(n: &Snapshot, chapter: &ChapterId, from: f64) -> bool {
    n.listening.as_ref().is_some_and(|s| {
        s.state == PlayState::Playing && &s.chapter == chapter && s.position >= from
    })
}

async fn long_book(direct: &Client) -> (BookId, Manifest) {
    let books = direct.books(&BookQuery::default()).await.unwrap();
    let id = titled(&books, "Long").id.clone();
    let m = direct.manifest(&id).await.unwrap();
    (id, m)
}

/// Logged in through the first of the three addresses, the Long book
/// playing (from 0) through the playback owner with `sync`'s intervals.
struct Playing {
    t: Three,
    _home: tempfile::TempDir,
    profile: Profile,
    done: LoggedIn,
    direct: Client,
    book: BookId,
    chapter: ChapterId,
    playback: Playback,
    now: tokio::sync::watch::Receiver<Snapshot>,
}

async fn playing(sync: impl FnOnce(&Path) -> earmark::sync::SyncConfig) -> Playing {
    let t = Three::start().await;
    let home = tempfile::tempdir().unwrap();
    write_config(home.path(), &t.addresses());
    let profile = profile(home.path());
    let done: LoggedIn = earmark::config::login(&profile, None, &t.server.password)
        .await
        .unwrap();
    let direct = t.direct().await;
    let (book, manifest) = long_book(&direct).await;
    let chapter = manifest.items[0].chapter_id.clone();
    let mut login = Login::of(&profile, Some(&done.session), Some(done.client.clone()));
    login.sync = sync(&profile.sync_dir());
    let (playback, _events) = Playback::start(Setup {
        dirs: profile.dirs.clone(),
        login,
        audio: AudioMode::Null,
        rules: Default::default(),
        ready_last: false,
    });
    let mut now = playback.snapshot();
    let info = direct.book(&book).await.unwrap();
    playback.send(Command::Open {
        book: book.clone(),
        start: Start::Resume,
        known: earmark::domain::session::known(info, manifest),
    });
    until(&mut now, "it plays through the first address", |n| {
        playing_at(n, &chapter, 0.5)
    })
    .await;
    assert!(t.home.requests().iter().any(|r| r.path.contains("/play")));
    Playing {
        t,
        _home: home,
        profile,
        done,
        direct,
        book,
        chapter,
        playback,
        now,
    }
}

impl Playing {
    /// The first address goes away mid-play; the listener jumps past what
    /// was downloaded ahead, so the stream needs an address now. Returns
    /// once it plays on there, through the second address.
    async fn cut_and_jump(&mut self) {
        self.t.home.set_mode(Mode::Refuse);
        self.t.away.clear();
        self.playback.send(Command::Seek {
            chapter: self.chapter.clone(),
            position: 900.0,
            cause: earmark::domain::JumpCause::Seek,
        });
        let chapter = self.chapter.clone();
        until(&mut self.now, "it plays on at 900 s", |n| {
            playing_at(n, &chapter, 901.0)
        })
        .await;
        let streams: Vec<_> = self
            .t
            .away
            .requests()
            .into_iter()
            .filter(|r| r.path.contains("/play"))
            .collect();
        assert!(
            !streams.is_empty(),
            "the stream came through the second address"
        );
        assert!(
            streams.iter().all(|r| r.authorization.is_some()),
            "with the token"
        );
        let second = BaseUrl::parse(&self.t.addresses()[1]).unwrap();
        assert_eq!(
            self.done.client.base(),
            second,
            "the client answers there too"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playback_and_sync_go_on_through_the_second_address_when_the_first_goes_away() {
    let mut p = playing(crate::support::config).await;
    let [first, second, _] = p.t.addresses().map(|a| BaseUrl::parse(&a).unwrap());
    assert_eq!(p.done.session.server, first, "logged in through the first");
    let said: Vec<_> = p
        .done
        .answers
        .iter()
        .map(|a| a.said.as_ref().ok().cloned())
        .collect();
    let mine = Some(p.done.session.server_id.clone());
    assert_eq!([&said[0], &said[1]], [&mine, &mine], "the same server");
    assert!(
        said[2].is_some() && said[2] != mine,
        "another instance: {said:?}"
    );

    p.cut_and_jump().await;
    // Sync goes on through the second address: the place reaches the server.
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let place = p.direct.progress(&p.book).await.unwrap().progress;
        if place.as_ref().is_some_and(|x| x.position >= 900.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the place never reached the server: {place:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!p.t.away.sync_requests().is_empty());
    let left = p.playback.quit(Duration::from_secs(5)).await;
    assert_eq!(left.left, 0, "one queue, all of it sent");
    // The next start begins at the address that answered last.
    let s = earmark::config::Session::load(&p.profile).unwrap();
    assert_eq!(s.server, second);
    p.t.assert_other_never_got_a_token();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_waits_for_its_address_has_the_client_knock_and_move_on() {
    // Sync never talks to the server here: only the waiting stream can
    // find out that the first address went away.
    let mut p = playing(|dir| {
        let mut c = earmark::sync::SyncConfig::new(dir);
        c.local_only = true;
        c
    })
    .await;
    p.cut_and_jump().await;
    let seen = p.t.away.requests();
    let knock = seen
        .iter()
        .position(|r| r.path.ends_with("/license/status"))
        .expect("a knock at the second address");
    assert_eq!(seen[knock].authorization, None, "a knock carries no token");
    assert!(
        seen[..knock].iter().all(|r| !r.path.contains("/play")),
        "the stream moved after the knock: {:?}",
        seen.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    p.playback.quit(Duration::from_secs(5)).await;
    p.t.assert_other_never_got_a_token();
}

/// Appends one progress write to the journal as earmark before addresses
/// wrote it: its scope names the address it was queued for.
fn queue_for_address(
    journal: &Path,
    base: &str,
    server_id: &str,
    user_id: u64,
    book: &BookId,
    chapter: &ChapterId,
) {
    use std::io::Write;
    let record = serde_json::json!({"put": {
        "seq": 1,
        "scope": {"base": base, "serverId": server_id, "userId": user_id},
        "book": book.as_str(),
        "op": {"op": "progressWrite", "chapterId": chapter.as_str(), "positionSec": 42.0,
               "finished": false, "reset": false, "clientUpdatedAt": now_millis()},
        "queuedAt": now_millis(),
    }});
    let payload = serde_json::to_vec(&record).unwrap();
    let bytes = earmark::durable::encode(b"EMOB", &payload);
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)
        .unwrap();
    f.write_all(&bytes).unwrap();
}

fn json(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_shows_every_address_and_sends_one_queue_through_the_second() {
    let t = Three::start().await;
    // No `--server`: the profile's addresses.
    let home = Home::new();
    let addresses = t.addresses();
    write_config(home.dir.path(), &addresses);

    let o = home.run(&["login", "--password-stdin"], Some(&t.server.password));
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("ANOTHER server"), "{out}");
    assert!(out.contains("is another server"), "the warning: {out}");

    let o = home.run(&["--json", "status"], None);
    let v = json(&o);
    let states: Vec<(&str, bool, Option<bool>)> = v["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["state"].as_str().unwrap(),
                a["inUse"].as_bool().unwrap(),
                a["reachable"].as_bool(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("sameServer", true, Some(true)),
            ("sameServer", false, Some(true)),
            ("otherServer", false, Some(true)),
        ],
        "{v}"
    );

    // A change queued before addresses, for the first address; the first
    // goes away: it is the same queue, sent through the second.
    let direct = t.direct().await;
    let (book, manifest) = long_book(&direct).await;
    let s = t.server.login().await.unwrap();
    let journal = home.path("data/earmark/sync/nas/outbox.journal");
    queue_for_address(
        &journal,
        &format!("{}", BaseUrl::parse(&addresses[0]).unwrap()),
        &s.server_id,
        s.user_id,
        &book,
        &manifest.items[0].chapter_id,
    );
    t.home.set_mode(Mode::Refuse);
    let o = home.run(&["--json", "sync", "pending"], None);
    let v = json(&o);
    assert_eq!(v["queued"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["held"].as_array().unwrap().len(), 0, "{v}");
    let o = home.run(&["sync", "push"], None);
    assert!(o.status.success(), "{}", text(&o));
    let p = direct.progress(&book).await.unwrap().progress.unwrap();
    assert_eq!(p.position, 42.0);
    assert!(
        t.away
            .sync_requests()
            .iter()
            .any(|r| r.authorization.is_some())
    );

    let o = home.run(&["status"], None);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let away = BaseUrl::parse(&addresses[1]).unwrap().to_string();
    assert!(
        out.contains(&format!("Server:      {away}")),
        "the one that answered last: {out}"
    );
    assert!(out.contains("does not answer"), "{out}");
    // The doctor lists them too, and checks the server where it answers.
    let o = home.run(&["doctor"], None);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("[NO ] address") && out.contains("ANOTHER server"),
        "{out}"
    );
    assert!(out.contains(&format!("Server: {away}")), "{out}");

    // An address added after the login (here another instance's), seen
    // for the first time while holding the token: not checked, skipped.
    let new = Proxy::start(t.other_server.addr()).await;
    let mut listed = addresses.to_vec();
    listed.insert(1, new.base_url());
    write_config(home.dir.path(), &listed);
    let o = home.run(&["--json", "books"], None);
    assert!(o.status.success(), "through the second: {}", text(&o));
    let v = json(&home.run(&["--json", "status"], None));
    assert_eq!(v["addresses"][1]["state"], "unchecked", "{v}");
    assert!(!new.requests().is_empty(), "knocked at");
    assert!(new.requests().iter().all(|r| r.authorization.is_none()));
    t.assert_other_never_got_a_token();
}
