//! The work behind the Brain tab's "Think again" with a control brain (`ui::brain_view`): the
//! control of the loaded brain's tables (a lesion or shuffled wiring) built and calibrated through
//! the brain store (once, then kept on disk), and the shown board thought through it, on a thread
//! the lab starts.

use std::path::PathBuf;
use std::sync::Arc;

use shakmaty::Chess;

use super::{Aside, aside};
use crate::lab::{Control, ReadyBrain, Region, Wake};

/// The same board thought again by a control brain, to compare.
pub struct ControlThink {
    pub label: String,
    /// The think it repeats.
    pub of: u64,
    pub id: u64,
    pub rates: Arc<Vec<f32>>,
    /// Mean rate per region and step (filled by the view, which knows the connectome's regions).
    pub mean: Vec<[f32; Region::COUNT]>,
}

/// Thinks `position` (the think `of`) again through `control` of `ready`'s tables; `label` names
/// the control for the view.
pub fn think(
    wake: Wake,
    ready: &ReadyBrain,
    data: PathBuf,
    control: Control,
    position: Chess,
    of: u64,
    label: String,
) -> Aside<ControlThink> {
    let spec = flychess_brain::store::BrainSpec { tables: ready.spec.tables.clone(), control };
    aside(wake, "control-think", move || {
        let (_, brain) = flychess_brain::store::ready_brain(&spec, &data, Default::default(), &|_, _| {})?;
        let rates = flychess_brain::brain::cpu::think(&brain, &[flychess_brain::chess::planes(&position)]);
        Ok(ControlThink { label, of, id: of | (1 << 62), rates: Arc::new(rates.data), mean: Vec::new() })
    })
}
