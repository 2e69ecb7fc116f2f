//! A player that is a trained network rather than a fly (Charles, seed `000_…txt`), as the arena
//! sees it: an id of its weights, a name it plays under, and a policy over the legal moves. How it
//! thinks (a burn transformer) lives in its own crate, `flychess-charles`, above this one; the
//! front doors hand `players::named` a `Networks` that finds and loads them by name, so the arena —
//! games, search, the ladder — builds without burn. The names are the arena's: `charles` (the run
//! named "charles") or `charles:RUN`.

use std::path::Path;
use std::sync::Arc;

use shakmaty::Chess;

use crate::error::{Error, Result};
use flychess_fly::readout::{Policy, choose};

/// A trained network as a player.
pub trait Network: Send + Sync + std::fmt::Debug {
    /// What its weights are (games and ratings are kept under it).
    fn id(&self) -> &str;
    /// The name it plays under (`player_name` of its run).
    fn player_name(&self) -> &str;
    /// Its probability for every legal move of `pos` (shakmaty's order); value 0 where it has no
    /// value head.
    fn policy(&self, pos: &Chess) -> Result<Policy>;
    /// Its policy and the move it plays: the favourite that does not bring back one of `earlier`
    /// (the keys of the game's positions so far) while another exists, the flies' rule.
    fn choose(&self, pos: &Chess, earlier: &[u64]) -> Result<(Policy, usize)> {
        let p = self.policy(pos)?;
        let (i, _) = choose(pos, &p, earlier)
            .ok_or_else(|| Error::Invalid(format!("{} was asked to move in a finished game", self.player_name())))?;
        Ok((p, i))
    }
}

/// Where networks are found by name: the trained runs in a data folder (and shipped ones).
pub trait Networks: Sync {
    /// The finished run `run`, loaded to play.
    fn load(&self, run: &str, data: &Path) -> Result<Arc<dyn Network>>;
    /// The finished runs there are, by run name.
    fn list(&self, data: &Path) -> Vec<String>;
}

/// No networks at all: a front door built without them (every Charles name is refused, saying so).
pub struct NoNetworks;

impl Networks for NoNetworks {
    fn load(&self, run: &str, _data: &Path) -> Result<Arc<dyn Network>> {
        Err(Error::Invalid(format!("{}: this program was built without network players", player_name(run))))
    }
    fn list(&self, _data: &Path) -> Vec<String> {
        Vec::new()
    }
}

/// The run name a player name means: `charles` → "charles", `charles:NAME` → NAME; None when
/// the name is not a network's.
pub fn run_name(player: &str) -> Option<&str> {
    match player.split_once(':') {
        Some(("charles", name)) if !name.is_empty() => Some(name),
        None if player == "charles" => Some("charles"),
        _ => None,
    }
}

/// The player name of the run `run` (the inverse of `run_name`).
pub fn player_name(run: &str) -> String {
    if run == "charles" { "charles".into() } else { format!("charles:{run}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_and_its_player_name_are_each_others_inverse() {
        assert_eq!(run_name("charles"), Some("charles"));
        assert_eq!(run_name("charles:small"), Some("small"));
        assert_eq!(run_name("charles:"), None);
        assert_eq!(run_name("flywire"), None);
        for run in ["charles", "small"] {
            assert_eq!(run_name(&player_name(run)), Some(run));
        }
        let refused = NoNetworks.load("small", Path::new(".")).unwrap_err().to_string();
        assert!(refused.contains("charles:small") && refused.contains("without network players"), "{refused}");
    }
}
