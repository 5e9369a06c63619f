//! The small generated library of the sync and ctl tests: silent WAV
//! chapters, written at test time.

use std::path::Path;

/// Writes a mono 8-bit WAV of `secs` seconds of silence at 2 kHz.
pub fn wav(path: &Path, secs: u32) {
    let rate = 2000u32;
    let n = rate * secs;
    let mut b = Vec::with_capacity(44 + n as usize);
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + n).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&rate.to_le_bytes());
    b.extend_from_slice(&rate.to_le_bytes()); // bytes per second
    b.extend_from_slice(&1u16.to_le_bytes()); // block align
    b.extend_from_slice(&8u16.to_le_bytes()); // bits
    b.extend_from_slice(b"data");
    b.extend_from_slice(&n.to_le_bytes());
    b.resize(44 + n as usize, 128);
    std::fs::write(path, b).unwrap();
}

/// Three books: "Long" (1300 s + 200 s), "Alpha" and "Beta" (2 × 120 s).
pub fn library() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("earmark-sync-lib-")
        .tempdir()
        .unwrap();
    for (name, lens) in [
        ("Long", [1300, 200]),
        ("Alpha", [120, 120]),
        ("Beta", [120, 120]),
    ] {
        let b = dir.path().join(name);
        std::fs::create_dir_all(&b).unwrap();
        for (i, l) in lens.iter().enumerate() {
            wav(&b.join(format!("{:02}.wav", i + 1)), *l);
        }
        std::fs::write(
            b.join("book.toml"),
            format!("title = \"{name}\"\nauthor = \"Test\"\n"),
        )
        .unwrap();
    }
    dir
}
