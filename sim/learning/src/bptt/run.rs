//! A brain training run (`flychess train --brain`, seed "Let the brain learn, on a leash"):
//! TRAIN positions streamed in a seeded order, a batch at a time (the brain changes, so nothing is
//! cached): the CPU engine's forward pass on the brain as it now is, the hand-written backward
//! pass over the last `window` steps, each group's gradient (synapses, neurons, readout) scaled to
//! length ≤ 1, warm-up over the first 3 % and a cosine to zero at the last position; the readout
//! learns with Adam, the brain with Adam or SGD with momentum 0.9 (`--brain-opt`), θ clipped
//! within `max_change` of its measured strength. A run with both brain steps at 0 is today's
//! readout-only fly trained on the same stream: the control every brain run is compared with.
//!
//! Every `val_every` positions the run measures VAL and writes its checkpoint atomically
//! (`NAME.ckpt`: the current state with its optimiser's moments, and the best by VAL loss; the
//! brain stored as θ − θ⁰, mostly zeros, zstd-packed), so a stopped run resumes where its last
//! checkpoint left it, and the curve is written to `NAME.jsonl` after it (from the checkpoint's own).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Base, Forward, Gradient, Heads, Learnable, Reader, gradient, softplus_inverse};
use crate::error::{Error, Result};
use flychess_brain::brain::Brain;
use flychess_brain::chess::{Planes, planes, position_from_fen};
use flychess_brain::container;
use flychess_fly::data::Row;
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{Metrics, Target};

const MAGIC: &[u8; 8] = b"FLYBPTT1";
const VERSION: u32 = 1;

/// How the brain's numbers move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BrainOptimizer {
    Adam,
    /// SGD with momentum 0.9: each synapse moves by its own gradient.
    Sgd,
}

/// The leash (seed cheat 5) and the step sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Leash {
    /// Steps the gradient walks back through (1 ..= 12).
    pub window: usize,
    /// The homeostasis measured with "calm unreached" (σ = 1 for inputs that never moved).
    pub calm_unreached: bool,
    pub brain_optimizer: BrainOptimizer,
    /// Each θ stays where (1 − F)·s⁰ ≤ softplus(θ) ≤ (1 + F)·s⁰ (None: free).
    pub max_change: Option<f32>,
    pub lr_synapses: f32,
    pub lr_neurons: f32,
    pub lr_readout: f32,
}

impl Leash {
    /// Whether anything of the brain learns (else the run is the readout-only control).
    pub fn brain_learns(&self) -> bool {
        self.lr_synapses > 0.0 || self.lr_neurons > 0.0
    }

    /// The same step sizes for the readout, the brain frozen.
    pub fn readout_only(&self) -> Leash {
        Leash { lr_synapses: 0.0, lr_neurons: 0.0, ..self.clone() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    pub leash: Leash,
    /// TRAIN positions streamed in all.
    pub positions: usize,
    pub batch: usize,
    /// Positions between VAL measurements (and checkpoints).
    pub val_every: usize,
    /// VAL positions measured for the curve (the first of VAL).
    pub val: usize,
    /// The stream's order.
    pub seed: u64,
}

/// One point of the curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub positions: usize,
    pub seconds: f64,
    /// Mean training loss over the batches since the last point (None at the start).
    pub train_loss: Option<f64>,
    pub val: Metrics,
    pub brain_learns: bool,
}

/// Where the time of a run's steps went (seconds), for the speed report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub positions: usize,
    /// The forward pass (the CPU engine, every step kept).
    pub forward: f64,
    /// The backward pass (readout and brain).
    pub backward: f64,
    /// Putting θ, α, β into the brain and the optimiser steps.
    pub update: f64,
}

impl Timing {
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / (self.forward + self.backward + self.update).max(1e-9)
    }
    pub fn forward_positions_per_second(&self) -> f64 {
        self.positions as f64 / self.forward.max(1e-9)
    }
}

/// A state of the run: the readout and the brain's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub readout: Readout,
    pub brain: Learnable,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Header {
    options: RunOptions,
    brain_checksum: String,
    homeostasis: String,
    start: String,
    done: usize,
    seconds: f64,
    timing: Timing,
    curve: Vec<Point>,
    best_positions: usize,
    best_val_loss: f64,
    readout_inputs: usize,
    read_steps: Vec<usize>,
    /// Lengths of the body's arrays in order.
    lengths: Vec<usize>,
}

/// Adam's or momentum's running numbers for one group.
#[derive(Clone, Debug, Default)]
struct Moments {
    first: Vec<f32>,
    second: Vec<f32>,
    steps: u64,
}

impl Moments {
    fn new(len: usize, adam: bool) -> Moments {
        Moments { first: vec![0.0; len], second: if adam { vec![0.0; len] } else { Vec::new() }, steps: 0 }
    }

    /// One step of `values` against `grad` (already scaled to length ≤ 1).
    fn step(&mut self, values: &mut [f32], grad: &[f32], lr: f32, adam: bool) {
        self.steps += 1;
        if adam {
            let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
            let c1 = 1.0 - b1.powi(self.steps.min(1 << 20) as i32);
            let c2 = 1.0 - b2.powi(self.steps.min(1 << 20) as i32);
            (values, grad, (&mut self.first[..], &mut self.second[..])).into_par_iter().for_each(|(v, &g, (m, s))| {
                *m = b1 * *m + (1.0 - b1) * g;
                *s = b2 * *s + (1.0 - b2) * g * g;
                *v -= lr * (*m / c1) / ((*s / c2).sqrt() + eps);
            });
        } else {
            (values, grad, &mut self.first[..]).into_par_iter().for_each(|(v, &g, m)| {
                *m = 0.9 * *m + g;
                *v -= lr * *m;
            });
        }
    }
}

/// Scales a group of gradients to length ≤ 1 together.
fn clip(groups: &mut [&mut [f32]]) {
    let norm: f64 = groups.iter().map(|g| g.par_iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>()).sum::<f64>().sqrt();
    if norm > 1.0 {
        let s = (1.0 / norm) as f32;
        for g in groups.iter_mut() {
            g.par_iter_mut().for_each(|x| *x *= s);
        }
    }
}

/// The step size's share at `p` of the run: warm-up over the first 3 %, then a cosine to 0.
pub fn schedule(p: f64) -> f64 {
    if p < 0.03 { p / 0.03 } else { 0.5 * (1.0 + (std::f64::consts::PI * ((p - 0.03) / 0.97).min(1.0)).cos()) }
}

/// A batch of rows as boards and targets (rows whose FEN or labels cannot be used are left out).
pub fn boards_and_targets(rows: &[Row]) -> (Vec<Planes>, Vec<Target>) {
    rows.iter().filter_map(|r| Some((planes(&position_from_fen(&r.fen).ok()?), Target::of(r).ok()?))).unzip()
}

/// The readout's features for `boards` on `brain` as it is (the engine's readout path, 32 boards
/// a think), `[position · k + i]`.
pub fn features(brain: &Brain, boards: &[Planes], descending: &[u32], steps: &[usize]) -> Vec<f32> {
    boards.chunks(32).flat_map(|c| flychess_fly::readout::think_features_alone(brain, c, descending, steps)).flatten().collect()
}

/// Each position's outcome of `state` on `rows` (the brain put into `brain` first).
pub fn outcomes(
    base: &Base,
    brain: &mut Brain,
    state: &State,
    descending: &[u32],
    rows: &[Row],
) -> Vec<flychess_fly::scoring::PositionOutcome> {
    base.apply(&state.brain, brain);
    let (boards, targets) = boards_and_targets(rows);
    let x = features(brain, &boards, descending, &state.readout.read_steps);
    flychess_fly::scoring::outcomes(&state.readout, &x, &targets)
}

/// What the run needs besides its options.
pub struct Setup<'a> {
    pub base: &'a Base,
    /// The brain the run works on (its numbers are overwritten as the run goes).
    pub brain: &'a mut Brain,
    pub brain_checksum: &'a str,
    pub homeostasis: &'a str,
    pub descending: &'a [u32],
    /// The start: a readout-only fly's readout, with its name (part of the checkpoint's identity).
    pub start: (&'a str, &'a Readout),
    pub train: &'a [Row],
    pub val: &'a [Row],
    /// Think and send the error back on a GPU (None: the CPU).
    pub gpu: Option<&'a mut super::gpu::GpuTrainer>,
}

/// A finished (or stopped) run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub last: State,
    pub best: State,
    pub best_positions: usize,
    pub curve: Vec<Point>,
    pub seconds: f64,
    pub timing: Timing,
    pub finished: bool,
}

fn body(states: &[&State], moments: &[&Moments], base: &Base) -> (Vec<usize>, Vec<f32>) {
    let mut arrays: Vec<Vec<f32>> = Vec::new();
    for s in states {
        arrays.push(s.readout.weights.clone());
        arrays.push(s.readout.bias.clone());
        arrays.push(s.brain.theta.iter().zip(&base.theta0).map(|(t, t0)| t - t0).collect());
        arrays.push(s.brain.alpha.clone());
        arrays.push(s.brain.beta.clone());
    }
    for m in moments {
        arrays.push(m.first.clone());
        arrays.push(m.second.clone());
    }
    (arrays.iter().map(Vec::len).collect(), arrays.concat())
}

/// The run's state kept between sessions.
struct Saved {
    header: Header,
    states: Vec<State>,
    moments: Vec<Moments>,
}

/// How many numbers each of the three optimisers moves (readout, synapses, neurons) under `leash`.
fn optimised_lengths(leash: &Leash, base: &Base, like: &Readout) -> [usize; 3] {
    [
        like.weights.len() + like.bias.len(),
        if leash.lr_synapses > 0.0 { base.theta0.len() } else { 0 },
        if leash.lr_neurons > 0.0 { 2 * base.neurons() } else { 0 },
    ]
}

/// The lengths of a checkpoint's arrays (as `body` writes them) for a run of `leash` on this
/// brain and readout: two states (readout weights and biases, θ − θ⁰, α, β) and three optimisers'
/// two moments each (readout, synapses, neurons; SGD keeps no second moment).
fn checkpoint_lengths(leash: &Leash, base: &Base, like: &Readout) -> Vec<usize> {
    let state = [like.weights.len(), like.bias.len(), base.theta0.len(), base.neurons(), base.neurons()];
    let adam_brain = leash.brain_optimizer == BrainOptimizer::Adam;
    let [readout, synapses, neurons] = optimised_lengths(leash, base, like);
    let moments = [readout, readout, synapses, if adam_brain { synapses } else { 0 }, neurons, if adam_brain { neurons } else { 0 }];
    state.iter().chain(&state).chain(&moments).copied().collect()
}

/// What a resumed run reads first, checked as it checks it: the positions done and the VAL
/// points of the checkpoint at `path` of a run on this brain and readout.
pub fn read_checkpoint(path: &Path, base: &Base, like: &Readout) -> Result<(usize, Vec<Point>)> {
    let saved = load(path, base, like)?;
    Ok((saved.header.done, saved.header.curve))
}

fn load(path: &Path, base: &Base, like: &Readout) -> Result<Saved> {
    let (header, packed): (Header, Vec<u8>) = container::read(path, MAGIC, VERSION, "brain training checkpoint")?;
    // The header's lengths are the file's word: they must be this brain's and readout's under the
    // run's own leash before anything is unpacked, and the body may unpack to no more than they
    // add up to (a damaged body is refused, not unpacked into whatever it claims).
    if header.lengths != checkpoint_lengths(&header.options.leash, base, like) {
        return Err(Error::table(path, "the checkpoint belongs to another brain or readout (its arrays' lengths are not this run's)"));
    }
    let bytes = header.lengths.iter().sum::<usize>() as u64 * 4;
    let raw = flychess_fly::data::unpack_at_most(path, &packed, bytes, "checkpoint body")?
        .filter(|raw| raw.len() as u64 == bytes)
        .ok_or_else(|| Error::table(path, "the checkpoint's arrays do not add up"))?;
    let values = container::f32_values(&raw);
    let mut at = 0;
    let mut arrays = header.lengths.iter().map(|&len| {
        at += len;
        values[at - len..at].to_vec()
    });
    let mut states = Vec::new();
    for _ in 0..2 {
        let (weights, bias) = (arrays.next().unwrap_or_default(), arrays.next().unwrap_or_default());
        let theta: Vec<f32> = arrays.next().unwrap_or_default().iter().zip(&base.theta0).map(|(d, t0)| t0 + d).collect();
        let (alpha, beta) = (arrays.next().unwrap_or_default(), arrays.next().unwrap_or_default());
        states.push(State { readout: Readout { weights, bias, ..like.clone() }, brain: Learnable { theta, alpha, beta } });
    }
    let mut moments = Vec::new();
    for _ in 0..3 {
        moments.push(Moments { first: arrays.next().unwrap_or_default(), second: arrays.next().unwrap_or_default(), steps: 0 });
    }
    Ok(Saved { header, states, moments })
}

/// The checkpoint's path for a run kept at `stem` (`DATA/runs/NAME/brain`).
pub fn checkpoint_path(stem: &Path) -> PathBuf {
    stem.with_extension("ckpt")
}

/// Runs (or resumes) the training kept at `stem`: `stem.ckpt` and the curve `stem.jsonl`.
/// `progress(positions done, total, latest point)`; `stop` is looked at between batches.
pub fn run(
    setup: Setup,
    options: &RunOptions,
    stem: &Path,
    stop: &AtomicBool,
    progress: &dyn Fn(usize, usize, Option<&Point>),
) -> Result<Outcome> {
    if setup.train.is_empty() {
        return Err(Error::Invalid("no TRAIN positions to stream".into()));
    }
    if options.batch == 0 || options.val_every == 0 {
        return Err(Error::Invalid("the batch and the VAL interval must be at least 1".into()));
    }
    let path = checkpoint_path(stem);
    let curve_path = stem.with_extension("jsonl");
    let Saved { mut states, mut moments, mut header } = open_run(&path, &setup, options)?;
    let Setup { base, brain, descending, start, train, val, mut gpu, .. } = setup;
    let leash = &options.leash;
    let order = stream_order(train.len(), options.seed);
    let reader_steps = start.1.read_steps.clone();
    let learner =
        Learner { base, leash, descending, reader: Reader { descending, steps: &reader_steps }, bounds: bounds(base, leash.max_change) };
    let val_rows = &val[..options.val.min(val.len())];
    let started = Instant::now() - std::time::Duration::from_secs_f64(header.seconds);
    let save = |header: &mut Header, states: &[State], moments: &[Moments]| -> Result<()> {
        let (lengths, values) = body(&[&states[0], &states[1]], &[&moments[0], &moments[1], &moments[2]], base);
        header.lengths = lengths;
        let packed = zstd::encode_all(&container::f32_bytes(values)[..], 1).map_err(|e| Error::io(&path, e))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(container::write(&path, MAGIC, VERSION, header, &packed)?)
    };
    let measure = |brain: &mut Brain, state: &State| summarise_on(base, brain, state, descending, val_rows);
    if header.curve.is_empty() {
        let v = measure(brain, &states[0]);
        header.best_val_loss = v.loss;
        let point = Point { positions: 0, seconds: 0.0, train_loss: None, val: v, brain_learns: leash.brain_learns() };
        header.curve.push(point);
        save(&mut header, &states, &moments)?;
    }
    // The curve file is the checkpoint's curve, written after it: a kill between the two leaves
    // the file a point short, and the next start writes it again from the checkpoint (so no point
    // is ever in the file twice, nor one the checkpoint does not hold).
    write_curve(&curve_path, &header.curve)?;
    progress(header.done, options.positions, header.curve.last());
    let mut losses = Vec::new();
    while header.done < options.positions {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let take = options.batch.min(options.positions - header.done);
        let rows: Vec<Row> = (header.done..header.done + take).map(|i| train[order[i % order.len()]].clone()).collect();
        let (boards, targets) = boards_and_targets(&rows);
        let lr = schedule(header.done as f64 / options.positions as f64) as f32;
        if !boards.is_empty() {
            let state = &mut states[0];
            let g = learner.gradient(brain, gpu.as_deref_mut(), state, (&boards, &targets), &mut header.timing)?;
            let t2 = Instant::now();
            losses.push(g.loss);
            learner.step(state, &mut moments, g, lr);
            header.timing.update += t2.elapsed().as_secs_f64();
            header.timing.positions += boards.len();
        }
        header.done += take;
        let at_point = header.done % options.val_every < take || header.done == options.positions;
        if at_point {
            let v = measure(brain, &states[0]);
            let point = Point {
                positions: header.done,
                seconds: started.elapsed().as_secs_f64(),
                train_loss: (!losses.is_empty()).then(|| losses.iter().sum::<f64>() / losses.len() as f64),
                val: v,
                brain_learns: leash.brain_learns(),
            };
            losses.clear();
            if v.loss < header.best_val_loss {
                header.best_val_loss = v.loss;
                header.best_positions = header.done;
                states[1] = states[0].clone();
            }
            header.curve.push(point);
            header.seconds = started.elapsed().as_secs_f64();
            save(&mut header, &states, &moments)?;
            write_curve(&curve_path, &header.curve)?;
            progress(header.done, options.positions, header.curve.last());
        } else {
            progress(header.done, options.positions, None);
        }
    }
    let finished = header.done >= options.positions;
    let mut states = states.into_iter();
    let last = states.next().expect("two states");
    let best = states.next().expect("two states");
    Ok(Outcome {
        last,
        best,
        best_positions: header.best_positions,
        curve: header.curve,
        seconds: started.elapsed().as_secs_f64(),
        timing: header.timing,
        finished,
    })
}

/// The run kept at `path` (refused when it holds other settings, another brain or another
/// start), or a fresh one from `setup`'s start: both states the start, fresh moments, no point
/// of the curve yet.
fn open_run(path: &Path, setup: &Setup, options: &RunOptions) -> Result<Saved> {
    let (base, start) = (setup.base, setup.start);
    if path.exists() {
        let mut saved = load(path, base, start.1)?;
        let h = &saved.header;
        if h.options != *options || h.brain_checksum != setup.brain_checksum || h.homeostasis != setup.homeostasis || h.start != start.0 {
            return Err(Error::Invalid(format!(
                "{} holds a run with other settings, another brain or another start; choose another name",
                path.display()
            )));
        }
        let steps = (h.done / options.batch) as u64;
        for m in saved.moments.iter_mut() {
            m.steps = steps;
        }
        return Ok(saved);
    }
    let leash = &options.leash;
    let adam_brain = leash.brain_optimizer == BrainOptimizer::Adam;
    let start_state = State { readout: start.1.clone(), brain: base.start() };
    let [readout, synapses, neurons] = optimised_lengths(leash, base, start.1);
    let header = Header {
        options: options.clone(),
        brain_checksum: setup.brain_checksum.to_string(),
        homeostasis: setup.homeostasis.to_string(),
        start: start.0.to_string(),
        done: 0,
        seconds: 0.0,
        timing: Timing::default(),
        curve: Vec::new(),
        best_positions: 0,
        best_val_loss: f64::MAX,
        readout_inputs: start.1.inputs,
        read_steps: start.1.read_steps.clone(),
        lengths: Vec::new(),
    };
    Ok(Saved {
        header,
        states: vec![start_state.clone(), start_state],
        moments: vec![Moments::new(readout, true), Moments::new(synapses, adam_brain), Moments::new(neurons, adam_brain)],
    })
}

/// What every batch of a run reads besides its positions.
struct Learner<'a> {
    base: &'a Base,
    leash: &'a Leash,
    descending: &'a [u32],
    reader: Reader<'a>,
    /// θ's lower and upper bounds under the leash's `max_change` (None: free).
    bounds: (Option<Vec<f32>>, Option<Vec<f32>>),
}

impl Learner<'_> {
    /// The gradient of a batch of (boards, targets) at `state`: through the brain (put into
    /// `brain` first, the forward pass on `gpu` when given) when the brain learns, else the
    /// readout's alone (its θ, α and β empty). Each pass's time goes into `timing`.
    fn gradient(
        &self,
        brain: &mut Brain,
        mut gpu: Option<&mut super::gpu::GpuTrainer>,
        state: &State,
        (boards, targets): (&[Planes], &[Target]),
        timing: &mut Timing,
    ) -> Result<Gradient<f32>> {
        let t0 = Instant::now();
        if !self.leash.brain_learns() {
            let x = features(brain, boards, self.descending, self.reader.steps);
            let t1 = Instant::now();
            timing.forward += (t1 - t0).as_secs_f64();
            let (loss, readout_weights, readout_bias, _) = super::readout_gradient(&Heads::<f32>::of(&state.readout), &x, targets);
            timing.backward += t1.elapsed().as_secs_f64();
            let (theta, alpha, beta) = (Vec::new(), Vec::new(), Vec::new());
            return Ok(Gradient { loss, theta, alpha, beta, readout_weights, readout_bias, blame: None });
        }
        self.base.apply(&state.brain, brain);
        let rates = match gpu.as_deref_mut() {
            Some(g) => {
                g.engine.retune(brain)?;
                g.engine.think_rates(boards)?
            }
            None => flychess_brain::brain::cpu::think_walking(brain, boards, false),
        };
        let t1 = Instant::now();
        timing.forward += (t1 - t0).as_secs_f64();
        let model = self.base.model_of_brain(brain, &state.brain);
        let x = brain.eye_input(boards);
        let heads = Heads::<f32>::of(&state.readout);
        let (reader, window) = (&self.reader, self.leash.window);
        let g = match gpu {
            Some(gt) => {
                gt.backward.gradient(&model, Forward { x: &x, rates: &rates.data, batch: boards.len() }, &heads, reader, targets, window)?
            }
            None => gradient(&model, &x, &rates.data, boards.len(), &heads, reader, targets, window, false),
        };
        timing.backward += t1.elapsed().as_secs_f64();
        Ok(g)
    }

    /// One optimiser step of the readout and of each part of the brain with a step size (each
    /// group's gradient scaled to length ≤ 1 first), `lr` the schedule's share.
    fn step(&self, state: &mut State, moments: &mut [Moments], g: Gradient<f32>, lr: f32) {
        let leash = self.leash;
        let adam_brain = leash.brain_optimizer == BrainOptimizer::Adam;
        let Gradient { readout_weights: mut gw, readout_bias: mut gb, theta: mut g_theta, alpha: mut g_alpha, beta: mut g_beta, .. } = g;
        clip(&mut [&mut gw, &mut gb]);
        let mut readout_values: Vec<f32> = state.readout.weights.iter().chain(&state.readout.bias).copied().collect();
        let readout_grad: Vec<f32> = gw.into_iter().chain(gb).collect();
        moments[0].step(&mut readout_values, &readout_grad, leash.lr_readout * lr, true);
        let w_len = state.readout.weights.len();
        state.readout.weights.copy_from_slice(&readout_values[..w_len]);
        state.readout.bias.copy_from_slice(&readout_values[w_len..]);
        if leash.lr_synapses > 0.0 {
            clip(&mut [&mut g_theta]);
            moments[1].step(&mut state.brain.theta, &g_theta, leash.lr_synapses * lr, adam_brain);
            if let (Some(lo), Some(hi)) = &self.bounds {
                state.brain.theta.par_iter_mut().zip(lo.par_iter().zip(hi)).for_each(|(t, (&l, &h))| *t = t.clamp(l, h));
            }
        }
        if leash.lr_neurons > 0.0 {
            let n = self.base.neurons();
            clip(&mut [&mut g_alpha, &mut g_beta]);
            let mut neuron_values: Vec<f32> = state.brain.alpha.iter().chain(&state.brain.beta).copied().collect();
            let neuron_grad: Vec<f32> = g_alpha.into_iter().chain(g_beta).collect();
            moments[2].step(&mut neuron_values, &neuron_grad, leash.lr_neurons * lr, adam_brain);
            for (a, &v) in state.brain.alpha.iter_mut().zip(&neuron_values[..n]) {
                *a = v.max(0.01);
            }
            state.brain.beta.copy_from_slice(&neuron_values[n..]);
        }
    }
}

/// VAL (or any rows') metrics of `state`.
pub fn summarise_on(base: &Base, brain: &mut Brain, state: &State, descending: &[u32], rows: &[Row]) -> Metrics {
    flychess_fly::scoring::summarise(&outcomes(base, brain, state, descending, rows))
}

/// Writes the curve (one JSON line a point) atomically.
fn write_curve(path: &Path, curve: &[Point]) -> Result<()> {
    let mut text = String::new();
    for point in curve {
        text.push_str(&serde_json::to_string(point).map_err(|e| Error::Invalid(e.to_string()))?);
        text.push('\n');
    }
    Ok(flychess_brain::files::write_atomically(path, text.as_bytes())?)
}

/// The curve kept at `stem.jsonl` (the Train tab draws it).
pub fn read_curve(stem: &Path) -> Vec<Point> {
    std::fs::read_to_string(stem.with_extension("jsonl"))
        .map(|s| s.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
        .unwrap_or_default()
}

/// θ's bounds for `max_change` F: softplus⁻¹((1 ∓ F)·s⁰).
fn bounds(base: &Base, max_change: Option<f32>) -> (Option<Vec<f32>>, Option<Vec<f32>>) {
    let Some(f) = max_change else { return (None, None) };
    let at = |k: f64| base.weight0.par_iter().map(|w| softplus_inverse((w.abs() as f64 * k).max(1e-30)) as f32).collect::<Vec<f32>>();
    let (lo, hi) = (at((1.0 - f as f64).max(1e-6)), at(1.0 + f as f64));
    // θ⁰ itself always inside, whatever the rounding: a connection that never moves keeps its bits.
    let lo = lo.iter().zip(&base.theta0).map(|(&l, &t)| l.min(t)).collect();
    let hi = hi.iter().zip(&base.theta0).map(|(&h, &t)| h.max(t)).collect();
    (Some(lo), Some(hi))
}

/// The stream's order: a seeded permutation of TRAIN (the position at i is always the same).
pub fn stream_order(len: usize, seed: u64) -> Vec<usize> {
    use rand_chacha::rand_core::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..len).collect();
    for i in (1..len).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}
