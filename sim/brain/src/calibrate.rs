//! Homeostasis (seed "The fly was brain dead", "The maths" 3): 256 real positions go through the
//! 12 steps once, and at every step each neuron's input is averaged over them (μₜ) with its spread
//! (σₜ, floored at 0.02; with "calm unreached", a neuron whose input did not move at all — variance
//! under 1e-10 — gets σ = 1). Each step is normalised with its own numbers as soon as they are
//! measured, so step t + 1 is measured on the brain as it will really run. The result is stored
//! beside the brain file (`NAME.homeostasis`), tied to the brain's checksum, and measured again
//! when missing or stale.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::container;

use crate::brain::{Brain, Homeostasis, STEPS, cpu};
use crate::chess::{Planes, planes, sample_positions};
use crate::error::{Error, Result};
use crate::files::hex;

pub const SIGMA_FLOOR: f32 = 0.02;
pub const UNREACHED_VARIANCE: f64 = 1e-10;
pub const CALIBRATION_POSITIONS: usize = 256;
const MAGIC: &[u8; 8] = b"FLYHOMEO";
const FORMAT_VERSION: u32 = 3;
/// What errors call a homeostasis file.
const WHAT: &str = "homeostasis";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationOptions {
    /// Neurons whose input never moved get σ = 1 instead of the floor.
    pub calm_unreached: bool,
}

/// The boards homeostasis is measured on: the first 256 of the shipped sample.
pub fn calibration_boards() -> Vec<Planes> {
    sample_positions().iter().take(CALIBRATION_POSITIONS).map(planes).collect()
}

/// Boards the engine runs at once while measuring: its fastest batch (a step's rates of 32 boards
/// still fit the caches; 256 at once ran the engine's slowest, generic loop). The engine gives the
/// same rates bit for bit at any batch, and the statistics take the boards in order either way.
const CHUNK: usize = 32;

/// Measures μₜ, σₜ step by step on `boards`; `progress(t)` after each step.
pub fn calibrate(brain: &Brain, boards: &[Planes], options: CalibrationOptions, progress: &(dyn Fn(usize) + Sync)) -> Homeostasis {
    calibrate_with(brain, boards, options, &|_, _, _| {}, progress)
}

/// What a model adds to a step's input u on top of W r + x, given the previous rates and the batch
/// (the dopamine fly's mushroom body: its Kenyon cells' sparse signal onto the MBONs).
pub type ExtraInput<'a> = dyn Fn(&[f32], usize, &mut [f32]) + Sync + 'a;

/// `calibrate` for a model whose input is W r + x plus `extra` (measured the same way, on that
/// model as it runs).
pub fn calibrate_with(
    brain: &Brain,
    boards: &[Planes],
    options: CalibrationOptions,
    extra: &ExtraInput,
    progress: &(dyn Fn(usize) + Sync),
) -> Homeostasis {
    let n = brain.neurons;
    let chunks: Vec<&[Planes]> = boards.chunks(CHUNK).collect();
    let inputs: Vec<Vec<f32>> = chunks.iter().map(|c| brain.eye_input(c)).collect();
    let mut h = Homeostasis::neutral(n);
    let mut working = brain.clone();
    let mut prev: Vec<Vec<f32>> = chunks.iter().map(|c| vec![0f32; n * c.len()]).collect();
    let mut u = prev.clone();
    let count = boards.len() as f64;
    for t in 0..STEPS {
        for (((c, x), p), u) in chunks.iter().zip(&inputs).zip(&prev).zip(&mut u) {
            cpu::input_sum(&working, p, x, c.len(), u);
            extra(p, c.len(), u);
        }
        let stats: Vec<(f32, f32)> = (0..n)
            .into_par_iter()
            .map(|j| {
                // Neuron j's input on every board, in board order.
                let values = || chunks.iter().zip(&u).flat_map(|(c, u)| &u[j * c.len()..(j + 1) * c.len()]).map(|&v| v as f64);
                let mean = values().sum::<f64>() / count;
                let var = values().map(|v| (v - mean).powi(2)).sum::<f64>() / count;
                let sigma = if options.calm_unreached && var < UNREACHED_VARIANCE { 1.0 } else { (var.sqrt() as f32).max(SIGMA_FLOOR) };
                (mean as f32, sigma)
            })
            .collect();
        for (j, (m, s)) in stats.into_iter().enumerate() {
            h.mu[t * n + j] = m;
            h.sigma[t * n + j] = s;
        }
        working.set_homeostasis(h.clone());
        for ((c, p), u) in chunks.iter().zip(&mut prev).zip(&mut u) {
            cpu::activate(&working, t, p, c.len(), u);
            std::mem::swap(p, u);
        }
        progress(t + 1);
    }
    h
}

#[derive(Serialize, Deserialize)]
struct Header {
    brain_checksum: String,
    neurons: usize,
    steps: usize,
    options: CalibrationOptions,
    positions: usize,
}

/// The homeostasis file beside a brain file.
pub fn homeostasis_path(brain_path: &Path, options: CalibrationOptions) -> PathBuf {
    brain_path.with_extension(if options.calm_unreached { "calm.homeostasis" } else { "homeostasis" })
}

pub fn save(h: &Homeostasis, path: &Path, brain_checksum: &str, options: CalibrationOptions) -> Result<()> {
    let header =
        Header { brain_checksum: brain_checksum.to_string(), neurons: h.neurons, steps: STEPS, options, positions: CALIBRATION_POSITIONS };
    container::write(path, MAGIC, FORMAT_VERSION, &header, &container::f32_bytes(h.mu.iter().chain(&h.sigma).copied()))
}

/// The stored homeostasis when it exists, is intact and belongs to this brain; None otherwise.
pub fn load(path: &Path, brain_checksum: &str, neurons: usize, options: CalibrationOptions) -> Option<Homeostasis> {
    match read(path, brain_checksum, neurons, options) {
        Ok(h) => h,
        Err(e) => {
            if path.exists() {
                tracing::warn!("{e}; measuring homeostasis again");
            }
            None
        }
    }
}

/// Reads a stored homeostasis: Ok(None) for a whole file measured on another brain, another
/// number of neurons or other options (measured again, never used), an error naming the file
/// for one that cannot be read or whose arrays do not fit its header.
pub fn read(path: &Path, brain_checksum: &str, neurons: usize, options: CalibrationOptions) -> Result<Option<Homeostasis>> {
    let bytes = container::file_bytes(path, MAGIC, FORMAT_VERSION, WHAT, u64::MAX)?;
    read_bytes(&bytes, path, brain_checksum, neurons, options)
}

/// `read` on a homeostasis file's bytes (read whole, or fetched by a page); `name` is what errors
/// call it. The values are sized by the brain the caller holds (`neurons`), never by the file.
pub fn read_bytes(
    bytes: &[u8],
    name: &Path,
    brain_checksum: &str,
    neurons: usize,
    options: CalibrationOptions,
) -> Result<Option<Homeostasis>> {
    let (header, body): (Header, &[u8]) = container::read_bytes(bytes, name, MAGIC, FORMAT_VERSION, WHAT, u64::MAX)?;
    if header.brain_checksum != brain_checksum || header.neurons != neurons || header.steps != STEPS || header.options != options {
        return Ok(None);
    }
    let values = container::f32_values(body);
    if Some(values.len()) != neurons.checked_mul(2 * STEPS) {
        return Err(crate::error::Error::table(
            name,
            format!("{} values where its header says {} neurons × {STEPS} steps × 2", values.len(), neurons),
        ));
    }
    let (mu, sigma) = values.split_at(STEPS * neurons);
    Ok(Some(Homeostasis { neurons, mu: mu.to_vec(), sigma: sigma.to_vec() }))
}

/// Loads the homeostasis of a brain file, or measures and stores it.
pub fn ensure(
    brain: &Brain,
    brain_path: &Path,
    brain_checksum: &str,
    options: CalibrationOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Homeostasis> {
    let path = homeostasis_path(brain_path, options);
    if let Some(h) = load(&path, brain_checksum, brain.neurons, options) {
        return Ok(h);
    }
    let h = calibrate(brain, &calibration_boards(), options, progress);
    save(&h, &path, brain_checksum, options).map_err(|e| Error::Invalid(format!("could not store homeostasis: {e}")))?;
    Ok(h)
}

/// A short fingerprint of a homeostasis (for logs and fly metadata).
pub fn fingerprint(h: &Homeostasis) -> String {
    let mut d = Sha256::new();
    for v in h.mu.iter().chain(&h.sigma) {
        d.update(v.to_le_bytes());
    }
    hex(&d.finalize())[..16].to_string()
}
