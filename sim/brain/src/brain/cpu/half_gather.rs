//! A faster CPU engine that is not the reference (issue 42): the same 12 steps, rows, order of
//! every sum and nonlinearity as `cpu`, except that the senders' rates a row gathers are IEEE half
//! floats (2 bytes a position instead of 4: a batch of 32's rates of one sender are one cache
//! line, not two). Each step's new rates are worked out in f32 and rounded to half for the next
//! step's gathers; a neuron's own previous rate in the leak stays f32. On a machine whose think is
//! bound by moving the senders' rates this halves the bytes of the gathers; the rates differ from
//! the exact engine's (half has 11 significant bits), and on a brain that grows rounding
//! differences step by step (FlyWire) they differ as much as two honest engines do by the last
//! steps. No fly thinks on it: `flychess bench` measures its speed and how far its readings, and
//! the shipped fly's moves, part from the exact engine's.
//!
//! Conversions run on F16C where the CPU has it (with AVX2), else in software (`half`), the same
//! numbers either way (round to nearest even).

use rayon::prelude::*;

use super::{Layout, NeededRows, PREFETCH_AHEAD, PREFETCH_FROM_BATCH, Skip, Stage, StepView, activate_rows, block_rows, madd, start_row};
use crate::brain::{Brain, STEPS};
use crate::chess::Planes;

/// Whether this CPU converts halves in hardware (F16C; checked once).
fn has_f16c() -> bool {
    static F16C: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *F16C.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("f16c") && super::has_avx2()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    })
}

/// `run_reading_in` on the half-gather engine: the rates of `neurons` from step `first_read` on,
/// `visit(t, rates[k · batch + position])`, only the rows they depend on worked out.
pub fn run_reading_half(
    brain: &Brain,
    boards: &[Planes],
    neurons: &[u32],
    first_read: usize,
    layout: Layout,
    visit: impl FnMut(usize, &[f32]),
) {
    super::read_rows(brain, boards, super::Reading { neurons, first_read }, layout, true, visit)
}

/// The 12 steps in two f32 buffers (the new rates, the own previous rate) and two half buffers
/// (what the next step gathers).
pub(super) fn steps_half(
    brain: &Brain,
    x: &[f32],
    batch: usize,
    needed: &NeededRows,
    huge_pages: bool,
    mut visit: impl FnMut(usize, &[f32]),
) {
    let n = brain.neurons;
    let mut prev = crate::brain::buffer::RateBuffer::zeroed(n * batch, huge_pages);
    let mut next = crate::brain::buffer::RateBuffer::zeroed(n * batch, huge_pages);
    let (mut prev_half, mut next_half) = (vec![0u16; n * batch], vec![0u16; n * batch]);
    let blank = brain.blank_shortcut();
    let hardware = has_f16c();
    let rows = block_rows(batch);
    for t in 0..STEPS {
        let skip = Skip { blank: blank.step(t), needed: needed.rows_at(t) };
        let (r_prev, h_prev) = if t > 0 { (Some(&prev[..]), Some(&prev_half[..])) } else { (None, None) };
        let step = StepView { brain, t, stage: Stage::Full, r_prev, x_eye: x, batch, skip };
        next.par_chunks_mut(rows * batch).zip(next_half.par_chunks_mut(rows * batch)).enumerate().for_each(|(b, (out, out_half))| {
            let first = b * rows;
            if hardware {
                // SAFETY: the CPU was checked to have AVX2 and F16C.
                unsafe { block_f16c(&step, h_prev, first, out, out_half) }
            } else {
                block_half::<false>(&step, h_prev, first, out, out_half)
            }
        });
        visit(t, &next);
        std::mem::swap(&mut prev, &mut next);
        std::mem::swap(&mut prev_half, &mut next_half);
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,f16c"))]
unsafe fn block_f16c(step: &StepView, h_prev: Option<&[u16]>, first: usize, out: &mut [f32], out_half: &mut [u16]) {
    block_half::<true>(step, h_prev, first, out, out_half)
}

/// Rows `first..` of a block: every row's input from the senders' half rates (`h_prev`, the
/// previous step's rates rounded to half; the step's own `r_prev` feeds only the leak), the
/// nonlinearity, then the new rates rounded to half. `HW`: convert with F16C (only inside
/// `block_f16c`).
#[inline(always)]
fn block_half<const HW: bool>(step: &StepView, h_prev: Option<&[u16]>, first: usize, out: &mut [f32], out_half: &mut [u16]) {
    let StepView { brain, t, r_prev, x_eye: x, batch, skip, .. } = *step;
    for (k, acc) in out.chunks_exact_mut(batch).enumerate() {
        gather_half::<HW>(brain, first + k, h_prev, x, batch, skip, acc);
    }
    activate_rows(brain, t, first, r_prev, batch, out);
    narrow::<HW>(out, out_half);
}

/// u = x (+ W r_prev from the half rates) for row `j`, with the exact engine's skips.
#[inline(always)]
fn gather_half<const HW: bool>(brain: &Brain, j: usize, h_prev: Option<&[u16]>, x: &[f32], batch: usize, skip: Skip, acc: &mut [f32]) {
    if start_row::<false>(brain, j, x, batch, skip, acc) != super::RowWork::Walked {
        return;
    }
    let Some(h_prev) = h_prev else { return };
    macro_rules! fixed {
        ($($b:literal)*) => {
            match batch {
                $($b => row_half::<$b, HW>(brain, j, h_prev, acc.try_into().expect("batch-sized slice")),)*
                _ => row_half_any::<HW>(brain, j, h_prev, acc),
            }
        };
    }
    fixed!(8 16 24 32 40 48 64);
}

/// One row for a batch of exactly B positions (a multiple of 8), the accumulators in registers.
#[inline(always)]
fn row_half<const B: usize, const HW: bool>(brain: &Brain, j: usize, h_prev: &[u16], acc: &mut [f32; B]) {
    let mut a = *acc;
    let edges = brain.row(j);
    let start = edges.start;
    for (k, (&p, &w)) in brain.pre[edges.clone()].iter().zip(&brain.weight[edges]).enumerate() {
        if B >= PREFETCH_FROM_BATCH
            && let Some(&q) = brain.pre.get(start + k + PREFETCH_AHEAD)
        {
            prefetch_half(&h_prev[q as usize * B..(q as usize + 1) * B]);
        }
        let src: &[u16; B] = h_prev[p as usize * B..(p as usize + 1) * B].try_into().expect("B rates");
        let r = widen::<B, HW>(src);
        for i in 0..B {
            a[i] = madd(r[i], w, a[i]);
        }
    }
    *acc = a;
}

/// The same for any batch size (converted one value at a time).
#[inline(always)]
fn row_half_any<const HW: bool>(brain: &Brain, j: usize, h_prev: &[u16], acc: &mut [f32]) {
    let batch = acc.len();
    for (&p, &w) in brain.pre[brain.row(j)].iter().zip(&brain.weight[brain.row(j)]) {
        for (a, &h) in acc.iter_mut().zip(&h_prev[p as usize * batch..(p as usize + 1) * batch]) {
            *a = madd(half::f16::from_bits(h).to_f32(), w, *a);
        }
    }
}

#[inline(always)]
fn prefetch_half(data: &[u16]) {
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(32) {
        // SAFETY: a prefetch of a valid address; it reads nothing into the program.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr().cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// B half floats as f32 (B a multiple of 8).
#[inline(always)]
fn widen<const B: usize, const HW: bool>(src: &[u16; B]) -> [f32; B] {
    let mut out = [0f32; B];
    #[cfg(target_arch = "x86_64")]
    if HW {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm256_cvtph_ps, _mm256_storeu_ps};
        for (o, s) in out.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
            // SAFETY: HW is set only inside `block_f16c` (AVX2 and F16C checked); 8 halves are
            // read and 8 floats written, within the chunks.
            unsafe { _mm256_storeu_ps(o.as_mut_ptr(), _mm256_cvtph_ps(_mm_loadu_si128(s.as_ptr().cast::<__m128i>()))) }
        }
        return out;
    }
    for (o, &s) in out.iter_mut().zip(src) {
        *o = half::f16::from_bits(s).to_f32();
    }
    out
}

/// The new rates rounded to half (to nearest, ties to even).
#[inline(always)]
fn narrow<const HW: bool>(rates: &[f32], out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if HW {
        use std::arch::x86_64::{__m128i, _MM_FROUND_TO_NEAREST_INT, _mm_storeu_si128, _mm256_cvtps_ph, _mm256_loadu_ps};
        let whole = rates.len() / 8 * 8;
        for (r, o) in rates[..whole].chunks_exact(8).zip(out[..whole].chunks_exact_mut(8)) {
            // SAFETY: HW is set only inside `block_f16c` (AVX2 and F16C checked); 8 floats read,
            // 8 halves written, within the chunks.
            unsafe {
                _mm_storeu_si128(
                    o.as_mut_ptr().cast::<__m128i>(),
                    _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(r.as_ptr())),
                )
            }
        }
        for (o, &r) in out[whole..].iter_mut().zip(&rates[whole..]) {
            *o = half::f16::from_f32(r).to_bits();
        }
        return;
    }
    for (o, &r) in out.iter_mut().zip(rates) {
        *o = half::f16::from_f32(r).to_bits();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_and_software_conversions_agree() {
        if !has_f16c() {
            return;
        }
        let values: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.000_37).sin().abs() + if i % 97 == 0 { 1e-6 } else { 0.0 }).collect();
        let (mut hw, mut sw) = (vec![0u16; values.len()], vec![0u16; values.len()]);
        // SAFETY: F16C checked above.
        unsafe { narrow_f16c(&values, &mut hw) };
        narrow::<false>(&values, &mut sw);
        assert_eq!(hw, sw);
        for chunk in hw.chunks_exact(32) {
            let src: &[u16; 32] = chunk.try_into().unwrap();
            // SAFETY: F16C checked above.
            let a = unsafe { widen_f16c(src) };
            assert_eq!(a.map(f32::to_bits), widen::<32, false>(src).map(f32::to_bits));
        }
    }

    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,f16c"))]
    unsafe fn narrow_f16c(rates: &[f32], out: &mut [u16]) {
        narrow::<true>(rates, out)
    }

    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,f16c"))]
    unsafe fn widen_f16c(src: &[u16; 32]) -> [f32; 32] {
        widen::<32, true>(src)
    }
}
