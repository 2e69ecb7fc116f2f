//! The FlyWire whole-brain connectome, release 783 (the female FAFB brain; Dorkenwald et al. and
//! Schlegel et al., Nature 634, 2024; CC BY-NC 4.0), read from FlyWire's own table schema: the
//! Codex classification (`root_id`, `super_class`, `class`, `cell_type`, `side`, …), the Codex
//! neuron table (`root_id`, `group` = main neuropils, `nt_type`), the consolidated cell types
//! (`root_id`, `primary_type`) and a connection table (`pre_pt_root_id`, `post_pt_root_id`,
//! `syn_count`, with a `neuropil` column when it is the Zenodo release's per-neuropil table). The
//! bundle shipped with the app (`sim/brain/data/flywire783-hemispheres/`, connections within each
//! hemisphere only) and the full release a user downloads are read by the same code.
//!
//! The rules are the MaleCNS ones (`rules`, `build::assemble`): a neuron is a classified body that
//! takes part in a connection of ≥ 5 synapses; its sign comes from its own transmitter prediction,
//! else its cell type's consensus, else acetylcholine; photoreceptors excite; strengths are log
//! shares. Autapses (a neuron onto itself) are kept, as the MaleCNS path keeps them. The eye is
//! always placed on a retinotopic sheet recovered from the wiring (`retina`). The point cloud
//! shows the release's own points where a downloaded release has Codex's coordinates table (one
//! mean point per neuron; a neuron without a row among its partners), and otherwise (the bundle)
//! a layout made from the wiring (`layout`), labelled as such.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;

use super::build::{self, NeuronRow, Progress};
use super::feather::Table;
use super::rules::{Side, Transmitter};
use super::{Connectome, Control, Provenance, Source, layout, retina};
use crate::error::{Error, Result};

pub const RELEASE: &str = "783";
/// Version of the FlyWire reading rules (this file, `retina`, `layout`); part of the brain's
/// inputs key, so a change rebuilds the brain files made from FlyWire tables.
pub const READER_VERSION: u32 = 1;

/// File names in a FlyWire folder (the bundle's; `in_dir` also finds the Zenodo connection
/// table under its published name).
pub const CLASSIFICATION: &str = "classification.feather";
pub const NEURONS: &str = "neurons.feather";
pub const CELL_TYPES: &str = "consolidated_cell_types.feather";
pub const CONNECTIONS: &str = "connections.feather";
pub const ZENODO_CONNECTIONS: &str = "proofread_connections_783.feather";
/// Codex's points on each neuron (`coordinates.csv.gz` converted): a downloaded full release has
/// them, the bundle does not.
pub const COORDINATES: &str = "coordinates.feather";

/// The shipped bundle's sha256 sums, as its README gives them (checked by a test).
pub const BUNDLE_SHA256: [(&str, &str); 4] = [
    (CONNECTIONS, "c7a364bb1c8ed01048ec4ebbc9e71968386c2f8dc9febfaa583ef0ac81640ad6"),
    (CLASSIFICATION, "46101afa3050d8c935122c1c3443dab9fe0beb69b765a286ed390bd5fd85d14f"),
    (NEURONS, "bd58a497c4b7c5eccd280792e7f7654be4d4e61c9da980ebefe261b77fc2eac9"),
    (CELL_TYPES, "dab499fa8babd5ac6ee320ff1751bc89b4fa1bb469ac19ab2e9d9fc8638ef370"),
];

/// Columns the reader needs and those it uses when present.
pub mod columns {
    pub const CLASSIFICATION_REQUIRED: &[&str] = &["root_id", "super_class", "cell_type"];
    pub const CLASSIFICATION_OPTIONAL: &[&str] = &["class", "side"];
    pub const NEURONS_REQUIRED: &[&str] = &["root_id", "nt_type"];
    pub const NEURONS_OPTIONAL: &[&str] = &["group"];
    pub const CELL_TYPES_REQUIRED: &[&str] = &["root_id", "primary_type"];
    pub const COORDINATES_REQUIRED: &[&str] = &["root_id", "position"];
    pub const CONNECTIONS_REQUIRED: &[&str] = &["pre_pt_root_id", "post_pt_root_id", "syn_count"];
    /// Present in the Zenodo table (one row per pair and neuropil: rows are summed per pair).
    pub const CONNECTIONS_OPTIONAL: &[&str] = &["neuropil", "hemisphere"];
}

/// The tables of one FlyWire brain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlyWirePaths {
    pub classification: PathBuf,
    pub neurons: PathBuf,
    /// Optional: without it the classification's `cell_type` is used alone.
    pub cell_types: PathBuf,
    pub connections: PathBuf,
    /// Optional: with it the cloud shows the release's own positions, without it a layout made
    /// from the wiring.
    pub coordinates: PathBuf,
}

impl FlyWirePaths {
    pub fn in_dir(dir: &Path) -> FlyWirePaths {
        let bundle = dir.join(CONNECTIONS);
        let zenodo = dir.join(ZENODO_CONNECTIONS);
        FlyWirePaths {
            classification: dir.join(CLASSIFICATION),
            neurons: dir.join(NEURONS),
            cell_types: dir.join(CELL_TYPES),
            coordinates: dir.join(COORDINATES),
            connections: if !bundle.exists() && zenodo.exists() { zenodo } else { bundle },
        }
    }
    /// The tables that must exist.
    pub fn required(&self) -> [&Path; 3] {
        [&self.classification, &self.neurons, &self.connections]
    }
    /// Every table present (for the inputs key).
    pub fn present(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = self.required().to_vec();
        if self.cell_types.exists() {
            v.push(&self.cell_types);
        }
        if self.coordinates.exists() {
            v.push(&self.coordinates);
        }
        v
    }
}

/// One classified body, before it is known to take part in a connection.
struct Classified {
    cell_type: String,
    class: String,
    superclass: String,
    side: Side,
}

/// Builds a brain from FlyWire tables.
pub fn build(paths: &FlyWirePaths, inputs_key: String, control: &Control, progress: Progress) -> Result<Connectome> {
    let started = Instant::now();
    progress("reading the classification", 0.0);
    let (ids, mut classified) = read_classification(&paths.classification)?;
    let index: HashMap<i64, u32> = ids.iter().enumerate().map(|(i, &b)| (b, i as u32)).collect();
    if paths.cell_types.exists() {
        progress("reading the cell types", 0.0);
        read_cell_types(&paths.cell_types, &index, &mut classified)?;
    }
    progress("reading the neuron table", 0.0);
    let (own_nt, neuropil) = read_neuron_table(&paths.neurons, &index)?;
    let points = if paths.coordinates.exists() {
        progress("reading the coordinates", 0.0);
        Some(read_coordinates(&paths.coordinates, &index)?)
    } else {
        None
    };
    let (edges, within_hemispheres) = read_connections(&paths.connections, &ids, &index, progress)?;

    // The neurons of the graph: classified bodies in at least one kept connection, by root id.
    progress("choosing the neurons", 0.0);
    let mut in_graph = vec![false; ids.len()];
    for &(post, pre, _) in &edges {
        in_graph[post as usize] = true;
        in_graph[pre as usize] = true;
    }
    let mut order: Vec<u32> = (0..ids.len() as u32).filter(|&i| in_graph[i as usize]).collect();
    order.sort_by_key(|&i| ids[i as usize]);
    let mut new_index = vec![u32::MAX; ids.len()];
    for (k, &i) in order.iter().enumerate() {
        new_index[i as usize] = k as u32;
    }
    let mut edges: Vec<(u32, u32, u32)> =
        edges.into_iter().map(|(post, pre, w)| (new_index[post as usize], new_index[pre as usize], w)).collect();
    edges.sort_unstable();

    let consensus = type_consensus(&order, &classified, &own_nt);
    let mut rows: Vec<NeuronRow> = Vec::with_capacity(order.len());
    let mut transmitters = Vec::with_capacity(order.len());
    for &i in &order {
        let c = &mut classified[i as usize];
        let typed = consensus.get(&c.cell_type).copied().flatten();
        transmitters.push(Transmitter::choose(own_nt[i as usize].map(Transmitter::name), typed.map(Transmitter::name), None));
        rows.push(NeuronRow {
            body: ids[i as usize],
            cell_type: std::mem::take(&mut c.cell_type),
            class: std::mem::take(&mut c.class),
            superclass: std::mem::take(&mut c.superclass),
            neuropil: neuropil[i as usize].clone().unwrap_or_default(),
            side: c.side,
            soma_um: [f32::NAN; 3],
            hex: None,
        });
    }
    let mut neurons = build::make_neurons(&rows, &transmitters);

    // The eye from the wiring (anatomy: before any control), then the layout of the cloud.
    progress("recovering the eye from the wiring", 0.0);
    let sheet = retina::recover(&neurons, &edges).map_err(|e| Error::table(&paths.connections, format!("the eye: {e}")))?;
    let layout_from_wiring = match &points {
        Some(points) => {
            progress("placing the neurons where the release has them", 0.0);
            let graph_points: Vec<Option<[f32; 3]>> = order.iter().map(|&i| points[i as usize]).collect();
            neurons.soma_um = place_from_release(&graph_points, &edges).map_err(|e| Error::table(&paths.coordinates, e))?;
            false
        }
        None => {
            progress("laying the brain out from the wiring", 0.0);
            neurons.soma_um = layout::from_wiring(&neurons, &edges, &sheet);
            true
        }
    };
    let eye = sheet.eye;
    let source = Source::FlyWire { release: RELEASE.to_string(), within_hemispheres, layout_from_wiring };
    build::assemble(neurons, edges, eye, Provenance { source, control: control.clone(), inputs_key }, started, progress)
}

fn nonempty(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Root ids in file order and what the classification says of each.
fn read_classification(path: &Path) -> Result<(Vec<i64>, Vec<Classified>)> {
    let mut table = Table::open(path, columns::CLASSIFICATION_REQUIRED, columns::CLASSIFICATION_OPTIONAL)?;
    let (has_class, has_side) = (table.has("class"), table.has("side"));
    let mut ids = Vec::new();
    let mut out = Vec::new();
    let mut seen: HashMap<i64, usize> = HashMap::new();
    while let Some(batch) = table.next_batch()? {
        let n = batch.len();
        let roots = batch.ints("root_id")?;
        let supers = batch.strings("super_class")?;
        let types = batch.strings("cell_type")?;
        let classes = if has_class { batch.strings("class")? } else { vec![None; n] };
        let sides = if has_side { batch.strings("side")? } else { vec![None; n] };
        for (((root, sup), ty), (class, side)) in roots.into_iter().zip(supers).zip(types).zip(classes.into_iter().zip(sides)) {
            let row = ids.len();
            let Some(root) = root else {
                return Err(Error::table(path, format!("column root_id: row {row} is null")));
            };
            if let Some(first) = seen.insert(root, row) {
                return Err(Error::table(path, format!("column root_id: {root} appears twice (rows {first} and {row})")));
            }
            ids.push(root);
            out.push(Classified {
                cell_type: nonempty(ty).unwrap_or_default(),
                class: nonempty(class).unwrap_or_default(),
                superclass: nonempty(sup).unwrap_or_default(),
                side: Side::parse(side.as_deref(), None),
            });
        }
    }
    if ids.is_empty() {
        return Err(Error::table(path, "the table has no rows"));
    }
    Ok((ids, out))
}

/// The consolidated cell type replaces the classification's where it has one.
fn read_cell_types(path: &Path, index: &HashMap<i64, u32>, classified: &mut [Classified]) -> Result<()> {
    let mut table = Table::open(path, columns::CELL_TYPES_REQUIRED, &[])?;
    while let Some(batch) = table.next_batch()? {
        let roots = batch.ints("root_id")?;
        let types = batch.strings("primary_type")?;
        for (root, ty) in roots.into_iter().zip(types) {
            if let (Some(&i), Some(ty)) = (root.and_then(|r| index.get(&r)), nonempty(ty)) {
                classified[i as usize].cell_type = ty;
            }
        }
    }
    Ok(())
}

/// Per classified body: its own transmitter prediction, and its main neuropils.
type NeuronTable = (Vec<Option<Transmitter>>, Vec<Option<String>>);
/// (post, pre, synapses) rows, and whether the table holds connections within hemispheres only.
type Connections = (Vec<(u32, u32, u32)>, bool);

/// Each classified body's own transmitter prediction and main neuropils.
fn read_neuron_table(path: &Path, index: &HashMap<i64, u32>) -> Result<NeuronTable> {
    let mut table = Table::open(path, columns::NEURONS_REQUIRED, columns::NEURONS_OPTIONAL)?;
    let has_group = table.has("group");
    let mut nt = vec![None; index.len()];
    let mut group = vec![None; index.len()];
    let mut rows = 0usize;
    while let Some(batch) = table.next_batch()? {
        let n = batch.len();
        let roots = batch.ints("root_id")?;
        let calls = batch.strings("nt_type")?;
        let groups = if has_group { batch.strings("group")? } else { vec![None; n] };
        for (k, ((root, call), g)) in roots.into_iter().zip(calls).zip(groups).enumerate() {
            let Some(root) = root else {
                return Err(Error::table(path, format!("column root_id: row {} is null", rows + k)));
            };
            if let Some(&i) = index.get(&root) {
                nt[i as usize] = call.as_deref().and_then(Transmitter::parse);
                group[i as usize] = nonempty(g);
            }
        }
        rows += n;
    }
    if rows == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    Ok((nt, group))
}

/// One point of Codex's `position` column ("[x y z]", spaces or commas), as numbers.
pub fn parse_position(text: &str) -> Option<[f64; 3]> {
    let inner = text.trim().trim_start_matches(['[', '(']).trim_end_matches([']', ')']);
    let mut values = inner
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse::<f64>().ok().filter(|v| v.is_finite()));
    let point = [values.next()??, values.next()??, values.next()??];
    values.next().is_none().then_some(point)
}

/// Each classified body's position in µm: the mean of its rows in Codex's coordinates table
/// (none for a body without a row; rows of bodies not in the classification are skipped). The
/// table states no unit: its points are read as nanometres, unless their depth spans less than a
/// twentieth of their width, the shape of FAFB's raw voxel grid (4 × 4 × 40 nm), which is then
/// scaled by its voxel size.
fn read_coordinates(path: &Path, index: &HashMap<i64, u32>) -> Result<Vec<Option<[f32; 3]>>> {
    let mut table = Table::open(path, columns::COORDINATES_REQUIRED, &[])?;
    let mut sums = vec![([0f64; 3], 0u32); index.len()];
    let mut rows = 0usize;
    while let Some(batch) = table.next_batch()? {
        let roots = batch.ints("root_id")?;
        let positions = batch.strings("position")?;
        for (k, (root, position)) in roots.into_iter().zip(positions).enumerate() {
            let row = rows + k;
            let Some(root) = root else {
                return Err(Error::table(path, format!("column root_id: row {row} is null")));
            };
            let Some(&i) = index.get(&root) else { continue };
            let text = position.unwrap_or_default();
            let point = parse_position(&text)
                .ok_or_else(|| Error::table(path, format!("column position: row {row} ({text:?}) is not three numbers")))?;
            let (sum, n) = &mut sums[i as usize];
            for d in 0..3 {
                sum[d] += point[d];
            }
            *n += 1;
        }
        rows += batch.len();
    }
    if rows == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    let means: Vec<Option<[f64; 3]>> = sums.iter().map(|(s, n)| (*n > 0).then(|| s.map(|v| v / *n as f64))).collect();
    let extent = |d: usize| {
        let (lo, hi) = means.iter().flatten().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p[d]), hi.max(p[d])));
        (hi - lo).max(0.0)
    };
    let nm_per_unit = if extent(2) * 20.0 < extent(0) { [4.0, 4.0, 40.0] } else { [1.0; 3] };
    Ok(means.into_iter().map(|p| p.map(|p| [0, 1, 2].map(|d| (p[d] * nm_per_unit[d] / 1000.0) as f32))).collect())
}

/// The cloud's positions from the release's points (`points`, per neuron of the graph): a neuron
/// without one is put at the mean of its placed partners' (rounds until none is left that can be
/// reached), so every neuron of the graph is drawn. Fails when fewer than half have a point: then
/// the table is not this release's.
fn place_from_release(points: &[Option<[f32; 3]>], edges: &[(u32, u32, u32)]) -> std::result::Result<Vec<[f32; 3]>, String> {
    let n = points.len();
    let placed = points.iter().filter(|p| p.is_some()).count();
    if placed * 2 < n {
        return Err(format!("only {placed} of the graph's {n} neurons have a position: not this release's coordinates"));
    }
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(post, pre, _) in edges {
        partners[post as usize].push(pre);
        partners[pre as usize].push(post);
    }
    let mut out: Vec<Option<[f32; 3]>> = points.to_vec();
    loop {
        let mut filled = Vec::new();
        for i in (0..n).filter(|&i| out[i].is_none()) {
            let near: Vec<[f32; 3]> = partners[i].iter().filter_map(|&j| out[j as usize]).collect();
            if !near.is_empty() {
                let k = near.len() as f32;
                filled.push((i, [0, 1, 2].map(|d| near.iter().map(|p| p[d]).sum::<f32>() / k)));
            }
        }
        if filled.is_empty() {
            break;
        }
        for (i, p) in filled {
            out[i] = Some(p);
        }
    }
    // Every neuron of the graph has a partner, and the placed ones reach all of its components
    // but those with no point at all: those sit at the centre of the placed ones.
    let centre = {
        let placed: Vec<[f32; 3]> = out.iter().flatten().copied().collect();
        let k = placed.len().max(1) as f32;
        [0, 1, 2].map(|d| placed.iter().map(|p| p[d]).sum::<f32>() / k)
    };
    Ok(out.into_iter().map(|p| p.unwrap_or(centre)).collect())
}

/// (post, pre, synapses) over classified bodies, merged per pair and cut at 5 synapses, and
/// whether the table holds connections within hemispheres only (the bundle's `hemisphere`
/// column). A table without a `neuropil` column has one row per pair with ≥ 5 synapses: a
/// duplicate pair or a smaller count there is an error, as is a negative count anywhere and a
/// body missing from the classification.
fn read_connections(path: &Path, ids: &[i64], index: &HashMap<i64, u32>, progress: Progress) -> Result<Connections> {
    let mut table = Table::open(path, columns::CONNECTIONS_REQUIRED, columns::CONNECTIONS_OPTIONAL)?;
    let per_neuropil = table.has("neuropil");
    let within_hemispheres = table.has("hemisphere");
    let batches = table.num_batches().max(1);
    let mut edges = Vec::new();
    let (mut rows, mut done) = (0usize, 0usize);
    while let Some(batch) = table.next_batch()? {
        let pre = batch.ints("pre_pt_root_id")?;
        let post = batch.ints("post_pt_root_id")?;
        let count = batch.ints("syn_count")?;
        for i in 0..batch.len() {
            let row = rows + i;
            let end = |column: &str, v: Option<i64>| -> Result<u32> {
                let v = v.ok_or_else(|| Error::table(path, format!("column {column}: row {row} is null")))?;
                index.get(&v).copied().ok_or_else(|| {
                    Error::table(path, format!("column {column}: row {row} names neuron {v}, which is not in the classification"))
                })
            };
            let (a, b) = (end("pre_pt_root_id", pre[i])?, end("post_pt_root_id", post[i])?);
            let n = match count[i] {
                None => return Err(Error::table(path, format!("column syn_count: row {row} is null"))),
                Some(n) if n < 0 => return Err(Error::table(path, format!("column syn_count: row {row} is negative ({n})"))),
                Some(n) if n < 5 && !per_neuropil => {
                    return Err(Error::table(
                        path,
                        format!("column syn_count: row {row} has {n} synapses, but a table of pairs holds only pairs of ≥ 5"),
                    ));
                }
                Some(n) => u32::try_from(n).unwrap_or(u32::MAX),
            };
            edges.push((b, a, n));
        }
        rows += batch.len();
        done += 1;
        progress("reading connections", done as f64 / batches as f64);
    }
    if rows == 0 {
        return Err(Error::table(path, "the table has no rows"));
    }
    progress("merging connections", 0.0);
    if per_neuropil {
        return Ok((build::merge(edges, 5), within_hemispheres));
    }
    let mut sorted = edges;
    sorted.par_sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0 && w[0].1 == w[1].1) {
        return Err(Error::table(
            path,
            format!(
                "the pair {} → {} appears twice in a table of pairs (without a neuropil column, rows are one per pair)",
                ids[w[0].1 as usize], ids[w[0].0 as usize]
            ),
        ));
    }
    Ok((sorted, within_hemispheres))
}

/// Per cell type: the transmitter most of its typed neurons (in the graph) are predicted to
/// release (ties: the first in `Transmitter::ALL`), or None when none has a prediction.
fn type_consensus(order: &[u32], classified: &[Classified], own: &[Option<Transmitter>]) -> HashMap<String, Option<Transmitter>> {
    let mut counts: HashMap<&str, [u32; 8]> = HashMap::new();
    for &i in order {
        let t = classified[i as usize].cell_type.as_str();
        if t.is_empty() {
            continue;
        }
        let c = counts.entry(t).or_default();
        if let Some(nt) = own[i as usize] {
            c[nt as usize] += 1;
        }
    }
    counts
        .into_iter()
        .map(|(t, c)| {
            let best = (0..8).filter(|&k| c[k] > 0).max_by_key(|&k| (c[k], std::cmp::Reverse(k)));
            (t.to_string(), best.map(|k| Transmitter::from_u8(k as u8)))
        })
        .collect()
}

/// The shipped bundle's folder inside the repository (what `shipped` embeds).
pub fn repository_bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("flywire783-hemispheres")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_positions_are_three_numbers_in_brackets() {
        assert_eq!(parse_position("[437664 212992 94520]"), Some([437664.0, 212992.0, 94520.0]));
        assert_eq!(parse_position(" [1.5, -2, 3e2] "), Some([1.5, -2.0, 300.0]));
        assert_eq!(parse_position("4 5 6"), Some([4.0, 5.0, 6.0]));
        for bad in ["", "[1 2]", "[1 2 3 4]", "[1 two 3]", "[1 NaN 3]"] {
            assert_eq!(parse_position(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_neuron_without_a_point_is_put_among_its_partners() {
        // 0 and 1 placed; 2 listens to both; 3 hears only 2 (placed in the second round); 4 is on
        // its own with 5 (an island with no point: the centre of the placed ones).
        let points =
            vec![Some([0.0, 0.0, 0.0]), Some([2.0, 4.0, 6.0]), None, None, None, None, Some([10.0, 10.0, 10.0]), Some([4.0, 6.0, 2.0])];
        let edges = vec![(2, 0, 5), (2, 1, 5), (3, 2, 5), (4, 5, 5)];
        let out = place_from_release(&points, &edges).unwrap();
        assert_eq!(out[0], [0.0, 0.0, 0.0]);
        assert_eq!(out[2], [1.0, 2.0, 3.0]);
        assert_eq!(out[3], [1.0, 2.0, 3.0]);
        assert_eq!(out[4], [3.0, 4.0, 4.0]);
        assert!(place_from_release(&[Some([0.0; 3]), None, None], &[]).unwrap_err().contains("only 1 of the graph's 3"));
    }

    #[test]
    fn type_consensus_is_the_majority_call() {
        let c = |t: &str| Classified { cell_type: t.into(), class: String::new(), superclass: String::new(), side: Side::Left };
        let classified = vec![c("A"), c("A"), c("A"), c("B"), c("")];
        let own = vec![Some(Transmitter::Gaba), Some(Transmitter::Gaba), Some(Transmitter::Acetylcholine), None, Some(Transmitter::Gaba)];
        let m = type_consensus(&[0, 1, 2, 3, 4], &classified, &own);
        assert_eq!(m["A"], Some(Transmitter::Gaba));
        assert_eq!(m["B"], None);
        assert!(!m.contains_key(""));
    }
}
