//! `flychess eval --controls-at-scale RUN`: the three controls fitted on exactly the rows and
//! teachers of a finished training run (the fly's own: the shipped Stockfish rows, the games rows,
//! their teachers, the curriculum), so that the fly is compared with them at its own data size
//! (issue 55), not at the shipped 75 k rows a plain `eval` fits its controls on:
//! - the board-linear control: the same readout on the board's 768 planes, no brain;
//! - the blind baseline: no input at all (move popularity);
//! - shuffled wiring: the same brain with its connections handed out again (seed 1), its own DN
//!   cache of every row (the long part: about as long as the fly's own cache took).
//!
//! Each control is an ordinary training run through `flychess::training` (resumable, killed-safe,
//! its passes logged under DATA/runs), named by a hash of the job and what it reads, so a finished
//! control is read back instead of fitted again and a stopped one resumes. Each is measured on
//! HOLD and on the human test, paired against the fly on the same positions.

use std::path::Path;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use flychess::training::{self, Controls, Prepared, RunInfo, TrainJob};
use flychess_sim::brain::simulator::EngineChoice;
use flychess_sim::cache::Sensor;
use flychess_sim::data::{Dataset, HOLD, Row, shipped_path};
use flychess_sim::train::{PositionOutcome, Target, outcomes};

use crate::cli::WhichBrain;
use crate::cli::fly::PlayerRow;

/// One control at the run's size: its run, and its outcomes on HOLD and on the human test.
pub(crate) struct AtScale {
    pub player: String,
    pub run: String,
    pub positions_trained: usize,
    pub hold: Vec<PositionOutcome>,
    pub human: Vec<PositionOutcome>,
}

/// The training job a finished run was made by, read from DATA/runs/RUN/run.json.
fn job_of(data: &Path, run: &str) -> Result<(TrainJob, RunInfo)> {
    let path = training::runs_dir(data).join(run).join("run.json");
    let bytes =
        std::fs::read(&path).map_err(|e| anyhow!("{}: {e} (name a training run of this data folder: `ls DATA/runs`)", path.display()))?;
    let info: RunInfo = serde_json::from_slice(&bytes).map_err(|e| anyhow!("{}: not a run's description: {e}", path.display()))?;
    if !info.finished {
        return Err(anyhow!("run {run} has not finished; finish it first (`flychess train --name {run}` with its options resumes it)"));
    }
    let job = TrainJob {
        name: run.to_string(),
        positions: info.positions,
        reading: info.reading,
        options: info.fit.clone(),
        lessons: info.lessons,
        games: info.games.clone(),
        curriculum: info.curriculum.clone(),
    };
    Ok((job, info))
}

/// A control's run name: what it reads and the job it repeats, hashed.
fn control_name(slug: &str, id: &str, job: &TrainJob) -> String {
    let key = serde_json::json!({ "control": slug, "reads": id, "job": TrainJob { name: String::new(), ..job.clone() } });
    let hash = flychess_sim::files::hex(&Sha256::digest(serde_json::to_vec(&key).expect("plain json")));
    format!("control-{slug}-{}", &hash[..10])
}

/// Fits (or reads back) the three controls (or those in `only`, when it names any) on run `run`'s
/// job and measures them on HOLD and the human test. `brain_checksum` is the fly's brain: the run
/// must be of the same brain.
pub(crate) fn controls_at_scale(
    which: &WhichBrain,
    data: &Path,
    (run, only): (&str, &[String]),
    brain_checksum: &str,
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
    if let Some(bad) = only.iter().find(|c| !CONTROLS.iter().any(|k| k.0 == c.as_str())) {
        let known: Vec<&str> = CONTROLS.iter().map(|k| k.0).collect();
        return Err(anyhow!("--scale-controls {bad}: the controls at scale are {}", known.join(", ")));
    }
    // The brain thinks where `cache` and `train` would (a hardware GPU, else the CPU).
    let engine = EngineChoice::Auto;
    let (job, info) = job_of(data, run)?;
    if info.brain_checksum != brain_checksum {
        return Err(anyhow!(
            "run {run} was trained on brain {} ({}), not on the fly's ({})",
            info.brain,
            info.brain_checksum.get(..12).unwrap_or(&info.brain_checksum),
            brain_checksum.get(..12).unwrap_or(brain_checksum)
        ));
    }
    let shipped = Dataset::load(&shipped_path())?;
    let human_path = flychess_sim::data::human_test_path();
    let controls = Controls::default();
    let bar = ProgressBar::new(1000);
    bar.set_style(ProgressStyle::with_template("[{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    let mut shuffled = which.clone();
    shuffled.shuffle_wiring = Some(1);
    // Each brain is loaded once, when a control first needs it (the board-linear and blind
    // controls share the fly's brain, which only names their caches' neighbours).
    let load = |which: &WhichBrain| -> Result<_> {
        let spec = crate::cli::brain::spec(which, data)?;
        let (loaded, ready) = crate::cli::brain::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?;
        Ok((spec.name(), loaded, ready))
    };
    let (mut plain, mut rewired) = (None, None);
    let mut out = Vec::new();
    for (flag, player, slug, sensor, is_shuffled) in CONTROLS {
        if !only.is_empty() && !only.iter().any(|c| c == flag) {
            continue;
        }
        let slot = if is_shuffled { &mut rewired } else { &mut plain };
        if slot.is_none() {
            *slot = Some(load(if is_shuffled { &shuffled } else { which })?);
        }
        let (spec_name, loaded, ready) = slot.as_ref().expect("loaded above");
        let prepared = Prepared {
            connectome: &loaded.connectome,
            brain: ready,
            checksum: &loaded.checksum,
            spec_name: spec_name.clone(),
            engine,
            sensor,
        };
        let control = TrainJob { name: control_name(slug, prepared.id(), &job), ..job.clone() };
        let rows = format!("run {run}'s rows and teachers; {}", prepared.label());
        let fly = crate::cli::curve::trained_or_read(&prepared, data, &control, &controls, &bar, player, &rows)?;
        // Its readings of HOLD and of the human test, from its own caches (made by the run, or
        // here for the human test).
        let stopped = || anyhow!("stopped");
        let hold_cache = training::cache(&prepared, data, &shipped, HOLD, &controls, &|_| {})?.ok_or_else(stopped)?;
        let hold_x = hold_cache.read(0..HOLD, fly.meta.reading)?;
        let human_cache =
            training::streamed_cache(&prepared, &human_path, data, human_rows.len(), &controls, &|_| {})?.ok_or_else(stopped)?;
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
