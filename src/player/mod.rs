//! The audio engine: HTTP source, decode, pitch-preserving stretch, output
//! (device or null) and the engine thread that owns playback.
