//! `flychess curve`: the learning curve of the fit at scale. Each point is a training run like
//! `flychess train --games` (the shipped Stockfish-labelled TRAIN rows, then master-move rows of
//! the games dataset up to the point's number of positions), named by a hash of everything that
//! makes it (brain, dataset content, options), so a finished point is read back instead of fitted
//! again and a stopped one resumes. Only points whose games rows are cached already are fitted
//! (the cache is `flychess cache --dataset NAME`'s job; `--fill` fills it here instead). Each fly
//! is measured on the shipped HOLD and on the human test; the curve with its slopes per doubling
//! goes to DATA/learning-curve.json (the Train tab draws it), and with `--png` to a plot.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use flychess_brain::files::DataFolder;
use flychess_fly::cache::{Cache, CacheMeta, Reading};
use flychess_fly::data::{Dataset, HOLD, VAL, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_fly::scoring::{PositionOutcome, Target, outcomes};
use flychess_fly::stats;
use flychess_lab::learning_curve::{self, CurvePoint, LearningCurve, RESAMPLES, SEED_LOSS_PER_DOUBLING, TeacherSeries, per_doubling};
use flychess_learning::pipeline::{self, Controls, GamesMix, Prepared, TrainEvent, TrainJob};
use flychess_learning::train::PassRecord;

use super::targets;
use crate::cli::options::{EngineArgs, FitArgs, WhichBrain};

// The arguments of `flychess curve` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct CurveArgs {
    /// The games dataset (`flychess data games --out NAME`): a name or a path ending in .flyd.
    #[arg(long, default_value = "games-1200k")]
    pub games: String,
    /// Positions trained on at each point (the shipped TRAIN rows first, then games rows).
    #[arg(long, value_delimiter = ',', default_values_t = [75_000usize, 150_000, 300_000, 600_000, 1_200_000])]
    pub points: Vec<usize>,
    /// The share of every batch drawn from the shipped Stockfish-labelled rows.
    #[arg(long, default_value_t = 0.25)]
    pub stockfish_share: f64,
    /// The shipped Stockfish-labelled TRAIN rows a point takes first (default: all 75,329).
    #[arg(long)]
    pub shipped_positions: Option<usize>,
    /// Fill the games cache as far as the points need (default: fit only the points whose rows
    /// are cached, and list the others).
    #[arg(long)]
    pub fill: bool,
    /// Also fit every point with more than the shipped rows taught by Stockfish's own move
    /// (labels of the games dataset's TRAIN rows, `flychess data label --dataset`): the second
    /// series. Points whose rows are not all labelled yet are listed, not fitted.
    #[arg(long, value_name = "DIR")]
    pub engine_labels: Option<PathBuf>,
    /// Also fit every point with more than the shipped rows taught by Stockfish's whole opinion
    /// (every legal move's share, labels of `flychess data label --dataset --every-move`): the
    /// third series. Points whose rows are not all labelled yet are listed, not fitted.
    #[arg(long, value_name = "DIR")]
    pub every_move_labels: Option<PathBuf>,
    /// Also draw the curve into this PNG.
    #[arg(long)]
    pub png: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fit: FitArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// The fly of `job`: read back when a finished run of exactly this job is there, else trained
/// (resuming a stopped run), each pass a line above `bar`; `what` names it in the lines.
pub(crate) fn trained_or_read(
    prepared: &Prepared,
    data: &Path,
    job: &TrainJob,
    controls: &Controls,
    bar: &ProgressBar,
    what: &str,
    rows: &str,
) -> Result<Fly> {
    if let Some(f) = finished(data, job, prepared.id()) {
        bar.suspend(|| eprintln!("{what}: {} is fitted already", job.name));
        return Ok(f);
    }
    bar.suspend(|| eprintln!("{what}: fitting {} ({rows})", job.name));
    let name = job.name.clone();
    pipeline::train(prepared, data, job, controls, &|e| match e {
        TrainEvent::Stage { text, fraction } => {
            bar.set_position((fraction * 1000.0) as u64);
            bar.set_message(format!("{what}: {text}"));
        }
        TrainEvent::Pass(r) => bar.suspend(|| {
            eprintln!("  {name}: pass {:>2}  VAL loss {:.4}  top-1 {:.1}%  ({:.0} s)", r.pass, r.val.loss, 100.0 * r.val.top1, r.seconds)
        }),
        TrainEvent::Resumed { passes, why } => bar.suspend(|| eprintln!("  {name}: resumed after pass {passes}, on {why}")),
        TrainEvent::Done { .. } | TrainEvent::Stopped => {}
    })?
    .ok_or_else(|| anyhow!("the run {} was stopped", job.name))
}

/// A series' slopes per doubling as lines of text (`seed`: said after the loss's).
fn print_slopes(
    loss: Option<learning_curve::Slope>,
    top1: Option<learning_curve::Slope>,
    human: Option<learning_curve::Slope>,
    seed: &str,
) {
    if let Some(s) = loss {
        println!("  loss per doubling {:+.4} [{:+.4}, {:+.4}]{seed}", s.per_doubling, s.interval[0], s.interval[1]);
    }
    for (what, s) in [("top-1", top1), ("human top-1", human)] {
        if let Some(s) = s {
            println!(
                "  {what} per doubling {:+.2} points [{:+.2}, {:+.2}]",
                100.0 * s.per_doubling,
                100.0 * s.interval[0],
                100.0 * s.interval[1]
            );
        }
    }
}

/// A point of the curve as a line of text.
fn point_line(p: &CurvePoint) -> String {
    format!(
        "  {:>9} positions  top-1 {:5.1} % [{:.1}, {:.1}]  good {:5.1} %  loss {:.4} [{:.4}, {:.4}]  human top-1 {:5.1} % [{:.1}, {:.1}]  ({} passes, {:.0} s)",
        p.positions,
        100.0 * p.top1,
        100.0 * p.top1_interval[0],
        100.0 * p.top1_interval[1],
        100.0 * p.good,
        p.loss,
        p.loss_interval[0],
        p.loss_interval[1],
        100.0 * p.human_top1,
        100.0 * p.human_top1_interval[0],
        100.0 * p.human_top1_interval[1],
        p.passes,
        p.seconds
    )
}

/// The run name of a point: what makes it, hashed.
fn run_name(checksum: &str, job: &TrainJob, games_sha256: &str, positions: usize) -> String {
    let key = serde_json::json!({ "brain": checksum, "job": job, "games": games_sha256 });
    let hash = flychess_brain::files::hex(&Sha256::digest(serde_json::to_vec(&key).expect("plain json")));
    format!("curve-{positions}-{}", &hash[..10])
}

/// The fly of a finished run of exactly this job, if there is one (`id`: what it read, the brain's
/// checksum or a control's id).
pub(crate) fn finished(data: &Path, job: &TrainJob, id: &str) -> Option<Fly> {
    let info: pipeline::RunInfo =
        serde_json::from_slice(&std::fs::read(pipeline::runs_dir(data).join(&job.name).join("run.json")).ok()?).ok()?;
    let same = info.finished
        && info.brain_checksum == id
        && info.reading == job.reading
        && info.fit == job.options
        && info.games == job.games
        && info.lessons == job.lessons
        && info.curriculum == job.curriculum;
    let fly = Fly::load(&DataFolder::at(data).flies().join(format!("{}.fly", job.name))).ok()?;
    (same && fly.meta.brain_checksum == id).then_some(fly)
}

/// A run's passes and their seconds.
fn passes(data: &Path, run: &str) -> (usize, f64) {
    let text = std::fs::read_to_string(pipeline::runs_dir(data).join(run).join("metrics.jsonl")).unwrap_or_default();
    let records: Vec<PassRecord> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    (records.len(), records.iter().map(|p| p.seconds).sum())
}

fn interval(e: &stats::Estimate) -> [f64; 2] {
    [e.low, e.high]
}

/// Runs `flychess curve`: every point fitted (or read back, or listed as not cached), measured,
/// kept in DATA/learning-curve.json (and `--png`), and printed as JSON or text.
pub fn run(args: &CurveArgs, data: &Path) -> Result<()> {
    let started = Instant::now();
    if !(0.0..1.0).contains(&args.stockfish_share) {
        return Err(anyhow!("--stockfish-share is a share of each batch, from 0 up to (not including) 1"));
    }
    let spec = args.which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let prepared = Prepared {
        connectome: &loaded.connectome,
        brain: &brain,
        checksum: &loaded.checksum,
        spec_name: spec.name(),
        engine: args.engine.choice(),
        sensor: flychess_fly::cache::Sensor::Brain,
    };
    let shipped = Dataset::load(&shipped_path())?;
    let shipped_train = (shipped.rows.len() - HOLD - VAL).min(args.shipped_positions.unwrap_or(usize::MAX));
    let games = GamesRows::of(args, data, &prepared)?;
    let fits = fit_points(args, data, &prepared, shipped_train, &games)?;
    let judge = Judge::new(&prepared, data, &shipped)?;
    let (curve_points, (loss, top1, human_top1)) = judge.measure(data, &fits.fitted)?;
    let series = |dir: &Option<PathBuf>, taught: &Taught, teacher: &str| -> Result<Option<TeacherSeries>> {
        let Some(dir) = dir else { return Ok(None) };
        let (points, (loss, top1, human_top1)) = judge.measure(data, &taught.fitted)?;
        Ok(Some(TeacherSeries {
            teacher: format!("{teacher} (the games rows; the shipped rows their scored moves as in every point)"),
            labels: dir.display().to_string(),
            points,
            not_labelled: taught.not_labelled.clone(),
            loss,
            top1,
            human_top1,
        }))
    };
    let engine = series(&args.engine_labels, &fits.engine, "Stockfish's move")?;
    let every_move = series(&args.every_move_labels, &fits.every_move, "Stockfish's every move")?;
    let curve = LearningCurve {
        brain: loaded.connectome.provenance.label(),
        brain_checksum: loaded.checksum.clone(),
        games: games.meta.source.clone(),
        games_sha256: games.sha256,
        stockfish_share: args.stockfish_share,
        hold_positions: HOLD,
        human_positions: judge.human_positions,
        points: curve_points,
        not_cached: fits.not_cached,
        loss,
        top1,
        human_top1,
        seed_loss_per_doubling: SEED_LOSS_PER_DOUBLING,
        made: fly::today(),
        engine,
        every_move,
    };
    flychess_brain::files::write_atomically(&learning_curve::path(data), &serde_json::to_vec_pretty(&curve)?)?;
    if let Some(png) = &args.png {
        flychess_brain::files::write_atomically(png, &learning_curve::png(&curve)?)?;
    }
    let peak = crate::cli::memory::peak_memory_mb();
    if args.json {
        let mut v = serde_json::to_value(&curve)?;
        v["seconds"] = serde_json::json!(started.elapsed().as_secs_f64());
        v["peak_memory_mb"] = serde_json::json!(peak);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print_curve(args, &curve, (games.cached_train, games.train));
    println!(
        "  saved {}{}; {:.0} s, peak memory {}",
        learning_curve::path(data).display(),
        args.png.as_ref().map(|p| format!(" and {}", p.display())).unwrap_or_default(),
        started.elapsed().as_secs_f64(),
        peak.map(|m| format!("{m:.0} MB")).unwrap_or_else(|| "unknown".into())
    );
    Ok(())
}

/// The games dataset's rows a point may take: where it is, what it holds, its TRAIN rows and how
/// many of them the brain's DN cache of it holds already.
struct GamesRows {
    path: PathBuf,
    meta: flychess_fly::data::Meta,
    sha256: String,
    /// Its TRAIN rows, and how many of them are cached.
    train: usize,
    cached_train: usize,
}

impl GamesRows {
    fn of(args: &CurveArgs, data: &Path, prepared: &Prepared) -> Result<GamesRows> {
        let path = crate::cli::datasets::dataset_path(&args.games, data)?;
        let stream = Dataset::stream(&path)?;
        let meta = stream.meta.clone();
        let sha256 = stream.content_hash()?;
        let first = meta.hold + meta.val;
        let train = meta.rows.saturating_sub(first);
        // How far the games cache goes (opening it only reads).
        let cache_meta = CacheMeta::of(
            prepared.checksum,
            &flychess_brain::calibrate::fingerprint(prepared.brain.homeostasis()),
            &meta.source,
            meta.rows,
            &sha256,
            prepared.connectome.groups.descending.len(),
        );
        let cached = Cache::open(&cache_meta.path_in(&DataFolder::at(data).cache(), &prepared.spec_name), cache_meta)?.positions;
        Ok(GamesRows { path, meta, sha256, train, cached_train: cached.saturating_sub(first) })
    }
}

/// The curve's flies by series (shipped rows, games rows, fly), and the points left out.
struct Fitted {
    fitted: Vec<(usize, usize, Fly)>,
    /// Taught by Stockfish's move (--engine-labels).
    engine: Taught,
    /// Taught by Stockfish's every move (--every-move-labels).
    every_move: Taught,
    /// Points whose games rows are not cached yet (without --fill).
    not_cached: Vec<usize>,
}

/// A series whose games rows Stockfish taught: its flies, and the points whose games rows are
/// not all labelled yet.
#[derive(Default)]
struct Taught {
    fitted: Vec<(usize, usize, Fly)>,
    not_labelled: Vec<usize>,
}

/// Fits (or reads back) each point's fly: the shipped Stockfish-labelled rows first, then the
/// games rows; with --engine-labels a second fly a point, its games rows taught by Stockfish's move.
fn fit_points(args: &CurveArgs, data: &Path, prepared: &Prepared, shipped_train: usize, games_rows: &GamesRows) -> Result<Fitted> {
    let bar = ProgressBar::new(1000);
    bar.set_style(ProgressStyle::with_template("[{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    let controls = Controls::default();
    let options = args.fit.options();
    let mut points: Vec<usize> = args.points.clone();
    points.sort_unstable();
    points.dedup();
    let mut fitted: Vec<(usize, usize, Fly)> = Vec::new();
    let (mut engine, mut every_move) = (Taught::default(), Taught::default());
    let mut not_cached = Vec::new();
    // Fits (or reads back) one point's fly.
    let fit_point = |p: usize, shipped_n: usize, games_n: usize, games: Option<GamesMix>, series: &str| -> Result<Fly> {
        let mut job = TrainJob {
            name: String::new(),
            positions: HOLD + VAL + shipped_n,
            reading: Reading::Mean9To12,
            options: options.clone(),
            lessons: 0.0,
            games,
            curriculum: None,
            from: None,
        };
        job.name = run_name(prepared.checksum, &job, &games_rows.sha256, p);
        let what = format!("{p} positions{series}");
        trained_or_read(prepared, data, &job, &controls, &bar, &what, &format!("{shipped_n} shipped + {games_n} games rows"))
    };
    for &p in &points {
        let (shipped_n, games_n) = if p <= shipped_train { (p, 0) } else { (shipped_train, p - shipped_train) };
        if games_n > games_rows.train {
            return Err(anyhow!(
                "{} has {} TRAIN positions: a point of {p} needs {games_n} beside the shipped {shipped_train}",
                games_rows.path.display(),
                games_rows.train
            ));
        }
        if games_n > games_rows.cached_train && !args.fill {
            not_cached.push(p);
            continue;
        }
        let games = (games_n > 0).then(|| GamesMix::master(games_rows.path.clone(), games_n, args.stockfish_share));
        let fly = fit_point(p, shipped_n, games_n, games, "")?;
        // The second and third series: the games rows taught by Stockfish's move, and by its
        // every move; a point of the shipped rows alone is the same fly in all.
        for (labels, teacher, series, what) in [
            (&args.engine_labels, "engine", &mut engine, " (Stockfish's move)"),
            (&args.every_move_labels, "every-move", &mut every_move, " (Stockfish's every move)"),
        ] {
            let Some(dir) = labels else { continue };
            if games_n == 0 {
                series.fitted.push((shipped_n, 0, fly.clone()));
                continue;
            }
            let taught = GamesMix::taught(games_rows.path.clone(), games_n, args.stockfish_share, Some(dir.clone()), Some(teacher))?;
            if taught.positions < games_n {
                series.not_labelled.push(p);
            } else {
                series.fitted.push((shipped_n, games_n, fit_point(p, shipped_n, games_n, Some(taught), what)?));
            }
        }
        fitted.push((shipped_n, games_n, fly));
    }
    bar.finish_and_clear();
    Ok(Fitted { fitted, engine, every_move, not_cached })
}

/// A series' slopes per doubling: loss, top-1, and top-1 on the human test.
type Slopes = (Option<learning_curve::Slope>, Option<learning_curve::Slope>, Option<learning_curve::Slope>);

/// What every fly of the curve is measured on: the shipped HOLD positions and the human test,
/// their readings (the curve's flies read steps 9–12) and targets.
struct Judge {
    hold_x: Vec<f32>,
    hold_t: Vec<Target>,
    human_x: Vec<f32>,
    human_t: Vec<Target>,
    human_positions: usize,
}

impl Judge {
    fn new(prepared: &Prepared, data: &Path, shipped: &Dataset) -> Result<Judge> {
        let controls = Controls::default();
        let hold_cache = pipeline::cache(prepared, data, shipped, HOLD, &controls, &|_| {})?.ok_or_else(|| anyhow!("stopped"))?;
        let hold_x = hold_cache.read(0..HOLD, Reading::Mean9To12)?;
        let hold_t = targets(&shipped.rows[..HOLD])?;
        let human_path = flychess_fly::data::human_test_path();
        let human = Dataset::load(&human_path)?;
        let human_rows = human.hold();
        let human_cache = pipeline::streamed_cache(prepared, &human_path, data, human_rows.len(), &controls, &|_| {})?
            .ok_or_else(|| anyhow!("stopped"))?;
        let human_x = human_cache.read(0..human_rows.len(), Reading::Mean9To12)?;
        let human_t = targets(human_rows)?;
        Ok(Judge { hold_x, hold_t, human_x, human_t, human_positions: human_rows.len() })
    }

    /// A series' points measured on HOLD and the human test, with its slopes per doubling.
    fn measure(&self, data: &Path, fitted: &[(usize, usize, Fly)]) -> Result<(Vec<CurvePoint>, Slopes)> {
        let mut measured: Vec<(Vec<PositionOutcome>, Vec<PositionOutcome>)> = Vec::new();
        let mut curve_points = Vec::new();
        for (shipped_n, games_n, fly) in fitted {
            if fly.readout.read_steps != Reading::Mean9To12.steps() {
                return Err(anyhow!("{} reads other steps than the curve's", fly.meta.name));
            }
            let (o, h) = (outcomes(&fly.readout, &self.hold_x, &self.hold_t), outcomes(&fly.readout, &self.human_x, &self.human_t));
            let hits = |o: &[PositionOutcome], f: fn(&PositionOutcome) -> bool| o.iter().map(f).collect::<Vec<bool>>();
            let (top1, good, human_top1) =
                (stats::rate_of(&hits(&o, |x| x.top1)), stats::rate_of(&hits(&o, |x| x.good)), stats::rate_of(&hits(&h, |x| x.top1)));
            let loss = stats::mean(&o.iter().map(|x| x.loss).collect::<Vec<_>>());
            let (pass_count, seconds) = passes(data, &fly.meta.name);
            curve_points.push(CurvePoint {
                positions: shipped_n + games_n,
                shipped_positions: *shipped_n,
                games_positions: *games_n,
                fly: fly.meta.name.clone(),
                passes: pass_count,
                seconds,
                top1: top1.value,
                top1_interval: interval(&top1),
                good: good.value,
                good_interval: interval(&good),
                loss: loss.value,
                loss_interval: interval(&loss),
                policy_loss: o.iter().map(|x| x.policy_loss).sum::<f64>() / o.len().max(1) as f64,
                human_top1: human_top1.value,
                human_top1_interval: interval(&human_top1),
            });
            measured.push((o, h));
        }
        let positions: Vec<usize> = curve_points.iter().map(|p| p.positions).collect();
        let figure = |f: fn(&PositionOutcome) -> f64, human: bool| -> Vec<Vec<f64>> {
            measured.iter().map(|(o, h)| (if human { h } else { o }).iter().map(f).collect()).collect()
        };
        let slopes = (
            per_doubling(&positions, &figure(|x| x.loss, false), RESAMPLES, 1),
            per_doubling(&positions, &figure(|x| x.top1 as u8 as f64, false), RESAMPLES, 1),
            per_doubling(&positions, &figure(|x| x.top1 as u8 as f64, true), RESAMPLES, 1),
        );
        Ok((curve_points, slopes))
    }
}

/// The curve as text: each series' points and slopes, and the points not fitted yet (with how
/// many of the games dataset's TRAIN rows are cached, and of how many).
fn print_curve(args: &CurveArgs, curve: &LearningCurve, (cached_train, games_train): (usize, usize)) {
    println!(
        "learning curve of {} on {} (mix: {:.0} % Stockfish rows a batch); HOLD {HOLD} positions, human test {}; 95 % intervals:",
        curve.brain,
        curve.games,
        100.0 * curve.stockfish_share,
        curve.human_positions
    );
    for p in &curve.points {
        println!("{}", point_line(p));
    }
    print_slopes(curve.loss, curve.top1, curve.human_top1, &format!(" (the seed: {SEED_LOSS_PER_DOUBLING:+.3})"));
    for e in curve.engine.iter().chain(&curve.every_move) {
        println!("  taught by {}:", e.teacher);
        for p in &e.points {
            println!("{}", point_line(p));
        }
        print_slopes(e.loss, e.top1, e.human_top1, "");
        if !e.not_labelled.is_empty() {
            println!("  not fitted with this teacher yet (their games rows are not all labelled): {:?}", e.not_labelled);
        }
    }
    if !curve.not_cached.is_empty() {
        println!(
            "  not fitted yet (their games rows are not cached: {cached_train} of {games_train} are; `flychess cache --dataset {}`): {:?}",
            args.games, curve.not_cached
        );
    }
}
