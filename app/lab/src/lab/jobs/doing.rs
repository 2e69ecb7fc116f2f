//! The work behind the Flies tab's "How it's doing" (`ui::doing`): a fly's HOLD positions broken
//! down by the piece Stockfish's best move moves and by game phase (`sim::breakdown`, the figures
//! `flychess doing` prints), read from the brain's DN-rate cache (filled on first use, its progress
//! shared with the panel), on a thread the lab starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

pub use flychess_arena::breakdown::{Breakdown, PIECES};
use flychess_fly::data::{Dataset, HOLD, shipped_path};

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};
use crate::training::{Controls, TrainEvent};
use flychess_learning::pipeline::Prepared;

/// Starts the breakdown of fly `name` (its content id and the breakdown arrive); `progress` is the
/// share of the HOLD cache filled, ×1000.
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, name: String, progress: Arc<AtomicU32>) -> Aside<(String, Breakdown)> {
    aside(wake, "how-its-doing", move || breakdown_of(&ready, &data, &name, &progress))
}

/// The breakdown of fly `name` on `ready`'s HOLD positions, and the fly's content id.
pub fn breakdown_of(ready: &ReadyBrain, data: &Path, name: &str, progress: &AtomicU32) -> anyhow::Result<(String, Breakdown)> {
    let f = flychess_fly::fly::Fly::load(&flychess_fly::fly::find(name, data)?)?;
    if f.meta.brain_checksum != ready.checksum {
        anyhow::bail!("fly {name} belongs to another brain ({})", f.meta.brain);
    }
    let dataset = Dataset::load(&shipped_path())?;
    let prepared = Prepared {
        connectome: &ready.connectome,
        brain: &ready.brain,
        checksum: &ready.checksum,
        spec_name: ready.spec.name(),
        engine: flychess_brain::brain::simulator::EngineChoice::Auto,
        sensor: flychess_fly::cache::Sensor::Brain,
    };
    let controls = Controls::default();
    let events = |e: TrainEvent| {
        if let TrainEvent::Stage { fraction, .. } = e {
            progress.store((fraction * 1000.0) as u32, Ordering::Relaxed);
        }
    };
    let cache = flychess_learning::pipeline::cache(&prepared, data, &dataset, HOLD, &controls, &events)?
        .ok_or_else(|| anyhow::anyhow!("the HOLD readings stopped"))?;
    let rows = dataset.hold();
    let targets: Vec<flychess_fly::scoring::Target> =
        rows.iter().map(flychess_fly::scoring::Target::of).collect::<flychess_fly::Result<_>>()?;
    let x = cache.read(0..rows.len(), f.meta.reading)?;
    Ok((f.player_id(None), flychess_arena::breakdown::breakdown(&f.readout, &x, rows, &targets)?))
}
