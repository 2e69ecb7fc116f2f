//! The opponent of `--watch`: any player the other front doors name (`players::named`: the
//! random or greedy mover, Stockfish at its lowest UCI_Elo with an optional share of random
//! moves, another fly of the same brain with or without imagination or an aid, a dopamine fly on
//! its model of the brain, Charles) on a worker thread of its own, so a slow engine never holds up a frame. The window asks for a
//! move with the position and the game's position keys and polls the answer; answers carry the
//! request's id, and when the window goes the channel closes and the worker ends.

use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use shakmaty::{Chess, Move};

use flychess_arena::players::{Entrant, Kit, Lookup, Player, kit_parts, named};
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
    /// name is resolved as every front door resolves it (`flychess_arena::players::named`): a name
    /// that is no player is refused here, at once; what takes time (a fly's judge weight chosen
    /// on VAL, a dopamine fly's model of the brain) is made on the worker, and if it fails every
    /// move asked is answered with why.
    pub fn start(
        name: &str,
        data: &Path,
        ready: Arc<crate::lab::ReadyBrain>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Opponent, String> {
        let unloaded = Lookup {
            data,
            networks: &flychess_charles::player::Runs,
            checksum: Some(&ready.checksum),
            brain: None,
            progress: &|_, _, _| {},
        };
        if let Err(e) = named(name, &unloaded) {
            let e = e.to_string();
            if !e.contains("needs its brain") {
                return Err(e);
            }
        }
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
                let (entrant, kit, stockfish) = match seat(&name_owned, &data, &ready) {
                    Ok(s) => s,
                    Err(e) => return answer_all(e),
                };
                let nodes = flychess_arena::ladder::LadderOptions::default().stockfish_nodes;
                let mut player = match Player::new(&entrant, Some(&kit), nodes, 1, &stockfish) {
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

/// The opponent `name` seated on the loaded brain: its entrant, its kit (a dopamine fly's model
/// made here) and Stockfish's path when it needs one.
fn seat(name: &str, data: &Path, ready: &crate::lab::ReadyBrain) -> Result<(Entrant, Kit, Option<std::path::PathBuf>), String> {
    let descending = ready.connectome.groups.descending.clone();
    let at = Lookup {
        data,
        networks: &flychess_charles::player::Runs,
        checksum: Some(&ready.checksum),
        brain: Some((&ready.brain, &descending)),
        progress: &|_, _, _| {},
    };
    let (entrant, found) = named(name, &at).map_err(|e| e.to_string())?;
    let (flies, dopamine, charles) = kit_parts([(found, &entrant)]);
    let mut kit = Kit::new(ready.brain.clone(), descending.clone()).with_flies(&flies).with_charles(&charles);
    if let Some(first) = dopamine.first() {
        let bio = ready
            .dopamine_model(data, first.meta.constants, &|_| {})
            .map_err(|e| format!("its mushroom body could not be prepared: {e}"))?;
        kit = kit.with_dopamine(bio, &dopamine).map_err(|e| e.to_string())?;
    }
    let stockfish = if entrant.needs_stockfish() { Some(find_stockfish(None).map_err(|e| e.to_string())?) } else { None };
    Ok((entrant, kit, stockfish))
}
