//! Positions for the point cloud when a release has none (FlyWire's bundle): a layout made from
//! the wiring inside a brain-shaped frame. Each region has a place where a fly's is (two optic
//! lobes with retina, lamina, medulla, lobula and lobula plate from the outside in; the central
//! brain between them, mushroom-body cells, dopamine neurons and descending neurons where they
//! sit), in µm, in the MaleCNS frame the stand-in uses (+x to the fly's left, +y down). Cells of
//! the eye's columns sit on their column's place on the recovered retinotopic sheet; every other
//! neuron starts at a point of its region and moves, a few rounds, towards the synapse-weighted
//! mean of its partners, staying inside its region's ellipsoid. Deterministic: the starting
//! points come from a hash of the body id. The viewer and the About tab label these positions
//! "layout from wiring": they are not anatomy.

use rayon::prelude::*;

use super::Neurons;
use super::retina::Sheet;
use super::rules::{Region, Side};

/// The frame's centre (µm), as the stand-in's cloud.
const CENTRE: [f64; 3] = [500.0, 300.0, 200.0];
/// Rounds of moving towards partners.
const ROUNDS: usize = 12;

/// Where a region sits: centre offset (x mirrored by side) and half-axes, µm.
fn place(region: Region) -> ([f64; 3], [f64; 3]) {
    match region {
        Region::Photoreceptors => ([360.0, 0.0, 0.0], [12.0, 150.0, 110.0]),
        Region::Lamina => ([320.0, 0.0, 0.0], [14.0, 135.0, 100.0]),
        Region::Medulla => ([262.0, 0.0, 0.0], [30.0, 115.0, 85.0]),
        Region::OpticLobe => ([245.0, 0.0, 0.0], [60.0, 120.0, 90.0]),
        Region::Lobula => ([205.0, 10.0, -10.0], [22.0, 80.0, 60.0]),
        Region::LobulaPlate => ([215.0, 10.0, 35.0], [14.0, 75.0, 45.0]),
        Region::VisualProjection => ([175.0, 0.0, 0.0], [30.0, 80.0, 60.0]),
        Region::VisualCentrifugal => ([150.0, -20.0, 0.0], [30.0, 60.0, 50.0]),
        Region::CentralBrain => ([0.0, 0.0, 0.0], [150.0, 100.0, 75.0]),
        Region::KenyonCells => ([65.0, -70.0, 45.0], [30.0, 25.0, 25.0]),
        Region::Mbon => ([50.0, -10.0, -30.0], [30.0, 30.0, 30.0]),
        Region::Dan => ([40.0, 35.0, -50.0], [30.0, 25.0, 20.0]),
        Region::Descending => ([0.0, 70.0, 0.0], [110.0, 35.0, 55.0]),
        Region::Ascending => ([0.0, 95.0, 10.0], [70.0, 25.0, 45.0]),
        Region::NerveCord => ([0.0, 130.0, 0.0], [60.0, 30.0, 40.0]),
        Region::BodySensory => ([90.0, 80.0, -40.0], [60.0, 40.0, 40.0]),
        Region::Motor => ([0.0, 105.0, 20.0], [60.0, 25.0, 35.0]),
        Region::Other => ([0.0, 20.0, 20.0], [120.0, 80.0, 60.0]),
    }
}

/// +1 for the fly's left (+x in the release frame), −1 for the right, 0 in the middle.
fn side_sign(side: Side) -> f64 {
    match side {
        Side::Left => 1.0,
        Side::Right => -1.0,
        Side::Middle | Side::Unknown => 0.0,
    }
}

/// A point of the unit ball from a body id (splitmix64, three coordinates, rejection).
fn unit_ball(body: i64) -> [f64; 3] {
    let mut state = body as u64 ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    loop {
        let p = [next(), next(), next()];
        if p.iter().map(|x| x * x).sum::<f64>() <= 1.0 {
            return p;
        }
    }
}

/// The region's ellipsoid for a neuron: centre and half-axes, x mirrored by side (neurons of no
/// side straddle the midline: their optic-lobe regions fall back to the middle of the brain).
fn ellipsoid(region: Region, side: Side) -> ([f64; 3], [f64; 3]) {
    let (c, r) = place(region);
    let s = side_sign(side);
    let x = if c[0] != 0.0 && s == 0.0 { 0.0 } else { c[0] * s };
    ([CENTRE[0] + x, CENTRE[1] + c[1], CENTRE[2] + c[2]], r)
}

/// Pulls `p` back inside the ellipsoid (along the line to its centre) when it is outside.
fn clamp_into(p: [f64; 3], centre: [f64; 3], radii: [f64; 3]) -> [f64; 3] {
    let d: Vec<f64> = (0..3).map(|k| (p[k] - centre[k]) / radii[k]).collect();
    let norm = d.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm <= 1.0 {
        return p;
    }
    [0, 1, 2].map(|k| centre[k] + d[k] / norm * radii[k])
}

/// Positions (µm) for every neuron, from the wiring. `edges` are (post, pre, synapses).
pub fn from_wiring(neurons: &Neurons, edges: &[(u32, u32, u32)], sheet: &Sheet) -> Vec<[f32; 3]> {
    let n = neurons.len();
    let shape: Vec<([f64; 3], [f64; 3])> = (0..n).map(|i| ellipsoid(neurons.region[i], neurons.side[i])).collect();
    let start: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let (c, r) = shape[i];
            let u = unit_ball(neurons.body_id[i]);
            [c[0] + u[0] * r[0], c[1] + u[1] * r[1], c[2] + u[2] * r[2]]
        })
        .collect();
    // Cells of the eye's columns: on the sheet (y, z from the column's place), at their region's
    // depth; they stay there.
    let mut fixed = vec![false; n];
    let mut pos = start.clone();
    for (i, column) in sheet.column_of.iter().enumerate() {
        let Some(col) = column else { continue };
        let (c, r) = shape[i];
        let at = sheet.columns[*col as usize].at;
        let depth = unit_ball(neurons.body_id[i])[0] * r[0] * 0.5;
        pos[i] = [c[0] + depth, c[1] + at[1] * r[1] * 0.95, c[2] + at[0] * r[2] * 0.95];
        fixed[i] = true;
    }
    // Partners in both directions, synapse-weighted: the incoming CSR and its transpose.
    let mut partners: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
    for &(post, pre, w) in edges {
        if post == pre {
            continue;
        }
        // libm's log1pf, not the platform's: the layout (and so the brain's checksum) is the same
        // on every system (Windows' own log1pf differs in the last bit for some counts).
        let w = libm::log1pf(w as f32);
        partners[post as usize].push((pre, w));
        partners[pre as usize].push((post, w));
    }
    for _ in 0..ROUNDS {
        let next: Vec<[f64; 3]> = (0..n)
            .into_par_iter()
            .map(|i| {
                if fixed[i] || partners[i].is_empty() {
                    return pos[i];
                }
                let (mut sum, mut total) = ([0f64; 3], 0f64);
                for &(j, w) in &partners[i] {
                    for k in 0..3 {
                        sum[k] += pos[j as usize][k] * w as f64;
                    }
                    total += w as f64;
                }
                let mean = sum.map(|s| s / total);
                // Half way between the partners and the neuron's own starting point, so a region
                // keeps its volume instead of collapsing onto its busiest cells.
                let p = [0, 1, 2].map(|k| 0.6 * mean[k] + 0.4 * start[i][k]);
                clamp_into(p, shape[i].0, shape[i].1)
            })
            .collect();
        pos = next;
    }
    pos.into_iter().map(|p| p.map(|x| x as f32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_stay_in_their_ellipsoid_and_sides_mirror() {
        for body in 0..500i64 {
            let u = unit_ball(body);
            assert!(u.iter().map(|x| x * x).sum::<f64>() <= 1.0);
        }
        let (l, _) = ellipsoid(Region::Medulla, Side::Left);
        let (r, _) = ellipsoid(Region::Medulla, Side::Right);
        assert!(l[0] > CENTRE[0] && r[0] < CENTRE[0], "the left optic lobe is at +x");
        assert!((l[0] - CENTRE[0] + (r[0] - CENTRE[0])).abs() < 1e-9);
        let p = clamp_into([CENTRE[0] + 1000.0, CENTRE[1], CENTRE[2]], CENTRE, [10.0, 10.0, 10.0]);
        assert!((p[0] - CENTRE[0] - 10.0).abs() < 1e-9);
    }
}
