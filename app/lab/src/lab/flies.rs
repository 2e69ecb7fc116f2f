//! The flies, Charles runs and ratings on disk, as the lab reads and changes them: a newborn
//! fly saved for the loaded brain, a fly renamed (its file and the name inside it), and each
//! player's measured rating looked up by what the player is (its content id), from the user's own
//! ladder or the one shipped with the flies. The Flies tab and the CLI are views over these.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use flychess_arena::bio::file::is_dopamine_fly;
pub use flychess_fly::fly::FlyMeta;

use anyhow::{Result, anyhow};

use flychess_brain::brain::Brain;
use flychess_brain::connectome::Connectome;

/// A newborn fly (untrained readout) of a brain, saved in the data folder as `name`: what the
/// Flies tab's "Build" and `flychess train --newborn` both write (the kill test kills the latter).
pub fn save_newborn(connectome: &Connectome, checksum: &str, brain: &Brain, data: &Path, name: &str) -> Result<PathBuf> {
    use flychess_fly::fly::Fly;
    flychess_fly::fly::check_name(name)?;
    let f = Fly {
        meta: FlyMeta {
            name: name.into(),
            kind: "newborn".into(),
            brain: connectome.provenance.label(),
            brain_checksum: checksum.to_string(),
            homeostasis: flychess_brain::calibrate::fingerprint(brain.homeostasis()),
            reading: flychess_fly::cache::Reading::Mean9To12,
            data: "none (untrained)".into(),
            train_positions: 0,
            val: None,
            hold: None,
            created: flychess_fly::fly::today(),
            teacher: None,
            positions_by_teacher: None,
        },
        readout: flychess_fly::readout::Readout::newborn(
            connectome.groups.descending.len(),
            flychess_fly::readout::Readout::default_steps(),
            1,
        ),
    };
    let path = flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"));
    f.save(&path)?;
    Ok(path)
}

/// Renames a fly of the data folder (its file and the name inside it): the fly is written whole
/// under its new name, then the old file goes. A rename stopped between the two (the app killed)
/// leaves the same fly under both names, and renaming it again finishes the job.
pub fn rename_fly(data: &Path, old: &str, new: &str) -> Result<()> {
    flychess_fly::fly::check_name(old)?;
    flychess_fly::fly::check_new_name(new)?;
    let to = flychess_brain::files::DataFolder::at(data).flies().join(format!("{new}.fly"));
    let from = flychess_brain::files::DataFolder::at(data).flies().join(format!("{old}.fly"));
    if !from.exists() && !to.exists() {
        return Err(anyhow!(
            "no fly named {old:?} in {} (only the data folder's own flies can be renamed)",
            from.parent().unwrap_or(data).display()
        ));
    }
    if to.exists() {
        if from.exists() && old != new && is_renamed_copy(&from, &to, new) {
            std::fs::remove_file(&from)?;
            return Ok(());
        }
        return Err(anyhow!("a fly called {new} exists"));
    }
    if flychess_arena::bio::file::is_dopamine_fly(&from) {
        let mut f = flychess_arena::bio::file::DopamineFly::load(&from)?;
        f.meta.name = new.to_string();
        f.save(&to)?;
    } else {
        let mut f = flychess_fly::fly::Fly::load(&from)?;
        f.meta.name = new.to_string();
        f.save(&to)?;
    }
    std::fs::remove_file(&from)?;
    Ok(())
}

/// Whether `to` is the fly of `from` under the name `new` and nothing else changed.
fn is_renamed_copy(from: &Path, to: &Path, new: &str) -> bool {
    use flychess_arena::bio::file::DopamineFly;
    use flychess_fly::fly::Fly;
    if is_dopamine_fly(from) {
        match (DopamineFly::load(from), DopamineFly::load(to)) {
            (Ok(mut a), Ok(b)) => {
                a.meta.name = new.to_string();
                a == b
            }
            _ => false,
        }
    } else {
        match (Fly::load(from), Fly::load(to)) {
            (Ok(mut a), Ok(b)) => {
                a.meta.name = new.to_string();
                a == b
            }
            _ => false,
        }
    }
}

/// The ratings the window shows: the user's own ladder (DATA/ratings.json, from `flychess rate`)
/// when there is one, else the ladder measured before the release and shipped with the flies.
/// (the report, where it came from.)
pub fn ratings_report(data: &Path) -> Option<(serde_json::Value, String)> {
    let read = |p: std::path::PathBuf| match read_ratings_file(&p) {
        Ok(v) => v.map(|v| (v, p)),
        Err(e) => {
            // Said once a process: the Flies tab asks often.
            static SAID: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<String>>> = std::sync::OnceLock::new();
            if SAID.get_or_init(Default::default).lock().is_ok_and(|mut s| s.insert(format!("{e:#}"))) {
                tracing::warn!("{e:#}");
            }
            None
        }
    };
    if let Some((v, p)) = read(data.join("ratings.json")) {
        return Some((v, format!("your ladder ({})", p.display())));
    }
    let (v, _) = read(flychess_brain::shipped::dir().join("ratings.json"))?;
    let when = v["date"].as_str().unwrap_or("?").to_string();
    Some((v, format!("the ladder shipped with the flies, measured on {when}")))
}

/// A ladder's ratings file: None when there is none, an error naming it when it is not one
/// (not JSON, or without its `ratings` list).
pub fn read_ratings_file(path: &Path) -> anyhow::Result<Option<serde_json::Value>> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow::anyhow!("{}: {e}", path.display())),
    };
    let v: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| anyhow::anyhow!("{}: not a ratings file (JSON: {e})", path.display()))?;
    if !v["ratings"].is_array() {
        return Err(anyhow::anyhow!("{}: not a ratings file (no list of ratings)", path.display()));
    }
    Ok(Some(v))
}

/// Each fly's measured rating as "1234 [1180, 1290]", by fly name: looked up by what the fly is
/// (its player id), so a fly retrained under an old name shows "unrated" until it is rated.
pub fn read_ratings(data: &Path) -> HashMap<String, String> {
    ratings_by_fly(data, ratings_report(data).as_ref())
}

/// `read_ratings` from a ratings report already read (`ratings_report`).
fn ratings_by_fly(data: &Path, report: Option<&(serde_json::Value, String)>) -> HashMap<String, String> {
    let mut by_id = HashMap::new();
    if let Some((v, _)) = report {
        for r in v["ratings"].as_array().into_iter().flatten() {
            if let (Some(id), Some(elo)) = (r["id"].as_str(), r["elo"].as_f64()) {
                let (low, high) = (r["low"].as_f64().unwrap_or(elo), r["high"].as_f64().unwrap_or(elo));
                by_id.insert(id.to_string(), format!("{elo:.0} [{low:.0}, {high:.0}]"));
            }
        }
    }
    let mut out = HashMap::new();
    for name in flychess_fly::fly::list(data) {
        let Ok(p) = flychess_fly::fly::find(&name, data) else { continue };
        let id = if flychess_arena::bio::file::is_dopamine_fly(&p) {
            flychess_arena::bio::file::DopamineFly::load(&p).map(|f| f.player_id())
        } else {
            flychess_fly::fly::Fly::load(&p).map(|f| f.player_id(None)).map_err(Into::into)
        };
        if let Some(r) = id.ok().and_then(|id| by_id.get(&id)) {
            out.insert(name.clone(), r.clone());
        }
        // The same fly with an aid, by the aid's id (a judge's by the weight chosen for it).
        if let Ok(f) = flychess_fly::fly::Fly::load(&p) {
            for suffix in crate::lab::AIDED_SUFFIXES {
                let aid = match flychess_arena::search::Aid::parse(suffix) {
                    Some(Ok(flychess_arena::search::Aid::Judge { .. })) => match flychess_arena::tuned::judged_weight(data, &f) {
                        Some(weight) => flychess_arena::search::Aid::Judge { weight },
                        None => continue,
                    },
                    Some(Ok(aid)) => aid,
                    _ => continue,
                };
                let Ok(e) = flychess_arena::players::Entrant::aided(flychess_arena::players::Entrant::fly(&f, None), aid, None) else {
                    continue;
                };
                if let Some(r) = by_id.get(&e.id()) {
                    out.insert(format!("{name}+{suffix}"), r.clone());
                }
            }
        }
    }
    // Charles by the content of its weights, under its player name.
    for (run, files, state) in flychess_charles::player::runs(data).into_iter().filter(|(_, _, s)| s.finished) {
        if let Some(r) = flychess_charles::player::content_id(&files, &state).ok().and_then(|id| by_id.get(&id)) {
            out.insert(flychess_arena::network::player_name(&run), r.clone());
        }
    }
    out
}

/// One row of the Flies tab.
#[derive(Clone)]
pub struct FlyCard {
    pub name: String,
    pub path: Result<PathBuf, String>,
    pub meta: Result<FlyMeta, String>,
    pub shipped: bool,
    /// A dopamine fly (read once with the card, not by the view every frame).
    pub dopamine: bool,
}

/// The Flies tab's rows and what they were read from: (name, size and modification time).
pub type FlyCards = (Vec<(String, Option<(u64, std::time::SystemTime)>)>, Vec<FlyCard>);

/// What a fly's card shows: a readout fly's metadata, or a dopamine fly's in the same columns
/// (its lessons as its positions; how it was taught and its last VAL pairs right on hover).
fn card_meta(path: &std::path::Path) -> Result<FlyMeta, String> {
    if !flychess_arena::bio::file::is_dopamine_fly(path) {
        return flychess_fly::fly::Fly::load(path).map(|f| f.meta).map_err(|e| e.to_string());
    }
    let f = flychess_arena::bio::file::DopamineFly::load(path).map_err(|e| e.to_string())?;
    let m = f.meta;
    let last = m.curve.last().map(|p| format!("; VAL pairs right {:.1} % after them", 100.0 * p.pairs_right)).unwrap_or_default();
    let taught = if m.mode == "games" {
        format!("{} games of its own", m.games)
    } else {
        format!("{} tutor lessons (Stockfish's move: sugar; another move: a shock)", m.lessons)
    };
    Ok(FlyMeta {
        name: m.name,
        // Short: the table's columns are as wide as their longest cell.
        kind: "dopamine".into(),
        brain: m.brain,
        brain_checksum: m.brain_checksum,
        homeostasis: m.homeostasis,
        reading: flychess_fly::cache::Reading::Step12,
        data: format!("{taught}{last}"),
        train_positions: m.lessons,
        val: None,
        hold: None,
        created: m.created,
        teacher: None,
        positions_by_teacher: None,
    })
}

/// Each fly's file size and modification time: the Flies tab reads its cards again only when these change.
pub fn card_stamps(names: &[String], data: &Path) -> Vec<(String, Option<(u64, std::time::SystemTime)>)> {
    names
        .iter()
        .map(|name| {
            let stamp = flychess_fly::fly::find(name, data)
                .ok()
                .and_then(|p| std::fs::metadata(p).ok())
                .and_then(|m| Some((m.len(), m.modified().ok()?)));
            (name.clone(), stamp)
        })
        .collect()
}

/// The Flies tab's rows: each fly's metadata read (and its file's checksum verified).
pub fn read_cards(names: &[String], data: &Path) -> Vec<FlyCard> {
    names
        .iter()
        .map(|name| {
            let path = flychess_fly::fly::find(name, data).map_err(|e| e.to_string());
            let meta = path.clone().and_then(|p| card_meta(&p));
            let shipped = path.as_ref().is_ok_and(|p| p.starts_with(flychess_fly::fly::shipped_dir()));
            let dopamine = path.as_ref().is_ok_and(|p| is_dopamine_fly(p));
            FlyCard { name: name.clone(), path, meta, shipped, dopamine }
        })
        .collect()
}

/// Deletes one of the user's flies.
pub fn delete_fly(data: &Path, name: &str) -> std::io::Result<()> {
    std::fs::remove_file(flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly")))
}

/// A fly's player id (its content), what its games and profiles are kept under.
pub fn player_id(name: &str, data: &Path) -> flychess_fly::Result<String> {
    flychess_fly::fly::find(name, data).and_then(|p| flychess_fly::fly::Fly::load(&p)).map(|f| f.player_id(None))
}

/// The flies, Charles runs and ratings on disk, and the players the brain `checksum` can field.
pub struct FlyLists {
    pub flies: Vec<String>,
    pub charles: Vec<String>,
    pub ratings: HashMap<String, String>,
    /// The ladder's whole ratings file and where it came from (`ratings_report`), for the Flies
    /// tab's tables.
    pub ratings_report: Option<(serde_json::Value, String)>,
    /// Its own flies (a fly of a control brain cannot play on this one), every finished Charles
    /// run, and each trained fly with Philidor's aids.
    pub playable: Vec<String>,
    /// The brain `playable` was made for (None: no brain yet, `playable` empty).
    pub checksum: Option<String>,
}

/// Reads everything `FlyLists` holds (every fly file opened and checked: call it off the UI thread).
pub fn read_lists(data: &Path, checksum: Option<String>) -> FlyLists {
    let flies = flychess_fly::fly::list(data);
    let charles = crate::lab::charles_players(data);
    let ratings_report = ratings_report(data);
    let ratings = ratings_by_fly(data, ratings_report.as_ref());
    let mut playable = Vec::new();
    if let Some(checksum) = &checksum {
        let mut aided = Vec::new();
        for name in &flies {
            let Ok(p) = flychess_fly::fly::find(name, data) else { continue };
            if is_dopamine_fly(&p) {
                if flychess_arena::bio::file::DopamineFly::load(&p).is_ok_and(|f| f.meta.brain_checksum == *checksum) {
                    playable.push(name.clone());
                }
                continue;
            }
            let Ok(f) = flychess_fly::fly::Fly::load(&p) else { continue };
            if f.meta.brain_checksum == *checksum {
                playable.push(name.clone());
                if f.meta.kind == "trained" {
                    aided.extend(crate::lab::AIDED_SUFFIXES.iter().map(|s| format!("{name}+{s}")));
                }
            }
        }
        playable.extend(charles.iter().cloned());
        playable.extend(aided);
    }
    FlyLists { flies, charles, ratings, ratings_report, playable, checksum }
}
