//! The readout fly's commands: `train` (a readout fitted over the DN cache, or a newborn fly, or
//! the brain learning too), `eval` (a fly beside its controls on HOLD and the human test, with
//! `controls` at the fly's own data size), `curve` (the learning curve of the fit at scale),
//! `analyse` (a fly's view of positions), `tune` (imagination, habituation and two glances chosen
//! on VAL) and `lessons` (the finishing lessons). What several of them share lives here: the
//! targets of rows and a fit logged pass by pass.

pub mod analyse;
mod controls;
pub mod curve;
pub mod eval;
pub mod lessons;
pub mod train;
pub mod tune;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use flychess_fly::data::Row;
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{Metrics, Target};
use flychess_learning::train::{Examples, FitOptions, PassRecord, fit};

/// The training targets of `rows` (in parallel).
pub(crate) fn targets(rows: &[Row]) -> Result<Vec<Target>> {
    Ok(rows.par_iter().map(Target::of).collect::<flychess_fly::Result<Vec<_>>>()?)
}

/// One pass of a fit as the progress log prints it.
fn pass_line(name: &str, p: &PassRecord) -> String {
    format!(
        "  {name}: pass {:>2}  train loss {:.4}  VAL loss {:.4}  top-1 {:.1}%  good {:.1}%  step {:.1e}{}",
        p.pass,
        p.train_loss,
        p.val.loss,
        100.0 * p.val.top1,
        100.0 * p.val.good,
        p.learning_rate,
        if p.improved { "" } else { "  (no better: step halved)" }
    )
}

/// Fits with a pass-by-pass progress line (the controls `eval` fits beside a fly).
pub(crate) fn fit_logged(
    name: &str,
    options: &FitOptions,
    start: &Readout,
    train: (&[f32], &[Target]),
    val: (&[f32], &[Target]),
) -> Result<(Readout, Metrics)> {
    let bar = ProgressBar::new(options.max_passes as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:12} pass {pos:>2}/{len} [{bar:30}] {elapsed} {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(name.to_string());
    bar.suspend(|| eprintln!("{name}: fitting on {}", options.on.describe().unwrap_or_else(|e| e.to_string())));
    let fitted = fit(
        start,
        Examples { x: train.0, targets: train.1 },
        Examples { x: val.0, targets: val.1 },
        options,
        &mut |p: &PassRecord, _| {
            bar.set_position(p.pass as u64);
            bar.suspend(|| eprintln!("{}", pass_line(name, p)));
        },
        &|| false,
    );
    bar.finish_and_clear();
    Ok(fitted?)
}
