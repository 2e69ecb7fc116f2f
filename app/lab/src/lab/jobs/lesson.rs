//! The work behind the Brain tab's lesson comic (`ui::lesson`): the dopamine fly of the brain (its
//! shipped one, else the user's, else the untrained mushroom body), Stockfish's move (else the
//! fly's own), another legal move drawn by the think's id, and the comic of the lesson seen from
//! inside the mushroom body (`sim::bio::comic`), on a thread the lab starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shakmaty::{Chess, Move, Position};

pub use flychess_arena::bio::comic::LessonComic;
use flychess_arena::bio::comic::comic;
use flychess_arena::bio::file::dopamine_flies;
use flychess_arena::bio::learn::{Lesson, after, legal_move};

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};

/// A lesson worked out for one think.
pub struct ShownLesson {
    pub of: u64,
    pub fly: String,
    pub good: String,
    pub good_from: &'static str,
    pub bad: String,
    pub comic: LessonComic,
}

/// Starts working out the lesson of `position` (the think `of`; `fly_move` stands in for
/// Stockfish's move when Stockfish is not installed).
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, position: Chess, of: u64, fly_move: Move) -> Aside<ShownLesson> {
    aside(wake, "lesson comic", move || work(&ready, &data, &position, of, fly_move))
}

/// The lesson's work: the model (made once), the fly, the two moves, the comic.
fn work(ready: &ReadyBrain, data: &Path, position: &Chess, of: u64, fly_move: Move) -> anyhow::Result<ShownLesson> {
    let moves: Vec<Move> = position.legal_moves().into_iter().collect();
    if moves.len() < 2 {
        anyhow::bail!("a lesson needs two legal moves");
    }
    let fly = dopamine_flies(&ready.checksum, data).into_iter().next().map(|(_, f)| f);
    let constants = fly.as_ref().map(|f| f.meta.constants).unwrap_or_default();
    let bio = ready.dopamine_model(data, constants, &|_| {})?;
    let (name, m) = match &fly {
        Some(f) if f.check(&bio).is_ok() => (format!("dopamine fly {}", f.meta.name), f.m.clone()),
        _ => ("the untrained mushroom body".to_string(), bio.body.m0.clone()),
    };
    // Stockfish's best move when Stockfish is here, else the readout fly's own choice.
    let fen = shakmaty::fen::Fen::from_position(position, shakmaty::EnPassantMode::Legal).to_string();
    let stockfish = flychess_fly::stockfish::find_stockfish(None).ok().and_then(|p| {
        let mut e = flychess_fly::stockfish::Engine::start(&p, &flychess_fly::stockfish::EngineOptions::default()).ok()?;
        let uci = e.best_move(&fen, flychess_fly::stockfish::Limit::Depth(10), std::time::Duration::from_secs(20)).ok()??;
        legal_move(position, &uci)
    });
    let (good, good_from) = match stockfish {
        Some(m) => (m, "Stockfish's move"),
        None => (fly_move, "the fly's own move: Stockfish is not installed"),
    };
    let others: Vec<Move> = moves.iter().copied().filter(|m| *m != good).collect();
    let bad = others[flychess_fly::stats::Dice::new(of).below(others.len())];
    let us = position.turn();
    let c = comic(&bio, &m, &Lesson { good: after(position, good, us), bad: after(position, bad, us) });
    let san = |mv: Move| shakmaty::san::San::from_move(position, mv).to_string();
    Ok(ShownLesson { of, fly: name, good: san(good), good_from, bad: san(bad), comic: c })
}
