//! How a fly is doing, broken down (seed "Which piece it moves"): on HOLD, which piece
//! Stockfish's best move moves against which piece the fly's favourite moves (a confusion table,
//! rows adding up to the positions of that piece), top-1 for each piece Stockfish moves, and top-1
//! and the good-move rate by game phase. Every rate carries its 95 % (Wilson) interval. Phases:
//! the endgame once the pieces other than pawns and kings are worth 26 or less (both sides, N and
//! B 3, R 5, Q 9; 62 at the start), else the opening up to move 12, else the middlegame.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position, Role};

use crate::error::Result;
use flychess_brain::chess::position_from_fen;
use flychess_brain::chess::role_index as piece_index;
use flychess_fly::data::Row;
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{Target, favourites};
use flychess_fly::stats::{Estimate, rate};

pub const PIECES: [&str; 6] = ["pawn", "knight", "bishop", "rook", "queen", "king"];
pub const PHASES: [&str; 3] = ["opening", "middlegame", "endgame"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieceRow {
    pub piece: String,
    pub positions: usize,
    /// The fly's favourite is Stockfish's best move.
    pub top1: Estimate,
    /// The fly's favourite moves the same piece.
    pub same_piece: Estimate,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRow {
    pub phase: String,
    pub positions: usize,
    pub top1: Estimate,
    pub good: Estimate,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    pub positions: usize,
    pub top1: Estimate,
    pub same_piece: Estimate,
    /// `confusion[stockfish's piece][fly's piece]`: positions.
    pub confusion: [[usize; 6]; 6],
    pub by_piece: Vec<PieceRow>,
    pub by_phase: Vec<PhaseRow>,
}

/// One position's outcome: the piece Stockfish moves, the phase, and what the fly got right.
struct Hit {
    piece: usize,
    phase: usize,
    top1: bool,
    same_piece: bool,
    good: bool,
}

/// 0 opening, 1 middlegame, 2 endgame.
pub fn phase(pos: &Chess) -> usize {
    let material: u32 = pos
        .board()
        .clone()
        .into_iter()
        .map(|(_, p)| match p.role {
            Role::Knight | Role::Bishop => 3,
            Role::Rook => 5,
            Role::Queen => 9,
            _ => 0,
        })
        .sum();
    if material <= 26 {
        2
    } else if pos.fullmoves().get() <= 12 {
        0
    } else {
        1
    }
}

/// The breakdown of `readout` on `rows` (features `x`, one row of `readout.inputs` per position).
pub fn breakdown(readout: &Readout, x: &[f32], rows: &[Row], targets: &[Target]) -> Result<Breakdown> {
    let picks = favourites(readout, x, targets);
    let mut confusion = [[0usize; 6]; 6];
    let mut hits: Vec<Hit> = Vec::with_capacity(rows.len());
    for ((row, t), &pick) in rows.iter().zip(targets).zip(&picks) {
        let pos = position_from_fen(&row.fen)?;
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        let best_piece = piece_index(moves[t.best].role());
        let fly_piece = piece_index(moves[pick].role());
        confusion[best_piece][fly_piece] += 1;
        hits.push(Hit {
            piece: best_piece,
            phase: phase(&pos),
            top1: pick == t.best,
            same_piece: best_piece == fly_piece,
            good: t.good.contains(&pick),
        });
    }
    let count = |within: &dyn Fn(&Hit) -> bool, hit: &dyn Fn(&Hit) -> bool| -> Estimate {
        let within: Vec<&Hit> = hits.iter().filter(|h| within(h)).collect();
        rate(within.iter().filter(|h| hit(h)).count(), within.len())
    };
    let by_piece = (0..6)
        .map(|k| PieceRow {
            piece: PIECES[k].into(),
            positions: hits.iter().filter(|h| h.piece == k).count(),
            top1: count(&|h| h.piece == k, &|h| h.top1),
            same_piece: count(&|h| h.piece == k, &|h| h.same_piece),
        })
        .collect();
    let by_phase = (0..3)
        .map(|k| PhaseRow {
            phase: PHASES[k].into(),
            positions: hits.iter().filter(|h| h.phase == k).count(),
            top1: count(&|h| h.phase == k, &|h| h.top1),
            good: count(&|h| h.phase == k, &|h| h.good),
        })
        .collect();
    Ok(Breakdown {
        positions: rows.len(),
        top1: count(&|_| true, &|h| h.top1),
        same_piece: count(&|_| true, &|h| h.same_piece),
        confusion,
        by_piece,
        by_phase,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_confusion_adds_up_and_agrees_with_the_rates() {
        let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
        let rows = &dataset.hold()[..300];
        let targets: Vec<Target> = rows.iter().map(Target::of).collect::<flychess_fly::Result<_>>().unwrap();
        // A readout that likes moves to h8 and from a1 (in the mover's frame): a fixed, board-blind
        // favourite per position.
        let mut readout = Readout::new_zero(1);
        readout.bias[63] = 1.0;
        readout.bias[64 + 63] = 2.0;
        let x = vec![0.0f32; rows.len()];
        let b = breakdown(&readout, &x, rows, &targets).unwrap();
        let picks = favourites(&readout, &x, &targets);
        assert_eq!(b.confusion.iter().flatten().sum::<usize>(), rows.len());
        let diagonal: usize = (0..6).map(|k| b.confusion[k][k]).sum();
        assert!((b.same_piece.value - diagonal as f64 / rows.len() as f64).abs() < 1e-12);
        let hits = picks.iter().zip(&targets).filter(|(p, t)| **p == t.best).count();
        assert!((b.top1.value - hits as f64 / rows.len() as f64).abs() < 1e-12);
        for (k, r) in b.by_piece.iter().enumerate() {
            assert_eq!(r.positions, b.confusion[k].iter().sum::<usize>(), "{}", r.piece);
        }
        assert_eq!(b.by_phase.iter().map(|r| r.positions).sum::<usize>(), rows.len());
        // The favourite is the h8-going move when there is one: pieces other than pawns get picked.
        assert!(b.confusion.iter().map(|row| row[0]).sum::<usize>() < rows.len());
    }

    #[test]
    fn phases_follow_material_and_move_number() {
        assert_eq!(phase(&Chess::default()), 0);
        let late_middlegame = position_from_fen("r1bq1rk1/pp3ppp/2n2n2/3p4/3P4/2N2N2/PP3PPP/R1BQ1RK1 w - - 0 14").unwrap();
        assert_eq!(phase(&late_middlegame), 1);
        let rook_ending = position_from_fen("8/5pk1/6p1/8/8/6P1/r4PK1/1R6 w - - 0 40").unwrap();
        assert_eq!(phase(&rook_ending), 2);
    }
}
