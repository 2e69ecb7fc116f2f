//! What the terminal's front doors (the command line and the UCI engine) draw while work takes
//! time: indicatif's progress bars on stderr, fed by the progress callbacks the lab and the arena
//! report through (the window draws the same progress as egui bars). A bar shows only once there
//! is something to wait for and is cleared when the work ends.

use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use flychess_brain::brain::Brain;
use flychess_fly::fly::Fly;

/// A name's lookup on the terminal: `work` is given what to say while it takes time (a fly's judge
/// weight chosen on VAL positions the first time, as a progress bar on stderr, cleared after).
pub fn with_lookup_bar<T>(work: impl FnOnce(&dyn Fn(&str, usize, usize)) -> T) -> T {
    let bar = ProgressBar::hidden();
    bar.set_style(ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len}").expect("valid template").progress_chars("=> "));
    let progress = |what: &str, done: usize, total: usize| {
        if total > 1 {
            if bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_message(what.to_string());
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let done = work(&progress);
    bar.finish_and_clear();
    done
}

/// `flychess_arena::tuned::judge_weight` with a progress bar on the terminal while it is chosen.
pub fn judge_weight_with_bar(data: &Path, fly: &Fly, brain: &Brain, descending: &[u32]) -> flychess_arena::Result<f32> {
    let bar = ProgressBar::hidden();
    bar.set_style(
        ProgressStyle::with_template("choosing the judge's weight for {msg} [{bar:40}] {pos}/{len} VAL positions")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(fly.meta.name.clone());
    let weight = flychess_arena::tuned::judge_weight(data, fly, brain, descending, &|done, total| {
        if bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })?;
    bar.finish_and_clear();
    Ok(weight)
}
