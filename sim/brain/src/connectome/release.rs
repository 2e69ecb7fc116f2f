//! The MaleCNS v1.0 release as published (SPEC §3.1): the three flat-connectome tables, their
//! sizes and sha256 sums, where to download them, and the column names the build reads. Berg et
//! al., Cell 189:5504-5526 (2026), doi:10.1016/j.cell.2026.08.015, CC BY 4.0.

use std::path::{Path, PathBuf};

pub const RELEASE: &str = "v1.0";
pub const BASE_URL: &str = "https://storage.googleapis.com/flyem-male-cns/v1.0/connectome-data/flat-connectome/";

/// One published table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableSpec {
    pub role: TableRole,
    pub file: &'static str,
    /// Exact size in bytes, when known.
    pub bytes: Option<u64>,
    /// sha256 (lowercase hex), when known.
    pub sha256: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableRole {
    Annotations,
    Transmitters,
    Weights,
}

pub const ANNOTATIONS: TableSpec = TableSpec {
    role: TableRole::Annotations,
    file: "body-annotations-male-cns-v1.0-minconf-0.5.feather",
    bytes: Some(14_483_314),
    sha256: Some("2177e246113e4cfbf1e7772ec37c6da1955ff22e8063d0b1f833101f99a9a3b2"),
};
pub const TRANSMITTERS: TableSpec = TableSpec {
    role: TableRole::Transmitters,
    file: "body-neurotransmitters-male-cns-v1.0.feather",
    bytes: Some(43_282_834),
    sha256: Some("95c9289220663abeb3409f3ad9e5a7f8a53f8093f5139d15502cd08da8879621"),
};
pub const WEIGHTS_FULL: TableSpec = TableSpec {
    role: TableRole::Weights,
    file: "connectome-weights-male-cns-v1.0-minconf-0.5.feather",
    bytes: Some(1_051_241_946),
    sha256: Some("e35da783d1c686b2b58b3b87cd6a403ae43bfcfba8bff28e08ef752c1a56afc1"),
};
/// The smaller table the seed used; accepted when a user already has it (its hash is not known).
pub const WEIGHTS_TRACED_ONLY: TableSpec = TableSpec {
    role: TableRole::Weights,
    file: "connectome-weights-male-cns-v1.0-minconf-0.5-traced-only.feather",
    bytes: None,
    sha256: None,
};

/// What `flychess brain download` fetches.
pub const DOWNLOADS: [TableSpec; 3] = [ANNOTATIONS, TRANSMITTERS, WEIGHTS_FULL];

/// Columns the build reads.
pub mod columns {
    pub const ANNOTATIONS_REQUIRED: &[&str] = &["bodyId", "type", "superclass", "status"];
    pub const ANNOTATIONS_OPTIONAL: &[&str] =
        &["class", "somaSide", "rootSide", "somaLocation", "tosomaLocation", "assignedOlHex1", "assignedOlHex2"];
    pub const TRANSMITTERS_REQUIRED: &[&str] = &["body"];
    pub const TRANSMITTERS_OPTIONAL: &[&str] = &["consensus_nt", "celltype_predicted_nt", "predicted_nt"];
    pub const WEIGHTS_REQUIRED: &[&str] = &["body_pre", "body_post", "weight"];
}

/// Voxel edge in µm (8 nm).
pub const VOXEL_UM: f64 = 0.008;

/// The three tables of one brain, wherever they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablePaths {
    pub annotations: PathBuf,
    pub transmitters: PathBuf,
    pub weights: PathBuf,
}

impl TablePaths {
    /// The release's file names in `dir`; the full weights table, else a traced-only one.
    pub fn in_dir(dir: &Path) -> TablePaths {
        let full = dir.join(WEIGHTS_FULL.file);
        let traced = dir.join(WEIGHTS_TRACED_ONLY.file);
        TablePaths {
            annotations: dir.join(ANNOTATIONS.file),
            transmitters: dir.join(TRANSMITTERS.file),
            weights: if !full.exists() && traced.exists() { traced } else { full },
        }
    }
    pub fn all(&self) -> [&Path; 3] {
        [&self.annotations, &self.transmitters, &self.weights]
    }
}
