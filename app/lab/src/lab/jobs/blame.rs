//! The work behind the Brain tab's "error going back" (`ui::blame`): the shown position labelled
//! by Stockfish (or by the dataset's labels where it is one of its rows), then the backward pass of
//! brain training (`sim::bptt::blame`) for the brain's own fly, on a thread the lab starts. The
//! brain's backward-pass tables (`bptt::Base`) are made once per brain and kept by the panel.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use flychess_learning::bptt::Base;
pub use flychess_learning::bptt::blame::Blame;

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};

/// The blame worked out for one think.
pub struct ShownBlame {
    /// The think it belongs to.
    pub of: u64,
    /// Its id for the renderer's upload (never a think's).
    pub id: u64,
    pub fly: String,
    pub blame: Blame,
    /// What the cloud draws: each step scaled to its largest, red positive.
    pub view: Arc<Vec<f32>>,
}

/// The brain's backward-pass tables, by brain checksum, shared with the panel's worker.
pub type KeptBase = Arc<Mutex<Option<(String, Arc<Base>)>>>;

/// Starts working out the blame of `fen` (the think `of`) on a thread of its own.
pub fn start(
    wake: Wake,
    ready: Arc<ReadyBrain>,
    data: PathBuf,
    fen: String,
    of: u64,
    base: KeptBase,
    stockfish: Option<PathBuf>,
) -> Aside<ShownBlame> {
    aside(wake, "error going back", move || work(&ready, &data, &fen, of, &base, stockfish.as_deref()))
}

fn work(
    ready: &ReadyBrain,
    data: &Path,
    fen: &str,
    of: u64,
    base: &Mutex<Option<(String, Arc<Base>)>>,
    stockfish: Option<&Path>,
) -> anyhow::Result<ShownBlame> {
    let (fly_name, path) = flychess_fly::fly::trained_for(&ready.checksum, data)
        .ok_or_else(|| anyhow::anyhow!("this brain has no trained fly yet (train one in the Train tab)"))?;
    let fly = flychess_fly::fly::Fly::load(&path)?;
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
    let target = flychess_learning::bptt::blame::label(fen, stockfish, &dataset.rows)?;
    let base = {
        let mut kept = base.lock().unwrap_or_else(|e| e.into_inner());
        match kept.as_ref().filter(|(c, _)| *c == ready.checksum) {
            Some((_, b)) => b.clone(),
            None => {
                let b = Arc::new(Base::of(&ready.brain));
                *kept = Some((ready.checksum.clone(), b.clone()));
                b
            }
        }
    };
    let blame = flychess_learning::bptt::blame::blame(
        &ready.brain,
        &base,
        &fly.readout,
        &ready.connectome.groups.descending,
        &ready.connectome.neurons.region,
        fen,
        &target,
    )?;
    let view = Arc::new(blame.for_view());
    Ok(ShownBlame { of, id: of | (1 << 61), fly: fly_name, blame, view })
}
