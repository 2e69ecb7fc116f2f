//! Scoring a readout against its teacher (SPEC §5, seed "The maths" 5 and 7): what a position asks
//! of the readout (`Target`: the legal moves, the target shares share(m_k) ∝ exp((win_k − win_1)/τ)
//! with τ = 2.5, the value 2·win_1/100 − 1, Stockfish's best and the good moves), the per-position
//! outcome (loss, top-1, good move) and its means (`Metrics`), the favourite move, the board-linear
//! control's input, the gradient written out by hand (the reference every fit is checked against),
//! and where a fit stood (`FitState`, kept in a fly's file so a fit resumes). Both the arena (HOLD
//! figures, breakdowns, search) and learning (the fits) score with it, so it lives below both.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::Position;

use crate::data::Row;
use crate::error::{Error, Result};
use crate::grading::win_percent;
use crate::readout::{FROM, OUTPUTS, Readout, TO, move_code};
use flychess_brain::chess::{planes, position_from_fen};

pub const TAU: f64 = 2.5;
/// A pick within this many win-% points of Stockfish's best counts as a good move.
pub const GOOD_MOVE_MARGIN: f64 = 1.0;

/// What one position asks of the readout.
#[derive(Clone, Debug)]
pub struct Target {
    /// Legal moves as (from, to, promotion) in the mover's frame.
    pub legal: Vec<(u16, u16, u8)>,
    /// Target share of each legal move (sums to 1).
    pub share: Vec<f32>,
    pub value: f32,
    /// Index (in `legal`) of Stockfish's best move.
    pub best: usize,
    /// Indices of the moves within 1 win-% of the best (among the labelled ones).
    pub good: Vec<usize>,
}

/// The win chance a finishing lesson gives a score: centipawns as usual (at most 97.5 % once
/// clipped), a forced mate above every centipawn score and the sooner the better (mate in 1:
/// 100 %, in 2: 98.75 %, in 3: 98.1 %, …), being mated mirrored below every centipawn score.
pub fn lesson_win_percent(score: crate::grading::Score) -> f64 {
    use crate::grading::{CP_CLIP, Score};
    let top = win_percent(CP_CLIP);
    match score {
        Score::Mate(n) if n > 0 => top + (100.0 - top) * 0.5f64.powi(n - 1),
        Score::Mate(n) => (100.0 - top) * (1.0 - 0.5f64.powi((-n).max(1) - 1)),
        Score::Cp(cp) => win_percent(cp as f64),
    }
}

impl Target {
    pub fn of(row: &Row) -> Result<Target> {
        Target::scored(row, |s| win_percent(s.as_cp()))
    }

    /// A finishing lesson's target (seed "Making it stronger" 2): like `of`, but mates are ranked
    /// by distance (`lesson_win_percent`), so the quickest mate gets the largest share.
    pub fn lesson(row: &Row) -> Result<Target> {
        Target::scored(row, lesson_win_percent)
    }

    fn scored(row: &Row, win_of: impl Fn(crate::grading::Score) -> f64) -> Result<Target> {
        let pos = position_from_fen(&row.fen)?;
        let mover = pos.turn();
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        let legal: Vec<(u16, u16, u8)> = moves
            .iter()
            .map(|m| {
                let (f, t, p) = move_code(m, mover);
                (f as u16, t as u16, p as u8)
            })
            .collect();
        let uci: Vec<String> = moves.iter().map(flychess_brain::chess::uci).collect();
        let mut share = vec![0f32; legal.len()];
        let win: Vec<f64> = row.moves.iter().map(|m| win_of(m.score)).collect();
        let best_win = win.first().copied().ok_or_else(|| Error::Invalid(format!("{}: no labelled move", row.fen)))?;
        let mut best = None;
        let mut good = Vec::new();
        let mut total = 0.0;
        for (k, m) in row.moves.iter().enumerate() {
            let i = uci
                .iter()
                .position(|u| *u == m.mv.uci())
                .ok_or_else(|| Error::Invalid(format!("{}: labelled move {} is not legal", row.fen, m.mv.uci())))?;
            let s = libm::exp((win[k] - best_win) / TAU);
            share[i] += s as f32;
            total += s;
            if k == 0 {
                best = Some(i);
            }
            if best_win - win[k] <= GOOD_MOVE_MARGIN {
                good.push(i);
            }
        }
        for s in &mut share {
            *s /= total as f32;
        }
        Ok(Target { legal, share, value: (2.0 * best_win / 100.0 - 1.0) as f32, best: best.expect("one move"), good })
    }
}

/// The 768 board planes of a row's position (the board-linear control's input).
pub fn board_features(row: &Row) -> Result<Vec<f32>> {
    let p = planes(&position_from_fen(&row.fen)?);
    Ok(p.iter().flatten().map(|&b| if b { 1.0 } else { 0.0 }).collect())
}

/// Loss, top-1 and good-move rate of a readout on a set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub loss: f64,
    pub policy_loss: f64,
    pub top1: f64,
    pub good: f64,
    pub positions: usize,
}

/// Per-position forward: probabilities over legal moves and the value.
fn forward(r: &Readout, x: &[f32], t: &Target) -> (Vec<f32>, f32, [f32; OUTPUTS]) {
    let mut out = [0f32; OUTPUTS];
    for (o, v) in out.iter_mut().enumerate() {
        *v = r.bias[o] + r.weights[o * r.inputs..(o + 1) * r.inputs].iter().zip(x).map(|(w, a)| w * a).sum::<f32>();
    }
    let scores: Vec<f32> =
        t.legal.iter().map(|&(f, to, p)| out[f as usize] + out[FROM + to as usize] + out[FROM + TO + p as usize]).collect();
    let top = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exp: Vec<f32> = scores.iter().map(|s| libm::expf(s - top)).collect();
    let total: f32 = exp.iter().sum();
    (exp.iter().map(|e| e / total).collect(), libm::tanhf(out[OUTPUTS - 1]), out)
}

/// Loss of one position: cross-entropy over legal moves plus squared value error.
fn position_loss(p: &[f32], v: f32, t: &Target) -> (f64, f64) {
    let ce: f64 = t.share.iter().zip(p).filter(|(s, _)| **s > 0.0).map(|(s, q)| -(*s as f64) * libm::log(q.max(1e-30) as f64)).sum();
    (ce + ((v - t.value) as f64).powi(2), ce)
}

/// One position's outcome: its loss, its policy loss, and whether the readout's favourite is
/// Stockfish's best move and one of the good moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PositionOutcome {
    pub loss: f64,
    pub policy_loss: f64,
    pub top1: bool,
    pub good: bool,
}

/// Each position's outcome (what the 95 % intervals of `stats` are computed from).
pub fn outcomes(r: &Readout, x: &[f32], targets: &[Target]) -> Vec<PositionOutcome> {
    let d = r.inputs;
    targets
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let (p, v, _) = forward(r, &x[i * d..(i + 1) * d], t);
            let (loss, policy_loss) = position_loss(&p, v, t);
            let pick = (0..p.len()).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0);
            PositionOutcome { loss, policy_loss, top1: pick == t.best, good: t.good.contains(&pick) }
        })
        .collect()
}

/// Each position's favourite move: its index in the target's `legal` (the position's legal moves
/// in shakmaty's order).
pub fn favourites(r: &Readout, x: &[f32], targets: &[Target]) -> Vec<usize> {
    let d = r.inputs;
    targets
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let (p, _, _) = forward(r, &x[i * d..(i + 1) * d], t);
            (0..p.len()).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap_or(0)
        })
        .collect()
}

/// The means of `outcomes`.
pub fn summarise(per: &[PositionOutcome]) -> Metrics {
    let n = per.len().max(1) as f64;
    Metrics {
        loss: per.iter().map(|p| p.loss).sum::<f64>() / n,
        policy_loss: per.iter().map(|p| p.policy_loss).sum::<f64>() / n,
        top1: per.iter().filter(|p| p.top1).count() as f64 / n,
        good: per.iter().filter(|p| p.good).count() as f64 / n,
        positions: per.len(),
    }
}

pub fn evaluate(r: &Readout, x: &[f32], targets: &[Target]) -> Metrics {
    summarise(&outcomes(r, x, targets))
}

/// Mean loss and its gradient (weights, biases) over a batch, written out by hand: the reference the
/// burn fit (`burn_fit`) is tested against.
pub fn gradient(r: &Readout, x: &[f32], targets: &[Target]) -> (f64, Vec<f32>, Vec<f32>) {
    let d = r.inputs;
    let zero = || (0f64, vec![0f32; OUTPUTS * d], vec![0f32; OUTPUTS]);
    let (loss, mut gw, mut gb) = targets
        .par_iter()
        .enumerate()
        .fold(zero, |(mut loss, mut gw, mut gb), (i, t)| {
            let xi = &x[i * d..(i + 1) * d];
            let (p, v, _) = forward(r, xi, t);
            loss += position_loss(&p, v, t).0;
            // d loss / d output: softmax − target, summed into the heads each move uses.
            let mut delta = [0f32; OUTPUTS];
            for (k, &(f, to, pr)) in t.legal.iter().enumerate() {
                let g = p[k] - t.share[k];
                delta[f as usize] += g;
                delta[FROM + to as usize] += g;
                delta[FROM + TO + pr as usize] += g;
            }
            delta[OUTPUTS - 1] = 2.0 * (v - t.value) * (1.0 - v * v);
            for (o, &g) in delta.iter().enumerate() {
                if g != 0.0 {
                    gb[o] += g;
                    for (w, &a) in gw[o * d..(o + 1) * d].iter_mut().zip(xi) {
                        *w += g * a;
                    }
                }
            }
            (loss, gw, gb)
        })
        .reduce(zero, |(la, mut wa, mut ba), (lb, wb, bb)| {
            for (a, b) in wa.iter_mut().zip(&wb) {
                *a += b;
            }
            for (a, b) in ba.iter_mut().zip(&bb) {
                *a += b;
            }
            (la + lb, wa, ba)
        });
    let n = targets.len().max(1) as f32;
    gw.iter_mut().for_each(|g| *g /= n);
    gb.iter_mut().for_each(|g| *g /= n);
    (loss / n as f64, gw, gb)
}

/// Where a fit stood after a pass, beside its best readout: all a resumed fit needs to go on
/// exactly as the unbroken fit would have (the same passes, the same steps, the same readout).
#[derive(Clone, Debug, PartialEq)]
pub struct FitState {
    /// Passes done.
    pub passes: usize,
    /// The step size for the next pass (halved after each pass that did not improve).
    pub learning_rate: f32,
    /// Passes in a row that did not improve.
    pub misses: usize,
    /// The best readout's VAL figures.
    pub best_val: Metrics,
    /// Adam's moments (`BurnFit::adam_state`) when the last pass improved; None after a pass that
    /// did not (the fit went back to the best readout with a fresh Adam).
    pub adam: Option<Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{MoveCode, MoveLabel};
    use crate::grading::Score;

    fn row(fen: &str, moves: &[(&str, i32)]) -> Row {
        let labels = moves.iter().map(|(u, cp)| MoveLabel { mv: MoveCode::parse_uci(u).unwrap(), score: Score::Cp(*cp), wdl: None });
        Row { fen: fen.into(), game: 1, ply: 1, legal: 20, moves: labels.collect() }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn lessons_prefer_the_quickest_mate_and_starve_the_stalemate() {
        // White: Kb6, Qc1; Black: Ka8. Qc8# mates at once; Qc7 stalemates; Qh1+ mates a move later.
        let fen = "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1";
        let labelled = [("c1c8", Score::Mate(1)), ("c1h1", Score::Mate(2)), ("c1c4", Score::Mate(3)), ("c1c7", Score::Cp(0))];
        let r = Row {
            fen: fen.into(),
            game: 1,
            ply: 1,
            legal: 0,
            moves: labelled.iter().map(|(u, s)| MoveLabel { mv: MoveCode::parse_uci(u).unwrap(), score: *s, wdl: None }).collect(),
        };
        let lesson = Target::lesson(&r).unwrap();
        let plain = Target::of(&r).unwrap();
        let share = |t: &Target, u: &str| {
            t.share[t.legal.iter().position(|&(f, to, _)| MoveCode { from: f as u8, to: to as u8, promotion: 0 }.uci() == u).unwrap()]
        };
        assert!(share(&lesson, "c1c8") > share(&lesson, "c1h1") && share(&lesson, "c1h1") > share(&lesson, "c1c4"));
        assert!((share(&plain, "c1c8") - share(&plain, "c1h1")).abs() < 1e-6, "the plain target cannot tell mates apart");
        assert!(share(&lesson, "c1c7") < 1e-6, "the stalemate is all but excluded");
        assert!(lesson_win_percent(Score::Mate(9)) > lesson_win_percent(Score::Cp(5000)));
        assert!(lesson_win_percent(Score::Mate(-1)) < lesson_win_percent(Score::Mate(-4)));
        assert!(lesson_win_percent(Score::Mate(-9)) < lesson_win_percent(Score::Cp(-5000)));
    }

    #[test]
    fn targets_share_by_win_chance() {
        let t = Target::of(&row(START, &[("e2e4", 30), ("d2d4", 30), ("a2a3", -200)])).unwrap();
        assert_eq!(t.legal.len(), 20);
        assert!((t.share.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let s = |u: &str| {
            t.share[t.legal.iter().position(|&(f, to, _)| MoveCode { from: f as u8, to: to as u8, promotion: 0 }.uci() == u).unwrap()]
        };
        assert!((s("e2e4") - s("d2d4")).abs() < 1e-7);
        assert!(s("a2a3") < 1e-3 && s("a2a3") > 0.0, "{}", s("a2a3"));
        assert_eq!(s("g1f3"), 0.0);
        assert_eq!(t.good.len(), 2);
        assert!((t.value - (2.0 * win_percent(30.0) / 100.0 - 1.0) as f32).abs() < 1e-6);
        assert!(Target::of(&row(START, &[("e2e5", 0)])).is_err(), "an illegal label is an error");
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let rows = [
            row(START, &[("e2e4", 30), ("g1f3", 20)]),
            row("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", &[("g1f3", 40)]),
        ];
        let targets: Vec<Target> = rows.iter().map(|r| Target::of(r).unwrap()).collect();
        let d = 6;
        let x: Vec<f32> = (0..2 * d).map(|i| (i as f32 * 0.37).sin().abs()).collect();
        let r = Readout::newborn(d, vec![11], 4);
        let (_, gw, gb) = gradient(&r, &x, &targets);
        let loss = |r: &Readout| {
            let per: f64 = targets
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let (p, v, _) = forward(r, &x[i * d..(i + 1) * d], t);
                    position_loss(&p, v, t).0
                })
                .sum();
            per / 2.0
        };
        for (o, k) in [(4usize, 2usize), (FROM + 28, 0), (FROM + TO, 5), (OUTPUTS - 1, 3)] {
            let h = 1e-2;
            let mut a = r.clone();
            a.weights[o * d + k] += h;
            let mut b = r.clone();
            b.weights[o * d + k] -= h;
            let numeric = (loss(&a) - loss(&b)) / (2.0 * h as f64);
            assert!((numeric - gw[o * d + k] as f64).abs() < 2e-3, "w[{o},{k}]: {numeric} vs {}", gw[o * d + k]);
        }
        let mut a = r.clone();
        a.bias[12] += 1e-2;
        let mut b = r.clone();
        b.bias[12] -= 1e-2;
        assert!(((loss(&a) - loss(&b)) / 2e-2 - gb[12] as f64).abs() < 2e-3);
    }
}
