//! What the sim crate builds on the engines: the DN cache (resumed, per dataset), readout features
//! thought together by many threads or without keeping every step, and the rounding envelope that
//! tells a last-bit difference from a wrong kernel. The engines themselves are tested in the brain
//! crate (sim/brain/tests/cpu_engine.rs, gpu_engine.rs, engines.rs).

use std::io::Write;

use flychess_brain::brain::simulator::Simulator;
use flychess_brain::brain::{Brain, STEPS, cpu};
use flychess_brain::chess::{Planes, planes};

#[path = "../../brain/tests/common/mod.rs"]
mod common;
use common::default_brain::{boards, default_brain};
use common::small_brain::small_brain;

#[test]
fn the_dn_cache_resumes_and_matches_a_fresh_fill() {
    use flychess_fly::cache::{Cache, CacheMeta, Reading};
    use flychess_fly::data::{Dataset, shipped_path};
    let brain = small_brain(11);
    let rows = &Dataset::load(&shipped_path()).unwrap().rows[..10];
    let descending: Vec<u32> = (0..40).map(|i| 390 - i).collect();
    let meta = CacheMeta { brain_checksum: "small".into(), homeostasis: "h".into(), dataset: "shipped".into(), descending: 40, part: None };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.dn");
    let mut c = Cache::open(&path, meta.clone()).unwrap();
    c.fill(&Simulator::Cpu, &brain, &descending, &rows[..5], 2, &|_, _| {}, &|| false).unwrap();
    assert_eq!(c.positions, 5);
    // A kill mid-write leaves half a position: opening counts the whole ones and leaves the file
    // alone (another process may be writing it), the next fill cuts it off.
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&[7u8; 13]).unwrap();
    let mut c = Cache::open(&path, meta.clone()).unwrap();
    assert_eq!(c.positions, 5);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5 * 80 + 13, "opening to read writes nothing");
    // While another writer holds the cache, a fill is refused and the file left as it is.
    let other_writer = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    other_writer.lock().unwrap();
    let refused = c.fill(&Simulator::Cpu, &brain, &descending, rows, 4, &|_, _| {}, &|| false).unwrap_err().to_string();
    assert!(refused.contains("another flychess is filling this cache"), "{refused}");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5 * 80 + 13);
    drop(other_writer);
    c.fill(&Simulator::Cpu, &brain, &descending, rows, 4, &|_, _| {}, &|| false).unwrap();
    assert_eq!(c.positions, 10);
    let fresh_path = dir.path().join("b.dn");
    let mut fresh = Cache::open(&fresh_path, meta.clone()).unwrap();
    fresh.fill(&Simulator::Cpu, &brain, &descending, rows, 10, &|_, _| {}, &|| false).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&fresh_path).unwrap(), "resumed = fresh, any batch size");
    // Stopped after its first batch (the next one already read ahead): the batches thought are
    // written whole, nothing more.
    let stopped_path = dir.path().join("c.dn");
    let mut stopped = Cache::open(&stopped_path, meta.clone()).unwrap();
    let asked = std::cell::Cell::new(0);
    let stop = || {
        asked.set(asked.get() + 1);
        asked.get() > 1
    };
    stopped.fill(&Simulator::Cpu, &brain, &descending, rows, 3, &|_, _| {}, &stop).unwrap();
    assert_eq!(stopped.positions, 3);
    assert_eq!(std::fs::read(&stopped_path).unwrap(), std::fs::read(&fresh_path).unwrap()[..3 * 80]);
    // A dataset shorter than asked for: an error saying so, the whole batches before it kept.
    let short_path = dir.path().join("d.dn");
    let mut short = Cache::open(&short_path, meta.clone()).unwrap();
    let e = short
        .fill_streamed(&Simulator::Cpu, &brain, &descending, rows[..4].iter().cloned().map(Ok), 10, 3, &|_, _| {}, &|| false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ended after 4 of the 10"), "{e}");
    assert_eq!(std::fs::read(&short_path).unwrap(), std::fs::read(&fresh_path).unwrap()[..3 * 80]);
    // The bytes are the rates: step 12 read back equals the engine's rates to 1/255.
    let rates = cpu::think(
        &brain,
        &rows[..3].iter().map(|r| planes(&flychess_brain::chess::position_from_fen(&r.fen).unwrap())).collect::<Vec<_>>(),
    );
    let last = c.read(0..3, Reading::Step12).unwrap();
    for p in 0..3 {
        for (k, &j) in descending.iter().enumerate() {
            assert!((last[p * 40 + k] - rates.at(STEPS - 1, j as usize, p)).abs() <= 0.5 / 255.0 + 1e-6);
        }
    }
    // Another brain's cache is started again.
    let other = Cache::open(&path, CacheMeta { brain_checksum: "other".into(), ..meta }).unwrap();
    assert_eq!(other.positions, 0);
}

#[test]
fn each_dataset_has_its_own_dn_cache_and_a_relabelled_one_is_new() {
    use flychess_fly::cache::{Cache, CacheMeta};
    use flychess_fly::data::{Dataset, shipped_path};
    use flychess_fly::grading::Score;
    let brain = small_brain(12);
    let descending: Vec<u32> = (0..40).map(|i| 390 - i).collect();
    let shipped = Dataset::load(&shipped_path()).unwrap();
    let first = Dataset { meta: shipped.meta.clone(), rows: shipped.rows[..6].to_vec() };
    let other = Dataset { meta: shipped.meta.clone(), rows: shipped.rows[6..12].to_vec() };
    // The same positions under the same name, one label changed.
    let mut relabelled = first.clone();
    relabelled.rows[2].moves[0].score = Score::Cp(12_345);
    let dir = tempfile::tempdir().unwrap();
    let meta = |d: &Dataset| CacheMeta::new("small-brain", "h", d, descending.len());
    let path = |d: &Dataset| meta(d).path_in(dir.path(), "small");
    assert_eq!(path(&first), path(&first.clone()), "the same content, the same cache");
    assert_ne!(path(&first), path(&other), "another dataset of the same name and size");
    assert_ne!(path(&first), path(&relabelled), "relabelled under the same name");
    assert_ne!(
        meta(&first).path_in(dir.path(), "small"),
        CacheMeta::new("small-brain", "h2", &first, 40).path_in(dir.path(), "small"),
        "another homeostasis"
    );
    let mut a = Cache::open(&path(&first), meta(&first)).unwrap();
    a.fill(&Simulator::Cpu, &brain, &descending, &first.rows, 3, &|_, _| {}, &|| false).unwrap();
    let before = std::fs::read(path(&first)).unwrap();
    // Training on the other datasets leaves the first cache as it was.
    for d in [&other, &relabelled] {
        let mut c = Cache::open(&path(d), meta(d)).unwrap();
        assert_eq!(c.positions, 0);
        c.fill(&Simulator::Cpu, &brain, &descending, &d.rows, 3, &|_, _| {}, &|| false).unwrap();
    }
    assert_eq!(std::fs::read(path(&first)).unwrap(), before);
    assert_eq!(Cache::open(&path(&first), meta(&first)).unwrap().positions, 6);
}

#[test]
fn readout_features_asked_for_at_once_by_many_threads_think_together_with_the_same_results() {
    use flychess_fly::readout::{think_features, think_features_alone};
    let brain = &default_brain().brain;
    let dn: Vec<u32> = (1000..1300).collect();
    let steps = vec![8, 9, 10, 11];
    // Six threads, three rounds each, started together: one board each, or three.
    let jobs: Vec<Vec<Planes>> = (0..18).map(|k| boards(40 + 3 * k..40 + 3 * k + if k % 4 == 0 { 3 } else { 1 })).collect();
    let (_, shared_before) = flychess_fly::together::counts();
    let start = std::sync::Barrier::new(6);
    let got: Vec<Vec<Vec<f32>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|t| {
                let (jobs, start, dn, steps) = (&jobs, &start, &dn, &steps);
                s.spawn(move || {
                    start.wait();
                    (0..3).map(|round| think_features(brain, &jobs[3 * t + round], dn, steps)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a thinking thread")).collect()
    });
    // Thread t's rounds are jobs 3t, 3t + 1, 3t + 2, which is the order they come back in.
    for (k, (features, job)) in got.iter().zip(&jobs).enumerate() {
        assert_eq!(features, &think_features_alone(brain, job, &dn, &steps), "job {k}: the same features, bit for bit, as thinking alone");
    }
    let (_, shared_after) = flychess_fly::together::counts();
    assert!(shared_after > shared_before, "six threads asking at once shared at least one batch");
}

#[test]
fn readout_features_without_keeping_every_step_match_a_full_think() {
    use flychess_fly::readout::{descending_features, think_features};
    let brain = small_brain(5);
    let b = boards(20..27);
    let dn: Vec<u32> = (300..340).collect();
    let steps = vec![8, 9, 10, 11];
    let rates = cpu::think(&brain, &b);
    let lean = think_features(&brain, &b, &dn, &steps);
    for (p, row) in lean.iter().enumerate() {
        assert_eq!(row, &descending_features(&rates, p, &dn, &steps));
    }
}

#[test]
fn the_rounding_envelope_admits_a_last_bit_difference_and_catches_a_wrong_kernel() {
    use flychess_brain::brain::agreement::{first_step_past, per_step_max, rounding_envelope};
    use flychess_fly::data::{Dataset, shipped_path};
    let brain = small_brain(12);
    let rows = &Dataset::load(&shipped_path()).unwrap().rows[..4];
    let boards: Vec<Planes> = rows.iter().map(|r| planes(&flychess_brain::chess::position_from_fen(&r.fen).unwrap())).collect();
    let envelope = rounding_envelope(&brain, &boards, &[]);
    assert!(envelope.iter().all(|e| e.is_finite() && *e < 1e-3), "{envelope:?}");
    let gaps =
        |other: &Brain| per_step_max(&cpu::think(&brain, &boards).data, &cpu::think(other, &boards).data, brain.neurons, boards.len(), &[]);
    // Another engine that rounds otherwise: every μ one ulp lower.
    let mut rounding = brain.clone();
    let mut h = brain.homeostasis().clone();
    h.mu.iter_mut().for_each(|m| *m = m.next_down());
    rounding.set_homeostasis(h);
    assert_eq!(first_step_past(&gaps(&rounding), &envelope), None, "a last-bit difference is within the envelope");
    // A wrong kernel: every neuron's bias off by 1e-3, caught at the first step.
    let mut wrong = brain.clone();
    wrong.set_params(flychess_brain::brain::Params { beta: brain.params().beta + 1e-3, ..brain.params() });
    let g = gaps(&wrong);
    assert_eq!(first_step_past(&g, &envelope), Some(0), "{envelope:?} {g:?}");
}
