//! Round trips of a seek inside a streamed mp3, counted at a slow-link
//! proxy (crate::harness::proxy) between the decoder and the
//! file server: requests and how many were in flight together, never times.

use crate::harness::proxy::{Proxy, Request};
use crate::support::{TOKEN, TestServer};
use crate::vbr_support::files;
use earmark::domain::{BookId, ChapterId, Manifest, ManifestItem};
use earmark::player::decode::{StreamDecoder, StreamHints};
use earmark::player::mpa::{RangeReader, SeekMaps};
use earmark::player::source::{HttpSource, READ_AHEAD_FLOOR};
use earmark::player::{
    AudioMode, Command, Engine, EngineConfig, EngineHandle, Status, StreamPool, StreamRequest,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The file server behind a proxy that holds each direction back by
/// `one_way`; the runtime runs the proxy.
fn slow_link(one_way: Duration) -> (TestServer, Proxy, tokio::runtime::Runtime) {
    let server = TestServer::start(&files().dir);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt.block_on(Proxy::start(server.addr));
    proxy.set_delay(one_way);
    (server, proxy, rt)
}

/// A decoder over `file` streamed through the proxy, with its own seek maps
/// (so nothing is known of the stream before it opens), past its first
/// second of audio. Its far seeks land on estimates at once: they count no
/// frames first (that is [`counting`]'s).
fn open(proxy: &Proxy, file: &str, maps: &SeekMaps) -> StreamDecoder {
    open_on(proxy, file, maps, None, Some(0))
}

/// [`open`], a far seek counting frames through up to `count_limit`
/// bytes first (`None`: the player's default).
fn counting(proxy: &Proxy, file: &str, count_limit: Option<u64>) -> StreamDecoder {
    open_on(proxy, file, &SeekMaps::default(), None, count_limit)
}

/// [`open`] with the stream's requests on `pool` (else the player's own).
fn open_on(
    proxy: &Proxy,
    file: &str,
    maps: &SeekMaps,
    pool: Option<Arc<dyn StreamPool>>,
    count_limit: Option<u64>,
) -> StreamDecoder {
    let url = format!("http://{}/files/{file}", proxy.addr());
    let req = StreamRequest {
        url: url.clone(),
        headers: vec![("Authorization".into(), format!("Bearer {TOKEN}"))],
    };
    let resolve = req.clone();
    let judge = EngineConfig::new(AudioMode::Null, Arc::new(move |_: &_| resolve.clone())).judge;
    let src = HttpSource::start_on(
        pool,
        req.clone(),
        Duration::from_secs(5),
        READ_AHEAD_FLOOR,
        judge,
    );
    src.wait_headers().expect("the stream's headers");
    let len = src.len().expect("the stream's length");
    let ranges = src
        .range_reader()
        .map(|r| Arc::new(r) as Arc<dyn RangeReader>);
    let maps = maps.clone();
    let hints = StreamHints {
        mime: Some("audio/mpeg"),
        duration: Some(crate::vbr_support::LENGTH),
        seek_map: Some(Box::new(move |first| maps.get(&url, len, first))),
        ranges,
        count_limit,
    };
    let mut dec = StreamDecoder::open(Box::new(src), hints).expect("an mp3");
    play(&mut dec, 1.0);
    dec
}

/// Decodes `secs` of audio from where the decoder is.
fn play(dec: &mut StreamDecoder, secs: f64) {
    let mut from = None;
    loop {
        let b = dec.next_block().expect("audio").expect("not the end");
        let start = *from.get_or_insert(b.start);
        if b.end() - start >= secs {
            return;
        }
    }
}

/// Seeks to `at` and decodes the first audio there; the requests that cost.
fn seek(proxy: &Proxy, dec: &mut StreamDecoder, at: f64) -> Vec<Request> {
    proxy.clear();
    dec.seek(at).expect("the seek");
    play(dec, 0.1);
    proxy.requests()
}

/// A bitrate probe: a bounded read of 16 KiB (the stream's own requests
/// are bounded too, but by its read-ahead).
fn is_probe(r: &Request) -> bool {
    let bounds = r.range.as_deref().and_then(|v| {
        let (a, b) = v.strip_prefix("bytes=")?.split_once('-')?;
        Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
    });
    bounds.is_some_and(|(a, b)| b + 1 - a == 16 * 1024)
}

/// Sends a bounded GET of `vbr.mp3` on `conn` and reads its whole answer.
async fn get_100_bytes(conn: &mut tokio::net::TcpStream) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let req = format!(
        "GET /files/vbr.mp3 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\nrange: bytes=0-99\r\n\r\n"
    );
    conn.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = conn.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "the answer was cut: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        if let Some(head) = got.windows(4).position(|w| w == b"\r\n\r\n")
            && got.len() >= head + 4 + 100
        {
            return String::from_utf8_lossy(&got[..head]).into_owned();
        }
    }
}

#[test]
fn the_proxy_holds_each_direction_back_by_its_delay_and_counts_what_passes() {
    let one_way = Duration::from_millis(60);
    let (_server, proxy, rt) = slow_link(one_way);
    let began = Instant::now();
    let (first, second) = rt.block_on(async {
        let mut conn = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
        // Two requests on one kept-alive connection, one after the other.
        let first = get_100_bytes(&mut conn).await;
        let second = get_100_bytes(&mut conn).await;
        (first, second)
    });
    // The handshake, then two requests of a round trip each (a lower
    // bound only: a loaded machine is slower, never faster).
    assert!(began.elapsed() >= 6 * one_way, "{:?}", began.elapsed());
    assert!(first.starts_with("HTTP/1.1 206"), "{first}");
    assert!(second.starts_with("HTTP/1.1 206"), "{second}");
    let seen = proxy.requests();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].range.as_deref(), Some("bytes=0-99"));
    assert_eq!(seen[0].connection, seen[1].connection);
    assert_eq!(proxy.connections(), 1);
    assert_eq!(proxy.max_in_flight(), 1, "one after the other");
    // A second connection, two requests at once on two connections.
    proxy.clear();
    rt.block_on(async {
        let mut a = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
        let mut b = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
        tokio::join!(get_100_bytes(&mut a), get_100_bytes(&mut b));
    });
    assert_eq!(proxy.connections(), 2);
    assert_eq!(proxy.requests().len(), 2);
    assert_eq!(proxy.max_in_flight(), 2, "both in flight together");
}

#[test]
fn a_seek_through_the_xing_toc_makes_one_request() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let mut dec = open(&proxy, "vbr.mp3", &SeekMaps::default());
    for at in [900.0, 300.0, 1100.0] {
        let seen = seek(&proxy, &mut dec, at);
        assert_eq!(seen.len(), 1, "seek to {at} s: {seen:?}");
        assert!(!is_probe(&seen[0]), "{seen:?}");
    }
}

#[test]
fn a_seek_in_a_cbr_mp3_makes_one_request() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let mut dec = open(&proxy, "cbr.mp3", &SeekMaps::default());
    for at in [900.0, 300.0] {
        let seen = seek(&proxy, &mut dec, at);
        assert_eq!(seen.len(), 1, "seek to {at} s: {seen:?}");
    }
}

#[test]
fn a_seek_back_into_audio_already_played_makes_one_request() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let maps = SeekMaps::default();
    let mut dec = open(&proxy, "noxing.mp3", &maps);
    // Play 30 s: exact points cover it; then away and back into it.
    play(&mut dec, 30.0);
    dec.seek(1100.0).expect("away");
    play(&mut dec, 0.1);
    let seen = seek(&proxy, &mut dec, 20.0);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(!dec.approximate(), "counted from an exact point");
}

#[test]
fn without_a_toc_the_bitrate_probes_are_in_flight_together_then_one_request_lands() {
    // A long one-way delay: probes sent one after another could not overlap
    // at all, and ones sent together overlap for a whole round trip.
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(200));
    let mut dec = open(&proxy, "noxing.mp3", &SeekMaps::default());
    let seen = seek(&proxy, &mut dec, 900.0);
    let probes = seen.iter().filter(|r| is_probe(r)).count();
    assert_eq!(probes, 16, "{seen:?}");
    assert_eq!(
        proxy.max_in_flight(),
        probes as u64,
        "every probe in flight at once: {seen:?}"
    );
    let landing: Vec<_> = seen.iter().filter(|r| !is_probe(r)).collect();
    assert_eq!(landing.len(), 1, "{seen:?}");
    assert!(dec.approximate());
    // The table is kept: the next far seek needs no probes.
    let again = seek(&proxy, &mut dec, 300.0);
    assert_eq!(again.len(), 1, "{again:?}");
}

#[test]
fn over_h2c_the_probes_of_a_seek_without_a_toc_go_out_together_on_the_streams_one_connection() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(100));
    proxy.pass_h2(true);
    let h2c = reqwest::Client::builder()
        .http2_prior_knowledge()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut dec = open_on(
        &proxy,
        "noxing.mp3",
        &SeekMaps::default(),
        Some(Arc::new(h2c)),
        Some(0),
    );
    let seen = seek(&proxy, &mut dec, 900.0);
    // HPACK hides the ranges: 16 probes and the landing, all HTTP/2.
    assert_eq!(seen.len(), 17, "{seen:?}");
    assert!(
        seen.iter().all(|r| r.http2 && r.connection == 1),
        "{seen:?}"
    );
    assert_eq!(proxy.connections(), 0, "no connection opened for the seek");
    assert!(
        proxy.max_in_flight() >= 16,
        "every probe in flight at once: {}",
        proxy.max_in_flight()
    );
    assert!(dec.approximate());
}

#[test]
fn a_far_seek_counts_the_frames_up_to_it_with_reads_in_flight_together_then_lands_exactly() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(100));
    let mut dec = counting(&proxy, "noxing.mp3", None);
    let seen = seek(&proxy, &mut dec, 900.0);
    assert!(!dec.approximate(), "counted: exact");
    assert!(seen.iter().all(|r| !is_probe(r)), "no probes: {seen:?}");
    // 2.2 MB to count: one batch of four 512 KiB reads in flight together,
    // a second for the rest, then the landing.
    assert!(proxy.max_in_flight() >= 4, "{seen:?}");
    assert!(seen.len() <= 9, "{seen:?}");
    // Where it counted, a seek is one request.
    let again = seek(&proxy, &mut dec, 600.0);
    assert_eq!(again.len(), 1, "{again:?}");
    assert!(!dec.approximate());
}

#[test]
fn a_seek_further_than_the_count_limit_lands_on_an_estimate_at_once() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let mut dec = counting(&proxy, "noxing.mp3", Some(1024 * 1024));
    let seen = seek(&proxy, &mut dec, 1100.0);
    assert!(dec.approximate());
    assert_eq!(seen.iter().filter(|r| is_probe(r)).count(), 16, "{seen:?}");
    assert_eq!(seen.len(), 17, "{seen:?}");
}

/// An engine streaming through the proxy (paths are the file server's);
/// its far mp3 seeks land on estimates at once (no frames counted first).
fn engine_via(proxy: &Proxy) -> earmark::player::EngineHandle {
    let base = format!("http://{}", proxy.addr());
    let resolve = Arc::new(move |item: &ManifestItem| StreamRequest {
        url: format!("{base}{}", item.url.as_deref().unwrap_or("")),
        headers: vec![("Authorization".into(), format!("Bearer {TOKEN}"))],
    });
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.mp3_count_limit = Some(0);
    Engine::spawn(config).expect("an engine")
}

fn one_chapter(path: &str, duration: f64) -> Manifest {
    Manifest {
        book_id: BookId::new("bk"),
        items: vec![ManifestItem {
            chapter_id: ChapterId::new("ch"),
            title: "one".into(),
            duration: Some(duration),
            duration_source: Default::default(),
            url: Some(path.into()),
            mime_type: None,
            size_bytes: None,
            start: 0.0,
            end: None,
        }],
    }
}

/// Loads `path` at `at` and waits until it plays; the requests it cost.
fn load(proxy: &Proxy, e: &EngineHandle, path: &str, duration: f64, at: f64) -> Vec<Request> {
    proxy.clear();
    let before = e.state().playback_id;
    e.send(Command::Load {
        manifest: one_chapter(path, duration),
        start: (ChapterId::new("ch"), at),
        autoplay: true,
    });
    e.wait_for(Duration::from_secs(60), |s| {
        s.playback_id > before && s.landed && s.status == Status::Playing
    })
    .expect("playing");
    proxy.requests()
}

#[test]
fn opening_a_long_mp3_stream_costs_one_request() {
    // symphonia's probe used to read the stream's end first (ID3v1, APE):
    // three requests in series (the start, the end, the start again).
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let e = engine_via(&proxy);
    for path in ["/files/vbr.mp3", "/files/noxing.mp3", "/files/cbr.mp3"] {
        let seen = load(&proxy, &e, path, 1200.0, 0.0);
        assert_eq!(seen.len(), 1, "{path}: {seen:?}");
    }
    e.send(Command::Shutdown);
}

#[test]
fn opening_a_stream_of_every_format_costs_one_request() {
    let server = TestServer::start(&crate::support::fixtures());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt.block_on(Proxy::start(server.addr));
    let e = engine_via(&proxy);
    for f in [
        "tone.mp3",
        "tone.m4a",
        "tone.m4b",
        "tone-alac.m4a",
        "tone.flac",
        "tone.ogg",
        "tone.opus",
        "tone.wav",
    ] {
        let seen = load(&proxy, &e, &format!("/files/{f}"), 3.0, 0.0);
        assert_eq!(seen.len(), 1, "{f}: {seen:?}");
    }
    e.send(Command::Shutdown);
}

#[test]
fn a_seek_in_a_playing_engine_costs_one_request_where_it_lands() {
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(20));
    let e = engine_via(&proxy);
    load(&proxy, &e, "/files/vbr.mp3", 1200.0, 0.0);
    for at in [1100.0, 300.0] {
        proxy.clear();
        let sent = Instant::now();
        e.send(Command::Seek {
            chapter: ChapterId::new("ch"),
            position: at,
        });
        let deadline = sent + Duration::from_secs(60);
        while e.first_audio_at().is_none_or(|t| t < sent) {
            assert!(Instant::now() < deadline, "no audio after the seek");
            std::thread::sleep(Duration::from_millis(1));
        }
        let seen: Vec<Request> = proxy
            .requests()
            .into_iter()
            .filter(|r| e.first_audio_at().is_some_and(|t| r.sent <= t))
            .collect();
        // Each seek starts a new pipeline; its decoder probes the stream's
        // head kept from the first open, and the one request goes where
        // the TOC lands (it used to open at byte 0 first: two in series).
        assert_eq!(seen.len(), 1, "seek to {at} s: {seen:?}");
        assert!(
            !seen[0]
                .range
                .as_deref()
                .unwrap_or("")
                .starts_with("bytes=0-"),
            "{seen:?}"
        );
    }
    e.send(Command::Shutdown);
}

/// An engine on the null output at `clock` × real time, downloading at
/// most `read_ahead` bytes ahead, its streams on `pool` when given.
fn engine_on(
    proxy: &Proxy,
    clock: f64,
    read_ahead: u64,
    pool: Option<reqwest::Client>,
) -> EngineHandle {
    let base = format!("http://{}", proxy.addr());
    let resolve = Arc::new(move |item: &ManifestItem| StreamRequest {
        url: format!("{base}{}", item.url.as_deref().unwrap_or("")),
        headers: vec![("Authorization".into(), format!("Bearer {TOKEN}"))],
    });
    let mut config = EngineConfig::new(AudioMode::Null, resolve);
    config.null_clock_rate = clock;
    config.read_ahead = read_ahead;
    config.pool = pool.map(|p| {
        let p: Arc<dyn StreamPool> = Arc::new(p);
        Arc::new(move || Some(p.clone())) as earmark::player::HttpPool
    });
    Engine::spawn(config).expect("an engine")
}

#[test]
fn a_playing_stream_asks_for_chunk_after_chunk_on_one_kept_alive_connection() {
    // A stream far enough ahead used to hang up and reconnect for more:
    // a connection per refill. Bounded chunks end by themselves, so the
    // connection goes back to the pool and carries the next one.
    let (_server, proxy, _rt) = slow_link(Duration::from_millis(10));
    // 64 KiB ahead of a 32 kb/s stream: a refill every ~8 s of audio.
    let e = engine_on(&proxy, 20.0, 64 * 1024, None);
    load(&proxy, &e, "/files/cbr.mp3", 1200.0, 0.0);
    e.wait_for(Duration::from_secs(120), |s| s.position >= 90.0)
        .expect("90 s of audio played");
    let seen = proxy.requests();
    assert!(seen.len() >= 4, "several chunks: {seen:?}");
    assert_eq!(proxy.connections(), 1, "{seen:?}");
    assert!(
        seen.iter().all(|r| r.connection == seen[0].connection),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .all(|r| r.range.as_deref().is_some_and(|v| !v.ends_with('-'))),
        "every request bounded: {seen:?}"
    );
    e.send(Command::Shutdown);
}

#[test]
fn the_streams_go_out_on_the_pool_they_are_given_so_api_calls_and_audio_share_a_connection() {
    let (_server, proxy, rt) = slow_link(Duration::from_millis(10));
    // The API's pool follows no redirect; the player follows them by hand.
    let pool = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let url = format!("http://{}/files/vbr.mp3", proxy.addr());
    rt.block_on(async {
        let r = pool
            .get(&url)
            .bearer_auth(TOKEN)
            .header("range", "bytes=0-99");
        let r = r.send().await.unwrap();
        assert!(r.status().is_success());
        r.bytes().await.unwrap();
    });
    assert_eq!(proxy.connections(), 1);
    let e = engine_on(&proxy, 20.0, READ_AHEAD_FLOOR, Some(pool));
    let seen = load(&proxy, &e, "/files/cbr.mp3", 1200.0, 0.0);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(proxy.connections(), 0, "the API's connection: {seen:?}");
    e.send(Command::Shutdown);
}

#[test]
fn the_next_chapters_stream_is_asked_for_while_the_current_one_still_plays() {
    // Two chapters of two files: the next one's request must go out
    // before the seam, so a slow link's round trip is hidden behind the
    // audio decoded ahead (counted by what the engine plays when the
    // proxy sees the request, not by times).
    let server = TestServer::start(&crate::support::fixtures());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let proxy = rt.block_on(Proxy::start(server.addr));
    proxy.set_delay(Duration::from_millis(25));
    let e = engine_on(&proxy, 1.0, READ_AHEAD_FLOOR, None);
    let item = |id: &str, path: &str| ManifestItem {
        chapter_id: ChapterId::new(id),
        title: id.into(),
        duration: Some(3.0),
        duration_source: Default::default(),
        url: Some(path.into()),
        mime_type: None,
        size_bytes: None,
        start: 0.0,
        end: None,
    };
    e.send(Command::Load {
        manifest: Manifest {
            book_id: BookId::new("seam"),
            items: vec![
                item("one", "/files/tone.mp3"),
                item("two", "/files/tone.flac"),
            ],
        },
        start: (ChapterId::new("one"), 0.0),
        autoplay: true,
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let when_asked = loop {
        if proxy
            .requests()
            .iter()
            .any(|r| r.path.ends_with("tone.flac"))
        {
            break e.state();
        }
        assert!(
            Instant::now() < deadline,
            "the next chapter was never asked for"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(
        when_asked.chapter_id.as_ref().map(|c| c.as_str()),
        Some("one"),
        "{when_asked:?}"
    );
    assert!(when_asked.position < 2.5, "{when_asked:?}");
    e.send(Command::Shutdown);
}
