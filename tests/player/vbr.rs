//! Seeks in long VBR mp3s land where the engine says they land (issue 14):
//! the audio handed to the output is checked with the pitch and waveform
//! oracles of `vbr_support`, over real HTTP.

use crate::harness::{direct, titled};
use crate::support::*;
use crate::vbr_support::*;
use earmark::player::{Command, PlayerState, Status};

const CLOCK: f64 = 20.0;

fn served() -> (TestServer, &'static Files) {
    let f = files();
    (TestServer::start(&f.dir), f)
}

fn book(file: &str, duration: Option<f64>) -> earmark::domain::Manifest {
    let path = format!("/files/{file}");
    manifest(&[Item {
        id: "ch_1",
        path: &path,
        duration,
        start: 0.0,
        end: None,
    }])
}

/// Load `file` at `at` on a fresh engine (nothing indexed yet); the landed
/// state and the first second of audio. `count_limit`: how far its seek
/// may count frames first (`Some(0)`: none, a far seek lands on an
/// estimate; `None`: the player's default).
fn fresh_seek(
    server: &TestServer,
    file: &str,
    at: f64,
    count_limit: Option<u64>,
) -> (PlayerState, Vec<f32>) {
    let e = engine_with(server, CLOCK, TOKEN, |c| c.mp3_count_limit = count_limit);
    e.load(book(file, Some(LENGTH)), "ch_1", at);
    let s = e.wait(60.0, "landed", |s| s.landed && s.status == Status::Playing);
    let audio = captured_after(&e, 0, 1.0);
    (s, audio)
}

#[test]
fn seeks_through_the_xing_toc_land_within_1_percent_of_the_duration() {
    let (server, _) = served();
    for at in [150.0, 450.0, 700.0, 900.0, 1150.0] {
        // No frames counted first: the TOC's estimate.
        let (s, audio) = fresh_seek(&server, "vbr.mp3", at, Some(0));
        let heard = heard_by_pitch(&audio, RATE);
        assert!(
            (heard - at).abs() <= LENGTH * 0.01,
            "seek to {at}: heard {heard:.1}"
        );
        assert!(
            (s.position - heard).abs() <= LENGTH * 0.01,
            "seek to {at}: reported {:.2}, heard {heard:.1}",
            s.position
        );
        // Near the start the seek counts frames (exact); further in it is
        // a TOC estimate and says so.
        if !s.approximate {
            let reference = files().path("vbr.s16");
            let exact = heard_exactly(&audio, &reference, at, 0.3)
                .unwrap_or_else(|| panic!("exact seek to {at} plays audio > 0.3 s off"));
            assert!((exact - at).abs() <= 0.05, "seek to {at}: heard {exact:.3}");
        } else {
            assert!(at > 300.0, "seek to {at} should have counted frames");
        }
    }
}

/// Play `file` from the start until `until` seconds were played, pause;
/// the engine and the capture length at the pause.
fn played_to(server: &TestServer, file: &str, until: f64) -> (TestEngine, usize) {
    let e = engine(server, 0.0, TOKEN);
    e.load(book(file, Some(LENGTH)), "ch_1", 0.0);
    e.wait(60.0, "played far enough", |s| s.position >= until);
    e.handle.send(Command::Pause);
    e.wait(10.0, "paused", |s| s.status == Status::Paused);
    let len = e.capture.lock().unwrap().samples.len();
    (e, len)
}

fn seek_and_hear(e: &TestEngine, from: usize, at: f64) -> (PlayerState, Vec<f32>) {
    e.handle.send(Command::Seek {
        chapter: earmark::domain::ChapterId::new("ch_1"),
        position: at,
    });
    e.wait(30.0, "seek target buffered", |s| {
        s.landed && (s.position - at).abs() < 1e-6
    });
    e.handle.send(Command::Play);
    let s = e.wait(30.0, "playing", |s| s.status == Status::Playing);
    (s, captured_after(e, from, 0.6))
}

#[test]
fn seeks_into_an_already_played_region_land_within_50_ms() {
    let (server, f) = served();
    for file in ["vbr.mp3", "noxing.mp3"] {
        let (e, mut from) = played_to(&server, file, 700.0);
        let reference = f.path(&file.replace(".mp3", ".s16"));
        for at in [20.3, 333.3, 611.7, 96.05] {
            let (s, audio) = seek_and_hear(&e, from, at);
            assert!(!s.approximate, "{file} {at}: played region is indexed");
            let heard = heard_exactly(&audio, &reference, at, 0.3)
                .unwrap_or_else(|| panic!("{file}: seek to {at} plays audio more than 0.3 s off"));
            assert!(
                (heard - at).abs() <= 0.05,
                "{file}: seek to {at} plays {heard:.3}"
            );
            // The free-running clock may have played to the end already.
            e.handle.send(Command::Pause);
            e.wait(10.0, "paused or ended", |s| {
                matches!(s.status, Status::Paused | Status::Ended)
            });
            from = e.capture.lock().unwrap().samples.len();
        }
    }
}

#[test]
fn without_a_toc_a_far_seek_counts_the_frames_up_to_it_and_lands_exactly() {
    let (server, f) = served();
    let reference = f.path("noxing.s16");
    // 25 s: within the walk from the start; 900 and 1150 s: over 1 MiB
    // on, counted through range reads before the landing.
    for at in [25.0, 900.0, 1150.0] {
        let (s, audio) = fresh_seek(&server, "noxing.mp3", at, None);
        assert!(!s.approximate, "{at}: {s:?}");
        // The capture starts at the landing; the state was read a moment
        // of playing later, so the audio is compared with the target.
        let heard = heard_exactly(&audio, &reference, at, 0.3)
            .unwrap_or_else(|| panic!("seek to {at} plays audio more than 0.3 s off"));
        assert!(
            (heard - at).abs() <= 0.05,
            "sought {at}, heard {heard} (reported {} once playing)",
            s.position
        );
        assert!(
            s.position >= heard - 0.05,
            "the report is not behind the audio"
        );
    }
}

#[test]
fn without_a_count_a_far_seek_without_a_toc_is_marked_approximate() {
    let (server, _) = served();
    for at in [900.0, 1150.0] {
        let (s, audio) = fresh_seek(&server, "noxing.mp3", at, Some(0));
        let heard = heard_by_pitch(&audio, RATE);
        eprintln!("noxing {at}: reported {:.2} heard {heard:.2}", s.position);
        assert!(s.approximate, "{at}: {s:?}");
    }
}

/// An estimated landing is corrected as soon as the decoder knows where it
/// is (here a complete index of the file arrives while it plays; a count
/// beside playback records the same exact points): the position jumps to
/// where the audio really is and `approximate` clears.
#[test]
fn an_estimated_landing_is_corrected_once_the_true_place_is_known() {
    use earmark::player::mpa::SeekMaps;
    let (server, f) = served();
    let maps = SeekMaps::default();
    let e = engine_with(&server, 1.0, TOKEN, |c| {
        c.seek_maps = maps.clone();
        c.mp3_count_limit = Some(0);
    });
    e.load(book("noxing.mp3", Some(LENGTH)), "ch_1", 1150.0);
    let landed = e.wait(60.0, "landed", |s| s.landed && s.status == Status::Playing);
    assert!(landed.approximate, "{landed:?}");
    let url = format!("http://{}/files/noxing.mp3", server.addr);
    let index = maps.index_local_file(&url, f.path("noxing.mp3")).unwrap();
    index.join().unwrap().unwrap();
    let fixed = e.wait(30.0, "corrected", |s| s.landed && !s.approximate);
    e.wait(30.0, "played on", |s| s.position >= fixed.position + 1.0);
    e.handle.send(Command::Pause);
    let paused = e.wait(10.0, "paused", |s| s.status == Status::Paused);
    assert!(!paused.approximate);
    // The last half second played ends where the engine says it is.
    let (rate, ch, all) = e.captured();
    let tail = mono(&all[all.len() - (rate as usize / 2) * ch..], ch);
    let from = paused.position - 0.5;
    let heard = heard_exactly(&tail, &f.path("noxing.s16"), from, 0.3)
        .unwrap_or_else(|| panic!("the audio before {from:.2} is more than 0.3 s off"));
    eprintln!(
        "landed at {:.2} (estimate), corrected to {:.2}",
        landed.position, fixed.position
    );
    assert!(
        (heard - from).abs() <= 0.1,
        "reported {from:.3}, heard {heard:.3}"
    );
}

#[test]
fn cbr_mp3_far_seeks_stay_exact() {
    let (server, f) = served();
    let reference = f.path("cbr.s16");
    for at in [400.0, 1111.1] {
        let (s, audio) = fresh_seek(&server, "cbr.mp3", at, None);
        assert!(!s.approximate, "{s:?}");
        let heard = heard_exactly(&audio, &reference, at, 0.3)
            .unwrap_or_else(|| panic!("cbr: seek to {at} plays audio more than 0.3 s off"));
        assert!(
            (heard - at).abs() <= 0.05,
            "cbr: seek to {at} plays {heard:.3}"
        );
    }
}

/// ffprobe's duration after reading every packet (not its bitrate guess).
fn ffprobe_counted_secs(path: &std::path::Path) -> f64 {
    let out = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "a", "-count_packets"])
        .args(["-show_entries", "stream=nb_read_packets,sample_rate"])
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("ffprobe runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().split(',');
    let rate: f64 = parts.next().unwrap().parse().unwrap();
    let packets: f64 = parts.next().unwrap().parse().unwrap();
    // MPEG-2 layer III: 576 samples a frame.
    packets * 576.0 / rate
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_counts_the_frames_of_a_xing_less_vbr_mp3() {
    use crate::harness::TestServer as RefServer;
    let f = files();
    let lib = tempfile::tempdir().unwrap();
    let book = lib.path().join("Long");
    std::fs::create_dir_all(&book).unwrap();
    std::fs::copy(f.path("noxing.mp3"), book.join("long.mp3")).unwrap();
    let server = RefServer::start(lib.path()).await.unwrap();
    let client = direct(&server).await;
    let books = client.books(&Default::default()).await.unwrap();
    let id = &titled(&books, "Long").id;
    let m = client.manifest(id).await.unwrap();
    let served = m.items[0].duration.expect("a duration");
    let truth = ffprobe_counted_secs(&f.path("noxing.mp3"));
    assert!(
        (served - truth).abs() <= truth * 0.001,
        "server says {served:.2} s, ffprobe counts {truth:.2} s"
    );
}

/// A restart forgets the seek maps: restoring a place reported while
/// playing must replay the audio that was playing there. For an exact
/// landing anywhere; for an approximate one (a TOC estimate, or a measured
/// profile without a TOC, here with no frames counted first) within the
/// 10 s grid cell it landed in, since every seek into a cell lands on that
/// cell's one estimate.
#[test]
fn a_restored_place_plays_the_audio_that_was_playing_there() {
    let (server, _) = served();
    let cases = [
        ("cbr.mp3", 700.0, false),
        ("vbr.mp3", 10.0, false),
        ("noxing.mp3", 20.0, false),
        ("vbr.mp3", 1150.5, true),
        ("noxing.mp3", 900.5, true),
    ];
    for (file, at, approximate) in cases {
        // The first run: restored at `at`, then played on for a second,
        // at 2× so the place is read well inside the landing's cell.
        let first = engine_with(&server, 2.0, TOKEN, |c| c.mp3_count_limit = Some(0));
        first.load(book(file, Some(LENGTH)), "ch_1", at);
        first.wait(60.0, "landed", |s| s.landed && s.status == Status::Playing);
        let synced = first.wait(60.0, "played on", |s| s.position >= at + 1.0);
        assert_eq!(synced.approximate, approximate, "{file} {at}");
        if approximate {
            assert!(
                synced.position < (at / 10.0).floor() * 10.0 + 10.0,
                "{file} {at}: the place was read after the landing's cell"
            );
        }
        // Play past it, so the audio after the synced place is captured.
        first.wait(60.0, "played past it", |s| {
            s.position >= synced.position + 1.0
        });
        first.handle.send(Command::Pause);
        first.wait(10.0, "paused", |s| s.status == Status::Paused);
        let (rate, ch, all) = first.captured();
        let heard_then = mono(&all, ch);
        drop(first);
        // The second run (a new engine: nothing learned) restores it.
        let (s, again) = fresh_seek(&server, file, synced.position, Some(0));
        assert_eq!(s.approximate, synced.approximate, "{file} {at}");
        // Where, in the first run's audio, the restored audio is.
        let expect = ((synced.position - at) * rate as f64) as usize;
        let lo = expect.saturating_sub(rate as usize / 2);
        let hi = (expect + rate as usize / 2).min(heard_then.len());
        let found = locate(&again, &heard_then[lo..hi]).unwrap_or_else(|| {
            panic!("{file} {at}: the restored audio is not near the synced place")
        });
        let off = (lo + found) as f64 / rate as f64 - (synced.position - at);
        eprintln!("{file} {at}: restored audio is {off:+.4} s off");
        assert!(
            off.abs() <= 0.05,
            "{file} {at}: restored audio is {off:+.3} s off"
        );
    }
}

/// A local file indexed in the background (frame headers only) seeks
/// exactly everywhere, even without a TOC, and its index counts the frames
/// ffprobe counts.
#[test]
fn a_locally_indexed_file_seeks_exactly_everywhere() {
    use earmark::player::mpa::{SeekMaps, index::index_file};
    let (server, f) = served();
    let path = f.path("noxing.mp3");
    let (_, frames) = index_file(&path).unwrap().end().expect("an end");
    let indexed = frames * 576.0 / RATE as f64;
    let truth = ffprobe_counted_secs(&path);
    assert!(
        (indexed - truth).abs() < 1e-6,
        "index {indexed} s, ffprobe {truth} s"
    );
    let maps = SeekMaps::default();
    let url = format!("http://{}/files/noxing.mp3", server.addr);
    let job = maps.index_local_file(&url, path).unwrap();
    job.join().unwrap().unwrap();
    let reference = f.path("noxing.s16");
    for at in [700.0, 1150.0] {
        let e = engine_with(&server, CLOCK, TOKEN, |c| c.seek_maps = maps.clone());
        e.load(book("noxing.mp3", Some(LENGTH)), "ch_1", at);
        let s = e.wait(60.0, "landed", |s| s.landed && s.status == Status::Playing);
        assert!(!s.approximate, "{at}: {s:?}");
        let audio = captured_after(&e, 0, 1.0);
        let heard = heard_exactly(&audio, &reference, at, 0.3)
            .unwrap_or_else(|| panic!("indexed: seek to {at} plays audio more than 0.3 s off"));
        assert!(
            (heard - at).abs() <= 0.05,
            "indexed: seek to {at} plays {heard:.3}"
        );
    }
}
