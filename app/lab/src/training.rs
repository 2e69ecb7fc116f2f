//! The readout's training pipeline as the lab hands it to the window and the command line: the
//! pipeline itself (`flychess_learning::pipeline`: the DN cache, the fit pass by pass, the run's
//! log, checkpoints and snapshots) re-exported under this module, and what it needs of the lab or
//! the arena: the judge's weight chosen with a progress bar on the terminal, the tuned imagination,
//! and a run's snapshots answering a position on the window's brain.

use std::path::Path;

use anyhow::Result;

use flychess_brain::brain::Brain;
use flychess_fly::fly::Fly;

pub use flychess_learning::pipeline::*;

pub use flychess_arena::tuned::{imagination as tuned_imagination, judged_weight};

/// `flychess_arena::tuned::judge_weight` with a progress bar on the terminal while it is chosen.
pub fn judge_weight(data: &Path, fly: &Fly, brain: &Brain, descending: &[u32]) -> Result<f32> {
    let bar = indicatif::ProgressBar::hidden();
    bar.set_style(
        indicatif::ProgressStyle::with_template("choosing the judge's weight for {msg} [{bar:40}] {pos}/{len} VAL positions")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(fly.meta.name.clone());
    let weight = flychess_arena::tuned::judge_weight(data, fly, brain, descending, &|done, total| {
        if bar.is_hidden() {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    Ok(weight)
}

/// Every snapshot of `run` answering `fen`.
pub fn answers(ready: &crate::lab::ReadyBrain, data: &std::path::Path, run: &str, fen: &str) -> Result<Vec<Answer>> {
    Ok(answers_on(&ready.brain, &ready.connectome.groups.descending, &ready.checksum, data, run, fen)?)
}
