//! `flychess eval --controls-at-scale RUN`: the three controls fitted on exactly the rows and
//! teachers of a finished training run (the fly's own: the shipped Stockfish rows, the games rows,
//! their teachers, the curriculum), so that the fly is compared with them at its own data size
//! (issue 55), not at the shipped 75 k rows a plain `eval` fits its controls on:
//! - the board-linear control: the same readout on the board's 768 planes, no brain;
//! - the blind baseline: no input at all (move popularity);
//! - shuffled wiring: the same brain with its connections handed out again (seed 1, or another
//!   shuffle with `--scale-controls shuffled-wiring:N`), its own DN cache of every row (the long
//!   part: about as long as the fly's own cache took).
//!
//! Each control is an ordinary training run through `flychess_learning::pipeline` (resumable,
//! killed-safe, its passes logged under DATA/runs), named by a hash of the job and what it reads,
//! so a finished control is read back instead of fitted again and a stopped one resumes. Each is measured on
//! HOLD and on the human test, paired against the fly on the same positions.

use std::path::Path;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use flychess_brain::brain::simulator::EngineChoice;
use flychess_fly::cache::Sensor;
use flychess_fly::data::{Dataset, HOLD, Row, shipped_path};
use flychess_fly::fly::FlyMeta;
use flychess_fly::scoring::{PositionOutcome, Target, outcomes};
use flychess_learning::pipeline::{self, Controls, Prepared, Reads, RunInfo, TrainJob, reads_differ};

use super::eval::PlayerRow;
use crate::cli::options::WhichBrain;

/// One control at the run's size: its run, and its outcomes on HOLD and on the human test.
pub(crate) struct AtScale {
    pub player: String,
    pub run: String,
    pub positions_trained: usize,
    pub hold: Vec<PositionOutcome>,
    pub human: Vec<PositionOutcome>,
}

/// The training job a finished run was made by, read from DATA/runs/RUN/run.json, with what it
/// reads now by content (`TrainJob::reads`): refused when the files have changed since the run
/// read them (the controls would be fitted on rows the fly never saw).
fn job_of(data: &Path, run: &str) -> Result<(TrainJob, RunInfo, Reads)> {
    let path = pipeline::runs_dir(data).join(run).join("run.json");
    let bytes =
        std::fs::read(&path).map_err(|e| anyhow!("{}: {e} (name a training run of this data folder: `ls DATA/runs`)", path.display()))?;
    let info: RunInfo = serde_json::from_slice(&bytes).map_err(|e| anyhow!("{}: not a run's description: {e}", path.display()))?;
    if !info.finished {
        return Err(anyhow!("run {run} has not finished; finish it first (`flychess train --name {run}` with its options resumes it)"));
    }
    if let Some(f) = &info.from {
        return Err(anyhow!(
            "run {run} continued from the fly {:?}: controls on its rows alone would not be the same recipe; measure them on the run that made {:?}",
            f.name,
            f.name
        ));
    }
    let job = TrainJob {
        name: run.to_string(),
        positions: info.positions,
        reading: info.reading,
        options: info.fit.clone(),
        lessons: info.lessons,
        games: info.games.clone(),
        curriculum: info.curriculum.clone(),
        from: None,
    };
    let reads = job.reads(data)?;
    match &info.reads {
        Some(then) => {
            if let Some(why) = reads_differ(then, &reads) {
                return Err(anyhow!(
                    "run {run} was fitted on other rows than its files hold now ({why}): controls fitted on them would not be the fly's; put those files back"
                ));
            }
        }
        None => eprintln!(
            "run {run} was fitted before runs recorded what they read: its files are taken as they are now (sha256 of each in the controls' names)"
        ),
    }
    Ok((job, info, reads))
}

/// Refuses a fly that is not the run's: the run records the fly it saved by its HOLD figures (to
/// the last digit) and its brain; a renamed fly keeps them, another fit does not.
fn check_fly_is_runs(run: &str, info: &RunInfo, fly: &FlyMeta) -> Result<()> {
    let problem = if info.brain_checksum != fly.brain_checksum {
        Some(format!(
            "run {run} was trained on brain {} ({}), not on the fly's ({})",
            info.brain,
            info.brain_checksum.get(..12).unwrap_or(&info.brain_checksum),
            fly.brain_checksum.get(..12).unwrap_or(&fly.brain_checksum)
        ))
    } else if info.hold.is_none() || info.hold != fly.hold || info.reading != fly.reading || !taught_as_run(info, fly) {
        Some(format!(
            "the fly {:?} was not fitted by run {run} (its HOLD figures and reading are not the run's): the controls at scale are fitted on a run's rows to stand beside that run's fly; name the run that made it",
            fly.name
        ))
    } else {
        None
    };
    problem.map_or(Ok(()), |p| Err(anyhow!(p)))
}

/// The fly's own count of positions by teacher agrees with the run's games rows (a fly fitted on
/// other rows or by another teacher says so in `positions_by_teacher`).
fn taught_as_run(info: &RunInfo, fly: &FlyMeta) -> bool {
    let Some(games) = &info.games else { return true };
    let Some(by) = &fly.positions_by_teacher else { return false };
    games.by_teacher().iter().all(|(source, n)| by.get(*source) == Some(n))
        && by.keys().all(|k| k == "stockfish_multipv" || k == "curriculum" || games.by_teacher().iter().any(|(s, _)| s == k))
}

/// A control's run name: what it reads (its sensor's id, and the content of the rows' files) and
/// the job it repeats, hashed: rows that change make another control, never a reused one.
fn control_name(slug: &str, id: &str, job: &TrainJob, files: &Reads) -> String {
    let key = serde_json::json!({ "control": slug, "reads": id, "job": TrainJob { name: String::new(), ..job.clone() }, "files": files });
    let hash = flychess_brain::files::hex(&Sha256::digest(serde_json::to_vec(&key).expect("plain json")));
    format!("control-{slug}-{}", &hash[..10])
}

/// Fits (or reads back) the three controls (or those in `only`, when it names any) on run `run`'s
/// job and measures them on HOLD and the human test. `fly` must be the run's own (its brain and
/// HOLD figures are the run's).
pub(crate) fn controls_at_scale(
    which: &WhichBrain,
    data: &Path,
    (run, only): (&str, &[String]),
    fly: &FlyMeta,
    hold_t: &[Target],
    human_rows: &[Row],
    human_t: &[Target],
) -> Result<Vec<AtScale>> {
    // Each control: its name for --scale-controls, its row in the tables, its run names' prefix,
    // what it reads, and whether it reads the shuffled brain.
    const CONTROLS: [(&str, &str, &str, Sensor, bool); 3] = [
        ("board-linear", "board-linear at scale", "board", Sensor::BoardPlanes, false),
        ("blind", "blind at scale", "blind", Sensor::Blind, false),
        ("shuffled-wiring", "shuffled wiring at scale", "shuffled", Sensor::Brain, true),
    ];
    // The controls asked for, each with its shuffle's seed (`shuffled-wiring` is seed 1,
    // `shuffled-wiring:N` another shuffle); none asked for: the three, seed 1.
    let mut wanted: Vec<(usize, u64)> = Vec::new();
    for c in only {
        let (name, seed) = match c.split_once(':') {
            Some((name, seed)) => {
                let seed = seed.parse::<u64>().ok().filter(|s| *s >= 1 && name == "shuffled-wiring").ok_or_else(|| {
                    anyhow!("--scale-controls {c}: only shuffled-wiring takes a seed, a whole number from 1 (shuffled-wiring:2)")
                })?;
                (name, seed)
            }
            None => (c.as_str(), 1),
        };
        let Some(k) = CONTROLS.iter().position(|k| k.0 == name) else {
            let known: Vec<&str> = CONTROLS.iter().map(|k| k.0).collect();
            return Err(anyhow!(
                "--scale-controls {c}: the controls at scale are {} (shuffled-wiring:N for another shuffle)",
                known.join(", ")
            ));
        };
        if !wanted.contains(&(k, seed)) {
            wanted.push((k, seed));
        }
    }
    if wanted.is_empty() {
        wanted = (0..CONTROLS.len()).map(|k| (k, 1)).collect();
    }
    // The brain thinks where `cache` and `train` would (a hardware GPU, else the CPU).
    let engine = EngineChoice::Auto;
    let (job, info, files) = job_of(data, run)?;
    check_fly_is_runs(run, &info, fly)?;
    let shipped = Dataset::load(&shipped_path())?;
    let human_path = flychess_fly::data::human_test_path();
    let controls = Controls::default();
    let bar = ProgressBar::new(1000);
    bar.set_style(ProgressStyle::with_template("[{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    // Each brain is loaded once, when a control first needs it (the board-linear and blind
    // controls share the fly's brain, which only names their caches' neighbours; each shuffle is
    // a brain of its own, keyed by its seed; 0: the fly's).
    let load = |which: &WhichBrain| -> Result<_> {
        let spec = which.spec(data)?;
        let (loaded, ready) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
        Ok((spec.name(), loaded, ready))
    };
    let mut brains = std::collections::BTreeMap::new();
    let mut out = Vec::new();
    for (k, seed) in wanted {
        let (_, player, slug, sensor, is_shuffled) = CONTROLS[k];
        let key = if is_shuffled { seed } else { 0 };
        if let std::collections::btree_map::Entry::Vacant(slot) = brains.entry(key) {
            let mut brain = which.clone();
            if is_shuffled {
                brain.shuffle_wiring = Some(seed);
            }
            slot.insert(load(&brain)?);
        }
        // Seed 1 keeps the name every report has used; another shuffle says its seed.
        let player = if is_shuffled && seed != 1 { format!("shuffled wiring (seed {seed}) at scale") } else { player.to_string() };
        let player = player.as_str();
        let (spec_name, loaded, ready) = &brains[&key];
        let prepared = Prepared {
            connectome: &loaded.connectome,
            brain: ready,
            checksum: &loaded.checksum,
            spec_name: spec_name.clone(),
            engine,
            sensor,
        };
        let control = TrainJob { name: control_name(slug, prepared.id(), &job, &files), ..job.clone() };
        let rows = format!("run {run}'s rows and teachers; {}", prepared.label());
        let fly = super::curve::trained_or_read(&prepared, data, &control, &controls, &bar, player, &rows)?;
        // Its readings of HOLD and of the human test, from its own caches (made by the run, or
        // here for the human test).
        let stopped = || anyhow!("stopped");
        let hold_cache = pipeline::cache(&prepared, data, &shipped, HOLD, &controls, &|_| {})?.ok_or_else(stopped)?;
        let hold_x = hold_cache.read(0..HOLD, fly.meta.reading)?;
        let human_cache =
            pipeline::streamed_cache(&prepared, &human_path, data, human_rows.len(), &controls, &|_| {})?.ok_or_else(stopped)?;
        let human_x = human_cache.read(0..human_rows.len(), fly.meta.reading)?;
        out.push(AtScale {
            player: player.to_string(),
            run: control.name.clone(),
            positions_trained: fly.meta.train_positions,
            hold: outcomes(&fly.readout, &hold_x, hold_t),
            human: outcomes(&fly.readout, &human_x, human_t),
        });
    }
    bar.finish_and_clear();
    Ok(out)
}

/// The report's `controls_at_scale`: each control beside the fly, with paired differences.
pub(crate) fn report(run: &str, fly_hold: &[PositionOutcome], fly_human: &[PositionOutcome], at: &[AtScale]) -> serde_json::Value {
    let players: Vec<serde_json::Value> = at
        .iter()
        .map(|c| {
            let mut row = PlayerRow::of(&c.player, &c.hold, fly_hold).json();
            row["human"] = PlayerRow::of(&c.player, &c.human, fly_human).json();
            row["run"] = serde_json::json!(c.run);
            row["positions_trained"] = serde_json::json!(c.positions_trained);
            row
        })
        .collect();
    serde_json::json!({ "run": run, "players": players })
}
