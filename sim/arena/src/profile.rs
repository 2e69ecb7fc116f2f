//! How a player loses (Philidor's lesson, seed `001_…txt` §9): Stockfish at a fixed depth scores
//! every position of a player's games once, from the side to move; each of the player's moves then
//! costs `max(0, before − after)` centipawns from the mover's side (mates and large scores clipped
//! at ±`grading::CP_CLIP`, a checkmate given worth +clip, a stalemate or dead draw 0). The losses are
//! tabled per game phase (`breakdown::phase`: opening, middlegame, endgame) for the games the
//! player won, drew and lost, and each lost game gets a shape from its single worst move: one
//! fatal blunder (> 400 cp), a clear mistake (200–400 cp) or a slow decline (every move < 200 cp).
//! The share of losses decided by one blunder is what Philidor found at 93 %.

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::{Chess, Color, EnPassantMode, Position};

use crate::breakdown::phase;
use crate::error::{Error, Result};
use flychess_fly::grading::CP_CLIP;
use flychess_fly::stats::{self, Estimate};
use flychess_fly::stockfish::{Limit, Supervised};

pub const PHASES: [&str; 3] = ["opening", "middlegame", "endgame"];
/// A move losing more than this decides a game by itself.
pub const BLUNDER_CP: f64 = 400.0;
/// A clear mistake loses more than this.
pub const MISTAKE_CP: f64 = 200.0;

/// One of the player's moves: its phase and what it cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveLoss {
    pub ply: usize,
    pub phase: usize,
    pub loss_cp: f64,
}

/// One game from the player's side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameLosses {
    /// 1 won, 0.5 drawn, 0 lost (for the player).
    pub score: f64,
    pub moves: Vec<MoveLoss>,
}

/// A position's value for the side to move, clipped, in centipawns; `None` asks the engine.
fn terminal_value(pos: &Chess) -> Option<f64> {
    if pos.is_checkmate() {
        Some(-CP_CLIP)
    } else if pos.is_stalemate() || pos.is_insufficient_material() {
        Some(0.0)
    } else {
        None
    }
}

/// The value of every position from the side to move (`positions[i]`, clipped centipawns):
/// terminal ones by the rules, the rest by the engine at `limit`.
pub fn values(engine: &mut Supervised, positions: &[Chess], limit: Limit) -> Result<Vec<f64>> {
    positions
        .iter()
        .map(|pos| match terminal_value(pos) {
            Some(v) => Ok(v),
            None => {
                let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
                let lines = engine.analyse(&fen, limit, 1, std::time::Duration::from_secs(60))?;
                let score = lines.first().map(|l| l.score).ok_or_else(|| Error::Invalid(format!("the engine gave no score for {fen}")))?;
                Ok(score.as_cp().clamp(-CP_CLIP, CP_CLIP))
            }
        })
        .collect()
}

/// The player's (`colour`'s) moves in a game whose positions are `positions` (the start, then
/// after each ply) and whose values are `values` (from the side to move).
pub fn move_losses(positions: &[Chess], values: &[f64], colour: Color) -> Vec<MoveLoss> {
    (0..positions.len().saturating_sub(1))
        .filter(|&i| positions[i].turn() == colour)
        .map(|i| {
            let before = values[i];
            let after = -values[i + 1];
            MoveLoss { ply: i, phase: phase(&positions[i]), loss_cp: (before - after).max(0.0) }
        })
        .collect()
}

/// How a lost game went: by its worst single move.
pub fn shape(moves: &[MoveLoss]) -> &'static str {
    let worst = moves.iter().map(|m| m.loss_cp).fold(0.0, f64::max);
    if worst > BLUNDER_CP {
        "one fatal blunder"
    } else if worst > MISTAKE_CP {
        "a clear mistake"
    } else {
        "a slow decline"
    }
}

/// Mean centipawn loss per move of one phase, by outcome.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseRow {
    pub phase: &'static str,
    pub moves: usize,
    pub all: Estimate,
    pub won: Estimate,
    pub drawn: Estimate,
    pub lost: Estimate,
}

#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    pub games: usize,
    pub won: usize,
    pub drawn: usize,
    pub lost: usize,
    pub moves: usize,
    /// Mean centipawn loss per move over every move.
    pub mean_loss: Estimate,
    pub phases: Vec<PhaseRow>,
    /// Lost games by shape: one fatal blunder, a clear mistake, a slow decline.
    pub loss_shapes: Vec<(&'static str, usize)>,
    /// The share of lost games whose worst move alone lost more than 400 cp (Wilson 95 %).
    pub losses_by_one_blunder: Estimate,
    /// The share of all its games (won and drawn too) with at least one move over 400 cp: what
    /// "decided by one blunder" is to be read against.
    pub games_with_a_blunder: Estimate,
    /// Blunders (> 400 cp) per 100 of the player's moves, by phase.
    pub blunders_per_100_moves: Vec<(&'static str, f64)>,
}

pub fn profile(games: &[GameLosses]) -> Profile {
    let by = |keep: &dyn Fn(&GameLosses) -> bool, p: Option<usize>| -> Vec<f64> {
        games
            .iter()
            .filter(|g| keep(g))
            .flat_map(|g| g.moves.iter())
            .filter(|m| p.is_none_or(|p| m.phase == p))
            .map(|m| m.loss_cp)
            .collect()
    };
    let won = |g: &GameLosses| g.score == 1.0;
    let drawn = |g: &GameLosses| g.score == 0.5;
    let lost = |g: &GameLosses| g.score == 0.0;
    let phases = (0..3)
        .map(|p| PhaseRow {
            phase: PHASES[p],
            moves: by(&|_| true, Some(p)).len(),
            all: stats::mean(&by(&|_| true, Some(p))),
            won: stats::mean(&by(&won, Some(p))),
            drawn: stats::mean(&by(&drawn, Some(p))),
            lost: stats::mean(&by(&lost, Some(p))),
        })
        .collect();
    let lost_games: Vec<&GameLosses> = games.iter().filter(|g| lost(g)).collect();
    let shapes: Vec<&str> = lost_games.iter().map(|g| shape(&g.moves)).collect();
    let loss_shapes = ["one fatal blunder", "a clear mistake", "a slow decline"]
        .into_iter()
        .map(|s| (s, shapes.iter().filter(|&&x| x == s).count()))
        .collect();
    let blunders_per_100_moves = (0..3)
        .map(|p| {
            let l = by(&|_| true, Some(p));
            (PHASES[p], if l.is_empty() { f64::NAN } else { 100.0 * l.iter().filter(|&&x| x > BLUNDER_CP).count() as f64 / l.len() as f64 })
        })
        .collect();
    Profile {
        games: games.len(),
        won: games.iter().filter(|g| won(g)).count(),
        drawn: games.iter().filter(|g| drawn(g)).count(),
        lost: lost_games.len(),
        moves: by(&|_| true, None).len(),
        mean_loss: stats::mean(&by(&|_| true, None)),
        phases,
        loss_shapes,
        games_with_a_blunder: stats::rate_of(&games.iter().map(|g| g.moves.iter().any(|m| m.loss_cp > BLUNDER_CP)).collect::<Vec<_>>()),
        losses_by_one_blunder: stats::rate_of(&shapes.iter().map(|&s| s == "one fatal blunder").collect::<Vec<_>>()),
        blunders_per_100_moves,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::chess::position_from_fen;

    fn game(values_and_fens: &[(&str, f64)]) -> (Vec<Chess>, Vec<f64>) {
        (values_and_fens.iter().map(|(f, _)| position_from_fen(f).unwrap()).collect(), values_and_fens.iter().map(|(_, v)| *v).collect())
    }

    #[test]
    fn a_move_costs_what_the_mover_lost_and_only_the_players_moves_count() {
        // White to move at +50; after White's move Black stands at +600 (White lost 650);
        // after Black's reply White stands at −700 (Black gained: no loss for Black counted).
        let (pos, v) = game(&[
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 50.0),
            ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", 600.0),
            ("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", -700.0),
        ]);
        let white = move_losses(&pos, &v, Color::White);
        assert_eq!(white.len(), 1);
        assert_eq!((white[0].ply, white[0].phase, white[0].loss_cp), (0, 0, 650.0));
        let black = move_losses(&pos, &v, Color::Black);
        assert_eq!(black.len(), 1);
        // Black: before +600, after −(−700) = +700: it gained, so it lost nothing.
        assert_eq!(black[0].loss_cp, 0.0);
        assert_eq!(shape(&white), "one fatal blunder");
        assert_eq!(
            terminal_value(&position_from_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3").unwrap()),
            Some(-CP_CLIP)
        );
    }

    #[test]
    fn lost_games_get_the_shape_of_their_worst_move_and_phases_are_tabled_by_outcome() {
        let m = |phase, loss_cp| MoveLoss { ply: 0, phase, loss_cp };
        let games = vec![
            GameLosses { score: 0.0, moves: vec![m(0, 10.0), m(1, 450.0), m(2, 30.0)] },
            GameLosses { score: 0.0, moves: vec![m(1, 250.0), m(1, 150.0)] },
            GameLosses { score: 0.0, moves: vec![m(1, 120.0), m(2, 190.0)] },
            GameLosses { score: 1.0, moves: vec![m(0, 0.0), m(1, 20.0)] },
            GameLosses { score: 0.5, moves: vec![m(2, 40.0)] },
        ];
        let p = profile(&games);
        assert_eq!((p.games, p.won, p.drawn, p.lost, p.moves), (5, 1, 1, 3, 10));
        assert_eq!(p.loss_shapes, vec![("one fatal blunder", 1), ("a clear mistake", 1), ("a slow decline", 1)]);
        assert!((p.losses_by_one_blunder.value - 1.0 / 3.0).abs() < 1e-12);
        assert!((p.games_with_a_blunder.value - 1.0 / 5.0).abs() < 1e-12);
        let mid = &p.phases[1];
        assert_eq!(mid.moves, 5);
        assert!((mid.lost.value - (450.0 + 250.0 + 150.0 + 120.0) / 4.0).abs() < 1e-9);
        assert!((mid.won.value - 20.0).abs() < 1e-9);
        assert!(mid.drawn.value.is_nan(), "no middlegame move in the drawn game");
        assert!((p.blunders_per_100_moves[1].1 - 20.0).abs() < 1e-9);
    }
}
