//! The connectome as the model uses it: neurons with their annotations, the incoming connections
//! of every neuron as CSR (sender, synapse count, initial strength), the eye map, and the named
//! groups (descending neurons, Kenyon cells, MBONs with valence, PAM and PPL1). Submodules read the
//! MaleCNS release (`feather`, `release`, `download`) and FlyWire's (`flywire`, with the eye
//! recovered from the wiring in `retina` and the cloud's layout in `layout`), apply the rules both
//! share (`rules`, `build`), make the synthetic stand-in in the MaleCNS schema (`synthetic`) and
//! save/load the result as one versioned, checksummed brain file (`brain_file`). `info`
//! summarises a built brain for `flychess brain info`.

pub mod brain_file;
#[cfg(feature = "native")]
pub mod build;
pub mod column_map;
#[cfg(feature = "native")]
pub mod download;
#[cfg(feature = "native")]
pub mod feather;
#[cfg(feature = "native")]
pub mod flywire;
#[cfg(feature = "native")]
pub mod flywire_release;
pub mod layout;
#[cfg(feature = "native")]
pub mod release;
pub mod retina;
pub mod rules;
#[cfg(feature = "native")]
pub mod synthetic;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::eye::Eye;
use rules::{Region, Side, Transmitter};

/// Where the tables came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// The generated stand-in (`synthetic` module), from a seed.
    Synthetic { seed: u64, generator_version: u32 },
    /// The MaleCNS v1.0 release tables; `weights_file` says full or traced-only.
    MaleCns { release: String, weights_file: String },
    /// FlyWire release tables: the shipped bundle holds the connections within each hemisphere
    /// only; without positions, the cloud's layout is made from the wiring.
    FlyWire { release: String, within_hemispheres: bool, layout_from_wiring: bool },
}

/// A control brain made through the same path: which connections there are changes before the
/// strengths are worked out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Control {
    #[default]
    None,
    /// Receiving ends of all connections handed out again at random (self-loops dropped).
    ShuffledWiring { seed: u64 },
    /// Every connection whose sender is in one of these regions dropped.
    Lesion { regions: Vec<Region> },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: Source,
    pub control: Control,
    /// Fingerprint of the inputs and rules; a brain file is rebuilt when this changes.
    pub inputs_key: String,
}

impl Provenance {
    /// "synthetic stand-in (seed 1)" or "MaleCNS v1.0", with the control if any.
    pub fn label(&self) -> String {
        let base = match &self.source {
            Source::Synthetic { seed, .. } => format!("synthetic stand-in (seed {seed})"),
            Source::MaleCns { release, .. } => format!("MaleCNS {release}"),
            Source::FlyWire { release, within_hemispheres: true, .. } => {
                format!("FlyWire v{release}, within hemispheres (≈85 % of connections)")
            }
            Source::FlyWire { release, .. } => format!("FlyWire v{release}"),
        };
        match &self.control {
            Control::None => base,
            Control::ShuffledWiring { seed } => format!("{base}, shuffled wiring (seed {seed})"),
            Control::Lesion { regions } => {
                let names: Vec<&str> = regions.iter().map(|r| r.name()).collect();
                format!("{base}, lesion: {}", names.join(", "))
            }
        }
    }
    pub fn is_synthetic(&self) -> bool {
        matches!(self.source, Source::Synthetic { .. })
    }
    /// Where the cloud's positions come from, for the viewer and the About tab.
    pub fn positions_label(&self) -> &'static str {
        match self.source {
            Source::FlyWire { layout_from_wiring: true, .. } => "layout from wiring (the release has no positions)",
            Source::FlyWire { layout_from_wiring: false, .. } => {
                "the release's own points (FlyWire Codex coordinates; a neuron without one among its partners)"
            }
            Source::Synthetic { .. } => "generated with the stand-in",
            _ => "cell-body positions of the release",
        }
    }
}

/// Per-neuron annotations, one entry per neuron in every vector, neurons ordered by body id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Neurons {
    pub body_id: Vec<i64>,
    /// Indices into `names` for type, class and superclass (0 = "").
    pub cell_type: Vec<u32>,
    pub class: Vec<u32>,
    pub superclass: Vec<u32>,
    pub names: Vec<String>,
    pub side: Vec<Side>,
    pub region: Vec<Region>,
    /// Cell-body position in µm; NaN when the release has none.
    pub soma_um: Vec<[f32; 3]>,
    pub transmitter: Vec<Transmitter>,
    /// +1 excites, −1 inhibits (the sign of everything the neuron sends).
    pub sign: Vec<i8>,
}

impl Neurons {
    pub fn len(&self) -> usize {
        self.body_id.len()
    }
    pub fn is_empty(&self) -> bool {
        self.body_id.is_empty()
    }
    pub fn type_name(&self, i: usize) -> &str {
        &self.names[self.cell_type[i] as usize]
    }
    pub fn class_name(&self, i: usize) -> &str {
        &self.names[self.class[i] as usize]
    }
    pub fn superclass_name(&self, i: usize) -> &str {
        &self.names[self.superclass[i] as usize]
    }
    pub fn has_soma(&self, i: usize) -> bool {
        !self.soma_um[i][0].is_nan()
    }
}

/// Incoming connections of every neuron, compressed sparse rows: the inputs of neuron `j` are
/// entries `row_start[j]..row_start[j + 1]`, sorted by sender.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Csr {
    pub row_start: Vec<u32>,
    pub pre: Vec<u32>,
    pub synapses: Vec<u32>,
    /// softplus(θ⁰): the log-share strength (always > 0; the sign is the sender's).
    pub strength: Vec<f32>,
}

impl Csr {
    pub fn len(&self) -> usize {
        self.pre.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pre.is_empty()
    }
    pub fn row(&self, j: usize) -> std::ops::Range<usize> {
        self.row_start[j] as usize..self.row_start[j + 1] as usize
    }
}

/// The named groups the readout, the dopamine fly and the viewer need.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub descending: Vec<u32>,
    pub kenyon: Vec<u32>,
    pub mbon: Vec<u32>,
    /// Per MBON: +1 approach (more PPL1 than PAM input), −1 avoid (more PAM), else by transmitter.
    pub mbon_valence: Vec<i8>,
    pub pam: Vec<u32>,
    pub ppl1: Vec<u32>,
}

/// A built brain: what the brain file holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Connectome {
    pub provenance: Provenance,
    pub neurons: Neurons,
    pub inputs: Csr,
    pub eye: Eye,
    pub groups: Groups,
    /// Seconds the build from tables took (kept with the file, shown by `brain info`).
    pub build_seconds: f64,
}

/// The summary `flychess brain info --json` prints.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Info {
    pub source: String,
    pub synthetic: bool,
    pub neurons: usize,
    pub connections: usize,
    pub synapses: u64,
    pub with_soma: usize,
    pub photoreceptors: u32,
    pub photoreceptors_placed: usize,
    pub descending: usize,
    pub kenyon: usize,
    pub mbon: usize,
    pub mbon_approach: usize,
    pub mbon_avoid: usize,
    pub pam: usize,
    pub ppl1: usize,
    pub regions: BTreeMap<String, usize>,
    pub min_typed_cells_per_square: u32,
    pub max_typed_cells_per_square: u32,
    /// Fewest synapses from a placed photoreceptor to any descending neuron (None: unreachable).
    pub eye_to_descending_shortest_path: Option<u32>,
    /// Share of neurons within 4 synapses of the eye.
    pub reached_from_eye_within_4: f64,
    pub excitatory_share: f64,
    pub build_seconds: f64,
    /// Where the cloud's positions come from ("layout from wiring" for FlyWire's bundle).
    pub positions: String,
    /// Eye recovered from the wiring (FlyWire): shared partners of columns that are neighbours on
    /// the recovered sheet over those of neighbours in a shuffled placement (the smaller eye's).
    pub retinotopy_ratio: Option<f64>,
    /// The same with the sheet built from half the partner cells and counted on the other half.
    pub retinotopy_ratio_held_out: Option<f64>,
    /// Per eye: columns, photoreceptors in columns and placed, eigenvalues, T4 directions.
    pub eye_recovery: Option<retina::Recovered>,
}

impl Connectome {
    /// Hops from the placed photoreceptors along the connections (u32::MAX: never reached).
    pub fn hops_from_eye(&self) -> Vec<u32> {
        let n = self.neurons.len();
        let mut dist = vec![u32::MAX; n];
        for c in &self.eye.cells {
            dist[c.neuron as usize] = 0;
        }
        // Level by level over the incoming CSR: a neuron joins level d+1 when any input is at d.
        let mut level = 0;
        loop {
            let next: Vec<usize> =
                (0..n).filter(|&j| dist[j] == u32::MAX && self.inputs.row(j).any(|e| dist[self.inputs.pre[e] as usize] == level)).collect();
            if next.is_empty() {
                break;
            }
            for j in next {
                dist[j] = level + 1;
            }
            level += 1;
        }
        dist
    }

    pub fn info(&self) -> Info {
        let n = &self.neurons;
        let mut regions = BTreeMap::new();
        for r in Region::ALL {
            regions.insert(r.name().to_string(), 0);
        }
        for r in &n.region {
            *regions.get_mut(r.name()).expect("all regions listed") += 1;
        }
        let hops = self.hops_from_eye();
        let eye_to_dn = self.groups.descending.iter().map(|&d| hops[d as usize]).min().filter(|&h| h != u32::MAX);
        let typed = self.eye.typed_cells_per_square();
        let excitatory: usize = (0..self.inputs.len()).filter(|&e| n.sign[self.inputs.pre[e] as usize] > 0).count();
        Info {
            source: self.provenance.label(),
            synthetic: self.provenance.is_synthetic(),
            neurons: n.len(),
            connections: self.inputs.len(),
            synapses: self.inputs.synapses.iter().map(|&s| s as u64).sum(),
            with_soma: (0..n.len()).filter(|&i| n.has_soma(i)).count(),
            photoreceptors: self.eye.photoreceptors,
            photoreceptors_placed: self.eye.cells.len(),
            descending: self.groups.descending.len(),
            kenyon: self.groups.kenyon.len(),
            mbon: self.groups.mbon.len(),
            mbon_approach: self.groups.mbon_valence.iter().filter(|&&v| v > 0).count(),
            mbon_avoid: self.groups.mbon_valence.iter().filter(|&&v| v < 0).count(),
            pam: self.groups.pam.len(),
            ppl1: self.groups.ppl1.len(),
            regions,
            min_typed_cells_per_square: typed.iter().copied().min().unwrap_or(0),
            max_typed_cells_per_square: typed.iter().copied().max().unwrap_or(0),
            eye_to_descending_shortest_path: eye_to_dn,
            reached_from_eye_within_4: hops.iter().filter(|&&h| h <= 4).count() as f64 / n.len().max(1) as f64,
            excitatory_share: excitatory as f64 / self.inputs.len().max(1) as f64,
            build_seconds: self.build_seconds,
            positions: self.provenance.positions_label().to_string(),
            // A figure that could not be measured (NaN) is missing, not a number.
            retinotopy_ratio: self.eye.recovered.as_ref().map(|r| r.retinotopy_ratio).filter(|r| r.is_finite()),
            retinotopy_ratio_held_out: self.eye.recovered.as_ref().map(|r| r.retinotopy_ratio_held_out).filter(|r| r.is_finite()),
            eye_recovery: self.eye.recovered.clone(),
        }
    }
}
