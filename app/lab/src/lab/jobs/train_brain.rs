//! The work behind the Train tab's brain runs (`ui::train_brain`): the brain itself learns as well
//! as the readout (`sim::bptt::run`, the run `flychess train --brain` makes), then its readout-only
//! control on the same positions, on a thread the lab starts; and every brain run's curves read
//! back from the data folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use flychess_learning::bptt::Base;
use flychess_learning::bptt::run::{self, RunOptions, Setup};
pub use flychess_learning::bptt::run::{BrainOptimizer, Leash, Point};

use crate::lab::{ReadyBrain, Wake};

/// What a brain run says while it runs, and its end (a summary, or the error).
pub enum Msg {
    Stage(String),
    Positions(usize, usize),
}

/// What to run: the run's name, its positions, the leash, and the flags that stop and pause it.
pub struct Ask {
    pub name: String,
    pub positions: usize,
    pub leash: Leash,
    pub stop: Arc<AtomicBool>,
    pub pause: Arc<AtomicBool>,
}

/// One run's curves: the brain's and its control's.
pub struct BrainCurves {
    pub name: String,
    pub brain: Vec<Point>,
    pub readout_only: Vec<Point>,
}

/// Starts a brain run on a thread of its own.
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, ask: Ask) -> super::Talk<Msg, String> {
    let died = "the training thread stopped unexpectedly; its checkpoint keeps it: start again with the same name to go on";
    super::Talk::start(wake, "brain training", died, move |send| train(&ready, &data, &ask, send))
}

/// Every brain run's curves in the data folder (runs with a brain.jsonl), by name.
pub fn read_curves(data: &Path) -> Vec<BrainCurves> {
    let mut curves = Vec::new();
    if let Ok(entries) = std::fs::read_dir(flychess_brain::files::DataFolder::at(data).runs()) {
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.join("brain.jsonl").exists()).collect();
        dirs.sort();
        for d in dirs {
            let name = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            curves.push(BrainCurves {
                name,
                brain: run::read_curve(&d.join("brain")),
                readout_only: run::read_curve(&d.join("readout-only")),
            });
        }
    }
    curves
}

/// The run's body: the brain (with the homeostasis the leash asks for) copied for this run, its
/// own fly as the start, the brain run and then its control.
fn train(ready: &ReadyBrain, data: &Path, ask: &Ask, send: &(dyn Fn(Msg) + Sync)) -> anyhow::Result<String> {
    let Ask { name, positions, leash, stop, pause } = ask;
    let (name, positions) = (name.as_str(), *positions);
    flychess_fly::fly::check_new_name(name)?;
    let (start_name, path) = flychess_fly::fly::trained_for(&ready.checksum, data)
        .ok_or_else(|| anyhow::anyhow!("this brain has no readout-only fly to start from: train one first (Readout)"))?;
    let start = flychess_fly::fly::Fly::load(&path)?;
    send(Msg::Stage("the brain and its homeostasis".into()));
    let mut brain = (*ready.brain).clone();
    if leash.calm_unreached {
        let options = flychess_brain::calibrate::CalibrationOptions { calm_unreached: true };
        let h = flychess_brain::calibrate::ensure(&brain, &ready.spec.brain_path(data), &ready.checksum, options, &|t| {
            send(Msg::Stage(format!("measuring the calm homeostasis, step {t} of 12")))
        })?;
        brain.set_homeostasis(h);
    }
    let homeostasis = flychess_brain::calibrate::fingerprint(brain.homeostasis());
    send(Msg::Stage("the backward pass's tables".into()));
    let base = Base::of(&brain);
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
    let (val, train) = (dataset.val(), dataset.train());
    let dir = flychess_brain::files::DataFolder::at(data).runs().join(name);
    let descending = &ready.connectome.groups.descending;
    let options = RunOptions { leash: leash.clone(), positions, batch: 32, val_every: (positions / 8).max(32), val: 256, seed: 1 };
    let mut summary = Vec::new();
    for (k, (label, stem, o)) in [
        ("brain", "brain", options.clone()),
        ("readout only", "readout-only", RunOptions { leash: leash.readout_only(), ..options.clone() }),
    ]
    .into_iter()
    .enumerate()
    {
        let setup = Setup {
            base: &base,
            brain: &mut brain,
            brain_checksum: &ready.checksum,
            homeostasis: &homeostasis,
            descending,
            start: (&start_name, &start.readout),
            train,
            val,
            gpu: None,
        };
        let outcome = run::run(setup, &o, &dir.join(stem), stop, &|done, total, _| {
            send(Msg::Positions(k * total + done, 2 * total));
            send(Msg::Stage(format!("{label}: {done} of {total} positions")));
            while pause.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })?;
        if !outcome.finished {
            return Ok(format!("Stopped at {label}; its checkpoint keeps it: start again with the same name and settings to go on."));
        }
        if let Some(p) = outcome.curve.last() {
            summary.push(format!("{label}: VAL loss {:.4}, top-1 {:.1} %", p.val.loss, 100.0 * p.val.top1));
        }
    }
    Ok(format!("{name} after {positions} positions. {}.", summary.join("; ")))
}
