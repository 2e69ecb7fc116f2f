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
    Nudged::think(brain, boards).envelope(boards.len(), neurons)
}

/// The CPU engine's rates of some boards beside the same think with every μ one ulp higher, kept
/// so the envelope over any first positions is read without thinking again (a bench checks
/// several batch sizes against one sample; a caller that already has the plain think passes it).
pub struct Nudged {
    plain: Vec<f32>,
    nudged: Vec<f32>,
    neurons: usize,
    batch: usize,
}

impl Nudged {
    /// Thinks `boards` twice: as the brain is, and with every μ one ulp higher.
    pub fn think(brain: &Brain, boards: &[Planes]) -> Self {
        Self::beside(brain, boards, cpu::think(brain, boards).data)
    }

    /// Thinks only the nudged brain, beside `plain`: the CPU engine's rates of `boards` already
    /// thought (laid out step, neuron, position).
    pub fn beside(brain: &Brain, boards: &[Planes], plain: Vec<f32>) -> Self {
        assert_eq!(plain.len(), STEPS * brain.neurons * boards.len(), "the plain rates are of these boards");
        let mut nudged = brain.clone();
        let mut h = brain.homeostasis().clone();
        for m in &mut h.mu {
            *m = m.next_up();
        }
        nudged.set_homeostasis(h);
        let nudged = cpu::think(&nudged, boards).data;
        Self { plain, nudged, neurons: brain.neurons, batch: boards.len() }
    }

    /// Per step, the largest difference over the first `positions` boards and `neurons` (all
    /// when empty). Each position thinks on its own, so the first positions' envelope is the one
    /// a think of those boards alone would give.
    pub fn envelope(&self, positions: usize, neurons: &[u32]) -> [f32; STEPS] {
        per_positions_max(&self.plain, &self.nudged, self.neurons, self.batch, positions.min(self.batch), neurons)
    }
}

/// Per step, the largest |a − b| over `neurons` (all when empty) of two think's rates laid out
/// step, neuron, position.
pub fn per_step_max(a: &[f32], b: &[f32], n: usize, batch: usize, neurons: &[u32]) -> [f32; STEPS] {
    per_positions_max(a, b, n, batch, batch, neurons)
}

/// `per_step_max` over the first `positions` of the batch only.
fn per_positions_max(a: &[f32], b: &[f32], n: usize, batch: usize, positions: usize, neurons: &[u32]) -> [f32; STEPS] {
    let gap = |t: usize, j: usize| {
        let at = (t * n + j) * batch..(t * n + j) * batch + positions;
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
