//! From descending neurons to a move (SPEC §4, seed "The maths" 4): the DN rates averaged over the
//! read steps (9–12, or 12) feed four linear heads — 64 from-square, 64 to-square, 5 promotion
//! (none, q, r, b, n) and a value (tanh) — 1,314 × 134 weights and 134 biases. A legal move's score
//! is from + to + promotion in the mover's frame (black's moves mirrored), the probabilities are a
//! softmax over the legal moves only (an illegal move never gets a score), and the fly plays its
//! most probable move that does not bring back an earlier position of the game.

use serde::{Deserialize, Serialize};
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Move, Position, Role, uci::UciMove};

use flychess_brain::brain::simulator::Simulator;
use flychess_brain::brain::{Rates, STEPS};

pub const FROM: usize = 64;
pub const TO: usize = 64;
pub const PROMOTIONS: usize = 5;
/// Outputs of the four heads: from, to, promotion, value.
pub const OUTPUTS: usize = FROM + TO + PROMOTIONS + 1;

/// The four linear heads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Readout {
    /// Descending neurons read (their count is the input width).
    pub inputs: usize,
    /// Steps read, 0-based (8..=11 is steps 9–12).
    pub read_steps: Vec<usize>,
    /// `OUTPUTS × inputs`, row-major.
    pub weights: Vec<f32>,
    pub bias: Vec<f32>,
}

/// The heads' outputs for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Heads {
    pub from: [f32; FROM],
    pub to: [f32; TO],
    pub promotion: [f32; PROMOTIONS],
    /// In [−1, 1]: how the fly rates the position for the side to move.
    pub value: f32,
}

impl Readout {
    /// An untrained ("newborn") readout: small deterministic weights, zero biases.
    pub fn newborn(inputs: usize, read_steps: Vec<usize>, seed: u64) -> Readout {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let scale = 1.0 / (inputs.max(1) as f32).sqrt();
        let weights = (0..OUTPUTS * inputs)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
            })
            .collect();
        Readout { inputs, read_steps, weights, bias: vec![0.0; OUTPUTS] }
    }

    /// All weights and biases zero (every legal move equally likely, value 0).
    pub fn new_zero(inputs: usize) -> Readout {
        Readout { inputs, read_steps: Readout::default_steps(), weights: vec![0.0; OUTPUTS * inputs], bias: vec![0.0; OUTPUTS] }
    }

    /// Steps 9–12, the default.
    pub fn default_steps() -> Vec<usize> {
        (STEPS - 4..STEPS).collect()
    }

    pub fn heads(&self, d: &[f32]) -> Heads {
        assert_eq!(d.len(), self.inputs, "readout input width");
        let out: Vec<f32> = (0..OUTPUTS)
            .map(|o| self.bias[o] + self.weights[o * self.inputs..(o + 1) * self.inputs].iter().zip(d).map(|(w, x)| w * x).sum::<f32>())
            .collect();
        Heads {
            from: out[..FROM].try_into().expect("64"),
            to: out[FROM..FROM + TO].try_into().expect("64"),
            promotion: out[FROM + TO..FROM + TO + PROMOTIONS].try_into().expect("5"),
            value: libm::tanhf(out[OUTPUTS - 1]),
        }
    }
}

/// The readout's input for position `b` of a think: each descending neuron's rate averaged over
/// `steps` (0-based).
pub fn descending_features(rates: &Rates, b: usize, descending: &[u32], steps: &[usize]) -> Vec<f32> {
    descending.iter().map(|&j| steps.iter().map(|&t| rates.at(t, j as usize, b)).sum::<f32>() / steps.len().max(1) as f32).collect()
}

/// The readout's input for a batch of boards without keeping every step of every neuron, on the
/// CPU engine: `think_features_on` with no simulator.
pub fn think_features(
    brain: &flychess_brain::brain::Brain,
    boards: &[flychess_brain::chess::Planes],
    descending: &[u32],
    steps: &[usize],
) -> Vec<Vec<f32>> {
    think_features_on(None, brain, boards, descending, steps)
}

/// The readout's input for a batch of boards without keeping every step of every neuron: the brain
/// runs on `engine` (None: the CPU engine, with two buffers, working out only what the descending
/// neurons of the read steps depend on, `cpu::run_reading`), and those are averaged.
/// `[position][descending]`, equal to `descending_features` of a full think. Calls made at the
/// same time from several threads for the same brain and engine think as one batch (`together`),
/// with the same results.
pub fn think_features_on(
    engine: Option<&Simulator>,
    brain: &flychess_brain::brain::Brain,
    boards: &[flychess_brain::chess::Planes],
    descending: &[u32],
    steps: &[usize],
) -> Vec<Vec<f32>> {
    crate::together::think_together(crate::together::Kind::of(brain, descending, steps, engine), boards, |boards| {
        features_alone(engine, brain, boards, descending, steps)
    })
}

/// `think_features` for exactly these boards, in this thread, on the CPU engine.
pub fn think_features_alone(
    brain: &flychess_brain::brain::Brain,
    boards: &[flychess_brain::chess::Planes],
    descending: &[u32],
    steps: &[usize],
) -> Vec<Vec<f32>> {
    features_alone(None, brain, boards, descending, steps)
}

/// `think_features_on` for exactly these boards, in this thread: on `engine` when given, else on
/// the CPU engine, which works out only the rows the descending neurons depend on. The read steps
/// are summed in ascending order from 0, then divided by how many steps were asked for.
fn features_alone(
    engine: Option<&Simulator>,
    brain: &flychess_brain::brain::Brain,
    boards: &[flychess_brain::chess::Planes],
    descending: &[u32],
    steps: &[usize],
) -> Vec<Vec<f32>> {
    let (b, k) = (boards.len(), descending.len());
    let mut read_steps: Vec<usize> = steps.iter().copied().filter(|&t| t < flychess_brain::brain::STEPS).collect();
    read_steps.sort_unstable();
    read_steps.dedup();
    if read_steps.is_empty() {
        return vec![vec![0f32; k]; b];
    }
    let readings = match engine {
        Some(sim) => sim.read(brain, boards, descending, &read_steps),
        None => flychess_brain::brain::simulator::read_on_cpu(brain, boards, descending, &read_steps),
    }
    .expect("the readout's neurons and steps belong to its brain");
    let n = steps.len().max(1) as f32;
    (0..b)
        .map(|p| {
            let position = &readings[p * read_steps.len() * k..(p + 1) * read_steps.len() * k];
            (0..k).map(|i| position.chunks_exact(k).fold(0f32, |sum, step| sum + step[i]) / n).collect()
        })
        .collect()
}

/// A legal move's (from, to, promotion) in the mover's frame: black's squares mirrored, castling
/// as the king's two-square move, promotion 0 none, 1 q, 2 r, 3 b, 4 n.
pub fn move_code(m: &Move, mover: Color) -> (usize, usize, usize) {
    let UciMove::Normal { from, to, promotion } = m.to_uci(CastlingMode::Standard) else {
        unreachable!("standard chess has no drops or null moves")
    };
    let (from, to) = if mover == Color::White { (from, to) } else { (from.flip_vertical(), to.flip_vertical()) };
    let promotion = match promotion {
        None => 0,
        Some(Role::Queen) => 1,
        Some(Role::Rook) => 2,
        Some(Role::Bishop) => 3,
        Some(_) => 4,
    };
    (usize::from(from), usize::from(to), promotion)
}

/// The fly's probability for every legal move, in shakmaty's move order.
#[derive(Clone, Debug)]
pub struct Policy {
    pub moves: Vec<Move>,
    pub probability: Vec<f32>,
    pub value: f32,
}

/// Scores every legal move of `pos` and turns the scores into probabilities (softmax over the legal
/// moves only, no temperature).
pub fn policy(pos: &Chess, heads: &Heads) -> Policy {
    let mover = pos.turn();
    let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    let scores: Vec<f32> = moves
        .iter()
        .map(|m| {
            let (f, t, p) = move_code(m, mover);
            heads.from[f] + heads.to[t] + heads.promotion[p]
        })
        .collect();
    let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = scores.iter().map(|s| libm::expf(s - top)).collect();
    let total: f32 = exp.iter().sum();
    Policy { moves, probability: exp.iter().map(|e| e / total).collect(), value: heads.value }
}

/// A position's identity for repetition: placement, side to move, castling and en passant.
pub fn position_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The move the fly plays: its most probable move whose resulting position is not in `earlier`
/// (the keys of the game's positions so far); if every move repeats, the most probable anyway.
/// Returns the index into `policy.moves` and whether a repeating favourite was skipped.
pub fn choose(pos: &Chess, policy: &Policy, earlier: &[u64]) -> Option<(usize, bool)> {
    let mut order: Vec<usize> = (0..policy.moves.len()).collect();
    order.sort_by(|&a, &b| policy.probability[b].total_cmp(&policy.probability[a]));
    let best = *order.first()?;
    let fresh = order.into_iter().find(|&i| {
        let mut after = pos.clone();
        after.play_unchecked(policy.moves[i]);
        !earlier.contains(&position_key(&after))
    });
    Some(match fresh {
        Some(i) => (i, i != best),
        None => (best, false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::chess::{planes, position_from_fen};
    use shakmaty::{EnPassantMode as Ep, FromSetup, fen::Fen};

    fn heads(seed: u64) -> Heads {
        let r = Readout::newborn(10, Readout::default_steps(), seed);
        r.heads(&(0..10).map(|i| i as f32 / 10.0).collect::<Vec<_>>())
    }

    fn mirrored(pos: &Chess) -> Chess {
        let mut setup = pos.to_setup(Ep::Legal);
        setup.mirror();
        Chess::from_setup(setup, CastlingMode::Standard).unwrap()
    }

    #[test]
    fn a_position_and_its_colour_flipped_twin_get_mirrored_moves() {
        for fen in [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
            "8/P7/8/8/8/8/6k1/4K3 w - - 0 1",
        ] {
            let pos = position_from_fen(fen).unwrap();
            let twin = mirrored(&pos);
            assert_eq!(planes(&pos), planes(&twin), "the eye sees the same board");
            let h = heads(3);
            let (a, b) = (policy(&pos, &h), policy(&twin, &h));
            assert_eq!(a.moves.len(), b.moves.len());
            for (m, p) in a.moves.iter().zip(&a.probability) {
                let (f, t, pr) = move_code(m, pos.turn());
                let k = b.moves.iter().position(|n| move_code(n, twin.turn()) == (f, t, pr)).expect("a mirrored move");
                assert!((b.probability[k] - p).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn only_legal_moves_are_scored_and_they_sum_to_one() {
        let pos = position_from_fen("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let p = policy(&pos, &heads(1));
        let legal: Vec<Move> = pos.legal_moves().into_iter().collect();
        assert_eq!(p.moves, legal);
        assert!((p.probability.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(p.probability.iter().all(|&x| x > 0.0));
        // Promotions of one pawn differ only by the promotion head.
        let promos: Vec<usize> = p.moves.iter().filter(|m| m.promotion().is_some()).map(|m| move_code(m, Color::White).2).collect();
        assert!(promos.contains(&1) && promos.contains(&4));
    }

    #[test]
    fn the_fly_does_not_walk_into_a_repetition_unless_it_must() {
        let pos = position_from_fen("7k/8/8/8/8/8/8/K5R1 w - - 0 1").unwrap();
        let h = heads(5);
        let p = policy(&pos, &h);
        let (first, skipped) = choose(&pos, &p, &[]).unwrap();
        assert!(!skipped);
        // Pretend the favourite's result happened before: the next best is played.
        let mut after = pos.clone();
        after.play_unchecked(p.moves[first]);
        let (second, skipped) = choose(&pos, &p, &[position_key(&after)]).unwrap();
        assert!(skipped && second != first);
        // Every move repeats: the favourite anyway.
        let all: Vec<u64> = p
            .moves
            .iter()
            .map(|m| {
                let mut a = pos.clone();
                a.play_unchecked(*m);
                position_key(&a)
            })
            .collect();
        assert_eq!(choose(&pos, &p, &all).unwrap(), (first, false));
        let _ = Fen::from_position(&pos, Ep::Legal);
    }
}
