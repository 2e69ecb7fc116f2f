//! How far two engines may honestly part on a brain. Engines that compute the same model but round
//! differently in the last bit (another tanh, an unfused multiply-add, another summation order)
//! start a few ulps apart, and a brain's sensitive neurons (those whose σ sits at the floor, so
//! their gain is large) grow the gap step after step: on FlyWire a last-bit difference becomes a
//! rate difference of order 0.1 by step 12, on the stand-in it stays near 1e-6. A fixed tolerance
//! is therefore either too loose on one brain or too strict on the other. `rounding_envelope`
//! measures the growth on the brain itself: the CPU engine's think against the same think with
//! every μ moved by one ulp (a last-bit difference in every neuron's input at every step), the
//! largest rate difference this makes at each step. An engine within a small multiple of that
//! envelope parts only as rounding allows; one beyond it computes something else (a wrong kernel
//! shows from the first step, where the envelope is about 1e-7).

use super::{Brain, STEPS, cpu};
use crate::chess::Planes;

/// How many times the rounding envelope another engine may part from the CPU engine by (a last
/// bit moved in every input is one rounding difference a step; an engine can have a few).
pub const ENVELOPE_FACTOR: f32 = 8.0;
/// Where the envelope is smaller than this (rates that hardly move), this is the tolerance.
pub const TOLERANCE_FLOOR: f32 = 1e-6;

/// Per step, the largest difference of `neurons`' rates (all of them when empty) between the CPU
/// engine's think of `boards` and the same think with every μ one ulp higher.
pub fn rounding_envelope(brain: &Brain, boards: &[Planes], neurons: &[u32]) -> [f32; STEPS] {
    let mut nudged = brain.clone();
    let mut h = brain.homeostasis().clone();
    for m in &mut h.mu {
        *m = m.next_up();
    }
    nudged.set_homeostasis(h);
    let (a, b) = (cpu::think(brain, boards), cpu::think(&nudged, boards));
    per_step_max(&a.data, &b.data, brain.neurons, boards.len(), neurons)
}

/// Per step, the largest |a − b| over `neurons` (all when empty) of two think's rates laid out
/// step, neuron, position.
pub fn per_step_max(a: &[f32], b: &[f32], n: usize, batch: usize, neurons: &[u32]) -> [f32; STEPS] {
    let gap = |t: usize, j: usize| {
        let at = (t * n + j) * batch..(t * n + j + 1) * batch;
        a[at.clone()].iter().zip(&b[at]).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max)
    };
    std::array::from_fn(|t| {
        if neurons.is_empty() {
            (0..n).map(|j| gap(t, j)).fold(0f32, f32::max)
        } else {
            neurons.iter().map(|&j| gap(t, j as usize)).fold(0f32, f32::max)
        }
    })
}

/// The tolerance at each step: `ENVELOPE_FACTOR` times the envelope, at least `TOLERANCE_FLOOR`.
pub fn tolerance(envelope: &[f32; STEPS]) -> [f32; STEPS] {
    envelope.map(|e| (ENVELOPE_FACTOR * e).max(TOLERANCE_FLOOR))
}

/// The first step (0-based) whose difference is past its tolerance, if any.
pub fn first_step_past(differences: &[f32; STEPS], envelope: &[f32; STEPS]) -> Option<usize> {
    let tol = tolerance(envelope);
    // A NaN difference is past any tolerance.
    (0..STEPS).find(|&t| differences[t].partial_cmp(&tol[t]).is_none_or(|o| o.is_gt()))
}
