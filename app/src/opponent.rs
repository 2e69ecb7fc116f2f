//! The opponent of `--watch`: a player of `sim::play` (the random or greedy mover, Stockfish at
//! its lowest UCI_Elo with an optional share of random moves, or another fly of the same brain)
//! on a worker thread of its own, so a slow engine never holds up a frame. The window asks for a
//! move with the position and the game's position keys and polls the answer; answers carry the
//! request's id, and when the window goes the channel closes and the worker ends.

use std::path::Path;
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};
use shakmaty::{Chess, Move};

use flychess_sim::brain::Brain;
use flychess_sim::engine::find_stockfish;
use flychess_sim::fly::Fly;
use flychess_sim::ladder::{self, Entrant, FlyKit, LadderOptions};

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
    /// Starts the worker for `name`; `wake` is called after each answer.
    pub fn start(name: &str, data: &Path, brain: Arc<Brain>, descending: Arc<Vec<u32>>, brain_checksum: &str, wake: impl Fn() + Send + 'static) -> Result<Opponent, String> {
        let (entrant, fly) = match Entrant::rung(name) {
            Some(rung) => (rung.map_err(|e| e.to_string())?, None),
            None => {
                if flychess_sim::fly::find(name, data).is_ok_and(|p| flychess_sim::bio::file::is_dopamine_fly(&p)) {
                    return Err(format!("{name} is a dopamine fly: it plays from New game; --watch opponents are the ladder's rungs and readout flies"));
                }
                let fly = flychess_sim::fly::find(name, data).and_then(|p| Fly::load(&p)).map_err(|e| e.to_string())?;
                if fly.meta.brain_checksum != brain_checksum {
                    return Err(format!("the fly {name} belongs to another brain ({})", fly.meta.brain));
                }
                (Entrant::fly(&fly, None), Some(fly))
            }
        };
        let stockfish = match entrant {
            Entrant::Stockfish { .. } => Some(find_stockfish(None).map_err(|e| e.to_string())?),
            _ => None,
        };
        let (asks, jobs) = unbounded::<Ask>();
        let (done, answers) = unbounded();
        std::thread::Builder::new()
            .name("watch-opponent".into())
            .spawn(move || {
                // The ladder's own player: Stockfish at its lowest UCI_Elo on 20,000 nodes, the
                // simple movers' dice seeded 1, a fly as it plays on the ladder.
                let flies: Vec<(Fly, Vec<Entrant>)> = fly.into_iter().map(|f| (f, vec![entrant.clone()])).collect();
                let kit = FlyKit::new(&brain, &descending, &flies);
                let mut player = match ladder::player(&entrant, Some(&kit), &LadderOptions::default(), 1, &stockfish) {
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
