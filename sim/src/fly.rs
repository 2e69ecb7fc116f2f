//! A fly: a readout bound to one brain (by the brain file's checksum) and one homeostasis, with
//! where it came from and what it scored. Flies shipped with the app live in `models/`, the user's
//! in `DATA/flies/`. File: `FLYFLY01`, u32 version, u32 header length, header (JSON metadata),
//! the readout's weights and biases as f32, sha256 of everything before it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cache::Reading;
use crate::connectome::brain_file::write_atomically;
use crate::error::{Error, Result};
use crate::readout::{Readout, OUTPUTS};
use crate::train::Metrics;

const MAGIC: &[u8; 8] = b"FLYFLY01";
const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlyMeta {
    pub name: String,
    /// "trained", "newborn", or a control ("shuffled wiring", ...).
    pub kind: String,
    pub brain: String,
    pub brain_checksum: String,
    pub homeostasis: String,
    pub reading: Reading,
    pub data: String,
    pub train_positions: usize,
    pub val: Option<Metrics>,
    pub hold: Option<Metrics>,
    /// UTC date the fly was made (YYYY-MM-DD).
    pub created: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fly {
    pub meta: FlyMeta,
    pub readout: Readout,
}

impl Fly {
    pub fn save(&self, path: &Path) -> Result<()> {
        let header = serde_json::to_vec_pretty(&(&self.meta, self.readout.inputs, &self.readout.read_steps)).expect("plain data");
        let mut buf = Vec::new();
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        buf.extend_from_slice(&(header.len() as u32).to_le_bytes());
        buf.extend_from_slice(&header);
        for v in self.readout.weights.iter().chain(&self.readout.bias) {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        let digest = Sha256::digest(&buf);
        buf.extend_from_slice(&digest);
        write_atomically(path, &buf)
    }

    pub fn load(path: &Path) -> Result<Fly> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let bad = |what: &str| Error::table(path, what.to_string());
        if bytes.len() < 48 || &bytes[..8] != MAGIC {
            return Err(bad("not a Fly Chess fly"));
        }
        if bytes[8..12] != FORMAT_VERSION.to_le_bytes() {
            return Err(bad("a fly of another format version"));
        }
        let (content, stored) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(content).as_slice() != stored {
            return Err(bad("checksum mismatch: the file is damaged"));
        }
        let len = u32::from_le_bytes(bytes[12..16].try_into().expect("4")) as usize;
        let (meta, inputs, read_steps): (FlyMeta, usize, Vec<usize>) =
            content.get(16..16 + len).and_then(|h| serde_json::from_slice(h).ok()).ok_or_else(|| bad("damaged header"))?;
        let values: Vec<f32> = content[16 + len..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4"))).collect();
        if values.len() != OUTPUTS * inputs + OUTPUTS {
            return Err(bad("the weights do not match the readout's size"));
        }
        let (weights, bias) = values.split_at(OUTPUTS * inputs);
        Ok(Fly { meta, readout: Readout { inputs, read_steps, weights: weights.to_vec(), bias: bias.to_vec() } })
    }
}

/// The flies shipped with the project.
pub fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("models")
}

/// Finds a fly by name: the user's flies first, then the shipped ones.
pub fn find(name: &str, data: &Path) -> Result<PathBuf> {
    let file = format!("{name}.fly");
    [data.join("flies").join(&file), shipped_dir().join(&file)]
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| Error::Invalid(format!("no fly named {name:?} (looked in {} and {})", data.join("flies").display(), shipped_dir().display())))
}

/// Today's date in UTC as YYYY-MM-DD (civil-from-days, no time-zone library needed).
pub fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() / 86_400).unwrap_or(0) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fly_round_trips_and_refuses_damage() {
        let fly = Fly {
            meta: FlyMeta {
                name: "t".into(),
                kind: "newborn".into(),
                brain: "b".into(),
                brain_checksum: "c".into(),
                homeostasis: "h".into(),
                reading: Reading::Mean9To12,
                data: "d".into(),
                train_positions: 0,
                val: None,
                hold: None,
                created: today(),
            },
            readout: Readout::newborn(7, vec![8, 9, 10, 11], 2),
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.fly");
        fly.save(&p).unwrap();
        assert_eq!(Fly::load(&p).unwrap(), fly);
        let mut b = std::fs::read(&p).unwrap();
        let n = b.len();
        b[n - 40] ^= 1;
        std::fs::write(&p, b).unwrap();
        assert!(Fly::load(&p).unwrap_err().to_string().contains("damaged"));
        assert_eq!(today().len(), 10);
        assert!(today().starts_with("20"));
    }
}
