//! The reference server's mp3 durations are the audio's, to the frame:
//! MPEG-1, 2 and 2.5 layer III, CBR and VBR, with and without a Xing frame
//! count, behind an ID3v2 tag or not, cut short, and joined to another. ffprobe counting
//! every packet is the reference (its own duration is a bitrate guess).

use crate::common::Api;
use crate::harness::TestServer;
use std::path::Path;
use std::process::Command;

fn ffmpeg(args: &[&str]) {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Seconds in the frames ffprobe reads: packets × samples a frame / rate.
fn counted_secs(path: &Path) -> f64 {
    let out = Command::new("ffprobe")
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
    // MPEG-1 (32–48 kHz): 1152 samples a frame; MPEG-2 and 2.5: 576.
    let per_frame = if rate >= 32000.0 { 1152.0 } else { 576.0 };
    packets * per_frame / rate
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mp3s_duration_is_its_frames_counted() {
    let lib = tempfile::tempdir().unwrap();
    let src = lib.path().join("src.wav");
    // Quiet, then noise: a VBR encode's bitrate differs 3× between halves,
    // so a duration from the first frame's bitrate is far off.
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "aevalsrc='0.4*sin(2*PI*(200+t)*t)+if(gte(t,15),0.3*(random(0)-0.5),0)':s=44100:d=30",
        src.to_str().unwrap(),
    ]);
    // (book, sample rate, encoder flags, whether a LAME tag trims it)
    let cases: [(&str, &str, &[&str], bool); 7] = [
        (
            "mpeg1-vbr-id3",
            "44100",
            &["-q:a", "4", "-write_xing", "0"],
            false,
        ),
        (
            "mpeg1-vbr-bare",
            "44100",
            &["-q:a", "4", "-write_xing", "0", "-id3v2_version", "0"],
            false,
        ),
        (
            "mpeg2-vbr-id3",
            "22050",
            &["-q:a", "7", "-write_xing", "0"],
            false,
        ),
        (
            "mpeg2-vbr-bare",
            "22050",
            &["-q:a", "7", "-write_xing", "0", "-id3v2_version", "0"],
            false,
        ),
        (
            "mpeg25-vbr-id3",
            "8000",
            &["-q:a", "7", "-write_xing", "0"],
            false,
        ),
        ("mpeg2-xing-whole", "22050", &["-q:a", "7"], true),
        ("mpeg2-cbr-info", "16000", &["-b:a", "24k"], true),
    ];
    let file = |book: &str| lib.path().join("lib").join(book).join("a.mp3");
    for (book, rate, flags, _) in &cases {
        std::fs::create_dir_all(file(book).parent().unwrap()).unwrap();
        let mut args = vec!["-i", src.to_str().unwrap(), "-ar", rate, "-ac", "1"];
        args.extend_from_slice(flags);
        let out = file(book);
        args.push(out.to_str().unwrap());
        ffmpeg(&args);
    }
    // A Xing file cut short counts fewer frames than its tag says.
    let whole = std::fs::read(file("mpeg2-xing-whole")).unwrap();
    let cut = file("mpeg2-xing-cut");
    std::fs::create_dir_all(cut.parent().unwrap()).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    // Two files joined after the first one's tag was written: it counts
    // half of them.
    let joined = file("mpeg2-xing-joined");
    std::fs::create_dir_all(joined.parent().unwrap()).unwrap();
    let bare = std::fs::read(file("mpeg2-vbr-bare")).unwrap();
    std::fs::write(&joined, [whole.as_slice(), bare.as_slice()].concat()).unwrap();

    let server = TestServer::start(lib.path().join("lib")).await.unwrap();
    let api = Api::login(&server).await;
    let all = cases
        .iter()
        .map(|(b, _, _, tagged)| (*b, *tagged))
        .chain([("mpeg2-xing-cut", true), ("mpeg2-xing-joined", true)]);
    for (book, tagged) in all {
        let id = api.book_titled(book).await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let m = api.manifest(&id).await;
        let served = m["items"][0]["durationSec"].as_f64().unwrap();
        let truth = counted_secs(&file(book));
        // A LAME tag's encoder delay and padding are not audio (about
        // 2,100 samples); without a tag every frame counts, exactly.
        let slack = if tagged { 0.11 } else { 0.001 };
        assert!(
            (served - truth).abs() <= slack && served <= truth + 0.001,
            "{book}: the server says {served:.4} s, the frames hold {truth:.4} s"
        );
    }
}
