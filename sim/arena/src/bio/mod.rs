//! The dopamine fly (SPEC §4, seed "The biological version" and "The maths" 9–10): the same brain
//! and 12 steps as every fly, with two changes. The synapses from the Kenyon cells onto the
//! mushroom body output neurons (MBONs) come out of W into a matrix M that learns, starting at their
//! measured strengths M⁰ = |W|; and only the most active 5 % of Kenyon cells pass their signal on to
//! the MBONs, through a steep sigmoid around the cut (the APL neuron's role), not a hard step:
//!
//! ```text
//! r̂ₖ = rₖ · sigmoid((rₖ − r₍ₚ₎) / 0.01)      r₍ₚ₎: the p-th highest Kenyon cell rate, p = ⌊0.05 K⌋
//! uₙ = [W′ r]ₙ + xₙ + Σₖ Mₖₙ r̂ₖ                W′: the brain without those synapses
//! ```
//!
//! The fly moves by looking at the board after each of its legal moves, from its own side, all in
//! one batch: the MBONs vote at step 12, approach +1 and avoid −1 weighted by their rates, and the
//! highest vote is played (the same no-repeat rule as the other flies). Which MBONs mean approach
//! and how much reward (PAM) and punishment (PPL1) dopamine reaches each come from the connectome
//! (`connectome::Groups`): an MBON's valence is the opposite of the dopamine that reaches it most.
//!
//! This module owns the mushroom body taken out of a brain (`MushroomBody`), the model that runs it
//! (`BioBrain`: W′ with its own homeostasis, the CPU engine's steps plus the mushroom body's input)
//! and one look at a batch of boards (`Glance`). Learning is in `learn`, the measurements in
//! `measure`, the dopamine fly's file in `file`.

pub mod comic;
pub mod file;
pub mod gpu;
pub mod learn;
pub mod measure;
pub mod run;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use flychess_brain::brain::{Brain, Homeostasis, Rates, STEPS, cpu};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::Planes;
use flychess_brain::connectome::Connectome;

/// The constants of the dopamine fly (the seed's table).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Constants {
    /// Share of Kenyon cells that pass their signal on (the APL neuron's sparseness).
    pub pass_share: f32,
    /// Width of the sigmoid around the cut.
    pub cut_width: f32,
    /// Learning rate η: how much of its measured strength a fully tagged synapse loses per dose.
    pub eta: f32,
    /// Drift back κ towards the measured strength after every dose.
    pub kappa: f32,
    /// Temperature T of the vote's softmax and of the dose.
    pub temperature: f32,
    /// Lessons per batch B (doses are averaged over the batch).
    pub batch: usize,
    /// Games mode: decay of the Kenyon cells' eligibility traces per fly move.
    pub trace_decay: f32,
    /// Games mode: dopamine per pawn of material won.
    pub per_pawn: f32,
    /// Games mode: dopamine when the fly is in check after the reply.
    pub in_check: f32,
}

impl Default for Constants {
    fn default() -> Self {
        Constants {
            pass_share: 0.05,
            cut_width: 0.01,
            eta: 0.1,
            kappa: 0.001,
            temperature: 1.0,
            batch: 64,
            trace_decay: 0.8,
            per_pawn: 0.1,
            in_check: -0.05,
        }
    }
}

impl Constants {
    /// What changes the model's rates (not how it learns): the homeostasis is keyed by it.
    fn model_key(&self) -> String {
        format!("pass {} width {}", self.pass_share, self.cut_width)
    }
}

/// The mushroom body taken out of a brain: the Kenyon cells, the MBONs with their valence and
/// their share of each dopamine, and the plastic synapses Kenyon cell → MBON grouped by MBON.
#[derive(Clone, Debug, PartialEq)]
pub struct MushroomBody {
    /// Neuron ids of the Kenyon cells.
    pub kenyon: Vec<u32>,
    /// Neuron ids of the MBONs.
    pub mbon: Vec<u32>,
    /// Per MBON: +1 approach, −1 avoid (from the connectome).
    pub valence: Vec<f32>,
    /// Per MBON: the synapses PAM (reward) and PPL1 (punishment) neurons make onto it, each over
    /// the most any MBON gets (ρᴾᴬᴹ, ρᴾᴾᴸ¹ in [0, 1]).
    pub rho_pam: Vec<f32>,
    pub rho_ppl1: Vec<f32>,
    /// MBON i's plastic synapses are `edge_start[i]..edge_start[i + 1]`.
    pub edge_start: Vec<u32>,
    /// The Kenyon cell (index into `kenyon`) of each plastic synapse.
    pub edge_kc: Vec<u32>,
    /// Each plastic synapse's measured strength M⁰ = |W|.
    pub m0: Vec<f32>,
    /// How many Kenyon cells pass (⌊share · K⌋, at least 1).
    pub pass: usize,
    /// The dopamine neurons (PAM, then PPL1) that synapse onto any MBON.
    pub dopamine: Vec<u32>,
    /// Per MBON: (index into `dopamine`, its synapses onto the MBON over the most synapses of its
    /// kind any MBON gets, PAM or not). Summed with every rate 1 this is ρᴾᴬᴹ and ρᴾᴾᴸ¹; with the
    /// dopamine neurons' own rates it is the dose the fly's own brain delivers (a pilot).
    pub dopamine_inputs: Vec<Vec<(u32, f32, bool)>>,
}

impl MushroomBody {
    pub fn synapses(&self) -> usize {
        self.m0.len()
    }
    pub fn edges(&self, i: usize) -> std::ops::Range<usize> {
        self.edge_start[i] as usize..self.edge_start[i + 1] as usize
    }

    /// r̂ for every Kenyon cell of a batch (`[kc · batch + b]`) from the rates `r` of all neurons
    /// (`[neuron · batch + b]`).
    pub fn sparse_kenyon(&self, r: &[f32], batch: usize, width: f32) -> Vec<f32> {
        let k = self.kenyon.len();
        let mut hat = vec![0f32; k * batch];
        let mut column = vec![0f32; k];
        for b in 0..batch {
            for (c, &n) in column.iter_mut().zip(&self.kenyon) {
                *c = r[n as usize * batch + b];
            }
            for (i, h) in self.sparse_column(&column, width).into_iter().enumerate() {
                hat[i * batch + b] = h;
            }
        }
        hat
    }

    /// r̂ of every Kenyon cell of one position from their rates `column` (in `kenyon`'s order).
    pub fn sparse_column(&self, column: &[f32], width: f32) -> Vec<f32> {
        let cut = nth_highest(column, self.pass);
        column.iter().map(|&rk| rk * sigmoid((rk - cut) / width)).collect()
    }

    /// Adds Σₖ Mₖₙ r̂ₖ to every MBON's input `u` (`[neuron · batch + b]`).
    pub fn add_input(&self, m: &[f32], hat: &[f32], batch: usize, u: &mut [f32]) {
        for (i, &n) in self.mbon.iter().enumerate() {
            let row = &mut u[n as usize * batch..(n as usize + 1) * batch];
            for e in self.edges(i) {
                let (w, src) = (m[e], &hat[self.edge_kc[e] as usize * batch..(self.edge_kc[e] as usize + 1) * batch]);
                for (a, &h) in row.iter_mut().zip(src) {
                    *a += w * h;
                }
            }
        }
    }
}

/// The logistic function, the same number on every system: `libm`'s exp, not the C library's
/// (mingw's expf and glibc's differ in the last bit of some values, and the dopamine fly's
/// homeostasis, measured through this function, must come out the same on Windows and Linux for a
/// shipped fly to load on both).
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + libm::expf(-x))
}

/// The `p`-th highest value (1-based) of `values`.
fn nth_highest(values: &[f32], p: usize) -> f32 {
    let mut v = values.to_vec();
    let i = p.clamp(1, v.len()) - 1;
    *v.select_nth_unstable_by(i, |a, b| b.total_cmp(a)).1
}

/// The dopamine fly's model: W′ (the brain without the plastic synapses) with the homeostasis
/// measured on this model, and the mushroom body.
#[derive(Clone, Debug)]
pub struct BioBrain {
    pub brain: Brain,
    pub body: MushroomBody,
    pub constants: Constants,
    /// The descending neurons (what the readout flies read; the ceiling reads them too).
    pub descending: Vec<u32>,
    /// The plain brain's checksum this model was made from.
    pub brain_checksum: String,
    /// Fingerprint of the homeostasis in force.
    pub homeostasis: String,
    /// The GPU engine looks think on (`think_on`); None: the CPU model.
    pub gpu: Option<std::sync::Arc<gpu::GpuBody>>,
}

/// One look at a batch of boards: what the fly votes with and what it learns with.
#[derive(Clone, Debug)]
pub struct Glance {
    pub batch: usize,
    /// The vote A of every board.
    pub vote: Vec<f32>,
    /// r̂ of every Kenyon cell at step 12, `[kc · batch + b]`.
    pub kenyon: Vec<f32>,
    /// Every MBON's rate at step 12, `[mbon · batch + b]`.
    pub mbon: Vec<f32>,
    /// The mean of steps 9–12 of the neurons read (`glance_reading`), `[neuron · batch + b]`.
    pub reading: Vec<f32>,
    /// The rates of all 12 steps when asked for (the viewer's).
    pub rates: Option<Rates>,
}

impl Glance {
    /// r̂ of Kenyon cell `k` for board `b`.
    pub fn kc(&self, k: usize, b: usize) -> f32 {
        self.kenyon[k * self.batch + b]
    }
}

impl BioBrain {
    /// Takes the mushroom body out of `brain` (the plain brain of `c`, any homeostasis): the
    /// model without homeostasis (`calibrated` or `ready` next).
    pub fn split(c: &Connectome, brain: &Brain, brain_checksum: &str, constants: Constants) -> Result<BioBrain> {
        let g = &c.groups;
        if g.kenyon.is_empty() || g.mbon.is_empty() {
            return Err(Error::Invalid("this brain has no Kenyon cells or no MBONs: no mushroom body to learn with".into()));
        }
        let n = brain.neurons;
        let mut kc_index = vec![u32::MAX; n];
        for (i, &k) in g.kenyon.iter().enumerate() {
            kc_index[k as usize] = i as u32;
        }
        let mut mbon_index = vec![u32::MAX; n];
        for (i, &m) in g.mbon.iter().enumerate() {
            mbon_index[m as usize] = i as u32;
        }
        // W′: every row but the MBONs' Kenyon-cell inputs; those become M, MBON by MBON.
        let (mut row_start, mut pre, mut weight) = (vec![0u32], Vec::new(), Vec::new());
        let mut per_mbon: Vec<Vec<(u32, f32)>> = vec![Vec::new(); g.mbon.len()];
        for j in 0..n {
            for e in brain.row(j) {
                let p = brain.pre[e] as usize;
                if mbon_index[j] != u32::MAX && kc_index[p] != u32::MAX {
                    per_mbon[mbon_index[j] as usize].push((kc_index[p], brain.weight[e].abs()));
                } else {
                    pre.push(brain.pre[e]);
                    weight.push(brain.weight[e]);
                }
            }
            row_start.push(pre.len() as u32);
        }
        let mut without = Brain::from_parts(n, row_start, pre, weight, brain.eye.clone());
        without.set_params(brain.params());
        let (mut edge_start, mut edge_kc, mut m0) = (vec![0u32], Vec::new(), Vec::new());
        for edges in &per_mbon {
            for &(k, w) in edges {
                edge_kc.push(k);
                m0.push(w);
            }
            edge_start.push(edge_kc.len() as u32);
        }
        // How many synapses each kind of dopamine neuron makes onto each MBON (the connectome's counts).
        let (mut pam, mut ppl1) = (vec![false; n], vec![false; n]);
        g.pam.iter().for_each(|&i| pam[i as usize] = true);
        g.ppl1.iter().for_each(|&i| ppl1[i as usize] = true);
        let (mut d_pam, mut d_ppl1) = (vec![0f64; g.mbon.len()], vec![0f64; g.mbon.len()]);
        let mut raw: Vec<Vec<(u32, f64, bool)>> = vec![Vec::new(); g.mbon.len()];
        for (i, &m) in g.mbon.iter().enumerate() {
            for e in c.inputs.row(m as usize) {
                let p = c.inputs.pre[e] as usize;
                let s = c.inputs.synapses[e] as f64;
                if pam[p] {
                    d_pam[i] += s;
                } else if ppl1[p] {
                    d_ppl1[i] += s;
                }
                if pam[p] || ppl1[p] {
                    raw[i].push((p as u32, s, pam[p]));
                }
            }
        }
        let mut dopamine: Vec<u32> = raw.iter().flatten().map(|r| r.0).collect();
        dopamine.sort_by_key(|&d| (!pam[d as usize], d));
        dopamine.dedup();
        let (top_pam, top_ppl1) = (d_pam.iter().copied().fold(0.0, f64::max), d_ppl1.iter().copied().fold(0.0, f64::max));
        let dopamine_inputs: Vec<Vec<(u32, f32, bool)>> = raw
            .iter()
            .map(|edges| {
                edges
                    .iter()
                    .map(|&(d, s, is_pam)| {
                        let top = if is_pam { top_pam } else { top_ppl1 };
                        let index = dopamine.binary_search_by_key(&(!is_pam, d), |&x| (!pam[x as usize], x)).expect("listed") as u32;
                        (index, (s / top) as f32, is_pam)
                    })
                    .collect()
            })
            .collect();
        let share = |d: &[f64]| {
            let top = d.iter().copied().fold(0.0, f64::max);
            d.iter().map(|&x| if top > 0.0 { (x / top) as f32 } else { 0.0 }).collect::<Vec<f32>>()
        };
        let pass = ((constants.pass_share as f64 * g.kenyon.len() as f64).floor() as usize).max(1);
        let body = MushroomBody {
            kenyon: g.kenyon.clone(),
            mbon: g.mbon.clone(),
            valence: g.mbon_valence.iter().map(|&v| if v >= 0 { 1.0 } else { -1.0 }).collect(),
            rho_pam: share(&d_pam),
            rho_ppl1: share(&d_ppl1),
            edge_start,
            edge_kc,
            m0,
            pass,
            dopamine,
            dopamine_inputs,
        };
        Ok(BioBrain {
            brain: without,
            body,
            constants,
            descending: g.descending.clone(),
            brain_checksum: brain_checksum.to_string(),
            homeostasis: "neutral".into(),
            gpu: None,
        })
    }

    /// The model's own homeostasis, measured on the calibration boards with M = M⁰ (read back from
    /// `path` when it was measured for this brain, these constants and this arithmetic before).
    pub fn ready(mut self, path: &std::path::Path, progress: &(dyn Fn(usize) + Sync)) -> Result<BioBrain> {
        let key = format!("{} dopamine fly: {} arithmetic {}", self.brain_checksum, self.constants.model_key(), self.arithmetic());
        let options = CalibrationOptions::default();
        let h = match flychess_brain::calibrate::load(path, &key, self.brain.neurons, options) {
            Some(h) => h,
            None => {
                let h = self.calibrate(&flychess_brain::calibrate::calibration_boards(), progress);
                flychess_brain::calibrate::save(&h, path, &key, options)
                    .map_err(|e| Error::Invalid(format!("could not store the dopamine fly's homeostasis: {e}")))?;
                h
            }
        };
        self.set_homeostasis(h);
        Ok(self)
    }

    /// A fingerprint of the arithmetic this program measures homeostasis with: the homeostasis of
    /// the first two calibration boards (about a second on the default brain). A stored homeostasis
    /// is used only when it was measured with the same arithmetic, so one measured by an earlier
    /// version whose numbers differed in the last bits (the same brain and constants) is measured
    /// again instead of refusing every fly trained under this version's.
    /// Worked out once per process for each model and constants (the arithmetic is this
    /// program's: it cannot change while it runs). The model is told by its content (`wiring_digest`),
    /// not only by the checksum it was made from, which hand-made brains may share.
    fn arithmetic(&self) -> String {
        static KNOWN: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, String>>> = std::sync::OnceLock::new();
        let known = KNOWN.get_or_init(Default::default);
        let model = format!("{} {} {}", self.brain_checksum, self.wiring_digest(), self.constants.model_key());
        if let Some(f) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&model) {
            return f.clone();
        }
        let boards = flychess_brain::calibrate::calibration_boards();
        let f = flychess_brain::calibrate::fingerprint(&self.calibrate(&boards[..2.min(boards.len())], &|_| {}));
        known.lock().unwrap_or_else(|e| e.into_inner()).insert(model, f.clone());
        f
    }

    /// SHA-256 of what the model computes with besides its constants: the plain brain's wiring
    /// (CSR and weights) and eye cells, and the mushroom body's Kenyon cells, MBONs and synapses.
    fn wiring_digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let (b, m) = (&self.brain, &self.body);
        let mut h = Sha256::new();
        h.update((b.neurons as u64).to_le_bytes());
        for part in [&b.row_start, &b.pre, &b.eye_slot, &m.kenyon, &m.mbon, &m.edge_start, &m.edge_kc] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(bytemuck::cast_slice(part));
        }
        for part in [&b.weight, &m.m0] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(bytemuck::cast_slice(part));
        }
        flychess_brain::files::hex(&h.finalize())
    }

    /// Measures the homeostasis of this model (M = M⁰) on `boards`.
    pub fn calibrate(&self, boards: &[Planes], progress: &(dyn Fn(usize) + Sync)) -> Homeostasis {
        let (body, width) = (&self.body, self.constants.cut_width);
        let extra = |r: &[f32], batch: usize, u: &mut [f32]| {
            let hat = body.sparse_kenyon(r, batch, width);
            body.add_input(&body.m0, &hat, batch, u);
        };
        flychess_brain::calibrate::calibrate_with(&self.brain, boards, CalibrationOptions::default(), &extra, progress)
    }

    /// Another homeostasis (a GPU engine set up before thinks with the old one: it is let go,
    /// `think_on` again to think there).
    pub fn set_homeostasis(&mut self, h: Homeostasis) {
        self.homeostasis = flychess_brain::calibrate::fingerprint(&h);
        self.brain.set_homeostasis(h);
        self.gpu = None;
    }

    /// One look at `boards` with plastic strengths `m`: 12 steps of u = W′r + x + Σ M r̂, the
    /// homeostasis and the leak as everywhere; the vote and the sparse Kenyon cells at step 12.
    /// `keep` keeps every step's rates too. The same numbers bit for bit for any batch.
    pub fn glance(&self, m: &[f32], boards: &[Planes], keep: bool) -> Glance {
        self.glance_reading(m, boards, keep, &[])
    }

    /// `glance`, also reading the mean of steps 9–12 of the neurons `reader` (the descending
    /// neurons, as the readout flies read them) into `Glance::reading`.
    /// On the GPU engine when the model thinks there (`think_on`) and `keep` is false.
    pub fn glance_reading(&self, m: &[f32], boards: &[Planes], keep: bool, reader: &[u32]) -> Glance {
        if !keep
            && !boards.is_empty()
            && let Some(g) = self.glance_on_gpu(m, boards, reader)
        {
            return g;
        }
        let (n, batch) = (self.brain.neurons, boards.len());
        let mut reading = vec![0f32; reader.len() * batch];
        let x = self.brain.eye_input(boards);
        let mut prev = vec![0f32; n * batch];
        let mut u = vec![0f32; n * batch];
        let mut all = keep.then(|| Vec::with_capacity(STEPS * n * batch));
        for t in 0..STEPS {
            cpu::input_sum(&self.brain, &prev, &x, batch, &mut u);
            if t > 0 {
                let hat = self.body.sparse_kenyon(&prev, batch, self.constants.cut_width);
                self.body.add_input(m, &hat, batch, &mut u);
            }
            cpu::activate(&self.brain, t, &prev, batch, &mut u);
            std::mem::swap(&mut prev, &mut u);
            if let Some(all) = &mut all {
                all.extend_from_slice(&prev);
            }
            if t >= STEPS - 4 {
                for (i, &nid) in reader.iter().enumerate() {
                    for b in 0..batch {
                        reading[i * batch + b] += prev[nid as usize * batch + b] / 4.0;
                    }
                }
            }
        }
        let kenyon = self.body.sparse_kenyon(&prev, batch, self.constants.cut_width);
        let mut mbon = vec![0f32; self.body.mbon.len() * batch];
        let mut vote = vec![0f32; batch];
        for (i, &nid) in self.body.mbon.iter().enumerate() {
            for b in 0..batch {
                let r = prev[nid as usize * batch + b];
                mbon[i * batch + b] = r;
                vote[b] += self.body.valence[i] * r;
            }
        }
        Glance { batch, vote, kenyon, mbon, reading, rates: all.map(|data| Rates { batch, neurons: n, data }) }
    }

    /// The votes of `boards`, `chunk` boards a think.
    pub fn votes(&self, m: &[f32], boards: &[Planes], chunk: usize) -> Vec<f32> {
        boards.chunks(chunk.max(1)).flat_map(|c| self.glance(m, c, false).vote).collect()
    }

    /// `glance` for any number of boards without the rates, thought `LOOK_CHUNK` at a time (the
    /// CPU engine's fastest batch) and put together as one batch.
    pub fn look(&self, m: &[f32], boards: &[Planes]) -> Glance {
        self.look_reading(m, boards, &[])
    }

    /// `look`, also reading the neurons `reader` (mean of steps 9–12) as `glance_reading` does.
    /// On a GPU engine, all the boards in one look (the engine cuts them into its own slabs).
    pub fn look_reading(&self, m: &[f32], boards: &[Planes], reader: &[u32]) -> Glance {
        if boards.len() <= LOOK_CHUNK || self.on_gpu() {
            return self.glance_reading(m, boards, false, reader);
        }
        let batch = boards.len();
        let (k, nm) = (self.body.kenyon.len(), self.body.mbon.len());
        let mut out = Glance {
            batch,
            vote: Vec::with_capacity(batch),
            kenyon: vec![0.0; k * batch],
            mbon: vec![0.0; nm * batch],
            reading: vec![0.0; reader.len() * batch],
            rates: None,
        };
        for (c, chunk) in boards.chunks(LOOK_CHUNK).enumerate() {
            let g = self.glance_reading(m, chunk, false, reader);
            let first = c * LOOK_CHUNK;
            for (all, part) in [(&mut out.kenyon, &g.kenyon), (&mut out.mbon, &g.mbon), (&mut out.reading, &g.reading)] {
                for (i, row) in part.chunks(g.batch).enumerate() {
                    all[i * batch + first..i * batch + first + g.batch].copy_from_slice(row);
                }
            }
            out.vote.extend_from_slice(&g.vote);
        }
        out
    }
}

/// Boards per think in `BioBrain::look`.
pub const LOOK_CHUNK: usize = 32;

impl BioBrain {
    /// The dopamine fly's move in `pos`: the board after each legal move from its own side, all in
    /// one look; the highest vote that does not repeat an earlier position (`earlier`: the game's
    /// position keys), else the highest. Returns the moves, their votes and the chosen index.
    pub fn choose(&self, m: &[f32], pos: &shakmaty::Chess, earlier: &[u64]) -> Option<(Vec<shakmaty::Move>, Vec<f32>, usize)> {
        use shakmaty::Position;
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            return None;
        }
        let us = pos.turn();
        let boards: Vec<Planes> = moves.iter().map(|&mv| learn::after(pos, mv, us)).collect();
        let vote = self.look(m, &boards).vote;
        let mut order: Vec<usize> = (0..moves.len()).collect();
        order.sort_by(|&a, &b| vote[b].total_cmp(&vote[a]).then(a.cmp(&b)));
        let fresh = order.iter().copied().find(|&i| {
            let mut p = pos.clone();
            p.play_unchecked(moves[i]);
            !earlier.contains(&flychess_fly::readout::position_key(&p))
        });
        let chosen = fresh.unwrap_or(order[0]);
        Some((moves, vote, chosen))
    }
}

/// The dopamine fly's model of a ready brain (`store::ready_brain`): the mushroom body split off
/// `plain`, its own homeostasis measured once and kept beside the brain file (one file per model:
/// the share that passes and the cut's width).
pub fn prepare(
    connectome: &Connectome,
    checksum: &str,
    plain: &Brain,
    brain_path: &std::path::Path,
    constants: Constants,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<BioBrain> {
    use sha2::{Digest, Sha256};
    let bio = BioBrain::split(connectome, plain, checksum, constants)?;
    let key = flychess_brain::files::hex(&Sha256::digest(constants.model_key().as_bytes()))[..8].to_string();
    bio.ready(&brain_path.with_extension(format!("dopamine-{key}.homeostasis")), progress)
}

/// The probabilities P(m) = softmax(A(m) / T) the window shows.
pub fn vote_probabilities(votes: &[f32], temperature: f32) -> Vec<f32> {
    let top = votes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = votes.iter().map(|v| libm::expf((v - top) / temperature)).collect();
    let total: f32 = e.iter().sum();
    e.iter().map(|x| x / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_passes_the_strong_fades_the_edge_and_silences_the_rest() {
        // Five Kenyon cells (neurons 0–4), one passes.
        let body = MushroomBody {
            kenyon: vec![0, 1, 2, 3, 4],
            mbon: vec![5],
            valence: vec![1.0],
            rho_pam: vec![0.0],
            rho_ppl1: vec![1.0],
            edge_start: vec![0, 2],
            edge_kc: vec![0, 4],
            m0: vec![0.5, 0.25],
            pass: 2,
            dopamine: Vec::new(),
            dopamine_inputs: vec![Vec::new()],
        };
        let r = [0.9, 0.1, 0.5, 0.505, 0.0, 0.0];
        let hat = body.sparse_kenyon(&r, 1, 0.01);
        assert!((hat[0] - 0.9).abs() < 1e-6, "far above the cut: passes whole ({})", hat[0]);
        assert!(hat[1] < 1e-6 && hat[4] == 0.0, "far below: silent");
        // The cut is the 2nd highest (0.505): the cell at the cut passes half, its neighbour 0.005
        // below it a little less than half — faded, not flipped.
        assert!((hat[3] - 0.2525).abs() < 1e-6, "{}", hat[3]);
        assert!(hat[2] > 0.1 && hat[2] < 0.25, "{}", hat[2]);
        let mut u = vec![0f32; 6];
        body.add_input(&body.m0, &hat, 1, &mut u);
        assert!((u[5] - 0.5 * hat[0]).abs() < 1e-7 && u[..5].iter().all(|&v| v == 0.0));
    }
}
