//! What a fly's switches and aids were tuned to, kept in the data folder under the fly's player
//! id (a fly retrained under the same name starts untuned): imagination's weight
//! (DATA/imagination.json, `flychess imagine-tune`) and the judge's weight (DATA/judge.json,
//! chosen on VAL positions by `search::tune_judge` the first time a fly plays with the judge).
//! and habituation's decay and weight (DATA/habituation.json, `flychess habituation-tune`, with
//! the shipped fly's tuning shipped in models/habituation.json as the fallback).
//! Every front door that seats a player reads them here (`players::named`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::brain::Brain;
use crate::data::{Dataset, VAL, shipped_path};
use crate::error::{Error, Result};
use crate::fly::Fly;
use crate::search::{Evaluator, JUDGE_TUNING_POSITIONS, JudgeTuning, tune_judge};

/// The imagination weight `flychess imagine-tune` chose for this fly, or 1.0 when it has not
/// been tuned (or the file is unreadable: imagination then plays at its plain weight).
pub fn imagination(data: &Path, fly: &Fly) -> f32 {
    let Some(v) = std::fs::read(data.join("imagination.json")).ok().and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return 1.0;
    };
    match &v[fly.player_id(None)]["chosen"] {
        serde_json::Value::Number(n) => n.as_f64().unwrap_or(1.0) as f32,
        serde_json::Value::String(s) if s == "inf" => f32::INFINITY,
        _ => 1.0,
    }
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
    let dataset = Dataset::load(&shipped_path())?;
    let rows = &dataset.val()[..JUDGE_TUNING_POSITIONS.min(VAL)];
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tuning = tune_judge(Evaluator::fly(brain, &fly.readout, descending), rows, &|| {
        progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, rows.len())
    })?;
    let chosen = tuning.chosen;
    all.insert(fly.player_id(None), tuning);
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::files::write_atomically(&path, text.as_bytes())?;
    Ok(chosen)
}

/// The shipped flies' habituation tunings (`flychess habituation-tune`, kept in the repository).
const SHIPPED_HABITUATION: &[u8] = include_bytes!("../../models/habituation.json");

/// Habituation's decay and weight chosen on VAL games for this fly (DATA/habituation.json, else
/// the shipped tunings); None when it has not been tuned.
pub fn habituation(data: &Path, fly: &Fly) -> Option<crate::habituation::Habituation> {
    let id = fly.player_id(None);
    let read = |bytes: &[u8]| -> Option<crate::habituation::Habituation> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let h: crate::habituation::Habituation = serde_json::from_value(v[&id]["chosen"].clone()).ok()?;
        crate::habituation::Habituation::checked(h.decay, h.weight).ok()
    };
    std::fs::read(data.join("habituation.json")).ok().and_then(|b| read(&b)).or_else(|| read(SHIPPED_HABITUATION))
}

/// Keeps `chosen` for `fly` in DATA/habituation.json (beside other flies' tunings), with what
/// it was chosen from (`details`, e.g. the grids).
pub fn keep_habituation(
    data: &Path,
    fly: &Fly,
    chosen: crate::habituation::Habituation,
    details: serde_json::Value,
) -> Result<std::path::PathBuf> {
    let path = data.join("habituation.json");
    let mut all: BTreeMap<String, serde_json::Value> =
        std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let mut entry = details;
    entry["fly"] = serde_json::Value::String(fly.meta.name.clone());
    entry["chosen"] = serde_json::to_value(chosen).map_err(|e| Error::Invalid(e.to_string()))?;
    all.insert(fly.player_id(None), entry);
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::files::write_atomically(&path, text.as_bytes())?;
    Ok(path)
}

/// The shipped flies' two-glances tunings (`flychess glances-tune`, kept in the repository).
const SHIPPED_GLANCES: &[u8] = include_bytes!("../../models/glances.json");

/// Two glances' gain and choice chosen on VAL for this fly (DATA/glances.json, else the shipped
/// tunings); None when not tuned.
pub fn glances(data: &Path, fly: &Fly) -> Option<crate::glances::Glances> {
    let id = fly.player_id(None);
    let read = |bytes: &[u8]| -> Option<crate::glances::Glances> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let g: crate::glances::Glances = serde_json::from_value(v[&id]["chosen"].clone()).ok()?;
        crate::glances::Glances::checked(g.gain, g.among).ok()
    };
    std::fs::read(data.join("glances.json")).ok().and_then(|b| read(&b)).or_else(|| read(SHIPPED_GLANCES))
}

/// Keeps `chosen` for `fly` in DATA/glances.json with what it was chosen from (`details`).
pub fn keep_glances(data: &Path, fly: &Fly, chosen: crate::glances::Glances, details: serde_json::Value) -> Result<std::path::PathBuf> {
    let path = data.join("glances.json");
    let mut all: BTreeMap<String, serde_json::Value> =
        std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    let mut entry = details;
    entry["fly"] = serde_json::Value::String(fly.meta.name.clone());
    entry["chosen"] = serde_json::to_value(chosen).map_err(|e| Error::Invalid(e.to_string()))?;
    all.insert(fly.player_id(None), entry);
    let text = serde_json::to_string_pretty(&all).map_err(|e| Error::Invalid(e.to_string()))?;
    crate::files::write_atomically(&path, text.as_bytes())?;
    Ok(path)
}
