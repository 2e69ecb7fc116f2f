//! Move sounds (move, capture, castle, check, promotion, take-back, game end), from the
//! chess-console sprite (CC BY 4.0, cut into `assets/sounds/*.wav`, embedded). A thread owns the
//! audio device (rodio): the UI only sends a sound's name. A machine without a sound device stays
//! silent — the failure is logged once, nothing else changes — and mute is the app's setting.

use std::io::Cursor;
use std::sync::mpsc::{Sender, channel};

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
    fn wav(self) -> &'static [u8] {
        match self {
            Sound::Move => include_bytes!("../../assets/sounds/move.wav"),
            Sound::Capture => include_bytes!("../../assets/sounds/capture.wav"),
            Sound::Castle => include_bytes!("../../assets/sounds/castle.wav"),
            Sound::Check => include_bytes!("../../assets/sounds/check.wav"),
            Sound::Promotion => include_bytes!("../../assets/sounds/promotion.wav"),
            Sound::TakeBack => include_bytes!("../../assets/sounds/take_back.wav"),
            Sound::GameEnd => include_bytes!("../../assets/sounds/game_end.wav"),
            Sound::Illegal => include_bytes!("../../assets/sounds/wrong_move.wav"),
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
    tx: Option<Sender<Sound>>,
    pub muted: bool,
    /// How many times the sound thread was found dead and started again.
    pub restarts: usize,
    /// Why sound stopped, when it did (shown under the sound setting).
    pub status: Option<String>,
}

/// Restarts of a dying sound thread before the app gives up on sound.
pub const MAX_RESTARTS: usize = 3;

impl Speaker {
    pub fn new(muted: bool) -> Speaker {
        Speaker { tx: None, muted, restarts: 0, status: None }
    }

    /// A speaker that never opens a device (tests, screenshots).
    pub fn silent() -> Speaker {
        Speaker { tx: None, muted: true, restarts: 0, status: None }
    }

    pub fn play(&mut self, sound: Sound) {
        if self.muted || self.restarts > MAX_RESTARTS {
            return;
        }
        let tx = self.tx.get_or_insert_with(start_thread);
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
        let tx = self.tx.get_or_insert_with(start_thread);
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

/// The audio thread: opens the default device (or drains the channel silently without one) and
/// plays each sound sent.
fn start_thread() -> Sender<Sound> {
    let (tx, rx) = channel::<Sound>();
    let _ = std::thread::Builder::new().name("sound".into()).spawn(move || {
        let mut sink = match rodio::DeviceSinkBuilder::open_default_sink() {
            Ok(s) => s,
            Err(e) => {
                tracing::info!("no sound device ({e}); the app stays silent");
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
    });
    tx
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
        }
        assert_eq!(Sound::of_move("Nxe5"), Sound::Capture);
        assert_eq!(Sound::of_move("Qxf7#"), Sound::Check);
        assert_eq!(Sound::of_move("O-O-O"), Sound::Castle);
        assert_eq!(Sound::of_move("e8=Q"), Sound::Promotion);
        assert_eq!(Sound::of_move("e4"), Sound::Move);
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
