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
        // Seated as every front door seats a name (a dopamine fly's model made here).
        let mushroom_body = |constants| ready.dopamine_model(&data, constants, &|_| {});
        let at = flychess_arena::players::Lookup::in_folder(&data, &flychess_charles::player::Runs)
            .of_brain(&ready.checksum, Some(ready.venue(&mushroom_body)));
        let seated = flychess_arena::players::seat(&name, &at, None)?;
        let job = ProfileJob {
            player: &seated.entrant,
            kit: &seated.kit,
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
