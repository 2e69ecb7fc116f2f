//! The brains and boards the engine tests share, in the brain crate and (by `#[path]`) in sim: the
//! whole default brain (FlyWire v783) and the synthetic stand-in, each with its homeostasis and
//! built once per target folder; the shipped sample positions as boards; the GPU engine on the
//! best adapter; the largest difference between two thinks.

use std::sync::OnceLock;

use flychess_brain::brain::gpu::{GpuEngine, headless_device};
use flychess_brain::brain::{Brain, Rates, STEPS};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::{Planes, planes, sample_positions};
use flychess_brain::connectome::rules::Region;
use flychess_brain::store::{self, BrainSpec};

/// The shipped sample positions `range` as boards.
pub fn boards(range: std::ops::Range<usize>) -> Vec<Planes> {
    sample_positions()[range].iter().map(planes).collect()
}

pub struct Default {
    pub brain: Brain,
    pub regions: Vec<Region>,
    pub descending: Vec<u32>,
    pub data: std::path::PathBuf,
}

pub fn default_brain() -> &'static Default {
    static B: OnceLock<Default> = OnceLock::new();
    B.get_or_init(|| {
        // Shared with the other test binaries (built once per target folder).
        let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
        let (loaded, brain) = store::ready_brain(&BrainSpec::default(), &data, CalibrationOptions::default(), &|_, _| {}).unwrap();
        Default { brain, regions: loaded.connectome.neurons.region, descending: loaded.connectome.groups.descending.clone(), data }
    })
}

/// `n` boards: the shipped sample positions, then (past its 512) each of them mirrored top to
/// bottom, so that every board of a large batch differs from its neighbours.
pub fn many_boards(n: usize) -> Vec<Planes> {
    let sample: Vec<Planes> = sample_positions().iter().map(planes).collect();
    (0..n)
        .map(|i| {
            let b = sample[i % sample.len()];
            if (i / sample.len()).is_multiple_of(2) { b } else { std::array::from_fn(|q| std::array::from_fn(|sq| b[q][sq ^ 56])) }
        })
        .collect()
}

/// The synthetic stand-in brain with its homeostasis, built once per target folder and shared by
/// the tests. The GPU kernels are checked to 1e-4 on it: its wide fan-in keeps every neuron's
/// gain modest, so rounding differences stay rounding differences for all 12 steps. (FlyWire has
/// neurons that amplify them: see the GPU test on the default brain.)
pub fn standin_brain() -> &'static Brain {
    static B: OnceLock<Brain> = OnceLock::new();
    B.get_or_init(|| {
        let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
        store::ready_brain(&BrainSpec::standin(), &data, CalibrationOptions::default(), &|_, _| {}).unwrap().1
    })
}

/// The GPU engine for `brain` on the best adapter (lavapipe in CI); None, said, without one,
/// except under FLYCHESS_CI=1, where a missing adapter fails the test.
pub fn gpu_engine(brain: &Brain) -> Option<GpuEngine> {
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

/// The largest difference between two thinks of the same shape.
pub fn worst(a: &Rates, b: &Rates) -> f32 {
    assert_eq!((a.batch, a.neurons, a.data.len()), (b.batch, b.neurons, b.data.len()));
    largest_difference(&a.data, &b.data)
}

pub fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// The model written the obvious way, in f64, one position at a time.
pub fn reference(brain: &Brain, board: &Planes) -> Vec<Vec<f64>> {
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
