//! Move sounds (move, capture, castle, check, promotion, take-back, game end), from the
//! chess-console sprite (CC BY 4.0, cut into `assets/sounds/*.wav`, embedded). A thread owns the
//! audio device: the UI only sends a sound's name. rodio decodes the sounds everywhere; it also
//! plays them on Windows and macOS, while on Linux the system's ALSA library is loaded at run time
//! (`alsa_output`), so building needs no ALSA headers nor pkg-config. A machine without a sound
//! library or device stays silent — the reason is logged once and shown under About's sound
//! setting, nothing else changes — and mute is the app's setting. Without the `native` feature
//! (a page) the speaker is silent.

#[cfg(feature = "native")]
use std::io::Cursor;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sound {
    Move,
    Capture,
    Castle,
    Check,
    Promotion,
    TakeBack,
    GameEnd,
    Illegal,
}

impl Sound {
    #[cfg(feature = "native")]
    fn wav(self) -> &'static [u8] {
        match self {
            Sound::Move => include_bytes!("../../../assets/sounds/move.wav"),
            Sound::Capture => include_bytes!("../../../assets/sounds/capture.wav"),
            Sound::Castle => include_bytes!("../../../assets/sounds/castle.wav"),
            Sound::Check => include_bytes!("../../../assets/sounds/check.wav"),
            Sound::Promotion => include_bytes!("../../../assets/sounds/promotion.wav"),
            Sound::TakeBack => include_bytes!("../../../assets/sounds/take_back.wav"),
            Sound::GameEnd => include_bytes!("../../../assets/sounds/game_end.wav"),
            Sound::Illegal => include_bytes!("../../../assets/sounds/wrong_move.wav"),
        }
    }

    /// The sound of the move that led from `before` to `after` (SAN of the move).
    pub fn of_move(san: &str) -> Sound {
        if san.contains('#') || san.contains('+') {
            Sound::Check
        } else if san.starts_with("O-O") {
            Sound::Castle
        } else if san.contains('=') {
            Sound::Promotion
        } else if san.contains('x') {
            Sound::Capture
        } else {
            Sound::Move
        }
    }
}

/// Sends sounds to the audio thread (started on first use; silent where there is no device). A
/// thread that died (its channel closed) is noticed on the next sound and started again, at most
/// `MAX_RESTARTS` times; after that the app stays silent and says so (`status`).
pub struct Speaker {
    /// The audio thread's channel (a page, without `native`, has no audio thread).
    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    tx: Option<Sender<Sound>>,
    pub muted: bool,
    /// How many times the sound thread was found dead and started again.
    pub restarts: usize,
    /// Why sound stopped, when it did (shown under the sound setting).
    pub status: Option<String>,
    /// What the sound thread found when it opened the output (no library, no device), if not
    /// sound: written by that thread.
    output: Arc<Mutex<Option<String>>>,
}

/// Restarts of a dying sound thread before the app gives up on sound.
pub const MAX_RESTARTS: usize = 3;

impl Speaker {
    pub fn new(muted: bool) -> Speaker {
        Speaker { tx: None, muted, restarts: 0, status: None, output: Arc::default() }
    }

    /// A speaker that never opens a device (tests, screenshots).
    pub fn silent() -> Speaker {
        Speaker { tx: None, muted: true, restarts: 0, status: None, output: Arc::default() }
    }

    /// What About says under the sound setting: why there is no sound, when there is none.
    pub fn note(&self) -> Option<String> {
        let output = self.output.lock().ok().and_then(|o| o.clone());
        match (&self.status, output) {
            (Some(a), Some(b)) => Some(format!("{a} {b}")),
            (Some(a), None) => Some(a.clone()),
            (None, b) => b,
        }
    }

    pub fn play(&mut self, sound: Sound) {
        if self.muted || self.restarts > MAX_RESTARTS {
            return;
        }
        #[cfg(feature = "native")]
        self.play_on_thread(sound);
        // A page is silent (its sounds would go through WebAudio, a later step).
        #[cfg(not(feature = "native"))]
        let _ = sound;
    }

    /// Sends `sound` to the audio thread, starting it (again) when needed.
    #[cfg(feature = "native")]
    fn play_on_thread(&mut self, sound: Sound) {
        let output = Arc::clone(&self.output);
        let tx = self.tx.get_or_insert_with(|| start_thread(output));
        if tx.send(sound).is_ok() {
            return;
        }
        // The thread is gone (a panic in the audio stack): start another and play this sound there.
        self.tx = None;
        self.restarts += 1;
        if self.restarts > MAX_RESTARTS {
            tracing::warn!("the sound thread stopped {} times; the app stays silent", self.restarts);
            self.status = Some(format!("Sound stopped: its thread died {} times.", self.restarts));
            return;
        }
        tracing::warn!("the sound thread stopped; starting another");
        self.status = Some(format!("The sound thread stopped and was started again ({} of {MAX_RESTARTS}).", self.restarts));
        let output = Arc::clone(&self.output);
        let tx = self.tx.get_or_insert_with(|| start_thread(output));
        let _ = tx.send(sound);
    }

    /// Puts in a worker whose thread has already ended, as one that died would (the recovery test).
    #[doc(hidden)]
    pub fn with_dead_worker(mut self) -> Speaker {
        let (tx, rx) = channel::<Sound>();
        drop(rx);
        self.tx = Some(tx);
        self
    }
}

/// The audio thread: opens the default output (or drains the channel silently without one,
/// saying why in `output`) and plays each sound sent.
#[cfg(feature = "native")]
fn start_thread(output: Arc<Mutex<Option<String>>>) -> Sender<Sound> {
    let (tx, rx) = channel::<Sound>();
    let _ = std::thread::Builder::new().name("sound".into()).spawn(move || {
        let silent = |why: String| {
            tracing::info!("{why}; the app stays silent");
            if let Ok(mut o) = output.lock() {
                *o = Some(format!("{why}: the app plays no sounds."));
            }
        };
        #[cfg(target_os = "linux")]
        {
            let mut out = match alsa_output::Output::open(alsa_output::DEFAULT_DEVICE) {
                Ok(o) => o,
                Err(e) => {
                    silent(e);
                    while rx.recv().is_ok() {}
                    return;
                }
            };
            while let Ok(mut sound) = rx.recv() {
                // Sounds that queued up while one played: only the latest is worth hearing.
                while let Ok(later) = rx.try_recv() {
                    sound = later;
                }
                if let Err(e) = decode(sound).and_then(|(rate, channels, samples)| out.play(rate, channels, &samples)) {
                    tracing::warn!("sound {sound:?}: {e}");
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let mut sink = match rodio::DeviceSinkBuilder::open_default_sink() {
                Ok(s) => s,
                Err(e) => {
                    silent(format!("no sound device ({e})"));
                    while rx.recv().is_ok() {}
                    return;
                }
            };
            sink.log_on_drop(false);
            while let Ok(sound) = rx.recv() {
                match rodio::Decoder::new_wav(Cursor::new(sound.wav())) {
                    Ok(source) => sink.mixer().add(source),
                    Err(e) => tracing::warn!("sound {sound:?}: {e}"),
                }
            }
        }
    });
    tx
}

/// A sound as 16-bit samples (interleaved), with its sample rate and channel count.
#[cfg(feature = "native")]
pub fn decode(sound: Sound) -> Result<(u32, u16, Vec<i16>), String> {
    use rodio::Source;
    let d = rodio::Decoder::new_wav(Cursor::new(sound.wav())).map_err(|e| e.to_string())?;
    let (rate, channels) = (d.sample_rate().get(), d.channels().get());
    let samples = d.map(|x| (x.clamp(-1.0, 1.0) * i16::MAX as f32) as i16).collect();
    Ok((rate, channels, samples))
}

/// The system's ALSA library (`libasound.so.2`), loaded when the first sound is played instead of
/// linked at build time: a machine without it, or without a device, is told so and stays silent.
/// Only the simple PCM calls are used: open, `snd_pcm_set_params` (ALSA converts the rate and
/// format for the device), prepare, write, recover from an underrun, drain, close.
#[cfg(all(target_os = "linux", feature = "native"))]
pub mod alsa_output {
    use std::ffi::{CStr, CString, c_char, c_int, c_long, c_uint, c_ulong, c_void};

    /// The device sounds go to: ALSA's default (PipeWire, PulseAudio or a card, as the system says).
    pub const DEFAULT_DEVICE: &str = "default";
    /// The library's file name (its ABI: the same on every distribution since 2002).
    pub const LIBRARY: &str = "libasound.so.2";

    const STREAM_PLAYBACK: c_int = 0;
    const FORMAT_S16_LE: c_int = 2;
    const ACCESS_RW_INTERLEAVED: c_int = 3;
    /// The latency asked for, in microseconds.
    const LATENCY_US: c_uint = 100_000;

    type Pcm = *mut c_void;

    /// The functions used, looked up once.
    struct Alsa {
        open: unsafe extern "C" fn(*mut Pcm, *const c_char, c_int, c_int) -> c_int,
        set_params: unsafe extern "C" fn(Pcm, c_int, c_int, c_uint, c_uint, c_int, c_uint) -> c_int,
        writei: unsafe extern "C" fn(Pcm, *const c_void, c_ulong) -> c_long,
        recover: unsafe extern "C" fn(Pcm, c_int, c_int) -> c_int,
        prepare: unsafe extern "C" fn(Pcm) -> c_int,
        drain: unsafe extern "C" fn(Pcm) -> c_int,
        close: unsafe extern "C" fn(Pcm) -> c_int,
        strerror: unsafe extern "C" fn(c_int) -> *const c_char,
        // Kept last: dropped after every pointer into it is gone.
        _library: libloading::Library,
    }

    impl Alsa {
        fn load() -> Result<Alsa, String> {
            // SAFETY: loading ALSA runs its constructors, which only set up the library's state.
            let library = unsafe { libloading::Library::new(LIBRARY) }.map_err(|e| format!("no sound library ({LIBRARY}: {e})"))?;
            macro_rules! function {
                ($name:literal) => {
                    // SAFETY: the type written at each field is the function's C signature in
                    // alsa/pcm.h and alsa/error.h.
                    *unsafe { library.get(concat!($name, "\0").as_bytes()) }.map_err(|e| format!("{LIBRARY} lacks {}: {e}", $name))?
                };
            }
            Ok(Alsa {
                open: function!("snd_pcm_open"),
                set_params: function!("snd_pcm_set_params"),
                writei: function!("snd_pcm_writei"),
                recover: function!("snd_pcm_recover"),
                prepare: function!("snd_pcm_prepare"),
                drain: function!("snd_pcm_drain"),
                close: function!("snd_pcm_close"),
                strerror: function!("snd_strerror"),
                _library: library,
            })
        }

        fn error(&self, code: c_int) -> String {
            // SAFETY: snd_strerror returns a static, NUL-terminated string for any code.
            let text = unsafe { (self.strerror)(code) };
            if text.is_null() { format!("error {code}") } else { unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned() }
        }
    }

    /// An open playback device.
    pub struct Output {
        alsa: Alsa,
        pcm: Pcm,
        device: String,
        /// The rate and channels the device is set to (None until the first sound).
        format: Option<(u32, u16)>,
    }

    // SAFETY: the handle is used by one thread at a time (the sound thread owns the Output).
    unsafe impl Send for Output {}

    impl Output {
        /// Opens `device` (e.g. "default"; "null" discards what it is given, with no hardware).
        pub fn open(device: &str) -> Result<Output, String> {
            let alsa = Alsa::load()?;
            let name = CString::new(device).map_err(|_| format!("a device name with a NUL: {device:?}"))?;
            let mut pcm: Pcm = std::ptr::null_mut();
            // SAFETY: `pcm` is a valid out-pointer, `name` a NUL-terminated string.
            let code = unsafe { (alsa.open)(&mut pcm, name.as_ptr(), STREAM_PLAYBACK, 0) };
            if code < 0 || pcm.is_null() {
                return Err(format!("no sound device (ALSA's {device:?}: {})", alsa.error(code)));
            }
            Ok(Output { alsa, pcm, device: device.to_string(), format: None })
        }

        /// Plays interleaved 16-bit samples to the end (blocks while they play).
        pub fn play(&mut self, rate: u32, channels: u16, samples: &[i16]) -> Result<(), String> {
            if channels == 0 || rate == 0 {
                return Err(format!("a sound of {channels} channels at {rate} Hz"));
            }
            if self.format != Some((rate, channels)) {
                // SAFETY: an open handle; the parameters are plain values.
                let code = unsafe {
                    (self.alsa.set_params)(self.pcm, FORMAT_S16_LE, ACCESS_RW_INTERLEAVED, channels as c_uint, rate, 1, LATENCY_US)
                };
                if code < 0 {
                    return Err(format!("ALSA's {:?} refused {rate} Hz × {channels}: {}", self.device, self.alsa.error(code)));
                }
                self.format = Some((rate, channels));
            }
            // A drained device waits in its set-up state: ready it for this sound.
            // SAFETY: an open handle.
            let code = unsafe { (self.alsa.prepare)(self.pcm) };
            if code < 0 {
                return Err(format!("ALSA's {:?}: {}", self.device, self.alsa.error(code)));
            }
            let mut rest = samples;
            while rest.len() >= channels as usize {
                let frames = rest.len() / channels as usize;
                // SAFETY: `rest` holds at least `frames × channels` samples.
                let written = unsafe { (self.alsa.writei)(self.pcm, rest.as_ptr().cast(), frames as c_ulong) };
                if written < 0 {
                    // An underrun or a suspend: recover once, else give up on this sound.
                    let code = unsafe { (self.alsa.recover)(self.pcm, written as c_int, 1) };
                    if code < 0 {
                        return Err(format!("ALSA's {:?}: {}", self.device, self.alsa.error(code)));
                    }
                    continue;
                }
                rest = &rest[(written as usize * channels as usize).min(rest.len())..];
            }
            // SAFETY: an open handle.
            unsafe { (self.alsa.drain)(self.pcm) };
            Ok(())
        }
    }

    impl Drop for Output {
        fn drop(&mut self) {
            // SAFETY: the handle was opened by `open` and is closed once.
            unsafe { (self.alsa.close)(self.pcm) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sound_decodes_and_moves_pick_their_sound() {
        for s in
            [Sound::Move, Sound::Capture, Sound::Castle, Sound::Check, Sound::Promotion, Sound::TakeBack, Sound::GameEnd, Sound::Illegal]
        {
            let d = rodio::Decoder::new_wav(Cursor::new(s.wav())).unwrap();
            use rodio::Source;
            assert!(d.total_duration().unwrap().as_secs_f32() > 0.05, "{s:?}");
            let (rate, channels, samples) = decode(s).unwrap();
            assert!(samples.len() as f32 / (rate as f32 * channels as f32) > 0.05, "{s:?}");
            assert!(samples.iter().any(|&x| x.unsigned_abs() > 1000), "{s:?} decodes to near silence");
        }
        assert_eq!(Sound::of_move("Nxe5"), Sound::Capture);
        assert_eq!(Sound::of_move("Qxf7#"), Sound::Check);
        assert_eq!(Sound::of_move("O-O-O"), Sound::Castle);
        assert_eq!(Sound::of_move("e8=Q"), Sound::Promotion);
        assert_eq!(Sound::of_move("e4"), Sound::Move);
    }

    /// ALSA's "null" device takes sound with no hardware: every sound goes through the library
    /// loaded at run time, as on a desktop. CI installs libasound2 and must find it; elsewhere a
    /// machine without it must be told so in words.
    #[cfg(target_os = "linux")]
    #[test]
    fn sounds_play_through_alsa_loaded_at_run_time() {
        match alsa_output::Output::open("null") {
            Ok(mut out) => {
                for s in [Sound::Move, Sound::Capture, Sound::GameEnd] {
                    let (rate, channels, samples) = decode(s).unwrap();
                    out.play(rate, channels, &samples).unwrap();
                }
                assert!(out.play(0, 1, &[0; 4]).is_err(), "a sound of 0 Hz is refused");
            }
            Err(e) => {
                assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs libasound2: {e}");
                assert!(e.contains("libasound.so.2"), "{e}");
            }
        }
        let e = alsa_output::Output::open("no-such-device-anywhere").err().expect("an unknown device is refused");
        assert!(e.contains("no sound library") || (e.contains("no sound device") && e.contains("no-such-device-anywhere")), "{e}");
    }

    #[test]
    fn a_sound_thread_that_died_is_started_again_and_then_given_up_on() {
        let mut s = Speaker::new(false).with_dead_worker();
        s.play(Sound::Move);
        assert_eq!(s.restarts, 1);
        assert!(s.status.as_deref().is_some_and(|t| t.contains("started again")), "{:?}", s.status);
        // The new thread takes sounds (it drains them silently without a device).
        s.play(Sound::Capture);
        assert_eq!(s.restarts, 1, "the new thread is alive");
        for _ in 0..MAX_RESTARTS {
            s = Speaker { restarts: s.restarts, status: s.status, ..Speaker::new(false).with_dead_worker() };
            s.play(Sound::Move);
        }
        assert!(s.restarts > MAX_RESTARTS && s.status.as_deref().is_some_and(|t| t.contains("Sound stopped")), "{:?}", s.status);
        let before = s.restarts;
        s.play(Sound::Move);
        assert_eq!(s.restarts, before, "given up: no more threads");
    }
}
