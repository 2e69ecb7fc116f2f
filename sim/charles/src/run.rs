//! Training Charles and measuring it. A run streams TRAIN positions in a seeded order (the same
//! order on a resume), batch by batch: the boards are tokenised, the loss is the cross-entropy
//! against the τ shares over the legal moves, AdamW steps with a linear warm-up and a cosine decay
//! to a tenth; every `val_every` steps VAL is measured and the model, the optimiser's state and
//! the run's record are written into the run's folder (`DATA/charles/NAME/`) with one commit
//! point: the weights and the optimiser's state go to `*.next.bpk` first, then the record, naming
//! their SHA-256, replaces `state.json` atomically, then the two files take their places (a reader
//! that finds them still waiting finishes the move, or drops them when the record does not name
//! them). So a run killed anywhere goes on from its last checkpoint with the same numbers, and
//! never pairs a record with the weights of another step. HOLD is measured like
//! the flies' (top-1, good move, loss, with intervals) by `evaluate`; `choose` is Charles playing.

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::Device;
use burn::tensor::activation::softmax;
use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Move, Position};

use super::{Charles, CharlesConfig, MoveBatch};
use crate::error::{Error, Result};
use flychess_brain::chess::position_from_fen;
use flychess_fly::data::{Dataset, Row};
use flychess_fly::scoring::{PositionOutcome, Target};
use flychess_learning::burn_device::FitOn;

/// What a run is asked to do (a run resumes only with the same options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainOptions {
    pub config: CharlesConfig,
    /// TRAIN positions used (the first of TRAIN).
    pub positions: usize,
    pub epochs: usize,
    pub batch: usize,
    pub learning_rate: f64,
    pub warmup: usize,
    pub weight_decay: f32,
    /// VAL positions measured at each checkpoint.
    pub val: usize,
    pub val_every: usize,
    pub seed: u64,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            config: CharlesConfig::small(),
            positions: 16_384,
            epochs: 1,
            batch: 32,
            learning_rate: 1e-3,
            warmup: 100,
            weight_decay: 0.01,
            val: 512,
            val_every: 128,
            seed: 1,
        }
    }
}

impl TrainOptions {
    pub fn steps(&self) -> usize {
        (self.positions * self.epochs).div_ceil(self.batch.max(1))
    }

    /// The learning rate at `step` (0-based): linear warm-up, then cosine to a tenth.
    pub fn rate(&self, step: usize) -> f64 {
        let total = self.steps().max(1);
        if step < self.warmup {
            return self.learning_rate * (step + 1) as f64 / self.warmup as f64;
        }
        let t = (step - self.warmup) as f64 / (total.saturating_sub(self.warmup)).max(1) as f64;
        let low = self.learning_rate * 0.1;
        low + (self.learning_rate - low) * 0.5 * (1.0 + (std::f64::consts::PI * t.min(1.0)).cos())
    }
}

/// One checkpoint's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub step: usize,
    pub positions: usize,
    /// Mean training loss since the previous point.
    pub train_loss: f64,
    pub val_loss: f64,
    pub val_top1: f64,
    pub seconds: f64,
}

/// The run's record, `state.json` beside the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub options: TrainOptions,
    pub step: usize,
    pub curve: Vec<Point>,
    pub seconds: f64,
    pub parameters: usize,
    pub finished: bool,
    /// SHA-256 of the weights this record goes with (empty in records written before checkpoints
    /// had one commit point, such as the shipped run's).
    #[serde(default)]
    pub model_sha256: String,
    /// SHA-256 of the optimiser's state this record goes with.
    #[serde(default)]
    pub optimiser_sha256: String,
}

/// A run's folder and files.
pub struct RunFiles {
    pub dir: PathBuf,
}

impl RunFiles {
    pub fn of(data: &Path, name: &str) -> RunFiles {
        RunFiles { dir: flychess_brain::files::DataFolder::at(data).charles().join(name) }
    }
    pub fn model(&self) -> PathBuf {
        self.dir.join("model.bpk")
    }
    fn optimiser(&self) -> PathBuf {
        self.dir.join("optimiser.bpk")
    }
    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    /// The run's record (read only: a run may be training in another thread or process); None
    /// when there is none or it cannot be read (`record` says which).
    pub fn read_state(&self) -> Option<State> {
        self.record().ok().flatten()
    }

    /// The run's record: None when there is no run of this name, an error naming the file when
    /// there is one whose record cannot be read.
    pub fn record(&self) -> Result<Option<State>> {
        let path = self.state();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| Error::table(&path, format!("not a Charles run's record: {e}")))
    }

    /// Where a checkpoint's file waits until the record naming it is written.
    fn waiting(path: &Path) -> PathBuf {
        path.with_extension("next.bpk")
    }

    /// Finishes the move of a checkpoint's files that `state` names (the record was written, the
    /// kill came before they took their places); drops waiting files it does not name (the kill
    /// came before the record). Nothing to do, and nothing written, in a settled folder. Only the
    /// trainer settles (at its start): a reader finds the weights where they are (`weights`).
    fn settle(&self, state: &State) {
        for (path, want) in [(self.model(), &state.model_sha256), (self.optimiser(), &state.optimiser_sha256)] {
            let waiting = Self::waiting(&path);
            if !waiting.exists() {
                continue;
            }
            let named = !want.is_empty() && file_sha256(&waiting).is_ok_and(|d| d == *want);
            let _ = if named { std::fs::rename(&waiting, &path) } else { std::fs::remove_file(&waiting) };
        }
    }

    /// The run's record and the file of the weights it names; an error when there is no record or
    /// the weights are another step's.
    pub fn checked_state(&self) -> Result<(State, PathBuf)> {
        let state = self.read_state().ok_or_else(|| Error::Invalid(format!("no Charles run in {}", self.dir.display())))?;
        let weights = self.weights(&state)?;
        Ok((state, weights))
    }

    /// Where the weights `state` was written with are: `model.bpk`, or still waiting as
    /// `model.next.bpk` (a checkpoint being written now, or one a kill left before the move). A
    /// record from before checkpoints named their weights (the shipped run's) takes `model.bpk`.
    pub fn weights(&self, state: &State) -> Result<PathBuf> {
        if state.model_sha256.is_empty() {
            return Ok(self.model());
        }
        // The last look again at model.bpk: the move may happen between the first two.
        for path in [self.model(), Self::waiting(&self.model()), self.model()] {
            if file_sha256(&path).is_ok_and(|d| d == state.model_sha256) {
                return Ok(path);
            }
        }
        Err(Error::table(&self.model(), "these are not the weights the run's state.json was written with"))
    }
}

fn file_sha256(path: &Path) -> Result<String> {
    Ok(flychess_brain::connectome::download::sha256_file(path)?)
}

fn adamw(weight_decay: f32) -> ModuleOptimizer {
    AdamWConfig::new().with_weight_decay(weight_decay).init()
}

fn record_error(e: impl std::fmt::Debug) -> Error {
    Error::Invalid(format!("Charles's weights: {e:?}"))
}

/// `record_error` as the brain crate's atomic writer wants it.
fn save_error(e: impl std::fmt::Debug) -> flychess_brain::Error {
    flychess_brain::Error::Invalid(format!("Charles's weights: {e:?}"))
}

/// Charles of `config` with the weights in the file at `path` (an error naming the file when they
/// cannot be read or are not this shape's).
fn load_weights(config: &CharlesConfig, path: &Path, device: &Device) -> Result<Charles> {
    // burnpack's reader sizes its metadata buffer by the header's word (up to 100 MB) before it
    // reads it: a length the file cannot hold is refused here first.
    let damaged = |what: &str| Error::table(path, format!("Charles's weights: {what}"));
    let mut head = [0u8; 10];
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    std::io::Read::read_exact(&mut file, &mut head).map_err(|_| damaged("too short for a burnpack header"))?;
    let length = file.metadata().map_err(|e| Error::io(path, e))?.len();
    if 10 + u32::from_le_bytes(head[6..10].try_into().expect("4 bytes")) as u64 > length {
        return Err(damaged("the header claims more metadata than the file holds (damaged)"));
    }
    Charles::new(config, device).try_load_file(path).map_err(|e| damaged(&e.to_string()))
}

/// Loads a trained Charles from a run's folder.
pub fn load(files: &RunFiles, device: &Device) -> Result<(Charles, State)> {
    let (state, weights) = files.checked_state()?;
    let model = load_weights(&state.options.config, &weights, device)?;
    Ok((model, state))
}

/// One row made ready: its position, legal moves (shakmaty's order) and target.
pub struct Prepared {
    pub position: Chess,
    pub moves: Vec<Move>,
    pub target: Target,
}

pub fn prepare(row: &Row) -> Result<Prepared> {
    let position = position_from_fen(&row.fen)?;
    let moves = position.legal_moves().into_iter().collect();
    Ok(Prepared { position, moves, target: Target::of(row)? })
}

fn batch_of(rows: &[&Prepared], device: &Device) -> MoveBatch {
    let items: Vec<(&Chess, &[Move], &[f32])> = rows.iter().map(|p| (&p.position, p.moves.as_slice(), p.target.share.as_slice())).collect();
    MoveBatch::new(&items, device)
}

/// Each position's outcome on `rows` (top-1, good move, the cross-entropy as its loss: Charles has
/// no value head), `batch` positions at a time.
pub fn evaluate(model: &Charles, rows: &[Prepared], batch: usize, device: &Device) -> Result<Vec<PositionOutcome>> {
    // Off the autodiff tape: a forward on it keeps what a backward would need.
    let (model, device) = (&model.valid(), &device.clone().inner());
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(batch.max(1)) {
        let refs: Vec<&Prepared> = chunk.iter().collect();
        let b = batch_of(&refs, device);
        let p = softmax(model.logits(&b), 1).into_data().try_into_vec::<f32>().map_err(record_error)?;
        for (i, r) in chunk.iter().enumerate() {
            let probs = &p[i * b.width..i * b.width + r.moves.len()];
            let pick = (0..probs.len()).max_by(|&x, &y| probs[x].total_cmp(&probs[y])).unwrap_or(0);
            let ce: f64 =
                r.target.share.iter().zip(probs).filter(|(s, _)| **s > 0.0).map(|(s, q)| -(*s as f64) * (q.max(1e-30) as f64).ln()).sum();
            out.push(PositionOutcome { loss: ce, policy_loss: ce, top1: pick == r.target.best, good: r.target.good.contains(&pick) });
        }
    }
    Ok(out)
}

/// Charles's probabilities for every legal move of `pos` (shakmaty's order).
pub fn probabilities(model: &Charles, pos: &Chess, device: &Device) -> Result<(Vec<Move>, Vec<f32>)> {
    let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
    if moves.is_empty() {
        return Ok((moves, Vec::new()));
    }
    let (model, device) = (&model.valid(), &device.clone().inner());
    let b = MoveBatch::new(&[(pos, moves.as_slice(), &[])], device);
    let p = softmax(model.logits(&b), 1).into_data().try_into_vec::<f32>().map_err(record_error)?;
    Ok((moves.clone(), p[..moves.len()].to_vec()))
}

/// The seeded order of TRAIN rows for epoch `e`.
fn order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    let mut o: Vec<usize> = (0..n).collect();
    let mut s = (seed ^ (epoch as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        o.swap(i, (s % (i as u64 + 1)) as usize);
    }
    o
}

/// Trains (or resumes) the run `files` on `dataset`'s TRAIN, measuring VAL at each checkpoint.
/// `progress` sees each point; `stop()` ends after the current step (a checkpoint is written).
pub fn train(
    files: &RunFiles,
    dataset: &Dataset,
    options: &TrainOptions,
    on: FitOn,
    progress: &dyn Fn(&Point, &State),
    stop: &dyn Fn() -> bool,
) -> Result<State> {
    let device = on.device()?;
    std::fs::create_dir_all(&files.dir).map_err(|e| Error::io(&files.dir, e))?;
    let train_rows = &dataset.train()[..options.positions.min(dataset.train().len())];
    let val_rows = &dataset.val()[..options.val.min(dataset.val().len())];
    if train_rows.is_empty() || val_rows.is_empty() {
        return Err(Error::Invalid("Charles needs TRAIN and VAL positions".into()));
    }
    let val: Vec<Prepared> = val_rows.iter().map(prepare).collect::<Result<_>>()?;
    // A run of this name is gone on or left alone, never started over: its record must read
    // and its settings be these (a damaged record or other settings are the user's to look at).
    let previous = files.record()?;
    if let Some(s) = &previous
        && s.options != *options
    {
        return Err(Error::Invalid(format!(
            "a Charles run named {} exists with other settings ({}): choose another name, or its settings to go on",
            files.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            files.state().display()
        )));
    }
    // The trainer owns the folder: a checkpoint a kill interrupted is finished (or dropped) first.
    if let Some(s) = &previous {
        files.settle(s);
    }
    let previous = files.read_state();
    let (mut model, mut optimiser, mut state) = match previous {
        Some(s) if files.model().exists() => {
            let weights = files.weights(&s)?;
            let model = load_weights(&options.config, &weights, &device)?;
            flychess_learning::burn_device::default_device_that_exists();
            let optimiser = match burn::optim::OptimizerRecord::load(files.optimiser()) {
                Ok(r) if s.optimiser_sha256.is_empty() || file_sha256(&files.optimiser())? == s.optimiser_sha256 => {
                    adamw(options.weight_decay).load_record(r)
                }
                _ => {
                    tracing::warn!("{}: the optimiser's state is missing or damaged; AdamW starts afresh", files.optimiser().display());
                    adamw(options.weight_decay)
                }
            };
            (model, optimiser, s)
        }
        _ => {
            let model = Charles::seeded(&options.config, &device, options.seed);
            let parameters = model.parameters();
            (
                model,
                adamw(options.weight_decay),
                State {
                    options: options.clone(),
                    step: 0,
                    curve: Vec::new(),
                    seconds: 0.0,
                    parameters,
                    finished: false,
                    model_sha256: String::new(),
                    optimiser_sha256: String::new(),
                },
            )
        }
    };
    if state.finished {
        return Ok(state);
    }
    let total = options.steps();
    let started = Instant::now();
    let seconds_before = state.seconds;
    let (mut loss_sum, mut loss_n) = (0.0, 0usize);
    let mut epoch_order: Option<(usize, Vec<usize>)> = None;
    while state.step < total {
        let first = state.step * options.batch;
        let epoch = first / train_rows.len();
        if epoch_order.as_ref().is_none_or(|(e, _)| *e != epoch) {
            epoch_order = Some((epoch, order(train_rows.len(), options.seed, epoch)));
        }
        let o = &epoch_order.as_ref().expect("set").1;
        let rows: Vec<Prepared> =
            (first..first + options.batch).map(|k| &train_rows[o[k % train_rows.len()]]).map(prepare).collect::<Result<_>>()?;
        let refs: Vec<&Prepared> = rows.iter().collect();
        let batch = batch_of(&refs, &device);
        let loss = model.loss(&batch);
        let value = loss.clone().into_data().try_into_vec::<f32>().map_err(record_error)?[0] as f64;
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optimiser.step(options.rate(state.step), model, grads);
        state.step += 1;
        loss_sum += value;
        loss_n += 1;
        let last = state.step == total;
        let stopping = stop();
        if state.step.is_multiple_of(options.val_every) || last || stopping {
            let outcomes = evaluate(&model, &val, 64, &device)?;
            let m = flychess_fly::scoring::summarise(&outcomes);
            state.seconds = seconds_before + started.elapsed().as_secs_f64();
            let point = Point {
                step: state.step,
                positions: state.step * options.batch,
                train_loss: loss_sum / loss_n.max(1) as f64,
                val_loss: m.loss,
                val_top1: m.top1,
                seconds: state.seconds,
            };
            state.curve.push(point.clone());
            state.finished = last;
            (loss_sum, loss_n) = (0.0, 0);
            // The checkpoint's one commit point is the record (see the module's notes).
            let (model_next, optimiser_next) = (RunFiles::waiting(&files.model()), RunFiles::waiting(&files.optimiser()));
            flychess_brain::files::write_atomically_via(&model_next, |p| model.clone().save_file(p).map_err(save_error))?;
            flychess_brain::files::write_atomically_via(&optimiser_next, |p| optimiser.to_record().save(p).map_err(save_error))?;
            state.model_sha256 = file_sha256(&model_next)?;
            state.optimiser_sha256 = file_sha256(&optimiser_next)?;
            flychess_brain::files::write_atomically(
                &files.state(),
                &serde_json::to_vec_pretty(&state).map_err(|e| Error::Invalid(e.to_string()))?,
            )?;
            files.settle(&state);
            progress(&point, &state);
            if stopping {
                break;
            }
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_warms_up_then_decays_to_a_tenth() {
        let o = TrainOptions { positions: 3_200, batch: 32, warmup: 10, learning_rate: 1e-3, ..Default::default() };
        assert_eq!(o.steps(), 100);
        assert!((o.rate(0) - 1e-4).abs() < 1e-12);
        assert!((o.rate(9) - 1e-3).abs() < 1e-12);
        assert!(o.rate(50) < 1e-3 && o.rate(50) > 1e-4);
        assert!((o.rate(100) - 1e-4).abs() < 1e-9);
    }

    #[test]
    fn the_order_is_a_seeded_permutation() {
        let a = order(100, 1, 0);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_eq!(a, order(100, 1, 0));
        assert_ne!(a, order(100, 1, 1));
    }
}
