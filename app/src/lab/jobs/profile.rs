//! The work behind the Flies tab's "How it loses" (`ui::loses`): the fly's ladder games (shared
//! with `flychess rate`, played where missing), every move scored by Stockfish, the report kept
//! under the fly's content id (`profiling::run`, the job `flychess profile` runs), on a thread the
//! lab starts, with its stage and game counts shared with the panel.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};
use crate::profiling::{self, ProfileJob, Stage};

/// What to measure: the fly, the Stockfish binary that scores its moves, how many games, how deep.
pub struct Ask {
    pub fly: String,
    pub stockfish: PathBuf,
    pub games: usize,
    pub depth: u32,
}

/// Starts measuring; `progress` is (stage: 0 playing, 1 analysing; games done; games in all).
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, data: PathBuf, ask: Ask, progress: Arc<[AtomicU32; 3]>) -> Aside<serde_json::Value> {
    aside(wake, "how-it-loses", move || {
        let Ask { fly: name, stockfish, games, depth } = ask;
        let f = flychess_sim::fly::Fly::load(&flychess_sim::fly::find(&name, &data)?)?;
        if f.meta.brain_checksum != ready.checksum {
            anyhow::bail!("fly {name} belongs to another brain ({})", f.meta.brain);
        }
        let entrant = flychess_sim::players::Entrant::fly(&f, None);
        let descending = &ready.connectome.groups.descending;
        let kit = flychess_sim::players::Kit::new(ready.brain.clone(), descending.clone()).with_flies(&[(f, vec![entrant.clone()])]);
        let job = ProfileJob {
            player: &entrant,
            kit: &kit,
            brain: ready.connectome.provenance.label(),
            checksum: ready.checksum.clone(),
            stockfish,
            games,
            depth,
        };
        let (_, report) = profiling::run(&job, &data, &|stage, done, total| {
            progress[0].store(u32::from(stage == Stage::Analysing), Ordering::Relaxed);
            progress[1].store(done as u32, Ordering::Relaxed);
            progress[2].store(total as u32, Ordering::Relaxed);
        })?;
        Ok(report)
    })
}
