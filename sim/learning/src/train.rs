//! Fitting a readout over cached features (SPEC §5, seed "The maths" 5 and 7): the target over a
//! position's labelled moves is share(m_k) ∝ exp((win_k − win_1)/τ), τ = 2.5, zero elsewhere; the
//! value target is 2·win_1/100 − 1; the loss is the cross-entropy over the legal moves plus the
//! squared value error. The fit is Adam (2e-3, batch 8,192) pass after pass over TRAIN; a pass that
//! does not improve VAL by 1e-4 halves the step and returns to the best weights; 4 such misses or
//! 60 passes end it; the result is never worse on VAL than the readout it started from.
//!
//! The same fit serves the controls: the blind baseline (no input at all: only the biases learn
//! from/to/promotion popularity) and the board-linear readout (the 768 board planes as input).
//! On the CPU the steps are two matrix products a batch (`gemm_fit`, since issue 55); on a GPU,
//! and where asked (`FitKernel::Burn`, the fit before issue 55), burn's autodiff and Adam
//! (`burn_fit`, the ndarray backend or wgpu). Both take the same steps to within rounding; the
//! gradient is also written out by hand (`flychess_fly::scoring`; the model is one linear layer and a softmax over legal moves),
//! checked against finite differences, and burn's gradient is checked against it.

use serde::{Deserialize, Serialize};

use crate::burn_fit::{BurnFit, FitOn};
use crate::error::Result;
use flychess_fly::readout::{PROMOTIONS, Readout};

use flychess_fly::scoring::{FitState, Metrics, Target, evaluate};

/// How a fit's steps are worked out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FitKernel {
    /// Two GEMMs a batch on the CPU (`gemm_fit`); on a GPU (`FitOn`) burn's steps all the same.
    #[default]
    Gemm,
    /// burn's autodiff and Adam (`burn_fit`): the fit before issue 55, and a GPU's.
    Burn,
}

impl FitKernel {
    /// What runs recorded before the choice existed were fitted with.
    fn recorded_before() -> FitKernel {
        FitKernel::Burn
    }
}

/// The steps of a fit in progress, by kernel.
enum Steps {
    Gemm(crate::gemm_fit::GemmFit),
    Burn(Box<BurnFit>),
}

impl Steps {
    fn resume(start: &Readout, options: &FitOptions, adam: Option<&[u8]>) -> Result<Steps> {
        Ok(if options.kernel == FitKernel::Gemm && !options.on.uses_gpu()? {
            Steps::Gemm(crate::gemm_fit::GemmFit::resume(start, adam)?)
        } else {
            Steps::Burn(Box::new(BurnFit::resume(start, options.on, adam)?))
        })
    }

    fn step(&mut self, x: &mut Vec<f32>, targets: &[&Target], learning_rate: f32) -> Result<f64> {
        match self {
            Steps::Gemm(g) => g.step(x, targets, learning_rate),
            Steps::Burn(b) => b.step(std::mem::take(x), targets, learning_rate),
        }
    }

    fn readout(&self, like: &Readout) -> Result<Readout> {
        match self {
            Steps::Gemm(g) => Ok(g.readout(like)),
            Steps::Burn(b) => b.readout(like),
        }
    }

    fn restart_from(&mut self, r: &Readout) {
        match self {
            Steps::Gemm(g) => g.restart_from(r),
            Steps::Burn(b) => b.restart_from(r),
        }
    }

    fn adam_state(&self) -> Result<Vec<u8>> {
        match self {
            Steps::Gemm(g) => Ok(g.adam_state()),
            Steps::Burn(b) => b.adam_state(),
        }
    }
}

/// Settings of a fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitOptions {
    pub learning_rate: f32,
    pub batch: usize,
    pub max_passes: usize,
    pub patience: usize,
    pub min_improvement: f64,
    pub seed: u64,
    /// Where the steps run (burn on the CPU, or on a GPU); runs recorded before it existed read
    /// as `auto`.
    #[serde(default)]
    pub on: FitOn,
    /// How the steps are worked out; runs recorded before the choice existed read as burn's.
    #[serde(default = "FitKernel::recorded_before")]
    pub kernel: FitKernel,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            learning_rate: 2e-3,
            batch: 8_192,
            max_passes: 60,
            patience: 4,
            min_improvement: 1e-4,
            seed: 1,
            on: FitOn::Auto,
            kernel: FitKernel::Gemm,
        }
    }
}

/// One pass's record (a line of runs/NAME/metrics.jsonl).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassRecord {
    pub pass: usize,
    pub train_loss: f64,
    pub val: Metrics,
    pub learning_rate: f32,
    pub improved: bool,
    pub seconds: f64,
}

/// Fits `start` on `train`, watching `val`. `record` sees every pass; `stop` ends the fit early
/// (the best so far is returned). Returns the best readout (never worse on VAL than `start`) and
/// its VAL metrics. The steps are burn's (autodiff and Adam, `burn_fit`); the passes, the halving
/// and the bookkeeping are here.
pub fn fit(
    start: &Readout,
    train: Examples,
    val: Examples,
    options: &FitOptions,
    record: &mut dyn FnMut(&PassRecord, &Readout),
    stop: &dyn Fn() -> bool,
) -> Result<(Readout, Metrics)> {
    let mut train = InMemory::new(train.x, train.targets, start.inputs, options.seed);
    fit_over(start, &mut train, val, options, record, stop)
}

/// Labelled positions held in memory: their features (`[position · inputs + i]`) and targets.
#[derive(Clone, Copy)]
pub struct Examples<'a> {
    pub x: &'a [f32],
    pub targets: &'a [Target],
}

/// What a fit passes over: its batches of (features, targets), one pass at a time. `InMemory` is
/// the features held whole; `crate::stream_fit` reads them off a DN cache a block at a time.
/// What a pass calls with each batch (features, targets): it takes a step and returns the
/// batch's mean loss.
/// The features come in a buffer the set keeps (a step may take it, as burn's does into its
/// tensor; the GEMM fit only reads it, and the set refills the same memory for the next batch).
pub type BatchStep<'s> = dyn FnMut(&mut Vec<f32>, &[&Target]) -> Result<f64> + 's;

pub trait TrainSet {
    /// Positions in one pass.
    fn positions(&self) -> usize;
    /// One pass, in its own shuffled order: `step(features, targets)` for each batch of at most
    /// `batch` positions, which returns the batch's mean loss.
    fn pass(&mut self, batch: usize, step: &mut BatchStep) -> Result<()>;
    /// Moves on as `passes` passes of `batch` would, without reading a row (the shuffles only):
    /// a resumed fit's next pass then sees the order an unbroken fit's would.
    fn skip_passes(&mut self, batch: usize, passes: usize) -> Result<()>;
}

/// Features and targets held in memory, shuffled anew each pass (a fixed xorshift from the seed,
/// each pass shuffling the last pass's order).
pub struct InMemory<'a> {
    x: &'a [f32],
    targets: &'a [Target],
    inputs: usize,
    order: Vec<usize>,
    state: u64,
}

impl<'a> InMemory<'a> {
    pub fn new(x: &'a [f32], targets: &'a [Target], inputs: usize, seed: u64) -> InMemory<'a> {
        InMemory { x, targets, inputs, order: (0..targets.len()).collect(), state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 }
    }
}

/// Shuffles `order` in place with the xorshift state `s` (Fisher–Yates).
pub fn shuffle_with(order: &mut [usize], s: &mut u64) {
    for i in (1..order.len()).rev() {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        order.swap(i, (*s % (i as u64 + 1)) as usize);
    }
}

impl TrainSet for InMemory<'_> {
    fn positions(&self) -> usize {
        self.targets.len()
    }

    fn skip_passes(&mut self, _batch: usize, passes: usize) -> Result<()> {
        for _ in 0..passes {
            shuffle_with(&mut self.order, &mut self.state);
        }
        Ok(())
    }

    fn pass(&mut self, batch: usize, step: &mut BatchStep) -> Result<()> {
        shuffle_with(&mut self.order, &mut self.state);
        let d = self.inputs;
        let mut x: Vec<f32> = Vec::new();
        for chunk in self.order.chunks(batch.max(1)) {
            x.clear();
            for &i in chunk {
                x.extend_from_slice(&self.x[i * d..(i + 1) * d]);
            }
            let t: Vec<&Target> = chunk.iter().map(|&i| &self.targets[i]).collect();
            step(&mut x, &t)?;
        }
        Ok(())
    }
}

/// `fit` over any `TrainSet`, watching `val` (the passes, the halving and the bookkeeping; the
/// steps are burn's).
pub fn fit_over(
    start: &Readout,
    train: &mut dyn TrainSet,
    val: Examples,
    options: &FitOptions,
    record: &mut dyn FnMut(&PassRecord, &Readout),
    stop: &dyn Fn() -> bool,
) -> Result<(Readout, Metrics)> {
    fit_from(
        start,
        None,
        train,
        val,
        options,
        &mut |p, best, _| {
            record(p, best);
            Ok(())
        },
        stop,
    )
}

/// What `fit_from` calls after each pass: the pass, the best readout so far, and how to get the
/// fit's state (made only when asked: it copies Adam's moments).
pub type PassRecorder<'r> = dyn FnMut(&PassRecord, &Readout, &dyn Fn() -> Result<FitState>) -> Result<()> + 'r;

/// `fit_over` that can be stopped and resumed: `record` also gets the fit's state after each pass
/// (to checkpoint beside the best readout, `Ok` when kept), and a fit given `Some(state)` with the
/// best readout as `start` goes on after that pass exactly as if it had never stopped. Passes are
/// numbered from the first pass of the whole fit, and `options.max_passes` counts them all.
pub fn fit_from(
    start: &Readout,
    resume: Option<&FitState>,
    train: &mut dyn TrainSet,
    val: Examples,
    options: &FitOptions,
    record: &mut PassRecorder,
    stop: &dyn Fn() -> bool,
) -> Result<(Readout, Metrics)> {
    let Examples { x: val_x, targets: val_t } = val;
    let (mut best, mut best_val) = (start.clone(), resume.map_or_else(|| evaluate(start, val_x, val_t), |r| r.best_val));
    let mut steps = Steps::resume(start, options, resume.and_then(|r| r.adam.as_deref()))?;
    let mut lr = resume.map_or(options.learning_rate, |r| r.learning_rate);
    let mut misses = resume.map_or(0, |r| r.misses);
    let done = resume.map_or(0, |r| r.passes);
    if done > 0 {
        train.skip_passes(options.batch, done)?;
    }
    if misses >= options.patience {
        return Ok((best, best_val));
    }
    for pass in done + 1..=options.max_passes {
        if stop() {
            break;
        }
        let started = std::time::Instant::now();
        let mut train_loss = 0.0;
        let mut seen = 0usize;
        train.pass(options.batch, &mut |x, t| {
            let loss = steps.step(x, t, lr)?;
            train_loss += loss * t.len() as f64;
            seen += t.len();
            Ok(loss)
        })?;
        train_loss /= seen.max(1) as f64;
        let current = steps.readout(start)?;
        let val = evaluate(&current, val_x, val_t);
        let improved = val.loss < best_val.loss - options.min_improvement;
        if improved {
            best = current.clone();
            best_val = val;
            misses = 0;
        } else {
            misses += 1;
            lr *= 0.5;
            steps.restart_from(&best);
        }
        let state = || -> Result<FitState> {
            Ok(FitState {
                passes: pass,
                learning_rate: lr,
                misses,
                best_val,
                adam: if improved { Some(steps.adam_state()?) } else { None },
            })
        };
        record(
            &PassRecord { pass, train_loss, val, learning_rate: lr, improved, seconds: started.elapsed().as_secs_f64() },
            &best,
            &state,
        )?;
        if misses >= options.patience {
            break;
        }
    }
    Ok((best, best_val))
}

/// Check `PROMOTIONS` stays in step with the promotion codes used here.
const _: () = assert!(PROMOTIONS == 5);

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::data::{MoveCode, MoveLabel, Row};
    use flychess_fly::grading::Score;
    use flychess_fly::scoring::{board_features, gradient};

    fn row(fen: &str, moves: &[(&str, i32)]) -> Row {
        Row {
            fen: fen.into(),
            game: 1,
            ply: 1,
            legal: 20,
            moves: moves
                .iter()
                .map(|(u, cp)| MoveLabel { mv: MoveCode::parse_uci(u).unwrap(), score: Score::Cp(*cp), wdl: None })
                .collect(),
        }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    /// burn's gradient on `on` against the hand-written one: three positions (white and black to
    /// move, a promotion among the moves), with no inputs and with 7.
    fn burns_gradient_matches_on(on: FitOn) {
        let rows = [
            row(START, &[("e2e4", 30), ("g1f3", 20), ("a2a3", -150)]),
            row("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", &[("g1f3", 40)]),
            // Black to move with a promotion among the moves: mirrored frame, promotion head.
            row("8/8/8/8/8/8/4p3/K6k b - - 0 1", &[("e2e1q", 900), ("e2e1n", 300)]),
        ];
        let targets: Vec<Target> = rows.iter().map(|r| Target::of(r).unwrap()).collect();
        for d in [0usize, 7] {
            let x: Vec<f32> = (0..targets.len() * d).map(|i| (i as f32 * 0.37).sin().abs()).collect();
            let r = Readout::newborn(d, vec![11], 4);
            let (loss, gw, gb) = gradient(&r, &x, &targets);
            let (burn_loss, burn_gw, burn_gb) = BurnFit::on(&r, on).unwrap().gradient(&x, &targets).unwrap();
            assert!((loss - burn_loss).abs() < 1e-4 * loss.max(1.0), "{on:?}: loss {loss} vs burn {burn_loss}");
            assert_eq!((burn_gw.len(), burn_gb.len()), (gw.len(), gb.len()));
            let worst = gw.iter().chain(&gb).zip(burn_gw.iter().chain(&burn_gb)).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(worst < 1e-5, "{on:?}, inputs {d}: gradients differ by up to {worst}");
            assert!(gb.iter().any(|&g| g.abs() > 1e-3), "the check is not vacuous");
        }
    }

    #[test]
    fn burns_gradient_is_the_hand_written_one() {
        burns_gradient_matches_on(FitOn::Cpu);
    }

    #[test]
    fn burn_on_a_gpu_gives_the_hand_written_gradient_and_the_cpus_fit() {
        // On Mesa lavapipe in CI (FLYCHESS_CI=1 makes a missing adapter a failure there).
        let on = match FitOn::Gpu.describe() {
            Ok(name) => {
                eprintln!("fitting on {name}");
                FitOn::Gpu
            }
            Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
            Err(e) => return eprintln!("skipping the GPU fit: {e}"),
        };
        burns_gradient_matches_on(on);
        // A whole fit: the same passes on both, the same answer within float rounding.
        let rows: Vec<Row> =
            (0..48).map(|i| if i % 3 == 0 { row(START, &[("e2e4", 30)]) } else { row(START, &[("g1f3", 30), ("d2d4", 10)]) }).collect();
        let targets: Vec<Target> = rows.iter().map(|r| Target::of(r).unwrap()).collect();
        let x: Vec<f32> = (0..48).flat_map(|i| if i % 3 == 0 { [1.0, 0.0, 0.5] } else { [0.0, 1.0, 0.5] }).collect();
        let start = Readout::newborn(3, vec![11], 5);
        let fitted = |on: FitOn| {
            let options = FitOptions { batch: 16, max_passes: 6, learning_rate: 0.05, on, ..Default::default() };
            let mut losses = Vec::new();
            let (r, m) = fit(
                &start,
                Examples { x: &x, targets: &targets },
                Examples { x: &x, targets: &targets },
                &options,
                &mut |p, _| losses.push(p.train_loss),
                &|| false,
            )
            .unwrap();
            (r, m, losses)
        };
        let ((cpu, cpu_m, cpu_losses), (gpu, gpu_m, gpu_losses)) = (fitted(FitOn::Cpu), fitted(on));
        assert_eq!(cpu_losses.len(), gpu_losses.len());
        for (a, b) in cpu_losses.iter().zip(&gpu_losses) {
            assert!((a - b).abs() < 1e-4, "pass losses {cpu_losses:?} vs {gpu_losses:?}");
        }
        assert!(cpu_losses.last() < cpu_losses.first(), "the fit learns: {cpu_losses:?}");
        // Weights whose gradient is zero but for rounding drift apart under Adam (it divides by the
        // gradient's own size), so the two fits are compared by what they do.
        let (a, b) = (evaluate(&cpu, &x, &targets), evaluate(&gpu, &x, &targets));
        assert!((a.loss - b.loss).abs() < 1e-4 && (cpu_m.loss - gpu_m.loss).abs() < 1e-4, "{a:?} vs {b:?}");
        assert_eq!((a.top1, cpu_m.top1), (b.top1, gpu_m.top1));
    }

    /// A fit stopped after any pass and resumed from its best readout and state (Adam's moments,
    /// step size, misses, the data order) ends with the very readout of the unbroken fit, pass
    /// records equal but for their seconds; resumed with a fresh Adam instead (as before the state
    /// was kept), it does not.
    #[test]
    fn a_fit_resumed_from_its_state_ends_where_the_unbroken_fit_ends() {
        let rows: Vec<Row> =
            (0..96).map(|i| if i % 3 == 0 { row(START, &[("e2e4", 30)]) } else { row(START, &[("g1f3", 30), ("d2d4", 10)]) }).collect();
        let targets: Vec<Target> = rows.iter().map(|r| Target::of(r).unwrap()).collect();
        let x: Vec<f32> = (0..96).flat_map(|i| [((i * 7) % 11) as f32 / 11.0, (i % 3) as f32, ((i * 5) % 13) as f32 / 13.0]).collect();
        let val = Examples { x: &x[..48 * 3], targets: &targets[..48] };
        let start = Readout::newborn(3, vec![11], 5);
        // A step size large enough that some passes miss (the halving and the restarts are resumed too).
        let options = FitOptions { batch: 16, max_passes: 9, learning_rate: 0.3, patience: 9, ..Default::default() };
        let without_seconds = |p: &PassRecord| PassRecord { seconds: 0.0, ..p.clone() };
        let mut unbroken_passes = Vec::new();
        let mut states: Vec<(Readout, FitState)> = Vec::new();
        let (unbroken, unbroken_val) = fit_from(
            &start,
            None,
            &mut InMemory::new(&x, &targets, 3, options.seed),
            val,
            &options,
            &mut |p, best, state| {
                unbroken_passes.push(without_seconds(p));
                states.push((best.clone(), state()?));
                Ok(())
            },
            &|| false,
        )
        .unwrap();
        assert_eq!(states.len(), 9);
        assert!(unbroken_passes.iter().any(|p| !p.improved) && unbroken_passes.iter().any(|p| p.improved), "{unbroken_passes:?}");
        for (k, (best, state)) in states.iter().enumerate() {
            for fresh_adam in [false, true] {
                let state = FitState { adam: if fresh_adam { None } else { state.adam.clone() }, ..state.clone() };
                let mut resumed_passes = unbroken_passes[..=k].to_vec();
                let (resumed, resumed_val) = fit_from(
                    best,
                    Some(&state),
                    &mut InMemory::new(&x, &targets, 3, options.seed),
                    val,
                    &options,
                    &mut |p, _, _| {
                        resumed_passes.push(without_seconds(p));
                        Ok(())
                    },
                    &|| false,
                )
                .unwrap();
                let same = resumed == unbroken && resumed_val == unbroken_val && resumed_passes == unbroken_passes;
                if fresh_adam {
                    // After a pass that improved (and one more pass to make), a fresh Adam goes elsewhere.
                    if unbroken_passes[k].improved && k + 1 < 9 {
                        assert!(!same, "resumed after pass {} with a fresh Adam yet the same", k + 1);
                    }
                } else {
                    assert!(same, "resumed after pass {}: {resumed_passes:?} against {unbroken_passes:?}", k + 1);
                }
            }
        }
    }

    #[test]
    fn the_gemm_fit_lands_where_burns_fit_lands_on_the_same_rows_and_seed() {
        // Real positions (the shipped TRAIN rows) read through their 768 board planes: a readout
        // with something to learn, fitted by both kernels from the same start, order and steps.
        let data = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
        let (train_rows, val_rows) = (&data.train()[..3_072], &data.val()[..1_024]);
        let features = |rs: &[Row]| -> Vec<f32> { rs.iter().flat_map(|r| board_features(r).unwrap()).collect() };
        let (train_x, val_x) = (features(train_rows), features(val_rows));
        let targets = |rs: &[Row]| -> Vec<Target> { rs.iter().map(|r| Target::of(r).unwrap()).collect() };
        let (train_t, val_t) = (targets(train_rows), targets(val_rows));
        let start = Readout::newborn(768, vec![], 1);
        let base = FitOptions { batch: 256, max_passes: 12, on: FitOn::Cpu, ..Default::default() };
        let run = |kernel: FitKernel| {
            let options = FitOptions { kernel, ..base.clone() };
            let mut log = Vec::new();
            let (_, m) = fit(
                &start,
                Examples { x: &train_x, targets: &train_t },
                Examples { x: &val_x, targets: &val_t },
                &options,
                &mut |p, _| log.push(p.val.loss),
                &|| false,
            )
            .unwrap();
            (m, log)
        };
        let ((gemm, gemm_log), (burn, burn_log)) = (run(FitKernel::Gemm), run(FitKernel::Burn));
        let start_loss = evaluate(&start, &val_x, &val_t).loss;
        eprintln!(
            "VAL loss from {start_loss:.4}: GEMM {:.4}, burn {:.4} ({} and {} passes)",
            gemm.loss,
            burn.loss,
            gemm_log.len(),
            burn_log.len()
        );
        assert!(gemm.loss < start_loss - 0.05, "the fit learns: {start_loss} → {}", gemm.loss);
        assert!(
            (gemm.loss - burn.loss).abs() <= 0.002,
            "VAL loss: GEMM {} vs burn {} (passes: {gemm_log:?} / {burn_log:?})",
            gemm.loss,
            burn.loss
        );
    }

    #[test]
    fn the_fit_learns_and_never_returns_worse_than_it_started() {
        // Positions whose best move is always e2e4-like from one feature: learnable.
        let rows: Vec<Row> = (0..64).map(|i| if i % 2 == 0 { row(START, &[("e2e4", 30)]) } else { row(START, &[("g1f3", 30)]) }).collect();
        let targets: Vec<Target> = rows.iter().map(|r| Target::of(r).unwrap()).collect();
        let x: Vec<f32> = (0..64).flat_map(|i| if i % 2 == 0 { [1.0, 0.0] } else { [0.0, 1.0] }).collect();
        let start = Readout::newborn(2, vec![11], 9);
        let options = FitOptions { batch: 16, max_passes: 200, learning_rate: 0.05, ..Default::default() };
        let mut passes = 0;
        let (best, m) = fit(
            &start,
            Examples { x: &x, targets: &targets },
            Examples { x: &x, targets: &targets },
            &options,
            &mut |_, _| passes += 1,
            &|| false,
        )
        .unwrap();
        assert!(m.top1 > 0.99, "{m:?}");
        assert!(m.loss < evaluate(&start, &x, &targets).loss);
        assert!(passes > 0);
        // From an already perfect readout, a fit with a harmful step returns the start unchanged.
        let bad = FitOptions { learning_rate: 50.0, max_passes: 3, ..options };
        let (again, m2) =
            fit(&best, Examples { x: &x, targets: &targets }, Examples { x: &x, targets: &targets }, &bad, &mut |_, _| {}, &|| false)
                .unwrap();
        assert!(m2.loss <= m.loss + 1e-12);
        assert!(evaluate(&again, &x, &targets).loss <= m.loss + 1e-12);
    }
}
