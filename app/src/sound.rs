//! Move sounds (move, capture, castle, check, promotion, take-back, game end), from the
//! chess-console sprite (CC BY 4.0, cut into `assets/sounds/*.wav`, embedded). A thread owns the
//! audio device (rodio): the UI only sends a sound's name. A machine without a sound device stays
//! silent — the failure is logged once, nothing else changes — and mute is the app's setting.

use std::io::Cursor;
use std::sync::mpsc::{channel, Sender};

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

/// Sends sounds to the audio thread (started on first use; silent where there is no device).
pub struct Speaker {
    tx: Option<Sender<Sound>>,
    pub muted: bool,
}

impl Speaker {
    pub fn new(muted: bool) -> Speaker {
        Speaker { tx: None, muted }
    }

    /// A speaker that never opens a device (tests, screenshots).
    pub fn silent() -> Speaker {
        Speaker { tx: None, muted: true }
    }

    pub fn play(&mut self, sound: Sound) {
        if self.muted {
            return;
        }
        let tx = self.tx.get_or_insert_with(|| {
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
        });
        let _ = tx.send(sound);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sound_decodes_and_moves_pick_their_sound() {
        for s in [Sound::Move, Sound::Capture, Sound::Castle, Sound::Check, Sound::Promotion, Sound::TakeBack, Sound::GameEnd, Sound::Illegal] {
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
}
