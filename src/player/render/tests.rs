use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn counted() -> (Renderer, Arc<AtomicUsize>) {
    let r = Renderer::new();
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    r.set_engine_waker(move || {
        w.fetch_add(1, Ordering::SeqCst);
    });
    r.flush(1);
    r.set_playing(true);
    (r, wakes)
}

fn block(pos: f64) -> Block {
    Block {
        chapter: ChapterId::new("ch"),
        rate: 8_000,
        channels: 1,
        pos,
        samples: vec![0.25; 80],
        skipped_before: 0.0,
        approximate: false,
    }
}

/// Render until the queue runs dry; whether the last call underran.
fn drain(r: &Renderer) -> bool {
    let mut out = Chunk::default();
    loop {
        r.render(8_000, &mut out);
        if !out.audible {
            return r.status().underrun;
        }
    }
}

#[test]
fn a_playing_engine_is_not_woken_by_blocks_or_a_short_underrun_but_a_buffering_one_is() {
    let (r, wakes) = counted();
    // Playing, before the first audio: that is an edge, taken.
    r.arm_engine_wake();
    r.arm_engine_wake_playing();
    assert!(r.push_audio(1, block(0.0)));
    assert!(drain(&r), "the output ran dry");
    assert_eq!(wakes.load(Ordering::SeqCst), 1, "first audio wakes");
    // Re-armed playing: a block queued and the underrun's edges don't wake.
    r.arm_engine_wake();
    r.arm_engine_wake_playing();
    for i in 1..20 {
        assert!(r.push_audio(1, block(i as f64 * 0.01)));
        assert!(drain(&r));
    }
    assert_eq!(wakes.load(Ordering::SeqCst), 1, "underruns while playing");
    // Buffering while playing: audio again wakes, a queued block alone not.
    r.arm_engine_wake();
    r.arm_engine_wake_buffering();
    assert!(r.push_audio(1, block(0.2)));
    assert_eq!(wakes.load(Ordering::SeqCst), 1, "a block queued");
    let mut out = Chunk::default();
    r.render(8_000, &mut out);
    assert!(out.audible);
    assert_eq!(
        wakes.load(Ordering::SeqCst),
        2,
        "the output got audio again"
    );
}

#[test]
fn a_paused_engine_is_woken_by_a_block_queued() {
    let (r, wakes) = counted();
    r.set_playing(false);
    r.arm_engine_wake();
    assert!(r.push_audio(1, block(0.0)));
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
    // One wake-up per arming.
    assert!(r.push_audio(1, block(0.01)));
    assert_eq!(wakes.load(Ordering::SeqCst), 1);
}

/// Blocks on an estimate, then a correction: the next block starts 5 s
/// earlier and is exact. At 1× and through the stretcher alike, the
/// position follows the blocks and says which of them is playing.
#[test]
fn a_corrected_estimate_moves_the_position_and_clears_the_flag_where_it_plays() {
    for speed in [1.0, 1.5] {
        let (r, _) = counted();
        r.set_speed(speed);
        let mut pos = 100.0;
        for _ in 0..40 {
            let mut b = block(pos);
            b.approximate = true;
            assert!(r.push_audio(1, b));
            pos += 0.01;
        }
        for _ in 0..40 {
            assert!(r.push_audio(1, block(pos - 5.0)));
            pos += 0.01;
        }
        let mut out = Chunk::default();
        let mut seen = Vec::new();
        loop {
            r.render(40, &mut out);
            if !out.audible {
                break;
            }
            let s = r.status();
            seen.push((s.position.unwrap().1, s.approximate));
        }
        let estimated = seen.iter().take_while(|s| s.1).count();
        assert!(estimated > 0 && estimated < seen.len(), "{speed}: {seen:?}");
        let (before, after) = (seen[estimated - 1], seen[estimated]);
        assert!(before.0 > 100.0 && after.0 < 96.0, "{speed}: {seen:?}");
        assert!(seen[estimated..].iter().all(|s| !s.1), "{speed}: {seen:?}");
        let end = seen.last().unwrap().0;
        // Within what the stretcher holds back.
        assert!((end - (pos - 5.0)).abs() < 0.05, "{speed}: ends at {end}");
    }
}
