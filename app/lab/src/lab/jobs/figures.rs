//! The work behind the Brain tab's panes (`ui::figures`): the 12 steps drawn offscreen and
//! exported (`figure_job`), the spread of each region's rates across 48 shipped positions (what
//! `flychess brain signal` prints), and the linear probes (`sim::probe`: looked up by content key,
//! or run and kept), each on a thread the lab starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub use flychess_arena::probe::{ProbeOptions, ProbeReport, Score as ProbeScore};

use super::{Aside, aside};
use crate::figure_job::{FigureJob, FigureKind, png_bytes};
use crate::lab::{ReadyBrain, STEPS, Wake};

/// The 12 steps of a think as one 1920 × 1080 picture.
pub fn twelve_steps(wake: Wake, job: FigureJob) -> Aside<image::RgbaImage> {
    aside(wake, "twelve-steps", move || {
        job.render(FigureKind::Grid([1920, 1080]))?.0.ok_or_else(|| anyhow::anyhow!("the grid was not drawn"))
    })
}

/// Draws `kind` and writes it to `path` (atomically); the answer says where it went.
pub fn export(wake: Wake, job: FigureJob, kind: FigureKind, path: PathBuf) -> Aside<String> {
    aside(wake, "figure-export", move || {
        let (img, bytes) = job.render(kind)?;
        let bytes = match img {
            Some(img) => png_bytes(&img)?,
            None => bytes,
        };
        flychess_brain::files::write_atomically(&path, &bytes)?;
        Ok(format!("Saved {}", path.display()))
    })
}

/// Each region's mean spread of rates across 48 shipped positions, per step, with the brain's checksum.
pub fn signal(wake: Wake, ready: Arc<ReadyBrain>) -> Aside<(String, Vec<[f64; STEPS]>)> {
    aside(wake, "signal", move || {
        let boards: Vec<flychess_brain::chess::Planes> =
            flychess_brain::chess::sample_positions().iter().skip(256).take(48).map(flychess_brain::chess::planes).collect();
        Ok((ready.checksum.clone(), flychess_brain::brain::signal::by_region(&ready.brain, &ready.connectome.neurons.region, &boards)))
    })
}

/// The probes kept for `ready` (run here or by `flychess probe`), the most positions first; an
/// error when there are none.
pub fn kept_probes(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf) -> Aside<ProbeReport> {
    aside(wake, "probes-kept", move || kept(&ready, &data).ok_or_else(|| anyhow::anyhow!("none kept")))
}

fn kept(ready: &ReadyBrain, data: &Path) -> Option<ProbeReport> {
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).ok()?;
    flychess_arena::probe::kept_for(data, &ready.checksum, &flychess_brain::calibrate::fingerprint(ready.brain.homeostasis()), &dataset)
}

/// Runs the probes and keeps the report; `done` counts the positions thought, `stop` ends the run.
pub fn probes(
    wake: Wake,
    ready: Arc<ReadyBrain>,
    data: PathBuf,
    options: ProbeOptions,
    done: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> Aside<ProbeReport> {
    let progress_wake = wake.clone();
    aside(wake, "probes", move || {
        let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
        let homeostasis = flychess_brain::calibrate::fingerprint(ready.brain.homeostasis());
        let report = flychess_arena::probe::run(
            &ready.brain,
            &ready.connectome.neurons.region,
            &ready.checksum,
            &homeostasis,
            &dataset,
            &options,
            &|d, _| {
                done.store(d, Ordering::Relaxed);
                progress_wake();
            },
            &|| stop.load(Ordering::Relaxed),
        )?;
        flychess_arena::probe::save(&data, &report)?;
        Ok(report)
    })
}
