//! What ships inside the binary: the labelled positions (`sim/brain/data/positions.flyd`) and the
//! human test (`human-test.flyd`), the default
//! brain's tables (the FlyWire v783 bundle, `sim/brain/data/flywire783-hemispheres/`, with its README
//! and CC BY-NC 4.0 licence), the real column map of the right eye (`flywire783-columns/`), the shipped flies (`models/*.fly`) and Charles (`models/charles/`), embedded at build time. On first use in a process they are written out
//! once into a folder of the user's cache named by their content (`…/flychess/shipped-HASH/`), so
//! every reader that takes a path — datasets, flies, the Flies tab — works the same from an
//! installed binary as from the repository, and a newer build never reads an older build's copy.
//! Shipping a new fly (`flychess train --ship`) writes into the repository's `models/`, which the
//! next build embeds.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::files::{hex, write_atomically};

/// (path inside the shipped folder, contents).
const FILES: &[(&str, &[u8])] = &[
    ("positions.flyd", include_bytes!("../data/positions.flyd")),
    // The human test: one position from each of 6,144 master games no row above came from, with
    // the move played (`flychess data games --positions 0`; HOLD 4,096, VAL 2,048).
    ("human-test.flyd", include_bytes!("../data/human-test.flyd")),
    ("flywire783-hemispheres/README.md", include_bytes!("../data/flywire783-hemispheres/README.md")),
    ("flywire783-hemispheres/LICENSE.md", include_bytes!("../data/flywire783-hemispheres/LICENSE.md")),
    ("flywire783-hemispheres/classification.feather", include_bytes!("../data/flywire783-hemispheres/classification.feather")),
    ("flywire783-hemispheres/neurons.feather", include_bytes!("../data/flywire783-hemispheres/neurons.feather")),
    (
        "flywire783-hemispheres/consolidated_cell_types.feather",
        include_bytes!("../data/flywire783-hemispheres/consolidated_cell_types.feather"),
    ),
    ("flywire783-hemispheres/connections.feather", include_bytes!("../data/flywire783-hemispheres/connections.feather")),
    // The real column map of the right eye (Matsliah et al. 2024), against which `brain info`
    // checks the eye recovered from the wiring.
    ("flywire783-columns/README.md", include_bytes!("../data/flywire783-columns/README.md")),
    ("flywire783-columns/LICENSE.md", include_bytes!("../data/flywire783-columns/LICENSE.md")),
    ("flywire783-columns/column_assignment.csv.gz", include_bytes!("../data/flywire783-columns/column_assignment.csv.gz")),
    ("flies/flywire.fly", include_bytes!("../../../models/flywire.fly")),
    // The default brain's first fly (75,329 positions) and its second (1.2 M positions taught by
    // the master's move, shipped 2026-12-04 to 12-05), kept to compare with (`duel flywire
    // flywire-75k`, `eval --against flywire-1200k`); the brain's own fly is the one trained on the
    // most positions, the newest among as many (`fly::trained_for`).
    ("flies/flywire-75k.fly", include_bytes!("../../../models/flywire-75k.fly")),
    ("flies/flywire-1200k.fly", include_bytes!("../../../models/flywire-1200k.fly")),
    ("flies/flywire-newborn.fly", include_bytes!("../../../models/flywire-newborn.fly")),
    // The dopamine fly (`flychess bio train --name flywire-dopamine --lessons 32000`).
    ("flies/flywire-dopamine.fly", include_bytes!("../../../models/flywire-dopamine.fly")),
    // Its untrained mushroom body's figures on the default evaluation (`flychess bio eval`): the
    // ceiling line of the Train tab on a fresh install; the file name is its content key.
    ("bio/baseline-8083604070b02881.json", include_bytes!("../../../models/flywire-dopamine.baseline.json")),
    ("flies/backprop.fly", include_bytes!("../../../models/backprop.fly")),
    ("flies/newborn.fly", include_bytes!("../../../models/newborn.fly")),
    // Charles, the transformer that never was a fly (`flychess charles train --name charles
    // --positions 8192`): its weights and its run's record, under the run name `charles`.
    ("charles/charles/model.bpk", include_bytes!("../../../models/charles/model.bpk")),
    ("charles/charles/state.json", include_bytes!("../../../models/charles/state.json")),
    // The ladder the shipped flies were rated on (`flychess rate --games 20`), shown until the
    // user runs their own.
    ("ratings.json", include_bytes!("../../../models/ratings.json")),
];

/// The names of the shipped flies (`models/*.fly` as this build embeds them).
pub fn fly_names() -> Vec<&'static str> {
    FILES.iter().filter_map(|(name, _)| name.strip_prefix("flies/")?.strip_suffix(".fly")).collect()
}

/// The shipped FlyWire v783 bundle (connections within each hemisphere), written out.
pub fn flywire_bundle() -> PathBuf {
    dir().join("flywire783-hemispheres")
}

/// The real column map of the right eye (`flywire783-columns/column_assignment.csv.gz`), written out.
pub fn column_map() -> PathBuf {
    dir().join("flywire783-columns").join("column_assignment.csv.gz")
}

/// The repository's `models/` (where `--ship` writes; meaningful on a developer's checkout).
pub fn repository_models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join("models")
}

fn content_name() -> String {
    let mut d = Sha256::new();
    for (name, bytes) in FILES {
        d.update(name.as_bytes());
        d.update((bytes.len() as u64).to_le_bytes());
        d.update(bytes);
    }
    format!("shipped-{}", &hex(&d.finalize())[..12])
}

/// Writes the embedded files under `root/shipped-HASH/` where missing or not byte for byte the
/// embedded ones (a damaged copy is written again, with a warning naming it: a bit flipped in a
/// shipped fly must not make it another fly, nor fail over to one); the folder, or the first error.
pub fn materialise(root: &Path) -> Result<PathBuf> {
    let dir = root.join(content_name());
    for (name, bytes) in FILES {
        let path = dir.join(name);
        match same_bytes(&path, bytes) {
            Some(true) => continue,
            Some(false) => tracing::warn!("{} was damaged (not the bytes this build ships); written again", path.display()),
            None => {}
        }
        write_atomically(&path, bytes)?;
    }
    Ok(dir)
}

/// Whether the file at `path` holds exactly `bytes` (None: there is no such file to read), read
/// in pieces (the connection table is tens of megabytes).
fn same_bytes(path: &Path, bytes: &[u8]) -> Option<bool> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    if f.metadata().ok()?.len() != bytes.len() as u64 {
        return Some(false);
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    loop {
        let n = match f.read(&mut buf) {
            Ok(n) => n,
            Err(_) => return Some(false),
        };
        if n == 0 {
            return Some(at == bytes.len());
        }
        if bytes.get(at..at + n) != Some(&buf[..n]) {
            return Some(false);
        }
        at += n;
    }
}

/// The shipped folder of this build (written out on first use: the user's cache folder, else the
/// temporary folder). When neither can be written, the folder is named all the same and readers
/// report the missing file.
pub fn dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // A portable copy keeps these in its own folder too.
        let portable = crate::files::portable_folder().map(|d| d.join("shipped"));
        let cache = directories::ProjectDirs::from("org", "flychess", "flychess").map(|p| p.cache_dir().to_path_buf());
        let roots: Vec<PathBuf> = portable.into_iter().chain(cache).chain([std::env::temp_dir().join("flychess")]).collect();
        let mut last = None;
        for root in &roots {
            match materialise(root) {
                Ok(dir) => return dir,
                Err(e) => last = Some((root.clone(), e)),
            }
        }
        if let Some((root, e)) = last {
            tracing::error!("could not write the shipped positions and flies under {}: {e}", root.display());
        }
        roots[0].join(content_name())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_files_come_out_whole_and_once() {
        let root = tempfile::tempdir().unwrap();
        let dir = materialise(root.path()).unwrap();
        for (name, bytes) in FILES {
            assert_eq!(std::fs::read(dir.join(name)).unwrap(), *bytes, "{name}");
        }
        // A damaged copy (wrong size, or one bit flipped) is written again; a whole one is left alone.
        std::fs::write(dir.join("flies/newborn.fly"), b"torn").unwrap();
        let mut flipped = std::fs::read(dir.join("flies/flywire.fly")).unwrap();
        flipped[1000] ^= 0x10;
        std::fs::write(dir.join("flies/flywire.fly"), &flipped).unwrap();
        let before = std::fs::metadata(dir.join("positions.flyd")).unwrap().modified().unwrap();
        assert_eq!(materialise(root.path()).unwrap(), dir);
        let newborn = FILES.iter().find(|f| f.0 == "flies/newborn.fly").unwrap();
        assert_eq!(std::fs::read(dir.join("flies/newborn.fly")).unwrap().len(), newborn.1.len());
        let flywire = FILES.iter().find(|f| f.0 == "flies/flywire.fly").unwrap();
        assert!(std::fs::read(dir.join("flies/flywire.fly")).unwrap() == flywire.1, "the bit-flipped fly is written again");
        assert_eq!(std::fs::metadata(dir.join("positions.flyd")).unwrap().modified().unwrap(), before);
    }
}
