//! Two glances (issue 56; the seed's "Making it stronger", item 7), an experimental switch on a
//! readout fly. The brain runs once; the piece whose moves the fly likes most together is looked
//! at again: every photoreceptor of its square's patch of the eye gets `gain` times its drive,
//! and the brain runs a second time. The move is then the second think's favourite among that
//! piece's moves (`Among::ThePiece`) or among all moves (`Among::All`). The central complex keeps
//! a heading and steers towards a goal (Seelig and Jayaraman 2015), the closest a fly comes to
//! "look here, then there". Twice the thinks per move. The gain and which choice are chosen on
//! VAL (`flychess glances-tune`), kept by `tuned::glances`, and reported beside the plain fly
//! whichever way they come out. The second think runs on the CPU engine (the eye input is
//! changed before the steps: `cpu::run_reading_from_input`).

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position, Square};

use crate::error::{Error, Result};
use flychess_brain::brain::{Brain, STEPS};
use flychess_brain::chess::{Planes, planes};
use flychess_fly::readout::{Policy, Readout, policy};

/// Where the second think's move is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Among {
    /// The attended piece's moves.
    ThePiece,
    /// Every legal move.
    All,
}

/// The switch's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Glances {
    pub gain: f32,
    pub among: Among,
}

impl Glances {
    pub fn checked(gain: f32, among: Among) -> Result<Glances> {
        if !(gain.is_finite() && gain > 0.0) {
            return Err(Error::Invalid(format!("two glances' gain {gain}: it must be a number above 0")));
        }
        Ok(Glances { gain, among })
    }

    pub fn label(&self) -> String {
        format!("g{}-{}", self.gain, if self.among == Among::ThePiece { "piece" } else { "all" })
    }
}

/// The square of the piece whose legal moves the policy gives the most probability together.
pub fn attended(p: &Policy) -> Option<Square> {
    let mut by_square = [0f32; 64];
    for (m, &q) in p.moves.iter().zip(&p.probability) {
        by_square[usize::from(m.from()?)] += q;
    }
    (0..64).max_by(|&a, &b| by_square[a].total_cmp(&by_square[b])).filter(|&s| by_square[s] > 0.0).map(|s| Square::new(s as u32))
}

/// The readout's features of each board thought with its square `attended` (in the board's own
/// frame: the square as the mover's eye sees it) driven `gain` times harder, on the CPU engine:
/// the mean of the read steps, as `readout::think_features` gives them.
pub fn attending_features(brain: &Brain, boards: &[(Planes, Square)], gain: f32, descending: &[u32], steps: &[usize]) -> Vec<Vec<f32>> {
    use rayon::prelude::*;
    let k = descending.len();
    let mut read_steps: Vec<usize> = steps.iter().copied().filter(|&t| t < STEPS).collect();
    read_steps.sort_unstable();
    read_steps.dedup();
    let n = steps.len().max(1) as f32;
    boards
        .par_chunks(16)
        .flat_map_iter(|chunk| {
            let b = chunk.len();
            let x = attended_input(brain, chunk, gain);
            let mut sums = vec![0f32; b * k];
            if let Some(&first) = read_steps.first() {
                flychess_brain::brain::cpu::run_reading_from_input(brain, &x, b, descending, first, |t, rates| {
                    if read_steps.contains(&t) {
                        for p in 0..b {
                            for i in 0..k {
                                sums[p * k + i] += rates[i * b + p];
                            }
                        }
                    }
                });
            }
            sums.chunks(k.max(1)).map(|s| s.iter().map(|v| v / n).collect::<Vec<f32>>()).collect::<Vec<_>>().into_iter()
        })
        .collect()
}

/// The eye's input for `boards` (`Brain::eye_input`'s layout, `[cell · batch + position]`), each
/// board's attended square (in its own frame) driven `gain` times harder.
pub fn attended_input(brain: &Brain, boards: &[(Planes, Square)], gain: f32) -> Vec<f32> {
    let b = boards.len();
    let planes: Vec<Planes> = boards.iter().map(|(p, _)| *p).collect();
    let mut x = brain.eye_input(&planes);
    for (c, cell) in brain.eye.iter().enumerate() {
        for (p, (_, square)) in boards.iter().enumerate() {
            if cell.square as usize == usize::from(*square) {
                x[c * b + p] *= gain;
            }
        }
    }
    x
}

/// The square in the mover's frame (what the eye sees: black's board is flipped).
pub fn eye_square(pos: &Chess, square: Square) -> Square {
    if pos.turn() == Color::White { square } else { square.flip_vertical() }
}

/// What two glances saw in one position.
#[derive(Clone, Debug)]
pub struct TwoLooks {
    pub first: Policy,
    /// The attended square (None: no legal move).
    pub square: Option<Square>,
    pub second: Policy,
    /// The move chosen, an index into the policies' moves.
    pub chosen: usize,
}

/// The move two glances with `g` pick: the second think's favourite among the attended piece's
/// moves or among all, by `g.among`.
pub fn pick(first: &Policy, second: &Policy, square: Option<Square>, among: Among) -> Option<usize> {
    let allowed = |i: usize| among == Among::All || first.moves[i].from() == square;
    (0..second.moves.len()).filter(|&i| allowed(i)).max_by(|&a, &b| second.probability[a].total_cmp(&second.probability[b]))
}

/// The move two glances play in a game: `picked` (an index into `second`'s moves), unless it
/// brings back one of the game's `earlier` positions, where the plain rule over the second
/// look (`readout::choose`) finds another.
pub fn unless_it_repeats(pos: &Chess, second: &Policy, picked: usize, earlier: &[u64]) -> usize {
    let mut after = pos.clone();
    after.play_unchecked(second.moves[picked]);
    if earlier.contains(&flychess_fly::readout::position_key(&after)) {
        flychess_fly::readout::choose(pos, second, earlier).map_or(picked, |c| c.0)
    } else {
        picked
    }
}

/// Two glances at each of `positions` with the first thinks' `firsts` already made.
pub fn second_looks(
    brain: &Brain,
    readout: &Readout,
    descending: &[u32],
    positions: &[Chess],
    firsts: &[Policy],
    g: Glances,
) -> Vec<TwoLooks> {
    let squares: Vec<Option<Square>> = firsts.iter().map(attended).collect();
    let boards: Vec<(Planes, Square)> =
        positions.iter().zip(&squares).map(|(pos, s)| (planes(pos), eye_square(pos, s.unwrap_or(Square::A1)))).collect();
    let features = attending_features(brain, &boards, g.gain, descending, &readout.read_steps);
    positions
        .iter()
        .zip(firsts)
        .zip(squares)
        .zip(features)
        .map(|(((pos, first), square), f)| two_looks(readout, pos, first, square, &f, g))
        .collect()
}

/// Two glances at `pos` with its first think `first` made, one position alone: `think` gives
/// the readout's features of the second look at the attended square (as the board shows it; A1
/// when nothing is attended), as `attending_features` does.
pub fn second_look(readout: &Readout, pos: &Chess, first: &Policy, g: Glances, think: impl FnOnce(Square) -> Vec<f32>) -> TwoLooks {
    let square = attended(first);
    let features = think(square.unwrap_or(Square::A1));
    two_looks(readout, pos, first, square, &features, g)
}

/// What two glances saw, from the second look's features `f`.
fn two_looks(readout: &Readout, pos: &Chess, first: &Policy, square: Option<Square>, f: &[f32], g: Glances) -> TwoLooks {
    let second = policy(pos, &readout.heads(f));
    let chosen = pick(first, &second, square, g.among).unwrap_or(0);
    TwoLooks { first: first.clone(), square, second, chosen }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::chess::position_from_fen;

    #[test]
    fn the_attended_piece_is_the_one_whose_moves_are_liked_most_together_and_pick_keeps_to_it() {
        let pos = position_from_fen("4k3/8/8/8/8/8/8/R3K2N w - - 0 1").unwrap();
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        // The knight's two moves get 0.3 each; the favourite single move is a king move (0.35).
        let probability: Vec<f32> = moves
            .iter()
            .map(|m| match m.from() {
                Some(Square::H1) => 0.3,
                Some(Square::E1) if m.to() == Square::D2 => 0.35,
                _ => 0.05 / (moves.len() - 3) as f32,
            })
            .collect();
        let first = Policy { moves: moves.clone(), probability, value: 0.0 };
        assert_eq!(attended(&first), Some(Square::H1));
        let i = pick(&first, &first, Some(Square::H1), Among::ThePiece).unwrap();
        assert_eq!(moves[i].from(), Some(Square::H1));
        let j = pick(&first, &first, Some(Square::H1), Among::All).unwrap();
        assert_eq!((moves[j].from(), moves[j].to()), (Some(Square::E1), Square::D2));
        // Black's squares are seen flipped.
        let black = position_from_fen("4k3/8/8/8/8/8/8/R3K2N b - - 0 1").unwrap();
        assert_eq!(eye_square(&black, Square::E8), Square::E1);
        assert!(Glances::checked(0.0, Among::All).is_err() && Glances::checked(f32::NAN, Among::All).is_err());
    }

    /// At gain 1 the attending think is the plain think, number for number; a gain on the
    /// square a photoreceptor sits on changes what the descending neurons read, a gain on a
    /// square no photoreceptor sees changes nothing.
    #[test]
    fn a_gain_of_one_is_the_plain_think_and_a_gain_on_a_seen_square_changes_the_readings() {
        let small = flychess_learning::bptt::check::small_brain(3);
        let pos = position_from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
        let board = planes(&pos);
        let steps = [8usize, 9, 10, 11];
        let plain = flychess_fly::readout::think_features_alone(&small.brain, &[board], &small.descending, &steps);
        // A square where a photoreceptor sees something on this board, and one none sees.
        let x = small.brain.eye_input(&[board]);
        let seen = small.brain.eye.iter().zip(&x).find(|(_, v)| **v > 0.0).map(|(c, _)| c.square as u32).unwrap();
        assert!(small.brain.eye.iter().all(|c| c.square != 0));
        let at = |square: u32, gain: f32| {
            attending_features(&small.brain, &[(board, Square::new(square))], gain, &small.descending, &steps).remove(0)
        };
        assert_eq!(at(seen, 1.0), plain[0]);
        assert_eq!(at(0, 4.0), plain[0]);
        let changed = at(seen, 4.0);
        assert!(changed.iter().zip(&plain[0]).any(|(a, b)| (a - b).abs() > 1e-6), "{changed:?} vs {:?}", plain[0]);
    }
}
