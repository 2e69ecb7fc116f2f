//! The opponent of `--watch`: a player of `sim::play` (the random or greedy mover, Stockfish at
//! its lowest UCI_Elo with an optional share of random moves, another fly of the same brain, or a
//! dopamine fly on its model of the brain)
//! on a worker thread of its own, so a slow engine never holds up a frame. The window asks for a
//! move with the position and the game's position keys and polls the answer; answers carry the
//! request's id, and when the window goes the channel closes and the worker ends.

use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use shakmaty::{Chess, Move};

use flychess_sim::bio::file::DopamineFly;
use flychess_sim::fly::Fly;
use flychess_sim::players::{Entrant, Kit, Player};
use flychess_sim::stockfish::find_stockfish;

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
    /// Starts the worker for `name` on the loaded brain; `wake` is called after each answer.
    pub fn start(
        name: &str,
        data: &Path,
        ready: Arc<crate::lab::ReadyBrain>,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Opponent, String> {
        let (entrant, fly, dopamine) = match Entrant::rung(name) {
            Some(rung) => (rung.map_err(|e| e.to_string())?, None, None),
            None => {
                let path = flychess_sim::fly::find(name, data).map_err(|e| e.to_string())?;
                if flychess_sim::bio::file::is_dopamine_fly(&path) {
                    let fly = DopamineFly::load(&path).map_err(|e| e.to_string())?;
                    if fly.meta.brain_checksum != ready.checksum {
                        return Err(format!("the dopamine fly {name} belongs to another brain ({})", fly.meta.brain));
                    }
                    (Entrant::dopamine(&fly), None, Some(fly))
                } else {
                    let fly = Fly::load(&path).map_err(|e| e.to_string())?;
                    if fly.meta.brain_checksum != ready.checksum {
                        return Err(format!("the fly {name} belongs to another brain ({})", fly.meta.brain));
                    }
                    (Entrant::fly(&fly, None), Some(fly), None)
                }
            }
        };
        let stockfish = match entrant {
            Entrant::Stockfish { .. } => Some(find_stockfish(None).map_err(|e| e.to_string())?),
            _ => None,
        };
        let data = data.to_path_buf();
        let (asks, jobs) = unbounded::<Ask>();
        let (done, answers) = unbounded();
        std::thread::Builder::new()
            .name("watch-opponent".into())
            .spawn(move || {
                // The ladder's own player: Stockfish at its lowest UCI_Elo on 20,000 nodes, the
                // simple movers' dice seeded 1, a fly as it plays on the ladder; a dopamine fly on
                // its model of the brain (made here, off the UI thread).
                let descending = ready.connectome.groups.descending.clone();
                let flies: Vec<(Fly, Vec<Entrant>)> = fly.into_iter().map(|f| (f, vec![entrant.clone()])).collect();
                let bio = match &dopamine {
                    Some(f) => match ready.dopamine_model(&data, f.meta.constants, &|_| {}) {
                        Ok(b) => Some(b),
                        Err(e) => {
                            tracing::error!("the --watch opponent's mushroom body could not be prepared: {e}");
                            return;
                        }
                    },
                    None => None,
                };
                let kit = Kit::new(ready.brain.clone(), descending).with_flies(&flies);
                let kit = match (bio, &dopamine) {
                    (Some(b), Some(f)) => match kit.with_dopamine(b, std::slice::from_ref(f)) {
                        Ok(k) => k,
                        Err(e) => {
                            tracing::error!("the --watch opponent cannot play: {e}");
                            return;
                        }
                    },
                    _ => kit,
                };
                let nodes = flychess_sim::ladder::LadderOptions::default().stockfish_nodes;
                let mut player = match Player::new(&entrant, Some(&kit), nodes, 1, &stockfish) {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::error!("the --watch opponent could not start: {e}");
                        return;
                    }
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
