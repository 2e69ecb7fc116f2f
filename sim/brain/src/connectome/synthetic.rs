//! The synthetic stand-in: a made-up fly nervous system with the published structure of MaleCNS
//! v1.0 (SPEC §3.3), written as the release's own three feather tables so it is built by exactly
//! the code that builds the real connectome. It is what the app runs on a machine that has not
//! downloaded the real tables, and it is always labelled as a stand-in.
//!
//! What it reproduces: the population sizes (163,803 neurons: 4,020 photoreceptors in two oval
//! hex-column eyes, 89,935 optic-lobe cells of which 40 columnar types repeat in every column,
//! 9,201 visual projection, 25,653 central brain, 4,064 Kenyon cells, 97 MBONs in 16 compartments
//! innervated by PAM or PPL1 dopamine neurons, 1,314 descending neurons, and the nerve cord);
//! 139,593 with a cell-body position in a brain-shaped cloud (two optic lobes, central brain, nerve
//! cord below; photoreceptors and body-sensory neurons have none); retinotopic wiring in the optic
//! lobes, convergence onto visual projection neurons, photoreceptors onto visual projection
//! neurons (so the eye reaches a descending neuron in 2 synapses), half of the descending neurons
//! with direct visual input, sparse Kenyon-cell input; heavy-tailed synapse counts, duplicate and
//! below-threshold rows, glia and untraced bodies that the rules must drop.
//!
//! Deterministic from a seed on every machine: one ChaCha8 stream consumed in a fixed order,
//! integer arithmetic for every choice, and `libm` for the few real functions.

mod tables;

use std::collections::HashMap;
use std::path::Path;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use super::release::TablePaths;
use crate::error::{Error, Result};

/// Bumped whenever the generator's output changes; part of the brain's provenance.
pub const GENERATOR_VERSION: u32 = 1;
pub const DEFAULT_SEED: u64 = 1;

/// The published sizes the stand-in reproduces.
pub mod targets {
    pub const NEURONS: usize = 163_803;
    pub const WITH_SOMA: usize = 139_593;
    pub const PHOTORECEPTORS: usize = 4_020;
    pub const PHOTORECEPTORS_UNPLACEABLE: usize = 769;
    pub const OPTIC_LOBE: usize = 89_935;
    pub const VISUAL_PROJECTION: usize = 9_201;
    pub const CENTRAL_BRAIN: usize = 25_653;
    pub const KENYON: usize = 4_064;
    pub const MBON: usize = 97;
    pub const DESCENDING: usize = 1_314;
    pub const CONNECTIONS: usize = 6_234_868;
}

/// Columnar optic-lobe types: one cell of each in every column of each eye.
const COLUMNAR: [(&str, &str); 40] = [
    ("L1", "glutamate"),
    ("L2", "acetylcholine"),
    ("L3", "acetylcholine"),
    ("L4", "acetylcholine"),
    ("L5", "acetylcholine"),
    ("Mi1", "acetylcholine"),
    ("Mi4", "gaba"),
    ("Mi9", "glutamate"),
    ("Mi10", "acetylcholine"),
    ("Mi15", "dopamine"),
    ("Tm1", "acetylcholine"),
    ("Tm2", "acetylcholine"),
    ("Tm3", "acetylcholine"),
    ("Tm4", "acetylcholine"),
    ("Tm5a", "acetylcholine"),
    ("Tm5b", "acetylcholine"),
    ("Tm5c", "glutamate"),
    ("Tm9", "acetylcholine"),
    ("Tm20", "acetylcholine"),
    ("TmY5a", "acetylcholine"),
    ("C2", "gaba"),
    ("C3", "gaba"),
    ("T1", "acetylcholine"),
    ("T2", "acetylcholine"),
    ("T2a", "acetylcholine"),
    ("T3", "acetylcholine"),
    ("T4a", "acetylcholine"),
    ("T4b", "acetylcholine"),
    ("T4c", "acetylcholine"),
    ("T4d", "acetylcholine"),
    ("T5a", "acetylcholine"),
    ("T5b", "acetylcholine"),
    ("T5c", "acetylcholine"),
    ("T5d", "acetylcholine"),
    ("Y3", "acetylcholine"),
    ("TmY4", "acetylcholine"),
    ("TmY9", "acetylcholine"),
    ("Lawf1", "acetylcholine"),
    ("Lawf2", "acetylcholine"),
    ("Tlp13", "glutamate"),
];
const LAMINA: std::ops::Range<usize> = 0..5;
const MEDULLA: std::ops::Range<usize> = 5..25;
const LOBULA: std::ops::Range<usize> = 25..40;
/// Columnar types that take the eye's input (R1–R6 → L1–L3, R7 → Tm5c, Mi1, R8 → Tm20, Mi1).
const R1R6_TARGETS: [usize; 3] = [0, 1, 2];
const R7_TARGETS: [usize; 2] = [16, 5];
const R8_TARGETS: [usize; 2] = [18, 5];

/// Transmitter mixes in per-mille: (ach, gaba, glu, dopamine, serotonin, octopamine, histamine).
type Mix = [u32; 7];
const NT_NAMES: [&str; 7] = ["acetylcholine", "gaba", "glutamate", "dopamine", "serotonin", "octopamine", "histamine"];

/// A population of neurons with contiguous indices.
#[derive(Clone, Copy, Debug)]
struct Pop {
    start: usize,
    len: usize,
}

/// A family of cell types for one population: names `prefix NN`, each type with one transmitter.
struct Family {
    superclass: &'static str,
    class: &'static str,
    prefix: &'static str,
    types: usize,
    mix: Mix,
}

struct Rng64(ChaCha8Rng);

impl Rng64 {
    fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform integer in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }
    /// Uniform in [0, 1) with 53 bits.
    fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True with probability `per_mille`/1000.
    fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < per_mille as usize
    }
    /// Synapse count with a heavy (Pareto, exponent 1.5) tail above `min`, capped at 3,000.
    fn synapses(&mut self, min: u32) -> u32 {
        let u = 1.0 - self.unit(); // (0, 1]
        let x = min as f64 / libm::pow(u, 1.0 / 1.5);
        (x as u32).clamp(min, 3_000)
    }
    /// A point uniformly inside an ellipsoid.
    fn in_ellipsoid(&mut self, centre: [f64; 3], radii: [f64; 3]) -> [f64; 3] {
        loop {
            let p = [self.unit() * 2.0 - 1.0, self.unit() * 2.0 - 1.0, self.unit() * 2.0 - 1.0];
            if p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= 1.0 {
                return [centre[0] + p[0] * radii[0], centre[1] + p[1] * radii[1], centre[2] + p[2] * radii[2]];
            }
        }
    }
    fn pick_nt(&mut self, mix: &Mix) -> &'static str {
        let total: u32 = mix.iter().sum();
        let mut r = self.below(total as usize) as u32;
        for (i, &w) in mix.iter().enumerate() {
            if r < w {
                return NT_NAMES[i];
            }
            r -= w;
        }
        NT_NAMES[0]
    }
}

/// Everything about one neuron the tables need.
struct Body {
    id: i64,
    cell_type: String,
    superclass: Option<&'static str>,
    class: &'static str,
    status: &'static str,
    side: &'static str,
    soma: Option<[f64; 3]>,
    tosoma: Option<[f64; 3]>,
    hex: Option<(i32, i32)>,
    nt: &'static str,
}

/// The bodies made so far, with fresh ids: 10,000 + 10·k + a random digit, unique and increasing.
struct Census {
    bodies: Vec<Body>,
    id_counter: i64,
}

/// Where a photoreceptor sits: (eye, column), eye 0 the right one.
type EyeColumn = (usize, usize);

/// What kind of cell a new neuron is: its type, superclass, class and transmitter.
struct CellKind {
    cell_type: String,
    superclass: &'static str,
    class: &'static str,
    nt: &'static str,
}

/// Where a new neuron sits: its side, its cell body (None: outside the imaged volume) and its eye
/// column (None: not a columnar cell).
struct Placement {
    side: &'static str,
    soma: Option<[f64; 3]>,
    hex: Option<(i32, i32)>,
}

impl Census {
    fn add(&mut self, rng: &mut Rng64, kind: CellKind, at: Placement) {
        self.id_counter += 1;
        let id = 10_000 + self.id_counter * 10 + rng.below(10) as i64;
        let (CellKind { cell_type, superclass, class, nt }, Placement { side, soma, hex }) = (kind, at);
        self.bodies.push(Body { id, cell_type, superclass: Some(superclass), class, status: "Traced", side, soma, tosoma: None, hex, nt });
    }

    /// A population of `p.len` neurons of the family's types, each placed by `at`.
    fn family(&mut self, rng: &mut Rng64, p: Pop, f: Family, at: &dyn Fn(&mut Rng64) -> [f64; 3]) {
        debug_assert_eq!(p.start, self.bodies.len());
        let nts: Vec<&'static str> = (0..f.types).map(|_| rng.pick_nt(&f.mix)).collect();
        for _ in 0..p.len {
            let t = rng.below(f.types);
            let pos = at(rng);
            let side = if pos[0] > 0.0 { "L" } else { "R" }; // +x is the fly's left
            let kind = CellKind { cell_type: format!("{}{:02}", f.prefix, t + 1), superclass: f.superclass, class: f.class, nt: nts[t] };
            self.add(rng, kind, Placement { side, soma: Some(pos), hex: None });
        }
    }

    /// Photoreceptors: 2,010 per eye on random columns; no cell body in the imaged volume. Returns
    /// each one's (eye, column).
    fn photoreceptors(&mut self, rng: &mut Rng64, a: &Anatomy) -> Vec<EyeColumn> {
        let pr = a.pops.pr;
        let mut pr_column = Vec::with_capacity(pr.len);
        for i in 0..pr.len {
            let eye = i * 2 / pr.len; // 0 = right eye, 1 = left eye
            let c = rng.below(a.columns.len());
            let r = rng.below(100);
            let t =
                if r < 66 { "R1-R6".to_string() } else { format!("{}{}", if r < 83 { "R7" } else { "R8" }, ["p", "y", "d"][rng.below(3)]) };
            pr_column.push((eye, c));
            let kind = CellKind { cell_type: t, superclass: "ol_sensory", class: "photoreceptor", nt: "histamine" };
            self.add(rng, kind, Placement { side: ["R", "L"][eye], soma: None, hex: None });
        }
        pr_column
    }

    /// Columnar optic lobe: every type in every column of both eyes, on the lobe's surface.
    fn columnar(&mut self, rng: &mut Rng64, a: &Anatomy) {
        for eye in 0..2 {
            for &(h1, h2) in &a.columns {
                let (u, v) = ((h1 - h2) as f64, (h1 + h2 - 60) as f64);
                for (t, &(name, nt)) in COLUMNAR.iter().enumerate() {
                    let depth = if LAMINA.contains(&t) {
                        330.0
                    } else if MEDULLA.contains(&t) {
                        270.0
                    } else {
                        215.0
                    };
                    let sx = if eye == 1 { 1.0 } else { -1.0 };
                    let jitter = [rng.unit() * 8.0 - 4.0, rng.unit() * 4.0 - 2.0, rng.unit() * 4.0 - 2.0];
                    let p = [sx * (depth + jitter[0]), v * 4.5 + jitter[1], u * 4.5 + jitter[2]];
                    let kind = CellKind { cell_type: name.to_string(), superclass: "ol_intrinsic", class: "", nt };
                    self.add(rng, kind, Placement { side: ["R", "L"][eye], soma: Some(p), hex: Some((h1, h2)) });
                }
            }
        }
    }

    /// Every population after the columnar cells, each a family of types placed in its part of
    /// the cloud (lobes, central brain, paired clusters, nerve cord).
    fn families(&mut self, rng: &mut Rng64, p: &Populations) {
        let fam = |superclass, class, prefix, types, mix| Family { superclass, class, prefix, types, mix };
        let lobe = |rng: &mut Rng64| {
            let sx = if rng.below(2) == 1 { 1.0 } else { -1.0 };
            rng.in_ellipsoid([sx * 250.0, 0.0, 0.0], [70.0, 130.0, 90.0])
        };
        let brain = |rng: &mut Rng64| rng.in_ellipsoid([0.0, 0.0, 0.0], [150.0, 100.0, 75.0]);
        let cord = |rng: &mut Rng64| rng.in_ellipsoid([0.0, 650.0, 0.0], [85.0, 330.0, 60.0]);
        let pair = |c: [f64; 3], r: f64| {
            move |rng: &mut Rng64| {
                let sx = if rng.below(2) == 1 { 1.0 } else { -1.0 };
                rng.in_ellipsoid([sx * c[0], c[1], c[2]], [r, r, r])
            }
        };
        self.family(rng, p.noncolumnar, fam("ol_intrinsic", "", "Dm", 60, [150, 500, 350, 0, 0, 0, 0]), &lobe);
        self.family(rng, p.vpn, fam("visual_projection", "", "LC", 80, [850, 100, 50, 0, 0, 0, 0]), &pair([185.0, 0.0, 0.0], 35.0));
        self.family(rng, p.vc, fam("visual_centrifugal", "", "Cm", 30, [200, 500, 300, 0, 0, 0, 0]), &pair([150.0, -20.0, 0.0], 30.0));
        self.family(rng, p.cb, fam("cb_intrinsic", "", "CB", 400, [550, 250, 150, 10, 20, 20, 0]), &brain);
        self.family(rng, p.kc, fam("cb_intrinsic", "Kenyon_cell", "KC", 3, [1000, 0, 0, 0, 0, 0, 0]), &pair([60.0, -70.0, 40.0], 25.0));
        // Kenyon cell type names as the release spells them.
        for b in &mut self.bodies[p.kc.start..p.kc.start + p.kc.len] {
            b.cell_type = match b.cell_type.as_str() {
                "KC01" => "KCg-m",
                "KC02" => "KCab",
                _ => "KCa'b'",
            }
            .to_string();
        }
        self.family(rng, p.mbon, fam("cb_intrinsic", "MBON", "MBON", 35, [400, 300, 300, 0, 0, 0, 0]), &pair([50.0, -10.0, -30.0], 30.0));
        self.family(rng, p.pam, fam("cb_intrinsic", "DAN", "PAM", 15, [0, 0, 0, 1000, 0, 0, 0]), &pair([40.0, 40.0, -50.0], 20.0));
        self.family(rng, p.ppl1, fam("cb_intrinsic", "DAN", "PPL1", 6, [0, 0, 0, 1000, 0, 0, 0]), &pair([70.0, -60.0, 50.0], 15.0));
        self.family(rng, p.other_dan, fam("cb_intrinsic", "DAN", "PPM", 4, [0, 0, 0, 1000, 0, 0, 0]), &pair([20.0, -40.0, 60.0], 15.0));
        self.family(rng, p.dn, fam("descending_neuron", "", "DNa", 300, [700, 200, 100, 0, 0, 0, 0]), &|rng: &mut Rng64| {
            rng.in_ellipsoid([0.0, 60.0, 0.0], [120.0, 40.0, 60.0])
        });
        self.family(rng, p.asc, fam("ascending_neuron", "", "AN", 200, [750, 150, 100, 0, 0, 0, 0]), &cord);
        self.family(rng, p.vnc, fam("vnc_intrinsic", "", "IN", 500, [500, 300, 200, 0, 0, 0, 0]), &cord);
        self.family(rng, p.vnc_sensory, fam("vnc_sensory", "", "SNa", 100, [1000, 0, 0, 0, 0, 0, 0]), &cord);
        self.family(rng, p.cb_sensory, fam("cb_sensory", "", "ORN", 50, [1000, 0, 0, 0, 0, 0, 0]), &brain);
        self.family(rng, p.motor, fam("vnc_motor", "", "MN", 60, [0, 0, 1000, 0, 0, 0, 0]), &cord);
        self.family(rng, p.endocrine, fam("endocrine", "", "DH", 8, [0, 0, 0, 0, 300, 700, 0]), &brain);
        self.family(rng, p.rest, fam("cb_other", "", "CBo", 20, [500, 500, 0, 0, 0, 0, 0]), &brain);
    }
}

/// The stand-in's populations, in index order.
struct Populations {
    pr: Pop,
    columnar: Pop,
    noncolumnar: Pop,
    vpn: Pop,
    vc: Pop,
    cb: Pop,
    kc: Pop,
    mbon: Pop,
    pam: Pop,
    ppl1: Pop,
    other_dan: Pop,
    dn: Pop,
    asc: Pop,
    vnc: Pop,
    vnc_sensory: Pop,
    cb_sensory: Pop,
    motor: Pop,
    endocrine: Pop,
    /// The remaining central cells ("other").
    rest: Pop,
}

impl Populations {
    /// The populations one after another, for eyes of `ncol` columns each.
    fn new(ncol: usize) -> Result<Populations> {
        let mut next = 0usize;
        let mut pop = |len: usize| {
            let p = Pop { start: next, len };
            next += len;
            p
        };
        let pr = pop(targets::PHOTORECEPTORS);
        let columnar = pop(2 * ncol * COLUMNAR.len());
        let noncolumnar = pop(targets::OPTIC_LOBE - columnar.len);
        let vpn = pop(targets::VISUAL_PROJECTION);
        let vc = pop(1_100);
        let cb = pop(targets::CENTRAL_BRAIN);
        let kc = pop(targets::KENYON);
        let mbon = pop(targets::MBON);
        let pam = pop(214);
        let ppl1 = pop(24);
        let other_dan = pop(36);
        let dn = pop(targets::DESCENDING);
        let asc = pop(2_240);
        let vnc = pop(14_200);
        let vnc_sensory = pop(7_400);
        let cb_sensory = pop(2_800);
        let motor = pop(820);
        let endocrine = pop(80);
        if next > targets::NEURONS {
            return Err(Error::Invalid(format!("stand-in populations add up to more than {}", targets::NEURONS)));
        }
        let rest = Pop { start: next, len: targets::NEURONS - next };
        Ok(Populations {
            pr,
            columnar,
            noncolumnar,
            vpn,
            vc,
            cb,
            kc,
            mbon,
            pam,
            ppl1,
            other_dan,
            dn,
            asc,
            vnc,
            vnc_sensory,
            cb_sensory,
            motor,
            endocrine,
            rest,
        })
    }
}

/// What the stand-in's rules look up: its populations and the eyes' hex columns.
struct Anatomy {
    pops: Populations,
    columns: Vec<(i32, i32)>,
    /// Each column's place in `columns`.
    col_index: HashMap<(i32, i32), usize>,
}

impl Anatomy {
    fn new() -> Result<Anatomy> {
        let columns = eye_columns();
        let col_index = columns.iter().enumerate().map(|(i, &c)| (c, i)).collect();
        Ok(Anatomy { pops: Populations::new(columns.len())?, columns, col_index })
    }

    /// The cell of columnar type `t` in column `c` of eye `eye`.
    fn columnar_cell(&self, eye: usize, c: usize, t: usize) -> u32 {
        (self.pops.columnar.start + (eye * self.columns.len() + c) * COLUMNAR.len() + t) as u32
    }

    /// A column at most `r` hex steps from column `c` in both directions (`c` itself when six
    /// tries land outside the eye).
    fn neighbour(&self, rng: &mut Rng64, c: usize, r: i32) -> usize {
        let (h1, h2) = self.columns[c];
        for _ in 0..6 {
            let d1 = rng.below((2 * r + 1) as usize) as i32 - r;
            let d2 = rng.below((2 * r + 1) as usize) as i32 - r;
            if let Some(&n) = self.col_index.get(&(h1 + d1, h2 + d2)) {
                return n;
            }
        }
        c
    }
}

/// Summary of a generated stand-in.
#[derive(Debug, Clone)]
pub struct Generated {
    pub paths: TablePaths,
    pub annotation_rows: usize,
    pub weight_rows: usize,
}

/// The hex columns of one oval eye: lattice points (h1, h2) whose (u, v) = (h1 − h2, h1 + h2)
/// lie in an ellipse of half-axes 20 (u) and 28 (v): about 880 columns.
pub fn eye_columns() -> Vec<(i32, i32)> {
    let mut cols = Vec::new();
    for v in -28i32..=28 {
        for u in -20i32..=20 {
            if (u + v).rem_euclid(2) != 0 {
                continue;
            }
            let (fu, fv) = (u as f64 / 20.0, v as f64 / 28.0);
            if fu * fu + fv * fv <= 1.0 {
                cols.push(((u + v) / 2 + 30, (v - u) / 2 + 30));
            }
        }
    }
    cols
}

/// Writes the three tables of the stand-in into `dir` (each atomically) and returns their paths.
pub fn generate(dir: &Path, seed: u64, progress: super::build::Progress) -> Result<Generated> {
    let mut rng = Rng64(ChaCha8Rng::seed_from_u64(seed ^ 0x666c_7963_6865_7373));
    let anatomy = Anatomy::new()?;
    progress("generating neurons", 0.0);
    let (mut bodies, pr_column) = neurons(&mut rng, &anatomy)?;
    progress("generating connections", 0.0);
    let mut w = connections(&mut rng, &anatomy, &bodies, &pr_column);
    rows_to_drop(&mut rng, &mut bodies, &mut w);
    // Body ids for the neuron rows.
    let ids: Vec<i64> = bodies.iter().map(|b| b.id).collect();
    for row in w.index_rows.drain(..) {
        w.rows.push((ids[row.0 as usize], ids[row.1 as usize], row.2 as i32));
    }
    progress("writing tables", 0.0);
    tables::write_tables(dir, seed, &mut rng, &bodies, &w.rows, progress)
}

/// Every neuron's body in index order, and each photoreceptor's (eye, column). Cell bodies
/// outside the imaged volume: all sensory cells, then others at random up to the published
/// count; a few keep only the "to soma" point the release gives instead.
fn neurons(rng: &mut Rng64, anatomy: &Anatomy) -> Result<(Vec<Body>, Vec<EyeColumn>)> {
    let mut census = Census { bodies: Vec::with_capacity(targets::NEURONS + 50_000), id_counter: 0 };
    let pr_column = census.photoreceptors(rng, anatomy);
    census.columnar(rng, anatomy);
    census.families(rng, &anatomy.pops);
    if census.bodies.len() != targets::NEURONS {
        return Err(Error::Invalid(format!("stand-in made {} neurons, not {}", census.bodies.len(), targets::NEURONS)));
    }
    let mut bodies = census.bodies;
    for p in [anatomy.pops.vnc_sensory, anatomy.pops.cb_sensory] {
        for b in &mut bodies[p.start..p.start + p.len] {
            b.soma = None;
        }
    }
    let mut without = bodies.iter().filter(|b| b.soma.is_none()).count();
    while without < targets::NEURONS - targets::WITH_SOMA {
        let i = rng.below(targets::NEURONS);
        if bodies[i].soma.is_some() {
            bodies[i].soma = None;
            without += 1;
        }
    }
    for b in bodies.iter_mut() {
        if b.soma.is_some() && rng.chance(30) {
            b.tosoma = b.soma.take();
        }
    }
    Ok((bodies, pr_column))
}

/// A neuron of population `p`, uniformly.
fn uniform(rng: &mut Rng64, p: Pop) -> u32 {
    (p.start + rng.below(p.len)) as u32
}

/// An in-degree for a population whose mean is `mean` before `DEGREE_SCALE_PER_MILLE`: uniform
/// from half the scaled mean to one and a half times it.
fn degree(rng: &mut Rng64, mean: usize) -> usize {
    let m = (mean as u64 * DEGREE_SCALE_PER_MILLE / 1000) as usize;
    m / 2 + rng.below(m.max(1))
}

/// Every connection between neurons, population by population.
fn connections(rng: &mut Rng64, anatomy: &Anatomy, bodies: &[Body], pr_column: &[EyeColumn]) -> Wiring {
    let mut w = Wiring::default();
    photoreceptor_outputs(rng, &mut w, anatomy, bodies, pr_column);
    // Per receiving neuron: a degree and a mix of sources, with below-threshold extras.
    let mut inputs = Inputs::default();
    columnar_inputs(rng, &mut w, &mut inputs, anatomy);
    noncolumnar_inputs(rng, &mut w, &mut inputs, anatomy);
    visual_projection_inputs(rng, &mut w, &mut inputs, anatomy);
    central_inputs(rng, &mut w, &mut inputs, &anatomy.pops);
    mbon_inputs(rng, &mut w, &mut inputs, &anatomy.pops);
    // Photoreceptors hear a little from their lamina (feedback).
    let pr = anatomy.pops.pr;
    for (i, &(eye, c)) in pr_column.iter().enumerate().take(pr.len) {
        inputs.start((pr.start + i) as u32);
        for t in [3usize, 4] {
            inputs.add(rng, &mut w, anatomy.columnar_cell(eye, c, t), 5);
        }
    }
    w
}

/// Photoreceptors: placeable ones onto their own column's input types (strong), all of them onto
/// a few non-columnar cells; the unplaceable ones only onto cells without a column. Then some
/// straight onto visual projection neurons (about 3,000 connections).
fn photoreceptor_outputs(rng: &mut Rng64, w: &mut Wiring, anatomy: &Anatomy, bodies: &[Body], pr_column: &[EyeColumn]) {
    let (pr, noncolumnar, vpn) = (anatomy.pops.pr, anatomy.pops.noncolumnar, anatomy.pops.vpn);
    let mut unplaceable = vec![false; pr.len];
    let mut marked = 0;
    while marked < targets::PHOTORECEPTORS_UNPLACEABLE {
        let i = rng.below(pr.len);
        if !unplaceable[i] {
            unplaceable[i] = true;
            marked += 1;
        }
    }
    for i in 0..pr.len {
        let (eye, c) = pr_column[i];
        let pre = (pr.start + i) as u32;
        let t = bodies[pr.start + i].cell_type.as_str();
        if !unplaceable[i] {
            let targets: &[usize] = if t == "R1-R6" {
                &R1R6_TARGETS
            } else if t.starts_with("R7") {
                &R7_TARGETS
            } else {
                &R8_TARGETS
            };
            for &tt in targets {
                let n = 15 + rng.below(45) as u32;
                w.row(pre, anatomy.columnar_cell(eye, c, tt), n);
            }
        }
        for _ in 0..3 {
            let post = uniform(rng, noncolumnar);
            let n = rng.synapses(5).min(12);
            w.row(pre, post, n);
        }
    }
    for _ in 0..3_000 {
        let pre = uniform(rng, pr);
        let post = uniform(rng, vpn);
        w.row(pre, post, 5 + rng.below(4) as u32);
    }
}

/// Columnar cells: mostly from their own or a nearby column's earlier types, else from
/// non-columnar cells.
fn columnar_inputs(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, anatomy: &Anatomy) {
    for eye in 0..2 {
        for c in 0..anatomy.columns.len() {
            for t in 0..COLUMNAR.len() {
                let post = anatomy.columnar_cell(eye, c, t);
                let (mean, local_types, radius): (usize, std::ops::Range<usize>, i32) = if LAMINA.contains(&t) {
                    (8, 0..25, 1)
                } else if MEDULLA.contains(&t) {
                    (30, 0..25, 1)
                } else {
                    (30, 5..40, 2)
                };
                let k = degree(rng, mean);
                inputs.start(post);
                for _ in 0..k {
                    let pre = if rng.chance(880) {
                        let cc = if rng.chance(600) { c } else { anatomy.neighbour(rng, c, radius) };
                        let tt = local_types.start + rng.below(local_types.len());
                        anatomy.columnar_cell(eye, cc, tt)
                    } else {
                        uniform(rng, anatomy.pops.noncolumnar)
                    };
                    inputs.add(rng, w, pre, 5);
                }
            }
        }
    }
}

/// Non-columnar optic lobe: a patch of columns of one eye.
fn noncolumnar_inputs(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, anatomy: &Anatomy) {
    let p = &anatomy.pops;
    for j in 0..p.noncolumnar.len {
        let post = (p.noncolumnar.start + j) as u32;
        let eye = rng.below(2);
        let centre = rng.below(anatomy.columns.len());
        let k = degree(rng, 45);
        inputs.start(post);
        for _ in 0..k {
            let pre = if rng.chance(850) {
                anatomy.columnar_cell(eye, anatomy.neighbour(rng, centre, 4), rng.below(COLUMNAR.len()))
            } else if rng.chance(500) {
                uniform(rng, p.noncolumnar)
            } else {
                uniform(rng, p.vc)
            };
            inputs.add(rng, w, pre, 5);
        }
    }
}

/// Visual projection neurons: converge from a retinotopic patch of lobula/medulla types.
fn visual_projection_inputs(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, anatomy: &Anatomy) {
    let p = &anatomy.pops;
    for j in 0..p.vpn.len {
        let post = (p.vpn.start + j) as u32;
        let eye = rng.below(2);
        let centre = rng.below(anatomy.columns.len());
        let k = degree(rng, 60);
        inputs.start(post);
        for _ in 0..k {
            let r = rng.below(1000);
            let pre = if r < 700 {
                let t = if rng.chance(700) { LOBULA.start + rng.below(LOBULA.len()) } else { MEDULLA.start + rng.below(MEDULLA.len()) };
                anatomy.columnar_cell(eye, anatomy.neighbour(rng, centre, 3), t)
            } else if r < 850 {
                uniform(rng, p.noncolumnar)
            } else if r < 900 {
                uniform(rng, p.vpn)
            } else {
                uniform(rng, p.vc)
            };
            inputs.add(rng, w, pre, 5);
        }
    }
}

/// The mixed populations (each a mean degree and sources with per-mille shares), then the
/// descending neurons, half of which hear visual projection neurons directly.
fn central_inputs(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, p: &Populations) {
    type Plan = (Pop, usize, Vec<(Pop, u32)>);
    let plans: Vec<Plan> = vec![
        (p.vc, 60, vec![(p.cb, 700), (p.vpn, 200), (p.dn, 100)]),
        (p.cb, 80, vec![(p.vpn, 250), (p.cb, 500), (p.mbon, 40), (p.pam, 10), (p.asc, 80), (p.dn, 30), (p.cb_sensory, 60), (p.kc, 30)]),
        (p.kc, 12, vec![(Pop { start: p.cb.start, len: 800 }, 600), (p.vpn, 250), (p.cb, 150)]),
        (p.pam, 60, vec![(p.cb, 700), (p.mbon, 200), (p.asc, 100)]),
        (p.ppl1, 60, vec![(p.cb, 700), (p.mbon, 200), (p.asc, 100)]),
        (p.other_dan, 60, vec![(p.cb, 800), (p.mbon, 200)]),
        (p.asc, 80, vec![(p.vnc, 600), (p.vnc_sensory, 300), (p.dn, 100)]),
        (p.vnc, 80, vec![(p.dn, 150), (p.vnc, 550), (p.vnc_sensory, 200), (p.asc, 50), (p.motor, 50)]),
        (p.motor, 100, vec![(p.vnc, 800), (p.dn, 200)]),
        (p.vnc_sensory, 10, vec![(p.vnc, 1000)]),
        (p.cb_sensory, 10, vec![(p.cb, 1000)]),
        (p.endocrine, 40, vec![(p.cb, 1000)]),
        (p.rest, 40, vec![(p.cb, 1000)]),
    ];
    for (pop, mean, sources) in &plans {
        for j in 0..pop.len {
            let k = degree(rng, *mean);
            mixed(rng, w, inputs, (pop.start + j) as u32, k, sources);
        }
    }
    for j in 0..p.dn.len {
        let sources = if j.is_multiple_of(2) {
            vec![(p.vpn, 250), (p.cb, 550), (p.mbon, 30), (p.asc, 70), (p.dn, 50), (p.vc, 50)]
        } else {
            vec![(p.cb, 800), (p.mbon, 50), (p.asc, 100), (p.dn, 50)]
        };
        let k = degree(rng, 120);
        mixed(rng, w, inputs, (p.dn.start + j) as u32, k, &sources);
    }
}

/// Mushroom body: 16 compartments, 0–4 innervated by PPL1, 5–15 by PAM. Each MBON hears about
/// 900 Kenyon cells and the dopamine neurons of its compartment.
fn mbon_inputs(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, p: &Populations) {
    let compartment_dans = |comp: usize| -> Vec<u32> {
        let (dans, first, count) = if comp < 5 { (p.ppl1, comp, 5) } else { (p.pam, comp - 5, 11) };
        (0..dans.len).filter(|i| i % count == first).map(|i| (dans.start + i) as u32).collect()
    };
    for j in 0..p.mbon.len {
        let post = (p.mbon.start + j) as u32;
        let comp = j % 16;
        inputs.start(post);
        let k = degree(rng, 900);
        for _ in 0..k {
            let pre = uniform(rng, p.kc);
            inputs.add_count(w, pre, 5 + rng.below(10) as u32);
        }
        let dans = compartment_dans(comp);
        for _ in 0..6 {
            let pre = dans[rng.below(dans.len())];
            inputs.add_count(w, pre, 10 + rng.below(25) as u32);
        }
        let k = degree(rng, 90);
        for _ in 0..k {
            let pre = uniform(rng, p.cb);
            inputs.add(rng, w, pre, 5);
        }
    }
}

/// The rows the build's rules must drop: glia and untraced bodies, and rows between them and the
/// neurons.
fn rows_to_drop(rng: &mut Rng64, bodies: &mut Vec<Body>, w: &mut Wiring) {
    use std::iter::repeat_n;
    let glia_and_untraced: Vec<(Option<&'static str>, &'static str)> = repeat_n((Some("glia"), "Traced"), 2_500)
        .chain(repeat_n((None, "Orphan"), 40_000))
        .chain(repeat_n((None, "Traced"), 3_274))
        .collect();
    for (extra, (superclass, status)) in glia_and_untraced.into_iter().enumerate() {
        let id = new_id_after(bodies, extra);
        bodies.push(Body {
            id,
            cell_type: String::new(),
            superclass,
            class: "",
            status,
            side: "",
            soma: None,
            tosoma: None,
            hex: None,
            nt: "acetylcholine",
        });
    }
    for _ in 0..300_000 {
        let a = bodies[targets::NEURONS + rng.below(bodies.len() - targets::NEURONS)].id;
        let b = bodies[rng.below(targets::NEURONS)].id;
        let (pre, post) = if rng.below(2) == 0 { (a, b) } else { (b, a) };
        w.rows.push((pre, post, rng.synapses(1) as i32));
    }
}

/// Schema metadata that marks a table as the stand-in, so a build always labels it as such, even
/// when a user passes the generated folder as if it were the release.
pub const SEED_KEY: &str = "flychess.synthetic_seed";
pub const GENERATOR_KEY: &str = "flychess.generator_version";

/// Ids for non-neuron rows continue after the neurons' ids.
fn new_id_after(bodies: &[Body], extra: usize) -> i64 {
    let base = bodies[..targets::NEURONS].last().map(|b| b.id).unwrap_or(0);
    base + 10 * (extra as i64 + 1)
}

/// Scales every population's mean in-degree so the stand-in lands on the published count.
const DEGREE_SCALE_PER_MILLE: u64 = 908;

#[derive(Default)]
struct Wiring {
    /// (pre index, post index, synapses) between neurons.
    index_rows: Vec<(u32, u32, u32)>,
    /// (pre body, post body, synapses) rows in body ids (the finished table).
    rows: Vec<(i64, i64, i32)>,
}

impl Wiring {
    fn row(&mut self, pre: u32, post: u32, n: u32) {
        self.index_rows.push((pre, post, n));
    }
}

/// The inputs of the receiving neuron being generated: senders already used are not used again
/// (so the count of connections is what the degrees say), and every third input also brings a
/// below-threshold row from another sender (which the 5-synapse cut must drop).
#[derive(Default)]
struct Inputs {
    post: u32,
    used: Vec<u32>,
}

impl Inputs {
    fn start(&mut self, post: u32) {
        self.post = post;
        self.used.clear();
    }
    fn fresh(&mut self, pre: u32) -> bool {
        if pre == self.post || self.used.contains(&pre) {
            return false;
        }
        self.used.push(pre);
        true
    }
    fn add(&mut self, rng: &mut Rng64, w: &mut Wiring, pre: u32, min: u32) {
        if self.fresh(pre) {
            let n = rng.synapses(min);
            w.row(pre, self.post, n);
            // Now and then the same pair appears twice in the table (summed by the build).
            if n >= 10 && rng.chance(50) {
                w.row(pre, self.post, 2);
            }
        }
        if rng.chance(333) {
            // A neighbour of the sender (by index, so usually of the same population).
            let weak = pre.wrapping_add(1 + rng.below(97) as u32);
            if weak != self.post && (weak as usize) < targets::NEURONS && !self.used.contains(&weak) {
                self.used.push(weak);
                w.row(weak, self.post, 1 + rng.below(4) as u32);
            }
        }
    }
    fn add_count(&mut self, w: &mut Wiring, pre: u32, n: u32) {
        if self.fresh(pre) {
            w.row(pre, self.post, n);
        }
    }
}

fn mixed(rng: &mut Rng64, w: &mut Wiring, inputs: &mut Inputs, post: u32, k: usize, sources: &[(Pop, u32)]) {
    let total: u32 = sources.iter().map(|s| s.1).sum();
    inputs.start(post);
    for _ in 0..k {
        let mut r = rng.below(total as usize) as u32;
        let mut from = sources[0].0;
        for &(p, share) in sources {
            if r < share {
                from = p;
                break;
            }
            r -= share;
        }
        let pre = (from.start + rng.below(from.len)) as u32;
        inputs.add(rng, w, pre, 5);
    }
}
