//! Habituation against repetition (issue 56; the seed's "Making it stronger", item 6): a switch
//! on a readout fly, like imagination. Real neurons answer less to what they keep meeting, and one
//! mushroom-body output neuron, MBON-α'3, signals novelty and habituates to familiar odours
//! (Hattori et al. 2017). Here the fly keeps a fading memory of the boards its own moves made
//! this game, and a move whose board looks like them scores lower:
//!
//!   score(m) = ln P(m) − weight · Σₖ decayᵃᵍᵉ⁽ᵏ⁾ · overlap(board after m, remembered board k)
//!
//! where age counts the fly's own moves since board k was made and overlap is the share of
//! (square, piece) pairs the two boards have in common (Jaccard; an exact repeat is 1). Going
//! back and forth and shuffling pieces without progress become less attractive the more often
//! and the more recently they were seen. The plain fly's rule (never bring back an earlier
//! position while another move exists) stays. The decay and weight are chosen on VAL games
//! (`flychess habituation-tune`), never hand-set; `tuned::habituation` reads them.

use serde::{Deserialize, Serialize};
use shakmaty::{Board, Chess, Color, Position, Role};

use crate::error::{Error, Result};

/// The switch's two parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Habituation {
    /// What a memory keeps per move of the fly's (0 < decay ≤ 1).
    pub decay: f32,
    /// How much familiarity costs, in units of ln P (≥ 0).
    pub weight: f32,
}

impl Habituation {
    /// The parameters, refused with a message naming the bad one.
    pub fn checked(decay: f32, weight: f32) -> Result<Habituation> {
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(Error::Invalid(format!("habituation decay {decay}: it must lie in (0, 1]")));
        }
        if !(weight.is_finite() && weight >= 0.0) {
            return Err(Error::Invalid(format!("habituation weight {weight}: it must be a number of 0 or more")));
        }
        Ok(Habituation { decay, weight })
    }

    /// A short label for ids and names: `d0.8-w2`.
    pub fn label(&self) -> String {
        format!("d{}-w{}", self.decay, self.weight)
    }
}

/// The share of (square, piece) pairs two boards have in common: |A ∩ B| / |A ∪ B|.
pub fn overlap(a: &Board, b: &Board) -> f32 {
    let (mut both, mut either) = (0u32, 0u32);
    for color in [Color::White, Color::Black] {
        for role in Role::ALL {
            let x = a.by_color(color) & a.by_role(role);
            let y = b.by_color(color) & b.by_role(role);
            both += (x & y).count() as u32;
            either += (x | y).count() as u32;
        }
    }
    if either == 0 { 1.0 } else { both as f32 / either as f32 }
}

/// The boards the fly's own moves made this game, each with the number of the fly's move that
/// made it. A position with fewer earlier positions than the last one it moved in starts a new
/// game (the memory is cleared).
#[derive(Clone, Debug, Default)]
pub struct Memory {
    boards: Vec<(usize, Board)>,
    last_ply: Option<usize>,
}

impl Memory {
    /// The memory of a game read off its positions so far (`positions`, the last one being where
    /// `mover` is to move): every board with the other side to move, as if `mover`'s moves made
    /// them (what the window's thinker rebuilds each move; a player remembers as it plays).
    pub fn from_game(positions: &[Chess], mover: Color) -> Memory {
        let mut memory = Memory::default();
        for (s, p) in positions.iter().enumerate().skip(1) {
            if p.turn() != mover {
                memory.remember(s, p);
            }
        }
        memory.last_ply = positions.len().checked_sub(1);
        memory
    }

    /// Called with the game's ply (its earlier positions) before the fly chooses a move.
    pub fn at_ply(&mut self, ply: usize) {
        if self.last_ply.is_some_and(|last| ply <= last) {
            self.boards.clear();
        }
        self.last_ply = Some(ply);
    }

    /// The board the fly's move at `ply` made.
    pub fn remember(&mut self, ply: usize, after: &Chess) {
        self.boards.push((ply, after.board().clone()));
    }

    /// How familiar the board after a move at `ply` looks: Σ decay^(the fly's moves since) ×
    /// overlap, over the boards remembered.
    pub fn familiarity(&self, after: &Board, ply: usize, decay: f32) -> f32 {
        self.boards
            .iter()
            .map(|(made, board)| {
                let age = (ply.saturating_sub(*made) / 2).max(1) as f32;
                decay.powf(age - 1.0) * overlap(after, board)
            })
            .sum()
    }

    /// Each move's probability lowered by its familiarity: P · e^(−weight · familiarity),
    /// renormalised (what the favourite and imagination then choose from).
    pub fn habituate(&self, h: Habituation, pos: &Chess, moves: &[shakmaty::Move], probability: &mut [f32], ply: usize) {
        if h.weight == 0.0 || self.boards.is_empty() {
            return;
        }
        for (m, p) in moves.iter().zip(probability.iter_mut()) {
            let mut after = pos.clone();
            after.play_unchecked(*m);
            *p *= (-h.weight * self.familiarity(after.board(), ply, h.decay)).exp();
        }
        let total: f32 = probability.iter().sum();
        if total > 0.0 {
            for p in probability.iter_mut() {
                *p /= total;
            }
        }
    }
}

/// The decays and weights `tune` tries (weight 0 is the plain fly).
pub const DECAYS: [f32; 3] = [0.5, 0.8, 0.95];
pub const WEIGHTS: [f32; 6] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0];

/// One game to tune on: its positions from the start and the move played in each (one fewer
/// move than positions when the game ended; the last position without a move is not scored).
pub struct TuningGame {
    pub positions: Vec<Chess>,
    pub moves: Vec<shakmaty::Move>,
}

/// One cell of the grid: how often the favourite, habituated with these parameters, is the move
/// played, and its paired difference from the plain fly (weight 0) on the same positions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cell {
    pub habituation: Habituation,
    pub top1: flychess_fly::stats::Estimate,
    pub minus_plain: flychess_fly::stats::Estimate,
}

/// The grid on VAL games and the parameters chosen (the best top-1; a tie goes to the smaller
/// weight, then the faster decay).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tuning {
    pub chosen: Habituation,
    pub games: usize,
    pub positions: usize,
    pub grid: Vec<Cell>,
}

/// Chooses the decay and weight on `games` (VAL games: never trained on): in every position the
/// fly's memory holds the boards the same side's moves made earlier in that game, as if the fly
/// had played them, and the favourite (`readout::choose` over the habituated policy, with the
/// game's earlier positions) is scored against the move played. `policies` are the fly's
/// policies of every position of every game, in order.
pub fn tune(games: &[TuningGame], policies: &[flychess_fly::readout::Policy]) -> Result<Tuning> {
    use flychess_fly::readout::{choose, position_key};
    let cells: Vec<Habituation> =
        DECAYS.iter().flat_map(|&decay| WEIGHTS.iter().map(move |&weight| Habituation { decay, weight })).collect();
    let mut hits: Vec<Vec<bool>> = vec![Vec::new(); cells.len()];
    let mut at = 0;
    for game in games {
        let keys: Vec<u64> = game.positions.iter().map(position_key).collect();
        let afters: Vec<Chess> = game
            .moves
            .iter()
            .zip(&game.positions)
            .map(|(m, p)| {
                let mut a = p.clone();
                a.play_unchecked(*m);
                a
            })
            .collect();
        for (t, pos) in game.positions.iter().enumerate() {
            let policy = policies.get(at + t).ok_or_else(|| Error::Invalid("fewer policies than positions".into()))?;
            let Some(played) = game.moves.get(t) else { continue };
            let mut memory = Memory::default();
            for s in (t % 2..t).step_by(2) {
                memory.remember(s, &afters[s]);
            }
            let played = policy.moves.iter().position(|m| m == played);
            for (c, h) in cells.iter().enumerate() {
                let mut lowered = policy.clone();
                memory.habituate(*h, pos, &policy.moves, &mut lowered.probability, t);
                let chosen = choose(pos, &lowered, &keys[..t]).map(|(i, _)| i);
                hits[c].push(chosen.is_some() && chosen == played);
            }
        }
        at += game.positions.len();
    }
    let plain = cells.iter().position(|h| h.weight == 0.0).expect("weight 0 is in the grid");
    let grid: Vec<Cell> = cells
        .iter()
        .zip(&hits)
        .map(|(h, hit)| Cell {
            habituation: *h,
            top1: flychess_fly::stats::rate_of(hit),
            minus_plain: flychess_fly::stats::paired_difference(hit, &hits[plain]),
        })
        .collect();
    let best = grid
        .iter()
        .max_by(|a, b| {
            a.top1
                .value
                .total_cmp(&b.top1.value)
                .then(b.habituation.weight.total_cmp(&a.habituation.weight))
                .then(b.habituation.decay.total_cmp(&a.habituation.decay))
        })
        .expect("a grid");
    Ok(Tuning { chosen: best.habituation, games: games.len(), positions: hits[0].len(), grid })
}

/// The weights `tune_in_games` tries at each decay (0: the plain fly).
pub const GAME_WEIGHTS: [f32; 5] = [0.0, 0.5, 1.0, 2.0, 4.0];

/// One cell of the games grid: the fly's mean score from the won VAL starts against the random
/// mover, paired against the plain fly's on the same starts, and how its games ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameCell {
    pub habituation: Habituation,
    pub score: flychess_fly::stats::Estimate,
    pub minus_plain: flychess_fly::stats::Estimate,
    /// Termination → games.
    pub endings: std::collections::BTreeMap<String, usize>,
}

/// The games grid and the parameters it chose (the best mean score; a tie goes to the smaller
/// weight, then the faster decay).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameTuning {
    pub chosen: Habituation,
    pub starts: usize,
    pub max_plies: usize,
    pub grid: Vec<GameCell>,
}

/// Chooses the decay and weight by play: from each start (VAL positions the mover has won, the
/// fly playing the mover's side) the habituated fly plays the random mover (seeded by the start)
/// with every cell of the grid; what counts is how it finishes (win 1, draw ½, loss 0).
/// `progress(done, total)` after each game.
pub fn tune_in_games(
    brain: &flychess_brain::brain::Brain,
    readout: &flychess_fly::readout::Readout,
    descending: &[u32],
    starts: &[Chess],
    max_plies: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<GameTuning> {
    use crate::play::play_game;
    use crate::players::Player;
    use flychess_fly::stats::Dice;
    use rayon::prelude::*;
    let cells: Vec<Habituation> =
        DECAYS.iter().flat_map(|&decay| GAME_WEIGHTS.iter().map(move |&weight| Habituation { decay, weight })).collect();
    let jobs: Vec<(usize, usize)> = (0..cells.len()).flat_map(|c| (0..starts.len()).map(move |k| (c, k))).collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let played: Vec<(usize, usize, f64, String)> = jobs
        .par_iter()
        .map(|&(c, k)| {
            let start = starts[k].clone();
            let fly_white = start.turn() == Color::White;
            let mut fly = Player::Fly {
                brain,
                readout,
                descending,
                engine: None,
                imagination: None,
                habituation: Some((cells[c], Memory::default())),
                glances: None,
            };
            let mut random = Player::Random(Dice::new(0xD1CE ^ k as u64));
            let record = if fly_white {
                play_game(&mut fly, &mut random, start, max_plies)?
            } else {
                play_game(&mut random, &mut fly, start, max_plies)?
            };
            let score = match (record.result.as_str(), fly_white) {
                ("1-0", true) | ("0-1", false) => 1.0,
                ("1/2-1/2", _) => 0.5,
                _ => 0.0,
            };
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, jobs.len());
            Ok((c, k, score, record.termination))
        })
        .collect::<Result<_>>()?;
    let mut scores = vec![vec![0.0; starts.len()]; cells.len()];
    let mut endings = vec![std::collections::BTreeMap::<String, usize>::new(); cells.len()];
    for (c, k, score, termination) in played {
        scores[c][k] = score;
        *endings[c].entry(termination).or_default() += 1;
    }
    let grid: Vec<GameCell> = cells
        .iter()
        .enumerate()
        .map(|(c, h)| {
            let plain = cells.iter().position(|p| p.decay == h.decay && p.weight == 0.0).expect("weight 0 at every decay");
            let differences: Vec<f64> = scores[c].iter().zip(&scores[plain]).map(|(a, b)| a - b).collect();
            GameCell {
                habituation: *h,
                score: flychess_fly::stats::mean(&scores[c]),
                minus_plain: flychess_fly::stats::mean(&differences),
                endings: endings[c].clone(),
            }
        })
        .collect();
    let best = grid
        .iter()
        .max_by(|a, b| {
            a.score
                .value
                .total_cmp(&b.score.value)
                .then(b.habituation.weight.total_cmp(&a.habituation.weight))
                .then(b.habituation.decay.total_cmp(&a.habituation.decay))
        })
        .expect("a grid");
    Ok(GameTuning { chosen: best.habituation, starts: starts.len(), max_plies, grid })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::chess::position_from_fen;

    fn after(pos: &Chess, uci: &str) -> Chess {
        let m = flychess_brain::chess::legal_by_uci(pos, uci).unwrap();
        let mut a = pos.clone();
        a.play_unchecked(m);
        a
    }

    #[test]
    fn a_move_back_to_a_remembered_board_is_lowered_and_the_memory_fades_and_clears_with_a_new_game() {
        let start = position_from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
        assert_eq!(overlap(start.board(), start.board()), 1.0);
        let mut memory = Memory::default();
        memory.at_ply(0);
        memory.remember(0, &after(&start, "a1a2"));
        // Two plies on, black's king went back and forth: a2 again makes the same board.
        let moves: Vec<shakmaty::Move> = start.legal_moves().into_iter().collect();
        let mut p = vec![1.0 / moves.len() as f32; moves.len()];
        let h = Habituation::checked(0.5, 2.0).unwrap();
        memory.at_ply(2);
        memory.habituate(h, &start, &moves, &mut p, 2);
        let index = |u: &str| moves.iter().position(|m| flychess_brain::chess::uci(m) == u).unwrap();
        assert!(p[index("a1a2")] < p[index("a1a7")], "the remembered board is lowered");
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        // Older memories count less.
        let board = after(&start, "a1a2");
        assert!(memory.familiarity(board.board(), 2, 0.5) > memory.familiarity(board.board(), 6, 0.5));
        // A game that starts again forgets.
        memory.at_ply(0);
        assert_eq!(memory.familiarity(board.board(), 0, 0.5), 0.0);
        // Bad parameters are refused by name.
        assert!(Habituation::checked(0.0, 1.0).unwrap_err().to_string().contains("decay 0"));
        assert!(Habituation::checked(0.5, -1.0).unwrap_err().to_string().contains("weight -1"));
        assert!(Habituation::checked(0.5, f32::NAN).is_err());
    }

    /// A game where the policy likes best a rook move back to a board like one its side made
    /// two moves earlier: habituation turns the favourite to the move played, so tuning picks a
    /// weight above 0; with a policy that likes the played moves, weight 0 (the plain fly) is kept.
    #[test]
    fn tuning_finds_the_weight_that_makes_the_favourite_the_move_played() {
        // White: Ke1, Ra1; black: Kh8. The rook goes up and back, then to the 7th; black's king
        // walks along (so no position comes back exactly: the plain rule never steps in).
        let start = position_from_fen("7k/8/8/8/8/8/8/R3K3 w - - 0 1").unwrap();
        let line = ["a1a2", "h8g8", "a2a1", "g8f8", "a1a7", "f8e8"];
        let mut positions = vec![start.clone()];
        let mut moves = Vec::new();
        for uci in line {
            let pos = positions.last().unwrap().clone();
            let m = flychess_brain::chess::legal_by_uci(&pos, uci).unwrap();
            moves.push(m);
            positions.push(after(&pos, uci));
        }
        let game = TuningGame { positions: positions.clone(), moves: moves.clone() };
        // At the rook's third move its policy likes a1a2 (0.5: half the board white's first
        // move made) above the move played (a1a7, 0.3); elsewhere the move played has 0.9.
        let policy_of = |t: usize, pos: &Chess, back: &str| {
            let legal: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
            let n = legal.len() as f32;
            let (played, backed) = if back.is_empty() { (0.9, 0.0) } else { (0.3, 0.5) };
            let probability = legal
                .iter()
                .map(|m| {
                    let u = flychess_brain::chess::uci(m);
                    if Some(m) == moves.get(t) {
                        played
                    } else if u == back {
                        backed
                    } else {
                        (1.0 - played - backed) / (n - if back.is_empty() { 1.0 } else { 2.0 })
                    }
                })
                .collect();
            flychess_fly::readout::Policy { moves: legal, probability, value: 0.0 }
        };
        let backs = ["", "", "", "", "a1a2", ""];
        let policies: Vec<flychess_fly::readout::Policy> =
            positions.iter().enumerate().map(|(t, p)| policy_of(t, p, backs.get(t).copied().unwrap_or(""))).collect();
        let tuning = tune(std::slice::from_ref(&game), &policies).unwrap();
        assert!(tuning.chosen.weight > 0.0, "{:?}", tuning.chosen);
        let plain = tuning.grid.iter().find(|c| c.habituation.weight == 0.0).unwrap();
        let best = tuning.grid.iter().find(|c| c.habituation == tuning.chosen).unwrap();
        assert!(best.top1.value > plain.top1.value);
        // Policies that like the moves played already: nothing to gain, weight 0 is kept.
        let liked: Vec<flychess_fly::readout::Policy> = policies
            .iter()
            .enumerate()
            .map(|(t, p)| {
                let mut p = p.clone();
                if let Some(i) = moves.get(t).and_then(|m| p.moves.iter().position(|x| x == m)) {
                    p.probability[i] = 10.0;
                }
                p
            })
            .collect();
        assert_eq!(tune(&[game], &liked).unwrap().chosen.weight, 0.0);
    }
}
