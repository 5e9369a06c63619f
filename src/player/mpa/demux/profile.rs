//! The bitrate profile of a stream without a TOC: where its far seeks
//! land when the frames up to them cannot be counted.

use super::{HINT_TOLERANCE, MpaDemuxer, PROBE_BYTES, PROBE_FRAMES, PROBES};
use crate::player::mpa::frame::{FrameHeader, find_frame};
use crate::player::mpa::lock;
use std::io::{self, Read, Seek};

impl<R: Read + Seek> MpaDemuxer<R> {
    /// The mean frame size at `at`: up to [`PROBE_FRAMES`] headers walked
    /// from the first frame found in `window` (the bytes at `at`).
    fn probe_mean(&self, window: &[u8]) -> Option<f64> {
        let (i, _) = find_frame(window, Some(&self.reference))?;
        let (mut pos, mut n, mut bytes) = (i, 0u64, 0u64);
        while n < PROBE_FRAMES {
            let Some(h) = window
                .get(pos..pos + 4)
                .and_then(|b| FrameHeader::parse(b.try_into().ok()?))
                .filter(|h| self.reference.same_stream(h))
            else {
                break;
            };
            bytes += h.size as u64;
            pos += h.size;
            n += 1;
        }
        (n > 0).then(|| bytes as f64 / n as f64)
    }

    /// Build a table of estimated anchors for a stream without one: the
    /// mean frame size at [`PROBES`] points (a short read of frame headers
    /// at each), integrated between them and scaled to the frame count.
    /// Deterministic, so every run estimates the same places.
    pub(super) fn profile(&mut self) -> io::Result<()> {
        let (first, end) = {
            let m = lock(&self.map);
            (m.first_byte(), m.end())
        };
        let Some((end_byte, frames)) = end else {
            return Ok(());
        };
        let span = end_byte.saturating_sub(first);
        let at: Vec<u64> = (0..PROBES)
            .map(|i| first + span * (2 * i + 1) / (2 * PROBES))
            .collect();
        let wanted: Vec<(u64, usize)> = at.iter().map(|a| (*a, PROBE_BYTES)).collect();
        let mut windows = match &self.ranges {
            Some(r) => r.read_ranges(&wanted),
            None => Vec::new(),
        };
        windows.resize_with(at.len(), || Err(io::ErrorKind::Unsupported.into()));
        let mut probes: Vec<(u64, f64)> = Vec::new();
        for (a, window) in at.into_iter().zip(windows) {
            // A range the bounded read missed is read through the stream:
            // the same bytes, so the same estimate every time.
            let mean = match window {
                Ok(w) => self.probe_mean(&w),
                Err(_) => {
                    let w = self.src.get(a, PROBE_BYTES)?.to_vec();
                    self.probe_mean(&w)
                }
            };
            if let Some(mean) = mean {
                probes.push((a, mean));
            }
        }
        if probes.len() < 2 {
            lock(&self.map).set_table(vec![(first, 0.0), (end_byte, frames)]);
            return Ok(());
        }
        // Segment j spans the bytes nearest probe j.
        let mut edges = vec![first];
        edges.extend(probes.windows(2).map(|w| (w[0].0 + w[1].0) / 2));
        edges.push(end_byte);
        let est: Vec<f64> = probes
            .iter()
            .enumerate()
            .map(|(j, p)| (edges[j + 1] - edges[j]) as f64 / p.1)
            .collect();
        let measured: f64 = est.iter().sum();
        let frames = if self.hinted_end && (frames / measured - 1.0).abs() > HINT_TOLERANCE {
            // A length from elsewhere that the stream's own bitrate belies
            // (a unit mistaken, or a bitrate guess): the stream wins.
            tracing::debug!("mp3: {frames:.0} frames hinted, {measured:.0} measured");
            lock(&self.map).set_end(end_byte, measured);
            measured
        } else {
            frames
        };
        let scale = frames / measured;
        let mut cum = 0.0;
        let mut anchors = vec![(first, 0.0)];
        for (j, e) in est.iter().enumerate() {
            cum += e * scale;
            anchors.push((edges[j + 1], cum));
        }
        lock(&self.map).set_table(anchors);
        Ok(())
    }
}
