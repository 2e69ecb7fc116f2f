//! The eye from the wiring alone. FlyWire's tables have no positions, so the photoreceptors are
//! placed on a retinotopic sheet recovered from who connects to whom, one eye (hemisphere) at a
//! time:
//!
//! 1. **Columns.** Every `Mi1` (one per medulla column) anchors a column. Columnar cell types
//!    (L1–L3, L5, C2, C3, Mi4, Mi9, Tm1, Tm2, Tm9, Tm20, T1) and the photoreceptors join, round
//!    by round, the column they make the most synapses with among cells already in a column (at
//!    least 5): R1–R6 reach their cartridge through L1–L3, R7/R8 their medulla column through
//!    Tm20, Mi1, Mi4, Mi9 or each other.
//! 2. **Neighbours.** Neighbouring columns share wide-field partners (Dm, Pm, Am, L4, Lawf, T4/T5,
//!    Tm3–Tm5, …): each column is described by its synapses with every non-columnar cell, and
//!    joined to the 8 columns whose descriptions are most alike (cosine).
//! 3. **The sheet.** Laplacian eigenmaps of that graph: the 2nd and 3rd eigenvectors of the
//!    normalised Laplacian (a disc's two linear modes), scaled to unit spread.
//! 4. **Orientation, from the wiring too.** A T4 cell's preferred direction points from its Mi9
//!    input to its Mi4 input; T4a/b/c/d point front-to-back, back-to-front, up and down. The 2-D
//!    orthogonal map (rotation, or rotation and mirror) that best sends the four mean directions
//!    there fixes the eigenvectors' sign and rotation and puts both eyes in one eye-centred frame.
//! 5. **Photoreceptors** with a column take its place; two rounds give every other cell of the eye
//!    the synapse-weighted mean place of its placed partners (R7/R8 often touch only Dm8/Dm9). Each eye is normalised (weighted mean and
//!    spread, 10 per R1–R6 cell, 1 per R7/R8), both are overlaid and the fair-eye cut divides them.
//!
//! Checked, not assumed: `retinotopy` counts the partners that columns next to each other on the
//! sheet share against those of columns next to each other in a shuffled placement; the held-out
//! figure builds the sheet from half of the partner cells and counts only the other half.

use std::collections::HashMap;

use nalgebra::{DMatrix, Matrix2, SymmetricEigen};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::Neurons;
use super::rules::{self, Side};
use crate::eye::{Eye, SheetPhotoreceptor};

/// One column per cell of this type.
pub const ANCHOR: &str = "Mi1";
/// Cell types with one cell per column, which join the anchors' columns.
pub const COLUMNAR: [&str; 15] = ["Mi1", "L1", "L2", "L3", "L1-3", "L5", "C2", "C3", "Mi4", "Mi9", "Tm1", "Tm2", "Tm9", "Tm20", "T1"];
/// Columns each column is joined to in the neighbour graph.
pub const NEIGHBOURS: usize = 8;
/// Synapses a cell needs with a column to join it.
const JOIN_SYNAPSES: u32 = 5;
/// Columns compared with each column when retinotopy is measured.
const SHEET_NEIGHBOURS: usize = 6;

/// One recovered column of an eye.
#[derive(Clone, Debug)]
pub struct Column {
    pub eye: Side,
    /// Place on the eye's sheet (u front-to-back, v up), unit spread.
    pub at: [f64; 2],
}

/// How one eye was recovered, for `brain info` and the eye view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EyeReport {
    pub side: String,
    pub columns: usize,
    /// Photoreceptors of this eye in the graph, those that joined a column, and those placed
    /// (joined or given their partners' mean place).
    pub photoreceptors: usize,
    pub in_columns: usize,
    pub placed: usize,
    /// The normalised Laplacian's smallest eigenvalues (0 first).
    pub eigenvalues: Vec<f64>,
    /// Shared partners of sheet-neighbour columns over those of neighbours in a shuffled placement.
    pub retinotopy_ratio: f64,
    /// The same with the sheet built from half of the partner cells, counted on the other half.
    pub retinotopy_ratio_held_out: f64,
    /// Mean preferred direction of T4a, b, c, d on the oriented sheet, degrees (ideal 0, 180, 90, −90).
    pub t4_directions_deg: Vec<f64>,
}

/// The recovery's summary, kept with the eye in the brain file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recovered {
    pub method: String,
    pub eyes: Vec<EyeReport>,
    /// The smaller of the eyes' ratios (what `brain info` shows).
    pub retinotopy_ratio: f64,
    pub retinotopy_ratio_held_out: f64,
}

/// The recovered eye: its columns, the column of each neuron that belongs to one, and the
/// placed eye.
#[derive(Clone, Debug)]
pub struct Sheet {
    pub columns: Vec<Column>,
    pub column_of: Vec<Option<u32>>,
    pub eye: Eye,
}

/// Both directions of every connection, synapse counts summed, self-loops dropped.
fn undirected(n: usize, edges: &[(u32, u32, u32)]) -> Vec<Vec<(u32, u32)>> {
    let mut adj: Vec<HashMap<u32, u32>> = vec![HashMap::new(); n];
    for &(post, pre, w) in edges {
        if post == pre {
            continue;
        }
        *adj[post as usize].entry(pre).or_default() += w;
        *adj[pre as usize].entry(post).or_default() += w;
    }
    adj.into_iter()
        .map(|m| {
            let mut v: Vec<(u32, u32)> = m.into_iter().collect();
            v.sort_unstable();
            v
        })
        .collect()
}

/// One eye's columns: the anchors and the cells that joined them.
struct Columns {
    /// Column of each neuron (global index), for this eye's cells only.
    of: HashMap<u32, u32>,
    count: usize,
}

fn grow_columns(neurons: &Neurons, adj: &[Vec<(u32, u32)>], cells: &[u32]) -> Columns {
    let mut of: HashMap<u32, u32> = HashMap::new();
    let mut count = 0;
    for &i in cells {
        if neurons.type_name(i as usize) == ANCHOR {
            of.insert(i, count as u32);
            count += 1;
        }
    }
    let candidates: Vec<u32> = cells
        .iter()
        .copied()
        .filter(|&i| {
            let t = neurons.type_name(i as usize);
            t != ANCHOR && (COLUMNAR.contains(&t) || rules::photoreceptor_kind(t).is_some())
        })
        .collect();
    loop {
        // Synchronous: every candidate looks at the columns as they were at the round's start.
        let joins: Vec<(u32, u32)> = candidates
            .iter()
            .filter(|i| !of.contains_key(i))
            .filter_map(|&i| {
                let mut by_column: HashMap<u32, u32> = HashMap::new();
                for &(j, w) in &adj[i as usize] {
                    if let Some(&c) = of.get(&j) {
                        *by_column.entry(c).or_default() += w;
                    }
                }
                let best = by_column.into_iter().max_by_key(|&(c, w)| (w, std::cmp::Reverse(c)))?;
                (best.1 >= JOIN_SYNAPSES).then_some((i, best.0))
            })
            .collect();
        if joins.is_empty() {
            break;
        }
        of.extend(joins);
    }
    Columns { of, count }
}

/// Each column's synapses with every partner cell that `counts` accepts (not a member of any
/// column, not a photoreceptor, not of a columnar type): sparse rows.
fn column_features(neurons: &Neurons, adj: &[Vec<(u32, u32)>], columns: &Columns, counts: &dyn Fn(u32) -> bool) -> Vec<HashMap<u32, f64>> {
    let mut f: Vec<HashMap<u32, f64>> = vec![HashMap::new(); columns.count];
    for (&i, &c) in &columns.of {
        for &(j, w) in &adj[i as usize] {
            let t = neurons.type_name(j as usize);
            if columns.of.contains_key(&j) || COLUMNAR.contains(&t) || rules::photoreceptor_kind(t).is_some() || !counts(j) {
                continue;
            }
            *f[c as usize].entry(j).or_default() += w as f64;
        }
    }
    f
}

/// Laplacian eigenmaps of the columns' k-nearest-neighbour graph (cosine of their features):
/// unit-spread 2-D places and the 6 smallest eigenvalues, or why not.
fn embed(features: &[HashMap<u32, f64>]) -> Result<(Vec<[f64; 2]>, Vec<f64>), String> {
    let c = features.len();
    if c < 16 {
        return Err(format!("only {c} columns (at least 16 are needed for a sheet)"));
    }
    // Dot products through the partners: each partner adds to every pair of columns it touches.
    let mut by_partner: HashMap<u32, Vec<(u32, f64)>> = HashMap::new();
    for (col, row) in features.iter().enumerate() {
        for (&m, &w) in row {
            by_partner.entry(m).or_default().push((col as u32, w));
        }
    }
    let mut dot = vec![0f64; c * c];
    let mut partners: Vec<(&u32, &Vec<(u32, f64)>)> = by_partner.iter().collect();
    partners.sort_by_key(|p| *p.0);
    for (_, list) in partners {
        for &(a, wa) in list {
            for &(b, wb) in list {
                dot[a as usize * c + b as usize] += wa * wb;
            }
        }
    }
    let norm: Vec<f64> = (0..c).map(|a| dot[a * c + a].sqrt()).collect();
    if let Some(empty) = norm.iter().position(|&x| x == 0.0) {
        return Err(format!("column {empty} has no partner outside the columns"));
    }
    let mut w = vec![0f64; c * c];
    for a in 0..c {
        let mut others: Vec<(usize, f64)> = (0..c).filter(|&b| b != a).map(|b| (b, dot[a * c + b] / (norm[a] * norm[b]))).collect();
        others.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        for &(b, s) in others.iter().take(NEIGHBOURS) {
            let s = s.max(1e-12);
            w[a * c + b] = w[a * c + b].max(s);
            w[b * c + a] = w[b * c + a].max(s);
        }
    }
    // One piece, or the sheet is several.
    let mut seen = vec![false; c];
    let mut stack = vec![0usize];
    seen[0] = true;
    while let Some(a) = stack.pop() {
        for b in 0..c {
            if w[a * c + b] > 0.0 && !seen[b] {
                seen[b] = true;
                stack.push(b);
            }
        }
    }
    let reached = seen.iter().filter(|&&s| s).count();
    if reached < c {
        return Err(format!("the neighbour graph of the {c} columns falls apart ({reached} reached from the first)"));
    }
    let degree: Vec<f64> = (0..c).map(|a| w[a * c..(a + 1) * c].iter().sum()).collect();
    let inv_sqrt: Vec<f64> = degree.iter().map(|d| 1.0 / d.sqrt()).collect();
    let laplacian = DMatrix::from_fn(c, c, |a, b| {
        let id = if a == b { 1.0 } else { 0.0 };
        id - inv_sqrt[a] * w[a * c + b] * inv_sqrt[b]
    });
    let eigen = SymmetricEigen::new(laplacian);
    let mut order: Vec<usize> = (0..c).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[a].total_cmp(&eigen.eigenvalues[b]).then(a.cmp(&b)));
    let values: Vec<f64> = order.iter().take(6).map(|&k| eigen.eigenvalues[k]).collect();
    let mut places = vec![[0f64; 2]; c];
    for (axis, &k) in order[1..3].iter().enumerate() {
        let v: Vec<f64> = (0..c).map(|a| eigen.eigenvectors[(a, k)] * inv_sqrt[a]).collect();
        let mean = v.iter().sum::<f64>() / c as f64;
        let spread = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / c as f64).sqrt().max(1e-300);
        for a in 0..c {
            places[a][axis] = (v[a] - mean) / spread;
        }
    }
    Ok((places, values))
}

/// T4a/b/c/d mean preferred directions (Mi9 → Mi4 place) on the sheet, each of unit length;
/// None for a subtype with no usable cell.
fn t4_directions(
    neurons: &Neurons,
    adj: &[Vec<(u32, u32)>],
    cells: &[u32],
    of: &HashMap<u32, u32>,
    places: &[[f64; 2]],
) -> [Option<[f64; 2]>; 4] {
    let mut sums = [[0f64; 2]; 4];
    let mut any = [false; 4];
    for &i in cells {
        let k = match neurons.type_name(i as usize) {
            "T4a" => 0,
            "T4b" => 1,
            "T4c" => 2,
            "T4d" => 3,
            _ => continue,
        };
        let mean = |from: &str| -> Option<[f64; 2]> {
            let (mut s, mut total) = ([0f64; 2], 0f64);
            for &(j, w) in &adj[i as usize] {
                if neurons.type_name(j as usize) != from {
                    continue;
                }
                if let Some(&c) = of.get(&j) {
                    s[0] += places[c as usize][0] * w as f64;
                    s[1] += places[c as usize][1] * w as f64;
                    total += w as f64;
                }
            }
            (total > 0.0).then(|| [s[0] / total, s[1] / total])
        };
        if let (Some(mi4), Some(mi9)) = (mean("Mi4"), mean("Mi9")) {
            sums[k][0] += mi4[0] - mi9[0];
            sums[k][1] += mi4[1] - mi9[1];
            any[k] = true;
        }
    }
    [0, 1, 2, 3].map(|k| {
        let len = (sums[k][0].powi(2) + sums[k][1].powi(2)).sqrt();
        (any[k] && len > 0.0).then(|| [sums[k][0] / len, sums[k][1] / len])
    })
}

/// The orthogonal 2×2 map (reflection allowed) that best sends T4a, b, c, d to +u, −u, +v, −v
/// (orthogonal Procrustes), or the identity when too few subtypes were found.
fn orientation(directions: &[Option<[f64; 2]>; 4]) -> Matrix2<f64> {
    const TARGET: [[f64; 2]; 4] = [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]];
    let mut m = Matrix2::zeros();
    let mut used = 0;
    for (d, t) in directions.iter().zip(TARGET) {
        if let Some(d) = d {
            m += Matrix2::new(t[0] * d[0], t[0] * d[1], t[1] * d[0], t[1] * d[1]);
            used += 1;
        }
    }
    if used < 2 {
        return Matrix2::identity();
    }
    let svd = m.svd(true, true);
    match (svd.u, svd.v_t) {
        (Some(u), Some(v_t)) => u * v_t,
        _ => Matrix2::identity(),
    }
}

/// Partner cells of each column (union over its members), sorted.
fn partner_sets(adj: &[Vec<(u32, u32)>], columns: &Columns, counts: &dyn Fn(u32) -> bool) -> Vec<Vec<u32>> {
    let mut sets: Vec<Vec<u32>> = vec![Vec::new(); columns.count];
    for (&i, &c) in &columns.of {
        sets[c as usize].extend(adj[i as usize].iter().map(|p| p.0).filter(|&j| counts(j)));
    }
    for s in &mut sets {
        s.sort_unstable();
        s.dedup();
    }
    sets
}

fn shared(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Mean partners shared by each column and its nearest columns on the sheet.
fn neighbour_sharing(places: &[[f64; 2]], sets: &[Vec<u32>]) -> f64 {
    let c = places.len();
    let (mut total, mut pairs) = (0usize, 0usize);
    for a in 0..c {
        let mut d: Vec<(f64, usize)> = (0..c)
            .filter(|&b| b != a)
            .map(|b| ((places[a][0] - places[b][0]).powi(2) + (places[a][1] - places[b][1]).powi(2), b))
            .collect();
        d.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        for &(_, b) in d.iter().take(SHEET_NEIGHBOURS) {
            total += shared(&sets[a], &sets[b]);
            pairs += 1;
        }
    }
    total as f64 / pairs.max(1) as f64
}

/// Sheet neighbours' shared partners over those of neighbours in a shuffled placement (ChaCha8,
/// a fixed seed: the figure is the same on every run).
fn retinotopy(places: &[[f64; 2]], sets: &[Vec<u32>]) -> f64 {
    let mut shuffled = places.to_vec();
    let mut rng = ChaCha8Rng::seed_from_u64(783);
    for i in (1..shuffled.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        shuffled.swap(i, j);
    }
    neighbour_sharing(places, sets) / neighbour_sharing(&shuffled, sets).max(1e-12)
}

/// Places the eyes of the graph from its wiring. `edges` are (post, pre, synapses).
pub fn recover(neurons: &Neurons, edges: &[(u32, u32, u32)]) -> Result<Sheet, String> {
    let n = neurons.len();
    let adj = undirected(n, edges);
    let mut columns: Vec<Column> = Vec::new();
    let mut column_of: Vec<Option<u32>> = vec![None; n];
    let mut photoreceptors: Vec<SheetPhotoreceptor> = Vec::new();
    let mut reports = Vec::new();
    for side in [Side::Left, Side::Right] {
        let cells: Vec<u32> = (0..n as u32).filter(|&i| neurons.side[i as usize] == side).collect();
        let grown = grow_columns(neurons, &adj, &cells);
        let name = side.name();
        let all = |_: u32| true;
        let features = column_features(neurons, &adj, &grown, &all);
        let (places, eigenvalues) = embed(&features).map_err(|e| format!("the {name} eye: {e}"))?;
        // Orientation from the T4 cells' directions.
        let rotate = orientation(&t4_directions(neurons, &adj, &cells, &grown.of, &places));
        let places: Vec<[f64; 2]> = places
            .iter()
            .map(|p| {
                let q = rotate * nalgebra::Vector2::new(p[0], p[1]);
                [q[0], q[1]]
            })
            .collect();
        let t4 = t4_directions(neurons, &adj, &cells, &grown.of, &places);
        // How retinotopic: all partners, then held out (sheet from even-numbered partner cells,
        // counted on odd-numbered ones).
        let sets = partner_sets(&adj, &grown, &all);
        let ratio = retinotopy(&places, &sets);
        let even = |j: u32| j.is_multiple_of(2);
        let odd = |j: u32| !j.is_multiple_of(2);
        let held_out = match embed(&column_features(neurons, &adj, &grown, &even)) {
            Ok((half_places, _)) => retinotopy(&half_places, &partner_sets(&adj, &grown, &odd)),
            Err(_) => f64::NAN,
        };

        // Photoreceptors: their column's place, else (two rounds) their placed partners' mean.
        let base = columns.len() as u32;
        let mut place_of: HashMap<u32, [f64; 2]> = HashMap::new();
        for (&i, &c) in &grown.of {
            place_of.insert(i, places[c as usize]);
            column_of[i as usize] = Some(base + c);
        }
        let receptors: Vec<u32> =
            cells.iter().copied().filter(|&i| rules::photoreceptor_kind(neurons.type_name(i as usize)).is_some()).collect();
        let in_columns = receptors.iter().filter(|i| grown.of.contains_key(i)).count();
        // Two rounds over every cell of the eye (R7/R8 are often reached only through Dm8/Dm9).
        for _ in 0..2 {
            let more: Vec<(u32, [f64; 2])> = cells
                .iter()
                .filter(|i| !place_of.contains_key(i))
                .filter_map(|&i| {
                    let (mut s, mut total) = ([0f64; 2], 0f64);
                    for &(j, w) in &adj[i as usize] {
                        if let Some(p) = place_of.get(&j) {
                            s[0] += p[0] * w as f64;
                            s[1] += p[1] * w as f64;
                            total += w as f64;
                        }
                    }
                    (total > 0.0).then(|| (i, [s[0] / total, s[1] / total]))
                })
                .collect();
            place_of.extend(more);
        }
        // Normalise this eye over its placed photoreceptors (weighted), so both eyes overlay.
        let weight = |i: u32| match rules::photoreceptor_kind(neurons.type_name(i as usize)) {
            Some(rules::PhotoreceptorKind::R1R6) => 10.0,
            _ => 1.0,
        };
        let placed: Vec<u32> = receptors.iter().copied().filter(|i| place_of.contains_key(i)).collect();
        let total: f64 = placed.iter().map(|&i| weight(i)).sum();
        if total == 0.0 {
            return Err(format!("the {name} eye: no photoreceptor could be linked to a column"));
        }
        let mut mean = [0f64; 2];
        let mut spread = [0f64; 2];
        for axis in 0..2 {
            mean[axis] = placed.iter().map(|&i| place_of[&i][axis] * weight(i)).sum::<f64>() / total;
            spread[axis] =
                (placed.iter().map(|&i| (place_of[&i][axis] - mean[axis]).powi(2) * weight(i)).sum::<f64>() / total).sqrt().max(1e-12);
        }
        for &i in &receptors {
            let kind = rules::photoreceptor_kind(neurons.type_name(i as usize)).expect("photoreceptors only");
            let at = place_of.get(&i).map(|p| {
                let u = (p[0] - mean[0]) / spread[0];
                let v = (p[1] - mean[1]) / spread[1];
                ((u * 1e6).round() as i64, (v * 1e6).round() as i64)
            });
            photoreceptors.push(SheetPhotoreceptor { neuron: i, kind, at });
        }
        columns.extend(places.iter().map(|&at| Column { eye: side, at }));
        reports.push(EyeReport {
            side: name.to_string(),
            columns: grown.count,
            photoreceptors: receptors.len(),
            in_columns,
            placed: placed.len(),
            eigenvalues,
            retinotopy_ratio: ratio,
            retinotopy_ratio_held_out: held_out,
            t4_directions_deg: t4.iter().map(|d| d.map(|d| d[1].atan2(d[0]).to_degrees()).unwrap_or(f64::NAN)).collect(),
        });
    }
    // Photoreceptors of neither eye (no side) stay off the board.
    for i in 0..n as u32 {
        if !matches!(neurons.side[i as usize], Side::Left | Side::Right)
            && let Some(kind) = rules::photoreceptor_kind(neurons.type_name(i as usize))
        {
            photoreceptors.push(SheetPhotoreceptor { neuron: i, kind, at: None });
        }
    }
    let mut eye = Eye::place_on_sheet(&photoreceptors);
    let worst = |f: fn(&EyeReport) -> f64| worst_of(reports.iter().map(f));
    eye.recovered = Some(Recovered {
        method: format!(
            "columns anchored on {ANCHOR}, grown through columnar types; {NEIGHBOURS}-nearest-neighbour graph of shared wide-field partners; Laplacian eigenmaps; oriented by T4a–d directions"
        ),
        retinotopy_ratio: worst(|r| r.retinotopy_ratio),
        retinotopy_ratio_held_out: worst(|r| r.retinotopy_ratio_held_out),
        eyes: reports,
    });
    Ok(Sheet { columns, column_of, eye })
}

/// The smallest of the eyes' figures, NaN when any eye has none (a build that failed is NaN) or
/// there is no eye: `f64::min` alone would skip a NaN, and two failures would read as +inf.
fn worst_of(figures: impl Iterator<Item = f64>) -> f64 {
    let mut worst = f64::NAN;
    for (i, f) in figures.enumerate() {
        if f.is_nan() {
            return f64::NAN;
        }
        worst = if i == 0 { f } else { worst.min(f) };
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eye_whose_figure_failed_makes_the_worst_figure_missing_not_another_eyes_or_infinity() {
        assert_eq!(worst_of([3.5, 4.0].into_iter()), 3.5);
        assert!(worst_of([f64::NAN, 4.0].into_iter()).is_nan(), "one eye failed: no figure, not the other eye's");
        assert!(worst_of([4.0, f64::NAN].into_iter()).is_nan());
        assert!(worst_of([f64::NAN, f64::NAN].into_iter()).is_nan(), "both failed: no figure, not +inf");
        assert!(worst_of(std::iter::empty()).is_nan(), "no eye: no figure");
    }

    #[test]
    fn procrustes_undoes_a_rotation_and_a_mirror() {
        // Directions as a mirrored, rotated eye would show them.
        let angle: f64 = 0.7;
        let (c, s) = (angle.cos(), angle.sin());
        let turn = |p: [f64; 2]| [c * p[0] - s * p[1], -(s * p[0] + c * p[1])];
        let dirs = [Some(turn([1.0, 0.0])), Some(turn([-1.0, 0.0])), Some(turn([0.0, 1.0])), None];
        let r = orientation(&dirs);
        for (d, t) in dirs.iter().zip([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]]) {
            let q = r * nalgebra::Vector2::new(d.unwrap()[0], d.unwrap()[1]);
            assert!((q[0] - t[0]).abs() < 1e-9 && (q[1] - t[1]).abs() < 1e-9, "{q:?} vs {t:?}");
        }
    }

    #[test]
    fn a_grid_graph_embeds_as_a_sheet() {
        // Columns on a 12×12 grid, each with partners shared only with grid neighbours: the
        // embedding must put grid neighbours next to each other.
        let side = 12usize;
        let mut features: Vec<HashMap<u32, f64>> = vec![HashMap::new(); side * side];
        let mut partner = 0u32;
        for y in 0..side {
            for x in 0..side {
                for (dx, dy) in [(1, 0), (0, 1), (1, 1)] {
                    if x + dx < side && y + dy < side {
                        features[y * side + x].insert(partner, 1.0);
                        features[(y + dy) * side + x + dx].insert(partner, 1.0);
                        partner += 1;
                    }
                }
                features[y * side + x].insert(100_000 + (y * side + x) as u32, 1.0);
            }
        }
        let (places, values) = embed(&features).unwrap();
        assert!(values[0].abs() < 1e-9 && values[1] > 1e-6);
        let sets: Vec<Vec<u32>> = features
            .iter()
            .map(|f| {
                let mut v: Vec<u32> = f.keys().copied().collect();
                v.sort();
                v
            })
            .collect();
        let ratio = retinotopy(&places, &sets);
        assert!(ratio > 3.0, "grid neighbours stay neighbours on the sheet: {ratio}");
    }

    #[test]
    fn a_graph_in_two_pieces_is_an_error() {
        let mut features: Vec<HashMap<u32, f64>> = vec![HashMap::new(); 40];
        for (i, f) in features.iter_mut().enumerate() {
            f.insert(if i < 20 { 1 } else { 2 }, 1.0);
            f.insert(1000 + i as u32, 0.5);
        }
        // With k = 8 inside groups of 20 the two halves never meet.
        let e = embed(&features).unwrap_err();
        assert!(e.contains("falls apart"), "{e}");
    }
}
