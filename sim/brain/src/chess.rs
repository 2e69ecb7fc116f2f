//! Chess as the fly sees it: positions from FEN (shakmaty does the rules) turned into the 12
//! planes of 64 squares the eye reads, always from the side to move (for black the ranks are
//! mirrored and the colours swapped, so the same neurons handle both colours). Planes 0–5 are the
//! mover's pawn, knight, bishop, rook, queen, king; 6–11 the opponent's; square = 8·rank + file.
//! Move encoding, legal-move policy, play rules and imagination join this module with the readout.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, Position, Role};

use crate::error::{Error, Result};

/// A move in UCI's words ("e2e4", "e7e8q", castling as the king's two-square step): the one way
/// every part of the program writes a move for an engine, a file or a user.
pub fn uci(m: &shakmaty::Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// The legal move of `pos` that UCI calls `text` (None: no such legal move).
pub fn legal_by_uci(pos: &Chess, text: &str) -> Option<shakmaty::Move> {
    pos.legal_moves().into_iter().find(|m| uci(m) == text)
}

/// 12 planes × 64 squares, from the side to move.
pub type Planes = [[bool; 64]; 12];

/// Parses a FEN into a legal position, with an error that quotes it.
pub fn position_from_fen(fen: &str) -> Result<Chess> {
    // A board of other than 8 ranks is said as such (shakmaty reads 9 ranks as a position and
    // then finds no king where it looks).
    let ranks = fen.split_whitespace().next().map_or(0, |board| board.split('/').count());
    if ranks != 8 {
        return Err(Error::Invalid(format!("bad FEN {fen:?}: its board has {ranks} ranks, not 8")));
    }
    let parsed: Fen = fen.trim().parse().map_err(|e| Error::Invalid(format!("bad FEN {fen:?}: {e}")))?;
    parsed.into_position(CastlingMode::Standard).map_err(|e| Error::Invalid(format!("impossible position {fen:?}: {e}")))
}

/// Why a position has no legal move, in words: checkmate (naming who is mated) or stalemate.
pub fn game_over_words(pos: &Chess) -> String {
    use shakmaty::Position;
    if pos.is_checkmate() {
        let mated = if pos.turn() == shakmaty::Color::White { "White" } else { "Black" };
        format!("checkmate: {mated} is mated, no legal move to analyse")
    } else if pos.is_stalemate() {
        "stalemate: no legal move to analyse (a draw)".to_string()
    } else {
        "the game is over in this position (no legal move)".to_string()
    }
}

/// A role's plane (0 pawn … 5 king), the order of the planes and of the R1–R6 cells.
pub fn role_index(role: Role) -> usize {
    match role {
        Role::Pawn => 0,
        Role::Knight => 1,
        Role::Bishop => 2,
        Role::Rook => 3,
        Role::Queen => 4,
        Role::King => 5,
    }
}

/// A piece's material value in pawns (the king 0).
pub fn piece_value(role: Role) -> f64 {
    match role {
        Role::Pawn => 1.0,
        Role::Knight | Role::Bishop => 3.0,
        Role::Rook => 5.0,
        Role::Queen => 9.0,
        Role::King => 0.0,
    }
}

/// The board from the side to move.
pub fn planes(pos: &Chess) -> Planes {
    planes_from(pos, pos.turn())
}

/// The board from `us`'s side, whoever is to move (the dopamine fly looks at the board after its
/// own move from its own side).
pub fn planes_from(pos: &Chess, us: Color) -> Planes {
    let mut p = [[false; 64]; 12];
    for (square, piece) in pos.board().clone() {
        let sq = if us == Color::White { square } else { square.flip_vertical() };
        let plane = role_index(piece.role) + if piece.color == us { 0 } else { 6 };
        p[plane][usize::from(sq)] = true;
    }
    p
}

/// The sample of real positions shipped with the crate (from the training split of the labelled
/// data, never HOLD or VAL): the first 256 calibrate homeostasis, the next 48 measure signal.
pub fn sample_positions() -> Vec<Chess> {
    include_str!("../data/sample-positions.fen")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| position_from_fen(l).expect("the shipped sample positions are legal"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mate and stalemate are told apart in words (issue 71: both were "the game is over").
    #[test]
    fn mate_and_stalemate_are_said_apart() {
        let mate = position_from_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3").unwrap();
        assert!(game_over_words(&mate).starts_with("checkmate: White is mated"), "{}", game_over_words(&mate));
        let stalemate = position_from_fen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").unwrap();
        assert!(game_over_words(&stalemate).starts_with("stalemate"), "{}", game_over_words(&stalemate));
    }

    /// A board of 9 (or 7) ranks is named as such, not as a missing king (issue 71).
    #[test]
    fn a_board_of_the_wrong_number_of_ranks_is_said_so() {
        let nine = position_from_fen("rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap_err().to_string();
        assert!(nine.contains("9 ranks, not 8") && !nine.contains("king"), "{nine}");
        let seven = position_from_fen("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap_err().to_string();
        assert!(seven.contains("7 ranks"), "{seven}");
        assert!(position_from_fen("  rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").is_ok());
    }

    #[test]
    fn the_start_position_from_both_sides_looks_the_same() {
        let white = position_from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        let black = position_from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
        let (w, b) = (planes(&white), planes(&black));
        // A vertical flip keeps the files, so the mover's king is on e1 in both frames.
        assert!(w[5][4] && b[5][4], "own king on e1");
        assert!(w[11][60] && b[11][60], "opponent king on e8");
        assert_eq!(w.iter().flatten().filter(|&&x| x).count(), 32);
        assert_eq!(w, b);
    }

    #[test]
    fn after_e4_black_sees_an_opponent_pawn_on_e5() {
        let pos = position_from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
        let p = planes(&pos);
        assert!(p[6][36], "e4 mirrored is e5 (square 36), an opponent pawn");
        assert!(!p[6][12], "e2 (mirrored e7) is empty of opponent pawns");
        assert!(p[0][8 + 4], "own pawn on e2 in black's frame (its e7)");
    }

    #[test]
    fn bad_fens_are_errors() {
        assert!(position_from_fen("not a fen").is_err());
        assert!(position_from_fen("8/8/8/8/8/8/8/8 w - - 0 1").is_err(), "no kings");
    }

    #[test]
    fn the_sample_has_512_positions() {
        assert_eq!(sample_positions().len(), 512);
    }

    #[test]
    fn a_move_is_written_and_found_by_its_uci_name_castling_as_the_kings_step() {
        let pos = position_from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let castle = legal_by_uci(&pos, "e1g1").expect("white castles short");
        assert!(castle.is_castle());
        assert_eq!(uci(&castle), "e1g1");
        assert_eq!(legal_by_uci(&pos, "e1h1"), None, "the king-takes-rook form is not the standard one");
        assert_eq!(legal_by_uci(&pos, "a1a9"), None);
        let promote = position_from_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").unwrap();
        assert_eq!(uci(&legal_by_uci(&promote, "e7e8q").unwrap()), "e7e8q");
    }
}
