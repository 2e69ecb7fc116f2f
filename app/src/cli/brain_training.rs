//! `flychess train --brain …` (the brain learns too, backprop through time on a leash),
//! `flychess gradcheck` (the hand-written gradient against finite differences and burn) and
//! `flychess blame` (the error going back for one position): the command line over `sim::bptt`. A brain run streams TRAIN positions from a readout-only fly
//! (the brain's shipped one by default), then the readout-only control streams the same
//! positions with the same readout step, and both are measured on the same VAL and HOLD
//! positions beside the fly they started from.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use flychess_brain::brain::Brain;
use flychess_brain::calibrate::{self, CalibrationOptions};
use flychess_brain::connectome::brain_file::Loaded;
use flychess_fly::data::{Dataset, Row, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_fly::scoring::PositionOutcome;
use flychess_fly::stats;
use flychess_learning::bptt::run::{self, BrainOptimizer, Leash, Outcome, RunOptions, Setup, State};
use flychess_learning::bptt::{Base, Heads, Reader, gradient};

use crate::cli::fly::train::TrainArgs;
use crate::cli::options::{BrainKind, WhichBrain};

/// What `train --brain` was asked for.
struct BrainJob {
    name: String,
    positions: usize,
    batch: usize,
    leash: Leash,
    val: usize,
    val_every: Option<usize>,
    hold: usize,
    start: Option<String>,
    control: bool,
    speed_batches: Vec<usize>,
    seed: u64,
    json: bool,
    /// Where the brain run thinks and sends the error back.
    engine: flychess_brain::brain::simulator::EngineChoice,
}

impl From<&TrainArgs> for BrainJob {
    /// The job `train --train-brain` asks for (8,192 positions unless --positions says).
    fn from(args: &TrainArgs) -> BrainJob {
        let b = &args.brain_training;
        BrainJob {
            name: args.name.clone(),
            positions: args.positions.unwrap_or(8_192),
            batch: b.brain_batch,
            leash: b.leash(),
            val: b.val,
            val_every: b.val_every,
            hold: b.hold,
            start: b.start.clone(),
            control: !b.no_control,
            speed_batches: b.speed_batches.clone(),
            seed: b.stream_seed,
            json: b.json,
            engine: args.engine.choice(),
        }
    }
}

impl BrainJob {
    /// A run of this job on `leash` (the job's own, its readout-only control's, or a pilot's).
    fn run_options(&self, leash: Leash) -> RunOptions {
        RunOptions {
            leash,
            positions: self.positions,
            batch: self.batch,
            val_every: self.val_every.unwrap_or((self.positions / 8).max(self.batch)),
            val: self.val,
            seed: self.seed,
        }
    }
}

fn bar(total: usize, name: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:14} [{bar:30}] {pos}/{len} positions {elapsed} (eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(name.to_string());
    bar
}

/// The process's peak resident memory (VmHWM), in bytes, where the system says.
fn peak_memory() -> Option<u64> {
    crate::cli::memory::peak_memory_mb().map(|mb| (mb * 1024.0 * 1024.0) as u64)
}

fn estimate(e: &stats::Estimate) -> serde_json::Value {
    json!({ "value": e.value, "low": e.low, "high": e.high })
}

fn figures(o: &[PositionOutcome]) -> serde_json::Value {
    let m = flychess_fly::scoring::summarise(o);
    json!({
        "top1": estimate(&stats::rate_of(&o.iter().map(|p| p.top1).collect::<Vec<_>>())),
        "good": estimate(&stats::rate_of(&o.iter().map(|p| p.good).collect::<Vec<_>>())),
        "loss": estimate(&stats::mean(&o.iter().map(|p| p.loss).collect::<Vec<_>>())),
        "policy_loss": m.policy_loss,
        "positions": m.positions,
    })
}

fn difference(a: &[PositionOutcome], b: &[PositionOutcome]) -> serde_json::Value {
    let top1 = stats::paired_difference(&a.iter().map(|p| p.top1).collect::<Vec<_>>(), &b.iter().map(|p| p.top1).collect::<Vec<_>>());
    let loss = stats::mean(&a.iter().zip(b).map(|(x, y)| x.loss - y.loss).collect::<Vec<_>>());
    json!({ "top1": estimate(&top1), "loss": estimate(&loss) })
}

/// Runs `flychess train --train-brain` (or a bare `--brain`: the default brain, and it learns
/// too): the seed's pilots with --pilots, else one brain run and its readout-only control.
pub fn train(args: &TrainArgs, data: &Path) -> Result<()> {
    let mut which = args.which.clone();
    if which.brain == BrainKind::Itself {
        which.brain = BrainKind::Flywire783;
    }
    let job = BrainJob::from(args);
    let b = &args.brain_training;
    if b.pilots { pilots(&which, data, &job, &b.only, b.pilot_brain_scale) } else { brain_run(&which, data, &job) }
}

/// The readout-only fly a brain run starts from: the one named with --start, else the brain's own.
fn start_fly(job: &BrainJob, loaded: &Loaded, data: &Path) -> Result<(String, Fly)> {
    let (start_name, start) = match &job.start {
        Some(name) => (name.clone(), Fly::load(&fly::find(name, data)?)?),
        None => {
            let (name, path) = fly::trained_for(&loaded.checksum, data).ok_or_else(|| {
                anyhow!(
                    "no readout-only fly for this brain to start from; train one with `flychess train --name NAME` or name one with --start"
                )
            })?;
            (name, Fly::load(&path)?)
        }
    };
    if start.meta.brain_checksum != loaded.checksum {
        return Err(anyhow!("fly {start_name} belongs to another brain ({})", start.meta.brain));
    }
    Ok((start_name, start))
}

/// One brain run and its readout-only control, from the same fly on the same positions, measured
/// on the same VAL and HOLD positions beside the fly they started from.
fn brain_run(which: &WhichBrain, data: &Path, job: &BrainJob) -> Result<()> {
    fly::check_new_name(&job.name)?;
    let spec = which.spec(data)?;
    let (loaded, mut brain) = crate::cli::options::ready(&spec, data, CalibrationOptions { calm_unreached: job.leash.calm_unreached })?;
    let homeostasis = calibrate::fingerprint(brain.homeostasis());
    let (start_name, start) = start_fly(job, &loaded, data)?;
    let dataset = Dataset::load(&shipped_path())?;
    let (hold, val, train) = (dataset.hold(), dataset.val(), dataset.train());
    let parts = RunParts {
        loaded: &loaded,
        homeostasis,
        descending: loaded.connectome.groups.descending.clone(),
        base: Base::of(&brain),
        start_name,
        start,
        train,
        val,
        hold: &hold[..job.hold.min(hold.len())],
        dir: flychess_brain::files::DataFolder::at(data).runs().join(&job.name),
    };
    let options = job.run_options(job.leash.clone());
    let speed = if job.speed_batches.is_empty() {
        None
    } else {
        Some(speed_table(&parts.base, &mut brain, &parts.descending, &parts.start, train, &job.speed_batches, job.leash.window)?)
    };
    let mut gpu = flychess_learning::bptt::gpu::GpuTrainer::for_choice(job.engine, &brain, &parts.base)?;
    if let Some(g) = &gpu {
        eprintln!("thinking and sending the error back on {}", g.backward.adapter);
    }
    if !job.leash.brain_learns() {
        return Err(anyhow!("--lr-synapses and --lr-neurons are both 0: that is the readout-only run (drop --brain)"));
    }
    let learned = parts.go("brain", "brain", &options, &mut brain, gpu.as_mut())?;
    let control = if job.control {
        Some(parts.go("readout only", "readout-only", &job.run_options(job.leash.readout_only()), &mut brain, None)?)
    } else {
        None
    };
    let val = &val[..job.val.min(val.len())];
    eprintln!("measuring on {} VAL and {} HOLD positions", val.len(), parts.hold.len());
    let (measured, summary) = parts.measure(&learned, control.as_ref(), val, &mut brain);
    let report = json!({
        "name": job.name,
        "brain": loaded.connectome.provenance.label(),
        "brain_checksum": loaded.checksum,
        "positions": job.positions,
        "batch": job.batch,
        "leash": job.leash,
        "val_positions": val.len().min(job.val),
        "hold_positions": parts.hold.len(),
        "runs": measured,
        "training_over_forward": learned.timing.positions_per_second() / learned.timing.forward_positions_per_second().max(1e-9),
        "engine": gpu.as_ref().map_or_else(|| "cpu".to_string(), |g| format!("gpu: {}", g.backward.adapter)),
        "speed_by_batch": speed,
        "peak_memory_bytes": peak_memory(),
        "checkpoints": parts.dir.display().to_string(),
    });
    if job.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_brain_run(job, &parts, &summary, &report, &learned);
    }
    Ok(())
}

/// Each run's HOLD outcomes by who ran (the start fly, the brain, the readout-only control).
type Summary = Vec<(&'static str, Vec<PositionOutcome>)>;

/// A brain run's fixed parts: the brain's id and homeostasis, its descending neurons and the
/// numbers it starts from, the fly it starts from, the positions it streams (TRAIN, VAL) and is
/// measured on (HOLD), and where its checkpoints go.
struct RunParts<'a> {
    loaded: &'a Loaded,
    homeostasis: String,
    descending: Vec<u32>,
    base: Base,
    start_name: String,
    start: Fly,
    train: &'a [Row],
    val: &'a [Row],
    hold: &'a [Row],
    dir: PathBuf,
}

impl RunParts<'_> {
    /// One run (`stem` under the run's folder) streamed with a bar, its VAL points printed above it.
    fn go(
        &self,
        label: &str,
        stem: &str,
        options: &RunOptions,
        brain: &mut Brain,
        gpu: Option<&mut flychess_learning::bptt::gpu::GpuTrainer>,
    ) -> Result<Outcome> {
        let bar = bar(options.positions, label);
        let setup = Setup {
            base: &self.base,
            brain,
            brain_checksum: &self.loaded.checksum,
            homeostasis: &self.homeostasis,
            descending: &self.descending,
            start: (&self.start_name, &self.start.readout),
            train: self.train,
            val: self.val,
            gpu,
        };
        let outcome = run::run(setup, options, &self.dir.join(stem), &AtomicBool::new(false), &|done, _, point| {
            bar.set_position(done as u64);
            if let Some(p) = point {
                bar.suspend(|| {
                    eprintln!(
                        "  {label}: {:>7} positions  VAL loss {:.4}  top-1 {:.1}%  ({:.0} s)",
                        p.positions,
                        p.val.loss,
                        100.0 * p.val.top1,
                        p.seconds
                    )
                });
            }
        })?;
        bar.finish_and_clear();
        Ok(outcome)
    }

    /// The outcomes of `state` (a readout and the brain's numbers) on `rows`.
    fn on(&self, state: &State, rows: &[Row], brain: &mut Brain) -> Vec<PositionOutcome> {
        run::outcomes(&self.base, brain, state, &self.descending, rows)
    }

    /// The start fly, the brain run and its control (where there is one) measured on `val` and
    /// HOLD: the report's `runs`, and each one's HOLD outcomes for the summary.
    fn measure(
        &self,
        learned: &Outcome,
        control: Option<&Outcome>,
        val: &[Row],
        brain: &mut Brain,
    ) -> (serde_json::Map<String, serde_json::Value>, Summary) {
        let start_state = State { readout: self.start.readout.clone(), brain: self.base.start() };
        let mut measured = serde_json::Map::new();
        let start_hold = self.on(&start_state, self.hold, brain);
        let start_val = self.on(&start_state, val, brain);
        measured.insert("start".into(), json!({ "fly": self.start_name, "val": figures(&start_val), "hold": figures(&start_hold) }));
        let mut summary = vec![("start", start_hold.clone())];
        let (brain_hold, brain_json) = self.describe(learned, val, &start_hold, brain);
        summary.push(("brain", brain_hold.clone()));
        measured.insert("brain".into(), brain_json);
        if let Some(c) = control {
            let (control_hold, control_json) = self.describe(c, val, &start_hold, brain);
            summary.push(("readout only", control_hold.clone()));
            measured.insert("readout_only".into(), control_json);
            measured.insert("brain_minus_readout_only".into(), difference(&brain_hold, &control_hold));
        }
        (measured, summary)
    }

    /// A finished run measured: its last state on VAL and HOLD, its best on HOLD, its curve and
    /// timing, and how far the brain's numbers moved; with its last HOLD outcomes.
    fn describe(
        &self,
        o: &Outcome,
        val: &[Row],
        start_hold: &[PositionOutcome],
        brain: &mut Brain,
    ) -> (Vec<PositionOutcome>, serde_json::Value) {
        let (last_hold, last_val) = (self.on(&o.last, self.hold, brain), self.on(&o.last, val, brain));
        let best_hold = self.on(&o.best, self.hold, brain);
        let t = &o.timing;
        let base = &self.base;
        let changed = o.last.brain.theta.iter().zip(&base.theta0).filter(|(a, b)| a != b).count();
        let largest = o
            .last
            .brain
            .theta
            .iter()
            .zip(&base.weight0)
            .map(|(t, w)| (flychess_learning::bptt::softplus(*t as f64) / w.abs() as f64 - 1.0).abs())
            .fold(0f64, f64::max);
        let v = json!({
            "val": figures(&last_val),
            "hold": figures(&last_hold),
            "best": { "positions": o.best_positions, "hold": figures(&best_hold) },
            "hold_minus_start": difference(&last_hold, start_hold),
            "curve": o.curve,
            "seconds": o.seconds,
            "finished": o.finished,
            "positions_per_second": t.positions_per_second(),
            "forward_positions_per_second": t.forward_positions_per_second(),
            "timing": t,
            "connections_changed": changed,
            "largest_strength_change": largest,
            "gain_range": [o.last.brain.alpha.iter().copied().fold(f32::MAX, f32::min), o.last.brain.alpha.iter().copied().fold(f32::MIN, f32::max)],
            "bias_range": [o.last.brain.beta.iter().copied().fold(f32::MAX, f32::min), o.last.brain.beta.iter().copied().fold(f32::MIN, f32::max)],
        });
        (last_hold, v)
    }
}

/// A brain run as text: each run's HOLD figures, the brain against its control, the speed, and
/// where the checkpoints are.
fn print_brain_run(
    job: &BrainJob,
    parts: &RunParts,
    summary: &[(&str, Vec<PositionOutcome>)],
    report: &serde_json::Value,
    learned: &Outcome,
) {
    println!(
        "{} on {} ({} positions, batch {}, window {}):",
        job.name,
        parts.loaded.connectome.provenance.label(),
        job.positions,
        job.batch,
        job.leash.window
    );
    for (who, o) in summary {
        let top1 = stats::rate_of(&o.iter().map(|p| p.top1).collect::<Vec<_>>());
        let loss = stats::mean(&o.iter().map(|p| p.loss).collect::<Vec<_>>());
        println!("  {who:<14} HOLD top-1 {}  loss {:.4} [{:.4}, {:.4}]", top1.percent(), loss.value, loss.low, loss.high);
    }
    if let Some(d) = report["runs"].get("brain_minus_readout_only") {
        println!(
            "  brain − readout only, paired: top-1 {:+.2} points [{:+.2}, {:+.2}], loss {:+.4} [{:+.4}, {:+.4}]",
            100.0 * d["top1"]["value"].as_f64().unwrap_or(f64::NAN),
            100.0 * d["top1"]["low"].as_f64().unwrap_or(f64::NAN),
            100.0 * d["top1"]["high"].as_f64().unwrap_or(f64::NAN),
            d["loss"]["value"].as_f64().unwrap_or(f64::NAN),
            d["loss"]["low"].as_f64().unwrap_or(f64::NAN),
            d["loss"]["high"].as_f64().unwrap_or(f64::NAN)
        );
    }
    println!(
        "  training {:.1} positions/s, forward alone {:.1} positions/s in the same run ({:.2}×)",
        learned.timing.positions_per_second(),
        learned.timing.forward_positions_per_second(),
        report["training_over_forward"].as_f64().unwrap_or(f64::NAN)
    );
    println!("  checkpoints and curves in {}", parts.dir.display());
}

/// Training against forward speed at each batch size, in one process: a forward pass (the CPU
/// engine, every step kept, as training runs it; and the engine's usual think with its
/// blank-board shortcut), and a training step (forward and backward), twice each, the faster kept.
fn speed_table(
    base: &Base,
    brain: &mut flychess_brain::brain::Brain,
    descending: &[u32],
    start: &Fly,
    train: &[flychess_fly::data::Row],
    batches: &[usize],
    window: usize,
) -> Result<serde_json::Value> {
    let p = base.start();
    base.apply(&p, brain);
    let steps = start.readout.read_steps.clone();
    let reader = Reader { descending, steps: &steps };
    let mut rows = Vec::new();
    for &b in batches {
        let (boards, targets) = run::boards_and_targets(&train[..b.min(train.len())]);
        let time = |f: &mut dyn FnMut()| {
            (0..2)
                .map(|_| {
                    let t = Instant::now();
                    f();
                    t.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min)
        };
        let forward = time(&mut || {
            std::hint::black_box(flychess_brain::brain::cpu::think_walking(brain, &boards, false));
        });
        let think = time(&mut || {
            std::hint::black_box(flychess_brain::brain::cpu::think(brain, &boards));
        });
        let heads = Heads::<f32>::of(&start.readout);
        let step = time(&mut || {
            let rates = flychess_brain::brain::cpu::think_walking(brain, &boards, false);
            let model = base.model_of_brain(brain, &p);
            let x = brain.eye_input(&boards);
            std::hint::black_box(gradient(&model, &x, &rates.data, boards.len(), &heads, &reader, &targets, window, false));
        });
        let n = boards.len() as f64;
        let rates_bytes = 12 * brain.neurons * boards.len() * 4;
        eprintln!(
            "  batch {:>3}: training {:.1} positions/s, forward {:.1} (engine's think {:.1}), {:.2}×",
            boards.len(),
            n / step,
            n / forward,
            n / think,
            forward / step
        );
        rows.push(json!({
            "batch": boards.len(),
            "training_positions_per_second": n / step,
            "forward_positions_per_second": n / forward,
            "engine_think_positions_per_second": n / think,
            "training_over_forward": forward / step,
            "rates_bytes": rates_bytes,
            "gradient_bytes": 4 * (2 * brain.connections() + 2 * brain.neurons * boards.len() + 2 * brain.neurons) ,
        }));
    }
    Ok(json!(rows))
}

/// `flychess gradcheck`: the small brain's check, printed.
pub fn gradcheck(args: &GradcheckArgs) -> Result<()> {
    let (seed, json_out) = (args.seed, args.json);
    let dataset = Dataset::load(&shipped_path())?;
    let (boards, targets) = run::boards_and_targets(&dataset.val()[..3]);
    let report = flychess_learning::bptt::check::report(seed, &boards, &targets)?;
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "gradient check on a small brain ({} neurons, {} connections, {} positions; finite differences of step {:e} in f64, all 12 steps):",
            report.neurons, report.connections, report.positions, report.finite_difference_step
        );
        for (title, rows) in [
            ("finite differences", &report.finite_differences),
            ("burn autodiff, window 6", &report.burn_window_6),
            ("burn autodiff, window 12", &report.burn_window_12),
            ("f32 against f64, window 6", &report.f32_against_f64),
        ] {
            println!("  {title}:");
            for k in rows.iter() {
                println!(
                    "    {:<24} {:>4} checked  largest relative error {:.2e}  (largest error / largest gradient {:.2e})",
                    k.kind, k.checked, k.max_relative_error, k.max_error_over_largest
                );
            }
        }
        println!(
            "  {}",
            if report.passed { "passed: every finite-difference error ≤ 1e-3" } else { "FAILED: a finite-difference error > 1e-3" }
        );
    }
    if report.passed { Ok(()) } else { Err(anyhow!("the gradient check failed")) }
}

/// One pilot: a name and its leash (the step sizes of the readout shared by all; the brain's as
/// named, times `brain_scale`).
fn pilot_leashes(lr_readout: f32, brain_scale: f32) -> Vec<(&'static str, Leash)> {
    use flychess_learning::bptt::run::BrainOptimizer::{Adam, Sgd};
    let leash = |window, calm_unreached, brain_optimizer, max_change, lr_synapses: f32, lr_neurons: f32| Leash {
        window,
        calm_unreached,
        brain_optimizer,
        max_change,
        lr_synapses: lr_synapses * brain_scale,
        lr_neurons: lr_neurons * brain_scale,
        lr_readout,
    };
    vec![
        ("readout only (today's fly, the control)", leash(6, false, Adam, None, 0.0, 0.0)),
        ("everything, Adam 1e-5, window 6 (the seed's flag)", leash(6, false, Adam, None, 1e-5, 1e-5)),
        ("everything, Adam 1e-5, window 12", leash(12, false, Adam, None, 1e-5, 1e-5)),
        ("the leash: calm unreached, SGD 0.1, max change 0.2, window 6", leash(6, true, Sgd, Some(0.2), 0.1, 0.1)),
        ("the leash, window 12", leash(12, true, Sgd, Some(0.2), 0.1, 0.1)),
        ("the leash, neurons only (gain and bias)", leash(6, true, Sgd, Some(0.2), 0.0, 0.1)),
        ("the leash, synapses only, SGD 1", leash(6, true, Sgd, Some(0.2), 1.0, 0.0)),
    ]
}

/// The brain one homeostasis of the pilots runs on, and the start fly's HOLD outcomes on it.
struct PilotBrain {
    loaded: flychess_brain::connectome::brain_file::Loaded,
    brain: flychess_brain::brain::Brain,
    homeostasis: String,
    start_name: String,
    start: Fly,
    base: Base,
    start_hold: Vec<PositionOutcome>,
}

impl PilotBrain {
    fn new(
        spec: &flychess_brain::store::BrainSpec,
        data: &Path,
        calm_unreached: bool,
        hold: &[flychess_fly::data::Row],
    ) -> Result<PilotBrain> {
        let (loaded, mut brain) = crate::cli::options::ready(spec, data, CalibrationOptions { calm_unreached })?;
        let homeostasis = calibrate::fingerprint(brain.homeostasis());
        let (start_name, path) =
            fly::trained_for(&loaded.checksum, data).ok_or_else(|| anyhow!("no readout-only fly for this brain to start from"))?;
        let start = Fly::load(&path)?;
        let base = Base::of(&brain);
        let start_state = State { readout: start.readout.clone(), brain: base.start() };
        let start_hold = run::outcomes(&base, &mut brain, &start_state, &loaded.connectome.groups.descending, hold);
        Ok(PilotBrain { loaded, brain, homeostasis, start_name, start, base, start_hold })
    }
}

/// `flychess train --brain --pilots`: the pilots of the seed's cheat 5 from the same start on the
/// same positions, each measured on HOLD against the readout-only control (paired).
fn pilots(which: &WhichBrain, data: &Path, job: &BrainJob, only: &[usize], brain_scale: f32) -> Result<()> {
    let spec = which.spec(data)?;
    let dataset = Dataset::load(&shipped_path())?;
    let (hold, val, train) = (dataset.hold(), dataset.val(), dataset.train());
    let hold = &hold[..job.hold.min(hold.len())];
    let dir = flychess_brain::files::DataFolder::at(data).runs().join(&job.name);
    let mut table = Vec::new();
    let mut control_hold: Option<Vec<PositionOutcome>> = None;
    // The brain with each homeostasis (plain, calm unreached), made once: loaded, its backward
    // tables, and the start fly's HOLD outcomes on it.
    let mut prepared: [Option<PilotBrain>; 2] = [None, None];
    for (k, (title, leash)) in pilot_leashes(job.leash.lr_readout, brain_scale).into_iter().enumerate() {
        if !only.is_empty() && !only.contains(&k) && k != 0 {
            continue;
        }
        let calm = usize::from(leash.calm_unreached);
        if prepared[calm].is_none() {
            let made = PilotBrain::new(&spec, data, leash.calm_unreached, hold)?;
            if let Some(plain) = prepared[0].as_ref().filter(|_| calm == 1) {
                let same = plain
                    .start_hold
                    .iter()
                    .zip(&made.start_hold)
                    .filter(|(a, b)| a.top1 == b.top1 && (a.loss - b.loss).abs() < 1e-6)
                    .count();
                eprintln!(
                    "  the start fly on the calm homeostasis: the same answer and loss on {same} of {} HOLD positions",
                    made.start_hold.len()
                );
            }
            prepared[calm] = Some(made);
        }
        // Differences from the start are against the start on the plain homeostasis.
        let start_ref = prepared[0].as_ref().map(|p| p.start_hold.clone()).unwrap_or_default();
        let PilotBrain { loaded, brain, homeostasis, start_name, start, base, .. } = prepared[calm].as_mut().expect("made above");
        let descending = &loaded.connectome.groups.descending;
        let options = job.run_options(leash.clone());
        let bar = bar(options.positions, &format!("pilot {k}"));
        eprintln!("pilot {k}: {title}");
        let setup = Setup {
            base,
            brain: &mut *brain,
            brain_checksum: &loaded.checksum,
            homeostasis,
            descending,
            start: (start_name, &start.readout),
            train,
            val,
            gpu: None,
        };
        let o = run::run(setup, &options, &dir.join(format!("pilot-{k}")), &AtomicBool::new(false), &|done, _, point| {
            bar.set_position(done as u64);
            if let Some(p) = point {
                bar.suspend(|| {
                    eprintln!(
                        "  pilot {k}: {:>7} positions  VAL loss {:.4}  top-1 {:.1}%  ({:.0} s)",
                        p.positions,
                        p.val.loss,
                        100.0 * p.val.top1,
                        p.seconds
                    )
                });
            }
        })?;
        bar.finish_and_clear();
        let on = |state: &State, rows: &[flychess_fly::data::Row], brain: &mut flychess_brain::brain::Brain| {
            run::outcomes(base, brain, state, descending, rows)
        };
        let last_hold = on(&o.last, hold, brain);
        let last_val = on(&o.last, &val[..job.val.min(val.len())], brain);
        let control = control_hold.get_or_insert_with(|| last_hold.clone()).clone();
        table.push(json!({
            "pilot": k,
            "what": title,
            "leash": leash,
            "val": figures(&last_val),
            "hold": figures(&last_hold),
            "hold_minus_readout_only": if k == 0 { serde_json::Value::Null } else { difference(&last_hold, &control) },
            "hold_minus_start": difference(&last_hold, &start_ref),
            "best_positions": o.best_positions,
            "curve": o.curve,
            "seconds": o.seconds,
            "positions_per_second": o.timing.positions_per_second(),
            "forward_positions_per_second": o.timing.forward_positions_per_second(),
            "connections_changed": o.last.brain.theta.iter().zip(&base.theta0).filter(|(a, b)| a != b).count(),
        }));
        let t = table.last().expect("pushed");
        eprintln!(
            "  pilot {k}: HOLD top-1 {:.1} %, loss {:.4}; against readout only {}",
            100.0 * t["hold"]["top1"]["value"].as_f64().unwrap_or(f64::NAN),
            t["hold"]["loss"]["value"].as_f64().unwrap_or(f64::NAN),
            if k == 0 {
                "—".to_string()
            } else {
                format!(
                    "{:+.2} points [{:+.2}, {:+.2}], loss {:+.4} [{:+.4}, {:+.4}]",
                    100.0 * t["hold_minus_readout_only"]["top1"]["value"].as_f64().unwrap_or(f64::NAN),
                    100.0 * t["hold_minus_readout_only"]["top1"]["low"].as_f64().unwrap_or(f64::NAN),
                    100.0 * t["hold_minus_readout_only"]["top1"]["high"].as_f64().unwrap_or(f64::NAN),
                    t["hold_minus_readout_only"]["loss"]["value"].as_f64().unwrap_or(f64::NAN),
                    t["hold_minus_readout_only"]["loss"]["low"].as_f64().unwrap_or(f64::NAN),
                    t["hold_minus_readout_only"]["loss"]["high"].as_f64().unwrap_or(f64::NAN)
                )
            }
        );
    }
    let report = json!({ "positions": job.positions, "batch": job.batch, "lr_readout": job.leash.lr_readout, "brain_step_scale": brain_scale, "hold_positions": hold.len(), "start_hold": prepared[0].as_ref().map(|p| figures(&p.start_hold)), "pilots": table, "peak_memory_bytes": peak_memory() });
    let text = serde_json::to_string_pretty(&report)?;
    std::fs::create_dir_all(&dir)?;
    flychess_brain::files::write_atomically(&dir.join("pilots.json"), text.as_bytes())?;
    if job.json {
        println!("{text}");
    }
    Ok(())
}

/// `flychess blame`: the error going back for one position, by region and step.
pub fn blame(args: &BlameArgs, data: &Path) -> Result<()> {
    let (fen, json_out) = (args.fen.as_str(), args.json);
    let spec = args.which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let f = match &args.fly {
        Some(name) => Fly::load(&fly::find(name, data)?)?,
        None => {
            Fly::load(&fly::trained_for(&loaded.checksum, data).ok_or_else(|| anyhow!("no fly for this brain; name one with --fly"))?.1)?
        }
    };
    if f.meta.brain_checksum != loaded.checksum {
        return Err(anyhow!("fly {} belongs to another brain ({})", f.meta.name, f.meta.brain));
    }
    let dataset = Dataset::load(&shipped_path())?;
    let target = flychess_learning::bptt::blame::label(fen, None, &dataset.rows)?;
    let base = Base::of(&brain);
    let b = flychess_learning::bptt::blame::blame(
        &brain,
        &base,
        &f.readout,
        &loaded.connectome.groups.descending,
        &loaded.connectome.neurons.region,
        fen,
        &target,
    )?;
    let report = b.report(fen);
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("the error going back for {fen} (fly {}, loss {:.3}):", f.meta.name, report.loss);
        for s in report.steps.iter().rev() {
            let top: Vec<String> = s.regions.iter().take(3).map(|(r, v)| format!("{r} {v:.2e}")).collect();
            println!("  step {:>2}: largest {:.2e}; most blame (mean |d loss/d rate|): {}", s.step, s.largest, top.join(", "));
        }
    }
    Ok(())
}

/// `train --brain`: the brain learns too (backprop through time over the last steps, on a leash).
#[derive(Args, Clone, Debug)]
pub struct BrainTrainArgs {
    /// Train the brain itself as well as the readout (`--brain` with no value says the same for
    /// the default brain).
    #[arg(long)]
    pub train_brain: bool,
    /// Steps the gradient walks back through, from step 12 (1–12).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=12))]
    pub window: u8,
    /// Homeostasis with "calm unreached": σ = 1 for neurons whose input never moved at a step.
    #[arg(long)]
    pub calm_unreached: bool,
    /// How the brain's numbers move: adam, or sgd (momentum 0.9: each synapse by its own gradient).
    #[arg(long, value_enum, default_value_t = BrainOpt::Adam)]
    pub brain_opt: BrainOpt,
    /// Keep each connection within this share of its measured strength (e.g. 0.2).
    #[arg(long)]
    pub max_change: Option<f32>,
    /// Step size of the connection strengths (default 1e-5 with adam; 0.1 with sgd, whose step is
    /// the gradient itself: 2.3 M synapses share a gradient of length ≤ 1).
    #[arg(long)]
    pub lr_synapses: Option<f32>,
    /// Step size of the neurons' gains and biases (defaults as --lr-synapses).
    #[arg(long)]
    pub lr_neurons: Option<f32>,
    /// Step size of the readout (Adam), for the brain run and its readout-only control alike.
    #[arg(long, default_value_t = 3e-4)]
    pub lr_readout: f32,
    /// Positions per step of brain training.
    #[arg(long, default_value_t = 32)]
    pub brain_batch: usize,
    /// VAL positions measured for the curve.
    #[arg(long, default_value_t = 512)]
    pub val: usize,
    /// Positions between VAL points and checkpoints (default: an eighth of the run).
    #[arg(long)]
    pub val_every: Option<usize>,
    /// HOLD positions measured at the end (at most 4,096).
    #[arg(long, default_value_t = 4096)]
    pub hold: usize,
    /// The readout-only fly to start from (default: the brain's own).
    #[arg(long)]
    pub start: Option<String>,
    /// Leave out the readout-only control run on the same positions.
    #[arg(long)]
    pub no_control: bool,
    /// Also time a training step against the forward pass at these batch sizes.
    #[arg(long, value_delimiter = ',')]
    pub speed_batches: Vec<usize>,
    /// Seed of the TRAIN stream's order.
    #[arg(long, default_value_t = 1)]
    pub stream_seed: u64,
    /// Run the seed's pilots instead (readout only, then each leash) on the same positions.
    #[arg(long)]
    pub pilots: bool,
    /// With --pilots: only these (0 = readout only is always run), e.g. 3,5.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<usize>,
    /// With --pilots: every brain step size times this (e.g. 0.1: ten times smaller steps).
    #[arg(long, default_value_t = 1.0)]
    pub pilot_brain_scale: f32,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}
impl BrainTrainArgs {
    /// The leash the flags ask for; the brain's step sizes default by optimiser (1e-5 with adam,
    /// 0.1 with sgd).
    fn leash(&self) -> Leash {
        let default_step = match self.brain_opt {
            BrainOpt::Adam => 1e-5,
            BrainOpt::Sgd => 0.1,
        };
        Leash {
            window: self.window as usize,
            calm_unreached: self.calm_unreached,
            brain_optimizer: match self.brain_opt {
                BrainOpt::Adam => BrainOptimizer::Adam,
                BrainOpt::Sgd => BrainOptimizer::Sgd,
            },
            max_change: self.max_change,
            lr_synapses: self.lr_synapses.unwrap_or(default_step),
            lr_neurons: self.lr_neurons.unwrap_or(default_step),
            lr_readout: self.lr_readout,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum BrainOpt {
    Adam,
    Sgd,
}
// The arguments of `flychess gradcheck` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct GradcheckArgs {
    /// Seed of the small brain.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

// The arguments of `flychess blame` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct BlameArgs {
    #[arg(long)]
    pub fen: String,
    /// The fly whose readout the loss is of (default: the brain's own).
    #[arg(long)]
    pub fly: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}
