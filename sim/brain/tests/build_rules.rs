//! The rules of SPEC §3.2 on small hand-made tables, through the same build the release uses, and
//! every kind of bad input: each gives a clear error naming the file, never a panic, and never a
//! half-written brain file.

mod common;

use common::*;
use flychess_brain::connectome::brain_file;
use flychess_brain::connectome::build::{BuildOptions, build};
use flychess_brain::connectome::rules::{Region, Transmitter};
use flychess_brain::connectome::{Connectome, Control, Source};
use flychess_brain::eye::EyeRole;
use flychess_brain::store::{self, BrainSpec, Tables};

fn source() -> Source {
    Source::MaleCns { release: "test".into(), weights_file: "w".into() }
}

fn build_small(control: Control) -> Connectome {
    let dir = tempdir();
    let p = write_small(dir.path());
    build(&p, source(), "k".into(), &BuildOptions { control, ..Default::default() }, &|_, _| {}).unwrap()
}

fn idx(c: &Connectome, body: i64) -> usize {
    c.neurons.body_id.iter().position(|&b| b == body).unwrap_or_else(|| panic!("body {body} is not a neuron"))
}

fn synapses(c: &Connectome, pre: i64, post: i64) -> Option<u32> {
    let (a, b) = (idx(c, pre) as u32, idx(c, post));
    c.inputs.row(b).find(|&e| c.inputs.pre[e] == a).map(|e| c.inputs.synapses[e])
}

#[test]
fn neurons_are_traced_with_a_superclass_and_not_glia() {
    let c = build_small(Control::None);
    let bodies = &c.neurons.body_id;
    assert_eq!(bodies.len(), 17);
    for dropped in [40, 41, 42] {
        assert!(!bodies.contains(&dropped), "{dropped} should be dropped");
    }
    assert!(bodies.windows(2).all(|w| w[0] < w[1]), "ordered by body id");
}

#[test]
fn signs_follow_the_transmitter_with_fallbacks() {
    let c = build_small(Control::None);
    let nt = |b| c.neurons.transmitter[idx(&c, b)];
    let sign = |b| c.neurons.sign[idx(&c, b)];
    assert_eq!(nt(60), Transmitter::Gaba, "consensus unclear → cell type's call");
    assert_eq!(nt(61), Transmitter::Glutamate, "only its own call");
    assert_eq!(nt(62), Transmitter::Unknown, "no row → acetylcholine assumed");
    assert_eq!((sign(60), sign(61), sign(62)), (-1, -1, 1));
    assert_eq!(sign(1), 1, "photoreceptors excite");
    assert_eq!(sign(10), -1, "glutamate inhibits");
    assert_eq!(sign(52), 1, "dopamine excites (weak modulator, simplified)");
}

#[test]
fn the_five_synapse_cut_applies_after_summing_duplicates() {
    let c = build_small(Control::None);
    assert_eq!(synapses(&c, 1, 20), None, "4 synapses are cut");
    assert_eq!(synapses(&c, 2, 20), Some(6), "3 + 3 summed, kept");
    assert_eq!(synapses(&c, 20, 30), Some(10));
    assert_eq!(c.inputs.len(), 18);
    // Strengths are log shares: every row sums to 1.
    for j in 0..c.neurons.len() {
        let s: f32 = c.inputs.row(j).map(|e| c.inputs.strength[e]).sum();
        assert!(c.inputs.row(j).is_empty() || (s - 1.0).abs() < 1e-5, "row {j} sums to {s}");
    }
}

#[test]
fn positions_are_in_micrometres_with_the_to_soma_fallback() {
    let c = build_small(Control::None);
    assert_eq!(c.neurons.soma_um[idx(&c, 61)], [8.0, 16.0, 24.0]);
    assert_eq!(c.neurons.soma_um[idx(&c, 20)], [16.0, 0.0, 0.0]);
    assert!(!c.neurons.has_soma(idx(&c, 1)));
}

#[test]
fn photoreceptors_take_the_column_of_their_strongest_partner() {
    let c = build_small(Control::None);
    assert_eq!(c.eye.photoreceptors, 4);
    let cell = |b| c.eye.cells.iter().find(|x| x.neuron as usize == idx(&c, b)).copied();
    assert!(cell(4).is_none(), "no hex-annotated partner: off the eye");
    let (r1, r7, r8) = (cell(1).unwrap(), cell(2).unwrap(), cell(3).unwrap());
    // Columns (5,5) weight 10 and (9,9) weight 2 → bands by v = h1 + h2: rank 0 and rank 6.
    assert_eq!(r1.square, 0);
    assert_eq!((r7.square, r8.square), (48, 48), "R7 and R8 share Mi1's column (9,9)");
    assert_eq!(r1.role, EyeRole::PieceType(0));
    assert_eq!(r7.role, EyeRole::Own);
    assert_eq!(r8.role, EyeRole::Opponent);
    let info = c.info();
    assert_eq!(info.eye_to_descending_shortest_path, Some(2), "R7 → LC01 → DNa01");
}

#[test]
fn groups_and_mbon_valence_from_dopamine_input() {
    let c = build_small(Control::None);
    let g = &c.groups;
    let ids = |v: &Vec<u32>| v.iter().map(|&i| c.neurons.body_id[i as usize]).collect::<Vec<_>>();
    assert_eq!(ids(&g.descending), vec![30]);
    assert_eq!(ids(&g.kenyon), vec![50]);
    assert_eq!(ids(&g.mbon), vec![51, 54]);
    assert_eq!(g.mbon_valence, vec![-1, 1], "PAM input → avoid, PPL1 input → approach");
    assert_eq!(ids(&g.pam), vec![52]);
    assert_eq!(ids(&g.ppl1), vec![53]);
    assert_eq!(c.neurons.region[idx(&c, 50)], Region::KenyonCells);
}

#[test]
fn shuffled_wiring_keeps_senders_and_drops_self_loops() {
    let real = build_small(Control::None);
    let shuffled = build_small(Control::ShuffledWiring { seed: 5 });
    for j in 0..shuffled.neurons.len() {
        assert!(shuffled.inputs.row(j).all(|e| shuffled.inputs.pre[e] as usize != j), "self-loop at {j}");
    }
    // Every sender keeps its synapses, except those of dropped self-loops.
    let out = |c: &Connectome| {
        let mut s = vec![0u64; c.neurons.len()];
        for e in 0..c.inputs.len() {
            s[c.inputs.pre[e] as usize] += c.inputs.synapses[e] as u64;
        }
        s
    };
    let (a, b) = (out(&real), out(&shuffled));
    assert!(a.iter().zip(&b).all(|(x, y)| y <= x));
    assert!(b.iter().sum::<u64>() > 0);
    assert_ne!(real.inputs, shuffled.inputs);
    assert_eq!(shuffled.provenance.label(), "MaleCNS test, shuffled wiring (seed 5)");
    // The eye is anatomy: the same in both.
    assert_eq!(real.eye, shuffled.eye);
}

#[test]
fn a_lesion_drops_what_the_region_sends_and_recomputes_strengths() {
    let c = build_small(Control::Lesion { regions: vec![Region::OpticLobe] });
    for e in 0..c.inputs.len() {
        assert_ne!(c.neurons.region[c.inputs.pre[e] as usize], Region::OpticLobe);
    }
    assert_eq!(synapses(&c, 20, 30), Some(10), "other connections stay");
    let lc = idx(&c, 20);
    let s: f32 = c.inputs.row(lc).map(|e| c.inputs.strength[e]).sum();
    assert!((s - 1.0).abs() < 1e-5, "LC01's remaining inputs share all of its strength");
    let photoreceptors_cut = build_small(Control::Lesion { regions: vec![Region::Photoreceptors] });
    assert_eq!(photoreceptors_cut.info().eye_to_descending_shortest_path, None);
}

#[test]
fn the_brain_file_round_trips_and_refuses_damage() {
    let dir = tempdir();
    let c = build_small(Control::None);
    let path = dir.path().join("b.brain");
    let sum = brain_file::save(&c, &path).unwrap();
    let back = brain_file::load(&path).unwrap();
    assert_eq!(back.checksum, sum);
    let b = &back.connectome;
    assert_eq!(b.inputs, c.inputs);
    assert_eq!(b.eye, c.eye);
    assert_eq!(b.groups, c.groups);
    assert_eq!(b.provenance, c.provenance);
    assert_eq!(b.neurons.body_id, c.neurons.body_id);
    assert_eq!(b.neurons.region, c.neurons.region);
    let bits = |v: &Vec<[f32; 3]>| v.iter().flat_map(|p| p.map(f32::to_bits)).collect::<Vec<_>>();
    assert_eq!(bits(&b.neurons.soma_um), bits(&c.neurons.soma_um));
    // Same brain, same bytes, same checksum.
    assert_eq!(brain_file::save(&c, &dir.path().join("c.brain")).unwrap(), sum);

    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let e = brain_file::load(&path).err().expect("a flipped byte is refused").to_string();
    assert!(e.contains("checksum mismatch") && e.contains("b.brain"), "{e}");
    std::fs::write(&path, &bytes[..mid]).unwrap();
    let e = brain_file::load(&path).err().expect("a truncated file is refused").to_string();
    assert!(e.contains("truncated") || e.contains("array"), "{e}");
    std::fs::write(&path, b"not a brain").unwrap();
    assert!(brain_file::load(&path).is_err());
    // Written whole, checksum and all, but its groups are not this brain's: the dopamine fly would
    // index past the neurons with them.
    let n = c.neurons.len() as u32;
    let mut past = c.clone();
    past.groups.kenyon.push(n + 5);
    let mut unmatched = c.clone();
    unmatched.groups.mbon_valence.push(1);
    for (what, brain) in [("a Kenyon cell past the neurons", past), ("a valence without its MBON", unmatched)] {
        brain_file::save(&brain, &path).unwrap();
        let e = brain_file::load(&path).err().unwrap_or_else(|| panic!("{what} is refused")).to_string();
        assert!(e.contains("b.brain"), "{what}: {e}");
    }
}

/// Builds from `dir` through the store (as the CLI does) and returns the error text.
fn store_error(dir: &std::path::Path) -> String {
    let data = tempdir();
    let spec = BrainSpec { tables: Tables::Release { dir: dir.to_path_buf() }, control: Control::None };
    let result = std::panic::catch_unwind(|| store::ensure(&spec, data.path(), &|_, _| {}).map(|_| ()));
    let err = result.expect("bad input must not panic").expect_err("bad input must fail").to_string();
    assert!(!spec.brain_path(data.path()).exists(), "no brain file may be written from bad input");
    assert!(std::fs::read_dir(data.path().join("brains")).map(|d| d.count()).unwrap_or(0) == 0, "nothing half-written is left behind");
    err
}

#[test]
fn a_missing_column_is_named() {
    let dir = tempdir();
    let p = write_small(dir.path());
    write_weights(&p.weights, &[]);
    // Rewrite the weights without the weight column.
    use arrow_array::{ArrayRef, Int64Array};
    use std::sync::Arc;
    let cols: Vec<(&str, ArrayRef)> =
        vec![("body_pre", Arc::new(Int64Array::from(vec![1i64]))), ("body_post", Arc::new(Int64Array::from(vec![10i64])))];
    flychess_brain::connectome::feather::write(&p.weights, &[flychess_brain::connectome::feather::batch(cols).unwrap()], &[]).unwrap();
    let e = store_error(dir.path());
    assert!(e.contains(&file_name(&p.weights)) && e.contains("missing column") && e.contains("weight"), "{e}");
}

#[test]
fn a_wrong_type_is_named() {
    let dir = tempdir();
    let p = write_small(dir.path());
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    use std::sync::Arc;
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("body_pre", Arc::new(StringArray::from(vec!["1"]))),
        ("body_post", Arc::new(Int64Array::from(vec![10i64]))),
        ("weight", Arc::new(Int64Array::from(vec![10i64]))),
    ];
    flychess_brain::connectome::feather::write(&p.weights, &[flychess_brain::connectome::feather::batch(cols).unwrap()], &[]).unwrap();
    let e = store_error(dir.path());
    assert!(e.contains(&file_name(&p.weights)) && e.contains("body_pre should hold integers"), "{e}");
}

#[test]
fn a_truncated_table_is_refused() {
    let dir = tempdir();
    let p = write_small(dir.path());
    let bytes = std::fs::read(&p.annotations).unwrap();
    std::fs::write(&p.annotations, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let e = store_error(dir.path());
    assert!(e.contains(&file_name(&p.annotations)), "{e}");
}

#[test]
fn a_corrupted_table_is_refused() {
    let dir = tempdir();
    let p = write_small(dir.path());
    let mut bytes = std::fs::read(&p.transmitters).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n - 120..n - 10] {
        *b = 0xA7;
    }
    std::fs::write(&p.transmitters, &bytes).unwrap();
    let e = store_error(dir.path());
    assert!(e.contains(&file_name(&p.transmitters)), "{e}");
}

#[test]
fn garbage_inside_a_table_never_panics() {
    for offset in [64usize, 200, 400, 800] {
        let dir = tempdir();
        let p = write_small(dir.path());
        let mut bytes = std::fs::read(&p.weights).unwrap();
        let at = offset.min(bytes.len() - 40);
        for b in &mut bytes[at..at + 32] {
            *b = 0xFF;
        }
        std::fs::write(&p.weights, &bytes).unwrap();
        let data = tempdir();
        let spec = BrainSpec { tables: Tables::Release { dir: dir.path().to_path_buf() }, control: Control::None };
        let r = std::panic::catch_unwind(|| store::ensure(&spec, data.path(), &|_, _| {}).map(|_| ()));
        assert!(r.is_ok(), "garbage at byte {at} made the build panic");
    }
}

#[test]
fn a_not_feather_file_and_an_empty_file_are_named() {
    let dir = tempdir();
    let p = write_small(dir.path());
    std::fs::write(&p.annotations, b"bodyId,type\n1,R1-R6\n").unwrap();
    let e = store_error(dir.path());
    assert!(e.contains("not a Feather v2") && e.contains(&file_name(&p.annotations)), "{e}");
    std::fs::write(&p.annotations, b"").unwrap();
    let e = store_error(dir.path());
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn a_duplicate_body_id_is_refused() {
    let dir = tempdir();
    let p = write_small(dir.path());
    let mut rows = small_annotations();
    rows.push(neuron(20, "LC02", "visual_projection"));
    write_annotations(&p.annotations, &rows);
    let e = store_error(dir.path());
    assert!(e.contains("duplicate bodyId 20") && e.contains(&file_name(&p.annotations)), "{e}");
}

#[test]
fn an_empty_table_is_refused() {
    let dir = tempdir();
    let p = write_small(dir.path());
    write_weights(&p.weights, &[]);
    let e = store_error(dir.path());
    assert!(e.contains("no rows") && e.contains(&file_name(&p.weights)), "{e}");
    write_small(dir.path());
    write_transmitters(&p.transmitters, &[]);
    let e = store_error(dir.path());
    assert!(e.contains("no rows") && e.contains(&file_name(&p.transmitters)), "{e}");
}

#[test]
fn an_eye_with_no_placeable_photoreceptor_is_refused() {
    let dir = tempdir();
    let p = write_small(dir.path());
    // Only the photoreceptor without a hex-annotated partner keeps its connections.
    let rows: Vec<_> = small_weights().into_iter().filter(|r| !matches!(r.0, 1..=3)).collect();
    write_weights(&p.weights, &rows);
    let e = store_error(dir.path());
    assert!(e.contains("no photoreceptor could be placed"), "{e}");
}

#[test]
fn the_store_builds_once_and_rebuilds_when_inputs_change() {
    let tables = tempdir();
    write_small(tables.path());
    let data = tempdir();
    let spec = BrainSpec { tables: Tables::Release { dir: tables.path().to_path_buf() }, control: Control::None };
    let first = store::ensure(&spec, data.path(), &|_, _| {}).unwrap();
    assert_eq!(first.load_seconds, 0.0, "built");
    let second = store::ensure(&spec, data.path(), &|_, _| {}).unwrap();
    assert!(second.load_seconds > 0.0, "loaded from the file");
    assert_eq!(first.checksum, second.checksum);
    // A changed table (new size and time) is a new input: rebuilt.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut w = small_weights();
    w.push((62, 60, 7));
    write_weights(&paths(tables.path()).weights, &w);
    let third = store::ensure(&spec, data.path(), &|_, _| {}).unwrap();
    assert_eq!(third.load_seconds, 0.0, "rebuilt");
    assert_ne!(third.checksum, first.checksum);
    // A damaged brain file is rebuilt, not used.
    let path = spec.brain_path(data.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    let fourth = store::ensure(&spec, data.path(), &|_, _| {}).unwrap();
    assert_eq!(fourth.checksum, third.checksum);
}
