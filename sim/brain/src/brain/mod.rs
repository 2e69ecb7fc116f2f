//! The brain as a dynamical system: the 12-step recurrent rate model of SPEC §4 (seed "The maths"
//! 3). Every neuron has a rate in [0, 1], all start at 0, and each step
//!
//! ```text
//! u = W r + x            (x: the eye's input, the same at every step)
//! z = α (u − μₜ) / σₜ + β   (computed as (u − μₜ) · gₜ + β with gₜ = α/σₜ, fused)
//! r ← (1 − λ) r + λ max(0, tanh z)
//! ```
//!
//! with W = sign(sender) × softplus(θ) from the brain file, λ = 0.5, α = 0.5, β = 0.3 and the
//! homeostasis μₜ, σₜ measured by `calibrate`. This module owns the prepared model (`Brain`), the
//! layout of rates (`Rates`) and the CPU engine (`cpu`).
//!
//! Layout of rates everywhere (CPU, and the GPU buffer the renderer binds): step-major, then
//! neuron, then position — `data[(step · neurons + neuron) · batch + position]` — so the senders'
//! rates of all positions in a batch sit in one cache line when a row is gathered.

pub mod agreement;
pub mod buffer;
pub mod cpu;
pub mod engine;
pub mod gpu;
pub mod local_order;
#[cfg(feature = "native")]
pub mod peaks;
pub mod signal;
pub mod simulator;

use crate::chess::Planes;
use crate::connectome::Connectome;
use crate::eye::EyeCell;

/// Steps per think.
pub const STEPS: usize = 12;
/// Marks a neuron that is not a placed photoreceptor in `Brain::eye_slot`.
pub const NO_EYE: u32 = u32::MAX;

/// Per-neuron constants of the update (the same for every neuron until neurons learn).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub alpha: f32,
    pub beta: f32,
    pub leak: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params { alpha: 0.5, beta: 0.3, leak: 0.5 }
    }
}

/// Homeostasis: each neuron's usual input μ and its spread σ at each step, `[step · n + neuron]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Homeostasis {
    pub neurons: usize,
    pub mu: Vec<f32>,
    pub sigma: Vec<f32>,
}

impl Homeostasis {
    /// μ = 0, σ = 1: the raw input (what the brain does before calibration).
    pub fn neutral(neurons: usize) -> Homeostasis {
        Homeostasis { neurons, mu: vec![0.0; STEPS * neurons], sigma: vec![1.0; STEPS * neurons] }
    }
    pub fn step(&self, t: usize) -> (&[f32], &[f32]) {
        let r = t * self.neurons..(t + 1) * self.neurons;
        (&self.mu[r.clone()], &self.sigma[r])
    }
}

/// A brain ready to run: signed connection weights as CSR over receiving neurons, the eye, the
/// constants and the homeostasis.
#[derive(Clone, Debug)]
pub struct Brain {
    pub neurons: usize,
    pub row_start: Vec<u32>,
    pub pre: Vec<u32>,
    /// sign(sender) × strength.
    pub weight: Vec<f32>,
    pub eye: Vec<EyeCell>,
    /// Per neuron: its index in `eye`, or `NO_EYE`.
    pub eye_slot: Vec<u32>,
    /// Set before the homeostasis: the gains and the blank-board shortcut are worked out from it.
    /// Read with `params()`, changed with `set_params` (which forgets what was worked out from
    /// the old ones).
    params: Params,
    homeostasis: Homeostasis,
    /// α / σₜ per step and neuron, worked out once so every engine multiplies by the same number.
    gain: Vec<f32>,
    /// What every think shares with a blank board's think (see `cpu::BlankShortcut`), worked out
    /// on first use and forgotten when the homeostasis changes.
    pub(crate) blank: std::sync::OnceLock<std::sync::Arc<cpu::BlankShortcut>>,
    /// The rows readers of a few neurons need (see `cpu::NeededRows`), kept once worked out.
    pub(crate) needed: cpu::NeededCache,
    /// The same brain renumbered for locality (see `local_order`), worked out on first use and
    /// forgotten when the homeostasis or the weights change.
    pub(crate) local: std::sync::OnceLock<std::sync::Arc<local_order::LocalOrder>>,
    /// The connections by sender (`outgoing`), worked out on first use (the wiring never changes).
    pub(crate) outgoing: std::sync::OnceLock<std::sync::Arc<Outgoing>>,
}

/// The brain's connections by sender: the transpose of its CSR over receivers, as edge indices
/// (so a connection's weight is read where the brain keeps it, `weight[e]`, even after a training
/// run changed it). The partners view and the backward pass both walk it.
#[derive(Debug)]
pub struct Outgoing {
    /// Sender i's connections are `by_sender[start[i]..start[i + 1]]`, receivers ascending.
    pub start: Vec<u32>,
    /// Edge indices into `pre` and `weight`.
    pub by_sender: Vec<u32>,
    /// The receiver of each connection, by edge index.
    pub post: Vec<u32>,
}

impl Outgoing {
    fn of(brain: &Brain) -> Outgoing {
        let n = brain.neurons;
        let mut post = vec![0u32; brain.pre.len()];
        let mut start = vec![0u32; n + 1];
        for j in 0..n {
            for e in brain.row(j) {
                post[e] = j as u32;
                start[brain.pre[e] as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut by_sender = vec![0u32; brain.pre.len()];
        for (e, &p) in brain.pre.iter().enumerate() {
            by_sender[fill[p as usize] as usize] = e as u32;
            fill[p as usize] += 1;
        }
        Outgoing { start, by_sender, post }
    }

    /// The edge indices of `sender`'s connections, receivers ascending.
    pub fn of_sender(&self, sender: usize) -> &[u32] {
        &self.by_sender[self.start[sender] as usize..self.start[sender + 1] as usize]
    }
}

impl Brain {
    /// The connections by sender (worked out once, then shared).
    pub fn outgoing(&self) -> std::sync::Arc<Outgoing> {
        self.outgoing.get_or_init(|| std::sync::Arc::new(Outgoing::of(self))).clone()
    }

    /// The brain of a connectome with neutral homeostasis (calibrate before use).
    pub fn new(c: &Connectome) -> Brain {
        let weight = (0..c.inputs.len()).map(|e| c.neurons.sign[c.inputs.pre[e] as usize] as f32 * c.inputs.strength[e]).collect();
        Brain::from_parts(c.neurons.len(), c.inputs.row_start.clone(), c.inputs.pre.clone(), weight, c.eye.cells.clone())
    }

    /// A brain from its CSR (each row's connections are put in sender order, which every engine
    /// sums in).
    pub fn from_parts(neurons: usize, row_start: Vec<u32>, mut pre: Vec<u32>, mut weight: Vec<f32>, eye: Vec<EyeCell>) -> Brain {
        for j in 0..neurons {
            let r = row_start[j] as usize..row_start[j + 1] as usize;
            if !pre[r.clone()].is_sorted() {
                let mut edges: Vec<(u32, f32)> = pre[r.clone()].iter().copied().zip(weight[r.clone()].iter().copied()).collect();
                edges.sort_by_key(|e| e.0);
                for (k, (p, w)) in r.zip(edges) {
                    (pre[k], weight[k]) = (p, w);
                }
            }
        }
        let mut eye_slot = vec![NO_EYE; neurons];
        for (i, c) in eye.iter().enumerate() {
            eye_slot[c.neuron as usize] = i as u32;
        }
        Brain {
            neurons,
            row_start,
            pre,
            weight,
            eye,
            eye_slot,
            params: Params::default(),
            gain: vec![Params::default().alpha; STEPS * neurons],
            homeostasis: Homeostasis::neutral(neurons),
            blank: std::sync::OnceLock::new(),
            needed: cpu::NeededCache::default(),
            local: std::sync::OnceLock::new(),
            outgoing: std::sync::OnceLock::new(),
        }
    }

    /// This brain with neuron `k` = `original[k]` (`place` the inverse), every row's connections
    /// kept in this brain's edge order and every constant moved with its neuron: the same sums in
    /// the same order, in other places (`local_order`).
    pub(crate) fn renumbered(&self, original: &[u32], place: &[u32]) -> Brain {
        let n = self.neurons;
        let mut row_start = Vec::with_capacity(n + 1);
        row_start.push(0u32);
        let (mut pre, mut weight) = (Vec::with_capacity(self.pre.len()), Vec::with_capacity(self.weight.len()));
        for &o in original {
            for e in self.row(o as usize) {
                pre.push(place[self.pre[e] as usize]);
                weight.push(self.weight[e]);
            }
            row_start.push(pre.len() as u32);
        }
        let eye: Vec<EyeCell> = self.eye.iter().map(|c| EyeCell { neuron: place[c.neuron as usize], ..*c }).collect();
        let mut eye_slot = vec![NO_EYE; n];
        for (i, c) in eye.iter().enumerate() {
            eye_slot[c.neuron as usize] = i as u32;
        }
        let moved = |v: &[f32]| -> Vec<f32> { (0..STEPS).flat_map(|t| original.iter().map(move |&o| v[t * n + o as usize])).collect() };
        Brain {
            neurons: n,
            row_start,
            pre,
            weight,
            eye,
            eye_slot,
            params: self.params,
            homeostasis: Homeostasis { neurons: n, mu: moved(&self.homeostasis.mu), sigma: moved(&self.homeostasis.sigma) },
            gain: moved(&self.gain),
            blank: std::sync::OnceLock::new(),
            needed: cpu::NeededCache::default(),
            local: std::sync::OnceLock::new(),
            outgoing: std::sync::OnceLock::new(),
        }
    }

    /// This brain renumbered for locality (worked out on the first call, about 0.4 s and 40 MB
    /// for FlyWire), what the CPU engine thinks in.
    pub fn local_order(&self) -> std::sync::Arc<local_order::LocalOrder> {
        self.local.get_or_init(|| std::sync::Arc::new(local_order::LocalOrder::new(self))).clone()
    }

    /// The rate model's constants (α, β, the leak).
    pub fn params(&self) -> Params {
        self.params
    }

    /// Installs other constants; the blank-board shortcut and the renumbered copy worked out from
    /// the old ones are forgotten (a clone keeps its original's until then), and the gains are
    /// α/σ again (a `tune`d brain's own gains are replaced).
    pub fn set_params(&mut self, p: Params) {
        let h = self.homeostasis.clone();
        self.params = p;
        self.set_homeostasis(h);
    }

    pub fn homeostasis(&self) -> &Homeostasis {
        &self.homeostasis
    }

    /// Installs a homeostasis (and the gains α/σ the engines use).
    pub fn set_homeostasis(&mut self, h: Homeostasis) {
        assert_eq!(h.neurons, self.neurons, "homeostasis of another brain");
        self.gain = h.sigma.iter().map(|&s| self.params.alpha / s).collect();
        self.homeostasis = h;
        self.blank = std::sync::OnceLock::new();
        self.local = std::sync::OnceLock::new();
    }

    /// Runs the brain with other connection weights and per-step constants: μ′ (the usual input,
    /// with each neuron's own bias folded in) and the gains g (each neuron's own α over σₜ), both
    /// `[step · n + neuron]` (a brain tuned by `bptt`). σ stays as measured; the blank-board shortcut worked out
    /// from the old numbers is forgotten (the rows readers need depend on the wiring only).
    pub fn tune(&mut self, weight: Vec<f32>, mu: Vec<f32>, gain: Vec<f32>) {
        assert_eq!(
            (weight.len(), mu.len(), gain.len()),
            (self.pre.len(), STEPS * self.neurons, STEPS * self.neurons),
            "tuning of another brain"
        );
        self.weight = weight;
        self.homeostasis.mu = mu;
        self.gain = gain;
        self.blank = std::sync::OnceLock::new();
        self.local = std::sync::OnceLock::new();
    }

    /// (μₜ, α/σₜ) of step `t`.
    pub fn step_constants(&self, t: usize) -> (&[f32], &[f32]) {
        let r = t * self.neurons..(t + 1) * self.neurons;
        (&self.homeostasis.mu[r.clone()], &self.gain[r])
    }

    /// All gains, `[step · n + neuron]` (what the GPU engine uploads).
    pub fn gains(&self) -> &[f32] {
        &self.gain
    }

    pub fn connections(&self) -> usize {
        self.pre.len()
    }

    /// Row `j`'s connections: `pre[row(j)]` are the neurons `j` hears, `weight[row(j)]` how much.
    pub fn row(&self, j: usize) -> std::ops::Range<usize> {
        self.row_start[j] as usize..self.row_start[j + 1] as usize
    }

    /// Bytes the brain holds in memory: its wiring (the CSR), the eye, the homeostasis and gains,
    /// and once worked out the blank-board shortcut and the copy renumbered for locality.
    pub fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        let shortcut = self.blank.get().map_or(0, |b| b.bytes()) + self.local.get().map_or(0, |l| l.bytes());
        size_of_val(&self.row_start[..])
            + size_of_val(&self.pre[..])
            + size_of_val(&self.weight[..])
            + size_of_val(&self.eye[..])
            + size_of_val(&self.eye_slot[..])
            + size_of_val(&self.homeostasis.mu[..])
            + size_of_val(&self.homeostasis.sigma[..])
            + size_of_val(&self.gain[..])
            + shortcut
    }

    /// The eye's input for a batch of boards: `[eye cell · batch + position]`.
    pub fn eye_input(&self, boards: &[Planes]) -> Vec<f32> {
        crate::eye::batch_input(&self.eye, boards)
    }
}

/// The rates of every step of one think of a batch, in the layout described above.
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    pub batch: usize,
    pub neurons: usize,
    pub data: Vec<f32>,
}

impl Rates {
    /// Rate of `neuron` for position `b` after step `t` (0-based: t = 0 is step 1).
    pub fn at(&self, t: usize, neuron: usize, b: usize) -> f32 {
        self.data[(t * self.neurons + neuron) * self.batch + b]
    }

    /// One step of the whole batch.
    pub fn step(&self, t: usize) -> &[f32] {
        let len = self.neurons * self.batch;
        &self.data[t * len..(t + 1) * len]
    }

    /// All 12 steps of one position, `[step · neurons + neuron]`: what the viewer replays.
    pub fn position(&self, b: usize) -> Vec<f32> {
        (0..STEPS).flat_map(|t| (0..self.neurons).map(move |j| (t, j))).map(|(t, j)| self.at(t, j, b)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_summed_in_sender_order_whatever_order_they_came_in() {
        // Neuron 2 hears 0 and 1 (given in reverse order); 0 is an eye cell.
        let eye = vec![EyeCell { neuron: 0, square: 0, role: crate::eye::EyeRole::Own }];
        let sorted = Brain::from_parts(3, vec![0, 0, 0, 2], vec![0, 1], vec![0.5, -0.25], eye.clone());
        let reversed = Brain::from_parts(3, vec![0, 0, 0, 2], vec![1, 0], vec![-0.25, 0.5], eye);
        assert_eq!((reversed.pre.clone(), reversed.weight.clone()), (sorted.pre.clone(), sorted.weight.clone()));
        let mut board = [[false; 64]; 12];
        board[0][0] = true;
        let (seen, blank) = (cpu::think(&sorted, &[board]), cpu::think(&sorted, &[[[false; 64]; 12]]));
        assert_eq!(seen, cpu::think(&reversed, &[board]));
        assert_ne!(seen.at(2, 2, 0), blank.at(2, 2, 0), "the board reaches neuron 2");
    }

    #[test]
    fn the_connections_by_sender_hold_every_connection_once_under_its_sender_receivers_ascending() {
        // 0 → 2, 1 → 2, 0 → 3, 2 → 3, 0 → 1.
        let brain = Brain::from_parts(4, vec![0, 0, 1, 3, 5], vec![0, 0, 1, 0, 2], vec![0.1, 0.2, 0.3, 0.4, 0.5], Vec::new());
        let out = brain.outgoing();
        let receivers = |i: usize| out.of_sender(i).iter().map(|&e| out.post[e as usize]).collect::<Vec<_>>();
        assert_eq!((receivers(0), receivers(1), receivers(2), receivers(3)), (vec![1, 2, 3], vec![2], vec![3], vec![]));
        for (e, &p) in brain.pre.iter().enumerate() {
            assert_eq!(out.of_sender(p as usize).iter().filter(|&&k| k as usize == e).count(), 1, "edge {e} once, under its sender");
        }
        assert!(std::sync::Arc::ptr_eq(&out, &brain.outgoing()), "worked out once");
    }
}
