//! How much the board moves each region, step by step (seed "The fly was brain dead"): for a set
//! of boards, each neuron's spread of rates across the boards at each step, averaged over the
//! neurons of a region. Zero means the region does the same thing whatever the board; this is the
//! number that showed the first fly was brain dead, and what the viewer's region bars show.

use rayon::prelude::*;

use super::{Brain, STEPS, cpu};
use crate::chess::Planes;
use crate::connectome::rules::Region;

/// Per region, the mean over its neurons of the standard deviation of rates across `boards`, at
/// each of the 12 steps: `[region][step]`.
pub fn by_region(brain: &Brain, region: &[Region], boards: &[Planes]) -> Vec<[f64; STEPS]> {
    let batch = boards.len();
    let mut sums = vec![[0f64; STEPS]; Region::COUNT];
    let mut counts = vec![0usize; Region::COUNT];
    for r in region {
        counts[*r as usize] += 1;
    }
    cpu::run(brain, boards, |t, rates| {
        let spreads: Vec<f64> = rates.par_chunks(batch).map(spread).collect();
        for (j, s) in spreads.into_iter().enumerate() {
            sums[region[j] as usize][t] += s;
        }
    });
    sums.iter().zip(&counts).map(|(s, &c)| s.map(|v| if c == 0 { 0.0 } else { v / c as f64 })).collect()
}

/// Standard deviation of one neuron's rates across the positions of a batch.
pub fn spread(values: &[f32]) -> f64 {
    let n = values.len().max(1) as f64;
    let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
    (values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n).sqrt()
}
