//! What this machine can do at most, measured in the same run as the engine so every speed figure
//! can say how far it is from the limit: memory bandwidth by a STREAM-style copy (two arrays far
//! larger than any cache, copied by every thread, bytes read plus bytes written a second) and
//! arithmetic by a loop of independent fused multiply-adds in registers on every thread (AVX2 +
//! FMA where the CPU has them: 8 lanes × 2 FLOPs an instruction; plain code elsewhere). The
//! engine itself multiplies and adds unfused (`cpu`), two FLOPs per connection and position.

use std::time::Instant;

use rayon::prelude::*;

/// The machine's measured peaks.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Peaks {
    /// STREAM copy: (read + written) bytes a second over all threads, in GB/s (10⁹).
    pub copy_gb_per_s: f64,
    /// Fused multiply-adds in registers over all threads, GFLOP/s (10⁹, two a multiply-add).
    pub fma_gflop_per_s: f64,
    /// Whether the arithmetic loop ran on AVX2 + FMA.
    pub fma_instructions: bool,
    pub threads: usize,
}

/// Floats in each of the copy's two arrays: 32 Mi (128 MiB each).
const COPY_FLOATS: usize = 32 << 20;

/// Measures both (about a second).
pub fn measure() -> Peaks {
    Peaks {
        copy_gb_per_s: copy_gb_per_s(),
        fma_gflop_per_s: fma_gflop_per_s(),
        fma_instructions: has_fma(),
        threads: rayon::current_num_threads(),
    }
}

fn copy_gb_per_s() -> f64 {
    let source: Vec<f32> = (0..COPY_FLOATS).into_par_iter().map(|i| i as f32).collect();
    let mut dest = vec![0f32; COPY_FLOATS];
    const CHUNK: usize = 1 << 18;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        dest.par_chunks_mut(CHUNK).zip(source.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
        best = best.min(started.elapsed().as_secs_f64());
        std::hint::black_box(&dest);
    }
    (2 * 4 * COPY_FLOATS) as f64 / best / 1e9
}

fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Multiply-adds a thread runs per timing.
const ROUNDS: usize = 4 << 20;
/// Independent accumulators: enough to cover the FMA units' latency.
const CHAINS: usize = 10;

fn fma_gflop_per_s() -> f64 {
    let threads = rayon::current_num_threads();
    let mut best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let sink: f32 = (0..threads).into_par_iter().map(|_| fma_loop()).sum();
        best = best.min(started.elapsed().as_secs_f64());
        std::hint::black_box(sink);
    }
    let lanes = if has_fma() { 8 } else { 1 };
    (threads * ROUNDS * CHAINS * lanes * 2) as f64 / best / 1e9
}

fn fma_loop() -> f32 {
    #[cfg(target_arch = "x86_64")]
    if has_fma() {
        // SAFETY: the CPU was checked to have AVX2 and FMA.
        return unsafe { fma_loop_avx2() };
    }
    let mut acc = [1f32; CHAINS];
    let (a, b) = (std::hint::black_box(0.999_999f32), std::hint::black_box(1e-7f32));
    for _ in 0..ROUNDS {
        for x in acc.iter_mut() {
            *x = x.mul_add(a, b);
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_loop_avx2() -> f32 {
    use std::arch::x86_64::*;
    let a = _mm256_set1_ps(std::hint::black_box(0.999_999));
    let b = _mm256_set1_ps(std::hint::black_box(1e-7));
    let mut acc = [_mm256_set1_ps(1.0); CHAINS];
    for _ in 0..ROUNDS {
        for x in acc.iter_mut() {
            *x = _mm256_fmadd_ps(*x, a, b);
        }
    }
    let mut lanes = [0f32; 8];
    let mut total = _mm256_setzero_ps();
    for x in acc {
        total = _mm256_add_ps(total, x);
    }
    // SAFETY: `lanes` holds the 8 floats written.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), total) };
    lanes.iter().sum()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_peaks_are_positive_and_finite() {
        let p = super::measure();
        assert!(p.copy_gb_per_s.is_finite() && p.copy_gb_per_s > 0.1, "{p:?}");
        assert!(p.fma_gflop_per_s.is_finite() && p.fma_gflop_per_s > 0.1, "{p:?}");
    }
}
