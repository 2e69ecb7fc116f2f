//! The readout's training pipeline as the lab hands it to the window: the names of the pipeline
//! (`flychess_learning::pipeline`: a run's job, its events and controls, its log and snapshots)
//! that the Train tabs use, handed on so that no view names a simulator crate, and a run's
//! snapshots answering a position on the window's brain. The lab's jobs and the command line name
//! the pipeline by its owner.

use anyhow::Result;

pub use flychess_learning::pipeline::{Answer, Controls, RunCurves, TrainEvent, TrainJob, human, read_runs, snapshots};

/// Every snapshot of `run` answering `fen`.
pub fn answers(ready: &crate::lab::ReadyBrain, data: &std::path::Path, run: &str, fen: &str) -> Result<Vec<Answer>> {
    Ok(flychess_learning::pipeline::answers_on(&ready.brain, &ready.connectome.groups.descending, &ready.checksum, data, run, fen)?)
}
