//! The work behind the Train tab's Charles runs (`ui::train_charles`): Charles trained on the
//! shipped positions (`sim::charles::run::train`, the run `flychess charles train` makes,
//! checkpointed into `DATA/charles/NAME/`) on a thread the lab starts, and every run's curve read
//! back from its record.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use flychess_charles::CharlesConfig;
use flychess_charles::run::{self, RunFiles};
pub use flychess_charles::run::{Point, State, TrainOptions};
use flychess_learning::burn_device::FitOn;

use crate::lab::Wake;

/// What a Charles run says while it runs (a checkpoint's point and step), and its end.
pub enum Msg {
    Point(Point, usize),
}

/// One run's curve as its record holds it.
pub struct CharlesCurve {
    pub name: String,
    pub parameters: usize,
    pub finished: bool,
    pub points: Vec<Point>,
}

impl CharlesCurve {
    pub fn label(&self) -> String {
        format!("{} ({} k parameters{})", self.name, self.parameters / 1000, if self.finished { "" } else { ", unfinished" })
    }
}

/// Starts a Charles run on a thread of its own; `stop` ends it at its next step.
pub fn start(wake: Wake, data: PathBuf, name: String, options: TrainOptions, stop: Arc<AtomicBool>) -> super::Talk<Msg, String> {
    let died =
        "the training thread stopped unexpectedly; the last checkpoint is kept: start again with the same name and settings to go on";
    super::Talk::start(wake, "charles training", died, move |send| train(&data, &name, &options, &stop, send))
}

/// The record of an earlier run of this name, if there is one; an error (naming the file) when
/// there is one whose record cannot be read.
pub fn earlier_run(data: &Path, name: &str) -> Result<Option<State>, String> {
    RunFiles::of(data, name).record().map_err(|e| e.to_string())
}

/// Every run's curve (the user's runs shadow shipped ones of the same name), in name order.
pub fn read_curves(data: &Path) -> Vec<CharlesCurve> {
    flychess_charles::player::runs(data)
        .into_iter()
        .map(|(name, _, s)| CharlesCurve { name, parameters: s.parameters, finished: s.finished, points: s.curve })
        .collect()
}

/// The run's body: `sim::charles::run::train` on the shipped positions, on the CPU (burn ndarray)
/// or a hardware GPU when there is one.
fn train(data: &Path, name: &str, options: &TrainOptions, stop: &AtomicBool, send: &(dyn Fn(Msg) + Sync)) -> anyhow::Result<String> {
    flychess_fly::fly::check_name(name)?;
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
    let files = RunFiles::of(data, name);
    let state =
        run::train(&files, &dataset, options, FitOn::Auto, &|p, s| send(Msg::Point(p.clone(), s.step)), &|| stop.load(Ordering::Relaxed))?;
    let last = state.curve.last().map(|p| format!(": VAL loss {:.3}, top-1 {:.1} %", p.val_loss, 100.0 * p.val_top1)).unwrap_or_default();
    Ok(if state.finished {
        format!(
            "Charles {name} finished after {} steps ({}){last}; it plays as {} in New game.",
            state.step,
            crate::training::human(state.seconds),
            flychess_arena::network::player_name(name)
        )
    } else {
        format!("Charles {name} stopped at step {} of {}{last}; Start with the same settings goes on.", state.step, options.steps())
    })
}
