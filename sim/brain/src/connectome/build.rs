//! Tables → brain. Reads the annotations, transmitters and weights tables (real or stand-in, same
//! code), keeps the neurons (traced, with a superclass, no glia), signs them by transmitter, sums
//! duplicate (pre, post) rows, keeps connections of ≥ 5 synapses between kept neurons, applies a
//! control (shuffled wiring or a lesion) before the strengths are worked out, places the eye on
//! the real wiring, and finds the named groups. Every problem with the inputs is an `Error` naming
//! the file; nothing here panics on bad data.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rayon::prelude::*;

use super::feather::Table;
use super::release::{TablePaths, VOXEL_UM, columns};
use super::rules::{self, PhotoreceptorKind, Region, Side, Transmitter};
use super::synthetic;
use super::{Connectome, Control, Csr, Groups, Neurons, Provenance, Source};
use crate::error::{Error, Result};
use crate::eye::{Eye, Photoreceptor};

/// Version of the rules in this file; part of every brain's inputs key, so a change of rules
/// rebuilds the brain files.
pub const RULES_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Connections with fewer synapses (after summing duplicates) are dropped.
    pub min_synapses: u32,
    pub control: Control,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions { min_synapses: 5, control: Control::None }
    }
}

/// Progress of a long job: a stage name and how far it is (0..=1).
pub type Progress<'a> = &'a (dyn Fn(&str, f64) + Sync);

/// One annotation row that is a neuron, before ordering (both releases' readers make these).
pub(crate) struct NeuronRow {
    pub body: i64,
    pub cell_type: String,
    pub class: String,
    pub superclass: String,
    /// Main neuropil(s), FlyWire's `group` (e.g. `ME.LO`); "" when the release has none.
    pub neuropil: String,
    pub side: Side,
    /// µm; NaN when unknown.
    pub soma_um: [f32; 3],
    pub hex: Option<(i32, i32)>,
}

/// Builds a brain from three tables.
pub fn build(paths: &TablePaths, source: Source, inputs_key: String, options: &BuildOptions, progress: Progress) -> Result<Connectome> {
    let started = Instant::now();
    progress("reading annotations", 0.0);
    let (mut rows, marked) = read_annotations(&paths.annotations)?;
    // Tables the stand-in generated are labelled as such, wherever they are read from.
    let source = match marked {
        Some(seed_and_version) => Source::Synthetic { seed: seed_and_version.0, generator_version: seed_and_version.1 },
        None => source,
    };
    rows.sort_by_key(|r| r.body);
    let index: HashMap<i64, u32> = rows.iter().enumerate().map(|(i, r)| (r.body, i as u32)).collect();

    progress("reading transmitters", 0.0);
    let transmitters = read_transmitters(&paths.transmitters, &index)?;

    let edges = read_weights(&paths.weights, &index, progress)?;
    progress("merging connections", 0.0);
    let edges = merge(edges, options.min_synapses);

    let neurons = make_neurons(&rows, &transmitters);
    // The eye is anatomy: it is placed on the real wiring, whatever the control does after.
    let eye = place_eye(&rows, &neurons, &edges);
    if eye.cells.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no photoreceptor could be placed on the eye ({} photoreceptors, none with a hex-annotated partner)",
            paths.annotations.display(),
            eye.photoreceptors
        )));
    }
    assemble(neurons, edges, eye, Provenance { source, control: options.control.clone(), inputs_key }, started, progress)
}

/// The steps after reading that both releases share: the control applied to the wiring (the
/// eye, already placed, is anatomy and stays), the log-share strengths, the named groups.
pub(crate) fn assemble(
    neurons: Neurons,
    edges: Vec<(u32, u32, u32)>,
    eye: Eye,
    provenance: Provenance,
    started: Instant,
    progress: Progress,
) -> Result<Connectome> {
    progress("applying control", 0.0);
    let edges = match &provenance.control {
        Control::None => edges,
        Control::ShuffledWiring { seed } => shuffle_wiring(edges, *seed),
        Control::Lesion { regions } => lesion(edges, &neurons.region, regions),
    };
    progress("computing strengths", 0.0);
    let inputs = to_csr(neurons.len(), &edges)?;
    let groups = find_groups(&neurons, &inputs);
    progress("done", 1.0);
    Ok(Connectome { provenance, neurons, inputs, eye, groups, build_seconds: started.elapsed().as_secs_f64() })
}

/// The stand-in's mark on its tables: (seed, generator version).
type StandInMark = (u64, u32);

/// The neuron rows, and the stand-in's mark when the table carries it.
fn read_annotations(path: &Path) -> Result<(Vec<NeuronRow>, Option<StandInMark>)> {
    let mut table = Table::open(path, columns::ANNOTATIONS_REQUIRED, columns::ANNOTATIONS_OPTIONAL)?;
    let mark = |k: &str| table.metadata.get(k).and_then(|v| v.parse::<u64>().ok());
    let marked = match (mark(synthetic::SEED_KEY), mark(synthetic::GENERATOR_KEY)) {
        (Some(seed), Some(v)) => Some((seed, v as u32)),
        _ => None,
    };
    let has = |t: &Table, c: &str| t.has(c);
    let (has_class, has_soma, has_tosoma) = (has(&table, "class"), has(&table, "somaLocation"), has(&table, "tosomaLocation"));
    let (has_hex, has_soma_side, has_root_side) =
        (has(&table, "assignedOlHex1") && has(&table, "assignedOlHex2"), has(&table, "somaSide"), has(&table, "rootSide"));
    let mut seen: HashMap<i64, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut row_base = 0usize;
    while let Some(batch) = table.next_batch()? {
        let n = batch.len();
        fn none<T: Clone>(n: usize) -> Vec<Option<T>> {
            vec![None; n]
        }
        let bodies = batch.ints("bodyId")?;
        let types = batch.strings("type")?;
        let supers = batch.strings("superclass")?;
        let status = batch.strings("status")?;
        let classes = if has_class { batch.strings("class")? } else { none(n) };
        let soma_side = if has_soma_side { batch.strings("somaSide")? } else { none(n) };
        let root_side = if has_root_side { batch.strings("rootSide")? } else { none(n) };
        let soma = if has_soma { batch.points("somaLocation")? } else { none(n) };
        let tosoma = if has_tosoma { batch.points("tosomaLocation")? } else { none(n) };
        let (hex1, hex2) = if has_hex { (batch.numbers("assignedOlHex1")?, batch.numbers("assignedOlHex2")?) } else { (none(n), none(n)) };
        for i in 0..n {
            let Some(body) = bodies[i] else {
                return Err(Error::table(path, format!("row {}: bodyId is null", row_base + i)));
            };
            if let Some(first) = seen.insert(body, row_base + i) {
                return Err(Error::table(path, format!("duplicate bodyId {body} (rows {first} and {})", row_base + i)));
            }
            if !rules::is_neuron(status[i].as_deref(), supers[i].as_deref(), classes[i].as_deref()) {
                continue;
            }
            let position = soma[i].or(tosoma[i]);
            let soma_um = match position {
                Some(p) => [(p[0] * VOXEL_UM) as f32, (p[1] * VOXEL_UM) as f32, (p[2] * VOXEL_UM) as f32],
                None => [f32::NAN; 3],
            };
            let hex = match (hex1[i], hex2[i]) {
                (Some(a), Some(b)) => Some((a.round() as i32, b.round() as i32)),
                _ => None,
            };
            out.push(NeuronRow {
                body,
                cell_type: types[i].clone().unwrap_or_default(),
                class: classes[i].clone().unwrap_or_default(),
                superclass: supers[i].clone().unwrap_or_default(),
                neuropil: String::new(),
                side: Side::parse(soma_side[i].as_deref(), root_side[i].as_deref()),
                soma_um,
                hex,
            });
        }
        row_base += n;
    }
    if row_base == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    if out.is_empty() {
        return Err(Error::table(path, format!("none of its {row_base} rows is a traced neuron with a superclass")));
    }
    Ok((out, marked))
}

fn read_transmitters(path: &Path, index: &HashMap<i64, u32>) -> Result<Vec<Transmitter>> {
    let mut table = Table::open(path, columns::TRANSMITTERS_REQUIRED, columns::TRANSMITTERS_OPTIONAL)?;
    let cols: Vec<&str> = columns::TRANSMITTERS_OPTIONAL.iter().copied().filter(|c| table.has(c)).collect();
    if cols.is_empty() {
        return Err(Error::table(
            path,
            format!("none of the transmitter columns {} is present", columns::TRANSMITTERS_OPTIONAL.join(", ")),
        ));
    }
    let mut out = vec![Transmitter::Unknown; index.len()];
    let mut rows = 0usize;
    while let Some(batch) = table.next_batch()? {
        let bodies = batch.ints("body")?;
        let get =
            |c: &str| -> Result<Vec<Option<String>>> { if cols.contains(&c) { batch.strings(c) } else { Ok(vec![None; batch.len()]) } };
        let (consensus, celltype, own) = (get("consensus_nt")?, get("celltype_predicted_nt")?, get("predicted_nt")?);
        for i in 0..batch.len() {
            if let Some(&j) = bodies[i].and_then(|b| index.get(&b)) {
                out[j as usize] = Transmitter::choose(consensus[i].as_deref(), celltype[i].as_deref(), own[i].as_deref());
            }
        }
        rows += batch.len();
    }
    if rows == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    Ok(out)
}

/// (post, pre, synapses) for every row whose both ends are neurons.
fn read_weights(path: &Path, index: &HashMap<i64, u32>, progress: Progress) -> Result<Vec<(u32, u32, u32)>> {
    let mut table = Table::open(path, columns::WEIGHTS_REQUIRED, &[])?;
    let batches = table.num_batches().max(1);
    let mut edges = Vec::new();
    let mut rows = 0usize;
    let mut done = 0usize;
    while let Some(batch) = table.next_batch()? {
        let pre = batch.ints("body_pre")?;
        let post = batch.ints("body_post")?;
        let weight = batch.ints("weight")?;
        for i in 0..batch.len() {
            let (Some(a), Some(b)) = (pre[i], post[i]) else { continue };
            let (Some(&a), Some(&b)) = (index.get(&a), index.get(&b)) else { continue };
            let w = match weight[i] {
                Some(w) if w >= 0 => u32::try_from(w).unwrap_or(u32::MAX),
                Some(w) => return Err(Error::table(path, format!("row {}: negative synapse count {w}", rows + i))),
                None => continue,
            };
            edges.push((b, a, w));
        }
        rows += batch.len();
        done += 1;
        progress("reading connections", done as f64 / batches as f64);
    }
    if rows == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    Ok(edges)
}

/// Sorts by (post, pre), sums duplicate rows and keeps those with at least `min` synapses.
pub(crate) fn merge(mut edges: Vec<(u32, u32, u32)>, min: u32) -> Vec<(u32, u32, u32)> {
    edges.par_sort_unstable();
    let mut out: Vec<(u32, u32, u32)> = Vec::with_capacity(edges.len());
    for (post, pre, w) in edges {
        match out.last_mut() {
            Some(last) if last.0 == post && last.1 == pre => last.2 = last.2.saturating_add(w),
            _ => {
                if let Some(last) = out.last()
                    && last.2 < min
                {
                    out.pop();
                }
                out.push((post, pre, w));
            }
        }
    }
    if out.last().is_some_and(|l| l.2 < min) {
        out.pop();
    }
    out
}

/// The receiving ends of all connections handed out again in a random order (a portable ChaCha8
/// Fisher–Yates), self-loops dropped, duplicates that land on one pair summed.
pub fn shuffle_wiring(edges: Vec<(u32, u32, u32)>, seed: u64) -> Vec<(u32, u32, u32)> {
    let mut posts: Vec<u32> = edges.iter().map(|e| e.0).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for i in (1..posts.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        posts.swap(i, j);
    }
    let shuffled: Vec<(u32, u32, u32)> =
        edges.iter().zip(posts).filter(|(e, post)| e.1 != *post).map(|(e, post)| (post, e.1, e.2)).collect();
    merge(shuffled, 0)
}

/// Every connection whose sender is in one of `regions` (or a region it covers: the optic lobe
/// covers its neuropils) dropped.
pub fn lesion(edges: Vec<(u32, u32, u32)>, region: &[Region], regions: &[Region]) -> Vec<(u32, u32, u32)> {
    let cut: Vec<Region> = regions.iter().flat_map(|r| r.covers()).collect();
    edges.into_iter().filter(|e| !cut.contains(&region[e.1 as usize])).collect()
}

pub(crate) fn make_neurons(rows: &[NeuronRow], transmitters: &[Transmitter]) -> Neurons {
    let mut names: Vec<String> = vec![String::new()];
    let mut name_index: HashMap<String, u32> = HashMap::from([(String::new(), 0)]);
    let mut intern = |s: &str| -> u32 {
        if let Some(&i) = name_index.get(s) {
            return i;
        }
        names.push(s.to_string());
        name_index.insert(s.to_string(), names.len() as u32 - 1);
        names.len() as u32 - 1
    };
    let mut n = Neurons::default();
    for (i, r) in rows.iter().enumerate() {
        n.body_id.push(r.body);
        n.cell_type.push(intern(&r.cell_type));
        n.class.push(intern(&r.class));
        n.superclass.push(intern(&r.superclass));
        n.side.push(r.side);
        n.region.push(Region::of(&r.cell_type, &r.class, &r.superclass, &r.neuropil));
        n.soma_um.push(r.soma_um);
        n.transmitter.push(transmitters[i]);
        n.sign.push(rules::sign(transmitters[i], rules::photoreceptor_kind(&r.cell_type).is_some()));
    }
    n.names = names;
    n
}

/// Each photoreceptor takes the hex column of the hex-annotated cell it sends the most synapses
/// to (ties: the lower body id); then the fair-eye cut.
fn place_eye(rows: &[NeuronRow], neurons: &Neurons, edges: &[(u32, u32, u32)]) -> Eye {
    let kind: Vec<Option<PhotoreceptorKind>> = rows.iter().map(|r| rules::photoreceptor_kind(&r.cell_type)).collect();
    // Best (synapses, -post body) per photoreceptor.
    let mut best: HashMap<u32, (u32, u32)> = HashMap::new();
    for &(post, pre, w) in edges {
        if kind[pre as usize].is_none() || rows[post as usize].hex.is_none() {
            continue;
        }
        let better = match best.get(&pre) {
            None => true,
            Some(&(bw, bpost)) => w > bw || (w == bw && neurons.body_id[post as usize] < neurons.body_id[bpost as usize]),
        };
        if better {
            best.insert(pre, (w, post));
        }
    }
    let photoreceptors: Vec<Photoreceptor> = (0..rows.len())
        .filter_map(|i| {
            let k = kind[i]?;
            let column = best.get(&(i as u32)).and_then(|&(_, post)| rows[post as usize].hex);
            Some(Photoreceptor { neuron: i as u32, kind: k, column })
        })
        .collect();
    Eye::place(&photoreceptors)
}

/// Sorted (post, pre, synapses) → CSR with the initial strengths.
fn to_csr(n: usize, edges: &[(u32, u32, u32)]) -> Result<Csr> {
    if edges.len() >= u32::MAX as usize {
        return Err(Error::Invalid(format!("{} connections are more than this brain file can hold", edges.len())));
    }
    let mut row_start = vec![0u32; n + 1];
    for e in edges {
        row_start[e.0 as usize + 1] += 1;
    }
    for j in 0..n {
        row_start[j + 1] += row_start[j];
    }
    let pre: Vec<u32> = edges.iter().map(|e| e.1).collect();
    let synapses: Vec<u32> = edges.iter().map(|e| e.2).collect();
    let mut strength = vec![0f32; edges.len()];
    // Rows are independent: split the strength vector by row and fill in parallel.
    let mut rest: &mut [f32] = &mut strength;
    let mut chunks: Vec<(usize, &mut [f32])> = Vec::with_capacity(n);
    for j in 0..n {
        let len = (row_start[j + 1] - row_start[j]) as usize;
        let (head, tail) = rest.split_at_mut(len);
        chunks.push((j, head));
        rest = tail;
    }
    chunks.into_par_iter().for_each(|(j, out)| {
        let r = row_start[j] as usize..row_start[j + 1] as usize;
        rules::initial_strengths(&synapses[r], out);
    });
    Ok(Csr { row_start, pre, synapses, strength })
}

fn find_groups(neurons: &Neurons, inputs: &Csr) -> Groups {
    let mut g = Groups::default();
    for i in 0..neurons.len() {
        let t = neurons.type_name(i);
        match neurons.region[i] {
            Region::Descending => g.descending.push(i as u32),
            Region::KenyonCells => g.kenyon.push(i as u32),
            Region::Mbon => g.mbon.push(i as u32),
            _ => {}
        }
        if rules::is_pam(t) {
            g.pam.push(i as u32);
        } else if rules::is_ppl1(t) {
            g.ppl1.push(i as u32);
        }
    }
    let is_pam: Vec<bool> = (0..neurons.len()).map(|i| rules::is_pam(neurons.type_name(i))).collect();
    let is_ppl1: Vec<bool> = (0..neurons.len()).map(|i| rules::is_ppl1(neurons.type_name(i))).collect();
    g.mbon_valence = g
        .mbon
        .iter()
        .map(|&m| {
            let (mut pam, mut ppl1) = (0u64, 0u64);
            for e in inputs.row(m as usize) {
                let pre = inputs.pre[e] as usize;
                if is_pam[pre] {
                    pam += inputs.synapses[e] as u64;
                } else if is_ppl1[pre] {
                    ppl1 += inputs.synapses[e] as u64;
                }
            }
            if ppl1 > pam {
                1
            } else if pam > ppl1 {
                -1
            } else if neurons.transmitter[m as usize] == Transmitter::Acetylcholine {
                1
            } else {
                -1
            }
        })
        .collect();
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_sums_duplicates_then_cuts_at_five() {
        let edges = vec![(1, 0, 3), (1, 0, 2), (1, 2, 4), (0, 1, 9), (2, 1, 5)];
        assert_eq!(merge(edges, 5), vec![(0, 1, 9), (1, 0, 5), (2, 1, 5)]);
    }

    #[test]
    fn shuffle_keeps_senders_and_counts_and_drops_self_loops() {
        let edges: Vec<(u32, u32, u32)> = (0..200u32).map(|i| ((i * 7) % 50, i % 50, 5 + i % 3)).collect();
        let edges = merge(edges, 5);
        let shuffled = shuffle_wiring(edges.clone(), 3);
        assert!(shuffled.iter().all(|e| e.0 != e.1), "no self-loops");
        assert_ne!(shuffled, edges);
        let total = |v: &[(u32, u32, u32)]| v.iter().map(|e| e.2 as u64).sum::<u64>();
        // Only the synapses of dropped self-loops go missing.
        assert!(total(&shuffled) <= total(&edges));
        assert!(total(&shuffled) >= total(&edges) * 9 / 10);
        // Same seed, same brain.
        assert_eq!(shuffle_wiring(edges.clone(), 3), shuffled);
        assert_ne!(shuffle_wiring(edges, 4), shuffled);
    }

    #[test]
    fn lesion_drops_what_the_region_sends() {
        let region = vec![Region::OpticLobe, Region::CentralBrain, Region::Descending];
        let edges = vec![(1, 0, 5), (2, 1, 5), (0, 2, 5)];
        assert_eq!(lesion(edges.clone(), &region, &[Region::OpticLobe]), vec![(2, 1, 5), (0, 2, 5)]);
        // The optic lobe covers its neuropils (FlyWire's medulla here); the medulla alone does not
        // cover the rest of the optic lobe.
        let region = vec![Region::Medulla, Region::CentralBrain, Region::OpticLobe];
        assert_eq!(lesion(edges.clone(), &region, &[Region::OpticLobe]), vec![(2, 1, 5)]);
        assert_eq!(lesion(edges, &region, &[Region::Medulla]), vec![(2, 1, 5), (0, 2, 5)]);
    }

    #[test]
    fn csr_rows_and_strengths() {
        let csr = to_csr(3, &[(0, 1, 5), (0, 2, 20), (2, 0, 7)]).unwrap();
        assert_eq!(csr.row_start, vec![0, 2, 2, 3]);
        assert_eq!(csr.pre, vec![1, 2, 0]);
        assert!((csr.strength[0] + csr.strength[1] - 1.0).abs() < 1e-6);
        assert_eq!(csr.strength[2], 1.0);
    }
}
