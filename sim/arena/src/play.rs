//! Games between players: a fly (brain + readout, the repetition-avoiding choice of `readout`),
//! a dopamine fly, Charles (a trained transformer, the same repetition rule), a fly or Charles with
//! one of Philidor's aids (`search`: a judge, a search, Stockfish among its top five), the random mover, the greedy mover (takes the most: 1, 3, 3, 5, 9, +0.5 for a check, ties at
//! random), and Stockfish (optionally at a limited Elo, optionally mixing in random moves). A game
//! ends only by the rules — checkmate, stalemate, insufficient material, a real threefold
//! repetition, the 50-move rule — or, as a safeguard, a move cap scored as a draw.

use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, Move, Position};

use crate::error::Result;
use crate::players::Player;
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::chess::piece_value as value;
use flychess_brain::chess::planes;
use flychess_fly::readout::{Readout, policy, position_key, think_features_on};

use flychess_fly::stats::Dice;

/// What one-move imagination sees (SPEC §4): for each of the fly's legal moves (in the policy's
/// order) its probability, the value of the board after it from the fly's side, whether it ends
/// the game in a rules draw or repeats an earlier position, and a mate if there is one. All the
/// boards after go through the brain as one batch; the replies are never looked at.
pub struct LookAhead {
    pub probability: Vec<f32>,
    /// −(the opponent's value after the move): the fly's own outlook, in [−1, 1].
    pub ours: Vec<f32>,
    pub draws: Vec<bool>,
    pub repeats: Vec<bool>,
    pub mate: Option<usize>,
    /// The DN features of each board after (empty when a move mates): what the app reads the
    /// opponent's expected reply from without thinking that board again.
    pub features: Vec<Vec<f32>>,
}

pub fn look_ahead(
    brain: &Brain,
    readout: &Readout,
    descending: &[u32],
    engine: Option<&Simulator>,
    pos: &Chess,
    p: &flychess_fly::readout::Policy,
    earlier: &[u64],
) -> LookAhead {
    let afters = boards_after(pos, &p.moves);
    look_ahead_with(&afters, p, earlier, || {
        think_features_on(engine, brain, &afters.iter().map(planes).collect::<Vec<_>>(), descending, &readout.read_steps)
    })
    .with_values(readout)
}

/// The fly's policy and its look-ahead from one batch through the brain: the position itself and
/// the board after each of its legal moves think together (one board more in the batch costs far
/// less than a think of its own).
pub fn think_and_look_ahead(
    brain: &Brain,
    readout: &Readout,
    descending: &[u32],
    engine: Option<&Simulator>,
    pos: &Chess,
    earlier: &[u64],
) -> (flychess_fly::readout::Policy, LookAhead) {
    let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    let afters = boards_after(pos, &moves);
    let mate = afters.iter().any(|a| a.is_checkmate());
    let boards: Vec<_> = std::iter::once(pos).chain(if mate { &afters[..0] } else { &afters[..] }).map(planes).collect();
    let mut features = think_features_on(engine, brain, &boards, descending, &readout.read_steps);
    let p = policy(pos, &readout.heads(&features[0]));
    debug_assert!(p.moves == moves, "the policy lists the legal moves in generation order");
    let after_features = features.split_off(1);
    let seen = look_ahead_with(&afters, &p, earlier, || after_features).with_values(readout);
    (p, seen)
}

/// The board after each move.
pub(crate) fn boards_after(pos: &Chess, moves: &[Move]) -> Vec<Chess> {
    moves
        .iter()
        .map(|m| {
            let mut a = pos.clone();
            a.play_unchecked(*m);
            a
        })
        .collect()
}

/// The look-ahead of `p` over `afters` (the boards after its moves, in its order) with their DN
/// features from `think` (not called when a move mates: the mate is played, values are not needed).
fn look_ahead_with(
    afters: &[Chess],
    p: &flychess_fly::readout::Policy,
    earlier: &[u64],
    think: impl FnOnce() -> Vec<Vec<f32>>,
) -> LookAhead {
    let mate = afters.iter().position(|a| a.is_checkmate());
    let features = if mate.is_some() { Vec::new() } else { think() };
    let draws = afters
        .iter()
        .map(|a| {
            let key = position_key(a);
            a.is_stalemate() || a.is_insufficient_material() || a.halfmoves() >= 100 || earlier.iter().filter(|&&k| k == key).count() >= 2
        })
        .collect();
    let repeats = afters.iter().map(|a| earlier.contains(&position_key(a))).collect();
    LookAhead { probability: p.probability.clone(), ours: Vec::new(), draws, repeats, mate, features }
}

impl LookAhead {
    /// Fills `ours` from the features (zeros when a move mates: the mate is played).
    fn with_values(mut self, readout: &Readout) -> LookAhead {
        self.ours = if self.features.is_empty() {
            vec![0.0; self.probability.len()]
        } else {
            self.features.iter().map(|d| -readout.heads(d).value).collect()
        };
        self
    }

    /// The move imagination plays with weight `w` (∞: the value decides, the probability breaks
    /// ties). A mate is played. A move that ends the game in a rules draw scores exactly a draw,
    /// and is dropped when a move that does not draw looks good for the fly (its value after
    /// above 0). Otherwise score = ln max(P, 1e-12) + w·value. Moves that bring back an earlier
    /// position are avoided while others exist.
    pub fn pick(&self, w: f32) -> usize {
        if let Some(m) = self.mate {
            return m;
        }
        let n = self.probability.len();
        let hopeful = (0..n).any(|i| !self.draws[i] && self.ours[i] > 0.0);
        let fresh_exists = self.repeats.iter().any(|r| !r);
        let value = |i: usize| if self.draws[i] { 0.0 } else { self.ours[i] };
        let key = |i: usize| -> (f32, f32) {
            let lp = libm::logf(self.probability[i].max(1e-12));
            if w.is_infinite() { (value(i), lp) } else { (lp + w * value(i), 0.0) }
        };
        let better = |a: &usize, b: &usize| {
            let (ka, kb) = (key(*a), key(*b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        };
        (0..n)
            .filter(|&i| !(hopeful && self.draws[i] || fresh_exists && self.repeats[i]))
            .max_by(better)
            .or_else(|| (0..n).max_by(better))
            .expect("a position in play has legal moves")
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

/// How a game ended by the rules: the result ("1-0", "0-1", "1/2-1/2") and the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    pub result: &'static str,
    pub reason: &'static str,
}

/// The rules' verdict on `pos`, reached through the positions whose keys are `keys` (the last one
/// being `pos`): checkmate, stalemate, insufficient material, a real threefold repetition (the
/// third occurrence, not the second), or the fifty-move rule; None while the game goes on.
pub fn rules_ending(pos: &Chess, keys: &[u64]) -> Option<Ending> {
    let end = |result, reason| Some(Ending { result, reason });
    if pos.is_checkmate() {
        return end(if pos.turn() == Color::White { "0-1" } else { "1-0" }, "checkmate");
    }
    if pos.is_stalemate() {
        return end("1/2-1/2", "stalemate");
    }
    if pos.is_insufficient_material() {
        return end("1/2-1/2", "insufficient material");
    }
    if let Some(&last) = keys.last()
        && keys.iter().filter(|&&k| k == last).count() >= 3
    {
        return end("1/2-1/2", "threefold repetition");
    }
    if pos.halfmoves() >= 100 {
        return end("1/2-1/2", "fifty-move rule");
    }
    None
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
        if let Some(end) = rules_ending(&pos, &keys) {
            return Ok(finish(end.result, end.reason, san));
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
    use flychess_brain::chess::position_from_fen;
    use shakmaty::CastlingMode;

    /// A brain of four unconnected neurons: the readout alone decides.
    fn tiny() -> (Brain, Readout) {
        let brain = Brain::from_parts(4, vec![0; 5], vec![], vec![], vec![]);
        let mut r = Readout::new_zero(4);
        // The fly thinks the opponent is lost after any move (value −1 from the opponent's side).
        r.bias[flychess_fly::readout::OUTPUTS - 1] = -5.0;
        (brain, r)
    }

    /// The tiny brain's fly, on the CPU engine, with imagination at `imagination`.
    fn fly<'a>(brain: &'a Brain, r: &'a Readout, imagination: Option<f32>) -> Player<'a> {
        Player::Fly { brain, readout: r, descending: &[0, 1, 2, 3], engine: None, imagination, habituation: None, glances: None }
    }

    #[test]
    fn imagination_plays_mate_in_one() {
        let (brain, r) = tiny();
        let pos = position_from_fen("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1").unwrap();
        let mut fly = fly(&brain, &r, Some(1.0));
        let m = fly.choose(&pos, &[]).unwrap();
        let mut after = pos.clone();
        after.play_unchecked(m);
        assert!(after.is_checkmate(), "{}", m.to_uci(CastlingMode::Standard));
    }

    #[test]
    fn imagination_drops_a_drawing_favourite_while_winning() {
        let (brain, mut r) = tiny();
        // No mate in one here, and Qc1-c7 stalemates.
        let pos = position_from_fen("k7/8/8/1K6/8/8/8/2Q5 w - - 0 1").unwrap();
        r.bias[usize::from(shakmaty::Square::C1)] = 8.0;
        r.bias[flychess_fly::readout::FROM + usize::from(shakmaty::Square::C7)] = 8.0;
        let mut plain = fly(&brain, &r, None);
        let favourite = plain.choose(&pos, &[]).unwrap();
        let mut after = pos.clone();
        after.play_unchecked(favourite);
        assert!(after.is_stalemate(), "the plain fly walks into stalemate");
        let mut imagining = fly(&brain, &r, Some(1.0));
        let m = imagining.choose(&pos, &[]).unwrap();
        let mut after = pos.clone();
        after.play_unchecked(m);
        assert!(!after.is_stalemate(), "imagination avoids the stalemate when winning");
        assert!(
            pos.legal_moves().iter().all(|m| {
                let mut a = pos.clone();
                a.play_unchecked(*m);
                !a.is_checkmate()
            }),
            "no mate in one: the draw rule, not the mate rule, decided"
        );
    }

    #[test]
    fn greedy_takes_the_queen_and_prefers_a_checking_capture() {
        let pos = position_from_fen("4k3/8/8/3q4/8/2N5/8/4K2R w K - 0 1").unwrap();
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        let m = greedy(&pos, &moves, &mut Dice::new(1));
        assert_eq!(flychess_brain::chess::uci(&m), "c3d5");
    }

    #[test]
    fn random_against_random_ends_by_a_rule() {
        for seed in 0..6 {
            let mut w = Player::Random(Dice::new(seed));
            let mut b = Player::Random(Dice::new(seed + 100));
            let g = play_game(&mut w, &mut b, Chess::default(), 600).unwrap();
            assert!(
                ["checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule", "move cap"]
                    .contains(&g.termination.as_str())
            );
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
