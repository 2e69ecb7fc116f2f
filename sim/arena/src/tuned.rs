//! What a fly's switches and aids were tuned to, kept in the data folder under the fly's player
//! id (a fly retrained under the same name starts untuned): imagination's weight
//! (DATA/imagination.json, `flychess imagine-tune`), the judge's weight (DATA/judge.json,
//! chosen on VAL positions by `search::tune_judge` the first time a fly plays with the judge),
//! habituation's decay and weight (DATA/habituation.json, `flychess habituation-tune`) and two
//! glances' gain (DATA/glances.json, `flychess glances-tune`); the shipped flies' own tunings are
//! shipped in models/ (imagination.json, habituation.json, glances.json) as the fallback.
//! Every front door that seats a player reads them here (`players::named`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::search::{Evaluator, JUDGE_TUNING_POSITIONS, JudgeTuning, tune_judge};
use flychess_brain::brain::Brain;
use flychess_fly::data::{Dataset, VAL};
use flychess_fly::fly::Fly;

/// The imagination weight `flychess imagine-tune` chose for this fly (in DATA/imagination.json,
/// else in the shipped flies' tunings, models/imagination.json); None when it has not been tuned.
pub fn imagination_tuned(data: &Path, fly: &Fly) -> Option<f32> {
    chosen(data, "imagination.json", SHIPPED_IMAGINATION, fly, |w: serde_json::Value| match w {
        serde_json::Value::Number(n) => n.as_f64().map(|w| w as f32).ok_or_else(|| Error::Invalid(format!("imagination weight {n}"))),
        serde_json::Value::String(s) if s == "inf" => Ok(f32::INFINITY),
        other => Err(Error::Invalid(format!("imagination weight {other}"))),
    })
}

/// What an untuned fly's imagination plays at: the value after each move weighed as much as the
/// policy (SPEC's default).
pub const UNTUNED_IMAGINATION: f32 = 1.0;

/// The weight imagination plays at for this fly: the tuned one (`imagination_tuned`), else
/// `UNTUNED_IMAGINATION`, which is said (once per fly, as a warning: `untuned_imagination_words`).
pub fn imagination(data: &Path, fly: &Fly) -> f32 {
    imagination_tuned(data, fly).unwrap_or_else(|| {
        said_once(&format!("imagination {}", fly.player_id(None)), || tracing::warn!("{}", untuned_imagination_words(&fly.meta.name)));
        UNTUNED_IMAGINATION
    })
}

/// In words, for every door: an untuned fly's imagination plays at the plain weight.
pub fn untuned_imagination_words(fly_name: &str) -> String {
    format!(
        "imagination is not tuned for {fly_name}: it plays at weight {UNTUNED_IMAGINATION} (tune it on VAL with `flychess imagine-tune --fly {fly_name}`)"
    )
}

/// Runs `say` the first time `key` is met in this process (a warning said once, not every move).
fn said_once(key: &str, say: impl FnOnce()) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !said.iter().any(|k| k == key) {
        said.push(key.to_string());
        say();
    }
}

/// Keeps imagination's `chosen` weight for `fly` in DATA/imagination.json with `details` (the
/// whole tuning report).
pub fn keep_imagination(data: &Path, fly: &Fly, chosen: serde_json::Value, details: serde_json::Value) -> Result<std::path::PathBuf> {
    keep(data, "imagination.json", fly, chosen, details)
}

fn judge_tunings(data: &Path) -> BTreeMap<String, JudgeTuning> {
    std::fs::read(data.join("judge.json")).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

/// The judge's weight already chosen for this fly, if it has been.
pub fn judged_weight(data: &Path, fly: &Fly) -> Option<f32> {
    judge_tunings(data).get(&fly.player_id(None)).map(|t| t.chosen)
}

/// The judge's weight for this fly: the one kept, else chosen now on the first VAL positions
/// (`progress(done, total)` after each) and kept.
pub fn judge_weight(data: &Path, fly: &Fly, brain: &Brain, descending: &[u32], progress: &dyn Fn(usize, usize)) -> Result<f32> {
    if let Some(w) = judged_weight(data, fly) {
        return Ok(w);
    }
    let path = data.join("judge.json");
    let mut all = judge_tunings(data);
    let dataset = shipped_positions()?;
    let rows = &dataset.val()[..JUDGE_TUNING_POSITIONS.min(VAL)];
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tuning = tune_judge(Evaluator::fly(brain, &fly.readout, descending), rows, &|| {
        progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, rows.len())
    })?;
    let chosen = tuning.chosen;
    all.insert(fly.player_id(None), tuning);
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::Invalid(e.to_string()))?;
    flychess_brain::files::write_atomically(&path, text.as_bytes())?;
    Ok(chosen)
}

/// The shipped labelled positions, which the judge's weight is chosen on: a page (no `native`)
/// has none, and says so.
fn shipped_positions() -> Result<Dataset> {
    #[cfg(feature = "native")]
    return Ok(Dataset::load(&flychess_fly::data::shipped_path())?);
    #[cfg(not(feature = "native"))]
    Err(Error::Invalid("the judge's weight is chosen on the shipped positions, which only the desktop program has".into()))
}

/// The shipped flies' imagination, habituation and two-glances tunings (`flychess
/// imagine-tune`, `flychess habituation-tune`, `flychess glances-tune`, kept in the repository).
const SHIPPED_IMAGINATION: &[u8] = include_bytes!("../../../models/imagination.json");
const SHIPPED_HABITUATION: &[u8] = include_bytes!("../../../models/habituation.json");
const SHIPPED_GLANCES: &[u8] = include_bytes!("../../../models/glances.json");

/// The parameters chosen for this fly in DATA/`file` (`{player id: {"chosen": …}}`), else in the
/// shipped tunings, as `check` takes it; None when not tuned or when `check` refuses the kept value.
fn chosen<T: serde::de::DeserializeOwned, U>(
    data: &Path,
    file: &str,
    shipped: &[u8],
    fly: &Fly,
    check: impl Fn(T) -> Result<U>,
) -> Option<U> {
    let id = fly.player_id(None);
    let read = |bytes: &[u8]| -> Option<U> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        check(serde_json::from_value(v[&id]["chosen"].clone()).ok()?).ok()
    };
    let path = data.join(file);
    let kept = std::fs::read(&path).ok();
    // A kept file that is not JSON at all is damage: said (once), and the shipped tunings used.
    if let Some(Err(e)) = kept.as_ref().map(|b| serde_json::from_slice::<serde_json::Value>(b)) {
        said_once(&path.display().to_string(), || {
            tracing::warn!("{} cannot be read ({e}): the tunings kept there are not used; the shipped ones are", path.display())
        });
    }
    kept.and_then(|b| read(&b)).or_else(|| read(shipped))
}

/// Keeps `value` as this fly's choice in DATA/`file` (beside other flies'), with what it was
/// chosen from (`details`, e.g. the grids). Returns the file.
fn keep<T: serde::Serialize>(data: &Path, file: &str, fly: &Fly, value: T, details: serde_json::Value) -> Result<std::path::PathBuf> {
    let path = data.join(file);
    let mut all: BTreeMap<String, serde_json::Value> =
        std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let mut entry = details;
    entry["fly"] = serde_json::Value::String(fly.meta.name.clone());
    entry["chosen"] = serde_json::to_value(value).map_err(|e| Error::Invalid(e.to_string()))?;
    all.insert(fly.player_id(None), entry);
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::Invalid(e.to_string()))?;
    flychess_brain::files::write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// Habituation's decay and weight chosen on VAL games for this fly (DATA/habituation.json, else
/// the shipped tunings); None when it has not been tuned.
pub fn habituation(data: &Path, fly: &Fly) -> Option<crate::habituation::Habituation> {
    chosen(data, "habituation.json", SHIPPED_HABITUATION, fly, |h: crate::habituation::Habituation| {
        crate::habituation::Habituation::checked(h.decay, h.weight)
    })
}

/// Keeps habituation's `chosen` parameters for `fly` in DATA/habituation.json with `details`.
pub fn keep_habituation(
    data: &Path,
    fly: &Fly,
    chosen: crate::habituation::Habituation,
    details: serde_json::Value,
) -> Result<std::path::PathBuf> {
    keep(data, "habituation.json", fly, chosen, details)
}

/// Two glances' gain and choice chosen on VAL for this fly (DATA/glances.json, else the shipped
/// tunings); None when not tuned.
pub fn glances(data: &Path, fly: &Fly) -> Option<crate::glances::Glances> {
    chosen(data, "glances.json", SHIPPED_GLANCES, fly, |g: crate::glances::Glances| crate::glances::Glances::checked(g.gain, g.among))
}

/// Keeps two glances' `chosen` parameters for `fly` in DATA/glances.json with `details`.
pub fn keep_glances(data: &Path, fly: &Fly, chosen: crate::glances::Glances, details: serde_json::Value) -> Result<std::path::PathBuf> {
    keep(data, "glances.json", fly, chosen, details)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tuning shipped in models/ is a shipped fly's (a re-shipped fly plays under a new
    /// player id, so a tuning left under the old id would silently stop applying), the shipped
    /// default fly `flywire` has all three, and a fresh install (an empty data folder) plays with
    /// what was shipped.
    #[test]
    fn every_shipped_tuning_is_a_shipped_flys_and_is_read_without_a_data_folder() {
        let empty = tempfile::tempdir().unwrap();
        let flies: Vec<Fly> = std::fs::read_dir(flychess_fly::fly::shipped_dir())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "fly"))
            .filter_map(|p| Fly::load(&p).ok())
            .collect();
        let default = flies.iter().find(|f| f.meta.name == "flywire").expect("a shipped fly named flywire");
        for (file, bytes) in
            [("imagination.json", SHIPPED_IMAGINATION), ("habituation.json", SHIPPED_HABITUATION), ("glances.json", SHIPPED_GLANCES)]
        {
            let all: BTreeMap<String, serde_json::Value> = serde_json::from_slice(bytes).unwrap();
            assert!(all.contains_key(&default.player_id(None)), "models/{file} has no tuning for the shipped flywire fly");
            for (id, entry) in &all {
                let fly = flies
                    .iter()
                    .find(|f| &f.player_id(None) == id)
                    .unwrap_or_else(|| panic!("models/{file}: {id} ({}) is no shipped fly's", entry["fly"]));
                match file {
                    "imagination.json" => {
                        assert_eq!(imagination(empty.path(), fly), entry["chosen"].as_f64().unwrap() as f32, "{file}: {id}")
                    }
                    "habituation.json" => assert!(habituation(empty.path(), fly).is_some(), "{file}: {id}"),
                    _ => assert!(glances(empty.path(), fly).is_some(), "{file}: {id}"),
                }
            }
        }
    }
}
