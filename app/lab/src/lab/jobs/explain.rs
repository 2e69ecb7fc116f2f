//! The work behind "what it looks at" (`ui::looks`): the board lesion of a think — each piece taken
//! away in turn and the chosen move's probability read again (`sim::explain`) — on a thread the lab
//! starts, and how a board lands on the photoreceptors (`sim::eye::sight`, cheap enough to ask for
//! on the UI thread).

use std::sync::Arc;

use shakmaty::Chess;

pub use flychess_brain::eye::SquareSight;
pub use flychess_fly::explain::{Explanation, PieceEffect};
use flychess_fly::fly::Fly;

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};

/// Starts the board lesion of `position` by the readout fly `fly`.
pub fn start(wake: Wake, ready: Arc<ReadyBrain>, fly: Arc<Fly>, position: Chess) -> Aside<Explanation> {
    aside(wake, "explain", move || {
        flychess_fly::explain::explain(&ready.brain, &fly.readout, &ready.connectome.groups.descending, &position)
            .ok_or_else(|| anyhow::anyhow!("no legal move"))
    })
}

/// What the eye sees of `position` on `ready`'s brain, square by square.
pub fn sight(ready: &ReadyBrain, position: &Chess) -> Vec<SquareSight> {
    flychess_brain::eye::sight(&ready.brain.eye, position)
}
