//! An Opus decoder for symphonia 0.6 (which demuxes Ogg Opus and Matroska
//! Opus but ships no decoder), over the system's libopus through the thin
//! `opusic-sys` bindings. Built with the `opus` cargo feature (on by
//! default; Debian's `libopus-dev` at build time, `libopus0` at run time).
//!
//! The pre-skip is dropped by `decode::StreamDecoder` (as the stream's
//! delay, since symphonia's Ogg reader leaves it in the timeline); the end
//! padding and any other trims come with each packet's `trim_start`/
//! `trim_end`, applied here like every symphonia decoder does. Mono and
//! stereo only (channel mapping family 0): a surround stream is refused
//! with an error that says so.

use std::ffi::c_int;
use symphonia::core::audio::{
    AsGenericAudioBufferRef, AudioBuffer, AudioMut, AudioSpec, GenericAudioBufferRef, layouts,
};
use symphonia::core::codecs::CodecInfo;
use symphonia::core::codecs::audio::well_known::CODEC_ID_OPUS;
use symphonia::core::codecs::audio::{
    AudioCodecParameters, AudioDecoder, AudioDecoderOptions, FinalizeResult,
};
use symphonia::core::codecs::registry::{RegisterableAudioDecoder, SupportedAudioCodec};
use symphonia::core::errors::{Error, Result, unsupported_error};
use symphonia::core::packet::PacketRef;

/// libopus decodes at 48 kHz (what symphonia's Ogg reader declares).
const RATE: u32 = 48_000;
/// The longest Opus packet: 120 ms.
const MAX_FRAMES: usize = RATE as usize * 120 / 1000;

/// A libopus decoder state; freed on drop.
struct LibOpus(*mut opusic_sys::OpusDecoder);

// SAFETY: the state is only touched through `&mut self` (one thread at a
// time); libopus keeps no thread-local or global state for a decoder.
unsafe impl Send for LibOpus {}
unsafe impl Sync for LibOpus {}

impl Drop for LibOpus {
    fn drop(&mut self) {
        // SAFETY: created by opus_decoder_create, destroyed once.
        unsafe { opusic_sys::opus_decoder_destroy(self.0) }
    }
}

pub struct OpusDecoder {
    params: AudioCodecParameters,
    state: LibOpus,
    channels: usize,
    pcm: Vec<f32>,
    buf: AudioBuffer<f32>,
}

fn spec(channels: usize) -> AudioSpec {
    let layout = if channels == 1 {
        layouts::CHANNEL_LAYOUT_MONO
    } else {
        layouts::CHANNEL_LAYOUT_STEREO
    };
    AudioSpec::new(RATE, layout)
}

impl OpusDecoder {
    fn try_new(params: &AudioCodecParameters) -> Result<Self> {
        let channels = params.channels.as_ref().map(|c| c.count()).unwrap_or(0);
        if !(1..=2).contains(&channels) {
            return unsupported_error("opus: only mono and stereo streams are supported");
        }
        let mut err: c_int = 0;
        // SAFETY: valid rate and channel count; `err` outlives the call.
        let ptr =
            unsafe { opusic_sys::opus_decoder_create(RATE as i32, channels as c_int, &mut err) };
        if err != opusic_sys::OPUS_OK || ptr.is_null() {
            return Err(Error::DecodeError(
                "opus: libopus could not create a decoder",
            ));
        }
        Ok(Self {
            params: params.clone(),
            state: LibOpus(ptr),
            channels,
            pcm: vec![0.0; MAX_FRAMES * channels],
            buf: AudioBuffer::new(spec(channels), MAX_FRAMES),
        })
    }
}

impl AudioDecoder for OpusDecoder {
    fn reset(&mut self) {
        // SAFETY: a live decoder state; OPUS_RESET_STATE takes no argument.
        unsafe { opusic_sys::opus_decoder_ctl(self.state.0, opusic_sys::OPUS_RESET_STATE) };
    }

    fn codec_info(&self) -> &CodecInfo {
        &Self::supported_codecs()[0].info
    }

    fn codec_params(&self) -> &AudioCodecParameters {
        &self.params
    }

    fn decode_ref(&mut self, packet: &PacketRef<'_>) -> Result<GenericAudioBufferRef<'_>> {
        let data = packet.data;
        let len = c_int::try_from(data.len())
            .map_err(|_| Error::DecodeError("opus: packet too large"))?;
        // SAFETY: `data` is `len` bytes; `pcm` holds MAX_FRAMES frames of
        // `channels` samples, the most libopus writes.
        let frames = unsafe {
            opusic_sys::opus_decode_float(
                self.state.0,
                if data.is_empty() {
                    std::ptr::null()
                } else {
                    data.as_ptr()
                },
                len,
                self.pcm.as_mut_ptr(),
                MAX_FRAMES as c_int,
                0,
            )
        };
        if frames < 0 {
            return Err(Error::DecodeError(
                "opus: libopus could not decode a packet",
            ));
        }
        let frames = frames as usize;
        self.buf.clear();
        self.buf.render_uninit(Some(frames));
        self.buf
            .copy_from_slice_interleaved(&&self.pcm[..frames * self.channels]);
        self.buf.trim(
            packet.trim_start.get() as usize,
            packet.trim_end.get() as usize,
        );
        Ok(self.buf.as_generic_audio_buffer_ref())
    }

    fn finalize(&mut self) -> FinalizeResult {
        FinalizeResult::default()
    }

    fn last_decoded(&self) -> GenericAudioBufferRef<'_> {
        self.buf.as_generic_audio_buffer_ref()
    }
}

impl RegisterableAudioDecoder for OpusDecoder {
    fn try_registry_new(
        params: &AudioCodecParameters,
        _opts: &AudioDecoderOptions,
    ) -> Result<Box<dyn AudioDecoder>> {
        Ok(Box::new(Self::try_new(params)?))
    }

    fn supported_codecs() -> &'static [SupportedAudioCodec] {
        &[SupportedAudioCodec {
            id: CODEC_ID_OPUS,
            info: CodecInfo {
                short_name: "opus",
                long_name: "Opus (libopus)",
                profiles: &[],
            },
        }]
    }
}
