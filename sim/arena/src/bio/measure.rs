//! Measuring the dopamine fly the way the seed measured it (seed "Which rule teaches it", "The
//! maths" 10): on held-out (good, bad) pairs, how often the board after Stockfish's move gets the
//! higher vote (a tie counts half); whether the same pairs scored twice agree (here the second
//! scoring runs in another order and other batch sizes, which must change nothing); harder pairs
//! (Stockfish's second best as the bad move); top-1 over all legal moves; and how much a linear
//! readout could get out of the same cells at best: a logistic regression on the Kenyon cells'
//! r̂ differences, and the same on the descending neurons', its L2 penalty chosen on VAL pairs and
//! reported on HOLD.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::BioBrain;
use super::learn::{Lesson, after, legal_move, lesson};
use crate::error::Result;
use flychess_brain::chess::{Planes, position_from_fen};
use flychess_fly::data::Row;
use flychess_fly::stats::Dice;
use flychess_fly::stats::{self, Estimate};
use shakmaty::Position;

/// The seed of the evaluation pairs' bad moves (the same pairs for every fly).
pub const EVAL_SEED: u64 = 1;

/// Held-out pairs the must-show figures are measured on.
pub const HOLD_PAIRS: usize = 2_048;

/// The dice of row `i`'s bad move: the same whichever rows come before it.
pub fn row_dice(seed: u64, i: usize) -> Dice {
    Dice::new(seed.wrapping_mul(0x100_0003).wrapping_add(i as u64 + 1))
}

/// Up to `want` pairs from `rows` in order (rows without a second move skipped): the board after
/// the best move and after a random other one (`harder`: the second best).
pub fn pairs(rows: &[Row], seed: u64, harder: bool, want: usize) -> Result<Vec<Lesson>> {
    let mut out = Vec::with_capacity(want.min(rows.len()));
    for (i, row) in rows.iter().enumerate() {
        if out.len() >= want {
            break;
        }
        if let Some(l) = lesson(row, &mut row_dice(seed, i), harder)? {
            out.push(l);
        }
    }
    Ok(out)
}

/// (A(good), A(bad)) of every pair, `chunk` pairs a look (their good boards, then their bad ones).
pub fn score(bio: &BioBrain, m: &[f32], pairs: &[Lesson], chunk: usize, progress: &(dyn Fn(usize) + Sync)) -> Vec<(f32, f32)> {
    let mut out = Vec::with_capacity(pairs.len());
    for c in pairs.chunks(chunk.max(1)) {
        let boards: Vec<Planes> = c.iter().map(|l| l.good).chain(c.iter().map(|l| l.bad)).collect();
        let v = bio.look(m, &boards).vote;
        out.extend((0..c.len()).map(|b| (v[b], v[c.len() + b])));
        progress(out.len());
    }
    out
}

/// Each pair's score: 1 when the good board has the higher vote, ½ on a tie, else 0.
pub fn right(scores: &[(f32, f32)]) -> Vec<f64> {
    scores
        .iter()
        .map(|&(g, b)| {
            if g > b {
                1.0
            } else if g == b {
                0.5
            } else {
                0.0
            }
        })
        .collect()
}

/// How many pairs' comparisons came out differently in two scorings.
pub fn flips(a: &[(f32, f32)], b: &[(f32, f32)]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x.0.total_cmp(&x.1) != y.0.total_cmp(&y.1)).count()
}

/// Pairs right with its 95 % interval.
pub fn pairs_right(scores: &[(f32, f32)]) -> Estimate {
    stats::mean(&right(scores))
}

/// The same pairs scored a second time: in reverse order, `chunk` pairs a look (another batch
/// size, so each board shares its think with other boards): the flips against `first`.
pub fn rescore_flips(bio: &BioBrain, m: &[f32], pairs: &[Lesson], first: &[(f32, f32)], chunk: usize) -> usize {
    let reversed: Vec<Lesson> = pairs.iter().rev().cloned().collect();
    let mut again = score(bio, m, &reversed, chunk, &|_| {});
    again.reverse();
    flips(first, &again)
}

/// Top-1 over all legal moves on `rows` (rows without a label skipped): how often the highest
/// vote is Stockfish's best move. Boards of several positions share a look. (hits, positions).
pub fn top1(bio: &BioBrain, m: &[f32], rows: &[Row], progress: &(dyn Fn(usize) + Sync)) -> Result<(usize, usize)> {
    let (mut hits, mut n) = (0, 0);
    let mut pending: Vec<(usize, usize)> = Vec::new(); // (best move's index, moves) per position
    let mut boards: Vec<Planes> = Vec::new();
    let flush = |pending: &mut Vec<(usize, usize)>, boards: &mut Vec<Planes>, hits: &mut usize| {
        if boards.is_empty() {
            return;
        }
        let v = bio.look(m, boards).vote;
        let mut at = 0;
        for &(best, count) in pending.iter() {
            let votes = &v[at..at + count];
            let top = (0..count).max_by(|&a, &b| votes[a].total_cmp(&votes[b]).then(b.cmp(&a))).expect("a move");
            *hits += usize::from(top == best);
            at += count;
        }
        pending.clear();
        boards.clear();
    };
    for row in rows {
        let Some(label) = row.moves.first() else { continue };
        let pos = position_from_fen(&row.fen)?;
        let us = pos.turn();
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        let Some(best) = legal_move(&pos, &label.mv.uci()).and_then(|b| moves.iter().position(|m| *m == b)) else { continue };
        boards.extend(moves.iter().map(|&mv| after(&pos, mv, us)));
        pending.push((best, moves.len()));
        n += 1;
        if boards.len() >= 2 * super::LOOK_CHUNK {
            flush(&mut pending, &mut boards, &mut hits);
            progress(n);
        }
    }
    flush(&mut pending, &mut boards, &mut hits);
    progress(n);
    Ok((hits, n))
}

/// Each pair's feature difference (good − bad): the Kenyon cells' r̂ at step 12 and the
/// descending neurons' mean of steps 9–12, flat `[pair · dim + i]`.
pub fn differences(
    bio: &BioBrain,
    m: &[f32],
    pairs: &[Lesson],
    descending: &[u32],
    progress: &(dyn Fn(usize) + Sync),
) -> (Vec<f32>, Vec<f32>) {
    let (k, d) = (bio.body.kenyon.len(), descending.len());
    let (mut kc, mut dn) = (Vec::with_capacity(pairs.len() * k), Vec::with_capacity(pairs.len() * d));
    let chunk = super::LOOK_CHUNK / 2;
    for (c, group) in pairs.chunks(chunk).enumerate() {
        let boards: Vec<Planes> = group.iter().map(|l| l.good).chain(group.iter().map(|l| l.bad)).collect();
        let g = bio.glance_reading(m, &boards, false, descending);
        let n = group.len();
        for b in 0..n {
            kc.extend((0..k).map(|i| g.kc(i, b) - g.kc(i, n + b)));
            dn.extend((0..d).map(|i| g.reading[i * g.batch + b] - g.reading[i * g.batch + n + b]));
        }
        progress((c + 1) * chunk);
    }
    (kc, dn)
}

/// A linear readout's best on the pairs: P(good beats bad) = sigmoid(a · (f_good − f_bad)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The features' dimension (Kenyon cells or descending neurons).
    pub features: usize,
    pub train_pairs: usize,
    /// The L2 penalty chosen on VAL pairs, and every penalty's VAL score.
    pub l2: f64,
    pub val_by_l2: Vec<(f64, f64)>,
    /// Held-out pairs right with its 95 % interval.
    pub hold: Estimate,
}

/// The penalties tried (the seed's three).
pub const L2_PENALTIES: [f64; 3] = [1e-4, 1e-3, 1e-2];

/// Fits the logistic regression on `train` (flat differences of dimension `dim`) for each L2
/// penalty, chooses the penalty on `val`, reports on `hold`.
pub fn logistic_ceiling(dim: usize, train: &[f32], val: &[f32], hold: &[f32]) -> Ceiling {
    let fits: Vec<(f64, Vec<f32>, f64)> = L2_PENALTIES
        .iter()
        .map(|&l2| {
            let a = fit_logistic(dim, train, l2 as f32, 300);
            let v = stats::mean(&logistic_right(dim, &a, val)).value;
            (l2, a, v)
        })
        .collect();
    let best = fits.iter().max_by(|a, b| a.2.total_cmp(&b.2).then(b.0.total_cmp(&a.0))).expect("three penalties");
    Ceiling {
        features: dim,
        train_pairs: train.len() / dim.max(1),
        l2: best.0,
        val_by_l2: fits.iter().map(|f| (f.0, f.2)).collect(),
        hold: stats::mean(&logistic_right(dim, &best.1, hold)),
    }
}

/// Each pair's score under weights `a`: 1 when a · d > 0, ½ at 0, else 0.
pub fn logistic_right(dim: usize, a: &[f32], pairs: &[f32]) -> Vec<f64> {
    pairs
        .par_chunks(dim)
        .map(|d| {
            let z: f32 = d.iter().zip(a).map(|(x, w)| x * w).sum();
            if z > 0.0 {
                1.0
            } else if z == 0.0 {
                0.5
            } else {
                0.0
            }
        })
        .collect()
}

/// Minimises mean softplus(−a · dᵢ) + l2 · |a|² by full-batch Adam (`iterations` steps, rate 0.01).
pub fn fit_logistic(dim: usize, pairs: &[f32], l2: f32, iterations: usize) -> Vec<f32> {
    let n = (pairs.len() / dim.max(1)).max(1);
    let mut a = vec![0f32; dim];
    let (mut m1, mut m2) = (vec![0f32; dim], vec![0f32; dim]);
    let (lr, b1, b2, eps) = (0.01f32, 0.9f32, 0.999f32, 1e-8f32);
    for it in 1..=iterations {
        let grad = pairs
            .par_chunks(dim)
            .fold(
                || vec![0f32; dim],
                |mut g, d| {
                    let z: f32 = d.iter().zip(&a).map(|(x, w)| x * w).sum();
                    // d/dz softplus(−z) = −sigmoid(−z)
                    let s = -super::sigmoid(-z);
                    for (gi, x) in g.iter_mut().zip(d) {
                        *gi += s * x;
                    }
                    g
                },
            )
            .reduce(
                || vec![0f32; dim],
                |mut x, y| {
                    x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
                    x
                },
            );
        let (c1, c2) = (1.0 - b1.powi(it as i32), 1.0 - b2.powi(it as i32));
        for i in 0..dim {
            let g = grad[i] / n as f32 + 2.0 * l2 * a[i];
            m1[i] = b1 * m1[i] + (1.0 - b1) * g;
            m2[i] = b2 * m2[i] + (1.0 - b2) * g * g;
            a[i] -= lr * (m1[i] / c1) / ((m2[i] / c2).sqrt() + eps);
        }
    }
    a
}

/// Sizes of an evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalSizes {
    pub pairs: usize,
    pub ceiling_pairs: usize,
    pub top1: usize,
}

/// What the untrained mushroom body of a model gives on the evaluation pairs: its scores, harder
/// pairs, top-1 and the two logistic ceilings. Kept in `DATA/bio/baseline-KEY.json`, KEY a hash of
/// what produced it (brain, homeostasis, constants, sizes, seed, the dataset's content).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Baseline {
    pub key: String,
    pub brain_checksum: String,
    pub homeostasis: String,
    pub constants: super::Constants,
    pub sizes: EvalSizes,
    pub scores: Vec<(f32, f32)>,
    pub harder: Vec<(f32, f32)>,
    pub top1: (usize, usize),
    pub ceiling_kc: Ceiling,
    pub ceiling_dn: Ceiling,
    pub seconds: f64,
}

fn baseline_key(bio: &BioBrain, dataset: &flychess_fly::data::Dataset, sizes: EvalSizes) -> String {
    use sha2::{Digest, Sha256};
    let mut d = Sha256::new();
    d.update(format!(
        "bio baseline v1 {} {} {:?} {sizes:?} seed {EVAL_SEED} ceiling l2 {L2_PENALTIES:?}",
        bio.brain_checksum, bio.homeostasis, bio.constants
    ));
    d.update(dataset.content_hash().as_bytes());
    flychess_brain::files::hex(&d.finalize())[..16].to_string()
}

/// The untrained body's figures on `hold` and `harder` (the evaluation pairs of `dataset`'s HOLD):
/// read back, or measured (minutes) and kept. `progress(stage, done, total)`.
pub fn baseline(
    bio: &BioBrain,
    dataset: &flychess_fly::data::Dataset,
    data: &std::path::Path,
    hold: &[Lesson],
    harder: &[Lesson],
    sizes: EvalSizes,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<Baseline> {
    let key = baseline_key(bio, dataset, sizes);
    let path = flychess_brain::files::DataFolder::at(data).bio().join(format!("baseline-{key}.json"));
    // Measured here before, or shipped (the default brain's, measured before the release).
    for known in baseline_folders(data).iter().map(|dir| dir.join(format!("baseline-{key}.json"))) {
        if let Ok(b) = std::fs::read(&known)
            && let Ok(b) = serde_json::from_slice::<Baseline>(&b)
            && b.key == key
        {
            return Ok(b);
        }
    }
    let started = std::time::Instant::now();
    let m0 = &bio.body.m0;
    let train_pairs = pairs(dataset.train(), EVAL_SEED, false, sizes.ceiling_pairs)?;
    let val_pairs = pairs(dataset.val(), EVAL_SEED, false, sizes.pairs.min(1_024))?;
    let dn = bio.descending.clone();
    let total = train_pairs.len() + val_pairs.len() + hold.len();
    let stage = "ceiling features (pairs)";
    let (kc_t, dn_t) = differences(bio, m0, &train_pairs, &dn, &|n| progress(stage, n, total));
    let (kc_v, dn_v) = differences(bio, m0, &val_pairs, &dn, &|n| progress(stage, train_pairs.len() + n, total));
    let (kc_h, dn_h) = differences(bio, m0, hold, &dn, &|n| progress(stage, train_pairs.len() + val_pairs.len() + n, total));
    progress("fitting the logistic ceilings", 0, 1);
    let ceiling_kc = logistic_ceiling(bio.body.kenyon.len(), &kc_t, &kc_v, &kc_h);
    let ceiling_dn = logistic_ceiling(dn.len(), &dn_t, &dn_v, &dn_h);
    drop((kc_t, dn_t, kc_v, dn_v, kc_h, dn_h));
    let stage = "pairs, harder pairs";
    let scores = score(bio, m0, hold, 64, &|n| progress(stage, n, 2 * hold.len()));
    let harder_scores = score(bio, m0, harder, 64, &|n| progress(stage, hold.len() + n, 2 * hold.len()));
    let rows = &dataset.hold()[..sizes.top1.min(dataset.hold().len())];
    let top1 = top1(bio, m0, rows, &|n| progress("top-1 (positions)", n, rows.len()))?;
    let out = Baseline {
        key,
        brain_checksum: bio.brain_checksum.clone(),
        homeostasis: bio.homeostasis.clone(),
        constants: bio.constants,
        sizes,
        scores,
        harder: harder_scores,
        top1,
        ceiling_kc,
        ceiling_dn,
        seconds: started.elapsed().as_secs_f64(),
    };
    std::fs::create_dir_all(path.parent().expect("bio folder")).map_err(|e| crate::error::Error::io(&path, e))?;
    flychess_brain::files::write_atomically(
        &path,
        serde_json::to_string(&out).map_err(|e| crate::error::Error::Invalid(e.to_string()))?.as_bytes(),
    )?;
    Ok(out)
}

/// Where baselines are kept: the data folder's `bio/`, then the shipped one (`native` only: a page
/// ships none in its binary).
fn baseline_folders(data: &std::path::Path) -> Vec<std::path::PathBuf> {
    let own = flychess_brain::files::DataFolder::at(data).bio();
    #[cfg(feature = "native")]
    return vec![own, flychess_brain::shipped::dir().join("bio")];
    #[cfg(not(feature = "native"))]
    vec![own]
}

/// The baselines measured for this brain and model (the Train tab's ceiling line), the user's and
/// the shipped ones, the most pairs first.
pub fn read_baselines(data: &std::path::Path, brain_checksum: &str, constants: &super::Constants) -> Vec<Baseline> {
    let mut out: Vec<Baseline> = baseline_folders(data)
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with("baseline-") && n.ends_with(".json")))
        .filter_map(|e| serde_json::from_slice::<Baseline>(&std::fs::read(e.path()).ok()?).ok())
        .filter(|b| b.brain_checksum == brain_checksum && b.constants == *constants)
        .collect();
    out.sort_by(|a, b| b.sizes.pairs.cmp(&a.sizes.pairs).then(b.sizes.ceiling_pairs.cmp(&a.sizes.ceiling_pairs)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logistic_ceiling_finds_a_direction_that_is_there_and_not_one_that_is_not() {
        // Feature 0 tells the good board apart in 90 % of pairs; features 1–3 are noise.
        let mut dice = Dice::new(7);
        let mut make = |n: usize, signal: bool| -> Vec<f32> {
            (0..n)
                .flat_map(|_| {
                    let sign = if !signal || dice.chance(0.9) { 1.0 } else { -1.0 };
                    let noise: Vec<f32> = (0..3).map(|_| dice.below(1000) as f32 / 500.0 - 1.0).collect();
                    let first = if signal { sign * (0.5 + dice.below(100) as f32 / 200.0) } else { noise[0] };
                    [first, noise[0], noise[1], noise[2]]
                })
                .collect()
        };
        let (train, val, hold) = (make(2000, true), make(500, true), make(1000, true));
        let c = logistic_ceiling(4, &train, &val, &hold);
        assert!(c.hold.value > 0.85 && c.hold.value < 0.95, "{:?}", c.hold);
        let (train, val, hold) = (make(2000, false), make(500, false), make(1000, false));
        let c = logistic_ceiling(4, &train, &val, &hold);
        assert!(c.hold.low < 0.5 && c.hold.high > 0.5, "noise is a coin: {:?}", c.hold);
    }

    #[test]
    fn flips_count_comparisons_that_changed_and_ties_count_half() {
        let a = [(1.0, 0.0), (0.0, 1.0), (0.5, 0.5)];
        let b = [(1.0, 0.0), (1.0, 0.0), (0.5, 0.5)];
        assert_eq!(flips(&a, &b), 1);
        assert_eq!(right(&a), vec![1.0, 0.0, 0.5]);
    }
}
