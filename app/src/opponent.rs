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
use flychess_sim::engine::{find_stockfish, EngineOptions, Limit, Supervised};
use flychess_sim::fly::Fly;
use flychess_sim::play::{Dice, Player};

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

/// Who `name` is: a rung (random, greedy, stockfish, stockfish:P) or a fly found in `data`.
enum Who {
    Random,
    Greedy,
    Stockfish(f64),
    Fly(Box<Fly>),
}

fn who(name: &str, data: &Path, brain_checksum: &str) -> Result<Who, String> {
    let mut parts = name.split(':');
    Ok(match parts.next() {
        Some("random") => Who::Random,
        Some("greedy") => Who::Greedy,
        Some("stockfish") => Who::Stockfish(parts.next().map(str::parse).transpose().map_err(|_| "stockfish:P takes a share of random moves, e.g. stockfish:0.25".to_string())?.unwrap_or(0.0)),
        _ => {
            let fly = flychess_sim::fly::find(name, data).and_then(|p| Fly::load(&p)).map_err(|e| e.to_string())?;
            if fly.meta.brain_checksum != brain_checksum {
                return Err(format!("the fly {name} belongs to another brain ({})", fly.meta.brain));
            }
            Who::Fly(Box::new(fly))
        }
    })
}

impl Opponent {
    /// Starts the worker for `name`; `wake` is called after each answer.
    pub fn start(name: &str, data: &Path, brain: Arc<Brain>, descending: Arc<Vec<u32>>, brain_checksum: &str, wake: impl Fn() + Send + 'static) -> Result<Opponent, String> {
        let who = who(name, data, brain_checksum)?;
        let stockfish = match who {
            Who::Stockfish(_) => Some(find_stockfish(None).map_err(|e| e.to_string())?),
            _ => None,
        };
        let (asks, jobs) = unbounded::<Ask>();
        let (done, answers) = unbounded();
        std::thread::Builder::new()
            .name("watch-opponent".into())
            .spawn(move || {
                let fly = match &who {
                    Who::Fly(f) => Some(f.readout.clone()),
                    _ => None,
                };
                let mut player = match who {
                    Who::Random => Player::Random(Dice::new(1)),
                    Who::Greedy => Player::Greedy(Dice::new(1)),
                    Who::Stockfish(share) => Player::Stockfish {
                        engine: Supervised::new(stockfish.expect("found above"), EngineOptions { threads: 1, hash_mb: 16, elo: Some(0) }),
                        limit: Limit::Nodes(20_000),
                        random_share: share,
                        dice: Dice::new(1),
                    },
                    Who::Fly(_) => Player::Fly { brain: &brain, readout: fly.as_ref().expect("a fly"), descending: &descending, imagination: None },
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
