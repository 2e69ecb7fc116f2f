//! The GPU engine (WGSL on wgpu; Mesa lavapipe in CI) against the CPU engine: the same rates
//! within 1e-4 on the whole stand-in brain, every step (and on the default FlyWire brain as far
//! as its few rounding-amplifying neurons allow), including batches larger than one binding
//! holds (cut into slabs), a dispatch wrapped into two dimensions, the readings a reader takes,
//! and the simulator that hands over to the CPU when a GPU think fails. Without any adapter the
//! tests say so and pass, unless FLYCHESS_CI=1 (set by .ci/run, where lavapipe is installed) makes
//! a missing adapter a failure.

use flychess_brain::brain::simulator::{EngineChoice, Simulator, read_on_cpu};
use flychess_brain::brain::{Brain, STEPS, cpu};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::{Planes, planes, sample_positions};
use flychess_brain::store::{self, BrainSpec};

mod common;
use common::default_brain::{
    gpu_engine as engine, largest_difference, many_boards as dataset_boards, standin_brain as default_brain, worst,
};

/// On the default FlyWire brain the GPU engine agrees with the CPU engine to 1e-4 for the first
/// half of the think; after that a few hundred of its half a million values (neurons with one or
/// two inputs whose spread sits at the σ floor, gain 25: L5, TmY3, L4 …) grow lavapipe's unfused
/// fma rounding (1e-8 at step 1) about threefold a step. On a GPU whose arithmetic is exact (the
/// H200) there is nothing to grow. The test holds the engine to that: every value within 1e-4
/// through step 6, and at step 12 all but 0.1 % of them.
#[test]
fn on_flywire_the_gpu_engine_agrees_until_its_few_sensitive_neurons_amplify_rounding() {
    static B: std::sync::OnceLock<Brain> = std::sync::OnceLock::new();
    let brain = B.get_or_init(|| {
        let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
        store::ready_brain(&BrainSpec::default(), &data, CalibrationOptions::default(), &|_, _| {}).unwrap().1
    });
    let Some(mut gpu) = engine(brain) else { return };
    let boards: Vec<Planes> = sample_positions()[400..404].iter().map(planes).collect();
    gpu.think(&boards).unwrap();
    let (g, c) = (gpu.read_rates().unwrap(), cpu::think(brain, &boards));
    let per_step = brain.neurons * boards.len();
    for t in 0..STEPS {
        let (a, b) = (&g.data[t * per_step..(t + 1) * per_step], &c.data[t * per_step..(t + 1) * per_step]);
        let off = a.iter().zip(b).filter(|(x, y)| (*x - *y).abs() > 1e-4).count();
        eprintln!("step {}: {off} of {per_step} values more than 1e-4 apart (largest {:e})", t + 1, largest_difference(a, b));
        if t < 6 {
            assert_eq!(off, 0, "step {}", t + 1);
        }
        assert!(off * 1000 <= per_step, "step {}: {off} values apart", t + 1);
    }
}

#[test]
fn gpu_and_cpu_give_the_same_rates_on_the_whole_brain() {
    let brain = default_brain();
    let Some(mut gpu) = engine(brain) else { return };
    let boards: Vec<Planes> = sample_positions()[400..432].iter().map(planes).collect();
    // 16 positions × 12 steps is the largest batch lavapipe binds (128 MiB).
    for batch in [4usize, 16] {
        let b = &boards[..batch];
        gpu.think(b).unwrap();
        let on_gpu = gpu.read_rates().unwrap();
        let on_cpu = cpu::think(brain, b);
        let w = worst(&on_gpu, &on_cpu);
        eprintln!("batch {batch}: largest difference {w:e}");
        assert!(w < 1e-4, "batch {batch}: GPU and CPU differ by up to {w}");
        assert!(on_gpu.data.iter().any(|&r| r > 0.1), "the GPU brain is not silent");
    }
}

#[test]
fn a_dispatch_wrapped_into_two_dimensions_gives_the_same_rates() {
    let brain = default_brain();
    let Some(mut gpu) = engine(brain) else { return };
    let boards: Vec<Planes> = sample_positions()[10..13].iter().map(planes).collect();
    gpu.think(&boards).unwrap();
    let flat = gpu.read_rates().unwrap();
    gpu.set_max_groups_x(1000);
    gpu.think(&boards).unwrap();
    let wrapped = gpu.read_rates().unwrap();
    assert_eq!(flat, wrapped, "every invocation found its (neuron, position)");
    assert!(worst(&wrapped, &cpu::think(brain, &boards)) < 1e-4);
}

#[test]
fn batches_larger_than_one_binding_are_cut_into_slabs_with_the_same_rates() {
    let brain = default_brain();
    let Some(mut gpu) = engine(brain) else { return };
    let (_, fits) = gpu.slab_limits();
    eprintln!("one binding holds {fits} positions of the default brain");
    let boards = dataset_boards(128);
    // 32 positions: every step of every neuron, slab by slab, against the CPU engine.
    let on_gpu = gpu.think_rates(&boards[..32]).unwrap();
    let (slab, slabs) = gpu.plan(32);
    assert!(slab * slabs >= 32 && slab <= fits);
    let w = worst(&on_gpu, &cpu::think(brain, &boards[..32]));
    eprintln!("batch 32 in {slabs} slabs of {slab}: largest difference {w:e}");
    assert!(w < 1e-4, "batch 32: GPU and CPU differ by up to {w}");
    // 128 positions in uneven slabs (the last one padded): every descending neuron and every
    // 97th neuron at every step, read on the GPU.
    gpu.set_slab_limit(15);
    let (slab, slabs) = gpu.plan(128);
    assert!(slabs > 1 && 128 % slab != 0, "{slabs} slabs of {slab}: the last is padded");
    let mut neurons: Vec<u32> = (0..brain.neurons as u32).step_by(97).collect();
    neurons.extend([brain.neurons as u32 - 1, 5, 5]);
    let steps: Vec<usize> = (0..STEPS).collect();
    let read = gpu.read(&boards, &neurons, &steps).unwrap();
    let reference = read_on_cpu(brain, &boards, &neurons, &steps).unwrap();
    let w = largest_difference(&read, &reference);
    eprintln!("batch 128 in {slabs} slabs of {slab}: largest difference {w:e}");
    assert!(w < 1e-4, "batch 128: GPU and CPU differ by up to {w}");
    assert!(read.iter().filter(|&&r| r > 0.1).count() > read.len() / 100, "the readings are not silent");
}

#[test]
fn a_thousand_positions_in_many_slabs_and_output_groups_read_what_the_cpu_reads() {
    let brain = common::small_brain::small_brain(7);
    let Some(mut gpu) = engine(&brain) else { return };
    let boards = dataset_boards(1024);
    gpu.set_slab_limit(7); // 147 slabs, the last one padded with blank boards
    gpu.set_max_groups_x(5); // and every dispatch wrapped into two dimensions
    let neurons: Vec<u32> = (0..brain.neurons as u32).rev().step_by(3).collect();
    let steps = [11usize, 0, 8, 9];
    let read = gpu.read(&boards, &neurons, &steps).unwrap();
    let reference = read_on_cpu(&brain, &boards, &neurons, &steps).unwrap();
    assert_eq!(read.len(), 1024 * neurons.len() * steps.len());
    let w = largest_difference(&read, &reference);
    assert!(w < 1e-4, "GPU and CPU differ by up to {w}");
    // Different positions read differently: the slabs did not all read the first one.
    let per = neurons.len() * steps.len();
    assert!((1..1024).filter(|&p| read[p * per..(p + 1) * per] != read[..per]).count() > 900);
    // A single slab's think keeps every step in one buffer, as the viewer binds it.
    let full = gpu.think_rates(&boards[..9]).unwrap();
    gpu.think(&boards[..9]).unwrap();
    assert_eq!(gpu.read_rates().unwrap(), full, "think and think_rates agree");
    assert!(gpu.think(&boards[..9]).is_ok());
}

/// The app's GPU path: the view keeps the think's whole buffer on the device and only the
/// readout's neurons and steps come back, read from that buffer without thinking again. They are
/// exactly the whole read-back's values at those places, and the CPU engine's within 1e-4.
#[test]
fn the_readout_reads_only_its_neurons_and_steps_from_the_think_left_on_the_device() {
    let brain = common::small_brain::small_brain(7);
    let Some(mut gpu) = engine(&brain) else { return };
    assert!(gpu.read_current(&[0], &[0]).is_err(), "nothing thought yet");
    let boards = dataset_boards(3);
    let neurons: Vec<u32> = (0..brain.neurons as u32).rev().step_by(5).collect();
    let steps = [8usize, 11, 3];
    gpu.think(&boards).unwrap();
    let read = gpu.read_current(&neurons, &steps).unwrap();
    let full = gpu.read_rates().unwrap();
    assert_eq!(read.len(), boards.len() * steps.len() * neurons.len());
    for p in 0..boards.len() {
        for (s, &t) in steps.iter().enumerate() {
            for (k, &j) in neurons.iter().enumerate() {
                assert_eq!(
                    read[(p * steps.len() + s) * neurons.len() + k],
                    full.at(t, j as usize, p),
                    "position {p}, step {t}, neuron {j}"
                );
            }
        }
    }
    let w = largest_difference(&read, &read_on_cpu(&brain, &boards, &neurons, &steps).unwrap());
    assert!(w < 1e-4, "GPU and CPU differ by up to {w}");
    assert!(gpu.read_current(&[brain.neurons as u32], &[0]).is_err() && gpu.read_current(&[0], &[STEPS]).is_err());
}

/// `read` works out only the rows its reader needs at each step (the CPU engine's `NeededRows`,
/// kernels `step_rows` and `step4_rows`): the same readings bit for bit as every row worked out,
/// though the rows left out still hold another batch's rates, with most rows skipped at the last
/// steps; and the CPU engine's readings within 1e-4.
#[test]
fn a_read_works_out_only_the_rows_its_reader_needs_and_reads_the_same() {
    let brain = default_brain();
    let Some(mut gpu) = engine(brain) else { return };
    let boards = dataset_boards(48);
    let (these, others) = boards.split_at(24);
    let neurons: Vec<u32> = (0..brain.neurons as u32).step_by(997).collect();
    let steps = [8usize, 9, 10, 11];
    let share = brain.needed_rows(&neurons, 8).walked_share();
    eprintln!("share of rows worked out by step: {share:?}");
    assert!(share[11] < 0.01 && share[10] < 0.5, "the reader needs few rows late: {share:?}");
    let reference = read_on_cpu(brain, these, &neurons, &steps).unwrap();
    for four in [true, false] {
        gpu.set_four_at_a_time(four);
        gpu.set_rows_only(false);
        gpu.read(others, &neurons, &steps).unwrap();
        gpu.set_rows_only(true);
        let some = gpu.read(these, &neurons, &steps).unwrap();
        gpu.set_rows_only(false);
        let all = gpu.read(these, &neurons, &steps).unwrap();
        assert!(
            some.iter().map(|x| x.to_bits()).eq(all.iter().map(|x| x.to_bits())),
            "four at a time {four}: the needed rows read otherwise"
        );
        let w = largest_difference(&some, &reference);
        assert!(w < 1e-4, "four at a time {four}: GPU and CPU differ by up to {w}");
    }
}

/// Issue 39: a GPU think that fails (here: a reader the engine's brain does not have, as a lost
/// device would fail any think) is answered by the CPU engine instead of panicking in the caller,
/// and the simulator thinks on the CPU from then on.
#[test]
fn a_failing_gpu_think_is_answered_by_the_cpu_engine_from_then_on() {
    let (small, larger) = (common::small_brain::small_brain(21), default_brain());
    let gpu = match Simulator::choose(EngineChoice::Gpu, &small) {
        Ok(s) => s,
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(e) => return eprintln!("skipping: {e}"),
    };
    assert!(gpu.is_gpu());
    let boards = dataset_boards(3);
    // Neurons past the end of the engine's brain: its think fails.
    let neurons: Vec<u32> = (small.neurons as u32..larger.neurons as u32).take(8).collect();
    let read = gpu.read(larger, &boards, &neurons, &[10, 11]).expect("answered on the CPU");
    assert_eq!(read, read_on_cpu(larger, &boards, &neurons, &[10, 11]).unwrap());
    assert!(!gpu.is_gpu(), "the failure is remembered: {}", gpu.describe());
}
