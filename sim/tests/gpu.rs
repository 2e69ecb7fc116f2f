//! The GPU engine (WGSL on wgpu; Mesa lavapipe in CI) against the CPU engine: the same rates
//! within 1e-4 on the whole default brain, every step, including a batch large enough to need the
//! 2-D dispatch. Without any adapter the tests say so and pass, unless FLYCHESS_CI=1
//! (set by .ci/run, where lavapipe is installed) makes a missing adapter a failure.

use flychess_sim::brain::gpu::{headless_device, GpuEngine};
use flychess_sim::brain::{cpu, Brain, Rates};
use flychess_sim::calibrate::CalibrationOptions;
use flychess_sim::chess::{planes, sample_positions, Planes};
use flychess_sim::store::{self, BrainSpec};

fn engine(brain: &Brain) -> Option<GpuEngine> {
    match headless_device() {
        Ok(d) => {
            eprintln!("GPU engine on {}", d.adapter_name);
            Some(GpuEngine::new(d.device, d.queue, brain).expect("the brain fits on the device"))
        }
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipping the GPU comparison: {e}");
            None
        }
    }
}

fn worst(a: &Rates, b: &Rates) -> f32 {
    assert_eq!((a.batch, a.neurons, a.data.len()), (b.batch, b.neurons, b.data.len()));
    a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The default brain with its homeostasis, built once per target folder and shared by the tests.
fn default_brain() -> &'static Brain {
    static B: std::sync::OnceLock<Brain> = std::sync::OnceLock::new();
    B.get_or_init(|| {
        let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
        store::ready_brain(&BrainSpec::default(), &data, CalibrationOptions::default(), &|_, _| {}).unwrap().1
    })
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
