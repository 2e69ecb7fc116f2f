//! The whole synthetic stand-in, generated and built through the same path as the release: the
//! published counts (SPEC §3.3 / issue 2), a feather round trip of its tables, and determinism.

use std::sync::OnceLock;

use flychess_brain::connectome::brain_file;
use flychess_brain::connectome::feather::Table;
use flychess_brain::connectome::rules::Region;
use flychess_brain::connectome::synthetic::{self, targets};
use flychess_brain::connectome::{Control, Info};
use flychess_brain::store::{self, BrainSpec};

struct Built {
    data: tempfile::TempDir,
    info: Info,
    checksum: String,
}

/// One generation and build shared by the tests of this file.
fn built() -> &'static Built {
    static B: OnceLock<Built> = OnceLock::new();
    B.get_or_init(|| {
        let data = tempfile::tempdir().unwrap();
        let loaded = store::ensure(&BrainSpec::standin(), data.path(), &|_, _| {}).unwrap();
        Built { info: loaded.connectome.info(), checksum: loaded.checksum, data }
    })
}

#[test]
fn the_stand_in_has_the_published_counts() {
    let i = &built().info;
    assert!(i.synthetic);
    assert!(i.source.contains("synthetic stand-in"), "{}", i.source);
    assert_eq!(i.neurons, 163_803);
    assert_eq!(i.with_soma, 139_593);
    assert_eq!(i.descending, 1_314);
    assert_eq!(i.kenyon, 4_064);
    assert_eq!(i.mbon, 97);
    assert_eq!(i.photoreceptors as usize, targets::PHOTORECEPTORS);
    assert!(i.photoreceptors_placed >= 3_000, "{}", i.photoreceptors_placed);
    let rel = (i.connections as f64 - targets::CONNECTIONS as f64).abs() / targets::CONNECTIONS as f64;
    assert!(rel < 0.02, "{} connections, {:.1}% from 6,234,868", i.connections, rel * 100.0);
    assert!(i.min_typed_cells_per_square >= 8, "{}", i.min_typed_cells_per_square);
    assert_eq!(i.eye_to_descending_shortest_path, Some(2));
    assert!(i.pam > 100 && i.ppl1 > 10);
    assert!(i.mbon_approach > 0 && i.mbon_avoid > 0, "both valences present");
    assert_eq!(i.regions.values().sum::<usize>(), i.neurons);
    assert_eq!(i.regions[Region::OpticLobe.name()], targets::OPTIC_LOBE);
    assert_eq!(i.regions[Region::VisualProjection.name()], targets::VISUAL_PROJECTION);
    assert_eq!(i.regions[Region::CentralBrain.name()], targets::CENTRAL_BRAIN);
    assert!(i.reached_from_eye_within_4 > 0.5, "small world: {}", i.reached_from_eye_within_4);
}

#[test]
fn the_stand_in_tables_read_back_in_the_release_schema() {
    let dir = built().data.path().join("connectome");
    let tables = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let paths = flychess_brain::connectome::release::TablePaths::in_dir(&tables);
    let mut t =
        Table::open(&paths.annotations, &["bodyId", "type", "superclass", "status", "somaLocation", "assignedOlHex1"], &[]).unwrap();
    let mut rows = 0;
    let mut hexed = 0;
    while let Some(b) = t.next_batch().unwrap() {
        rows += b.len();
        hexed += b.numbers("assignedOlHex1").unwrap().iter().filter(|h| h.is_some()).count();
        assert!(b.points("somaLocation").unwrap().iter().flatten().all(|p| p.iter().all(|&x| x > 0.0)), "voxels are positive");
    }
    assert!(rows > targets::NEURONS, "the table also holds glia and untraced bodies");
    assert_eq!(hexed, 2 * synthetic::eye_columns().len() * 40, "every columnar cell carries its column");
    let mut w = Table::open(&paths.weights, &["body_pre", "body_post", "weight"], &[]).unwrap();
    let mut weight_rows = 0;
    let mut below_cut = 0;
    while let Some(b) = w.next_batch().unwrap() {
        weight_rows += b.len();
        below_cut += b.ints("weight").unwrap().iter().filter(|x| x.unwrap() < 5).count();
    }
    assert!(weight_rows > targets::CONNECTIONS && below_cut > 100_000, "{weight_rows} rows, {below_cut} below the cut");
}

/// The default brain's id. Trained flies are tied to it, so it must be the same on every machine:
/// a change here means the generator or the rules changed, and GENERATOR_VERSION or RULES_VERSION
/// must be bumped with it (which renames the tables folder and rebuilds every brain file).
const DEFAULT_BRAIN_SHA256: &str = "4f64b27872f23ba38967916a051119fb81a66834ebe58b730cb015ce5beca824";

#[test]
fn the_default_brain_has_the_same_id_everywhere() {
    assert_eq!(built().checksum, DEFAULT_BRAIN_SHA256);
}

#[test]
fn the_brain_loads_back_with_the_same_checksum() {
    let b = built();
    let path = BrainSpec::standin().brain_path(b.data.path());
    let loaded = brain_file::load(&path).unwrap();
    assert_eq!(loaded.checksum, b.checksum);
    assert_eq!(loaded.connectome.info().connections, b.info.connections);
}

#[test]
fn the_same_seed_gives_the_same_tables_and_another_seed_does_not() {
    let a = tempfile::tempdir().unwrap();
    let ga = synthetic::generate(a.path(), 7, &|_, _| {}).unwrap();
    let b = tempfile::tempdir().unwrap();
    let gb = synthetic::generate(b.path(), 7, &|_, _| {}).unwrap();
    for (x, y) in ga.paths.all().iter().zip(gb.paths.all()) {
        assert_eq!(std::fs::read(x).unwrap(), std::fs::read(y).unwrap(), "{}", x.display());
    }
    let c = tempfile::tempdir().unwrap();
    let gc = synthetic::generate(c.path(), 8, &|_, _| {}).unwrap();
    assert_ne!(std::fs::read(&ga.paths.weights).unwrap(), std::fs::read(&gc.paths.weights).unwrap());
}

#[test]
fn a_control_brain_goes_through_the_same_path() {
    let b = built();
    let spec = BrainSpec { control: Control::Lesion { regions: vec![Region::Photoreceptors] }, ..BrainSpec::standin() };
    let lesioned = store::ensure(&spec, b.data.path(), &|_, _| {}).unwrap();
    let info = lesioned.connectome.info();
    assert!(info.source.contains("lesion: photoreceptors"));
    assert_eq!(info.eye_to_descending_shortest_path, None);
    assert!(info.connections < b.info.connections);
    assert_ne!(lesioned.checksum, b.checksum);
}
