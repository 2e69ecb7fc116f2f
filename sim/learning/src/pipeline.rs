//! One training run, the fast way (issue 4), shared by `flychess train` and the Train tab: the
//! frozen brain runs once over the shipped positions (the DN-rate cache, resumable), the blind
//! baseline is fitted for reference, and the readout is fitted pass by pass over the cache. Every
//! pass is appended to DATA/runs/NAME/metrics.jsonl (what the Train tab draws) and the best
//! readout so far is checkpointed, so a run killed mid-way resumes from where it was. The fly is
//! saved to DATA/flies/NAME.fly with its HOLD metrics. A few snapshots of the readout are kept
//! for "watching it learn" (the newborn readout, the best after passes 1, 2, 4, 8, … and the
//! fly at the end, DATA/runs/NAME/snapshots/pass-NNNN.fly). Progress goes to a callback; a run
//! can be paused and stopped through `Controls`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::teacher::{EngineLabels, Teacher};
use crate::train::{FitOptions, Metrics, PassRecord, Target, evaluate, fit, fit_from};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::connectome::Connectome;
use flychess_brain::connectome::download::sha256_file;
use flychess_fly::cache::{Cache, CacheMeta, Reading, Sensor};
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::fly::{self, Fly, FlyMeta};
use flychess_fly::readout::Readout;

/// What to train.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainJob {
    pub name: String,
    /// Rows of the shipped dataset used (HOLD and VAL first, the rest TRAIN).
    pub positions: usize,
    pub reading: Reading,
    pub options: FitOptions,
    /// Share of TRAIN made of finishing lessons (DATA/lessons/labels.jsonl, `flychess lessons`);
    /// 0: none.
    #[serde(default)]
    pub lessons: f64,
    /// Master-move rows from a games dataset streamed beside the shipped TRAIN rows (the fit at
    /// scale); None: the shipped rows alone.
    #[serde(default)]
    pub games: Option<GamesMix>,
    /// The curriculum of finishing mixed into every batch (`train --curriculum SHARE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curriculum: Option<CurriculumMix>,
    /// The fly whose readout the fit starts from (`train --from FLY`) instead of a newborn one;
    /// as always, nothing worse on VAL than the start is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<StartFrom>,
}

/// A finished fly a fit starts from: its file and the sha256 of its bytes, so that a run resumes
/// only from the very fly it started from (a fly saved again under the same name is another start).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StartFrom {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
}

impl StartFrom {
    /// The fly called `name` (`fly::find`: the user's flies, then the shipped ones), keyed by its bytes.
    pub fn named(name: &str, data: &Path) -> Result<StartFrom> {
        let path = flychess_fly::fly::find(name, data)?;
        Ok(StartFrom { name: name.to_string(), sha256: sha256_file(&path)?, path })
    }

    /// Its readout, refused (naming the fly and what differs) when the file changed since the run
    /// was set up, or when it reads another brain, other steps or (with `inputs`, once the cache
    /// says it) another number of neurons. Checked without `inputs` before any cache is made, so
    /// that a fly of another brain is refused at once, not after minutes of thinking.
    pub fn readout(&self, brain_checksum: &str, steps: &[usize], inputs: Option<usize>) -> Result<Readout> {
        if sha256_file(&self.path)? != self.sha256 {
            return Err(Error::Invalid(format!("{}: the fly {:?} changed since the run started from it", self.path.display(), self.name)));
        }
        let fly = Fly::load(&self.path)?;
        let problem = if fly.meta.brain_checksum != brain_checksum {
            Some(format!("it was fitted on another brain ({}, this one is {brain_checksum})", fly.meta.brain_checksum))
        } else if fly.readout.read_steps != steps {
            Some(format!("it reads steps {:?}, the run {:?}", fly.readout.read_steps, steps))
        } else if let Some(inputs) = inputs.filter(|&n| n != fly.readout.inputs) {
            Some(format!("it reads {} neurons, the cache has {inputs}", fly.readout.inputs))
        } else {
            None
        };
        match problem {
            Some(p) => Err(Error::Invalid(format!("cannot start from the fly {:?}: {p}", self.name))),
            None => Ok(fly.readout),
        }
    }
}

/// The curriculum of finishing in a run (`flychess data curriculum`, `flychess::finishing`): the
/// TRAIN rows of the curriculum dataset at `dataset` (never its held-out HOLD), each taught the
/// quickest win (`Target::lesson`), making `share` of every batch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CurriculumMix {
    pub dataset: PathBuf,
    pub share: f64,
    /// More curricula whose TRAIN rows join the first's (e.g. lessons from a fly's own games,
    /// `data curriculum --own-games`), all of them together making `share` of every batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<PathBuf>,
}

impl CurriculumMix {
    /// Every curriculum dataset of the mix, the first one first.
    pub fn datasets(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.dataset).chain(&self.more)
    }
}

/// The master-move part of a run (`flychess data games`): TRAIN rows of the dataset at
/// `dataset`, their DN readings cached like the shipped rows' and read a block at a time
/// (`crate::stream_fit`), with `stockfish_share` of every batch drawn from the shipped
/// Stockfish-labelled TRAIN rows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GamesMix {
    pub dataset: PathBuf,
    pub positions: usize,
    pub stockfish_share: f64,
    /// Stockfish's moves for the dataset's TRAIN rows (issue 55); None: the master's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_labels: Option<LabelsUsed>,
    /// Who teaches the dataset's rows (the master's move by default, as before issue 55).
    #[serde(default)]
    pub teacher: Teacher,
}

/// The engine labels a run uses: their folder and how many of its lines, fixed when the run
/// starts (the labelling job may go on writing; a resumed run reads the same lines).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LabelsUsed {
    pub dir: PathBuf,
    pub rows: usize,
    /// The sha256 of those lines (`teacher::lines_sha256`): a resumed run checks it reads the very
    /// lines it started with. Absent in the runs of before (they resume as they did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

impl GamesMix {
    /// The master's moves alone (every run before issue 55).
    pub fn master(dataset: PathBuf, positions: usize, stockfish_share: f64) -> GamesMix {
        GamesMix { dataset, positions, stockfish_share, engine_labels: None, teacher: Teacher::default() }
    }

    /// `positions` TRAIN rows of `dataset` taught by `teacher` (`Teacher::parse`'s words; default:
    /// Stockfish where `labels` is given, else the master), with the engine labels in `labels`.
    /// A teacher without the master takes only the labelled rows (`positions` shrinks to them).
    pub fn taught(
        dataset: PathBuf,
        positions: usize,
        stockfish_share: f64,
        labels: Option<PathBuf>,
        teacher: Option<&str>,
    ) -> Result<GamesMix> {
        let teacher = match (teacher, &labels) {
            (Some(t), _) => Teacher::parse(t)?,
            (None, Some(_)) => Teacher::parse("engine")?,
            (None, None) => Teacher::default(),
        };
        let Some(dir) = labels else {
            if teacher.engine > 0.0 {
                return Err(Error::Invalid(
                    "a teacher with Stockfish's moves needs them: --engine-labels DIR (`flychess data label --dataset`)".into(),
                ));
            }
            return Ok(GamesMix::master(dataset, positions, stockfish_share));
        };
        // The same folder and dataset however they are written (relative one time, absolute the
        // next): a run is keyed by what it reads.
        let dir = std::fs::canonicalize(&dir).map_err(|e| Error::io(&dir, e))?;
        let dataset = std::fs::canonicalize(&dataset).map_err(|e| Error::io(&dataset, e))?;
        let labels = read_engine_labels(&dataset, &dir, positions)?;
        if teacher.every_move && labels.every.is_none() {
            return Err(Error::Invalid(format!(
                "{}: these labels hold Stockfish's best move alone; `--teacher every-move` needs labels of `flychess data label --every-move`",
                dir.display()
            )));
        }
        let rows = labels.labels.len();
        let sha256 = crate::teacher::lines_sha256(&dir.join("labels.jsonl"), rows)?;
        let positions = if teacher.engine_only() { positions.min(rows) } else { positions };
        Ok(GamesMix { dataset, positions, stockfish_share, engine_labels: Some(LabelsUsed { dir, rows, sha256 }), teacher })
    }

    /// Positions of the dataset taught by the master's move and by Stockfish's.
    pub fn by_teacher(&self) -> Vec<(&'static str, usize)> {
        let labelled = self.engine_labels.as_ref().map_or(0, |l| l.rows.min(self.positions));
        let mut by = Vec::new();
        if self.teacher.master > 0.0 {
            by.push(("master", self.positions));
        }
        if self.teacher.engine > 0.0 {
            by.push((self.teacher.engine_source(), labelled));
        }
        by
    }
}

/// The first `most` engine labels in `dir` for the TRAIN rows of the dataset at `dataset`:
/// refused when they are another dataset's (by content hash) or do not start at its first TRAIN row.
pub fn read_engine_labels(dataset: &Path, dir: &Path, most: usize) -> Result<EngineLabels> {
    let stream = Dataset::stream(dataset)?;
    let first = stream.meta.hold + stream.meta.val;
    let sha = stream.content_hash()?;
    let labels = EngineLabels::read(dir, &sha, most)?;
    if labels.first_row != first {
        return Err(Error::Invalid(format!(
            "{}: the labels start at row {}, the TRAIN rows of {} at {first}",
            dir.display(),
            labels.first_row,
            dataset.display()
        )));
    }
    if labels.labels.is_empty() {
        return Err(Error::Invalid(format!("{}: no whole line of labels yet", dir.display())));
    }
    Ok(labels)
}

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

/// A killed run whose labels folder has grown since it started (the labelling job went on) is
/// asked again with more lines than it started with: it takes the games mix it started with, when
/// the two differ only in how many lines of the same labels folder they read and the folder still
/// begins with those very lines (by their sha256). Lines that have changed are refused, saying so
/// (the run would otherwise start again and lose its passes). (the job, what was kept in words.)
fn labels_kept_from(job: &TrainJob, previous: Option<&RunInfo>) -> Result<(TrainJob, Option<String>)> {
    let unchanged = || Ok((job.clone(), None));
    let (Some(then), Some(now)) = (previous.filter(|p| !p.finished).and_then(|p| p.games.as_ref()), job.games.as_ref()) else {
        return unchanged();
    };
    let (Some(l_then), Some(l_now)) = (&then.engine_labels, &now.engine_labels) else { return unchanged() };
    let same_source = l_then.dir == l_now.dir
        && then.dataset == now.dataset
        && then.teacher == now.teacher
        && then.stockfish_share == now.stockfish_share;
    if then == now || !same_source || l_then.rows == l_now.rows {
        return unchanged();
    }
    let Some(sha) = &l_then.sha256 else { return unchanged() };
    let path = l_then.dir.join("labels.jsonl");
    if crate::teacher::lines_sha256(&path, l_then.rows)?.as_ref() != Some(sha) {
        return Err(Error::Invalid(format!(
            "{}: the first {} lines, which the killed run {} started on, are not the lines it read (the labels were changed or cut); \
             it cannot resume on them: put those labels back, or train under another name",
            path.display(),
            l_then.rows,
            job.name
        )));
    }
    let mut kept = job.clone();
    kept.games = Some(then.clone());
    let words = format!(
        "the {} lines of labels it started on (the folder has {} now; a new run under another name reads them all)",
        l_then.rows, l_now.rows
    );
    Ok((kept, Some(words)))
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
    events(TrainEvent::Stage { text: "opening the DN-rate cache".into(), fraction: 0.0 });
    let Some(cache) = cache(prepared, data, &dataset, n, controls, events)? else {
        events(TrainEvent::Stopped);
        return Ok(None);
    };
    let rows = &dataset.rows[..n];
    let (val_rows, train_rows) = (&rows[HOLD..HOLD + VAL], &rows[HOLD + VAL..]);
    events(TrainEvent::Stage {
        text: format!("targets for {} TRAIN and {} VAL positions", train_rows.len(), val_rows.len()),
        fraction: 0.0,
    });
    let (train_t, val_t, hold_t) = (targets(train_rows)?, targets(val_rows)?, targets(&rows[..HOLD])?);
    let mut train_x = cache.read(HOLD + VAL..n, job.reading)?;
    let mut train_t = train_t;
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
        let Some(cc) = self::cache(prepared, data, &d, d.rows.len(), controls, events)? else {
            events(TrainEvent::Stopped);
            return Ok(None);
        };
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
    // The games part: its cache filled as far as the run asks (TRAIN rows come after its human
    // test and VAL).
    let (games_cache, games_source) = match &job.games {
        Some(g) => {
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
            events(TrainEvent::Stage { text: format!("opening the DN-rate cache of {}", g.dataset.display()), fraction: 0.0 });
            let Some(c) = streamed_cache(prepared, &g.dataset, data, first + g.positions, controls, events)? else {
                events(TrainEvent::Stopped);
                return Ok(None);
            };
            (Some((c, first)), source)
        }
        None => (None, String::new()),
    };
    // Stockfish's moves for the games rows: the very lines the run was set up with.
    let engine_labels = match job.games.as_ref().and_then(|g| g.engine_labels.as_ref().map(|l| (g, l))) {
        Some((g, used)) => {
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
    let (teacher_words, by_teacher) = teacher_of(job, train_rows.len(), curriculum_t.len());

    let dir = runs_dir(data).join(&job.name);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let info_path = dir.join("run.json");
    let checkpoint = dir.join("checkpoint.fit");
    let metrics_path = dir.join("metrics.jsonl");
    let previous: Option<RunInfo> = std::fs::read(&info_path).ok().and_then(|b| serde_json::from_slice(&b).ok());
    let resumable = previous.as_ref().is_some_and(|p| {
        !p.finished
            && p.brain_checksum == prepared.id()
            && p.positions == n
            && p.reading == job.reading
            && p.fit == job.options
            && p.lessons == job.lessons
            && p.games == job.games
            && p.curriculum == job.curriculum
            && p.from == job.from
    });
    let steps = job.reading.steps();
    let snapshots = snapshots_dir(data, &job.name);
    if !resumable {
        let _ = std::fs::remove_dir_all(&snapshots);
    }
    // The checkpoint holds the best readout and the fit's state after its last pass; the pass
    // log is cut back to that pass (a pass logged after it, its checkpoint lost to a kill, is made
    // again, the same way).
    let (start, resume, checkpointed) = match (resumable, flychess_fly::fly::Checkpoint::load(&checkpoint)) {
        (true, Ok(c)) => {
            let passes = c.state.passes;
            let log = std::fs::read_to_string(&metrics_path).unwrap_or_default();
            let kept: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).take(passes).collect();
            if kept.len() < passes {
                return Err(Error::Invalid(format!(
                    "{}: the pass log has {} passes, the checkpoint {passes}",
                    metrics_path.display(),
                    kept.len()
                )));
            }
            flychess_brain::files::write_atomically(&metrics_path, kept.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes())?;
            events(TrainEvent::Stage { text: format!("resuming after pass {passes}"), fraction: 0.0 });
            events(TrainEvent::Resumed {
                passes,
                why: resumed_on.clone().unwrap_or_else(|| "the same rows, teachers and settings".into()),
            });
            (c.fly.readout.clone(), Some(c.state), Some(c.fly))
        }
        _ => {
            let _ = std::fs::remove_file(&metrics_path);
            let start = match &job.from {
                Some(f) => f.readout(prepared.id(), &steps, Some(cache.meta.descending))?,
                None => Readout::newborn(cache.meta.descending, steps, 1),
            };
            (start, None, None)
        }
    };
    // The blind baseline: the same fit with no input at all.
    events(TrainEvent::Stage { text: "fitting the blind baseline (no brain, move popularity only)".into(), fraction: 0.0 });
    let blind = match previous.as_ref().filter(|_| resumable).and_then(|p| p.blind) {
        Some(b) => b,
        None => fit(&Readout::newborn(0, vec![], 1), &[], &train_t, &[], &val_t, &job.options, &mut |_, _| {}, &|| false)?.1,
    };
    let mut info = RunInfo {
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
        blind: Some(blind),
        hold: None,
        finished: false,
    };
    flychess_brain::files::write_atomically(&info_path, &serde_json::to_vec_pretty(&info).map_err(|e| Error::Invalid(e.to_string()))?)?;
    let mut log = std::fs::OpenOptions::new().create(true).append(true).open(&metrics_path).map_err(|e| Error::io(&metrics_path, e))?;
    let meta = |readout_val: Option<Metrics>, hold: Option<Metrics>| FlyMeta {
        name: job.name.clone(),
        kind: prepared.sensor.fly_kind().into(),
        brain: prepared.label(),
        brain_checksum: prepared.id().to_string(),
        homeostasis: cache.meta.homeostasis.clone(),
        reading: job.reading,
        data: match &job.games {
            Some(g) => format!("{}; and {} positions of {}", dataset.meta.source, g.positions, games_source),
            None => dataset.meta.source.clone(),
        } + &job
            .from
            .as_ref()
            .map(|f| format!("; continued from the fly {} (sha256 {})", f.name, &f.sha256[..16]))
            .unwrap_or_default(),
        train_positions: train_rows.len() + job.games.as_ref().map_or(0, |g| g.positions) + curriculum_t.len(),
        val: readout_val,
        hold,
        created: fly::today(),
        teacher: Some(teacher_words.clone()),
        positions_by_teacher: Some(by_teacher.clone()),
    };
    let snapshot = |pass: usize, readout: &Readout, val: Option<Metrics>| {
        (Fly { meta: meta(val, None), readout: readout.clone() }).save(&snapshots.join(format!("pass-{pass:04}.fly")))
    };
    match (&resume, checkpointed) {
        (None, _) => snapshot(0, &start, None)?,
        // A kill between the checkpoint and the snapshot of a pass that keeps one: the snapshot
        // is the checkpoint's fly itself (the pass's own VAL figures, not the best so far).
        (Some(r), Some(fly)) if r.passes.is_power_of_two() && !snapshots.join(format!("pass-{:04}.fly", r.passes)).exists() => {
            fly.save(&snapshots.join(format!("pass-{:04}.fly", r.passes)))?
        }
        (Some(_), _) => {}
    }
    let options = job.options.clone();
    events(TrainEvent::Stage { text: format!("fitting on {}", options.on.describe()?), fraction: 0.0 });
    let mut in_memory;
    let mut mixed;
    let train_set: &mut dyn crate::train::TrainSet = match (&job.games, &games_cache) {
        (Some(g), Some((gcache, first))) => {
            mixed = crate::stream_fit::Mixed::new(
                gcache,
                g.dataset.clone(),
                *first..*first + g.positions,
                job.reading,
                &train_x,
                &train_t,
                g.stockfish_share,
                options.seed,
            )?
            .with_teacher(engine_labels.as_ref(), g.teacher)?
            .with_curriculum(&curriculum_x, &curriculum_t, job.curriculum.as_ref().map_or(0.0, |c| c.share))?;
            &mut mixed
        }
        _ => {
            in_memory = crate::train::InMemory::new(&train_x, &train_t, cache.meta.descending, options.seed);
            &mut in_memory
        }
    };
    let (readout, val) = fit_from(
        &start,
        resume.as_ref(),
        train_set,
        &val_x,
        &val_t,
        &options,
        &mut |p, best, state| {
            let recorded = |what: &str, e: &dyn std::fmt::Display| {
                Error::Invalid(format!("could not record pass {} of the run ({what}): {e}", p.pass))
            };
            // The pass's line, then the checkpoint (on resume the log is cut back to it).
            let line = serde_json::to_string(p).expect("a pass serialises");
            writeln!(log, "{line}").and_then(|_| log.flush()).map_err(|e| recorded(&metrics_path.display().to_string(), &e))?;
            let fly = Fly { meta: meta(Some(p.val), None), readout: best.clone() };
            flychess_fly::fly::Checkpoint { fly, state: state()? }.save(&checkpoint)?;
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
    let hold = evaluate(&readout, &hold_x, &hold_t);
    let f = Fly { meta: meta(Some(val), Some(hold)), readout };
    let path = flychess_brain::files::DataFolder::at(data).flies().join(format!("{}.fly", job.name));
    f.save(&path)?;
    let passes = std::fs::read_to_string(&metrics_path).map(|t| t.lines().filter(|l| !l.trim().is_empty()).count()).unwrap_or(0);
    f.save(&snapshots.join(format!("pass-{passes:04}.fly")))?;
    info.hold = Some(hold);
    info.finished = true;
    flychess_brain::files::write_atomically(&info_path, &serde_json::to_vec_pretty(&info).map_err(|e| Error::Invalid(e.to_string()))?)?;
    let _ = std::fs::remove_file(&checkpoint);
    events(TrainEvent::Done { fly: path, hold, val });
    Ok(Some(f))
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
    use flychess_fly::cache::Reading;

    /// Issue 68: a killed run whose labels folder has grown since (the labelling job went on)
    /// resumes on the lines it started with instead of starting again; labels whose first lines
    /// changed are refused, naming the file; an old run without the lines' hash is left as it was.
    #[test]
    fn a_run_resumes_on_the_labels_it_started_with_when_the_folder_has_grown() {
        let dir = tempfile::tempdir().unwrap();
        let labels = dir.path().join("labels.jsonl");
        let lines: Vec<String> = (0..5).map(|i| format!("{{\"i\":{i}}}\n")).collect();
        std::fs::write(&labels, lines[..3].concat()).unwrap();
        let mix = |rows: usize| GamesMix {
            dataset: dir.path().join("g.flyd"),
            positions: rows,
            stockfish_share: 0.25,
            engine_labels: Some(LabelsUsed {
                dir: dir.path().to_path_buf(),
                rows,
                sha256: crate::teacher::lines_sha256(&labels, rows).unwrap(),
            }),
            teacher: Teacher::parse("engine").unwrap(),
        };
        let job = |games: GamesMix| TrainJob {
            name: "grown".into(),
            positions: 7000,
            reading: Reading::Mean9To12,
            options: FitOptions::default(),
            lessons: 0.0,
            games: Some(games),
            curriculum: None,
            from: None,
        };
        let started = job(mix(3));
        let run = RunInfo {
            name: "grown".into(),
            brain: "b".into(),
            brain_checksum: "c".into(),
            positions: 7000,
            reading: Reading::Mean9To12,
            fit: FitOptions::default(),
            lessons: 0.0,
            games: started.games.clone(),
            curriculum: None,
            from: None,
            blind: None,
            hold: None,
            finished: false,
        };
        // The labelling job wrote two more lines; the run is asked again.
        std::fs::write(&labels, lines.concat()).unwrap();
        let again = job(mix(5));
        let (kept, words) = labels_kept_from(&again, Some(&run)).unwrap();
        assert_eq!(kept.games, started.games, "the lines it started with");
        assert!(words.unwrap().contains("the 3 lines"));
        // A finished run, or the same lines, change nothing.
        assert_eq!(labels_kept_from(&again, Some(&RunInfo { finished: true, ..run.clone() })).unwrap().0.games, again.games);
        assert_eq!(labels_kept_from(&started, Some(&run)).unwrap().1, None);
        // The first lines changed under it: refused, naming the file.
        std::fs::write(&labels, "{\"i\":9}\n".to_string() + &lines[1..].concat()).unwrap();
        let e = labels_kept_from(&again, Some(&run)).unwrap_err().to_string();
        assert!(e.contains("labels.jsonl") && e.contains("cannot resume"), "{e}");
        // A run of before the lines' hash: as before (no claim about lines it cannot check).
        let mut old = run.clone();
        old.games.as_mut().unwrap().engine_labels.as_mut().unwrap().sha256 = None;
        assert_eq!(labels_kept_from(&again, Some(&old)).unwrap().0.games, again.games);
    }

    fn save(data: &Path, name: &str, checksum: &str, steps: Vec<usize>, inputs: usize) {
        let flies = flychess_brain::files::DataFolder::at(data).flies();
        std::fs::create_dir_all(&flies).unwrap();
        let meta = FlyMeta {
            name: name.into(),
            kind: "trained".into(),
            brain: "b".into(),
            brain_checksum: checksum.into(),
            homeostasis: "h".into(),
            reading: Reading::Mean9To12,
            data: "d".into(),
            train_positions: 1,
            val: None,
            hold: None,
            created: "2026-12-06".into(),
            teacher: None,
            positions_by_teacher: None,
        };
        Fly { meta, readout: Readout::newborn(inputs, steps, 7) }.save(&flies.join(format!("{name}.fly"))).unwrap();
    }

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

    #[test]
    fn a_fit_starts_only_from_the_very_fly_it_was_set_up_with_of_the_same_brain_steps_and_width() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let steps: Vec<usize> = (8..12).collect();
        save(data, "mine", "brain-a", steps.clone(), 5);
        let from = StartFrom::named("mine", data).unwrap();
        let r = from.readout("brain-a", &steps, Some(5)).unwrap();
        assert_eq!(from.readout("brain-a", &steps, None).unwrap(), r);
        assert_eq!(r, Fly::load(&from.path).unwrap().readout);
        // Another brain, other steps, another width: refused, naming the fly and what differs.
        let e = from.readout("brain-b", &steps, None).unwrap_err().to_string();
        assert!(e.contains("\"mine\"") && e.contains("another brain"), "{e}");
        assert!(from.readout("brain-a", &[11], None).unwrap_err().to_string().contains("steps"));
        assert!(from.readout("brain-a", &steps, Some(6)).unwrap_err().to_string().contains("neurons"));
        // The same name saved again is another fly: a run set up with the old one refuses it.
        save(data, "mine", "brain-a", steps.clone(), 4);
        let e = from.readout("brain-a", &steps, Some(5)).unwrap_err().to_string();
        assert!(e.contains("changed"), "{e}");
        assert_ne!(StartFrom::named("mine", data).unwrap().sha256, from.sha256);
        assert!(StartFrom::named("nobody", data).is_err());
    }
}
