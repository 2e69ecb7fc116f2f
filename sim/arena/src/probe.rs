//! Linear probes (seed Philidor §8): what each region's rates know about the board. A probe is the
//! simplest reader there is, a ridge regression from a region's rates at one step to one fact
//! about the board, fitted on TRAIN positions, its strength chosen on VAL and scored on HOLD; if
//! it reads the fact, the fact is there in a form as simple as a weighted sum. Four facts, all
//! from the side to move: material balance (score R², chance 0), the side to move in check, one
//! of its pieces hanging (attacked and not defended), and a piece on its e4 (scores: ROC AUC,
//! chance 0.5). Each region is read through at most `per_region` of its neurons (evenly spread
//! through it, the same ones at every step); the board's own 768 planes are probed the same way
//! as the reference a brain region is measured against. HOLD scores carry 95 % bootstrap
//! intervals (positions redrawn). The brain thinks on the CPU engine, one step at a time (only
//! TRAIN's sums and the VAL/HOLD rates of the sampled neurons are kept), and the report is kept
//! under a key of everything that produced it (`key`).

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position, Role, Square};

use crate::error::{Error, Result};
use flychess_brain::brain::{Brain, STEPS, cpu};
use flychess_brain::chess::piece_value as value;
use flychess_brain::chess::{Planes, planes, position_from_fen};
use flychess_brain::connectome::rules::Region;
use flychess_fly::data::{Dataset, Row};
use flychess_fly::stats::Estimate;

/// Bump when what a report means changes (probes, sampling, scoring): old reports are not reused.
const VERSION: u32 = 1;
/// Ridge strengths tried (× the mean of XᵀX's diagonal), the best on VAL is kept.
const RIDGE: [f64; 4] = [1e-4, 1e-3, 1e-2, 1e-1];
const BOOTSTRAP: usize = 200;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeOptions {
    pub train: usize,
    pub val: usize,
    pub hold: usize,
    /// Neurons read per region (fewer where the region is smaller).
    pub per_region: usize,
    pub batch: usize,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions { train: 4_096, val: 1_024, hold: 2_048, per_region: 128, batch: 32 }
    }
}

/// How a probe is scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    /// Coefficient of determination on HOLD (0: no better than the mean).
    R2,
    /// Area under the ROC curve on HOLD (0.5: chance).
    Auc,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeInfo {
    pub name: String,
    pub score: Score,
    pub chance: f64,
    /// Share of HOLD positions where the fact holds (binary probes) or its spread (material).
    pub hold_base_rate: f64,
}

/// One probe read from one region at one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub hold: Estimate,
    pub val: f64,
    pub ridge: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionProbes {
    pub region: String,
    pub neurons: usize,
    pub read: usize,
    /// `[probe][step]`.
    pub cells: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    pub key: String,
    pub brain_checksum: String,
    pub options: ProbeOptions,
    pub probes: Vec<ProbeInfo>,
    pub regions: Vec<RegionProbes>,
    /// The same probes on the board's 768 planes (what the eye is given): `[probe]`.
    pub board: Vec<Cell>,
    pub seconds: f64,
}

impl ProbeReport {
    /// The region and step (1-based) where probe `p` reads best on VAL (chosen there, so its HOLD
    /// score is not the luckiest of many).
    pub fn best(&self, p: usize) -> Option<(&str, usize, &Cell)> {
        self.regions
            .iter()
            .flat_map(|r| r.cells[p].iter().enumerate().map(move |(t, c)| (r.region.as_str(), t + 1, c)))
            .max_by(|a, b| a.2.val.total_cmp(&b.2.val))
    }
}

const PROBES: [(&str, Score); 4] = [
    ("material balance (side to move minus opponent)", Score::R2),
    ("side to move in check", Score::Auc),
    ("a piece of the side to move hanging", Score::Auc),
    ("a piece on e4 (seen from the side to move)", Score::Auc),
];

/// The four facts about a position.
pub fn facts(pos: &Chess) -> [f64; 4] {
    let us = pos.turn();
    let board = pos.board();
    let material: f64 = board.clone().into_iter().map(|(_, p)| if p.color == us { value(p.role) } else { -value(p.role) }).sum();
    let occupied = board.occupied();
    let hanging = board.by_color(us).into_iter().any(|sq| {
        board.role_at(sq) != Some(Role::King) && board.attacks_to(sq, !us, occupied).any() && !board.attacks_to(sq, us, occupied).any()
    });
    let e4 = if us == Color::White { Square::E4 } else { Square::E5 };
    [material, f64::from(u8::from(pos.is_check())), f64::from(u8::from(hanging)), f64::from(u8::from(board.piece_at(e4).is_some()))]
}

/// The key a report is kept under: the brain and its homeostasis, the dataset's content, the
/// options and this module's version.
pub fn key(brain_checksum: &str, homeostasis: &str, dataset: &Dataset, options: &ProbeOptions) -> String {
    use sha2::{Digest, Sha256};
    let mut d = Sha256::new();
    d.update(format!("probe v{VERSION}\n{brain_checksum}\n{homeostasis}\n{}\n", dataset.content_hash()));
    d.update(serde_json::to_vec(options).expect("options serialise"));
    d.finalize().iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// The neurons a region is read through: at most `k`, evenly spread through its members.
fn sample(members: &[u32], k: usize) -> Vec<u32> {
    if members.len() <= k {
        return members.to_vec();
    }
    (0..k).map(|i| members[i * members.len() / k]).collect()
}

/// Ridge fits for every strength in `RIDGE`: (G + λ·m·D) w = b, D leaving the intercept (last)
/// unpenalised. `[ridge][target] → weights`.
fn fit(g: &DMatrix<f64>, b: &DMatrix<f64>) -> Vec<Vec<DVector<f64>>> {
    let k = g.nrows();
    let m = (0..k - 1).map(|i| g[(i, i)]).sum::<f64>() / (k - 1).max(1) as f64;
    RIDGE
        .iter()
        .map(|&r| {
            let mut a = g.clone();
            for i in 0..k - 1 {
                a[(i, i)] += r * m.max(1e-12);
            }
            a[(k - 1, k - 1)] += 1e-9;
            let solved = match a.clone().cholesky() {
                Some(c) => c.solve(b),
                None => a.lu().solve(b).unwrap_or_else(|| DMatrix::zeros(k, b.ncols())),
            };
            (0..b.ncols()).map(|c| solved.column(c).into_owned()).collect()
        })
        .collect()
}

fn r2(pred: &[f64], y: &[f64]) -> f64 {
    let mean = y.iter().sum::<f64>() / y.len().max(1) as f64;
    let sst: f64 = y.iter().map(|v| (v - mean).powi(2)).sum();
    let sse: f64 = pred.iter().zip(y).map(|(p, v)| (p - v).powi(2)).sum();
    if sst <= 0.0 { 0.0 } else { 1.0 - sse / sst }
}

/// ROC AUC (ties count half): the chance a positive scores above a negative.
fn auc(pred: &[f64], y: &[f64]) -> f64 {
    let rank_sum: f64 = flychess_fly::stats::ranks(pred).iter().zip(y).filter(|(_, v)| **v > 0.5).map(|(r, _)| r).sum();
    let pos = y.iter().filter(|v| **v > 0.5).count() as f64;
    let neg = y.len() as f64 - pos;
    if pos == 0.0 || neg == 0.0 { 0.5 } else { (rank_sum - pos * (pos + 1.0) / 2.0) / (pos * neg) }
}

fn score(kind: Score, pred: &[f64], y: &[f64]) -> f64 {
    match kind {
        Score::R2 => r2(pred, y),
        Score::Auc => auc(pred, y),
    }
}

/// The HOLD score with a 95 % bootstrap interval (positions redrawn, a fixed seed).
fn with_interval(kind: Score, pred: &[f64], y: &[f64]) -> Estimate {
    let n = pred.len();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut draws: Vec<f64> = (0..BOOTSTRAP)
        .map(|_| {
            let (mut p, mut t) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for _ in 0..n {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let i = (s % n as u64) as usize;
                p.push(pred[i]);
                t.push(y[i]);
            }
            score(kind, &p, &t)
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (BOOTSTRAP - 1) as f64).round() as usize).min(BOOTSTRAP - 1)];
    Estimate { value: score(kind, pred, y), low: at(0.025), high: at(0.975) }
}

/// Features of one set kept as `[position][feature]` with a trailing 1 (the intercept).
struct Kept {
    k: usize,
    x: Vec<f64>,
}

impl Kept {
    fn predict(&self, w: &DVector<f64>) -> Vec<f64> {
        self.x.chunks_exact(self.k).map(|row| row.iter().zip(w.iter()).map(|(a, b)| a * b).sum()).collect()
    }
}

/// Fits every probe on (g, b), chooses the strength on VAL, scores HOLD.
fn probe_cells(g: &DMatrix<f64>, b: &DMatrix<f64>, val: &Kept, hold: &Kept, y_val: &[[f64; 4]], y_hold: &[[f64; 4]]) -> Vec<Cell> {
    let fits = fit(g, b);
    (0..PROBES.len())
        .map(|p| {
            let kind = PROBES[p].1;
            let yv: Vec<f64> = y_val.iter().map(|y| y[p]).collect();
            let yh: Vec<f64> = y_hold.iter().map(|y| y[p]).collect();
            let (best, val_score) = (0..RIDGE.len())
                .map(|r| (r, score(kind, &val.predict(&fits[r][p]), &yv)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .expect("ridge strengths");
            Cell { hold: with_interval(kind, &hold.predict(&fits[best][p]), &yh), val: val_score, ridge: RIDGE[best] }
        })
        .collect()
}

/// Runs every probe on `brain` (regions from `region`), positions from `dataset`'s TRAIN, VAL and
/// HOLD. `progress(done, total)` counts positions thought; `stop()` ends early with an error.
#[allow(clippy::too_many_arguments)]
pub fn run(
    brain: &Brain,
    region: &[Region],
    brain_checksum: &str,
    homeostasis: &str,
    dataset: &Dataset,
    options: &ProbeOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    stop: &dyn Fn() -> bool,
) -> Result<ProbeReport> {
    let started = std::time::Instant::now();
    let [train, val, hold] = sets(dataset, options)?;
    let present = present_regions(region, options.per_region);
    let sums = think_over(brain, &present, [&train, &val, &hold], options, progress, stop)?;
    Ok(ProbeReport {
        key: key(brain_checksum, homeostasis, dataset, options),
        brain_checksum: brain_checksum.to_string(),
        options: options.clone(),
        probes: probe_infos(&hold.facts),
        regions: region_probes(&present, sums, &val.facts, &hold.facts),
        board: board_probes(&train, &val, &hold),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The positions of one set (TRAIN, VAL or HOLD) and their four facts.
struct ProbeSet {
    positions: Vec<Chess>,
    facts: Vec<[f64; 4]>,
}

/// TRAIN, VAL and HOLD, each its first positions as many as the options ask for.
fn sets(dataset: &Dataset, options: &ProbeOptions) -> Result<[ProbeSet; 3]> {
    let take = |rows: &[Row], n: usize| rows[..n.min(rows.len())].to_vec();
    let (train, val, hold) = (take(dataset.train(), options.train), take(dataset.val(), options.val), take(dataset.hold(), options.hold));
    if train.len() < 16 || val.len() < 8 || hold.len() < 8 {
        return Err(Error::Invalid(format!("too few positions to probe: {} TRAIN, {} VAL, {} HOLD", train.len(), val.len(), hold.len())));
    }
    let set = |rows: &[Row]| -> Result<ProbeSet> {
        let positions = rows.iter().map(|r| position_from_fen(&r.fen)).collect::<flychess_brain::Result<Vec<Chess>>>()?;
        let facts = positions.iter().map(facts).collect();
        Ok(ProbeSet { positions, facts })
    };
    Ok([set(&train)?, set(&val)?, set(&hold)?])
}

/// A region the brain has: (the region, its neurons, the neurons it is read through).
type PresentRegion = (Region, usize, Vec<u32>);

/// The regions present, each read through its sample of at most `per_region` neurons.
fn present_regions(region: &[Region], per_region: usize) -> Vec<PresentRegion> {
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); Region::COUNT];
    for (j, r) in region.iter().enumerate() {
        members[*r as usize].push(j as u32);
    }
    Region::ALL
        .into_iter()
        .filter(|r| !members[*r as usize].is_empty())
        .map(|r| (r, members[r as usize].len(), sample(&members[r as usize], per_region)))
        .collect()
}

/// What the thinks leave for the probes, per combination c of a present region (c / STEPS) and
/// a step (c % STEPS): TRAIN's sums XᵀX and XᵀY, and the VAL and HOLD features kept whole
/// (`[position][feature + 1]`).
struct Sums {
    g: Vec<DMatrix<f64>>,
    b: Vec<DMatrix<f64>>,
    kept_val: Vec<Vec<f64>>,
    kept_hold: Vec<Vec<f64>>,
}

/// The brain thinks about TRAIN, then VAL, then HOLD, a batch at a time, each step's rates of
/// the sampled neurons going into the `Sums` as they come.
fn think_over(
    brain: &Brain,
    present: &[PresentRegion],
    sets: [&ProbeSet; 3],
    options: &ProbeOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    stop: &dyn Fn() -> bool,
) -> Result<Sums> {
    let combos = present.len() * STEPS;
    let width = |c: usize| present[c / STEPS].2.len() + 1;
    let mut sums = Sums {
        g: (0..combos).map(|c| DMatrix::zeros(width(c), width(c))).collect(),
        b: (0..combos).map(|c| DMatrix::zeros(width(c), PROBES.len())).collect(),
        kept_val: vec![Vec::new(); combos],
        kept_hold: vec![Vec::new(); combos],
    };
    let total = sets.iter().map(|s| s.positions.len()).sum();
    let mut done = 0;
    for (set, s) in sets.into_iter().enumerate() {
        for (chunk, ychunk) in s.positions.chunks(options.batch.max(1)).zip(s.facts.chunks(options.batch.max(1))) {
            if stop() {
                return Err(Error::Invalid("stopped".into()));
            }
            let boards: Vec<Planes> = chunk.iter().map(planes).collect();
            let n = boards.len();
            cpu::run(brain, &boards, |t, rates| {
                let at_step: Vec<usize> = (0..present.len()).map(|r| r * STEPS + t).collect();
                let xs: Vec<(usize, Vec<f64>)> = at_step.par_iter().map(|&c| (c, features(&present[c / STEPS].2, rates, n))).collect();
                match set {
                    0 => sums.add_train(xs, ychunk, n),
                    1 => xs.into_iter().for_each(|(c, x)| sums.kept_val[c].extend(x)),
                    _ => xs.into_iter().for_each(|(c, x)| sums.kept_hold[c].extend(x)),
                }
            });
            done += n;
            progress(done, total);
        }
    }
    Ok(sums)
}

/// A batch of `n` positions' rates of `neurons` at one step as `[position][feature + 1]` (the
/// last a 1, the intercept).
fn features(neurons: &[u32], rates: &[f32], n: usize) -> Vec<f64> {
    let k = neurons.len() + 1;
    let mut x = vec![1.0f64; n * k];
    for (i, &j) in neurons.iter().enumerate() {
        for p in 0..n {
            x[p * k + i] = rates[j as usize * n + p] as f64;
        }
    }
    x
}

impl Sums {
    /// A TRAIN batch of `n` positions: each combination's features `x` (`[position][feature +
    /// 1]`) and the batch's facts into XᵀX and XᵀY.
    fn add_train(&mut self, xs: Vec<(usize, Vec<f64>)>, facts: &[[f64; 4]], n: usize) {
        let y = DMatrix::from_fn(n, PROBES.len(), |p, q| facts[p][q]);
        let updates: Vec<(usize, DMatrix<f64>, DMatrix<f64>)> = xs
            .into_par_iter()
            .map(|(c, x)| {
                let m = DMatrix::from_row_slice(n, x.len() / n, &x);
                (c, m.transpose() * &m, m.transpose() * &y)
            })
            .collect();
        for (c, gg, bb) in updates {
            self.g[c] += gg;
            self.b[c] += bb;
        }
    }
}

/// Every probe of every present region at every step, fitted on the sums.
fn region_probes(present: &[PresentRegion], sums: Sums, y_val: &[[f64; 4]], y_hold: &[[f64; 4]]) -> Vec<RegionProbes> {
    let Sums { g, b, kept_val, kept_hold } = sums;
    let cells: Vec<Vec<Cell>> = kept_val
        .into_par_iter()
        .zip(kept_hold)
        .enumerate()
        .map(|(c, (v, h))| {
            let k = present[c / STEPS].2.len() + 1;
            probe_cells(&g[c], &b[c], &Kept { k, x: v }, &Kept { k, x: h }, y_val, y_hold)
        })
        .collect();
    present
        .iter()
        .enumerate()
        .map(|(r, (region, size, read))| RegionProbes {
            region: region.name().to_string(),
            neurons: *size,
            read: read.len(),
            cells: (0..PROBES.len()).map(|p| (0..STEPS).map(|t| cells[r * STEPS + t][p].clone()).collect()).collect(),
        })
        .collect()
}

/// The same probes on the board itself: its 768 planes + 1.
fn board_probes(train: &ProbeSet, val: &ProbeSet, hold: &ProbeSet) -> Vec<Cell> {
    let board_rows = |ps: &[Chess]| -> Vec<f64> {
        ps.iter()
            .flat_map(|p| planes(p).iter().flatten().map(|&v| f64::from(u8::from(v))).chain(std::iter::once(1.0)).collect::<Vec<_>>())
            .collect()
    };
    let k = 769;
    let xt = DMatrix::from_row_slice(train.positions.len(), k, &board_rows(&train.positions));
    let yt = DMatrix::from_fn(train.positions.len(), PROBES.len(), |p, q| train.facts[p][q]);
    probe_cells(
        &(xt.transpose() * &xt),
        &(xt.transpose() * &yt),
        &Kept { k, x: board_rows(&val.positions) },
        &Kept { k, x: board_rows(&hold.positions) },
        &val.facts,
        &hold.facts,
    )
}

/// What each probe is, with its chance score and base rate on HOLD.
fn probe_infos(y_hold: &[[f64; 4]]) -> Vec<ProbeInfo> {
    PROBES
        .iter()
        .enumerate()
        .map(|(p, (name, kind))| {
            let ys: Vec<f64> = y_hold.iter().map(|y| y[p]).collect();
            let mean = ys.iter().sum::<f64>() / ys.len() as f64;
            ProbeInfo {
                name: name.to_string(),
                score: *kind,
                chance: if *kind == Score::Auc { 0.5 } else { 0.0 },
                hold_base_rate: match kind {
                    Score::Auc => mean,
                    Score::R2 => (ys.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / ys.len() as f64).sqrt(),
                },
            }
        })
        .collect()
}

/// Where a report is kept: DATA/probes/KEY.json.
pub fn report_path(data: &std::path::Path, key: &str) -> std::path::PathBuf {
    flychess_brain::files::DataFolder::at(data).probes().join(format!("{key}.json"))
}

/// A kept report, when there is one for this key.
pub fn load(data: &std::path::Path, key: &str) -> Option<ProbeReport> {
    let bytes = std::fs::read(report_path(data, key)).ok()?;
    serde_json::from_slice::<ProbeReport>(&bytes).ok().filter(|r| r.key == key)
}

/// The kept report for this brain, homeostasis and dataset with the most HOLD positions, whatever
/// options it was run with (each report's key is worked out again, so a report of another brain or
/// dataset, or a file renamed by hand, is never taken).
pub fn kept_for(data: &std::path::Path, brain_checksum: &str, homeostasis: &str, dataset: &Dataset) -> Option<ProbeReport> {
    let entries = std::fs::read_dir(flychess_brain::files::DataFolder::at(data).probes()).ok()?;
    entries
        .flatten()
        .filter_map(|e| serde_json::from_slice::<ProbeReport>(&std::fs::read(e.path()).ok()?).ok())
        .filter(|r| r.key == key(brain_checksum, homeostasis, dataset, &r.options))
        .max_by_key(|r| (r.options.hold, r.options.train))
}

/// Keeps a report (atomically).
pub fn save(data: &std::path::Path, report: &ProbeReport) -> Result<()> {
    let path = report_path(data, &report.key);
    let text = serde_json::to_vec_pretty(report).map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(flychess_brain::files::write_atomically(&path, &text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_of_known_positions() {
        // 1.d4 e5 2.dxe5 Bb4+: White to move, in check, a pawn up.
        let check = position_from_fen("rnbqk1nr/pppp1ppp/8/4P3/1b6/8/PPP1PPPP/RNBQKBNR w KQkq - 1 3").unwrap();
        let f = facts(&check);
        assert_eq!(f[0], 1.0);
        assert_eq!(f[1], 1.0, "in check");
        // The start position hangs nothing and has no piece on e4.
        let start = Chess::default();
        assert_eq!(facts(&start), [0.0, 0.0, 0.0, 0.0]);
        // 1.e4: Black to move sees White's e4 pawn on its own e5 in the mirrored frame: the real e5 is empty.
        let e4 = position_from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").unwrap();
        assert_eq!(facts(&e4)[3], 0.0);
        // 1.e4 e5: White to move, a piece on e4.
        let e4e5 = position_from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").unwrap();
        assert_eq!(facts(&e4e5)[3], 1.0);
        // A white knight on e5 attacked by the d6 pawn hangs until the d4 pawn defends it; a pawn up
        // for Black (the knight is 3, the pawn 1: +2 for White).
        let hanging = position_from_fen("4k3/8/3p4/4N3/8/8/8/4K3 w - - 0 1").unwrap();
        assert_eq!(facts(&hanging)[2], 1.0);
        assert_eq!(facts(&hanging)[0], 2.0);
        let defended = position_from_fen("4k3/8/3p4/4N3/3P4/8/8/4K3 w - - 0 1").unwrap();
        assert_eq!(facts(&defended)[2], 0.0);
    }

    #[test]
    fn auc_and_r2_know_chance_and_perfection() {
        let y = [0.0, 0.0, 1.0, 1.0];
        assert_eq!(auc(&[0.1, 0.2, 0.3, 0.4], &y), 1.0);
        assert_eq!(auc(&[0.4, 0.3, 0.2, 0.1], &y), 0.0);
        assert_eq!(auc(&[0.5; 4], &y), 0.5);
        assert!((r2(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        assert!(r2(&[2.0, 2.0, 2.0], &[1.0, 2.0, 3.0]).abs() < 1e-12);
    }
}
