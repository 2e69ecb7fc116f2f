//! The FlyWire v783 reader on the real bundle shipped with the app (the default brain: its counts,
//! the eye recovered from the wiring, its id from the tables' content) and on small broken
//! tables in FlyWire's schema: every kind of bad input is a clear error naming the file and the
//! column (or what failed), and no brain file is written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow_array::{ArrayRef, Int32Array, Int64Array, StringArray};
use flychess_brain::connectome::feather;
use flychess_brain::connectome::flywire::{self, BUNDLE_SHA256};
use flychess_brain::connectome::rules::{Region, Transmitter};
use flychess_brain::connectome::{Connectome, Info, Source, download};
use flychess_brain::store::{self, BrainSpec, Tables};

struct Built {
    data: tempfile::TempDir,
    connectome: Connectome,
    info: Info,
    checksum: String,
}

/// The default brain, built once from the embedded bundle for the tests of this file.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let data = tempfile::tempdir().unwrap();
        let loaded = store::ensure(&BrainSpec::default(), data.path(), &|_, _| {}).unwrap();
        Built { info: loaded.connectome.info(), checksum: loaded.checksum, connectome: loaded.connectome, data }
    })
}

#[test]
fn the_shipped_bundle_is_the_one_its_readme_names() {
    let dir = flywire::repository_bundle();
    for (file, sha) in BUNDLE_SHA256 {
        assert_eq!(download::sha256_file(&dir.join(file)).unwrap(), sha, "{file}");
    }
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for (_, sha) in BUNDLE_SHA256 {
        assert!(readme.contains(sha), "the README lists {sha}");
    }
    assert!(std::fs::read_to_string(dir.join("LICENSE.md")).unwrap().contains("CC BY-NC 4.0"));
}

#[test]
fn the_default_brain_is_flywire_with_its_published_counts() {
    let i = &built().info;
    eprintln!("{}", serde_json::to_string_pretty(i).unwrap());
    assert!(i.source.starts_with("FlyWire v783, within hemispheres"), "{}", i.source);
    assert!(!i.synthetic);
    assert_eq!(i.neurons, 133_436, "neurons taking part in a connection");
    assert_eq!(i.connections, 2_309_630, "autapses kept, as the MaleCNS rules keep them");
    assert!(i.descending >= 1_200, "{}", i.descending);
    assert!(i.kenyon >= 5_000, "{}", i.kenyon);
    assert!(i.mbon >= 90, "{}", i.mbon);
    assert!(i.pam > 200 && i.ppl1 >= 12, "PAM {} PPL1 {}", i.pam, i.ppl1);
    assert!(i.mbon_approach > 0 && i.mbon_avoid > 0, "MBON valence from PAM vs PPL1 input");
    assert_eq!(i.eye_to_descending_shortest_path, Some(2));
    // The optic lobe's neuropils, from FlyWire's `group`.
    for r in [Region::Lamina, Region::Medulla, Region::Lobula, Region::LobulaPlate, Region::Photoreceptors] {
        assert!(i.regions[r.name()] > 1_000, "{}: {}", r.name(), i.regions[r.name()]);
    }
    assert_eq!(i.regions["nerve cord"], 0, "a brain without its nerve cord");
    assert!(i.positions.contains("layout from wiring"));
    // Signs from nt_type: GABA and glutamate inhibit, photoreceptors excite.
    let c = &built().connectome;
    let n = &c.neurons;
    let kinds = |t: Transmitter| n.transmitter.iter().filter(|&&x| x == t).count();
    assert!(kinds(Transmitter::Gaba) > 10_000 && kinds(Transmitter::Glutamate) > 10_000);
    for i in 0..n.len() {
        match n.region[i] {
            Region::Photoreceptors => assert_eq!(n.sign[i], 1),
            _ if matches!(n.transmitter[i], Transmitter::Gaba | Transmitter::Glutamate) => assert_eq!(n.sign[i], -1),
            _ => {}
        }
    }
}

#[test]
fn the_eye_is_recovered_from_the_wiring_and_is_retinotopic() {
    let i = &built().info;
    assert!(i.min_typed_cells_per_square >= 8, "{}", i.min_typed_cells_per_square);
    let ratio = i.retinotopy_ratio.expect("recovered from the wiring");
    let held_out = i.retinotopy_ratio_held_out.expect("held out too");
    assert!(
        ratio >= 3.0 && held_out >= 3.0,
        "sheet neighbours share {ratio:.1}× ({held_out:.1}× held out) the partners of shuffled neighbours"
    );
    let r = i.eye_recovery.as_ref().unwrap();
    assert_eq!(r.eyes.len(), 2);
    for e in &r.eyes {
        assert!((700..900).contains(&e.columns), "{} eye: {} columns (one per Mi1)", e.side, e.columns);
        // Each eye is retinotopic on its own, held out too (not only the worse one of the two).
        assert!(
            e.retinotopy_ratio >= 3.0 && e.retinotopy_ratio_held_out >= 3.0,
            "{} eye: {:.1}× ({:.1}× held out)",
            e.side,
            e.retinotopy_ratio,
            e.retinotopy_ratio_held_out
        );
        assert!(e.placed * 2 > e.photoreceptors, "{} eye: {} of {} placed", e.side, e.placed, e.photoreceptors);
        // A disc: the two linear modes come before the rest.
        assert!(e.eigenvalues[1] > 1e-6 && e.eigenvalues[3] > 1.5 * e.eigenvalues[2], "{:?}", e.eigenvalues);
        // T4a/b point opposite ways, as do T4c/d, after the orientation fit.
        let d = &e.t4_directions_deg;
        let apart = |a: f64, b: f64| ((a - b).rem_euclid(360.0) - 180.0).abs();
        assert!(apart(d[0], d[1]) < 30.0 && apart(d[2], d[3]) < 30.0, "{d:?}");
    }
    // Both eyes are on every square.
    let c = &built().connectome;
    let mut by_eye = [[0u32; 64]; 2];
    for cell in &c.eye.cells {
        let side = c.neurons.side[cell.neuron as usize] as usize;
        if side < 2 {
            by_eye[side][cell.square as usize] += 1;
        }
    }
    assert!(by_eye[1].iter().all(|&k| k > 0), "the right eye covers the board: {:?}", by_eye[1]);
}

#[test]
fn the_brain_id_comes_from_the_tables_content_not_their_folder() {
    let b = built();
    // The bundle copied to a folder, built, then moved: the same inputs, the same brain id.
    let root = tempfile::tempdir().unwrap();
    let first = root.path().join("first");
    copy_bundle(&first);
    let data = tempfile::tempdir().unwrap();
    let spec_at = |dir: &Path| BrainSpec { tables: Tables::FlyWire { dir: Some(dir.to_path_buf()) }, control: Default::default() };
    let key_first = spec_at(&first).inputs_key(data.path()).unwrap();
    let moved = root.path().join("moved");
    std::fs::rename(&first, &moved).unwrap();
    assert_eq!(spec_at(&moved).inputs_key(data.path()).unwrap(), key_first, "moving the tables keeps the brain");
    assert_eq!(BrainSpec::default().inputs_key(b.data.path()).unwrap(), key_first, "the shipped bundle is the same content");
    let loaded = store::ensure(&spec_at(&moved), data.path(), &|_, _| {}).unwrap();
    assert_eq!(loaded.checksum, b.checksum);
    // Another content is another brain: a changed neuron table changes the key.
    let neurons = moved.join(flywire::NEURONS);
    let mut bytes = std::fs::read(&neurons).unwrap();
    bytes.extend_from_slice(b"\0");
    std::fs::write(&neurons, bytes).unwrap();
    assert_ne!(spec_at(&moved).inputs_key(data.path()).unwrap(), key_first);
}

#[test]
fn shuffled_wiring_keeps_the_eye_and_the_counts_but_not_the_pairs() {
    let b = built();
    let spec = BrainSpec { control: flychess_brain::connectome::Control::ShuffledWiring { seed: 1 }, ..BrainSpec::default() };
    let shuffled = store::ensure(&spec, b.data.path(), &|_, _| {}).unwrap();
    let s = &shuffled.connectome;
    assert_eq!(s.eye, b.connectome.eye, "the eye is anatomy, placed before the control");
    assert_eq!(s.neurons.len(), b.connectome.neurons.len());
    let total = |c: &Connectome| c.inputs.synapses.iter().map(|&x| x as u64).sum::<u64>();
    assert!(total(s) <= total(&b.connectome) && total(s) > total(&b.connectome) * 99 / 100);
    assert_ne!(s.inputs.pre, b.connectome.inputs.pre);
    assert!(s.provenance.label().contains("shuffled wiring"));
    assert!(matches!(s.provenance.source, Source::FlyWire { within_hemispheres: true, .. }));
}

/// A downloaded full release with Codex's coordinates table: the cloud shows its points (the
/// mean of each neuron's rows, nanometres read as µm / 1000), a neuron without a row is put among
/// its partners, the label says where the positions come from, and the coordinates are part of
/// the brain's inputs. The eye is the wiring's either way.
#[test]
fn a_release_with_coordinates_puts_each_neuron_at_its_own_point() {
    let b = built();
    let dir = tempfile::tempdir().unwrap();
    copy_bundle(dir.path());
    let mut t = feather::Table::open(&dir.path().join(flywire::CLASSIFICATION), &["root_id"], &[]).unwrap();
    let mut roots = Vec::new();
    while let Some(batch) = t.next_batch().unwrap() {
        roots.extend(batch.ints("root_id").unwrap().into_iter().flatten());
    }
    // Every tenth body has no row; every seventh has two rows whose mean is its point.
    let point = |k: usize| [(k % 500) as f64 * 1000.0 + 500.0, (k / 500 % 500) as f64 * 1000.0, (k % 97) as f64 * 2000.0];
    let (mut ids, mut text) = (Vec::new(), Vec::new());
    for (k, &root) in roots.iter().enumerate() {
        let p = point(k);
        if k.is_multiple_of(10) {
            continue;
        }
        if k.is_multiple_of(7) {
            for shift in [-300.0, 300.0] {
                ids.push(root);
                text.push(format!("[{} {} {}]", p[0] + shift, p[1], p[2] - shift));
            }
        } else {
            ids.push(root);
            text.push(format!("[{}, {}, {}]", p[0], p[1], p[2]));
        }
    }
    let texts: Vec<&str> = text.iter().map(String::as_str).collect();
    feather::write(
        &dir.path().join(flywire::COORDINATES),
        &[feather::batch(vec![("root_id", Arc::new(Int64Array::from(ids)) as ArrayRef), ("position", strings(&texts))]).unwrap()],
        &[],
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    assert!(
        store::flywire_full_present(dir.path()) && !store::flywire_full_present(data.path()),
        "the window offers a folder with the tables"
    );
    let spec = BrainSpec { tables: Tables::FlyWire { dir: Some(dir.path().to_path_buf()) }, control: Default::default() };
    assert_ne!(
        spec.inputs_key(data.path()).unwrap(),
        BrainSpec::default().inputs_key(b.data.path()).unwrap(),
        "the coordinates are an input"
    );
    let c = store::ensure(&spec, data.path(), &|_, _| {}).unwrap().connectome;
    assert!(matches!(c.provenance.source, Source::FlyWire { layout_from_wiring: false, .. }));
    assert!(c.provenance.positions_label().contains("release's own points"), "{}", c.provenance.positions_label());
    assert_eq!(c.eye, b.connectome.eye, "the eye comes from the wiring either way");
    let at: std::collections::HashMap<i64, usize> = roots.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    let (mut own, mut among) = (0, 0);
    for (i, &body) in c.neurons.body_id.iter().enumerate() {
        let k = at[&body];
        let got = c.neurons.soma_um[i];
        if k.is_multiple_of(10) {
            assert!(got.iter().all(|v| v.is_finite()), "drawn among its partners");
            among += 1;
        } else {
            let want = point(k).map(|v| (v / 1000.0) as f32);
            assert!((0..3).all(|d| (got[d] - want[d]).abs() < 1e-3), "body {body}: {got:?} against {want:?}");
            own += 1;
        }
    }
    assert!(own > 100_000 && among > 10_000, "{own} at their own point, {among} among partners");
}

// ---- bad input -------------------------------------------------------------------------------

fn copy_bundle(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (file, _) in BUNDLE_SHA256 {
        std::fs::copy(flywire::repository_bundle().join(file), to.join(file)).unwrap();
    }
}

fn strings(v: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(v.iter().map(|s| if s.is_empty() { None } else { Some(*s) }).collect::<Vec<_>>()))
}

/// A small FlyWire-schema brain: one eye's worth of nothing (a handful of cells), enough for the
/// reader to run to the eye.
struct Small {
    ids: Vec<i64>,
    types: Vec<&'static str>,
    supers: Vec<&'static str>,
    nt: Vec<&'static str>,
    pre: Vec<i64>,
    post: Vec<i64>,
    count: Vec<i32>,
}

fn small() -> Small {
    Small {
        ids: vec![1, 2, 3, 4, 5],
        types: vec!["R1-6", "L1", "Mi1", "LC4", "DNp02"],
        supers: vec!["sensory", "optic", "optic", "visual_projection", "descending"],
        nt: vec!["", "GLUT", "ACH", "ACH", "ACH"],
        pre: vec![1, 2, 3, 4],
        post: vec![2, 3, 4, 5],
        count: vec![20, 9, 7, 5],
    }
}

fn write_small(dir: &Path, s: &Small) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let ids: ArrayRef = Arc::new(Int64Array::from(s.ids.clone()));
    let side = vec!["right"; s.ids.len()];
    feather::write(
        &dir.join(flywire::CLASSIFICATION),
        &[feather::batch(vec![
            ("root_id", ids.clone()),
            ("super_class", strings(&s.supers)),
            ("cell_type", strings(&s.types)),
            ("side", strings(&side)),
        ])
        .unwrap()],
        &[],
    )
    .unwrap();
    let group = vec!["ME"; s.ids.len()];
    feather::write(
        &dir.join(flywire::NEURONS),
        &[feather::batch(vec![("root_id", ids), ("group", strings(&group)), ("nt_type", strings(&s.nt))]).unwrap()],
        &[],
    )
    .unwrap();
    feather::write(
        &dir.join(flywire::CONNECTIONS),
        &[feather::batch(vec![
            ("pre_pt_root_id", Arc::new(Int64Array::from(s.pre.clone())) as ArrayRef),
            ("post_pt_root_id", Arc::new(Int64Array::from(s.post.clone())) as ArrayRef),
            ("syn_count", Arc::new(Int32Array::from(s.count.clone())) as ArrayRef),
        ])
        .unwrap()],
        &[],
    )
    .unwrap();
    dir.to_path_buf()
}

/// Builds the tables in `dir` through the store, expecting an error; checks no brain was written.
fn fails(dir: &Path) -> String {
    let data = tempfile::tempdir().unwrap();
    let spec = BrainSpec { tables: Tables::FlyWire { dir: Some(dir.to_path_buf()) }, control: Default::default() };
    let e = match store::ensure(&spec, data.path(), &|_, _| {}) {
        Ok(_) => panic!("{} should not build", dir.display()),
        Err(e) => e.to_string(),
    };
    assert!(!spec.brain_path(data.path()).exists(), "no brain file after: {e}");
    e
}

#[test]
fn broken_tables_are_clear_errors_and_write_no_brain() {
    let root = tempfile::tempdir().unwrap();
    let case = |name: &str, change: &dyn Fn(&mut Small)| {
        let mut s = small();
        change(&mut s);
        let e = fails(&write_small(&root.path().join(name), &s));
        eprintln!("{name}: {e}");
        e
    };
    // The small brain itself is read whole, and then its eye cannot be recovered: too few columns.
    let e = case("valid-but-tiny", &|_| {});
    assert!(e.contains(flywire::CONNECTIONS) && e.contains("the eye") && e.contains("columns"), "{e}");
    let e = case("stranger", &|s| s.post[0] = 99);
    assert!(e.contains("post_pt_root_id") && e.contains("99") && e.contains("not in the classification"), "{e}");
    let e = case("duplicate", &|s| {
        s.pre.push(1);
        s.post.push(2);
        s.count.push(8);
    });
    assert!(e.contains("appears twice") && e.contains("1 → 2"), "{e}");
    let e = case("below-five", &|s| s.count[1] = 3);
    assert!(e.contains("syn_count") && e.contains("row 1") && e.contains("3 synapses"), "{e}");
    let e = case("negative", &|s| s.count[2] = -7);
    assert!(e.contains("syn_count") && e.contains("negative"), "{e}");
    let e = case("same-id-twice", &|s| s.ids[4] = 4);
    assert!(e.contains(flywire::CLASSIFICATION) && e.contains("root_id") && e.contains("appears twice"), "{e}");
}

#[test]
fn missing_mistyped_truncated_and_corrupted_files_are_named() {
    let root = tempfile::tempdir().unwrap();
    // A missing required column.
    let dir = write_small(&root.path().join("missing-column"), &small());
    let ids: ArrayRef = Arc::new(Int64Array::from(vec![1i64, 2]));
    feather::write(
        &dir.join(flywire::CLASSIFICATION),
        &[feather::batch(vec![("root_id", ids), ("super_class", strings(&["a", "b"]))]).unwrap()],
        &[],
    )
    .unwrap();
    let e = fails(&dir);
    assert!(e.contains(flywire::CLASSIFICATION) && e.contains("missing column(s) cell_type"), "{e}");
    // A mistyped one: root ids as text.
    let dir = write_small(&root.path().join("mistyped"), &small());
    feather::write(
        &dir.join(flywire::NEURONS),
        &[feather::batch(vec![("root_id", strings(&["1", "2"])), ("nt_type", strings(&["ACH", "GABA"]))]).unwrap()],
        &[],
    )
    .unwrap();
    let e = fails(&dir);
    assert!(e.contains(flywire::NEURONS) && e.contains("root_id") && e.contains("integers"), "{e}");
    // A missing table.
    let dir = write_small(&root.path().join("no-neurons"), &small());
    std::fs::remove_file(dir.join(flywire::NEURONS)).unwrap();
    let e = fails(&dir);
    assert!(e.contains(flywire::NEURONS) && e.contains("missing"), "{e}");
    // The real connection table, cut in half and damaged in its middle.
    let dir = root.path().join("truncated");
    copy_bundle(&dir);
    let path = dir.join(flywire::CONNECTIONS);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let e = fails(&dir);
    assert!(e.contains(flywire::CONNECTIONS), "{e}");
    let dir = root.path().join("corrupted");
    copy_bundle(&dir);
    let path = dir.join(flywire::CONNECTIONS);
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 4096] {
        *b ^= 0x5A;
    }
    std::fs::write(&path, &bytes).unwrap();
    let e = fails(&dir);
    assert!(e.contains(flywire::CONNECTIONS), "{e}");
}
