//! The work behind the Train tab's readout runs (`ui::train`): a fly's readout trained on the
//! loaded brain, or on a control brain of the same tables built and calibrated first (a lesion or
//! shuffled wiring), on a thread the lab starts; its stages, passes and end arrive as messages.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use flychess_brain::brain::simulator::EngineChoice;
use flychess_brain::calibrate::CalibrationOptions;
pub use flychess_fly::cache::Reading;
pub use flychess_fly::data::{HOLD, VAL};
pub use flychess_fly::scoring::Metrics;
pub use flychess_learning::burn_device::FitOn;
pub use flychess_learning::train::{FitOptions, PassRecord};

pub use crate::learning_curve::{LearningCurve, read as read_learning_curve};

use crate::lab::{BrainSpec, Control, ReadyBrain, Wake};
use crate::training::{self, Controls, TrainEvent, TrainJob};
use flychess_learning::pipeline::Prepared;

/// Which brain a run trains on.
#[derive(Clone, Debug, PartialEq)]
pub enum BrainChoice {
    /// The loaded brain (already calibrated).
    Loaded,
    /// A control brain of the same tables, built through the brain file's own path.
    Control(Control),
}

impl BrainChoice {
    pub fn label(&self) -> String {
        match self {
            BrainChoice::Loaded => "the loaded brain".into(),
            BrainChoice::Control(Control::ShuffledWiring { seed }) => format!("shuffled wiring (seed {seed})"),
            BrainChoice::Control(Control::Lesion { regions }) => {
                format!("lesion: {}", regions.iter().map(|r| r.name()).collect::<Vec<_>>().join(", "))
            }
            BrainChoice::Control(Control::None) => "the loaded brain".into(),
        }
    }
}

/// The loaded brain and the lab's control brains.
pub fn lab_controls() -> Vec<(&'static str, BrainChoice)> {
    use crate::lab::Region;
    vec![
        ("", BrainChoice::Loaded),
        ("shuffled", BrainChoice::Control(Control::ShuffledWiring { seed: 1 })),
        ("no-optic-lobe", BrainChoice::Control(Control::Lesion { regions: vec![Region::OpticLobe] })),
        ("no-central-brain", BrainChoice::Control(Control::Lesion { regions: vec![Region::CentralBrain] })),
    ]
}

/// A readout run as the Train tab keeps it: what it says while it runs, and its end (the fly's
/// name, None when stopped, or the error).
pub type Run = super::Talk<TrainEvent, Option<String>>;

/// What a readout run ends with when its thread dies.
pub const DIED: &str = "the training thread stopped unexpectedly; its checkpoint is kept: start the run again with the same name to resume";

/// Starts a run on a thread of its own. `kind` labels the fly (e.g. a control).
pub fn start(
    wake: Wake,
    ready: Arc<ReadyBrain>,
    data: PathBuf,
    brain: BrainChoice,
    job: TrainJob,
    controls: Arc<Controls>,
    kind: Option<String>,
) -> Run {
    super::Talk::start(wake, "training", DIED, move |send| run_job(&ready, &data, &brain, &job, &controls, kind, send))
}

/// Trains on the loaded brain, or builds and calibrates a control brain of the same tables first.
fn run_job(
    ready: &ReadyBrain,
    data: &Path,
    brain: &BrainChoice,
    job: &TrainJob,
    controls: &Controls,
    kind: Option<String>,
    events: &(dyn Fn(TrainEvent) + Sync),
) -> anyhow::Result<Option<String>> {
    let fly = match brain {
        BrainChoice::Loaded | BrainChoice::Control(Control::None) => {
            let prepared = Prepared {
                connectome: &ready.connectome,
                brain: &ready.brain,
                checksum: &ready.checksum,
                spec_name: ready.spec.name(),
                engine: EngineChoice::Auto,
                sensor: flychess_fly::cache::Sensor::Brain,
            };
            flychess_learning::pipeline::train(&prepared, data, job, controls, events)?
        }
        BrainChoice::Control(control) => {
            let spec = BrainSpec { tables: ready.spec.tables.clone(), control: control.clone() };
            let (loaded, b) = flychess_brain::store::ready_brain(&spec, data, CalibrationOptions::default(), &|stage, f| {
                events(TrainEvent::Stage { text: format!("control brain: {stage}"), fraction: f })
            })?;
            let prepared = Prepared {
                connectome: &loaded.connectome,
                brain: &b,
                checksum: &loaded.checksum,
                spec_name: spec.name(),
                engine: EngineChoice::Auto,
                sensor: flychess_fly::cache::Sensor::Brain,
            };
            flychess_learning::pipeline::train(&prepared, data, job, controls, events)?
        }
    };
    let Some(mut f) = fly else { return Ok(None) };
    if let Some(kind) = kind {
        f.meta.kind = kind;
        f.save(&crate::lab::DataFolder::at(data).flies().join(format!("{}.fly", job.name)))?;
    }
    Ok(Some(f.meta.name))
}

/// What the fly of run `run` answered to `fen` after each of its passes (the Learn panel's
/// slider), read from the run's snapshots aside.
pub fn answers(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, run: String, fen: String) -> super::Aside<Vec<training::Answer>> {
    super::aside(wake, "learn", move || training::answers(&ready, &data, &run, &fen))
}
