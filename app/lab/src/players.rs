//! Players for the terminal's front doors (the command line, the UCI engine): the brain players are
//! seated on (`Hall`: the `Venue` for `flychess_arena::players::seat`, a dopamine fly's mushroom
//! body made on it); and a brain's roster: its readout flies, its dopamine flies on their model
//! of the brain, the finished Charles runs.

use std::path::Path;

use std::sync::Arc;

use anyhow::Result;

use flychess_arena::bio::file::DopamineFly;
use flychess_arena::bio::{BioBrain, Constants};
use flychess_arena::players::Venue;
use flychess_brain::brain::Brain;
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::store::BrainSpec;
use flychess_fly::fly::{self, Fly};

/// The flies of the brain `loaded` (the user's first: a shipped fly of the same name is shadowed).
pub fn flies_of_brain(data: &Path, checksum: &str) -> Vec<Fly> {
    let mut out = Vec::new();
    for name in fly::list(data) {
        if fly::find(&name, data).is_ok_and(|p| flychess_arena::bio::file::is_dopamine_fly(&p)) {
            continue;
        }
        match fly::find(&name, data).and_then(|p| Fly::load(&p)) {
            Ok(f) if f.meta.brain_checksum == checksum => out.push(f),
            Ok(_) => {}
            Err(e) => eprintln!("skipping fly {name}: {e}"),
        }
    }
    out
}

/// Every finished Charles run that loads (those that do not are said and left out).
pub fn charles_runs(data: &Path) -> Vec<Arc<dyn flychess_arena::network::Network>> {
    let mut out = Vec::new();
    for name in flychess_charles::player::list(data) {
        match flychess_charles::player::Trained::load(&name, data) {
            Ok(c) => out.push(Arc::new(c) as Arc<dyn flychess_arena::network::Network>),
            Err(e) => eprintln!("leaving out Charles {name}: {e}"),
        }
    }
    out
}

/// A mushroom body made for a dopamine fly's constants (a `Venue`'s).
type MushroomBody = dyn Fn(Constants) -> flychess_arena::Result<Arc<BioBrain>> + Send + Sync;

/// A brain loaded on the terminal as players are seated on it (`venue`): the brain file, its rate
/// model, and the mushroom body a dopamine fly is seated with, made on it when asked.
pub struct Hall {
    pub loaded: Arc<Loaded>,
    pub brain: Arc<Brain>,
    mushroom_body: Box<MushroomBody>,
}

impl Hall {
    /// The brain `loaded` of `spec` in `data`, with its rate model `brain`.
    pub fn new(spec: &BrainSpec, data: &Path, loaded: Arc<Loaded>, brain: Arc<Brain>) -> Hall {
        let (path, l, b) = (spec.brain_path(data), loaded.clone(), brain.clone());
        let mushroom_body = Box::new(move |constants| {
            Ok(Arc::new(flychess_arena::bio::prepare(&l.connectome, &l.checksum, &b, &path, constants, &|_| {})?))
        });
        Hall { loaded, brain, mushroom_body }
    }

    /// The brain as `flychess_arena::players::seat` seats players on it.
    pub fn venue(&self) -> Venue<'_> {
        Venue { brain: &self.brain, descending: &self.loaded.connectome.groups.descending, mushroom_body: &*self.mushroom_body }
    }

    /// The dopamine flies of the brain that think on one mushroom body (the first's constants;
    /// others are said and left out), and that model.
    pub fn dopamine(&self, data: &Path) -> Result<(Vec<DopamineFly>, Option<Arc<BioBrain>>)> {
        let all: Vec<DopamineFly> =
            flychess_arena::bio::file::dopamine_flies(&self.loaded.checksum, data).into_iter().map(|(_, f)| f).collect();
        let Some(first) = all.first() else { return Ok((Vec::new(), None)) };
        let bio = (self.mushroom_body)(first.meta.constants)?;
        let mut kept = Vec::new();
        for f in all {
            match f.check(&bio) {
                Ok(()) => kept.push(f),
                Err(e) => eprintln!("leaving out dopamine fly {}: {e}", f.meta.name),
            }
        }
        Ok((kept, Some(bio)))
    }
}
