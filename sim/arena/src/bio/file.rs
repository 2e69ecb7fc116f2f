//! A dopamine fly on disk: a fly file (`NAME.fly` among the others, in `models/` or
//! `DATA/flies/`) of its own kind: `FLYBIO01`, u32 version, the header (JSON: which brain and
//! homeostasis, the constants and rule, how it was trained, its curve of pairs right), the plastic
//! strengths M as f32, sha256 of everything before. Saved atomically; a checkpoint is the file
//! itself, so a training run resumes from it. Refused when it belongs to another brain or when its
//! synapses do not match the brain's mushroom body.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::learn::Rule;
use super::{BioBrain, Constants};
use crate::error::{Error, Result};
use flychess_brain::container;

const MAGIC: &[u8; 8] = b"FLYBIO01";
const FORMAT_VERSION: u32 = 1;
/// The kind every dopamine fly's metadata names.
pub const KIND: &str = "dopamine";

/// One point of the training curve: pairs right on the monitor pairs after this many lessons.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub lessons: usize,
    pub pairs_right: f64,
    pub low: f64,
    pub high: f64,
    /// Mean dose of the batches since the last point (none at the start and in games mode).
    pub mean_dose: Option<f64>,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DopamineMeta {
    pub name: String,
    pub kind: String,
    pub brain: String,
    pub brain_checksum: String,
    /// Fingerprint of the dopamine fly's own homeostasis.
    pub homeostasis: String,
    pub constants: Constants,
    pub rule: Rule,
    /// "tutor" or "games".
    pub mode: String,
    /// Lessons (tutor) or games given so far.
    pub lessons: usize,
    pub games: usize,
    /// Seed of the lesson order and the bad moves.
    pub seed: u64,
    pub synapses: usize,
    pub curve: Vec<CurvePoint>,
    /// Seconds of training so far.
    pub seconds: f64,
    pub created: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DopamineFly {
    pub meta: DopamineMeta,
    /// The plastic strengths M, MBON by MBON as in `MushroomBody`.
    pub m: Vec<f32>,
}

impl DopamineFly {
    /// A dopamine fly that has learned nothing yet: M = M⁰.
    pub fn newborn(name: &str, bio: &BioBrain, brain_label: &str, rule: Rule, mode: &str, seed: u64) -> DopamineFly {
        DopamineFly {
            meta: DopamineMeta {
                name: name.to_string(),
                kind: KIND.into(),
                brain: brain_label.to_string(),
                brain_checksum: bio.brain_checksum.clone(),
                homeostasis: bio.homeostasis.clone(),
                constants: bio.constants,
                rule,
                mode: mode.to_string(),
                lessons: 0,
                games: 0,
                seed,
                synapses: bio.body.synapses(),
                curve: Vec::new(),
                seconds: 0.0,
                created: flychess_fly::fly::today(),
            },
            m: bio.body.m0.clone(),
        }
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        Ok(container::write(path, MAGIC, FORMAT_VERSION, &self.meta, &container::f32_bytes(self.m.iter().copied()))?)
    }

    pub fn load(path: &Path) -> Result<DopamineFly> {
        let (meta, body): (DopamineMeta, Vec<u8>) = container::read(path, MAGIC, FORMAT_VERSION, "dopamine fly")?;
        let m = container::f32_values(&body);
        if m.len() != meta.synapses || m.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::table(path, "the plastic synapses do not match the header"));
        }
        Ok(DopamineFly { meta, m })
    }

    /// Whether this fly can think on `bio`: the same brain, homeostasis, constants and synapses.
    pub fn check(&self, bio: &BioBrain) -> Result<()> {
        let m = &self.meta;
        if m.brain_checksum != bio.brain_checksum {
            return Err(Error::Invalid(format!(
                "dopamine fly {} belongs to brain {} ({}), not to this one",
                m.name,
                m.brain,
                &m.brain_checksum[..12.min(m.brain_checksum.len())]
            )));
        }
        if m.constants != bio.constants || m.synapses != bio.body.synapses() || self.m.iter().zip(&bio.body.m0).any(|(v, m0)| v > m0) {
            return Err(Error::Invalid(format!(
                "dopamine fly {} was made with another mushroom body ({} synapses, not {})",
                m.name,
                m.synapses,
                bio.body.synapses()
            )));
        }
        if m.homeostasis != bio.homeostasis {
            return Err(Error::Invalid(format!("dopamine fly {} was trained under another homeostasis", m.name)));
        }
        Ok(())
    }

    /// What plays, as a key (16 hex digits): the brain, the homeostasis, the constants and the
    /// plastic strengths — never the name.
    pub fn player_id(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut d = Sha256::new();
        d.update(b"dopamine fly player v1");
        d.update(self.meta.brain_checksum.as_bytes());
        d.update([0]);
        d.update(self.meta.homeostasis.as_bytes());
        d.update([0]);
        d.update(serde_json::to_vec(&self.meta.constants).expect("constants serialise"));
        for v in &self.m {
            d.update(v.to_le_bytes());
        }
        flychess_brain::files::hex(&d.finalize())[..16].to_string()
    }
}

/// Whether the file at `path` is a dopamine fly (by its magic; unreadable: false).
pub fn is_dopamine_fly(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == MAGIC
}

/// The dopamine flies of the brain with this checksum, each read once with its file: the shipped
/// ones first, then the user's (a user's fly shadows a shipped one of the same name), each folder
/// in name order.
pub fn dopamine_flies(brain_checksum: &str, data: &Path) -> Vec<(std::path::PathBuf, DopamineFly)> {
    let mut out: Vec<(std::path::PathBuf, DopamineFly)> = Vec::new();
    let shipped = flychess_fly::fly::shipped_flies().map(|(dir, _)| dir);
    for dir in [shipped, Some(flychess_brain::files::DataFolder::at(data).flies())].into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut found: Vec<std::path::PathBuf> =
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "fly") && is_dopamine_fly(p)).collect();
        found.sort();
        for p in found {
            if let Ok(f) = DopamineFly::load(&p)
                && f.meta.brain_checksum == brain_checksum
            {
                out.retain(|(_, g)| g.meta.name != f.meta.name);
                out.push((p, f));
            }
        }
    }
    out
}
