//! The rate model: the CPU engine against a plain f64 reference on a small brain, bit-for-bit
//! repeatability across runs and batch sizes, and the science checks of homeostasis on the whole
//! default brain (normalised input centred and scaled; the brain not dead; a photoreceptor lesion
//! silencing the board).

use std::io::Write;
use std::sync::OnceLock;

use flychess_sim::brain::simulator::Simulator;
use flychess_sim::brain::{Brain, STEPS, cpu, signal};
use flychess_sim::calibrate::{self, CalibrationOptions, SIGMA_FLOOR};
use flychess_sim::chess::{Planes, planes, sample_positions};
use flychess_sim::connectome::Control;
use flychess_sim::connectome::rules::Region;
use flychess_sim::store::{self, BrainSpec};

#[path = "../brain/tests/common/mod.rs"]
mod common;
use common::small_brain::{small_brain, small_brain_hearing};

/// The model written the obvious way, in f64, one position at a time.
fn reference(brain: &Brain, board: &Planes) -> Vec<Vec<f64>> {
    let n = brain.neurons;
    let p = brain.params();
    let mut x = vec![0f64; n];
    for c in &brain.eye {
        let reports = c.role.planes();
        x[c.neuron as usize] = (0..12).filter(|&q| reports[q] && board[q][c.square as usize]).count() as f64;
    }
    let mut r = vec![0f64; n];
    let mut out = Vec::new();
    for t in 0..STEPS {
        let mut next = vec![0f64; n];
        for j in 0..n {
            let mut u = x[j];
            for e in brain.row_start[j] as usize..brain.row_start[j + 1] as usize {
                u += brain.weight[e] as f64 * r[brain.pre[e] as usize];
            }
            let mu = brain.homeostasis().mu[t * n + j] as f64;
            let sigma = brain.homeostasis().sigma[t * n + j] as f64;
            let z = p.alpha as f64 * (u - mu) / sigma + p.beta as f64;
            next[j] = (1.0 - p.leak as f64) * r[j] + p.leak as f64 * z.tanh().max(0.0);
        }
        r = next;
        out.push(r.clone());
    }
    out
}

fn boards(range: std::ops::Range<usize>) -> Vec<Planes> {
    sample_positions()[range].iter().map(planes).collect()
}

#[test]
fn the_cpu_engine_matches_a_plain_f64_reference() {
    let brain = small_brain(7);
    for batch in [1usize, 3, 8] {
        let b = boards(100..100 + batch);
        let rates = cpu::think(&brain, &b);
        let mut worst = 0f64;
        for (k, board) in b.iter().enumerate() {
            let want = reference(&brain, board);
            for (t, want_t) in want.iter().enumerate().take(STEPS) {
                for (j, w) in want_t.iter().enumerate().take(brain.neurons) {
                    worst = worst.max((rates.at(t, j, k) as f64 - w).abs());
                }
            }
        }
        assert!(worst < 1e-4, "batch {batch}: worst difference {worst}");
        // And the rates really move: this is not a brain of zeros.
        assert!(rates.data.iter().any(|&r| r > 0.1));
    }
}

#[test]
fn rows_the_board_has_not_reached_take_the_blank_boards_input_with_the_same_results() {
    let brain = small_brain_hearing(13, Some(25));
    let walked = brain.blank_shortcut().walked_share();
    // The board reaches about 25 more neurons a step: most rows are not walked early on.
    assert!(walked[1] < 0.3 && walked[5] < 0.7, "walked shares {walked:?}");
    assert!(walked.iter().skip(1).zip(walked.iter().skip(2)).all(|(a, b)| a <= b), "the reach only grows: {walked:?}");
    for batch in [1usize, 3, 8] {
        let b = boards(200..200 + batch);
        let (short, full) = (cpu::think(&brain, &b), cpu::think_walking(&brain, &b, false));
        assert!(short.data.iter().zip(&full.data).all(|(x, y)| x.to_bits() == y.to_bits()), "batch {batch}");
        // The board does change the rates the rows it reached: the shortcut is not a blank think.
        let blank = cpu::think(&brain, &[[[false; 64]; 12]]);
        assert!((0..brain.neurons).any(|j| short.at(11, j, 0) != blank.at(11, j, 0)));
    }
    // And on the default brain, where the reach covers nearly everything after a few steps
    // (FlyWire: 95 %; the rest, sensory neurons without inputs among them, the board never reaches).
    let brain = &default_brain().brain;
    let walked = brain.blank_shortcut().walked_share();
    assert!(walked[1] < 0.5 && walked[11] > 0.9, "default brain: {walked:?}");
    let b = boards(40..43);
    assert_eq!(cpu::think(brain, &b), cpu::think_walking(brain, &b, false));
}

/// `run_reading` against `run` for `neurons` from step `first` on: the same rates bit for bit.
fn reading_matches_run(brain: &Brain, b: &[Planes], neurons: &[u32], first: usize) {
    let batch = b.len();
    let mut full = Vec::new();
    cpu::run(brain, b, |t, r| {
        if t >= first {
            full.push(neurons.iter().flat_map(|&j| r[j as usize * batch..(j as usize + 1) * batch].to_vec()).collect::<Vec<f32>>())
        }
    });
    let mut read = Vec::new();
    cpu::run_reading(brain, b, neurons, first, |t, r| {
        assert!(t >= first);
        assert_eq!(r.len(), neurons.len() * batch, "only the neurons read");
        read.push(r.to_vec())
    });
    assert_eq!(read.len(), STEPS - first);
    assert!(full.iter().flatten().zip(read.iter().flatten()).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn a_reader_of_a_few_neurons_gets_their_exact_rates_from_fewer_rows() {
    let brain = small_brain_hearing(17, Some(25));
    let last: Vec<u32> = (390..400).collect();
    let walked = brain.needed_rows(&last, 8).walked_share();
    assert!(walked[11] < 0.05 && walked[10] < 0.2, "rows worked out per step {walked:?}");
    for batch in [1usize, 4] {
        reading_matches_run(&brain, &boards(60..60 + batch), &last, 8);
        reading_matches_run(&brain, &boards(60..60 + batch), &last, 11);
    }
    // On the default brain, read from its descending neurons as the readout does.
    let d = default_brain();
    let walked = d.brain.needed_rows(&d.descending, 8).walked_share();
    assert!(walked[11] < 0.1 && walked[10] < 0.5, "default brain: {walked:?}");
    reading_matches_run(&d.brain, &boards(70..73), &d.descending, 8);
}

#[test]
fn run_and_think_give_the_same_rates() {
    let brain = small_brain(3);
    let b = boards(0..5);
    let all = cpu::think(&brain, &b);
    let mut seen = 0;
    cpu::run(&brain, &b, |t, r| {
        assert_eq!(r, all.step(t));
        seen += 1;
    });
    assert_eq!(seen, STEPS);
}

struct Default {
    brain: Brain,
    regions: Vec<Region>,
    descending: Vec<u32>,
    data: std::path::PathBuf,
}

fn default_brain() -> &'static Default {
    static B: OnceLock<Default> = OnceLock::new();
    B.get_or_init(|| {
        // Shared with the other test binaries of this crate (built once per target folder).
        let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
        let (loaded, brain) = store::ready_brain(&BrainSpec::default(), &data, CalibrationOptions::default(), &|_, _| {}).unwrap();
        Default { brain, regions: loaded.connectome.neurons.region, descending: loaded.connectome.groups.descending.clone(), data }
    })
}

#[test]
fn same_input_same_output_bit_for_bit_across_runs_and_batch_sizes() {
    let brain = &default_brain().brain;
    let b = boards(300..332);
    let big = cpu::think(brain, &b);
    let eight = cpu::think(brain, &b[0..8]);
    let odd = cpu::think(brain, &b[0..5]);
    let one = cpu::think(brain, &b[3..4]);
    for t in [0, 5, 11] {
        for j in (0..brain.neurons).step_by(7) {
            let v = big.at(t, j, 3).to_bits();
            assert_eq!(v, eight.at(t, j, 3).to_bits(), "batch 8, step {t}, neuron {j}");
            assert_eq!(v, odd.at(t, j, 3).to_bits(), "batch 5, step {t}, neuron {j}");
            assert_eq!(v, one.at(t, j, 0).to_bits(), "batch 1, step {t}, neuron {j}");
        }
    }
    assert_eq!(cpu::think(brain, &b[0..8]), eight, "a second run is identical");
}

/// The fast layout (neurons renumbered for locality, huge pages) against the brain's own order on
/// the default brain: every rate of every step of a full think, the descending neurons a reader
/// gets, and `run`'s rates put back, all the same bits; the renumbering really moves neurons.
#[test]
fn the_fast_layout_gives_the_plain_layouts_rates_bit_for_bit_on_the_default_brain() {
    use cpu::Layout;
    let d = default_brain();
    let brain = &d.brain;
    let local = brain.local_order();
    let (before, after) = local.mean_sender_distance(brain);
    assert!(after < 0.5 * before, "senders nearer in the local order: {before} → {after}");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    // How many of two runs' rates differ in their bits (0 when the same, and a short message when not).
    let differ = |a: &[u32], b: &[u32]| a.len().abs_diff(b.len()) + a.iter().zip(b).filter(|(x, y)| x != y).count();
    // 17: a batch of AVX-512's 16 lanes and one more; 32: the cache's batch.
    for batch in [1usize, 5, 17, 32] {
        let b = boards(200..200 + batch);
        let (plain, fast) = (cpu::think_in(brain, &b, Layout::PLAIN), cpu::think_in(brain, &b, Layout::FAST));
        assert_eq!(differ(&bits(&plain.data), &bits(&fast.data)), 0, "think, batch {batch}: rates that differ");
        let read = |layout| {
            let mut kept = Vec::new();
            cpu::run_reading_in(brain, &b, &d.descending, 8, layout, |_, r| kept.extend(bits(r)));
            kept
        };
        assert_eq!(differ(&read(Layout::PLAIN), &read(Layout::FAST)), 0, "run_reading, batch {batch}: rates that differ");
        let mut t = 0;
        cpu::run_in(brain, &b, Layout::FAST, |step, r| {
            assert_eq!(differ(&bits(r), &bits(plain.step(step))), 0, "run, step {step}: rates that differ");
            t += 1;
        });
        assert_eq!(t, STEPS);
    }
}

#[test]
fn after_calibration_each_neurons_input_is_centred_and_scaled_at_every_step() {
    let brain = &default_brain().brain;
    let b = calibrate::calibration_boards();
    let batch = b.len();
    let n = brain.neurons;
    let x = brain.eye_input(&b);
    let mut prev = vec![0f32; n * batch];
    let mut u = vec![0f32; n * batch];
    for t in 0..STEPS {
        cpu::input_sum(brain, &prev, &x, batch, &mut u);
        let (mu, sigma) = brain.homeostasis().step(t);
        let (mut checked, mut worst_mean, mut worst_spread) = (0, 0f64, 0f64);
        for j in 0..n {
            if sigma[j] <= SIGMA_FLOOR {
                continue; // floored: its spread is below 0.02, scaled by the floor instead
            }
            let z: Vec<f64> = u[j * batch..(j + 1) * batch].iter().map(|&v| (v as f64 - mu[j] as f64) / sigma[j] as f64).collect();
            let mean = z.iter().sum::<f64>() / batch as f64;
            let spread = (z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / batch as f64).sqrt();
            worst_mean = worst_mean.max(mean.abs());
            worst_spread = worst_spread.max((spread - 1.0).abs());
            checked += 1;
        }
        // At step 1 only the eye's cells see the board; by step 12 most neurons do.
        println!("step {}: {checked} neurons above the floor", t + 1);
        assert!(checked > 0 && (t < STEPS - 1 || checked > n / 2), "step {t}: only {checked} neurons not floored");
        assert!(worst_mean < 1e-3 && worst_spread < 1e-3, "step {t}: mean off by {worst_mean}, spread off by {worst_spread}");
        cpu::activate(brain, t, &prev, batch, &mut u);
        std::mem::swap(&mut prev, &mut u);
    }
}

#[test]
fn the_brain_is_not_dead_and_a_photoreceptor_lesion_silences_the_board() {
    let d = default_brain();
    let b = boards(256..304);
    let dn: Vec<usize> = (0..d.brain.neurons).filter(|&j| d.regions[j] == Region::Descending).collect();
    let dn_spread = |brain: &Brain| {
        let rates = cpu::think(brain, &b);
        let step12 = rates.step(STEPS - 1);
        dn.iter().map(|&j| signal::spread(&step12[j * b.len()..(j + 1) * b.len()])).sum::<f64>() / dn.len() as f64
    };
    let alive = dn_spread(&d.brain);
    assert!(alive > 0.05, "descending neurons barely move with the board: {alive}");
    let spec = BrainSpec { control: Control::Lesion { regions: vec![Region::Photoreceptors] }, ..BrainSpec::default() };
    let (_, lesioned) = store::ready_brain(&spec, &d.data, CalibrationOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(dn_spread(&lesioned), 0.0, "without photoreceptor output no board can reach the descending neurons");
    // The region signal says the same, step by step.
    let by_region = signal::by_region(&d.brain, &d.regions, &b);
    assert_eq!(by_region[Region::Descending as usize][0], 0.0, "step 1: only the eye knows the board");
    assert!(by_region[Region::Photoreceptors as usize][0] > 0.0);
    assert!(by_region[Region::Descending as usize][STEPS - 1] > 0.05);
}

#[test]
fn homeostasis_is_stored_and_tied_to_the_brain() {
    let d = default_brain();
    let spec = BrainSpec::default();
    let path = calibrate::homeostasis_path(&spec.brain_path(&d.data), CalibrationOptions::default());
    let loaded = flychess_sim::connectome::brain_file::load(&spec.brain_path(&d.data)).unwrap();
    let h = calibrate::load(&path, &loaded.checksum, d.brain.neurons, CalibrationOptions::default()).expect("stored");
    assert_eq!(h, *d.brain.homeostasis());
    assert!(calibrate::load(&path, "another brain", d.brain.neurons, CalibrationOptions::default()).is_none());
    let calm = CalibrationOptions { calm_unreached: true };
    assert!(calibrate::load(&path, &loaded.checksum, d.brain.neurons, calm).is_none(), "other options, other file");
}

#[test]
fn the_dn_cache_resumes_and_matches_a_fresh_fill() {
    use flychess_sim::cache::{Cache, CacheMeta, Reading};
    use flychess_sim::data::{Dataset, shipped_path};
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
    let rates =
        cpu::think(&brain, &rows[..3].iter().map(|r| planes(&flychess_sim::chess::position_from_fen(&r.fen).unwrap())).collect::<Vec<_>>());
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
    use flychess_sim::cache::{Cache, CacheMeta};
    use flychess_sim::data::{Dataset, shipped_path};
    use flychess_sim::grading::Score;
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
    use flychess_sim::readout::{think_features, think_features_alone};
    let brain = &default_brain().brain;
    let dn: Vec<u32> = (1000..1300).collect();
    let steps = vec![8, 9, 10, 11];
    // Six threads, three rounds each, started together: one board each, or three.
    let jobs: Vec<Vec<Planes>> = (0..18).map(|k| boards(40 + 3 * k..40 + 3 * k + if k % 4 == 0 { 3 } else { 1 })).collect();
    let (_, shared_before) = flychess_sim::together::counts();
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
    let (_, shared_after) = flychess_sim::together::counts();
    assert!(shared_after > shared_before, "six threads asking at once shared at least one batch");
}

#[test]
fn readout_features_without_keeping_every_step_match_a_full_think() {
    use flychess_sim::readout::{descending_features, think_features};
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
    use flychess_sim::brain::agreement::{first_step_past, per_step_max, rounding_envelope};
    use flychess_sim::data::{Dataset, shipped_path};
    let brain = small_brain(12);
    let rows = &Dataset::load(&shipped_path()).unwrap().rows[..4];
    let boards: Vec<Planes> = rows.iter().map(|r| planes(&flychess_sim::chess::position_from_fen(&r.fen).unwrap())).collect();
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
    wrong.set_params(flychess_sim::brain::Params { beta: brain.params().beta + 1e-3, ..brain.params() });
    let g = gaps(&wrong);
    assert_eq!(first_step_past(&g, &envelope), Some(0), "{envelope:?} {g:?}");
}

/// The half-gather engine (`cpu::run_reading_half`, not the reference: the senders' rates
/// gathered as half floats) reads what the exact engine reads to within what half rounding
/// explains on a small brain, yet is another engine (its readings do differ); the layout does not
/// change what it computes, for a batch with a register kernel (32) and one without (5).
#[test]
fn the_half_gather_engine_reads_close_to_the_exact_one_but_is_another_engine() {
    use cpu::Layout;
    let brain = small_brain(7);
    let neurons: Vec<u32> = (0..brain.neurons as u32).step_by(5).collect();
    for batch in [5usize, 32] {
        let b = boards(100..100 + batch);
        let read = |half: bool, layout: Layout| {
            let mut kept = Vec::new();
            if half {
                cpu::run_reading_half(&brain, &b, &neurons, 8, layout, |_, r| kept.extend_from_slice(r));
            } else {
                cpu::run_reading_in(&brain, &b, &neurons, 8, layout, |_, r| kept.extend_from_slice(r));
            }
            kept
        };
        let (exact, half) = (read(false, Layout::FAST), read(true, Layout::FAST));
        let worst = exact.iter().zip(&half).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst > 0.0 && worst < 1e-2, "batch {batch}: the half-gather engine's readings are {worst} from the exact ones");
        let plain = read(true, Layout::PLAIN);
        assert!(plain.iter().map(|x| x.to_bits()).eq(half.iter().map(|x| x.to_bits())), "batch {batch}: the layout changed the rates");
    }
}
