//! The GPU engine under what the sim crate builds on it: a GPU simulator gives the readout and the
//! DN cache what the CPU engine gives. The engine itself is tested in the brain crate
//! (sim/brain/tests/gpu_engine.rs, engines.rs).

use std::sync::Arc;

use flychess_brain::brain::simulator::{EngineChoice, Simulator};

#[path = "../../brain/tests/common/mod.rs"]
mod common;
use common::default_brain::{largest_difference, many_boards as dataset_boards};

#[test]
fn a_gpu_simulator_gives_the_readout_and_the_dn_cache_what_the_cpu_gives() {
    use flychess_fly::cache::{Cache, CacheMeta};
    use flychess_fly::data::{Dataset, shipped_path};
    use flychess_fly::readout::{think_features, think_features_on};
    let brain = common::small_brain::small_brain(21);
    let gpu = match Simulator::choose(EngineChoice::Gpu, &brain) {
        Ok(s) => Arc::new(s),
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(e) => return eprintln!("skipping: {e}"),
    };
    assert!(gpu.is_gpu(), "{}", gpu.describe());
    let descending: Vec<u32> = (0..50).map(|i| 399 - 2 * i).collect();
    let boards = dataset_boards(40);
    let steps = [8usize, 9, 10, 11];
    let on_cpu = think_features(&brain, &boards, &descending, &steps);
    let on_gpu = think_features_on(Some(&*gpu), &brain, &boards, &descending, &steps);
    let w = largest_difference(&on_gpu.concat(), &on_cpu.concat());
    assert!(w < 1e-4, "readout features differ by up to {w}");
    // The DN cache: the same bytes from either engine, whatever the batch.
    let rows = &Dataset::load(&shipped_path()).unwrap().rows[..30];
    let meta = CacheMeta {
        brain_checksum: "small".into(),
        homeostasis: "h".into(),
        dataset: "shipped".into(),
        descending: descending.len(),
        part: None,
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("cpu.dn"), dir.path().join("gpu.dn"));
    Cache::open(&a, meta.clone()).unwrap().fill(&Simulator::Cpu, &brain, &descending, rows, 8, &|_, _| {}, &|| false).unwrap();
    Cache::open(&b, meta).unwrap().fill(&gpu, &brain, &descending, rows, 13, &|_, _| {}, &|| false).unwrap();
    let (a, b) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(a.len(), 30 * 2 * descending.len());
    let off = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(off <= a.len() / 1000, "{off} of {} cached bytes differ", a.len());
}
