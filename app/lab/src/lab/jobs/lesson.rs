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
    /// Where the good move came from, in words: Stockfish, or the fly's own move and why
    /// Stockfish's is not there (not installed, would not start, failed, answered no legal move).
    pub good_from: String,
    pub bad: String,
    pub comic: LessonComic,
}

/// Starts working out the lesson of `position` (the think `of`; `fly_move` stands in for
/// Stockfish's move when Stockfish is not installed).
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, position: Chess, of: u64, fly_move: Move) -> Aside<ShownLesson> {
    aside(wake, "lesson comic", move || work(&ready, &data, &position, of, fly_move))
}

/// Stockfish's best move at depth 10 from the Stockfish found (None: none is installed), or why
/// there is none, in words.
fn stockfish_move(found: Option<PathBuf>, position: &Chess) -> Result<Move, String> {
    use flychess_fly::stockfish::{Engine, EngineOptions, Limit};
    let path = found.ok_or_else(|| "Stockfish is not installed".to_string())?;
    let fen = shakmaty::fen::Fen::from_position(position, shakmaty::EnPassantMode::Legal).to_string();
    let mut engine =
        Engine::start(&path, &EngineOptions::default()).map_err(|e| format!("Stockfish ({}) would not start: {e}", path.display()))?;
    let uci = engine
        .best_move(&fen, Limit::Depth(10), std::time::Duration::from_secs(20))
        .map_err(|e| format!("Stockfish ({}) failed: {e}", path.display()))?
        .ok_or_else(|| format!("Stockfish ({}) gave no move", path.display()))?;
    legal_move(position, &uci).ok_or_else(|| format!("Stockfish ({}) answered {uci}, not a legal move here", path.display()))
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
    // Stockfish's best move when Stockfish is here, else the readout fly's own choice, saying why.
    let (good, good_from) = match stockfish_move(flychess_fly::stockfish::find_stockfish(None).ok(), position) {
        Ok(m) => (m, "Stockfish's move".to_string()),
        Err(why) => (fly_move, format!("the fly's own move: {why}")),
    };
    let others: Vec<Move> = moves.iter().copied().filter(|m| *m != good).collect();
    let bad = others[flychess_fly::stats::Dice::new(of).below(others.len())];
    let us = position.turn();
    let c = comic(&bio, &m, &Lesson { good: after(position, good, us), bad: after(position, bad, us) });
    let san = |mv: Move| shakmaty::san::San::from_move(position, mv).to_string();
    Ok(ShownLesson { of, fly: name, good: san(good), good_from, bad: san(bad), comic: c })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lesson says why the fly's own move stands in for Stockfish's (issue 71: a Stockfish
    /// that is installed but fails was said to be "not installed").
    #[test]
    fn a_stockfish_that_fails_is_said_so_not_called_missing() {
        let start = Chess::default();
        assert_eq!(stockfish_move(None, &start).unwrap_err(), "Stockfish is not installed");
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("stockfish");
        std::fs::write(&broken, "#!/bin/sh\nexit 3\n").unwrap();
        #[cfg(unix)]
        std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let why = stockfish_move(Some(broken.clone()), &start).unwrap_err();
        assert!(!why.contains("not installed") && why.contains(&broken.display().to_string()), "{why}");
    }
}
