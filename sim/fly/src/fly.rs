//! A fly: a readout bound to one brain (by the brain file's checksum) and one homeostasis, with
//! where it came from and what it scored. Flies shipped with the app live in `models/`, the user's
//! in `DATA/flies/`. File: `FLYFLY01`, u32 version, u32 header length, header (JSON metadata),
//! the readout's weights and biases as f32, sha256 of everything before it.

use std::path::{Path, PathBuf};

use crate::cache::Reading;
use crate::error::{Error, Result};
use crate::readout::{OUTPUTS, Readout};
use crate::scoring::Metrics;
use flychess_brain::container;
use serde::{Deserialize, Serialize};

const MAGIC: &[u8; 8] = b"FLYFLY01";
const FORMAT_VERSION: u32 = 1;
/// What errors call a fly file.
const WHAT: &str = "fly";

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
    /// Who taught its readout, in words (issue 55); None: a fly made before flies said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teacher: Option<String>,
    /// Positions taught by each source: `master` (a game's move), `stockfish` (Stockfish's best
    /// move, `data label --dataset`), `stockfish_multipv` (the shipped rows' scored moves). A
    /// position taught by two sources counts in both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions_by_teacher: Option<std::collections::BTreeMap<String, usize>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fly {
    pub meta: FlyMeta,
    pub readout: Readout,
}

impl Fly {
    pub fn save(&self, path: &Path) -> Result<()> {
        let header = (&self.meta, self.readout.inputs, &self.readout.read_steps);
        let body = container::f32_bytes(self.readout.weights.iter().chain(&self.readout.bias).copied());
        Ok(container::write(path, MAGIC, FORMAT_VERSION, &header, &body)?)
    }

    /// Reads a fly file: refused before it is read when it is larger than any fly
    /// (`LARGEST_FLY`), else `from_bytes` on its bytes.
    pub fn load(path: &Path) -> Result<Fly> {
        let bytes = container::file_bytes(path, MAGIC, FORMAT_VERSION, WHAT, LARGEST_FLY)?;
        Fly::from_bytes(&bytes, path)
    }

    /// Reads a fly from the bytes of its file (read whole, or fetched by a page); `name` is what
    /// errors call it. Refused, with the reason, when over `LARGEST_FLY`, damaged, or when its
    /// weights do not fit the readout its header describes.
    pub fn from_bytes(bytes: &[u8], name: &Path) -> Result<Fly> {
        let ((meta, inputs, read_steps), body): ((FlyMeta, usize, Vec<usize>), &[u8]) =
            container::read_bytes(bytes, name, MAGIC, FORMAT_VERSION, WHAT, LARGEST_FLY)?;
        let values = container::f32_values(body);
        if Some(values.len()) != OUTPUTS.checked_mul(inputs).and_then(|w| w.checked_add(OUTPUTS)) {
            return Err(Error::table(name, "the weights do not match the readout's size"));
        }
        let (weights, bias) = values.split_at(OUTPUTS * inputs);
        Ok(Fly { meta, readout: Readout { inputs, read_steps, weights: weights.to_vec(), bias: bias.to_vec() } })
    }
}

/// The most bytes a fly file may have: a readout over 100,000 descending neurons with room for its
/// header (FlyWire's flies are 0.7 MB). Anything larger is refused before it is read.
pub const LARGEST_FLY: u64 = 64 << 20;

const CHECKPOINT_MAGIC: &[u8; 8] = b"FLYFIT01";
const CHECKPOINT_VERSION: u32 = 1;

/// A readout fit stopped after a pass: the best fly so far and the fit's state (`FitState`), in
/// one file (`runs/NAME/checkpoint.fit`, the project's checksummed container), so that a killed
/// run resumes exactly where it was: both or neither are read.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub fly: Fly,
    pub state: crate::scoring::FitState,
}

/// The checkpoint's header (the body is the readout's weights and biases, then Adam's bytes).
#[derive(Serialize, Deserialize)]
struct CheckpointHeader {
    meta: FlyMeta,
    inputs: usize,
    read_steps: Vec<usize>,
    passes: usize,
    learning_rate: f32,
    misses: usize,
    best_val: Metrics,
    adam_bytes: Option<usize>,
}

impl Checkpoint {
    pub fn save(&self, path: &Path) -> Result<()> {
        let (r, st) = (&self.fly.readout, &self.state);
        let header = CheckpointHeader {
            meta: self.fly.meta.clone(),
            inputs: r.inputs,
            read_steps: r.read_steps.clone(),
            passes: st.passes,
            learning_rate: st.learning_rate,
            misses: st.misses,
            best_val: st.best_val,
            adam_bytes: st.adam.as_ref().map(Vec::len),
        };
        let mut body = container::f32_bytes(r.weights.iter().chain(&r.bias).copied());
        body.extend_from_slice(st.adam.as_deref().unwrap_or_default());
        Ok(container::write(path, CHECKPOINT_MAGIC, CHECKPOINT_VERSION, &header, &body)?)
    }

    pub fn load(path: &Path) -> Result<Checkpoint> {
        let (h, body): (CheckpointHeader, Vec<u8>) = container::read(path, CHECKPOINT_MAGIC, CHECKPOINT_VERSION, "fit checkpoint")?;
        let weights = OUTPUTS.checked_mul(h.inputs).and_then(|w| w.checked_add(OUTPUTS)).and_then(|n| n.checked_mul(4));
        let adam = h.adam_bytes.unwrap_or(0);
        if weights.and_then(|w| w.checked_add(adam)) != Some(body.len()) {
            return Err(Error::table(path, "the weights and Adam's state do not match the checkpoint's sizes"));
        }
        let weights = weights.unwrap_or_default();
        let values = container::f32_values(&body[..weights]);
        let (w, bias) = values.split_at(OUTPUTS * h.inputs);
        let readout = Readout { inputs: h.inputs, read_steps: h.read_steps, weights: w.to_vec(), bias: bias.to_vec() };
        Ok(Checkpoint {
            fly: Fly { meta: h.meta, readout },
            state: crate::scoring::FitState {
                passes: h.passes,
                learning_rate: h.learning_rate,
                misses: h.misses,
                best_val: h.best_val,
                adam: h.adam_bytes.map(|_| body[weights..].to_vec()),
            },
        })
    }
}

impl Fly {
    /// What plays, as a key (16 hex digits): a hash of the readout's weights, biases and read
    /// steps, the brain it belongs to, the homeostasis it was fitted under, and the imagination
    /// weight (None: plain). Ladder games and ratings are stored under it, never under the name:
    /// a fly retrained or re-tuned under the same name is another player.
    pub fn player_id(&self, imagination: Option<f32>) -> String {
        use sha2::{Digest, Sha256};
        let mut d = Sha256::new();
        d.update(b"fly player v1");
        d.update(self.meta.brain_checksum.as_bytes());
        d.update([0]);
        d.update(self.meta.homeostasis.as_bytes());
        d.update([0]);
        d.update((self.readout.inputs as u64).to_le_bytes());
        for &s in &self.readout.read_steps {
            d.update((s as u64).to_le_bytes());
        }
        for v in self.readout.weights.iter().chain(&self.readout.bias) {
            d.update(v.to_le_bytes());
        }
        match imagination {
            None => d.update(b"plain"),
            Some(w) => {
                d.update(b"imagination");
                d.update(w.to_le_bytes());
            }
        }
        flychess_brain::files::hex(&d.finalize())[..16].to_string()
    }
}

/// The flies shipped with the project (embedded in the binary and written out by `shipped`).
#[cfg(feature = "native")]
pub fn shipped_dir() -> PathBuf {
    flychess_brain::shipped::dir().join("flies")
}

/// The folder of the flies this build ships (`shipped_dir`) and their names; None without
/// `native`: a page embeds no flies (it fetches them and reads them with `Fly::from_bytes`).
pub fn shipped_flies() -> Option<(PathBuf, Vec<&'static str>)> {
    #[cfg(feature = "native")]
    return Some((shipped_dir(), flychess_brain::shipped::fly_names()));
    #[cfg(not(feature = "native"))]
    None
}

/// Every fly on this machine by name: the data folder's (`DATA/flies`), then the shipped ones
/// not shadowed by a user's fly of the same name, each folder in name order.
pub fn list(data: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let shipped = shipped_flies().map(|(dir, _)| dir);
    for dir in [Some(flychess_brain::files::DataFolder::at(data).flies()), shipped].into_iter().flatten() {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut found: Vec<String> =
                entries.flatten().filter_map(|e| e.path().file_name()?.to_str()?.strip_suffix(".fly").map(str::to_owned)).collect();
            found.sort();
            for f in found {
                if !names.contains(&f) {
                    names.push(f);
                }
            }
        }
    }
    names
}

/// Whether `name` can name a fly file in `DATA/flies/` and be read back as a player's name: not
/// empty or blank, not hidden, none of the characters a file name cannot hold on Windows or Linux
/// (`/ \ : * ? " < > |`, control characters), and no `+` (which joins a player's switches and
/// aids to its name: `flywire+imagination`).
pub fn check_name(name: &str) -> Result<()> {
    const REFUSED: [char; 10] = ['/', '\\', ':', '*', '?', '"', '<', '>', '|', '+'];
    if name.trim().is_empty() || name.starts_with('.') || name.contains(REFUSED) || name.chars().any(char::is_control) {
        return Err(Error::Invalid(format!(
            "{name:?} cannot name a fly (not empty, not starting with a dot, none of / \\ : * ? \" < > | +)"
        )));
    }
    Ok(())
}

/// The first 12 characters of a checksum as the messages show it (the whole of a shorter one,
/// such as a damaged fly's: never a panic).
pub fn short_checksum(checksum: &str) -> &str {
    checksum.get(..12).unwrap_or(checksum)
}

/// Whether a user's new fly may be called `name` (training, a newborn, a rename): a name
/// (`check_name`) that no shipped fly has. A fly of the data folder under a shipped fly's name
/// would stand in for the shipped one wherever the name is read, so it is refused; the
/// developers' `--ship`, which replaces the shipped fly itself, checks `check_name` alone.
pub fn check_new_name(name: &str) -> Result<()> {
    check_name(name)?;
    if shipped_flies().is_some_and(|(_, names)| names.contains(&name)) {
        return Err(Error::Invalid(format!(
            "{name:?} is the name of a fly shipped with Fly Chess; a fly of yours under it would hide that one, so name yours otherwise (e.g. my-{name})"
        )));
    }
    Ok(())
}

/// Finds a fly by name, never by path (`check_name`: `../x` is refused, not read): a shipped
/// fly's name is always the shipped fly (a fly of the data folder under that name, made before
/// such names were refused, is said once and left to be renamed), any other name the data
/// folder's fly.
pub fn find(name: &str, data: &Path) -> Result<PathBuf> {
    check_name(name).map_err(|_| {
        Error::Invalid(format!("{name:?} is not a fly's name (a name, not a path: none of / \\ : * ? \" < > | +, not starting with a dot)"))
    })?;
    let file = format!("{name}.fly");
    let own_dir = flychess_brain::files::DataFolder::at(data).flies();
    let own = own_dir.join(&file);
    // (the shipped fly's path, whether the name is a shipped fly's, the shipped folder); None in a page.
    let shipped = shipped_flies().map(|(dir, names)| (dir.join(&file), names.contains(&name), dir));
    if let Some((path, true, _)) = &shipped
        && path.exists()
    {
        if own.exists() {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!(
                    "{} has a shipped fly's name; {name} is the shipped fly (rename yours: flychess rename {name} NEW)",
                    own.display()
                )
            });
        }
        return Ok(path.clone());
    }
    let looked_in = match &shipped {
        Some((_, _, dir)) => format!("{} and {}", own_dir.display(), dir.display()),
        None => own_dir.display().to_string(),
    };
    let shipped = shipped.map(|(path, _, _)| path);
    [Some(own), shipped]
        .into_iter()
        .flatten()
        .find(|p| p.exists())
        .ok_or_else(|| Error::Invalid(format!("no fly named {name:?} (looked in {looked_in})")))
}

/// The brain's own trained fly: among the shipped flies of the brain with this checksum (else the
/// user's), the one trained on the most positions (the same number: the newest by its `created`
/// date, then the first by name), so an older fly shipped beside a newer one for comparison
/// (`flywire-75k`, `flywire-1200k` beside `flywire`) is never taken for it. (name, path).
pub fn trained_for(brain_checksum: &str, data: &Path) -> Option<(String, PathBuf)> {
    let shipped = shipped_flies().map(|(dir, _)| dir);
    for dir in [shipped, Some(flychess_brain::files::DataFolder::at(data).flies())].into_iter().flatten() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "fly")).collect();
        found.sort();
        let mut best: Option<(usize, String, String, PathBuf)> = None;
        for p in found {
            if let Ok(f) = Fly::load(&p)
                && f.meta.brain_checksum == brain_checksum
                && f.meta.kind == "trained"
                && best.as_ref().is_none_or(|(most, newest, _, _)| (f.meta.train_positions, &f.meta.created) > (*most, newest))
            {
                best = Some((f.meta.train_positions, f.meta.created.clone(), f.meta.name.clone(), p));
            }
        }
        if let Some((_, _, name, path)) = best {
            return Some((name, path));
        }
    }
    None
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

    /// A page reads its fly from fetched bytes (issue 69): the fly of the same file read from its
    /// path, and damaged, truncated, oversized or foreign bytes, or weights that do not fit the
    /// header's readout (however large the header says it is), refused naming what was read.
    #[test]
    fn a_fly_from_its_bytes_is_the_fly_of_its_file_and_damage_is_refused() {
        let path = flychess_brain::shipped::repository_models().join("flywire.fly");
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(Fly::from_bytes(&bytes, Path::new("page.fly")).unwrap(), Fly::load(&path).unwrap());
        let refused = |bytes: &[u8]| Fly::from_bytes(bytes, Path::new("page.fly")).expect_err("refused").to_string();
        for end in [0, 16, 47, 48, bytes.len() / 2, bytes.len() - 1] {
            let e = refused(&bytes[..end]);
            assert!(e.contains("page.fly") && (e.contains("not a Fly Chess fly") || e.contains("damaged")), "{end}: {e}");
        }
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 0x10;
        assert!(refused(&flipped).contains("checksum mismatch"));
        let mut oversized = bytes[..16].to_vec();
        oversized.resize(LARGEST_FLY as usize + 1, 0);
        assert!(refused(&oversized).contains("more than a fly can be"));
        // Whole files whose weights do not fit: one value short, and a header claiming so many
        // inputs that the readout's size does not fit in a number.
        let dir = tempfile::tempdir().unwrap();
        let fly = Fly::load(&path).unwrap();
        let header = (&fly.meta, fly.readout.inputs, &fly.readout.read_steps);
        let short = container::f32_bytes(fly.readout.weights.iter().chain(&fly.readout.bias).skip(1).copied());
        for (what, header_inputs, body) in
            [("one value short", fly.readout.inputs, short), ("inputs past any size", usize::MAX / 2, Vec::new())]
        {
            let file = dir.path().join("x.fly");
            container::write(&file, MAGIC, FORMAT_VERSION, &(header.0, header_inputs, header.2), &body).unwrap();
            let e = refused(&std::fs::read(&file).unwrap());
            assert!(e.contains("page.fly") && e.contains("do not match the readout's size"), "{what}: {e}");
        }
    }

    /// A name is a name, never a path; a shipped fly's name is the shipped fly even where the
    /// data folder has a fly under it, and no new fly may take it (issue 71).
    #[test]
    fn a_name_is_never_a_path_and_a_shipped_name_stays_the_shipped_fly() {
        let data = tempfile::tempdir().unwrap();
        let flies = flychess_brain::files::DataFolder::at(data.path()).flies();
        std::fs::create_dir_all(&flies).unwrap();
        let shipped = find("flywire", data.path()).unwrap();
        assert!(shipped.starts_with(shipped_dir()), "{}", shipped.display());
        // A fly of the user's saved under the shipped name (as before the name was refused).
        let mut mine = Fly::load(&shipped).unwrap();
        mine.meta.name = "flywire".into();
        mine.meta.train_positions = 1;
        mine.save(&flies.join("flywire.fly")).unwrap();
        assert_eq!(find("flywire", data.path()).unwrap(), shipped, "the shipped fly stays reachable");
        assert!(check_new_name("flywire").unwrap_err().to_string().contains("shipped"));
        assert!(check_new_name("my-flywire").is_ok());
        // Paths are refused before anything is read, wherever the file is.
        mine.save(&data.path().join("evil.fly")).unwrap();
        for path in ["../evil", "../../evil", "/tmp/evil", "..\\evil", ".hidden"] {
            let e = find(path, data.path()).unwrap_err().to_string();
            assert!(e.contains("not a fly's name"), "{path}: {e}");
        }
        // A user's own fly under its own name is found in the data folder.
        mine.save(&flies.join("mine.fly")).unwrap();
        assert_eq!(find("mine", data.path()).unwrap(), flies.join("mine.fly"));
    }

    /// A brain's own fly is the one trained on the most positions, whatever the names' order
    /// (an older fly kept beside it, like `flywire-75k` beside `flywire`, sorts first); among
    /// as many positions, the newest.
    #[test]
    fn the_brains_own_fly_is_the_one_trained_on_the_most_positions() {
        let data = tempfile::tempdir().unwrap();
        let flies = flychess_brain::files::DataFolder::at(data.path()).flies();
        let save = |name: &str, kind: &str, positions: usize, created: &str| {
            let meta = FlyMeta {
                name: name.into(),
                kind: kind.into(),
                brain: "b".into(),
                brain_checksum: "not a shipped brain".into(),
                homeostasis: "h".into(),
                reading: Reading::Mean9To12,
                data: "d".into(),
                train_positions: positions,
                val: None,
                hold: None,
                created: created.into(),
                teacher: None,
                positions_by_teacher: None,
            };
            Fly { meta, readout: Readout::newborn(3, vec![11], 1) }.save(&flies.join(format!("{name}.fly"))).unwrap();
        };
        save("mine-75k", "trained", 75_000, "2026-12-05");
        save("mine", "trained", 1_200_000, "2026-12-05");
        save("mine-0", "newborn", 5_000_000, "2026-12-06");
        assert_eq!(trained_for("not a shipped brain", data.path()).unwrap().0, "mine");
        // An older fly kept beside it under a name that sorts first (`flywire-1200k` beside a
        // newer `flywire` trained on as many positions): the newer one.
        save("mine-1200k", "trained", 1_200_000, "2026-12-04");
        assert_eq!(trained_for("not a shipped brain", data.path()).unwrap().0, "mine", "a tie on positions: the newest");
        save("mine-also", "trained", 1_200_000, "2026-12-05");
        assert_eq!(trained_for("not a shipped brain", data.path()).unwrap().0, "mine-also", "a tie on both: the first by name");
        assert!(trained_for("another brain", data.path()).is_none());
    }

    /// A name is refused where it could not be a file on Windows or Linux, or could not be read
    /// back as a player (`+` joins switches); what the window's dialogs allow stays allowed.
    #[test]
    fn a_flys_name_must_be_a_file_name_and_a_players_name() {
        for good in ["flywire", "flywire-1200k", "my fly", "fly_2", "Fliege über alles"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "  ", ".hidden", "a/b", "a\\b", "a:b", "a*", "a?", "a\"b", "a<b", "a>b", "a|b", "flywire+imagination", "a\tb"] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("cannot name a fly"), "{bad:?}: {e}");
        }
    }

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
                teacher: None,
                positions_by_teacher: None,
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
        // The player's key follows the weights and the imagination weight, not the name.
        let mut renamed = fly.clone();
        renamed.meta.name = "other".into();
        assert_eq!(renamed.player_id(None), fly.player_id(None));
        let mut retrained = fly.clone();
        retrained.readout.weights[3] += 0.5;
        assert_ne!(retrained.player_id(None), fly.player_id(None));
        assert_ne!(fly.player_id(Some(1.0)), fly.player_id(None));
        assert_ne!(fly.player_id(Some(1.0)), fly.player_id(Some(2.0)));
        assert!(today().starts_with("20"));
    }
}
