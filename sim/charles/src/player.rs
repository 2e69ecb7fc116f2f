//! A trained Charles as a player. Runs live in `DATA/charles/NAME/` (the user's, from `flychess
//! charles train`) or in the shipped folder's `charles/NAME/` (the one built into the binary from
//! `models/charles/`); the user's run shadows a shipped one of the same name. A player name on the
//! command line and in the window is `charles` (the run named "charles") or `charles:NAME`. Only a
//! finished run plays. What plays is keyed by content — `charles-` and the first 16 hex digits of
//! the SHA-256 of its weights and its configuration — so games stored under an id belong to those
//! weights, whatever the run was called. Charles plays its favourite move, skipping one that
//! brings back an earlier position while another exists (the flies' rule, `readout::choose`).

use std::path::{Path, PathBuf};

use burn::module::Module;
use burn::tensor::Device;
use burn::tensor::activation::softmax;
use sha2::{Digest, Sha256};
use shakmaty::{Chess, Move, Position};

use super::Charles;
use super::run::{RunFiles, State};
use crate::error::{Error, Result};
use flychess_arena::network::{Network, Networks, player_name};
use flychess_fly::readout::Policy;

/// Where the shipped runs are written out (`shipped::dir()/charles/`).
pub fn shipped_runs() -> PathBuf {
    flychess_brain::shipped::dir().join("charles")
}

/// The folder of the run `name`: the user's first, then the shipped one.
pub fn find(name: &str, data: &Path) -> Result<RunFiles> {
    flychess_fly::fly::check_name(name)?;
    let user = RunFiles::of(data, name);
    if user.state().exists() {
        return Ok(user);
    }
    let shipped = RunFiles { dir: shipped_runs().join(name) };
    if shipped.state().exists() {
        return Ok(shipped);
    }
    Err(Error::Invalid(format!(
        "no Charles run named {name:?} (looked in {} and {}); train one with `flychess charles train --name {name}`",
        user.dir.display(),
        shipped.dir.display()
    )))
}

/// Every run with a record, each name once (the user's run shadows a shipped one, as in `find`),
/// in name order: its name, folder and record.
pub fn runs(data: &Path) -> Vec<(String, RunFiles, State)> {
    let mut names: Vec<String> = [flychess_brain::files::DataFolder::at(data).charles(), shipped_runs()]
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flat_map(|entries| entries.flatten().filter_map(|e| e.file_name().to_str().map(str::to_owned)))
        .collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let files = find(&name, data).ok()?;
            let state = files.read_state()?;
            Some((name, files, state))
        })
        .collect()
}

/// The finished runs there are (the user's and the shipped ones, each name once), in name order.
pub fn list(data: &Path) -> Vec<String> {
    runs(data).into_iter().filter(|(_, _, s)| s.finished).map(|(name, _, _)| name).collect()
}

/// What the run's weights are: `charles-` and 16 hex digits of the SHA-256 of the weights file
/// and the configuration.
pub fn content_id(files: &RunFiles, state: &State) -> Result<String> {
    let path = files.weights(state)?;
    let weights = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let mut d = Sha256::new();
    d.update(serde_json::to_vec(&state.options.config).map_err(|e| Error::Invalid(e.to_string()))?);
    d.update(&weights);
    Ok(format!("charles-{}", &flychess_brain::files::hex(&d.finalize())[..16]))
}

/// A finished Charles run, loaded to play (off the autodiff tape, on the CPU).
pub struct Trained {
    /// The run's name (`charles` for the shipped one).
    pub name: String,
    /// The name it plays under (`player_name` of the run).
    player: String,
    pub id: String,
    pub state: State,
    model: Charles,
    device: Device,
}

impl std::fmt::Debug for Trained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trained").field("name", &self.name).field("id", &self.id).finish()
    }
}

impl Trained {
    /// Loads the finished run `name` (the user's or the shipped one).
    pub fn load(name: &str, data: &Path) -> Result<Trained> {
        let files = find(name, data)?;
        #[allow(deprecated)]
        let device = Device::ndarray();
        let (model, state) = super::run::load(&files, &device)?;
        if !state.finished {
            return Err(Error::Invalid(format!(
                "Charles {name} has not finished training (step {} of {}): resume it with `flychess charles train --name {name}`",
                state.step,
                state.options.steps()
            )));
        }
        let id = content_id(&files, &state)?;
        Ok(Trained { name: name.to_string(), player: player_name(name), id, state, model: model.valid(), device })
    }
}

impl Network for Trained {
    fn id(&self) -> &str {
        &self.id
    }

    fn player_name(&self) -> &str {
        &self.player
    }

    /// Value 0: Charles has no value head.
    fn policy(&self, pos: &Chess) -> flychess_arena::Result<Policy> {
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            return Ok(Policy { moves, probability: Vec::new(), value: 0.0 });
        }
        let batch = super::MoveBatch::new(&[(pos, moves.as_slice(), &[])], &self.device);
        let p = softmax(self.model.logits(&batch), 1)
            .into_data()
            .try_into_vec::<f32>()
            .map_err(|e| flychess_arena::Error::Invalid(format!("Charles's output: {e:?}")))?;
        Ok(Policy { probability: p[..moves.len()].to_vec(), moves, value: 0.0 })
    }
}

/// The Charles runs of a data folder and the shipped ones, as the arena finds networks by name
/// (`players::Lookup`).
pub struct Runs;

impl Networks for Runs {
    fn load(&self, run: &str, data: &Path) -> flychess_arena::Result<std::sync::Arc<dyn Network>> {
        Ok(std::sync::Arc::new(Trained::load(run, data)?))
    }

    fn list(&self, data: &Path) -> Vec<String> {
        list(data)
    }
}

/// Charles's errors where the arena asks (a run that cannot be loaded), in the same words.
impl From<Error> for flychess_arena::Error {
    fn from(e: Error) -> flychess_arena::Error {
        flychess_arena::Error::Invalid(e.to_string())
    }
}
