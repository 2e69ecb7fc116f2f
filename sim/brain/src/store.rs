//! Where brains live on disk and when they are rebuilt. A brain is named by a `BrainSpec` (which
//! tables: FlyWire v783 (the shipped bundle, the default, or a downloaded release in a folder),
//! the stand-in from a seed, or the MaleCNS release in a folder; which control). Its file sits in
//! the user's data folder (`$FLYCHESS_DATA`, else the platform's data dir) under
//! `brains/NAME.brain`, and carries the fingerprint of its inputs; `ensure` loads it when the
//! fingerprint still matches and otherwise (re)generates the stand-in tables and rebuilds it,
//! reporting progress. This is the one entry point the CLI and the app use. All of that is the
//! `native` feature's; a page (wasm32), which cannot build brains, gets its brain ready from the
//! bytes of the files it fetched (`ready_brain_from_bytes`), never calibrating.

use std::path::{Path, PathBuf};

#[cfg(feature = "native")]
use sha2::{Digest, Sha256};

use crate::connectome::brain_file::{self, Loaded};
#[cfg(feature = "native")]
use crate::connectome::build::{self, BuildOptions, Progress, RULES_VERSION};
#[cfg(feature = "native")]
use crate::connectome::flywire::{self, FlyWirePaths};
#[cfg(feature = "native")]
use crate::connectome::release::{RELEASE, TablePaths};
#[cfg(feature = "native")]
use crate::connectome::synthetic::{self, GENERATOR_VERSION};
#[cfg(feature = "native")]
use crate::connectome::{Control, Source};
use crate::error::{Error, Result};
#[cfg(feature = "native")]
use crate::files::hex;

/// The user's data folder: `$FLYCHESS_DATA` when set, else e.g. `~/.local/share/flychess`
/// (`files::DataFolder::user` knows every path in it).
pub fn data_dir() -> PathBuf {
    crate::files::DataFolder::user().root().to_path_buf()
}

/// Which tables a brain is built from.
#[cfg(feature = "native")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tables {
    /// FlyWire v783 tables: the bundle shipped in the binary (None, the default brain), or a
    /// folder (the full release as `brain download --release flywire783` leaves it).
    FlyWire { dir: Option<PathBuf> },
    /// The synthetic stand-in, generated into the data folder on first use.
    Synthetic { seed: u64 },
    /// The MaleCNS release tables in this folder (as `brain download` leaves them).
    Release { dir: PathBuf },
}

#[cfg(feature = "native")]
impl Tables {
    /// The FlyWire tables' folder (the shipped bundle when none is given).
    fn flywire_dir(dir: &Option<PathBuf>) -> PathBuf {
        dir.clone().unwrap_or_else(crate::shipped::flywire_bundle)
    }
}

#[cfg(feature = "native")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrainSpec {
    pub tables: Tables,
    pub control: Control,
}

#[cfg(feature = "native")]
impl Default for BrainSpec {
    /// The embedded default: FlyWire v783 (the shipped bundle), no control.
    fn default() -> Self {
        BrainSpec { tables: Tables::FlyWire { dir: None }, control: Control::None }
    }
}

#[cfg(feature = "native")]
impl BrainSpec {
    /// The stand-in from its default seed, no control.
    pub fn standin() -> BrainSpec {
        BrainSpec { tables: Tables::Synthetic { seed: synthetic::DEFAULT_SEED }, control: Control::None }
    }

    /// File-name stem: "flywire783", "flywire783-full" (a downloaded release), "synthetic-s1",
    /// "malecns-v1.0", plus "-shuffled-s7" or "-lesion-optic-lobe".
    pub fn name(&self) -> String {
        let base = match &self.tables {
            Tables::FlyWire { dir: None } => format!("flywire{}", flywire::RELEASE),
            Tables::FlyWire { dir: Some(_) } => format!("flywire{}-tables", flywire::RELEASE),
            Tables::Synthetic { seed } => format!("synthetic-s{seed}"),
            Tables::Release { .. } => format!("malecns-{RELEASE}"),
        };
        let control = match &self.control {
            Control::None => String::new(),
            Control::ShuffledWiring { seed } => format!("-shuffled-s{seed}"),
            Control::Lesion { regions } => {
                let names: Vec<String> = regions.iter().map(|r| r.name().to_lowercase().replace(' ', "-")).collect();
                format!("-lesion-{}", names.join("+"))
            }
        };
        base + &control
    }

    pub fn brain_path(&self, data: &Path) -> PathBuf {
        crate::files::DataFolder::at(data).brains().join(format!("{}.brain", self.name()))
    }

    /// Where the tables are (for the stand-in: where they are generated). FlyWire's are in
    /// `flywire_paths`.
    pub fn table_paths(&self, data: &Path) -> TablePaths {
        match &self.tables {
            Tables::FlyWire { dir } => TablePaths::in_dir(&Tables::flywire_dir(dir)),
            Tables::Synthetic { seed } => {
                TablePaths::in_dir(&crate::files::DataFolder::at(data).connectome().join(format!("synthetic-g{GENERATOR_VERSION}-s{seed}")))
            }
            Tables::Release { dir } => TablePaths::in_dir(dir),
        }
    }

    fn source(&self, paths: &TablePaths) -> Source {
        match &self.tables {
            // Not used to build (flywire::build finds its own source); named for completeness.
            Tables::FlyWire { .. } => {
                Source::FlyWire { release: flywire::RELEASE.to_string(), within_hemispheres: true, layout_from_wiring: true }
            }
            Tables::Synthetic { seed } => Source::Synthetic { seed: *seed, generator_version: GENERATOR_VERSION },
            Tables::Release { .. } => Source::MaleCns {
                release: RELEASE.to_string(),
                weights_file: paths.weights.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
            },
        }
    }

    /// The fingerprint of everything the brain depends on: the rules, the control, and either the
    /// generator and seed, or each table's content (sha256, remembered per file version in
    /// DATA/table-digests.json): moving or re-downloading the tables keeps the brain and
    /// with it every fly, cache and homeostasis; changing a table's content makes another brain.
    pub fn inputs_key(&self, data: &Path) -> Result<String> {
        let memo = data.join("table-digests.json");
        let digest = |p: &Path| -> Result<String> {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(format!("{name} {}\n", crate::connectome::download::sha256_remembered(p, &memo)?))
        };
        let mut h = Sha256::new();
        h.update(format!("rules {RULES_VERSION}\ncontrol {:?}\n", self.control));
        // A lesion's key names every region it cuts (the optic lobe covers its neuropils), so a
        // brain lesioned under an older rule is rebuilt.
        if let Control::Lesion { regions } = &self.control {
            let cut: Vec<_> = regions.iter().flat_map(|r| r.covers()).collect();
            if cut.len() != regions.len() {
                h.update(format!("lesion cuts {cut:?}\n"));
            }
        }
        match &self.tables {
            Tables::FlyWire { dir } => {
                h.update(format!("flywire reader {}\n", flywire::READER_VERSION));
                let paths = FlyWirePaths::in_dir(&Tables::flywire_dir(dir));
                require_flywire(&paths)?;
                for p in paths.present() {
                    h.update(digest(p)?);
                }
            }
            Tables::Synthetic { seed } => h.update(format!("synthetic generator {GENERATOR_VERSION} seed {seed}\n")),
            Tables::Release { .. } => {
                let paths = self.table_paths(data);
                require_tables(&paths)?;
                h.update("malecns tables by content\n");
                for p in paths.all() {
                    h.update(digest(p)?);
                }
            }
        }
        Ok(hex(&h.finalize()))
    }
}

/// Every table in `paths` exists, else an error naming the first missing one and how to get it.
#[cfg(feature = "native")]
fn require<'a>(paths: impl IntoIterator<Item = &'a Path>, how: &str) -> Result<()> {
    match paths.into_iter().find(|p| !p.exists()) {
        Some(p) => Err(Error::Invalid(format!("{} is missing: {how}", p.display()))),
        None => Ok(()),
    }
}

#[cfg(feature = "native")]
fn require_flywire(paths: &FlyWirePaths) -> Result<()> {
    require(
        paths.required(),
        "run `flychess brain download --release flywire783` first, or point --tables at the folder that holds the FlyWire tables",
    )
}

#[cfg(feature = "native")]
fn require_tables(paths: &TablePaths) -> Result<()> {
    require(paths.all(), "run `flychess brain download` first, or point --tables at the folder that holds the release tables")
}

/// Where `brain download` puts the MaleCNS tables (and where the window looks for them).
#[cfg(feature = "native")]
pub fn malecns_dir(data: &Path) -> PathBuf {
    crate::files::DataFolder::at(data).connectome().join(format!("malecns-{RELEASE}"))
}

/// Where `brain download --release flywire783` puts the full FlyWire release (and where the
/// window looks for it).
#[cfg(feature = "native")]
pub fn flywire_full_dir(data: &Path) -> PathBuf {
    crate::files::DataFolder::at(data).connectome().join("flywire783")
}

/// Whether a full FlyWire release's required tables are all in `dir` (the window offers it then).
#[cfg(feature = "native")]
pub fn flywire_full_present(dir: &Path) -> bool {
    FlyWirePaths::in_dir(dir).required().iter().all(|p| p.exists())
}

/// Whether the MaleCNS tables are all in `dir` (the window offers the brain then).
#[cfg(feature = "native")]
pub fn malecns_present(dir: &Path) -> bool {
    crate::connectome::release::TablePaths::in_dir(dir).all().iter().all(|p| p.exists())
}

/// Downloads the MaleCNS tables into `dir` from `base_url` (the release's own by default), each
/// resumable and checked by size and sha256; `progress(file, done, total)` as bytes arrive.
/// The one download path for the CLI and the window. Returns each file's outcome.
#[cfg(feature = "native")]
pub fn download_malecns(
    dir: &Path,
    base_url: &str,
    attempts: u32,
    progress: &dyn Fn(&str, u64, Option<u64>),
) -> Result<Vec<(&'static str, crate::connectome::download::Outcome)>> {
    use crate::connectome::download::{Fetch, fetch};
    use crate::connectome::release::DOWNLOADS;
    let base = if base_url.ends_with('/') { base_url.to_string() } else { format!("{base_url}/") };
    let mut outcomes = Vec::new();
    for spec in DOWNLOADS {
        let f = Fetch {
            url: format!("{base}{}", spec.file),
            dest: dir.join(spec.file),
            bytes: spec.bytes,
            sha256: spec.sha256.map(str::to_owned),
            md5: None,
        };
        outcomes.push((spec.file, fetch(&f, attempts, &|done, total| progress(spec.file, done, total))?));
    }
    Ok(outcomes)
}

/// Held while a brain is prepared: threads of one process (the window's start-up, a training run,
/// parallel tests) must not generate, build or calibrate the same brain at the same time.
#[cfg(feature = "native")]
static PREPARING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(feature = "native")]
fn preparing() -> std::sync::MutexGuard<'static, ()> {
    PREPARING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Loads the brain of `spec`, building it first when its file is missing, damaged or stale.
#[cfg(feature = "native")]
pub fn ensure(spec: &BrainSpec, data: &Path, progress: Progress) -> Result<Loaded> {
    let _guard = preparing();
    ensure_unlocked(spec, data, progress)
}

#[cfg(feature = "native")]
fn ensure_unlocked(spec: &BrainSpec, data: &Path, progress: Progress) -> Result<Loaded> {
    let path = spec.brain_path(data);
    let key = spec.inputs_key(data)?;
    if path.exists() {
        match brain_file::read_header(&path) {
            Ok(h) if h.provenance.inputs_key == key => match brain_file::load(&path) {
                Ok(loaded) => return Ok(loaded),
                Err(e) => tracing::warn!("{e}; rebuilding"),
            },
            Ok(_) => tracing::info!("{} is out of date; rebuilding", path.display()),
            Err(e) => tracing::warn!("{e}; rebuilding"),
        }
    }
    let c = build_spec(spec, data, key, progress)?;
    let checksum = brain_file::save(&c, &path)?;
    Ok(Loaded { connectome: c, checksum, load_seconds: 0.0 })
}

/// Builds (never loads) the brain of `spec`, generating the stand-in tables when missing.
#[cfg(feature = "native")]
pub fn build_spec(spec: &BrainSpec, data: &Path, key: String, progress: Progress) -> Result<crate::connectome::Connectome> {
    if let Tables::FlyWire { dir } = &spec.tables {
        let paths = FlyWirePaths::in_dir(&Tables::flywire_dir(dir));
        require_flywire(&paths)?;
        return flywire::build(&paths, key, &spec.control, progress);
    }
    let paths = spec.table_paths(data);
    if let Tables::Synthetic { seed } = spec.tables {
        if paths.all().iter().any(|p| !p.exists()) {
            let dir = paths.annotations.parent().expect("tables are in a folder");
            synthetic::generate(dir, seed, progress)?;
        }
    } else {
        require_tables(&paths)?;
    }
    let options = BuildOptions { control: spec.control.clone(), ..BuildOptions::default() };
    build::build(&paths, spec.source(&paths), key, &options, progress)
}

/// A brain ready to think: its file loaded (built when needed) and its homeostasis measured (or
/// read back). `progress` sees the build stages, then "calibrating homeostasis" step by step.
#[cfg(feature = "native")]
pub fn ready_brain(
    spec: &BrainSpec,
    data: &Path,
    options: crate::calibrate::CalibrationOptions,
    progress: Progress,
) -> Result<(Loaded, crate::brain::Brain)> {
    let _guard = preparing();
    let loaded = ensure_unlocked(spec, data, progress)?;
    let mut brain = crate::brain::Brain::new(&loaded.connectome);
    let steps = crate::brain::STEPS as f64;
    let h = crate::calibrate::ensure(&brain, &spec.brain_path(data), &loaded.checksum, options, &|t| {
        progress("calibrating homeostasis", t as f64 / steps)
    })?;
    brain.set_homeostasis(h);
    Ok((loaded, brain))
}

/// What errors call the brain and homeostasis of `ready_brain_from_bytes` (they have no file).
pub const BRAIN_FROM_BYTES: &str = "brain (bytes)";
pub const HOMEOSTASIS_FROM_BYTES: &str = "homeostasis (bytes)";

/// A brain ready to think from the bytes of its brain file and of its homeostasis file (a page
/// fetches both): the brain verified and read (`brain_file::load_bytes`), then the homeostasis
/// verified, refused unless it was measured on this very brain with the window's options
/// (`CalibrationOptions::default()`), and set. It never calibrates: a homeostasis that does not
/// fit is an error, not a reason to measure one.
pub fn ready_brain_from_bytes(brain_bytes: &[u8], homeostasis_bytes: &[u8]) -> Result<(Loaded, crate::brain::Brain)> {
    let loaded = brain_file::load_bytes(brain_bytes, Path::new(BRAIN_FROM_BYTES))?;
    let neurons = loaded.connectome.neurons.len();
    let options = crate::calibrate::CalibrationOptions::default();
    let name = Path::new(HOMEOSTASIS_FROM_BYTES);
    let h = crate::calibrate::read_bytes(homeostasis_bytes, name, &loaded.checksum, neurons, options)?.ok_or_else(|| {
        Error::Invalid(format!(
            "{HOMEOSTASIS_FROM_BYTES}: measured on another brain, or with other options, than brain {}: it cannot be used with it",
            loaded.checksum.get(..16).unwrap_or(&loaded.checksum)
        ))
    })?;
    let mut brain = crate::brain::Brain::new(&loaded.connectome);
    brain.set_homeostasis(h);
    Ok((loaded, brain))
}
