//! One training run, the fast way (issue 4), shared by `flychess train` and the Train tab: the
//! frozen brain runs once over the shipped positions (the DN-rate cache, resumable), the blind
//! baseline is fitted for reference, and the readout is fitted pass by pass over the cache. Every
//! pass is appended to DATA/runs/NAME/metrics.jsonl (what the Train tab draws) and the best
//! readout so far is checkpointed, so a run killed mid-way resumes from where it was. The fly is
//! saved to DATA/flies/NAME.fly with its HOLD metrics. A few snapshots of the readout are kept
//! for "watching it learn" (the newborn readout, the best after passes 1, 2, 4, 8, … and the
//! fly at the end, DATA/runs/NAME/snapshots/pass-NNNN.fly). Progress goes to a callback; a run
//! can be paused and stopped through `Controls`.

mod job;

use job::labels_kept_from;
pub use job::{CurriculumMix, GamesMix, LabelsUsed, Reads, StartFrom, TrainJob, read_engine_labels, reads_differ};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::teacher::EngineLabels;
use crate::train::{Examples, FitOptions, PassRecord, fit, fit_from};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::connectome::Connectome;
use flychess_fly::cache::{Cache, CacheMeta, Reading, Sensor};
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::fly::{self, Fly, FlyMeta};
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{FitState, Metrics, Target, evaluate};

/// Where `flychess lessons` writes its relabelled won positions.
pub fn lessons_path(data: &Path) -> PathBuf {
    flychess_brain::files::DataFolder::at(data).lessons().join("labels.jsonl")
}

/// Finishing lessons for TRAIN (rows `train_rows` of the dataset, features `train_x` with `d`
/// per row): every lesson whose position is among them, with its mate-distance target, repeated
/// until lessons make `share` of the extended set. Returns the extra features and targets.
pub fn lesson_rows(data: &Path, train_rows: &[Row], train_x: &[f32], d: usize, share: f64) -> Result<(Vec<f32>, Vec<Target>)> {
    if share <= 0.0 {
        return Ok((Vec::new(), Vec::new()));
    }
    let path = lessons_path(data);
    let file =
        std::fs::File::open(&path).map_err(|e| Error::Invalid(format!("{}: {e} (make them with `flychess lessons`)", path.display())))?;
    let lessons = Dataset::from_jsonl(std::io::BufReader::new(file), "lessons", "Stockfish")?;
    let index: std::collections::HashMap<&str, usize> = train_rows.iter().enumerate().map(|(i, r)| (r.fen.as_str(), i)).collect();
    let found: Vec<(usize, Target)> = lessons
        .rows
        .iter()
        .filter_map(|r| index.get(r.fen.as_str()).map(|&i| Target::lesson(r).map(|t| (i, t))))
        .collect::<flychess_fly::Result<_>>()?;
    if found.is_empty() {
        return Err(Error::Invalid(format!("none of the lessons in {} is among the TRAIN positions used", path.display())));
    }
    Ok(repeated_to_share(found.len(), d, share, train_rows.len(), |k| {
        let (i, target) = &found[k];
        (&train_x[i * d..(i + 1) * d], target)
    }))
}

/// Extra TRAIN rows, `pool` rows (`row(k)`: the k-th row's `d` features and its target) repeated
/// in turn until they make `share` (at most 0.9) of `train` rows and themselves together. A pool
/// larger than its share gives rows spread evenly over all of it (not its first rows only: the
/// rows of a second curriculum come after the first's).
fn repeated_to_share<'r>(
    pool: usize,
    d: usize,
    share: f64,
    train: usize,
    row: impl Fn(usize) -> (&'r [f32], &'r Target),
) -> (Vec<f32>, Vec<Target>) {
    let share = share.clamp(0.0, 0.9);
    let extra = if pool == 0 { 0 } else { ((share / (1.0 - share)) * train as f64).ceil() as usize };
    let mut x = Vec::with_capacity(extra * d);
    let mut t = Vec::with_capacity(extra);
    for k in 0..extra {
        let (features, target) = row(if pool > extra { k * pool / extra } else { k % pool });
        x.extend_from_slice(features);
        t.push(target.clone());
    }
    (x, t)
}

/// The run's description, kept as DATA/runs/NAME/run.json.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    pub name: String,
    pub brain: String,
    pub brain_checksum: String,
    pub positions: usize,
    pub reading: Reading,
    pub fit: FitOptions,
    #[serde(default)]
    pub lessons: f64,
    #[serde(default)]
    pub games: Option<GamesMix>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curriculum: Option<CurriculumMix>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<StartFrom>,
    /// What it reads besides the shipped rows, by content, when it started (`TrainJob::reads`);
    /// absent in the runs of before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<Reads>,
    /// The blind baseline on VAL (move popularity only), for reference lines.
    pub blind: Option<Metrics>,
    pub hold: Option<Metrics>,
    pub finished: bool,
}

pub enum TrainEvent {
    Stage {
        text: String,
        fraction: f64,
    },
    /// A killed run picked up after its last checkpointed pass (`why`: what was kept, in words).
    Resumed {
        passes: usize,
        why: String,
    },
    Pass(PassRecord),
    Done {
        fly: PathBuf,
        hold: Metrics,
        val: Metrics,
    },
    Stopped,
}

/// Pause and stop, shared with whoever watches the run.
#[derive(Default)]
pub struct Controls {
    pub stop: AtomicBool,
    pub pause: AtomicBool,
}

impl Controls {
    /// True when the run should end; blocks while paused.
    fn should_stop(&self) -> bool {
        while self.pause.load(Ordering::Relaxed) && !self.stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop.load(Ordering::Relaxed)
    }
}

/// The brain a run trains on.
pub struct Prepared<'a> {
    pub connectome: &'a Connectome,
    pub brain: &'a Brain,
    pub checksum: &'a str,
    /// The brain spec's name (cache file names).
    pub spec_name: String,
    /// Where the brain thinks while the DN-rate cache fills (`--engine`; auto: a hardware GPU).
    pub engine: EngineChoice,
    /// What the readout reads: the brain (every fly), or a control's board planes or nothing
    /// (`eval --controls-at-scale`), cached, run and saved under the control's own id.
    pub sensor: Sensor,
}

impl Prepared<'_> {
    /// The id its caches, runs and flies carry: the brain's checksum, or a control's id.
    pub fn id(&self) -> &str {
        self.sensor.control_id().unwrap_or(self.checksum)
    }

    /// What it reads, in words.
    pub fn label(&self) -> String {
        match self.sensor {
            Sensor::Brain => self.connectome.provenance.label(),
            control => control.label().to_string(),
        }
    }

    /// Inputs a position.
    pub fn inputs(&self) -> usize {
        self.sensor.control_inputs().unwrap_or(self.connectome.groups.descending.len())
    }

    /// The homeostasis fingerprint its caches are keyed by ("none" for a control).
    fn homeostasis(&self) -> String {
        match self.sensor {
            Sensor::Brain => flychess_brain::calibrate::fingerprint(self.brain.homeostasis()),
            _ => "none".into(),
        }
    }

    /// The name its cache files start with.
    fn cache_name(&self) -> String {
        self.sensor.control_cache_name().map_or_else(|| self.spec_name.clone(), str::to_string)
    }
}

/// The curriculum's rows as the fit reads them: the dataset at `path` with its HOLD (held out) and
/// TRAIN rows.
pub fn load_curriculum(path: &Path) -> Result<Dataset> {
    Dataset::load(path).map_err(|e| Error::Invalid(format!("{e} (make the curriculum with `flychess data curriculum`)")))
}

pub fn runs_dir(data: &Path) -> PathBuf {
    flychess_brain::files::DataFolder::at(data).runs()
}

fn targets(rows: &[Row]) -> Result<Vec<Target>> {
    Ok(rows.par_iter().map(Target::of).collect::<flychess_fly::Result<Vec<_>>>()?)
}

/// The DN-rate cache of `prepared` over the first `n` rows, filled as needed.
pub fn cache(
    prepared: &Prepared,
    data: &Path,
    dataset: &Dataset,
    n: usize,
    controls: &Controls,
    events: &dyn Fn(TrainEvent),
) -> Result<Option<Cache>> {
    let meta = CacheMeta::new(prepared.id(), &prepared.homeostasis(), dataset, prepared.inputs());
    let path = meta.path_in(&flychess_brain::files::DataFolder::at(data).cache(), &prepared.cache_name());
    let mut cache = Cache::open(&path, meta)?;
    if cache.positions < n {
        fill_reporting(prepared, &mut cache, dataset.rows[..n].iter().cloned().map(Ok), n, controls, events)?;
    }
    Ok((cache.positions >= n).then_some(cache))
}

/// The DN-rate cache of `prepared` over the first `n` rows of the dataset file at `path`, read
/// off the file as it fills (memory: one batch, whatever the dataset's size).
pub fn streamed_cache(
    prepared: &Prepared,
    path: &Path,
    data: &Path,
    n: usize,
    controls: &Controls,
    events: &dyn Fn(TrainEvent),
) -> Result<Option<Cache>> {
    let stream = Dataset::stream(path)?;
    let (source, rows) = (stream.meta.source.clone(), stream.meta.rows);
    let meta = CacheMeta::of(prepared.id(), &prepared.homeostasis(), &source, rows, &stream.content_hash()?, prepared.inputs());
    let file = meta.path_in(&flychess_brain::files::DataFolder::at(data).cache(), &prepared.cache_name());
    let mut cache = Cache::open(&file, meta)?;
    if cache.positions < n {
        fill_reporting(prepared, &mut cache, Dataset::stream(path)?, n, controls, events)?;
    }
    Ok((cache.positions >= n).then_some(cache))
}

/// Fills `cache` up to `n` rows of `rows` on the run's engine, saying how far it is.
fn fill_reporting(
    prepared: &Prepared,
    cache: &mut Cache,
    rows: impl Iterator<Item = flychess_fly::Result<Row>> + Send,
    n: usize,
    controls: &Controls,
    events: &dyn Fn(TrainEvent),
) -> Result<()> {
    let started = Instant::now();
    let from = cache.positions;
    let report = |on: &str| {
        let on = on.to_string();
        move |done: usize, total: usize| {
            let rate = (done - from) as f64 / started.elapsed().as_secs_f64().max(1e-3);
            let left = (total - done) as f64 / rate.max(1e-9);
            events(TrainEvent::Stage {
                text: format!("{done} of {total} positions read {on} ({rate:.0}/s, about {} left)", human(left)),
                fraction: done as f64 / total.max(1) as f64,
            })
        }
    };
    let stop = || controls.should_stop();
    match prepared.sensor {
        Sensor::Brain => {
            let sim = Simulator::choose(prepared.engine, prepared.brain)?;
            let on = format!("by the brain on the {}", sim.describe());
            let batch = sim.preferred_batch();
            cache.fill_streamed(&sim, prepared.brain, &prepared.connectome.groups.descending, rows, n, batch, &report(&on), &stop)?;
        }
        control => {
            let on = format!("for the control ({})", control.label());
            cache.fill_reading(rows, n, 1024, &|boards| Ok(control.readings(boards)), &report(&on), &stop)?;
        }
    }
    Ok(())
}

/// "1 min 20 s", "45 s".
pub fn human(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// Runs `job` to the end (or until stopped), returning the fly when finished.
pub fn train(prepared: &Prepared, data: &Path, job: &TrainJob, controls: &Controls, events: &dyn Fn(TrainEvent)) -> Result<Option<Fly>> {
    flychess_fly::fly::check_name(&job.name)?;
    let earlier: Option<RunInfo> =
        std::fs::read(runs_dir(data).join(&job.name).join("run.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let (job, resumed_on) = labels_kept_from(job, earlier.as_ref())?;
    let job = &job;
    if let Some(f) = &job.from {
        f.readout(prepared.id(), &job.reading.steps(), None)?;
    }
    let dataset = Dataset::load(&shipped_path())?;
    let n = job.positions.min(dataset.rows.len());
    if n <= HOLD + VAL {
        return Err(Error::Invalid(format!("a run needs more than {} positions (HOLD and VAL come first)", HOLD + VAL)));
    }
    // The same job on files whose content changed since it started: refused, saying which (it
    // would otherwise resume on other rows), before any cache is filled for them.
    let reads = job.reads(data)?;
    let changed = earlier.as_ref().filter(|p| p.resumes(prepared.id(), n, job)).and_then(|p| p.reads.as_ref());
    if let Some(why) = changed.and_then(|then| reads_differ(then, &reads)) {
        return Err(Error::Invalid(format!(
            "the killed run {} cannot resume: {why}; put those files back, or train under another name",
            job.name
        )));
    }
    let stages = Stages { prepared, data, controls, events };
    let Some(sets) = stages.sets(job, &dataset, n)? else {
        events(TrainEvent::Stopped);
        return Ok(None);
    };
    let Some(games) = stages.games(job)? else {
        events(TrainEvent::Stopped);
        return Ok(None);
    };
    let (teacher_words, by_teacher) = teacher_of(job, sets.train_rows, sets.curriculum_t.len());
    let files = RunFiles::create(data, &job.name)?;
    let previous: Option<RunInfo> = std::fs::read(&files.info).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let resumable = previous.as_ref().is_some_and(|p| p.resumes(prepared.id(), n, job));
    if !resumable {
        let _ = std::fs::remove_dir_all(&files.snapshots);
    }
    let start = stages.start_point(job, &files, resumable, sets.cache.meta.descending, resumed_on)?;
    // The blind baseline: the same fit with no input at all.
    events(TrainEvent::Stage { text: "fitting the blind baseline (no brain, move popularity only)".into(), fraction: 0.0 });
    let blind = match previous.as_ref().filter(|_| resumable).and_then(|p| p.blind) {
        Some(b) => b,
        None => {
            fit(
                &Readout::newborn(0, vec![], 1),
                Examples { x: &[], targets: &sets.train_t },
                Examples { x: &[], targets: &sets.val_t },
                &job.options,
                &mut |_, _| {},
                &|| false,
            )?
            .1
        }
    };
    let info = RunInfo {
        name: job.name.clone(),
        brain: prepared.label(),
        brain_checksum: prepared.id().to_string(),
        positions: n,
        reading: job.reading,
        fit: job.options.clone(),
        lessons: job.lessons,
        games: job.games.clone(),
        curriculum: job.curriculum.clone(),
        from: job.from.clone(),
        reads: Some(reads),
        blind: Some(blind),
        hold: None,
        finished: false,
    };
    flychess_brain::files::write_atomically(&files.info, &serde_json::to_vec_pretty(&info).map_err(|e| Error::Invalid(e.to_string()))?)?;
    let meta = FlyMeta {
        name: job.name.clone(),
        kind: prepared.sensor.fly_kind().into(),
        brain: prepared.label(),
        brain_checksum: prepared.id().to_string(),
        homeostasis: sets.cache.meta.homeostasis.clone(),
        reading: job.reading,
        data: match &job.games {
            Some(g) => format!("{}; and {} positions of {}", dataset.meta.source, g.positions, games.source),
            None => dataset.meta.source.clone(),
        } + &job
            .from
            .as_ref()
            .map(|f| format!("; continued from the fly {} (sha256 {})", f.name, &f.sha256[..16]))
            .unwrap_or_default(),
        train_positions: sets.train_rows + job.games.as_ref().map_or(0, |g| g.positions) + sets.curriculum_t.len(),
        val: None,
        hold: None,
        created: String::new(),
        teacher: Some(teacher_words),
        positions_by_teacher: Some(by_teacher),
    };
    stages.fit_run(ReadyRun { job, sets, games, files, start, info, meta })
}

/// What every stage of a run reads: the brain, the data folder, the run's controls and where its
/// events go.
struct Stages<'a> {
    prepared: &'a Prepared<'a>,
    data: &'a Path,
    controls: &'a Controls,
    events: &'a dyn Fn(TrainEvent),
}

/// The positions a run fits on, as features (read off the DN-rate caches) and targets.
struct RunSets {
    /// The shipped rows' DN-rate cache.
    cache: Cache,
    /// The shipped TRAIN rows used (before the lessons and the curriculum join them).
    train_rows: usize,
    train_x: Vec<f32>,
    train_t: Vec<Target>,
    val_x: Vec<f32>,
    val_t: Vec<Target>,
    hold_x: Vec<f32>,
    hold_t: Vec<Target>,
    /// The curriculum's TRAIN rows (already in TRAIN unless the games are streamed: then they
    /// take their share of every batch).
    curriculum_x: Vec<f32>,
    curriculum_t: Vec<Target>,
}

/// The games part of a run: its DN-rate cache with its first TRAIN row (None: no games), the
/// dataset's source, and Stockfish's moves for its rows.
struct GamesPart {
    cache: Option<(Cache, usize)>,
    source: String,
    engine_labels: Option<EngineLabels>,
}

/// Where a run keeps its files (DATA/runs/NAME).
struct RunFiles {
    /// run.json: the run's description.
    info: PathBuf,
    /// checkpoint.fit: the best readout and the fit's state after its last pass.
    checkpoint: PathBuf,
    /// metrics.jsonl: a line a pass.
    metrics: PathBuf,
    snapshots: PathBuf,
}

impl RunFiles {
    /// The run's folder made if missing.
    fn create(data: &Path, name: &str) -> Result<RunFiles> {
        let dir = runs_dir(data).join(name);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(RunFiles {
            info: dir.join("run.json"),
            checkpoint: dir.join("checkpoint.fit"),
            metrics: dir.join("metrics.jsonl"),
            snapshots: snapshots_dir(data, name),
        })
    }
}

/// Where a fit starts: the readout, and when it resumes, the fit's state after its last pass and
/// the checkpoint's fly.
struct StartPoint {
    readout: Readout,
    resume: Option<FitState>,
    checkpointed: Option<Fly>,
}

/// A run ready to fit: its job, its positions and what its records carry.
struct ReadyRun<'a> {
    job: &'a TrainJob,
    sets: RunSets,
    games: GamesPart,
    files: RunFiles,
    start: StartPoint,
    info: RunInfo,
    /// What every fly the run saves carries but its VAL and HOLD figures and the day.
    meta: FlyMeta,
}

impl RunInfo {
    /// Whether this unfinished run goes on as `job` over `n` positions of the brain (or control)
    /// `id`: the same rows, teachers and settings.
    fn resumes(&self, id: &str, n: usize, job: &TrainJob) -> bool {
        !self.finished
            && self.brain_checksum == id
            && self.positions == n
            && self.reading == job.reading
            && self.fit == job.options
            && self.lessons == job.lessons
            && self.games == job.games
            && self.curriculum == job.curriculum
            && self.from == job.from
    }
}

impl Stages<'_> {
    /// The shipped rows' DN-rate cache (filled as needed) and the sets read off it: TRAIN with
    /// the finishing lessons and (unless the games are streamed) the curriculum mixed in, VAL and
    /// HOLD. None when stopped while a cache fills.
    fn sets(&self, job: &TrainJob, dataset: &Dataset, n: usize) -> Result<Option<RunSets>> {
        let (prepared, data, controls, events) = (self.prepared, self.data, self.controls, self.events);
        events(TrainEvent::Stage { text: "opening the DN-rate cache".into(), fraction: 0.0 });
        let Some(cache) = cache(prepared, data, dataset, n, controls, events)? else { return Ok(None) };
        let rows = &dataset.rows[..n];
        let (val_rows, train_rows) = (&rows[HOLD..HOLD + VAL], &rows[HOLD + VAL..]);
        events(TrainEvent::Stage {
            text: format!("targets for {} TRAIN and {} VAL positions", train_rows.len(), val_rows.len()),
            fraction: 0.0,
        });
        let (mut train_t, val_t, hold_t) = (targets(train_rows)?, targets(val_rows)?, targets(&rows[..HOLD])?);
        let mut train_x = cache.read(HOLD + VAL..n, job.reading)?;
        if job.lessons > 0.0 {
            let (x, t) = lesson_rows(data, train_rows, &train_x, cache.meta.descending, job.lessons)?;
            events(TrainEvent::Stage {
                text: format!("{} finishing-lesson rows mixed into TRAIN ({:.0}%)", t.len(), 100.0 * job.lessons),
                fraction: 0.0,
            });
            train_x.extend(x);
            train_t.extend(t);
        }
        // The curriculum: its TRAIN rows' readings and their quickest-win targets.
        let (mut curriculum_x, mut curriculum_t) = (Vec::new(), Vec::new());
        for path in job.curriculum.iter().flat_map(|c| c.datasets()) {
            let d = load_curriculum(path)?;
            if d.train().is_empty() {
                return Err(Error::Invalid(format!("{}: the curriculum has no TRAIN rows", path.display())));
            }
            events(TrainEvent::Stage { text: format!("opening the DN-rate cache of {}", path.display()), fraction: 0.0 });
            let Some(cc) = self::cache(prepared, data, &d, d.rows.len(), controls, events)? else { return Ok(None) };
            let first = d.meta.hold + d.meta.val;
            let t: Vec<Target> = d.train().par_iter().map(Target::lesson).collect::<flychess_fly::Result<_>>()?;
            curriculum_x.extend(cc.read(first..d.rows.len(), job.reading)?);
            curriculum_t.extend(t);
        }
        if let Some(c) = job.curriculum.as_ref().filter(|_| job.games.is_none()) {
            // In memory: the curriculum rows repeated until they make their share of TRAIN.
            let d = cache.meta.descending;
            let (x, t) =
                repeated_to_share(curriculum_t.len(), d, c.share, train_t.len(), |i| (&curriculum_x[i * d..(i + 1) * d], &curriculum_t[i]));
            train_x.extend(x);
            train_t.extend(t);
        }
        let val_x = cache.read(HOLD..HOLD + VAL, job.reading)?;
        let hold_x = cache.read(0..HOLD, job.reading)?;
        let train_rows = train_rows.len();
        Ok(Some(RunSets { cache, train_rows, train_x, train_t, val_x, val_t, hold_x, hold_t, curriculum_x, curriculum_t }))
    }

    /// The games part: its DN-rate cache filled as far as the run asks (TRAIN rows come after its
    /// human test and VAL), and Stockfish's moves for its rows (the very lines the run was set up
    /// with). None when stopped while the cache fills.
    fn games(&self, job: &TrainJob) -> Result<Option<GamesPart>> {
        let Some(g) = &job.games else { return Ok(Some(GamesPart { cache: None, source: String::new(), engine_labels: None })) };
        let stream = Dataset::stream(&g.dataset)?;
        let first = stream.meta.hold + stream.meta.val;
        if first + g.positions > stream.meta.rows {
            return Err(Error::Invalid(format!(
                "{} has {} TRAIN positions; the run asks for {}",
                g.dataset.display(),
                stream.meta.rows - first,
                g.positions
            )));
        }
        let source = stream.meta.source.clone();
        (self.events)(TrainEvent::Stage { text: format!("opening the DN-rate cache of {}", g.dataset.display()), fraction: 0.0 });
        let Some(c) = streamed_cache(self.prepared, &g.dataset, self.data, first + g.positions, self.controls, self.events)? else {
            return Ok(None);
        };
        let engine_labels = match &g.engine_labels {
            Some(used) => {
                let labels = read_engine_labels(&g.dataset, &used.dir, used.rows)?;
                if labels.labels.len() != used.rows {
                    return Err(Error::Invalid(format!(
                        "{}: the run uses {} lines of labels, the folder has {}",
                        used.dir.display(),
                        used.rows,
                        labels.labels.len()
                    )));
                }
                Some(labels)
            }
            None => None,
        };
        Ok(Some(GamesPart { cache: Some((c, first)), source, engine_labels }))
    }

    /// Where the fit starts: when the run resumes, the checkpoint's best readout and the fit's
    /// state after its last pass (the pass log cut back to that pass: a pass logged after it, its
    /// checkpoint lost to a kill, is made again, the same way); else the fly the job starts from
    /// or a newborn readout of `inputs` neurons, the pass log gone.
    fn start_point(
        &self,
        job: &TrainJob,
        files: &RunFiles,
        resumable: bool,
        inputs: usize,
        resumed_on: Option<String>,
    ) -> Result<StartPoint> {
        let metrics_path = &files.metrics;
        match (resumable, flychess_fly::fly::Checkpoint::load(&files.checkpoint)) {
            (true, Ok(c)) => {
                let passes = c.state.passes;
                let log = std::fs::read_to_string(metrics_path).unwrap_or_default();
                let kept: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).take(passes).collect();
                if kept.len() < passes {
                    return Err(Error::Invalid(format!(
                        "{}: the pass log has {} passes, the checkpoint {passes}",
                        metrics_path.display(),
                        kept.len()
                    )));
                }
                flychess_brain::files::write_atomically(
                    metrics_path,
                    kept.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes(),
                )?;
                (self.events)(TrainEvent::Stage { text: format!("resuming after pass {passes}"), fraction: 0.0 });
                (self.events)(TrainEvent::Resumed {
                    passes,
                    why: resumed_on.unwrap_or_else(|| "the same rows, teachers and settings".into()),
                });
                Ok(StartPoint { readout: c.fly.readout.clone(), resume: Some(c.state), checkpointed: Some(c.fly) })
            }
            _ => {
                let _ = std::fs::remove_file(metrics_path);
                let steps = job.reading.steps();
                let readout = match &job.from {
                    Some(f) => f.readout(self.prepared.id(), &steps, Some(inputs))?,
                    None => Readout::newborn(inputs, steps, 1),
                };
                Ok(StartPoint { readout, resume: None, checkpointed: None })
            }
        }
    }

    /// The fit of a ready run, pass after pass: each pass logged and checkpointed, a snapshot kept
    /// after passes 1, 2, 4, 8, …; then the fly saved with its HOLD figures (None when stopped).
    fn fit_run(&self, run: ReadyRun) -> Result<Option<Fly>> {
        let ReadyRun { job, sets, games, files, start, mut info, meta } = run;
        let (controls, events) = (self.controls, self.events);
        let meta = |val: Option<Metrics>, hold: Option<Metrics>| FlyMeta { val, hold, created: fly::today(), ..meta.clone() };
        let snapshot = |pass: usize, readout: &Readout, val: Option<Metrics>| {
            (Fly { meta: meta(val, None), readout: readout.clone() }).save(&files.snapshots.join(format!("pass-{pass:04}.fly")))
        };
        let mut log =
            std::fs::OpenOptions::new().create(true).append(true).open(&files.metrics).map_err(|e| Error::io(&files.metrics, e))?;
        match (&start.resume, start.checkpointed) {
            (None, _) => snapshot(0, &start.readout, None)?,
            // A kill between the checkpoint and the snapshot of a pass that keeps one: the snapshot
            // is the checkpoint's fly itself (the pass's own VAL figures, not the best so far).
            (Some(r), Some(fly)) if r.passes.is_power_of_two() && !files.snapshots.join(format!("pass-{:04}.fly", r.passes)).exists() => {
                fly.save(&files.snapshots.join(format!("pass-{:04}.fly", r.passes)))?
            }
            (Some(_), _) => {}
        }
        let options = job.options.clone();
        events(TrainEvent::Stage { text: format!("fitting on {}", options.on.describe()?), fraction: 0.0 });
        let mut in_memory;
        let mut mixed;
        let train_set: &mut dyn crate::train::TrainSet = match (&job.games, &games.cache) {
            (Some(g), Some((gcache, first))) => {
                mixed = crate::stream_fit::Mixed::new(
                    gcache,
                    g.dataset.clone(),
                    *first..*first + g.positions,
                    job.reading,
                    Examples { x: &sets.train_x, targets: &sets.train_t },
                    g.stockfish_share,
                    options.seed,
                )?
                .with_teacher(games.engine_labels.as_ref(), g.teacher)?
                .with_curriculum(
                    &sets.curriculum_x,
                    &sets.curriculum_t,
                    job.curriculum.as_ref().map_or(0.0, |c| c.share),
                )?;
                &mut mixed
            }
            _ => {
                in_memory = crate::train::InMemory::new(&sets.train_x, &sets.train_t, sets.cache.meta.descending, options.seed);
                &mut in_memory
            }
        };
        let (readout, val) = fit_from(
            &start.readout,
            start.resume.as_ref(),
            train_set,
            Examples { x: &sets.val_x, targets: &sets.val_t },
            &options,
            &mut |p, best, state| {
                let recorded = |what: &str, e: &dyn std::fmt::Display| {
                    Error::Invalid(format!("could not record pass {} of the run ({what}): {e}", p.pass))
                };
                // The pass's line, then the checkpoint (on resume the log is cut back to it).
                let line = serde_json::to_string(p).expect("a pass serialises");
                writeln!(log, "{line}").and_then(|_| log.flush()).map_err(|e| recorded(&files.metrics.display().to_string(), &e))?;
                let fly = Fly { meta: meta(Some(p.val), None), readout: best.clone() };
                flychess_fly::fly::Checkpoint { fly, state: state()? }.save(&files.checkpoint)?;
                if p.pass.is_power_of_two() {
                    snapshot(p.pass, best, Some(p.val))?;
                }
                events(TrainEvent::Pass(p.clone()));
                Ok(())
            },
            &|| controls.should_stop(),
        )?;
        if controls.stop.load(Ordering::Relaxed) {
            events(TrainEvent::Stopped);
            return Ok(None);
        }
        let hold = evaluate(&readout, &sets.hold_x, &sets.hold_t);
        let f = Fly { meta: meta(Some(val), Some(hold)), readout };
        let path = flychess_brain::files::DataFolder::at(self.data).flies().join(format!("{}.fly", job.name));
        f.save(&path)?;
        let passes = std::fs::read_to_string(&files.metrics).map(|t| t.lines().filter(|l| !l.trim().is_empty()).count()).unwrap_or(0);
        f.save(&files.snapshots.join(format!("pass-{passes:04}.fly")))?;
        info.hold = Some(hold);
        info.finished = true;
        flychess_brain::files::write_atomically(
            &files.info,
            &serde_json::to_vec_pretty(&info).map_err(|e| Error::Invalid(e.to_string()))?,
        )?;
        let _ = std::fs::remove_file(&files.checkpoint);
        events(TrainEvent::Done { fly: path, hold, val });
        Ok(Some(f))
    }
}

/// Who teaches a run, in words, and the positions each source taught (`FlyMeta::teacher`,
/// `positions_by_teacher`): the shipped rows (Stockfish's scored moves, MultiPV), at scale the
/// games rows by the master's move and/or Stockfish's best move, and the curriculum's
/// `curriculum_rows`.
pub fn teacher_of(
    job: &TrainJob,
    shipped_train_rows: usize,
    curriculum_rows: usize,
) -> (String, std::collections::BTreeMap<String, usize>) {
    let mut by = std::collections::BTreeMap::new();
    let shipped = "Stockfish's scored moves (MultiPV) on the shipped rows";
    let mut words = match &job.games {
        None => {
            by.insert("stockfish_multipv".to_string(), shipped_train_rows);
            shipped.to_string()
        }
        Some(g) => {
            if g.stockfish_share > 0.0 {
                by.insert("stockfish_multipv".to_string(), shipped_train_rows);
            }
            for (source, n) in g.by_teacher() {
                by.insert(source.to_string(), n);
            }
            let value =
                if g.engine_labels.is_some() { "Stockfish's score where labelled, else the game's result" } else { "the game's result" };
            let name = g.dataset.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            format!(
                "{} on {} rows of {name} (value: {value}); {shipped}, {:.0} % of every batch",
                g.teacher.describe(),
                g.positions,
                100.0 * g.stockfish_share
            )
        }
    };
    // The curriculum of finishing (issue 56), when the run mixes it in.
    if let Some(c) = &job.curriculum {
        words.push_str(&format!(
            "; the curriculum of finishing (Stockfish's quickest win) on {curriculum_rows} rows, {:.0} % of every batch",
            100.0 * c.share
        ));
        by.insert("curriculum".to_string(), curriculum_rows);
    }
    (words, by)
}

/// Where a run keeps its snapshots of the readout.
pub fn snapshots_dir(data: &Path, run: &str) -> PathBuf {
    runs_dir(data).join(run).join("snapshots")
}

/// A run's snapshots, oldest first: (pass, file). Pass 0 is the newborn readout.
pub fn snapshots(data: &Path, run: &str) -> Vec<(usize, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(snapshots_dir(data, run)) else { return Vec::new() };
    let mut out: Vec<(usize, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pass = name.strip_prefix("pass-")?.strip_suffix(".fly")?.parse().ok()?;
            Some((pass, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// One run's curves as read from disk (the Train tab and anyone else).
#[derive(Clone, Debug, Default)]
pub struct RunCurves {
    pub name: String,
    pub passes: Vec<PassRecord>,
    pub info: Option<RunInfo>,
}

/// Every run under DATA/runs with its metrics (unreadable lines skipped).
pub fn read_runs(data: &Path) -> Vec<RunCurves> {
    let Ok(entries) = std::fs::read_dir(runs_dir(data)) else { return Vec::new() };
    let mut out: Vec<RunCurves> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let dir = e.path();
            let passes = std::fs::read_to_string(dir.join("metrics.jsonl"))
                .map(|t| t.lines().filter_map(|l| serde_json::from_str::<PassRecord>(l).ok()).collect())
                .unwrap_or_default();
            let info = std::fs::read(dir.join("run.json")).ok().and_then(|b| serde_json::from_slice(&b).ok());
            RunCurves { name: e.file_name().to_string_lossy().into_owned(), passes, info }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One snapshot's answer.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Answer {
    pub pass: usize,
    /// The fly's moves, most likely first: (SAN, probability).
    pub moves: Vec<(String, f32)>,
    pub value: f32,
    /// VAL top-1 and loss of the snapshot, when it was measured (not the newborn).
    pub val: Option<(f64, f64)>,
}

/// `answers` for a brain given by its parts (the command line has no window's brain).
pub fn answers_on(
    brain: &flychess_brain::brain::Brain,
    descending: &[u32],
    checksum: &str,
    data: &std::path::Path,
    run: &str,
    fen: &str,
) -> Result<Vec<Answer>> {
    let pos = flychess_brain::chess::position_from_fen(fen)?;
    let snaps = snapshots(data, run);
    if snaps.is_empty() {
        return Err(Error::Invalid(format!("run {run} kept no snapshots (runs from before snapshots existed do not have them)")));
    }
    let flies: Vec<(usize, flychess_fly::fly::Fly)> =
        snaps.into_iter().map(|(p, path)| Ok((p, flychess_fly::fly::Fly::load(&path)?))).collect::<Result<_>>()?;
    if let Some((_, f)) = flies.iter().find(|(_, f)| f.meta.brain_checksum != checksum) {
        return Err(Error::Invalid(format!("run {run} trained on another brain ({})", f.meta.brain)));
    }
    let steps = flies[0].1.readout.read_steps.clone();
    let features = flychess_fly::readout::think_features(brain, &[flychess_brain::chess::planes(&pos)], descending, &steps).remove(0);
    Ok(flies
        .iter()
        .map(|(pass, f)| {
            let p = flychess_fly::readout::policy(&pos, &f.readout.heads(&features));
            let mut order: Vec<usize> = (0..p.moves.len()).collect();
            order.sort_by(|&a, &b| p.probability[b].total_cmp(&p.probability[a]));
            Answer {
                pass: *pass,
                moves: order.iter().map(|&i| (shakmaty::san::San::from_move(&pos, p.moves[i]).to_string(), p.probability[i])).collect(),
                value: p.value,
                val: f.meta.val.map(|m| (m.top1, m.loss)),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_rows_repeat_a_small_pool_and_spread_over_a_large_one() {
        let targets: Vec<Target> =
            (0..10).map(|k| Target { legal: vec![(k, 0, 0)], share: vec![1.0], best: 0, good: vec![0], value: 0.0 }).collect();
        let x: Vec<f32> = (0..10).map(|k| k as f32).collect();
        let picked = |pool: usize, share: f64, train: usize| -> Vec<f32> {
            repeated_to_share(pool, 1, share, train, |k| (&x[k..k + 1], &targets[k])).0
        };
        // A quarter of 6 TRAIN rows: 2 extra rows; of a pool of 10, spread: rows 0 and 5.
        assert_eq!(picked(10, 0.25, 6), vec![0.0, 5.0]);
        // Half of 8: 8 extra rows of a pool of 3, repeated in turn.
        assert_eq!(picked(3, 0.5, 8), vec![0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 1.0]);
        assert!(picked(0, 0.5, 8).is_empty());
    }
}
