//! Games between players: a fly (brain + readout, the repetition-avoiding choice of `readout`),
//! the random mover, the greedy mover (takes the most: 1, 3, 3, 5, 9, +0.5 for a check, ties at
//! random), and Stockfish (optionally at a limited Elo, optionally mixing in random moves). A game
//! ends only by the rules — checkmate, stalemate, insufficient material, a real threefold
//! repetition, the 50-move rule — or, as a safeguard, a move cap scored as a draw.

use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role};

use crate::brain::{cpu, Brain};
use crate::chess::planes;
use crate::engine::{Limit, Supervised};
use crate::error::Result;
use crate::readout::{choose, descending_features, policy, position_key, Readout};

/// A portable xorshift stream for the random choices of the simple players.
#[derive(Clone, Debug)]
pub struct Dice(u64);

impl Dice {
    pub fn new(seed: u64) -> Dice {
        Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.below(1 << 30) as f64) < p * (1u64 << 30) as f64
    }
}

pub enum Player<'a> {
    Random(Dice),
    Greedy(Dice),
    Fly { brain: &'a Brain, readout: &'a Readout, descending: &'a [u32] },
    Stockfish { engine: Supervised, limit: Limit, random_share: f64, dice: Dice },
}

impl Player<'_> {
    pub fn name(&self) -> String {
        match self {
            Player::Random(_) => "random".into(),
            Player::Greedy(_) => "greedy".into(),
            Player::Fly { .. } => "fly".into(),
            Player::Stockfish { random_share, .. } if *random_share > 0.0 => format!("stockfish ({:.0}% random)", 100.0 * random_share),
            Player::Stockfish { .. } => "stockfish".into(),
        }
    }

    /// This player's move in `pos`; `earlier` are the keys of the game's positions so far.
    pub fn choose(&mut self, pos: &Chess, earlier: &[u64]) -> Result<Move> {
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        Ok(match self {
            Player::Random(d) => moves[d.below(moves.len())],
            Player::Greedy(d) => greedy(pos, &moves, d),
            Player::Fly { brain, readout, descending } => {
                let rates = cpu::think(brain, &[planes(pos)]);
                let heads = readout.heads(&descending_features(&rates, 0, descending, &readout.read_steps));
                let p = policy(pos, &heads);
                let (i, _) = choose(pos, &p, earlier).expect("a position in play has legal moves");
                p.moves[i]
            }
            Player::Stockfish { engine, limit, random_share, dice } => {
                if *random_share > 0.0 && dice.chance(*random_share) {
                    moves[dice.below(moves.len())]
                } else {
                    let fen = shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string();
                    let uci = engine.best_move(&fen, *limit, std::time::Duration::from_secs(60))?;
                    uci.and_then(|u| moves.iter().find(|m| m.to_uci(CastlingMode::Standard).to_string() == u).copied())
                        .unwrap_or(moves[dice.below(moves.len())])
                }
            }
        })
    }
}

fn value(role: Role) -> f64 {
    match role {
        Role::Pawn => 1.0,
        Role::Knight | Role::Bishop => 3.0,
        Role::Rook => 5.0,
        Role::Queen => 9.0,
        Role::King => 0.0,
    }
}

/// The greedy mover: the move that takes the most (plus 0.5 if it gives check), ties at random.
pub fn greedy(pos: &Chess, moves: &[Move], dice: &mut Dice) -> Move {
    let gain = |m: &Move| {
        let taken = m.capture().map_or(0.0, value);
        let mut after = pos.clone();
        after.play_unchecked(*m);
        taken + if after.is_check() { 0.5 } else { 0.0 }
    };
    let gains: Vec<f64> = moves.iter().map(gain).collect();
    let top = gains.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let best: Vec<usize> = (0..moves.len()).filter(|&i| gains[i] == top).collect();
    moves[best[dice.below(best.len())]]
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GameRecord {
    pub white: String,
    pub black: String,
    /// "1-0", "0-1" or "1/2-1/2".
    pub result: String,
    /// checkmate, stalemate, insufficient material, threefold repetition, fifty-move rule, move cap.
    pub termination: String,
    pub san: Vec<String>,
}

impl GameRecord {
    pub fn pgn(&self) -> String {
        let mut moves = String::new();
        for (i, m) in self.san.iter().enumerate() {
            if i % 2 == 0 {
                moves.push_str(&format!("{}. ", i / 2 + 1));
            }
            moves.push_str(m);
            moves.push(' ');
        }
        format!(
            "[White \"{}\"]\n[Black \"{}\"]\n[Result \"{}\"]\n[Termination \"{}\"]\n\n{}{}\n",
            self.white, self.black, self.result, self.termination, moves, self.result
        )
    }
}

/// Plays one game from `start`; `max_plies` is the safeguard cap.
pub fn play_game(white: &mut Player, black: &mut Player, start: Chess, max_plies: usize) -> Result<GameRecord> {
    let mut pos = start;
    let mut keys = vec![position_key(&pos)];
    let mut san = Vec::new();
    let (wname, bname) = (white.name(), black.name());
    let finish = |result: &str, termination: &str, san: Vec<String>| GameRecord {
        white: wname.clone(),
        black: bname.clone(),
        result: result.into(),
        termination: termination.into(),
        san,
    };
    loop {
        if pos.is_checkmate() {
            let result = if pos.turn() == Color::White { "0-1" } else { "1-0" };
            return Ok(finish(result, "checkmate", san));
        }
        if pos.is_stalemate() {
            return Ok(finish("1/2-1/2", "stalemate", san));
        }
        if pos.is_insufficient_material() {
            return Ok(finish("1/2-1/2", "insufficient material", san));
        }
        let last = *keys.last().expect("one position");
        if keys.iter().filter(|&&k| k == last).count() >= 3 {
            return Ok(finish("1/2-1/2", "threefold repetition", san));
        }
        if pos.halfmoves() >= 100 {
            return Ok(finish("1/2-1/2", "fifty-move rule", san));
        }
        if san.len() >= max_plies {
            return Ok(finish("1/2-1/2", "move cap", san));
        }
        let m = if pos.turn() == Color::White { white.choose(&pos, &keys)? } else { black.choose(&pos, &keys)? };
        san.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        keys.push(position_key(&pos));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position_from_fen;

    #[test]
    fn greedy_takes_the_queen_and_prefers_a_checking_capture() {
        let pos = position_from_fen("4k3/8/8/3q4/8/2N5/8/4K2R w K - 0 1").unwrap();
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        let m = greedy(&pos, &moves, &mut Dice::new(1));
        assert_eq!(m.to_uci(CastlingMode::Standard).to_string(), "c3d5");
    }

    #[test]
    fn random_against_random_ends_by_a_rule() {
        for seed in 0..6 {
            let mut w = Player::Random(Dice::new(seed));
            let mut b = Player::Random(Dice::new(seed + 100));
            let g = play_game(&mut w, &mut b, Chess::default(), 600).unwrap();
            assert!(["checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule", "move cap"].contains(&g.termination.as_str()));
            assert_eq!(g.result == "1/2-1/2", g.termination != "checkmate");
            assert!(g.pgn().contains(&g.result));
        }
    }

    #[test]
    fn mate_in_one_is_found_by_the_rules_not_missed() {
        // Fool's mate position with black to play Qh4#: greedy plays it (a check) and the game ends.
        let pos = position_from_fen("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2").unwrap();
        let mut w = Player::Random(Dice::new(3));
        let mut b = Player::Greedy(Dice::new(4));
        let g = play_game(&mut w, &mut b, pos, 10).unwrap();
        assert_eq!((g.result.as_str(), g.termination.as_str()), ("0-1", "checkmate"));
        assert_eq!(g.san, vec!["Qh4#"]);
    }
}
