//! The CPU engine: the 12 steps for a whole batch with rayon, f32. Each step streams the CSR once
//! for the whole batch: a receiving neuron's row is walked once and every sender's rates of all
//! positions (contiguous in the batch-inner layout) are gathered with one weight. Rows are split
//! into blocks that threads take in order, and within a row the sum runs in edge order, so the
//! result is bit-for-bit the same for any batch size and thread count.
//!
//! Every operation is a plain IEEE multiply or add (never fused), in the same order as
//! `shaders/brain_step.wgsl`: WGSL leaves the precision of `fma` to the driver (Mesa lavapipe does
//! not fuse it), so unfused arithmetic is what both engines can agree on. Where the CPU has AVX2 the
//! blocks run in code compiled for it (wider vectors, the same results).

use rayon::prelude::*;

use super::{Brain, Rates, NO_EYE, STEPS};
use crate::chess::Planes;

/// Rows per rayon task.
const BLOCK: usize = 256;

/// What a block of rows computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// u = W r + x only (calibration measures u before it knows μ, σ).
    InputOnly,
    /// r_new = f(W r + x).
    Full,
}

/// Whether this CPU runs the blocks compiled for AVX2 (checked once).
fn has_avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx2")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// a·b + c, rounded twice (Rust never fuses it), as the shader writes it.
#[inline(always)]
fn madd(a: f32, b: f32, c: f32) -> f32 {
    a * b + c
}

/// max(0, tanh z), branch-free so the compiler vectorises it over a batch: tanh z = 1 − 2/(e^{2z}+1)
/// with e^x from a range reduction by ln 2 and the Cephes degree-6 polynomial (absolute error
/// under 2e-7 against f64; the library's tanhf is a call per value and was 60% of a think).
#[inline(always)]
fn tanh_relu_with(z: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // tanh(9) rounds to 1 in f32: clamping 2z at 18 changes nothing and keeps 2^n in range.
    let x = (2.0 * z).clamp(0.0, 18.0);
    let n = madd(x, LOG2E, 0.5) as i32;
    let nf = n as f32;
    let r = madd(-nf, LN2_LO, madd(-nf, LN2_HI, x));
    let mut p = 1.987_569_2e-4;
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = madd(p, r, c);
    }
    let e = madd(p, r * r, r + 1.0) * f32::from_bits(((n + 127) as u32) << 23);
    1.0 - 2.0 / (e + 1.0)
}

/// max(0, tanh z) as both engines compute it.
pub fn tanh_relu(z: f32) -> f32 {
    tanh_relu_with(z)
}

/// The new rate from the input `u`: z = (u − μ)·g + β with g = α/σ, then the leak.
#[inline(always)]
fn activate_with(leak: f32, beta: f32, mu: f32, gain: f32, u: f32, r_prev: f32) -> f32 {
    let z = madd(u - mu, gain, beta);
    madd(leak, tanh_relu_with(z), (1.0 - leak) * r_prev)
}

/// One row for a batch of exactly B positions: the accumulators stay in registers.
#[inline(always)]
fn row<const B: usize>(pre: &[u32], weight: &[f32], r_prev: &[f32], acc: &mut [f32; B]) {
    let mut a = *acc;
    for (&p, &w) in pre.iter().zip(weight) {
        let base = p as usize * B;
        let src: &[f32; B] = r_prev[base..base + B].try_into().expect("B rates");
        for i in 0..B {
            a[i] = madd(src[i], w, a[i]);
        }
    }
    *acc = a;
}

#[inline(always)]
fn gather(brain: &Brain, j: usize, r_prev: &[f32], x_eye: &[f32], batch: usize, acc: &mut [f32]) {
    let slot = brain.eye_slot[j];
    if slot == NO_EYE {
        acc.fill(0.0);
    } else {
        acc.copy_from_slice(&x_eye[slot as usize * batch..(slot as usize + 1) * batch]);
    }
    let (start, end) = (brain.row_start[j] as usize, brain.row_start[j + 1] as usize);
    let (pre, weight) = (&brain.pre[start..end], &brain.weight[start..end]);
    macro_rules! fixed {
        ($b:literal) => {
            row::<$b>(pre, weight, r_prev, acc.try_into().expect("batch-sized slice"))
        };
    }
    match batch {
        1 => fixed!(1),
        2 => fixed!(2),
        4 => fixed!(4),
        8 => fixed!(8),
        16 => fixed!(16),
        32 => fixed!(32),
        64 => fixed!(64),
        128 => fixed!(128),
        _ => {
            for (&p, &w) in pre.iter().zip(weight) {
                let src = &r_prev[p as usize * batch..(p as usize + 1) * batch];
                for (a, &r) in acc.iter_mut().zip(src) {
                    *a = madd(r, w, *a);
                }
            }
        }
    }
}

/// Rows `first..` of one block (`out` holds them, batch-inner).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block(brain: &Brain, t: usize, stage: Stage, first: usize, r_prev: &[f32], x_eye: &[f32], batch: usize, out: &mut [f32]) {
    let (mu, gain) = brain.step_constants(t);
    let (leak, beta) = (brain.params.leak, brain.params.beta);
    for (k, acc) in out.chunks_exact_mut(batch).enumerate() {
        let j = first + k;
        gather(brain, j, r_prev, x_eye, batch, acc);
        if stage == Stage::Full {
            let prev = &r_prev[j * batch..(j + 1) * batch];
            for (v, &rp) in acc.iter_mut().zip(prev) {
                *v = activate_with(leak, beta, mu[j], gain[j], *v, rp);
            }
        }
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
#[allow(clippy::too_many_arguments)]
unsafe fn block_avx2(brain: &Brain, t: usize, stage: Stage, first: usize, r_prev: &[f32], x_eye: &[f32], batch: usize, out: &mut [f32]) {
    block(brain, t, stage, first, r_prev, x_eye, batch, out)
}

fn rows(brain: &Brain, t: usize, stage: Stage, r_prev: &[f32], x_eye: &[f32], batch: usize, out: &mut [f32]) {
    let avx2 = has_avx2();
    out.par_chunks_mut(BLOCK * batch).enumerate().for_each(|(b, chunk)| {
        if avx2 {
            // SAFETY: the CPU was checked to have AVX2.
            unsafe { block_avx2(brain, t, stage, b * BLOCK, r_prev, x_eye, batch, chunk) }
        } else {
            block(brain, t, stage, b * BLOCK, r_prev, x_eye, batch, chunk)
        }
    });
}

/// u = W r + x for every neuron of a batch: `u[neuron · batch + b]` (`t` only names the step).
pub fn input_sum(brain: &Brain, r_prev: &[f32], x_eye: &[f32], batch: usize, u: &mut [f32]) {
    rows(brain, 0, Stage::InputOnly, r_prev, x_eye, batch, u);
}

/// r_new from u (in place: `u` becomes the new rates) at step `t`.
pub fn activate(brain: &Brain, t: usize, r_prev: &[f32], batch: usize, u: &mut [f32]) {
    let avx2 = has_avx2();
    u.par_chunks_mut(BLOCK * batch).enumerate().for_each(|(b, chunk)| {
        if avx2 {
            // SAFETY: the CPU was checked to have AVX2.
            unsafe { activate_block_avx2(brain, t, b * BLOCK, r_prev, batch, chunk) }
        } else {
            activate_block(brain, t, b * BLOCK, r_prev, batch, chunk)
        }
    });
}

#[inline(always)]
fn activate_block(brain: &Brain, t: usize, first: usize, r_prev: &[f32], batch: usize, chunk: &mut [f32]) {
    let (mu, gain) = brain.step_constants(t);
    let (leak, beta) = (brain.params.leak, brain.params.beta);
    for (k, row) in chunk.chunks_exact_mut(batch).enumerate() {
        let j = first + k;
        let prev = &r_prev[j * batch..(j + 1) * batch];
        for (v, &rp) in row.iter_mut().zip(prev) {
            *v = activate_with(leak, beta, mu[j], gain[j], *v, rp);
        }
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn activate_block_avx2(brain: &Brain, t: usize, first: usize, r_prev: &[f32], batch: usize, chunk: &mut [f32]) {
    activate_block(brain, t, first, r_prev, batch, chunk)
}

/// One fused step: r_new = f(W r_prev + x).
pub fn step(brain: &Brain, t: usize, r_prev: &[f32], x_eye: &[f32], batch: usize, r_new: &mut [f32]) {
    rows(brain, t, Stage::Full, r_prev, x_eye, batch, r_new);
}

/// All 12 steps of a batch of boards, every step kept (what the viewer replays).
pub fn think(brain: &Brain, boards: &[Planes]) -> Rates {
    let batch = boards.len();
    let n = brain.neurons;
    let x = brain.eye_input(boards);
    let mut data = vec![0f32; STEPS * n * batch];
    let zeros = vec![0f32; n * batch];
    for t in 0..STEPS {
        let (done, rest) = data.split_at_mut(t * n * batch);
        let prev: &[f32] = if t == 0 { &zeros } else { &done[(t - 1) * n * batch..] };
        step(brain, t, prev, &x, batch, &mut rest[..n * batch]);
    }
    Rates { batch, neurons: n, data }
}

/// The 12 steps with only two buffers; `visit(t, rates)` sees every step (for readouts that keep
/// a few neurons of a few steps, without holding all 12 steps of a large batch).
pub fn run(brain: &Brain, boards: &[Planes], mut visit: impl FnMut(usize, &[f32])) {
    let batch = boards.len();
    let n = brain.neurons;
    let x = brain.eye_input(boards);
    let mut prev = vec![0f32; n * batch];
    let mut next = vec![0f32; n * batch];
    for t in 0..STEPS {
        step(brain, t, &prev, &x, batch, &mut next);
        visit(t, &next);
        std::mem::swap(&mut prev, &mut next);
    }
}

#[cfg(test)]
mod tests {
    use super::tanh_relu;

    #[test]
    fn tanh_relu_matches_f64_everywhere() {
        let mut worst = 0f64;
        for i in -200_000..=200_000 {
            let z = i as f32 * 1e-4;
            let want = (z as f64).tanh().max(0.0);
            worst = worst.max((tanh_relu(z) as f64 - want).abs());
        }
        for z in [30.0f32, 1e6, f32::MAX, -1e6, f32::MIN] {
            assert!((tanh_relu(z) as f64 - (z as f64).tanh().max(0.0)).abs() < 1e-7, "{z}");
        }
        assert!(worst < 2e-7, "worst error {worst}");
        assert_eq!(tanh_relu(0.0), 0.0);
        assert_eq!(tanh_relu(-3.0), 0.0);
    }
}
