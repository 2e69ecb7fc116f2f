//! The opponent of `--watch`: any player the other front doors seat (`players::seat`: the
//! random or greedy mover, Stockfish at its lowest UCI_Elo with an optional share of random
//! moves, another fly of the same brain with or without imagination or an aid, a dopamine fly on
//! its model of the brain, Charles) on a worker thread of its own, so a slow engine never holds up a frame. The window asks for a
//! move with the position and the game's position keys and polls the answer; answers carry the
//! request's id, and when the window goes the channel closes and the worker ends.

use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use shakmaty::{Chess, Move};

use flychess_arena::players::{Lookup, Seated};
use flychess_fly::stockfish::find_stockfish;

struct Ask {
    id: u64,
    position: Chess,
    earlier: Vec<u64>,
}

/// The window's handle on the opponent's worker.
pub struct Opponent {
    asks: Sender<Ask>,
    pub answers: Receiver<(u64, Result<Move, String>)>,
    /// What plays, in words.
    pub name: String,
}

impl Opponent {
    /// Starts the worker for `name` on the loaded brain; `wake` is called after each answer. The
    /// name is seated as every front door seats it (`flychess_arena::players::seat`): a name that
    /// is no player is refused here, at once (`players::check`); what takes time (a fly's judge
    /// weight chosen on VAL, a dopamine fly's model of the brain) is made on the worker, and if it
    /// fails every move asked is answered with why.
    pub fn start(
        name: &str,
        data: &Path,
        ready: Arc<crate::lab::ReadyBrain>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Opponent, String> {
        let unloaded = Lookup::in_folder(data, &flychess_charles::player::Runs).of_brain(&ready.checksum, None);
        flychess_arena::players::check(name, &unloaded).map_err(|e| e.to_string())?;
        let (data, name_owned) = (data.to_path_buf(), name.to_string());
        let (asks, jobs) = unbounded::<Ask>();
        let (done, answers) = unbounded();
        std::thread::Builder::new()
            .name("watch-opponent".into())
            .spawn(move || {
                // The ladder's own player: Stockfish at its lowest UCI_Elo on 20,000 nodes, the
                // simple movers' dice seeded 1, a fly as it plays on the ladder; a dopamine fly on
                // its model of the brain (made here, off the UI thread).
                let answer_all = |e: String| {
                    tracing::error!("the --watch opponent cannot play: {e}");
                    while let Ok(ask) = jobs.recv() {
                        if done.send((ask.id, Err(e.clone()))).is_err() {
                            break;
                        }
                        wake();
                    }
                };
                let (seated, stockfish) = match seat(&name_owned, &data, &ready) {
                    Ok(s) => s,
                    Err(e) => return answer_all(e),
                };
                let nodes = flychess_arena::ladder::LadderOptions::default().stockfish_nodes;
                let mut player = match seated.player(nodes, 1, &stockfish) {
                    Ok(p) => p,
                    Err(e) => return answer_all(e.to_string()),
                };
                while let Ok(ask) = jobs.recv() {
                    let answer = player.choose(&ask.position, &ask.earlier).map_err(|e| e.to_string());
                    if done.send((ask.id, answer)).is_err() {
                        break;
                    }
                    wake();
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(Opponent { asks, answers, name: name.to_string() })
    }

    pub fn ask(&self, id: u64, position: Chess, earlier: Vec<u64>) {
        let _ = self.asks.send(Ask { id, position, earlier });
    }
}

/// The opponent `name` seated on the loaded brain (a dopamine fly's mushroom body made here) and
/// Stockfish's path when it needs one.
fn seat(name: &str, data: &Path, ready: &crate::lab::ReadyBrain) -> Result<(Seated, Option<std::path::PathBuf>), String> {
    let mushroom_body = |constants| {
        ready
            .dopamine_model(data, constants, &|_| {})
            .map_err(|e| flychess_arena::Error::Invalid(format!("its mushroom body could not be prepared: {e}")))
    };
    let at = Lookup::in_folder(data, &flychess_charles::player::Runs).of_brain(&ready.checksum, Some(ready.venue(&mushroom_body)));
    let seated = flychess_arena::players::seat(name, &at, None).map_err(|e| e.to_string())?;
    let stockfish = if seated.entrant.needs_stockfish() { Some(find_stockfish(None).map_err(|e| e.to_string())?) } else { None };
    Ok((seated, stockfish))
}
