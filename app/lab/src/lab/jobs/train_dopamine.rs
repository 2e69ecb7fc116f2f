//! The work behind the Train tab's dopamine runs (`ui::train_dopamine`): the dopamine fly's model
//! of the loaded brain, the fly (new, or its file to go on from) and its lessons (`sim::bio::run`,
//! the run `flychess bio train` makes) on a thread the lab starts; and the dopamine flies' curves
//! and the mushroom body's ceiling read back from the data folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use flychess_arena::bio::Constants;
pub use flychess_arena::bio::file::CurvePoint;
use flychess_arena::bio::file::{DopamineFly, dopamine_flies, is_dopamine_fly};
use flychess_arena::bio::learn::Rule;
use flychess_arena::bio::measure::read_baselines;
use flychess_arena::bio::run::{self, Progress, RunOptions};

use crate::lab::{ReadyBrain, Wake};

/// What a dopamine run says while it runs, and its end (a summary, or the error).
pub enum Msg {
    Stage(String),
    Lessons(usize, usize),
    Point(CurvePoint),
}

/// One dopamine fly's curve as its file holds it.
#[derive(Clone, Debug)]
pub struct DopamineCurve {
    pub name: String,
    pub lessons: usize,
    pub points: Vec<CurvePoint>,
}

/// What to run: the fly's name, its lessons in all, the model's constants, the flag that stops it.
pub struct Ask {
    pub name: String,
    pub lessons: usize,
    pub constants: Constants,
    pub stop: Arc<AtomicBool>,
}

/// Starts a dopamine run on a thread of its own.
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, ask: Ask) -> super::Talk<Msg, String> {
    let died = "the training thread stopped unexpectedly; the fly's file keeps its lessons so far: start again with the same name to go on";
    super::Talk::start(wake, "dopamine training", died, move |send| train(&ready, &data, &ask, send))
}

/// The logistic ceiling on the Kenyon cells: value, low, high (95 %), and on how many pairs.
pub type Ceiling = (f64, f64, f64, usize);

/// What the dopamine panel shows from the disk, read aside: the brain's dopamine flies' curves,
/// the logistic ceiling on the Kenyon cells (value, low, high, pairs) where it was measured, and
/// whether the name in the form is a readout fly's (the name asked about, and the answer).
#[derive(Clone, Debug, Default)]
pub struct DopamineScan {
    pub curves: Vec<DopamineCurve>,
    pub ceiling: Option<Ceiling>,
    pub name_taken: Option<(String, bool)>,
}

/// The panel's scan for the model `constants` describe, with `name` (the form's) looked up.
pub fn scan(ready: &ReadyBrain, data: &Path, constants: &Constants, name: &str) -> DopamineScan {
    let (curves, ceiling) = read_curves(ready, data, constants);
    DopamineScan { curves, ceiling, name_taken: Some((name.to_string(), readout_fly_named(name, data))) }
}

/// The brain's dopamine flies' curves, and the logistic ceiling on the Kenyon cells of the model
/// `constants` describe (value, low, high, pairs) where it was measured.
fn read_curves(ready: &ReadyBrain, data: &Path, constants: &Constants) -> (Vec<DopamineCurve>, Option<Ceiling>) {
    let curves = dopamine_flies(&ready.checksum, data)
        .into_iter()
        .map(|(_, f)| DopamineCurve { name: f.meta.name, lessons: f.meta.lessons, points: f.meta.curve })
        .collect();
    let ceiling = read_baselines(data, &ready.checksum, constants)
        .first()
        .map(|b| (b.ceiling_kc.hold.value, b.ceiling_kc.hold.low, b.ceiling_kc.hold.high, b.sizes.pairs));
    (curves, ceiling)
}

/// Whether a readout fly (not a dopamine one) has this name.
fn readout_fly_named(name: &str, data: &Path) -> bool {
    flychess_fly::fly::find(name, data).is_ok_and(|p| !is_dopamine_fly(&p))
}

/// The run's body: the dopamine fly's model of the loaded brain, the fly (new, or its file to go
/// on from), then `sim::bio::run`.
fn train(ready: &ReadyBrain, data: &Path, ask: &Ask, send: &(dyn Fn(Msg) + Sync)) -> anyhow::Result<String> {
    let Ask { name, lessons: target, constants, stop } = ask;
    let (name, target, constants) = (name.as_str(), *target, *constants);
    flychess_fly::fly::check_new_name(name)?;
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
    send(Msg::Stage("the mushroom body and its homeostasis".into()));
    let bio = ready
        .dopamine_model(data, constants, &|t| send(Msg::Stage(format!("measuring the dopamine fly's homeostasis, step {t} of 12"))))?;
    let path = flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"));
    std::fs::create_dir_all(flychess_brain::files::DataFolder::at(data).flies())?;
    let mut fly = if path.exists() {
        if !is_dopamine_fly(&path) {
            anyhow::bail!("{name} is a readout fly: choose another name");
        }
        DopamineFly::load(&path)?
    } else {
        DopamineFly::newborn(name, &bio, &ready.connectome.provenance.label(), Rule::default(), "tutor", 1)
    };
    let options = RunOptions { target, every: 1_024, monitor_pairs: 256, stockfish: None };
    run::run(&bio, &mut fly, &dataset, &path, &options, stop, &mut |p| match p {
        Progress::Lessons { done, target, .. } => send(Msg::Lessons(done, target)),
        Progress::Point(p) => send(Msg::Point(*p)),
        Progress::Game { .. } => {}
    })?;
    let last = fly.meta.curve.last().map(|p| format!(": VAL pairs right {:.1} %", 100.0 * p.pairs_right)).unwrap_or_default();
    Ok(format!("Saved dopamine fly {name} after {} lessons{last}.", fly.meta.lessons))
}
