//! The curriculum of finishing (issue 56; the seed's "Making it stronger", item 2): positions a
//! side has won, whose moves Stockfish ranks by centipawns and by distance to mate, so that the
//! quickest win is what the fly is taught instead of "every winning move is 100 %". This module
//! owns what the positions are and how they are judged, not how they are labelled (the CLI's
//! `data curriculum` runs Stockfish over them, resumably) nor how a fit mixes them in
//! (`stream_fit::Mixed::with_curriculum`, `train --curriculum SHARE`).
//!
//! Kinds: won positions of real games (TRAIN rows of a games dataset that Stockfish already calls
//! won for the mover, and, for testing only, the won positions among the dataset's human-test
//! rows, which no fly trains on); basic won endgames made here at random (KQ–K, KR–K, KRR–K,
//! KBB–K with bishops on both colours, KQ against a knight or a bishop, a pawn to promote); and
//! stalemate lessons: positions against a lone king where at least one legal move stalemates,
//! whose target is the best move that does not. A position stays when its best move scores at
//! least `WON_SCORE` (the seed's S(m₁) ≥ 500). A tenth of the made positions (by a hash of the
//! position, so the same position is always on the same side) is held out and never trained on.

use shakmaty::{Board, CastlingMode, Chess, Color, FromSetup, Piece, Position, Role, Setup, Square};

use flychess_fly::data::Row;
use flychess_fly::grading::Score;
use flychess_fly::readout::position_key;
use flychess_fly::stats::Dice;

/// The seed's ranking score of a move: a forced mate in n as 10,000 − 100·n, being mated in n as
/// −10,000 + 100·n, centipawns clipped to ±5,000 otherwise.
pub fn rank_score(score: Score) -> i32 {
    match score {
        Score::Mate(n) if n > 0 => 10_000 - 100 * n,
        Score::Mate(n) => -10_000 + 100 * n.abs(),
        Score::Cp(cp) => cp.clamp(-5_000, 5_000),
    }
}

/// A position is won for the mover when its best move ranks at least this high.
pub const WON_SCORE: i32 = 500;

/// One position in this many (by a hash of the position) is held out.
pub const HELD_OUT_ONE_IN: u64 = 10;

/// Whether a row is a won position (its best labelled move ranks at least `WON_SCORE`).
pub fn is_won(row: &Row) -> bool {
    row.moves.first().is_some_and(|m| rank_score(m.score) >= WON_SCORE)
}

/// Whether a made position is held out (never trained on): one in `HELD_OUT_ONE_IN`, by its key.
pub fn held_out(pos: &Chess) -> bool {
    held_out_by_hash(position_key(pos) ^ 0x5EED_CAFE_F00D_D00D)
}

/// Whether what hashes to `h` is held out: one in `HELD_OUT_ONE_IN`, `h` mixed once more so that
/// the split does not follow its low bits' structure (a position's key, a game's hash).
pub fn held_out_by_hash(mut h: u64) -> bool {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.is_multiple_of(HELD_OUT_ONE_IN)
}

/// The legal moves of `pos` after which the opponent is stalemated.
pub fn stalemating_moves(pos: &Chess) -> Vec<shakmaty::Move> {
    pos.legal_moves()
        .into_iter()
        .filter(|m| {
            let mut after = pos.clone();
            after.play_unchecked(*m);
            after.is_stalemate()
        })
        .collect()
}

/// The basic won endgames the curriculum makes, by the strong side's extra material.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endgame {
    QueenVsKing,
    RookVsKing,
    TwoRooksVsKing,
    TwoBishopsVsKing,
    QueenVsMinor,
    PawnToPromote,
}

impl Endgame {
    pub const ALL: [Endgame; 6] = [
        Endgame::QueenVsKing,
        Endgame::RookVsKing,
        Endgame::TwoRooksVsKing,
        Endgame::TwoBishopsVsKing,
        Endgame::QueenVsMinor,
        Endgame::PawnToPromote,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Endgame::QueenVsKing => "KQ-K",
            Endgame::RookVsKing => "KR-K",
            Endgame::TwoRooksVsKing => "KRR-K",
            Endgame::TwoBishopsVsKing => "KBB-K",
            Endgame::QueenVsMinor => "KQ-Kminor",
            Endgame::PawnToPromote => "KP-K",
        }
    }

    /// The strong side's pieces besides its king, and the weak side's (a knight or bishop drawn
    /// for `QueenVsMinor`).
    fn material(self, dice: &mut Dice) -> (Vec<Role>, Vec<Role>) {
        match self {
            Endgame::QueenVsKing => (vec![Role::Queen], vec![]),
            Endgame::RookVsKing => (vec![Role::Rook], vec![]),
            Endgame::TwoRooksVsKing => (vec![Role::Rook, Role::Rook], vec![]),
            Endgame::TwoBishopsVsKing => (vec![Role::Bishop, Role::Bishop], vec![]),
            Endgame::QueenVsMinor => (vec![Role::Queen], vec![if dice.chance(0.5) { Role::Knight } else { Role::Bishop }]),
            Endgame::PawnToPromote => (vec![Role::Pawn], vec![]),
        }
    }
}

/// The kind a curriculum row is reported under: "stalemate" when a legal move stalemates,
/// "games" for a position of a real game, else its endgame (by material), else "other".
pub fn kind_of(row: &Row, pos: &Chess) -> &'static str {
    if !stalemating_moves(pos).is_empty() {
        return "stalemate";
    }
    if row.game > 0 {
        return "games";
    }
    let board = pos.board();
    let us = pos.turn();
    let count = |c: Color, r: Role| (board.by_color(c) & board.by_role(r)).count();
    let theirs = board.by_color(!us).count();
    let ours = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen].map(|r| count(us, r));
    let minor_theirs = count(!us, Role::Knight) + count(!us, Role::Bishop);
    match (ours, theirs, minor_theirs) {
        ([0, 0, 0, 0, 1], 1, _) => "KQ-K",
        ([0, 0, 0, 1, 0], 1, _) => "KR-K",
        ([0, 0, 0, 2, 0], 1, _) => "KRR-K",
        ([0, 0, 2, 0, 0], 1, _) => "KBB-K",
        ([0, 0, 0, 0, 1], 2, 1) => "KQ-Kminor",
        ([1, 0, 0, 0, 0], 1, _) => "KP-K",
        _ => "other",
    }
}

/// A random legal position of `endgame` with the strong side to move (white or black at random),
/// not over and not a rules draw; None when the draw made none (the caller draws again).
pub fn endgame_position(endgame: Endgame, dice: &mut Dice) -> Option<Chess> {
    let strong = if dice.chance(0.5) { Color::White } else { Color::Black };
    let (ours, theirs) = endgame.material(dice);
    let mut board = Board::empty();
    let mut free: Vec<Square> = Square::ALL.to_vec();
    let mut place = |board: &mut Board, piece: Piece, dice: &mut Dice| -> Option<Square> {
        let ok: Vec<usize> = (0..free.len())
            .filter(|&i| piece.role != Role::Pawn || !matches!(free[i].rank(), shakmaty::Rank::First | shakmaty::Rank::Eighth))
            .collect();
        if ok.is_empty() {
            return None;
        }
        let sq = free.swap_remove(ok[dice.below(ok.len())]);
        board.set_piece_at(sq, piece);
        Some(sq)
    };
    let k1 = place(&mut board, Piece { color: strong, role: Role::King }, dice)?;
    let k2 = place(&mut board, Piece { color: !strong, role: Role::King }, dice)?;
    if k1.distance(k2) <= 1 {
        return None;
    }
    let mut bishops = Vec::new();
    for role in ours {
        let sq = place(&mut board, Piece { color: strong, role }, dice)?;
        if role == Role::Bishop {
            bishops.push(sq);
        }
    }
    // Two bishops on squares of one colour cannot mate.
    if let [a, b] = bishops[..]
        && a.is_light() == b.is_light()
    {
        return None;
    }
    for role in theirs {
        place(&mut board, Piece { color: !strong, role }, dice)?;
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = strong;
    let pos = Chess::from_setup(setup, CastlingMode::Standard).ok()?;
    (!pos.is_game_over()).then_some(pos)
}

/// A stalemate lesson: a random position against a lone king (queen, rook, two rooks, or queen
/// and a pawn) where at least one legal move stalemates; None when the draw made none.
pub fn stalemate_lesson(dice: &mut Dice) -> Option<Chess> {
    let endgame = [Endgame::QueenVsKing, Endgame::RookVsKing, Endgame::TwoRooksVsKing, Endgame::QueenVsKing][dice.below(4)];
    let pos = endgame_position(endgame, dice)?;
    (!stalemating_moves(&pos).is_empty()).then_some(pos)
}

/// How a fly's favourite did in one held-out won position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finish {
    /// The favourite ranks as high as Stockfish's best labelled move (the quickest mate, or the
    /// best centipawns).
    pub fastest: bool,
    /// The favourite stalemates the opponent.
    pub stalemated: bool,
    /// The position holds a move that stalemates (a stalemate lesson).
    pub trap: bool,
}

/// How `favourite` (a legal move of the row's position, as UCI) finishes the won row `row`.
pub fn finish(row: &Row, pos: &Chess, favourite: &shakmaty::Move) -> Finish {
    let uci = flychess_brain::chess::uci(favourite);
    let best = row.moves.first().map(|m| rank_score(m.score));
    let mine = row.moves.iter().find(|m| m.mv.uci() == uci).map(|m| rank_score(m.score));
    let traps = stalemating_moves(pos);
    Finish { fastest: best.is_some() && mine == best, stalemated: traps.contains(favourite), trap: !traps.is_empty() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::chess::position_from_fen;
    use flychess_fly::data::{MoveCode, MoveLabel};

    #[test]
    fn mates_rank_by_distance_above_every_centipawn_score() {
        assert!(rank_score(Score::Mate(3)) > rank_score(Score::Mate(4)));
        assert!(rank_score(Score::Mate(40)) > rank_score(Score::Cp(5_000)));
        assert!(rank_score(Score::Mate(-1)) < rank_score(Score::Mate(-6)));
        assert_eq!(rank_score(Score::Cp(9_000)), 5_000);
    }

    #[test]
    fn made_endgames_are_legal_with_the_strong_side_to_move_and_their_kind_is_read_back() {
        let mut dice = Dice::new(7);
        for endgame in Endgame::ALL {
            let mut made = 0;
            for _ in 0..400 {
                let Some(pos) = endgame_position(endgame, &mut dice) else { continue };
                made += 1;
                assert!(!pos.is_game_over());
                let strong = pos.turn();
                assert!(pos.board().by_color(strong).count() > pos.board().by_color(!strong).count() || endgame == Endgame::QueenVsMinor);
                let row = Row { fen: String::new(), game: 0, ply: 0, legal: 0, moves: vec![] };
                let kind = kind_of(&row, &pos);
                assert!(kind == endgame.name() || kind == "stalemate", "{endgame:?} read back as {kind}");
            }
            assert!(made > 100, "{endgame:?}: only {made} of 400 draws made a position");
        }
    }

    #[test]
    fn a_stalemate_lesson_holds_a_stalemating_move_and_finish_sees_it() {
        // White: Kb6, Qc1; black: Ka8. Qc7 and Qf4 (through b8) stalemate; Qc8+ mates.
        let pos = position_from_fen("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1").unwrap();
        let traps = stalemating_moves(&pos);
        assert_eq!(traps.iter().map(flychess_brain::chess::uci).collect::<Vec<_>>(), vec!["c1f4", "c1c7"]);
        let label = |uci: &str, score| MoveLabel { mv: MoveCode::parse_uci(uci).unwrap(), score, wdl: None };
        let row = Row {
            fen: "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1".into(),
            game: 0,
            ply: 0,
            legal: 0,
            moves: vec![label("c1c8", Score::Mate(1)), label("c1g1", Score::Mate(2))],
        };
        assert!(is_won(&row));
        let legal = pos.legal_moves();
        let by = |u: &str| *legal.iter().find(|m| flychess_brain::chess::uci(m) == u).unwrap();
        assert_eq!(finish(&row, &pos, &by("c1c8")), Finish { fastest: true, stalemated: false, trap: true });
        assert_eq!(finish(&row, &pos, &by("c1g1")), Finish { fastest: false, stalemated: false, trap: true });
        assert_eq!(finish(&row, &pos, &by("c1c7")), Finish { fastest: false, stalemated: true, trap: true });
        assert_eq!(kind_of(&row, &pos), "stalemate");
        let mut dice = Dice::new(3);
        let made = (0..2000).filter_map(|_| stalemate_lesson(&mut dice)).count();
        assert!(made > 20, "only {made} stalemate lessons in 2,000 draws");
    }

    #[test]
    fn about_a_tenth_is_held_out_and_the_same_position_always_on_the_same_side() {
        let mut dice = Dice::new(11);
        let made: Vec<Chess> = (0..4000).filter_map(|_| endgame_position(Endgame::RookVsKing, &mut dice)).collect();
        let held = made.iter().filter(|p| held_out(p)).count() as f64 / made.len() as f64;
        assert!((0.07..0.13).contains(&held), "{held}");
        assert!(made.iter().all(|p| held_out(p) == held_out(&p.clone())));
    }
}
