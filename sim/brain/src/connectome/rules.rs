//! The rules that turn annotation rows into neurons of the model (SPEC §3.2, seed "The maths" 1):
//! which bodies count as neurons, which transmitter each releases and so which sign its
//! connections carry, which of the 14 regions it belongs to, and which photoreceptor role (R1–R6,
//! R7, R8) it has. Pure functions of strings, so every rule is tested on its own.

use serde::{Deserialize, Serialize};

/// The fly's transmitters as the release names them, plus the default used when no call exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum Transmitter {
    Acetylcholine = 0,
    Gaba = 1,
    Glutamate = 2,
    Histamine = 3,
    Dopamine = 4,
    Serotonin = 5,
    Octopamine = 6,
    /// No usable call in any of the three columns: treated as acetylcholine.
    Unknown = 7,
}

impl Transmitter {
    pub const ALL: [Transmitter; 8] = [
        Transmitter::Acetylcholine,
        Transmitter::Gaba,
        Transmitter::Glutamate,
        Transmitter::Histamine,
        Transmitter::Dopamine,
        Transmitter::Serotonin,
        Transmitter::Octopamine,
        Transmitter::Unknown,
    ];

    /// Parses one call of a release ("acetylcholine", "gaba", ... as MaleCNS writes them; "ACH",
    /// "GLUT", "SER", "OCT", ... as FlyWire does). "unclear", "unknown", empty
    /// and anything unrecognised give None so the next fallback is tried.
    pub fn parse(s: &str) -> Option<Transmitter> {
        match s.trim().to_ascii_lowercase().as_str() {
            "acetylcholine" | "ach" => Some(Transmitter::Acetylcholine),
            "gaba" => Some(Transmitter::Gaba),
            "glutamate" | "glu" | "glut" => Some(Transmitter::Glutamate),
            "histamine" | "his" => Some(Transmitter::Histamine),
            "dopamine" | "da" => Some(Transmitter::Dopamine),
            "serotonin" | "5ht" | "5-ht" | "ser" => Some(Transmitter::Serotonin),
            "octopamine" | "oa" | "oct" => Some(Transmitter::Octopamine),
            _ => None,
        }
    }

    /// The first usable call of three, in order of trust, else acetylcholine (recorded as
    /// `Unknown` so the default stays visible). MaleCNS: consensus, the cell type's prediction,
    /// the body's own. FlyWire: the neuron's own prediction, its cell type's consensus.
    pub fn choose(consensus: Option<&str>, celltype: Option<&str>, own: Option<&str>) -> Transmitter {
        [consensus, celltype, own].into_iter().flatten().find_map(Transmitter::parse).unwrap_or(Transmitter::Unknown)
    }

    pub fn from_u8(v: u8) -> Transmitter {
        Transmitter::ALL.get(v as usize).copied().unwrap_or(Transmitter::Unknown)
    }

    pub fn name(self) -> &'static str {
        match self {
            Transmitter::Acetylcholine => "acetylcholine",
            Transmitter::Gaba => "GABA",
            Transmitter::Glutamate => "glutamate",
            Transmitter::Histamine => "histamine",
            Transmitter::Dopamine => "dopamine",
            Transmitter::Serotonin => "serotonin",
            Transmitter::Octopamine => "octopamine",
            Transmitter::Unknown => "unknown (acetylcholine assumed)",
        }
    }
}

/// The sign of every connection a neuron sends: photoreceptors excite (the seed's "brain dead"
/// lesson: histamine would silence the whole eye in a model that starts at rate 0), GABA,
/// glutamate and histamine inhibit, everything else (ACh, the modulators, unknown) excites.
pub fn sign(transmitter: Transmitter, is_photoreceptor: bool) -> i8 {
    if is_photoreceptor {
        return 1;
    }
    match transmitter {
        Transmitter::Gaba | Transmitter::Glutamate | Transmitter::Histamine => -1,
        _ => 1,
    }
}

/// What a photoreceptor reports on its square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PhotoreceptorKind {
    /// R1–R6: one piece type of either colour.
    R1R6,
    /// R7: any piece of the fly's own.
    R7,
    /// R8: any piece of the opponent's.
    R8,
}

/// Photoreceptor types: MaleCNS writes `R1-R6`, and R7/R8 with a subtype suffix (`R7p`, `R7y`,
/// `R7d`, `R8p`, ...); FlyWire writes `R1-6`, `R7`, `R8`. `R7R8_unclear` counts as R7 (it is more
/// often R7 in the release).
pub fn photoreceptor_kind(cell_type: &str) -> Option<PhotoreceptorKind> {
    let t = cell_type.trim();
    if t == "R1-R6" || t == "R1-6" || (t.len() == 2 && t.starts_with('R') && matches!(t.as_bytes()[1], b'1'..=b'6')) {
        Some(PhotoreceptorKind::R1R6)
    } else if t.starts_with("R7") {
        Some(PhotoreceptorKind::R7)
    } else if t.starts_with("R8") {
        Some(PhotoreceptorKind::R8)
    } else {
        None
    }
}

/// Whether an annotation row is a neuron of the model: traced, with a superclass, and not glia.
pub fn is_neuron(status: Option<&str>, superclass: Option<&str>, class: Option<&str>) -> bool {
    let traced = status.is_some_and(|s| s.trim().eq_ignore_ascii_case("traced"));
    let superclass = superclass.map(str::trim).filter(|s| !s.is_empty());
    let glia = |s: Option<&str>| s.is_some_and(|s| s.to_ascii_lowercase().contains("glia"));
    traced && superclass.is_some() && !glia(superclass) && !glia(class)
}

/// Kenyon cells: type KC… (KCg-m, KCab, KCa'b', …) or class Kenyon_cell.
pub fn is_kenyon(cell_type: &str, class: &str) -> bool {
    cell_type.starts_with("KC") || class.eq_ignore_ascii_case("kenyon_cell")
}
pub fn is_mbon(cell_type: &str) -> bool {
    cell_type.starts_with("MBON")
}
/// The optic lobe's neuropils, from a neuron's main neuropil (FlyWire's `group`, e.g. `ME.LO`:
/// the first is where most of its synapses are). None for other neuropils or when unknown.
pub fn optic_neuropil(group: &str) -> Option<Region> {
    match group.split('.').next().unwrap_or("").trim() {
        "LA" => Some(Region::Lamina),
        "ME" | "AME" => Some(Region::Medulla),
        "LO" => Some(Region::Lobula),
        "LOP" => Some(Region::LobulaPlate),
        _ => None,
    }
}
/// PAM dopamine neurons (reward) by type name.
pub fn is_pam(cell_type: &str) -> bool {
    cell_type.starts_with("PAM")
}
/// PPL1 dopamine neurons (punishment) by type name.
pub fn is_ppl1(cell_type: &str) -> bool {
    cell_type.starts_with("PPL1")
}
/// Any dopamine neuron cluster of the central brain (PAM, PPL1, PPL2, PPM).
pub fn is_dan(cell_type: &str) -> bool {
    is_pam(cell_type) || is_ppl1(cell_type) || cell_type.starts_with("PPL2") || cell_type.starts_with("PPM")
}

/// The 18 regions of the viewer and of lesion experiments. Each neuron has exactly one; the first
/// rule that matches wins, in the order of `Region::of`. The optic lobe's four neuropils (14–17)
/// are told apart where a release names each neuron's main neuropil (FlyWire); elsewhere its
/// neurons are all `OpticLobe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum Region {
    /// R1–R8 of the compound eyes (type rule).
    Photoreceptors = 0,
    /// `ol_intrinsic` and the optic lobe's other sensory cells: lamina, medulla, lobula, lobula plate.
    OpticLobe = 1,
    /// `visual_projection`: optic lobe → central brain.
    VisualProjection = 2,
    /// `visual_centrifugal`: central brain → optic lobe.
    VisualCentrifugal = 3,
    /// `cb_intrinsic` not covered by the mushroom-body rules below.
    CentralBrain = 4,
    /// Kenyon cells of the mushroom body.
    KenyonCells = 5,
    /// Mushroom body output neurons.
    Mbon = 6,
    /// Dopamine neurons: PAM, PPL1, PPL2, PPM.
    Dan = 7,
    /// `descending_neuron`: brain → nerve cord; the readout's input.
    Descending = 8,
    /// `ascending_neuron`: nerve cord → brain.
    Ascending = 9,
    /// `vnc_intrinsic`: the nerve cord's own neurons.
    NerveCord = 10,
    /// Non-visual sensory neurons of head and body (`cb_sensory`, `vnc_sensory`, …).
    BodySensory = 11,
    /// Motor and other efferent neurons (`*_motor`, `*_efferent`).
    Motor = 12,
    /// Everything else: endocrine, neck, unclassified central cells.
    Other = 13,
    /// Optic-lobe neurons whose main neuropil is the lamina (`LA`).
    Lamina = 14,
    /// ... the medulla (`ME`, and the accessory medulla `AME`).
    Medulla = 15,
    /// ... the lobula (`LO`).
    Lobula = 16,
    /// ... the lobula plate (`LOP`).
    LobulaPlate = 17,
}

impl Region {
    pub const COUNT: usize = 18;
    pub const ALL: [Region; 18] = [
        Region::Photoreceptors,
        Region::OpticLobe,
        Region::VisualProjection,
        Region::VisualCentrifugal,
        Region::CentralBrain,
        Region::KenyonCells,
        Region::Mbon,
        Region::Dan,
        Region::Descending,
        Region::Ascending,
        Region::NerveCord,
        Region::BodySensory,
        Region::Motor,
        Region::Other,
        Region::Lamina,
        Region::Medulla,
        Region::Lobula,
        Region::LobulaPlate,
    ];

    pub fn from_u8(v: u8) -> Region {
        Region::ALL.get(v as usize).copied().unwrap_or(Region::Other)
    }

    /// The name users type (`--lesion "optic lobe"`) and read in the viewer.
    pub fn name(self) -> &'static str {
        match self {
            Region::Photoreceptors => "photoreceptors",
            Region::OpticLobe => "optic lobe",
            Region::VisualProjection => "visual projection",
            Region::VisualCentrifugal => "visual centrifugal",
            Region::CentralBrain => "central brain",
            Region::KenyonCells => "Kenyon cells",
            Region::Mbon => "MBON",
            Region::Dan => "DAN",
            Region::Descending => "descending",
            Region::Ascending => "ascending",
            Region::NerveCord => "nerve cord",
            Region::BodySensory => "body sensory",
            Region::Motor => "motor",
            Region::Other => "other",
            Region::Lamina => "lamina",
            Region::Medulla => "medulla",
            Region::Lobula => "lobula",
            Region::LobulaPlate => "lobula plate",
        }
    }

    /// The regions a lesion of this one removes: the optic lobe includes its four neuropils
    /// (FlyWire names them; elsewhere they are empty), every other region only itself.
    pub fn covers(self) -> Vec<Region> {
        match self {
            Region::OpticLobe => vec![Region::OpticLobe, Region::Lamina, Region::Medulla, Region::Lobula, Region::LobulaPlate],
            other => vec![other],
        }
    }

    /// Parses a region name: case, spaces, dashes and underscores do not matter, and a trailing
    /// plural "s" is optional ("optic-lobe", "Kenyon_cell", "MBONs").
    pub fn parse(s: &str) -> Option<Region> {
        let norm = |x: &str| {
            let k: String = x.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
            k.strip_suffix('s').map(str::to_owned).unwrap_or(k)
        };
        let want = norm(s);
        Region::ALL.into_iter().find(|r| norm(r.name()) == want)
    }

    /// The region of a neuron from its type, class, superclass and main neuropil ("" when the
    /// release has none). Superclasses as MaleCNS (`ol_intrinsic`, `cb_intrinsic`,
    /// `descending_neuron`, ...) and FlyWire (`optic`, `central`, `descending`, ...) name them.
    pub fn of(cell_type: &str, class: &str, superclass: &str, neuropil: &str) -> Region {
        let sc = superclass.to_ascii_lowercase();
        let optic = || optic_neuropil(neuropil).unwrap_or(Region::OpticLobe);
        if photoreceptor_kind(cell_type).is_some() {
            Region::Photoreceptors
        } else if is_kenyon(cell_type, class) {
            Region::KenyonCells
        } else if is_mbon(cell_type) || class == "MBON" {
            Region::Mbon
        } else if is_dan(cell_type) || class == "DAN" {
            Region::Dan
        } else if sc.starts_with("ol_") || sc == "optic" {
            optic()
        } else if sc == "visual_projection" {
            Region::VisualProjection
        } else if sc == "visual_centrifugal" {
            Region::VisualCentrifugal
        } else if sc == "descending_neuron" || sc == "descending" {
            Region::Descending
        } else if sc == "ascending_neuron" || sc == "ascending" {
            Region::Ascending
        } else if sc.ends_with("_sensory") || sc == "sensory" {
            Region::BodySensory
        } else if sc.ends_with("_motor") || sc.ends_with("_efferent") || sc == "motor" {
            Region::Motor
        } else if sc == "vnc_intrinsic" {
            Region::NerveCord
        } else if sc == "cb_intrinsic" || sc == "central" {
            Region::CentralBrain
        } else {
            Region::Other
        }
    }
}

/// Which side a neuron is on, from `somaSide`, else `rootSide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum Side {
    Left = 0,
    Right = 1,
    Middle = 2,
    Unknown = 3,
}

impl Side {
    pub fn parse(soma_side: Option<&str>, root_side: Option<&str>) -> Side {
        let one = |s: &str| match s.trim().to_ascii_uppercase().as_str() {
            "L" | "LEFT" => Some(Side::Left),
            "R" | "RIGHT" => Some(Side::Right),
            "M" | "C" | "CENTER" | "MIDDLE" | "MIDLINE" => Some(Side::Middle),
            _ => None,
        };
        soma_side.and_then(one).or_else(|| root_side.and_then(one)).unwrap_or(Side::Unknown)
    }
    pub fn from_u8(v: u8) -> Side {
        match v {
            0 => Side::Left,
            1 => Side::Right,
            2 => Side::Middle,
            _ => Side::Unknown,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
            Side::Middle => "middle",
            Side::Unknown => "unknown",
        }
    }
}

/// The initial strength of each of a receiving neuron's inputs: its share of the log synapse
/// counts, softplus(θ⁰) = max(ln(1+n) / Σ_k ln(1+n_k), 1e-4). Uses `libm` so the result (and the
/// brain file's checksum) is the same on every platform.
pub fn initial_strengths(synapses: &[u32], out: &mut [f32]) {
    let logs: f64 = synapses.iter().map(|&n| libm::log1p(n as f64)).sum();
    for (o, &n) in out.iter_mut().zip(synapses) {
        let share = if logs > 0.0 { libm::log1p(n as f64) / logs } else { 0.0 };
        *o = share.max(1e-4) as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmitter_falls_back_in_order() {
        use Transmitter::*;
        assert_eq!(Transmitter::choose(Some("gaba"), Some("glutamate"), Some("dopamine")), Gaba);
        assert_eq!(Transmitter::choose(Some("unclear"), Some("glutamate"), Some("dopamine")), Glutamate);
        assert_eq!(Transmitter::choose(None, None, Some("histamine")), Histamine);
        assert_eq!(Transmitter::choose(Some(""), Some("unknown"), None), Unknown);
        assert_eq!(Transmitter::choose(None, None, None), Unknown);
        // FlyWire's spellings.
        assert_eq!(Transmitter::choose(Some("GLUT"), None, None), Glutamate);
        assert_eq!(Transmitter::choose(Some("SER"), None, None), Serotonin);
        assert_eq!(Transmitter::choose(Some("OCT"), None, None), Octopamine);
        assert_eq!(Transmitter::choose(Some("ACH"), None, None), Acetylcholine);
        assert_eq!(Transmitter::choose(Some("DA"), None, None), Dopamine);
    }

    #[test]
    fn signs_follow_the_sender() {
        use Transmitter::*;
        assert_eq!(sign(Acetylcholine, false), 1);
        assert_eq!(sign(Gaba, false), -1);
        assert_eq!(sign(Glutamate, false), -1);
        assert_eq!(sign(Histamine, false), -1);
        assert_eq!(sign(Histamine, true), 1, "photoreceptors excite although they release histamine");
        for t in [Dopamine, Serotonin, Octopamine, Unknown] {
            assert_eq!(sign(t, false), 1, "{t:?}");
        }
    }

    #[test]
    fn neurons_are_traced_with_a_superclass_and_not_glia() {
        assert!(is_neuron(Some("Traced"), Some("cb_intrinsic"), None));
        assert!(!is_neuron(Some("Orphan"), Some("cb_intrinsic"), None));
        assert!(!is_neuron(Some("Traced"), None, None));
        assert!(!is_neuron(Some("Traced"), Some(""), None));
        assert!(!is_neuron(Some("Traced"), Some("glia"), None));
        assert!(!is_neuron(Some("Traced"), Some("cb_other"), Some("astrocyte_glia")));
    }

    #[test]
    fn photoreceptor_types() {
        assert_eq!(photoreceptor_kind("R1-R6"), Some(PhotoreceptorKind::R1R6));
        assert_eq!(photoreceptor_kind("R7p"), Some(PhotoreceptorKind::R7));
        assert_eq!(photoreceptor_kind("R8y"), Some(PhotoreceptorKind::R8));
        assert_eq!(photoreceptor_kind("R7R8_unclear"), Some(PhotoreceptorKind::R7));
        assert_eq!(photoreceptor_kind("R1-6"), Some(PhotoreceptorKind::R1R6));
        assert_eq!(photoreceptor_kind("R7"), Some(PhotoreceptorKind::R7));
        assert_eq!(photoreceptor_kind("Mi1"), None);
        assert_eq!(photoreceptor_kind("R10"), None);
    }

    #[test]
    fn regions_parse_by_any_spelling() {
        assert_eq!(Region::parse("optic lobe"), Some(Region::OpticLobe));
        assert_eq!(Region::parse("Optic-Lobe"), Some(Region::OpticLobe));
        assert_eq!(Region::parse("kenyon_cell"), Some(Region::KenyonCells));
        assert_eq!(Region::parse("MBONs"), Some(Region::Mbon));
        assert_eq!(Region::parse("legs"), None);
        for r in Region::ALL {
            assert_eq!(Region::parse(r.name()), Some(r));
            assert_eq!(Region::from_u8(r as u8), r);
        }
    }

    #[test]
    fn regions_from_annotations() {
        assert_eq!(Region::of("R1-R6", "", "ol_sensory", ""), Region::Photoreceptors);
        assert_eq!(Region::of("Mi1", "", "ol_intrinsic", ""), Region::OpticLobe);
        assert_eq!(Region::of("KCg-m", "Kenyon_cell", "cb_intrinsic", ""), Region::KenyonCells);
        assert_eq!(Region::of("MBON01", "MBON", "cb_intrinsic", ""), Region::Mbon);
        assert_eq!(Region::of("PAM01", "DAN", "cb_intrinsic", ""), Region::Dan);
        assert_eq!(Region::of("DNa01", "", "descending_neuron", ""), Region::Descending);
        assert_eq!(Region::of("x", "", "vnc_sensory", ""), Region::BodySensory);
        assert_eq!(Region::of("MN1", "", "vnc_motor", ""), Region::Motor);
        assert_eq!(Region::of("x", "", "endocrine", ""), Region::Other);
        // FlyWire's names, and its neuropils splitting the optic lobe.
        assert_eq!(Region::of("R1-6", "", "sensory", "LA"), Region::Photoreceptors);
        assert_eq!(Region::of("Mi1", "", "optic", "ME"), Region::Medulla);
        assert_eq!(Region::of("T4a", "", "optic", "LOP.ME"), Region::LobulaPlate);
        assert_eq!(Region::of("L1", "", "optic", "LA.ME"), Region::Lamina);
        assert_eq!(Region::of("Tm1", "", "optic", "LO.ME"), Region::Lobula);
        assert_eq!(Region::of("x", "", "optic", "NO_CONS"), Region::OpticLobe);
        assert_eq!(Region::of("", "MBON", "central", "MB_ML"), Region::Mbon);
        assert_eq!(Region::of("DNa01", "", "descending", "GNG"), Region::Descending);
        assert_eq!(Region::of("x", "", "central", "SMP"), Region::CentralBrain);
        assert_eq!(Region::of("x", "", "ascending", ""), Region::Ascending);
        assert_eq!(Region::of("x", "", "visual_projection", "LO"), Region::VisualProjection);
    }

    #[test]
    fn strengths_are_log_shares_with_a_floor() {
        let n = [5u32, 100, 5];
        let mut s = [0f32; 3];
        initial_strengths(&n, &mut s);
        let total: f32 = s.iter().sum();
        assert!((total - 1.0).abs() < 1e-6);
        assert!((s[1] / s[0] - (101f32.ln() / 6f32.ln())).abs() < 1e-5);
        // A tiny share is floored at 1e-4.
        let mut many = vec![5u32; 20_000];
        many[0] = 5;
        let mut out = vec![0f32; 20_000];
        initial_strengths(&many, &mut out);
        assert!(out.iter().all(|&x| x == 1e-4));
    }
}
