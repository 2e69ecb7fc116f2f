//! The flies, Charles runs and ratings on disk, as the lab reads and changes them: a newborn
//! fly saved for the loaded brain, a fly renamed (its file and the name inside it), and each
//! player's measured rating looked up by what the player is (its content id), from the user's own
//! ladder or the one shipped with the flies. The Flies tab and the CLI are views over these.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{anyhow, Result};

use crate::lab::ReadyBrain;

/// A newborn fly (untrained readout) for the loaded brain.
pub fn save_newborn(ready: &ReadyBrain, data: &Path, name: &str) -> Result<()> {
    use flychess_sim::fly::{Fly, FlyMeta};
    let f = Fly {
        meta: FlyMeta {
            name: name.into(),
            kind: "lab: newborn (untrained readout)".into(),
            brain: ready.connectome.provenance.label(),
            brain_checksum: ready.checksum.clone(),
            homeostasis: flychess_sim::calibrate::fingerprint(ready.brain.homeostasis()),
            reading: flychess_sim::cache::Reading::Mean9To12,
            data: "none (untrained)".into(),
            train_positions: 0,
            val: None,
            hold: None,
            created: flychess_sim::fly::today(),
        },
        readout: flychess_sim::readout::Readout::newborn(ready.connectome.groups.descending.len(), flychess_sim::readout::Readout::default_steps(), 1),
    };
    f.save(&data.join("flies").join(format!("{name}.fly")))?;
    Ok(())
}

/// Renames a fly of the data folder (its file and the name inside it).
pub fn rename_fly(data: &Path, old: &str, new: &str) -> Result<()> {
    flychess_sim::fly::check_name(new)?;
    let to = data.join("flies").join(format!("{new}.fly"));
    if to.exists() {
        return Err(anyhow!("a fly called {new} exists"));
    }
    let from = data.join("flies").join(format!("{old}.fly"));
    if flychess_sim::bio::file::is_dopamine_fly(&from) {
        let mut f = flychess_sim::bio::file::DopamineFly::load(&from)?;
        f.meta.name = new.to_string();
        f.save(&to)?;
    } else {
        let mut f = flychess_sim::fly::Fly::load(&from)?;
        f.meta.name = new.to_string();
        f.save(&to)?;
    }
    std::fs::remove_file(&from)?;
    Ok(())
}

/// The ratings the window shows: the user's own ladder (DATA/ratings.json, from `flychess rate`)
/// when there is one, else the ladder measured before the release and shipped with the flies.
/// (the report, where it came from.)
pub fn ratings_report(data: &Path) -> Option<(serde_json::Value, String)> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(&p).ok().and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok()).map(|v| (v, p));
    if let Some((v, p)) = read(data.join("ratings.json")) {
        return Some((v, format!("your ladder ({})", p.display())));
    }
    let (v, _) = read(flychess_sim::shipped::dir().join("ratings.json"))?;
    let when = v["date"].as_str().unwrap_or("?").to_string();
    Some((v, format!("the ladder shipped with the flies, measured on {when}")))
}

/// Each fly's measured rating as "1234 [1180, 1290]", by fly name: looked up by what the fly is
/// (its player id), so a fly retrained under an old name shows "unrated" until it is rated.
pub fn read_ratings(data: &Path) -> HashMap<String, String> {
    let mut by_id = HashMap::new();
    if let Some((v, _)) = ratings_report(data) {
        for r in v["ratings"].as_array().into_iter().flatten() {
            if let (Some(id), Some(elo)) = (r["id"].as_str(), r["elo"].as_f64()) {
                let (low, high) = (r["low"].as_f64().unwrap_or(elo), r["high"].as_f64().unwrap_or(elo));
                by_id.insert(id.to_string(), format!("{elo:.0} [{low:.0}, {high:.0}]"));
            }
        }
    }
    let mut out = HashMap::new();
    for name in flychess_sim::fly::list(data) {
        let Ok(p) = flychess_sim::fly::find(&name, data) else { continue };
        let id = if flychess_sim::bio::file::is_dopamine_fly(&p) {
            flychess_sim::bio::file::DopamineFly::load(&p).map(|f| f.player_id())
        } else {
            flychess_sim::fly::Fly::load(&p).map(|f| f.player_id(None))
        };
        if let Some(r) = id.ok().and_then(|id| by_id.get(&id)) {
            out.insert(name.clone(), r.clone());
        }
        // The same fly with an aid, by the aid's id (a judge's by the weight chosen for it).
        if let Ok(f) = flychess_sim::fly::Fly::load(&p) {
            for suffix in crate::lab::AIDED_SUFFIXES {
                let aid = match flychess_sim::search::Aid::parse(suffix) {
                    Some(Ok(flychess_sim::search::Aid::Judge { .. })) => match crate::training::judged_weight(data, &f) {
                        Some(weight) => flychess_sim::search::Aid::Judge { weight },
                        None => continue,
                    },
                    Some(Ok(aid)) => aid,
                    _ => continue,
                };
                let Ok(e) = flychess_sim::ladder::Entrant::aided(flychess_sim::ladder::Entrant::fly(&f, None), aid, None) else { continue };
                if let Some(r) = by_id.get(&e.id()) {
                    out.insert(format!("{name}+{suffix}"), r.clone());
                }
            }
        }
    }
    // Charles by the content of its weights, under its player name.
    for (run, files, state) in flychess_sim::charles::player::runs(data).into_iter().filter(|(_, _, s)| s.finished) {
        if let Some(r) = flychess_sim::charles::player::content_id(&files, &state).ok().and_then(|id| by_id.get(&id)) {
            out.insert(flychess_sim::charles::player::player_name(&run), r.clone());
        }
    }
    out
}
