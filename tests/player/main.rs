//! Player integration tests: real audio files over real HTTP on 127.0.0.1,
//! the real engine on the null output (untimed where pacing is not tested).

// The FIFO capture of ALSA's `file` plugin, shared with the benches.
#[allow(dead_code)]
#[path = "../../examples/bench/capture.rs"]
mod capture;
mod demo;
mod formats;
#[path = "../harness/mod.rs"]
mod harness;
mod local;
mod network;
#[allow(dead_code)]
mod oracle;
mod positions;
mod queue;
mod reference;
mod round_trips;
mod seam;
mod sound;
mod speed;
mod support;
mod truth;
mod vbr;
mod vbr_support;
