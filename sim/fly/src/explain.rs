//! What the fly looks at (seed "What it looks at"): a lesion experiment on the board instead of
//! the brain. Each piece is taken off the board in turn and the fly looks at every such board in
//! one engine batch, beside the intact board; for each piece we report how much the probability
//! of the fly's chosen move drops (or rises) without it, how its value changes, and how much the
//! piece moves the descending neurons (the mean |change| of the readout's input). The legal moves
//! stay those of the real position: only what the eye sees changes, so a king can be taken away
//! too and every piece on the board gets a figure.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Move, Position, Role, Square};

use crate::readout::{Readout, policy, think_features};
use flychess_brain::brain::Brain;
use flychess_brain::chess::planes;
use flychess_brain::chess::role_index as plane_of;

/// One piece's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PieceEffect {
    /// The square, "e4".
    pub square: String,
    /// 0..64 (a1 = 0), the real board's square.
    pub index: u8,
    /// "white pawn".
    pub piece: String,
    /// FEN letter: "P", "n".
    pub letter: char,
    /// The chosen move's probability with the piece taken away.
    pub probability_without: f32,
    /// `probability_without − probability`: negative, the move needed this piece.
    pub change: f32,
    /// The fly's value of the position without the piece, minus with it.
    pub value_change: f32,
    /// Mean |change| of the descending neurons' read rates.
    pub descending_change: f32,
    /// The largest |change| of one descending neuron.
    pub descending_largest: f32,
}

/// The whole board lesion of one position.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    pub fen: String,
    /// The fly's favourite move (UCI) and its probability on the intact board.
    pub chosen: String,
    pub chosen_san: String,
    pub probability: f32,
    pub value: f32,
    /// One per piece on the board, a1 first.
    pub pieces: Vec<PieceEffect>,
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

/// Takes every piece of `pos` off the board in turn and measures what the fly (`readout` on
/// `brain`, reading `descending`) makes of each board, all in one batch with the intact board.
/// None when the position has no legal move.
pub fn explain(brain: &Brain, readout: &Readout, descending: &[u32], pos: &Chess) -> Option<Explanation> {
    if pos.legal_moves().is_empty() {
        return None;
    }
    let us = pos.turn();
    let intact = planes(pos);
    let pieces: Vec<(Square, shakmaty::Piece)> = pos.board().clone().into_iter().collect();
    let mut boards = vec![intact];
    for (sq, piece) in &pieces {
        let mut b = intact;
        let in_frame = if us == Color::White { *sq } else { sq.flip_vertical() };
        let plane = plane_of(piece.role) + if piece.color == us { 0 } else { 6 };
        b[plane][usize::from(in_frame)] = false;
        boards.push(b);
    }
    let features = think_features(brain, &boards, descending, &readout.read_steps);
    let base = policy(pos, &readout.heads(&features[0]));
    let chosen = (0..base.moves.len()).max_by(|&a, &b| base.probability[a].total_cmp(&base.probability[b]))?;
    let chosen_move: Move = base.moves[chosen];
    let effects = pieces
        .iter()
        .zip(&features[1..])
        .map(|((sq, piece), f)| {
            let p = policy(pos, &readout.heads(f));
            let diffs: Vec<f32> = f.iter().zip(&features[0]).map(|(a, b)| (a - b).abs()).collect();
            PieceEffect {
                square: sq.to_string(),
                index: u8::from(*sq),
                piece: format!("{} {}", if piece.color == Color::White { "white" } else { "black" }, role_name(piece.role)),
                letter: piece.char(),
                probability_without: p.probability[chosen],
                change: p.probability[chosen] - base.probability[chosen],
                value_change: p.value - base.value,
                descending_change: diffs.iter().sum::<f32>() / diffs.len().max(1) as f32,
                descending_largest: diffs.iter().copied().fold(0.0, f32::max),
            }
        })
        .collect();
    Some(Explanation {
        fen: shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string(),
        chosen: flychess_brain::chess::uci(&chosen_move),
        chosen_san: shakmaty::san::San::from_move(pos, chosen_move).to_string(),
        probability: base.probability[chosen],
        value: base.value,
        pieces: effects,
    })
}
