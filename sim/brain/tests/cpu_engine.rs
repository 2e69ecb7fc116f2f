//! The CPU engine: against a plain f64 reference on a small brain, bit-for-bit repeatability
//! across runs, batch sizes and layouts, readers of a few neurons, and the science checks of
//! homeostasis on the whole default brain (normalised input centred and scaled; the brain not
//! dead; a photoreceptor lesion silencing the board). `cargo test -p flychess-brain` runs these
//! without compiling burn; engines.rs runs the questions every engine answers on each engine.

use flychess_brain::brain::{Brain, STEPS, cpu, signal};
use flychess_brain::calibrate::{self, CalibrationOptions, SIGMA_FLOOR};
use flychess_brain::chess::Planes;
use flychess_brain::connectome::Control;
use flychess_brain::connectome::rules::Region;
use flychess_brain::store::{self, BrainSpec};

mod common;
use common::default_brain::{boards, default_brain, reference};
use common::small_brain::{small_brain, small_brain_hearing};

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
    let loaded = flychess_brain::connectome::brain_file::load(&spec.brain_path(&d.data)).unwrap();
    let h = calibrate::load(&path, &loaded.checksum, d.brain.neurons, CalibrationOptions::default()).expect("stored");
    assert_eq!(h, *d.brain.homeostasis());
    assert!(calibrate::load(&path, "another brain", d.brain.neurons, CalibrationOptions::default()).is_none());
    let calm = CalibrationOptions { calm_unreached: true };
    assert!(calibrate::load(&path, &loaded.checksum, d.brain.neurons, calm).is_none(), "other options, other file");
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
