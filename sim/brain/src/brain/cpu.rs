//! The CPU engine: the 12 steps for a whole batch with rayon, f32. Each step streams the CSR once
//! for the whole batch: a receiving neuron's row is walked once and every sender's rates of all
//! positions (contiguous in the batch-inner layout) are gathered with one weight. Rows are split
//! into blocks that threads take in order, and within a row the sum runs in edge order, so the
//! result is bit-for-bit the same for any batch size and thread count. Batches of 8 or more ask
//! for the senders' rates 24 connections ahead (a prefetch), the first step (all rates 0) skips the
//! connections, the rows the board cannot have reached yet take a blank board's input instead of
//! being walked (`BlankShortcut`), and every batch size up to 32 has its own register-resident
//! kernel. A think runs in the brain renumbered for locality (`local_order`) with its buffers on
//! huge pages (`buffer`), both only places in memory, on the fast kernels (`Kernels::Fast`: a
//! block's new rates worked out only for the rows walked, since a row the board cannot have reached
//! comes out as the blank think's rate and one no reader needs is never read; senders read as rows
//! of the batch; AVX-512 where there is one). Each is only how (`Layout`): `flychess bench`
//! measures each against the engine as it was before (the plain layout and kernels) in one run.
//!
//! Every operation is a plain IEEE multiply or add (never fused), in the same order as
//! `shaders/brain_step.wgsl`: WGSL leaves the precision of `fma` to the driver (Mesa lavapipe does
//! not fuse it), so unfused arithmetic is what both engines can agree on. Where the CPU has AVX2 (or
//! AVX-512) the blocks run in code compiled for it (wider vectors, the same results).

mod half_gather;

pub use half_gather::run_reading_half;

use rayon::prelude::*;

use super::{Brain, NO_EYE, Rates, STEPS};
use crate::chess::Planes;

/// Rows per rayon task: 256, and 2,048 for a single position, whose rows are so cheap that handing
/// out 640 tasks a step shows (measured on whole runs in one process: 1.07× at 2,048 rows and
/// 1.10× at 4,096 for one position; nothing at 4 or 32 positions).
fn block_rows(batch: usize) -> usize {
    if batch == 1 { MOST_BLOCK_ROWS } else { 256 }
}

/// The most rows a block holds.
const MOST_BLOCK_ROWS: usize = 2048;

/// What a block of rows computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// u = W r + x only (calibration measures u before it knows μ, σ).
    InputOnly,
    /// r_new = f(W r + x).
    Full,
}

/// Whether this CPU runs the blocks compiled for AVX2 (checked once).
pub fn has_avx2() -> bool {
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

/// Whether this CPU runs the fast kernels compiled for AVX-512 (checked once).
pub fn has_avx512() -> bool {
    static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX512.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f") && has_avx2()
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
    // max/min rather than clamp: the same value for every number (±0 give the same rate), a NaN
    // becomes 0, and both compile to vector instructions.
    #[allow(clippy::manual_clamp)]
    let x = (2.0 * z).max(0.0).min(18.0);
    // SAFETY: x is in [0, 18], so this is in [0.5, 26.5]: a plain truncation, in range.
    let n: i32 = unsafe { madd(x, LOG2E, 0.5).to_int_unchecked() };
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
#[inline(always)]
pub fn tanh_relu(z: f32) -> f32 {
    tanh_relu_with(z)
}

/// The new rate from the input `u`: z = (u − μ)·g + β with g = α/σ, then the leak.
#[inline(always)]
fn activate_with(leak: f32, beta: f32, mu: f32, gain: f32, u: f32, r_prev: f32) -> f32 {
    let z = madd(u - mu, gain, beta);
    madd(leak, tanh_relu_with(z), (1.0 - leak) * r_prev)
}

/// How many connections ahead a large batch asks for its senders' rates (`gather`).
const PREFETCH_AHEAD: usize = 24;
/// From this batch on a step's rates outgrow the core's own cache and asking for them ahead pays
/// (measured on whole thinks, ahead 24 against none, in one process: 1.09–1.52× at batches 8–64;
/// 0.93–1.12× at 1–6, where the rates mostly sit in the core's cache already).
const PREFETCH_FROM_BATCH: usize = 8;

/// Every connection of row `j` in edge order, as (sender, weight). From `PREFETCH_FROM_BATCH` on,
/// the `rates` (`batch` per neuron) of the sender `PREFETCH_AHEAD` connections on (in this row or
/// the next ones) are asked for meanwhile.
#[inline(always)]
fn for_each_connection(brain: &Brain, j: usize, rates: &[f32], batch: usize, mut f: impl FnMut(usize, f32)) {
    let edges = brain.row(j);
    let first = edges.start;
    let ahead = batch >= PREFETCH_FROM_BATCH;
    for (k, (&p, &w)) in brain.pre[edges.clone()].iter().zip(&brain.weight[edges]).enumerate() {
        if ahead && let Some(&q) = brain.pre.get(first + k + PREFETCH_AHEAD) {
            prefetch(&rates[q as usize * batch..(q as usize + 1) * batch]);
        }
        f(p as usize, w);
    }
}

/// Asks the memory system for the cache lines of `data` without waiting for them (a hint: it
/// changes no result).
#[inline(always)]
pub fn prefetch(data: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(16) {
        // SAFETY: a prefetch of a valid address; it reads nothing into the program.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr().cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// What every think shares with the think of a blank board (no eye input at all). After the first
/// step a neuron's rate can differ from the blank think's only if it is an eye cell; after step t
/// only if it could already differ at t − 1 or hears a neuron that could. Every other neuron's
/// input at step t is exactly the blank think's, bit for bit (the same senders with the same rates,
/// summed in the same order, and no eye input), so a think writes that input instead of walking its
/// row, and its new rate comes out as the blank think's too (the fast kernels write that rate
/// straight away; the first step's shortcut, the eye's cells alone, spares only nonlinearities).
/// The set grows from the eye to the whole brain within a few steps (default brain: 2 %, 11 %,
/// 74 %, 95 % of neurons after steps 1–4, then all), which spares about one step's worth of
/// connections in every think, for any batch, with the same results as walking every row. Worked
/// out on first use from the brain's homeostasis.
#[derive(Debug)]
pub struct BlankShortcut {
    /// Index t: the shortcut for step t (0-based), while some neurons cannot differ yet.
    steps: Vec<Option<StepShortcut>>,
}

#[derive(Debug)]
struct StepShortcut {
    /// Per neuron: may its input at this step differ from the blank board's?
    varies: Vec<bool>,
    /// Per neuron: its input at this step in the blank think.
    blank_input: Vec<f32>,
    /// Per neuron: its rate after this step in the blank think (what a row that cannot differ
    /// comes out as: the same input and the same own previous rate).
    blank_rate: Vec<f32>,
}

impl BlankShortcut {
    fn new(brain: &Brain) -> BlankShortcut {
        let n = brain.neurons;
        let no_eye = vec![0f32; brain.eye.len()];
        let mut blank = vec![0f32; n];
        let first_step = StepView { brain, t: 0, stage: Stage::Full, r_prev: None, x_eye: &no_eye, batch: 1, skip: Skip::default() };
        rows(&first_step, Kernels::Fast, &mut blank);
        let mut varies: Vec<bool> = brain.eye_slot.iter().map(|&s| s != NO_EYE).collect();
        // At the first step only the eye's cells hear the board; every other input is 0.
        let mut steps = vec![Some(StepShortcut { varies: varies.clone(), blank_input: vec![0f32; n], blank_rate: blank.clone() })];
        for t in 1..STEPS {
            let next: Vec<bool> =
                (0..n).into_par_iter().map(|j| varies[j] || brain.pre[brain.row(j)].iter().any(|&p| varies[p as usize])).collect();
            if next.iter().all(|&v| v) {
                break;
            }
            let mut blank_input = vec![0f32; n];
            let step =
                StepView { brain, t, stage: Stage::InputOnly, r_prev: Some(&blank), x_eye: &no_eye, batch: 1, skip: Skip::default() };
            rows(&step, Kernels::Fast, &mut blank_input);
            let mut rates = blank_input.clone();
            activate(brain, t, &blank, 1, &mut rates);
            steps.push(Some(StepShortcut { varies: next.clone(), blank_input, blank_rate: rates.clone() }));
            (blank, varies) = (rates, next);
        }
        BlankShortcut { steps }
    }

    fn step(&self, t: usize) -> Option<&StepShortcut> {
        self.steps.get(t).and_then(Option::as_ref)
    }

    pub(crate) fn bytes(&self) -> usize {
        self.steps.iter().flatten().map(|s| s.varies.len() + 4 * (s.blank_input.len() + s.blank_rate.len())).sum()
    }

    /// Per step, the share of neurons whose input is worked out (1 where every row is walked).
    pub fn walked_share(&self) -> [f64; STEPS] {
        std::array::from_fn(|t| match self.step(t) {
            Some(s) => s.varies.iter().filter(|&&v| v).count() as f64 / s.varies.len().max(1) as f64,
            None => 1.0,
        })
    }
}

impl Brain {
    /// The blank-board shortcut of this brain and homeostasis (worked out on the first call).
    pub fn blank_shortcut(&self) -> &BlankShortcut {
        self.blank.get_or_init(|| std::sync::Arc::new(BlankShortcut::new(self)))
    }
}

/// One row for a batch of exactly B positions: the accumulators stay in registers. The senders'
/// rates are read as rows of B (one bounds check per connection, no end to work out), and from
/// `PREFETCH_FROM_BATCH` on each connection asks for the rates of the sender `PREFETCH_AHEAD`
/// connections on (in this row or the next ones); the brain's last connections, with none that
/// far on, run in a loop of their own without asking. Written out here rather than through `for_each_connection`: a closure per
/// connection is not always inlined once the block is compiled for more than one instruction set.
#[inline(always)]
fn row<const B: usize>(brain: &Brain, j: usize, r_prev: &[f32], acc: &mut [f32; B]) {
    let (senders, _) = r_prev.as_chunks::<B>();
    let mut a = *acc;
    let edges = brain.row(j);
    let (pre, weight) = (&brain.pre[edges.clone()], &brain.weight[edges.clone()]);
    macro_rules! add {
        ($p:expr, $w:expr) => {{
            let (src, w) = (&senders[$p as usize], $w);
            for i in 0..B {
                a[i] = madd(src[i], w, a[i]);
            }
        }};
    }
    let mut walked = 0;
    if B >= PREFETCH_FROM_BATCH {
        let last = brain.pre.len();
        let ahead = &brain.pre[(edges.start + PREFETCH_AHEAD).min(last)..(edges.end + PREFETCH_AHEAD).min(last)];
        for ((&p, &w), &q) in pre.iter().zip(weight).zip(ahead) {
            prefetch_rates::<B>(r_prev, q);
            add!(p, w);
        }
        walked = ahead.len().min(pre.len());
    }
    for (&p, &w) in pre[walked..].iter().zip(&weight[walked..]) {
        add!(p, w);
    }
    *acc = a;
}

/// Asks for the cache lines of sender `q`'s B rates (a hint: any address may be asked for, none
/// is read).
#[inline(always)]
fn prefetch_rates<const B: usize>(r_prev: &[f32], q: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let start = r_prev.as_ptr().wrapping_add(q as usize * B);
        for line in 0..B.div_ceil(16) {
            // SAFETY: a prefetch never faults nor reads into the program, whatever the address.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(start.wrapping_add(16 * line).cast()) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (r_prev, q);
}

/// One row for a batch of exactly B positions, as the plain kernels walk it (the engine before
/// issue 42's kernels; the fast kernels too below `PREFETCH_FROM_BATCH`, where it measured
/// faster): the accumulators stay in registers. (The loop is written out here rather
/// than through `for_each_connection`: a closure per connection is not always inlined once the
/// block is compiled for more than one instruction set.)
#[inline(always)]
fn row_plain<const B: usize>(brain: &Brain, j: usize, r_prev: &[f32], acc: &mut [f32; B]) {
    let mut a = *acc;
    let edges = brain.row(j);
    let first = edges.start;
    let ahead = B >= PREFETCH_FROM_BATCH;
    for (k, (&p, &w)) in brain.pre[edges.clone()].iter().zip(&brain.weight[edges]).enumerate() {
        if ahead && let Some(&q) = brain.pre.get(first + k + PREFETCH_AHEAD) {
            prefetch(&r_prev[q as usize * B..(q as usize + 1) * B]);
        }
        let p = p as usize;
        let src: &[f32; B] = r_prev[p * B..p * B + B].try_into().expect("B rates");
        for i in 0..B {
            a[i] = madd(src[i], w, a[i]);
        }
    }
    *acc = a;
}

/// The same for any batch size (the accumulators live in memory).
#[inline(always)]
fn row_any(brain: &Brain, j: usize, r_prev: &[f32], acc: &mut [f32]) {
    let batch = acc.len();
    for_each_connection(brain, j, r_prev, batch, |p, w| {
        for (a, &r) in acc.iter_mut().zip(&r_prev[p * batch..(p + 1) * batch]) {
            *a = madd(r, w, *a);
        }
    });
}

/// What a step does with a row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RowWork {
    /// No reader needs it: left as the buffer holds it.
    Left,
    /// The board cannot have reached it: the blank think's input (and rate).
    Blank,
    /// Its connections are walked.
    Walked,
}

/// Row `j`'s input before its connections: nothing for a row no reader needs, the blank board's
/// input where the board cannot have reached it yet, else its eye input (0 without one).
#[inline(always)]
fn start_row<const FAST: bool>(brain: &Brain, j: usize, x_eye: &[f32], batch: usize, skip: Skip, acc: &mut [f32]) -> RowWork {
    if let Some(needed) = skip.needed
        && !needed[j]
    {
        return RowWork::Left;
    }
    if let Some(s) = skip.blank
        && !s.varies[j]
    {
        acc.fill(s.blank_input[j]);
        return RowWork::Blank;
    }
    let slot = brain.eye_slot[j];
    if FAST && let [one] = acc {
        // One position: a plain store (a fill or copy of one float is a call to the C library).
        *one = if slot == NO_EYE { 0.0 } else { x_eye[slot as usize] };
    } else if slot == NO_EYE {
        acc.fill(0.0);
    } else {
        acc.copy_from_slice(&x_eye[slot as usize * batch..(slot as usize + 1) * batch]);
    }
    RowWork::Walked
}

/// u = x (+ W r_prev when the previous rates are not all zero) for row `j`, on the fast kernels'
/// row or the plain ones'.
#[inline(always)]
fn gather<const FAST: bool>(
    brain: &Brain,
    j: usize,
    r_prev: Option<&[f32]>,
    x_eye: &[f32],
    batch: usize,
    skip: Skip,
    acc: &mut [f32],
) -> RowWork {
    let work = start_row::<FAST>(brain, j, x_eye, batch, skip, acc);
    if work != RowWork::Walked {
        return work;
    }
    // With all previous rates at +0 every product is ±0 and adding it leaves the sum's bits as they
    // are (the eye's input is never −0), so the first step skips the connections altogether.
    let Some(r_prev) = r_prev else { return work };
    macro_rules! fixed {
        ($($b:literal)*) => {
            match batch {
                $($b => {
                    let acc = acc.try_into().expect("batch-sized slice");
                    if FAST && $b >= PREFETCH_FROM_BATCH { row::<$b>(brain, j, r_prev, acc) } else { row_plain::<$b>(brain, j, r_prev, acc) }
                })*
                _ => row_any(brain, j, r_prev, acc),
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 40 48 64 128);
    work
}

/// Row `j`'s new rates of a batch from its inputs `u` (in place); `r_prev: None`: all 0.
#[inline(always)]
fn activate_row(j: usize, leak: f32, beta: f32, (mu, gain): (f32, f32), r_prev: Option<&[f32]>, u: &mut [f32]) {
    let batch = u.len();
    match r_prev {
        Some(r_prev) => {
            for (v, &rp) in u.iter_mut().zip(&r_prev[j * batch..(j + 1) * batch]) {
                *v = activate_with(leak, beta, mu, gain, *v, rp);
            }
        }
        None => {
            for v in u.iter_mut() {
                *v = activate_with(leak, beta, mu, gain, *v, 0.0);
            }
        }
    }
}

/// The new rates of rows `first..` of a block from their inputs `u` (in place). For one position
/// the rows are contiguous, so the nonlinearity runs over the block in vector lanes too.
#[inline(always)]
fn activate_rows(brain: &Brain, t: usize, first: usize, r_prev: Option<&[f32]>, batch: usize, u: &mut [f32]) {
    let (mu, gain) = brain.step_constants(t);
    let (leak, beta) = (brain.params.leak, brain.params.beta);
    let rows = u.len() / batch;
    let (mu, gain) = (&mu[first..first + rows], &gain[first..first + rows]);
    match r_prev {
        Some(r_prev) if batch == 1 => {
            for (((v, &rp), &m), &g) in u.iter_mut().zip(&r_prev[first..first + rows]).zip(mu).zip(gain) {
                *v = activate_with(leak, beta, m, g, *v, rp);
            }
        }
        _ => {
            for (k, row) in u.chunks_exact_mut(batch).enumerate() {
                activate_row(first + k, leak, beta, (mu[k], gain[k]), r_prev, row);
            }
        }
    }
}

/// Rows `first..` of one block (`out` holds them, batch-inner): every row's input first (on the
/// fast kernels' row or the plain ones'), then the nonlinearity over the whole block (rows no reader
/// needs included). The plain kernels' block; the fast kernels' for one position.
#[inline(always)]
fn block<const FAST: bool>(step: &StepView, first: usize, out: &mut [f32]) {
    let StepView { brain, t, stage, r_prev, x_eye, batch, skip } = *step;
    for (k, acc) in out.chunks_exact_mut(batch).enumerate() {
        gather::<FAST>(brain, first + k, r_prev, x_eye, batch, skip, acc);
    }
    if stage == Stage::Full {
        activate_rows(brain, t, first, r_prev, batch, out);
    }
}

/// The same block on the fast kernels: every row's input (each sender's rates read as one row of
/// the batch), then for a batch the new rates of only the rows walked (independent of each other,
/// so the core overlaps them); a row the board cannot have reached takes the blank think's rate
/// and one no reader needs is left. One position's rows are still activated over the whole block
/// (its rows are contiguous, so that runs in vector lanes).
#[inline(always)]
fn block_fast(step: &StepView, first: usize, out: &mut [f32]) {
    let StepView { brain, t, stage, r_prev, x_eye, batch, skip } = *step;
    if stage == Stage::InputOnly || batch == 1 {
        return block::<true>(step, first, out);
    }
    assert!(out.len() <= MOST_BLOCK_ROWS * batch, "a block holds at most {MOST_BLOCK_ROWS} rows");
    let mut work = [RowWork::Left; MOST_BLOCK_ROWS];
    for ((k, acc), work) in out.chunks_exact_mut(batch).enumerate().zip(&mut work) {
        *work = gather::<true>(brain, first + k, r_prev, x_eye, batch, skip, acc);
    }
    let (mu, gain) = brain.step_constants(t);
    let (leak, beta) = (brain.params.leak, brain.params.beta);
    for ((k, acc), work) in out.chunks_exact_mut(batch).enumerate().zip(work) {
        let j = first + k;
        match work {
            RowWork::Left => {}
            RowWork::Blank => acc.fill(skip.blank.expect("a blank row comes from the shortcut").blank_rate[j]),
            RowWork::Walked => activate_row(j, leak, beta, (mu[j], gain[j]), r_prev, acc),
        }
    }
}

/// `$block` compiled for an instruction set (wider vectors, the same results).
macro_rules! compiled_for {
    ($name:ident, $feature:literal, $block:path) => {
        #[cfg_attr(target_arch = "x86_64", target_feature(enable = $feature))]
        unsafe fn $name(step: &StepView, first: usize, out: &mut [f32]) {
            $block(step, first, out)
        }
    };
}

compiled_for!(block_avx2, "avx2", block::<false>);
compiled_for!(block_fast_avx2, "avx2", block_fast);
compiled_for!(block_fast_avx512, "avx512f", block_fast);

/// What a step may leave out; only where `r_prev` are the previous step's rates of a think from
/// rest with the brain as it is.
#[derive(Clone, Copy, Default)]
struct Skip<'a> {
    /// Rows the board cannot have reached take the blank board's input (`BlankShortcut`).
    blank: Option<&'a StepShortcut>,
    /// Only these rows are worked out; the others keep whatever the buffer held (`NeededRows`).
    needed: Option<&'a [bool]>,
}

/// What every block of rows of one step reads (the kernels' context): the brain, the step `t`
/// (0-based), what it computes, the previous rates (`None`: every previous rate is 0, the first
/// step), the eye input (`[cell · batch + position]`), the batch and what the step may leave out.
#[derive(Clone, Copy)]
struct StepView<'a> {
    brain: &'a Brain,
    t: usize,
    stage: Stage,
    r_prev: Option<&'a [f32]>,
    x_eye: &'a [f32],
    batch: usize,
    skip: Skip<'a>,
}

/// Every row of one step into `out` (batch-inner), block by block on the threads.
fn rows(step: &StepView, kernels: Kernels, out: &mut [f32]) {
    let (avx2, avx512) = (has_avx2(), has_avx512());
    let rows = block_rows(step.batch);
    out.par_chunks_mut(rows * step.batch).enumerate().for_each(|(b, chunk)| {
        let first = b * rows;
        match kernels {
            // SAFETY: the CPU was checked to have AVX-512 (and AVX2).
            Kernels::Fast if avx512 => unsafe { block_fast_avx512(step, first, chunk) },
            // SAFETY: the CPU was checked to have AVX2.
            Kernels::Fast if avx2 => unsafe { block_fast_avx2(step, first, chunk) },
            Kernels::Fast => block_fast(step, first, chunk),
            // SAFETY: the CPU was checked to have AVX2.
            Kernels::Plain if avx2 => unsafe { block_avx2(step, first, chunk) },
            Kernels::Plain => block::<false>(step, first, chunk),
        }
    });
}

/// u = W r + x for every neuron of a batch: `u[neuron · batch + b]`.
pub fn input_sum(brain: &Brain, r_prev: &[f32], x_eye: &[f32], batch: usize, u: &mut [f32]) {
    let step = StepView { brain, t: 0, stage: Stage::InputOnly, r_prev: Some(r_prev), x_eye, batch, skip: Skip::default() };
    rows(&step, Kernels::Fast, u);
}

/// r_new from u (in place: `u` becomes the new rates) at step `t`.
pub fn activate(brain: &Brain, t: usize, r_prev: &[f32], batch: usize, u: &mut [f32]) {
    let avx2 = has_avx2();
    let rows = block_rows(batch);
    u.par_chunks_mut(rows * batch).enumerate().for_each(|(b, chunk)| {
        if avx2 {
            // SAFETY: the CPU was checked to have AVX2.
            unsafe { activate_block_avx2(brain, t, b * rows, r_prev, batch, chunk) }
        } else {
            activate_rows(brain, t, b * rows, Some(r_prev), batch, chunk)
        }
    });
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn activate_block_avx2(brain: &Brain, t: usize, first: usize, r_prev: &[f32], batch: usize, chunk: &mut [f32]) {
    activate_rows(brain, t, first, Some(r_prev), batch, chunk)
}

/// One fused step: r_new = f(W r_prev + x).
pub fn step(brain: &Brain, t: usize, r_prev: &[f32], x_eye: &[f32], batch: usize, r_new: &mut [f32]) {
    let step = StepView { brain, t, stage: Stage::Full, r_prev: Some(r_prev), x_eye, batch, skip: Skip::default() };
    rows(&step, Kernels::Fast, r_new);
}

/// How the CPU engine lays a think out in memory and which code works out its blocks; never what
/// it computes (every layout gives the same rates, bit for bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Think in the brain renumbered for locality (`local_order`), rates handed back in the
    /// brain's own numbering.
    pub local_order: bool,
    /// Working buffers offered huge pages (`buffer`).
    pub huge_pages: bool,
    /// The blocks' code.
    pub kernels: Kernels,
}

/// Which code works out a block of rows (the same sums in the same order either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// As the engine was before issue 42: every row's input, then the nonlinearity over the whole
    /// block (rows no reader needs and rows the board cannot have reached included); AVX2 at most.
    Plain,
    /// Each sender's rates read as one row of the batch with the prefetch split off the row's end;
    /// new rates worked out only for the rows walked (the blank think's rate for a row the board
    /// cannot have reached, none for a row no reader needs); AVX-512 where the CPU has it.
    Fast,
}

impl Layout {
    /// What every think uses.
    pub const FAST: Layout = Layout { local_order: true, huge_pages: true, kernels: Kernels::Fast };
    /// The engine as it was before issue 42 (the brain's order, ordinary pages, the plain kernels):
    /// `flychess bench` measures it beside `FAST` in the same run.
    pub const PLAIN: Layout = Layout { local_order: false, huge_pages: false, kernels: Kernels::Plain };
}

/// The layout `think`, `run` and `run_reading` use: `FAST` unless `use_layout` set another (a
/// bench measuring the plain layout's fly moves beside the fast one's, in one process).
pub fn default_layout() -> Layout {
    match DEFAULT_LAYOUT.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Layout::FAST,
        bits => Layout {
            local_order: bits & 2 != 0,
            huge_pages: bits & 4 != 0,
            kernels: if bits & 8 != 0 { Kernels::Fast } else { Kernels::Plain },
        },
    }
}

/// Sets the layout every later think of this process uses (see `default_layout`).
pub fn use_layout(layout: Layout) {
    let bits = if layout == Layout::FAST {
        0
    } else {
        1 | (layout.local_order as u8) << 1 | (layout.huge_pages as u8) << 2 | ((layout.kernels == Kernels::Fast) as u8) << 3
    };
    DEFAULT_LAYOUT.store(bits, std::sync::atomic::Ordering::Relaxed);
}

/// 0: `FAST`; otherwise bit 0 set, bit 1 the local order, bit 2 huge pages, bit 3 the fast kernels.
static DEFAULT_LAYOUT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// All 12 steps of a batch of boards, every step kept (what the viewer replays).
pub fn think(brain: &Brain, boards: &[Planes]) -> Rates {
    think_in(brain, boards, default_layout())
}

/// `think` in a given layout.
pub fn think_in(brain: &Brain, boards: &[Planes], layout: Layout) -> Rates {
    if !layout.local_order {
        return walking(brain, boards, true, layout.kernels);
    }
    let (batch, n) = (boards.len(), brain.neurons);
    let local = brain.local_order();
    let mut data = vec![0f32; STEPS * n * batch];
    steps(&local.brain, &brain.eye_input(boards), batch, None, layout, |t, rates| {
        hand_back(rates, &local.place, batch, &mut data[t * n * batch..(t + 1) * n * batch])
    });
    Rates { batch, neurons: n, data }
}

/// `think`, with or without the blank-board shortcut, in the brain's own order on the plain
/// kernels (the same rates either way; without the shortcut every row is walked at every step:
/// the reference the tests and `flychess bench` compare against).
pub fn think_walking(brain: &Brain, boards: &[Planes], shortcut: bool) -> Rates {
    walking(brain, boards, shortcut, Kernels::Plain)
}

/// `think_walking` on given kernels.
fn walking(brain: &Brain, boards: &[Planes], shortcut: bool, kernels: Kernels) -> Rates {
    walking_from(brain, &brain.eye_input(boards), boards.len(), shortcut, kernels)
}

/// `think` from an eye input already worked out (`Brain::eye_input`, `[cell · batch +
/// position]`), which the caller may have changed (two glances: more drive into one square's
/// patch of the eye), every step kept, in the brain's own order.
pub fn think_from_input(brain: &Brain, x: &[f32], batch: usize) -> Rates {
    walking_from(brain, x, batch, true, Kernels::Plain)
}

fn walking_from(brain: &Brain, x: &[f32], batch: usize, shortcut: bool, kernels: Kernels) -> Rates {
    let n = brain.neurons;
    let blank = shortcut.then(|| brain.blank_shortcut());
    let mut data = vec![0f32; STEPS * n * batch];
    for t in 0..STEPS {
        let (done, rest) = data.split_at_mut(t * n * batch);
        let prev = (t > 0).then(|| &done[(t - 1) * n * batch..]);
        let skip = Skip { blank: blank.and_then(|b| b.step(t)), needed: None };
        let step = StepView { brain, t, stage: Stage::Full, r_prev: prev, x_eye: x, batch, skip };
        rows(&step, kernels, &mut rest[..n * batch]);
    }
    Rates { batch, neurons: n, data }
}

/// The 12 steps with only two buffers; `visit(t, rates)` sees every step, every neuron in the
/// brain's numbering (for readers of whole regions, without holding all 12 steps of a batch).
pub fn run(brain: &Brain, boards: &[Planes], visit: impl FnMut(usize, &[f32])) {
    run_in(brain, boards, default_layout(), visit)
}

/// `run` in a given layout.
pub fn run_in(brain: &Brain, boards: &[Planes], layout: Layout, mut visit: impl FnMut(usize, &[f32])) {
    let x = brain.eye_input(boards);
    let batch = boards.len();
    if !layout.local_order {
        return steps(brain, &x, batch, None, layout, visit);
    }
    let local = brain.local_order();
    let mut view = super::buffer::RateBuffer::zeroed(brain.neurons * batch, layout.huge_pages);
    steps(&local.brain, &x, batch, None, layout, |t, rates| {
        hand_back(rates, &local.place, batch, &mut view);
        visit(t, &view)
    });
}

/// The rates of only `neurons`, from step `first_read` (0-based) on: `visit(t, rates)` gets
/// `rates[k · batch + position]` for the k-th of `neurons`, the same floats bit for bit as `run`
/// gives, and each step works out only the rows those rates depend on (`NeededRows`).
pub fn run_reading(brain: &Brain, boards: &[Planes], neurons: &[u32], first_read: usize, visit: impl FnMut(usize, &[f32])) {
    run_reading_in(brain, boards, neurons, first_read, default_layout(), visit)
}

/// `run_reading` in a given layout.
pub fn run_reading_in(
    brain: &Brain,
    boards: &[Planes],
    neurons: &[u32],
    first_read: usize,
    layout: Layout,
    visit: impl FnMut(usize, &[f32]),
) {
    read_rows(brain, boards, Reading { neurons, first_read }, layout, false, visit)
}

/// What a reader asks for: the rates of `neurons` from step `first_read` (0-based) on.
#[derive(Clone, Copy)]
struct Reading<'a> {
    neurons: &'a [u32],
    first_read: usize,
}

/// `run_reading_in` on the exact engine or (`half`) on the half-gather engine: the same rows
/// worked out, the same readings handed over.
fn read_rows(brain: &Brain, boards: &[Planes], reading: Reading, layout: Layout, half: bool, visit: impl FnMut(usize, &[f32])) {
    read_rows_from(brain, &brain.eye_input(boards), boards.len(), reading, layout, half, visit)
}

/// `run_reading` from an eye input already worked out (`Brain::eye_input`, `[cell · batch +
/// position]`), which the caller may have changed: two glances put more drive into the patch of
/// the square they attend to (`flychess_arena::glances`).
pub fn run_reading_from_input(
    brain: &Brain,
    x: &[f32],
    batch: usize,
    neurons: &[u32],
    first_read: usize,
    visit: impl FnMut(usize, &[f32]),
) {
    read_rows_from(brain, x, batch, Reading { neurons, first_read }, default_layout(), false, visit)
}

/// `read_rows` from an eye input already worked out (`[cell · batch + position]`).
fn read_rows_from(
    brain: &Brain,
    x: &[f32],
    batch: usize,
    reading: Reading,
    layout: Layout,
    half: bool,
    mut visit: impl FnMut(usize, &[f32]),
) {
    let Reading { neurons, first_read } = reading;
    let local = layout.local_order.then(|| brain.local_order());
    let (inner, rows_read) = match &local {
        Some(l) => (&l.brain, l.places_of(neurons)),
        None => (brain, neurons.to_vec()),
    };
    let needed = inner.needed_rows(&rows_read, first_read);
    let mut read = vec![0f32; neurons.len() * batch];
    let mut each = |t: usize, rates: &[f32]| {
        if t >= first_read {
            for (out, &j) in read.chunks_exact_mut(batch).zip(&rows_read) {
                out.copy_from_slice(&rates[j as usize * batch..(j as usize + 1) * batch]);
            }
            visit(t, &read)
        }
    };
    if half {
        half_gather::steps_half(inner, x, batch, &needed, layout.huge_pages, &mut each)
    } else {
        steps(inner, x, batch, Some(&needed), layout, &mut each)
    }
}

/// The 12 steps of a brain (renumbered or not) in two buffers, `visit(t, rates)` after each
/// (the layout's pages and kernels; its order is the brain's).
fn steps(brain: &Brain, x: &[f32], batch: usize, needed: Option<&NeededRows>, layout: Layout, mut visit: impl FnMut(usize, &[f32])) {
    let n = brain.neurons;
    let mut prev = super::buffer::RateBuffer::zeroed(n * batch, layout.huge_pages);
    let mut next = super::buffer::RateBuffer::zeroed(n * batch, layout.huge_pages);
    let blank = brain.blank_shortcut();
    for t in 0..STEPS {
        let skip = Skip { blank: blank.step(t), needed: needed.and_then(|m| m.steps[t].as_deref()) };
        let step = StepView { brain, t, stage: Stage::Full, r_prev: (t > 0).then_some(&prev[..]), x_eye: x, batch, skip };
        rows(&step, layout.kernels, &mut next);
        visit(t, &next);
        std::mem::swap(&mut prev, &mut next);
    }
}

/// Rates of a renumbered brain back into the brain's numbering: neuron j's batch from row
/// `place[j]`.
fn hand_back(renumbered: &[f32], place: &[u32], batch: usize, out: &mut [f32]) {
    const NEURONS_A_TASK: usize = 4096;
    out.par_chunks_mut(NEURONS_A_TASK * batch).enumerate().for_each(|(c, chunk)| {
        for (k, dest) in chunk.chunks_exact_mut(batch).enumerate() {
            let p = place[c * NEURONS_A_TASK + k] as usize;
            dest.copy_from_slice(&renumbered[p * batch..(p + 1) * batch]);
        }
    });
}

/// The work of one think, step by step: (rows worked out, connections walked). A row is worked
/// out unless the blank-board shortcut or a reader's `NeededRows` spares it; the first step walks
/// no connections (every rate is 0). The same in every layout.
pub fn work(brain: &Brain, reading: Option<(&[u32], usize)>) -> [(usize, usize); STEPS] {
    let blank = brain.blank_shortcut();
    let needed = reading.map(|(neurons, first)| brain.needed_rows(neurons, first));
    std::array::from_fn(|t| {
        let mask = needed.as_ref().and_then(|m| m.steps[t].as_deref());
        let varies = blank.step(t).map(|s| &s.varies);
        let walked = |j: &usize| mask.is_none_or(|m| m[*j]) && varies.is_none_or(|v| v[*j]);
        let rows: Vec<usize> = (0..brain.neurons).filter(walked).collect();
        let connections = if t == 0 { 0 } else { rows.iter().map(|&j| brain.row(j).len()).sum() };
        (rows.len(), connections)
    })
}

/// The rows a reader of some neurons from some step on needs at each step: at the last step the
/// neurons themselves; a step earlier those rows again, every neuron they hear (their input) and,
/// within the read steps, the neurons. Read backwards from the descending neurons this drops most
/// of the brain in the last two steps (default brain: see `walked_share`), exactly: the rates of
/// the rows that are worked out are the ones every other engine path gives.
#[derive(Debug)]
pub struct NeededRows {
    /// Per step: which rows are worked out (None: all of them).
    steps: Vec<Option<Vec<bool>>>,
}

impl NeededRows {
    /// For a wiring given as its CSR (`row_start`, `pre`) over `n` neurons.
    fn new(n: usize, row_start: &[u32], pre: &[u32], neurons: &[u32], first_read: usize) -> NeededRows {
        let mut steps = vec![None; STEPS];
        let mut needed = vec![false; n];
        for t in (0..STEPS).rev() {
            if t + 1 < STEPS {
                // Row j at step t + 1 reads its own and its senders' rates of step t.
                let mut earlier = needed.clone();
                for j in (0..n).filter(|&j| needed[j]) {
                    for &p in &pre[row_start[j] as usize..row_start[j + 1] as usize] {
                        earlier[p as usize] = true;
                    }
                }
                needed = earlier;
            }
            if t >= first_read {
                for &j in neurons {
                    needed[j as usize] = true;
                }
            }
            if needed.iter().all(|&x| x) {
                break;
            }
            steps[t] = Some(needed.clone());
        }
        NeededRows { steps }
    }

    /// The rows worked out at step `t` (None: all of them).
    pub fn rows_at(&self, t: usize) -> Option<&[bool]> {
        self.steps.get(t).and_then(|m| m.as_deref())
    }

    /// Per step, the share of rows worked out.
    pub fn walked_share(&self) -> [f64; STEPS] {
        std::array::from_fn(|t| match &self.steps[t] {
            Some(m) => m.iter().filter(|&&x| x).count() as f64 / m.len().max(1) as f64,
            None => 1.0,
        })
    }
}

impl Brain {
    /// The rows a reader of `neurons` from step `first_read` on needs (worked out once per set of
    /// neurons and first step, then kept with the brain).
    pub fn needed_rows(&self, neurons: &[u32], first_read: usize) -> std::sync::Arc<NeededRows> {
        self.needed.get(self.neurons, &self.row_start, &self.pre, neurons, first_read)
    }
}

/// Only what working out `NeededRows` takes from a brain: who hears whom (its CSR without the
/// weights), and the `NeededRows` worked out so far. What an engine that thinks elsewhere (the
/// GPU's) keeps on the CPU side, instead of a whole copy of the brain.
#[derive(Debug)]
pub struct Hearing {
    neurons: usize,
    row_start: Vec<u32>,
    pre: Vec<u32>,
    needed: NeededCache,
}

impl Hearing {
    pub fn of(brain: &Brain) -> Hearing {
        Hearing { neurons: brain.neurons, row_start: brain.row_start.clone(), pre: brain.pre.clone(), needed: NeededCache::default() }
    }

    /// As `Brain::needed_rows`.
    pub fn needed_rows(&self, neurons: &[u32], first_read: usize) -> std::sync::Arc<NeededRows> {
        self.needed.get(self.neurons, &self.row_start, &self.pre, neurons, first_read)
    }
}

/// The brain's kept `NeededRows`, with the neurons and first step they were asked for (a clone
/// of the brain starts without any).
#[derive(Debug, Default)]
pub(crate) struct NeededCache(std::sync::Mutex<Vec<NeededEntry>>);

/// A kept `NeededRows` with the neurons and first read step it was worked out for.
type NeededEntry = (Vec<u32>, usize, std::sync::Arc<NeededRows>);

impl NeededCache {
    /// The kept `NeededRows` of these neurons and first step, worked out now if not yet.
    fn get(&self, n: usize, row_start: &[u32], pre: &[u32], neurons: &[u32], first_read: usize) -> std::sync::Arc<NeededRows> {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, rows)) = kept.iter().find(|(m, f, _)| m == neurons && *f == first_read) {
            return rows.clone();
        }
        let rows = std::sync::Arc::new(NeededRows::new(n, row_start, pre, neurons, first_read));
        kept.push((neurons.to_vec(), first_read, rows.clone()));
        rows
    }
}

impl Clone for NeededCache {
    fn clone(&self) -> Self {
        NeededCache::default()
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
        // Out-of-range inputs stay in range (the truncation inside is only safe for x in [0, 18]).
        assert!((tanh_relu(f32::INFINITY) - 1.0).abs() < 1e-7);
        assert_eq!(tanh_relu(f32::NEG_INFINITY), 0.0);
        assert_eq!(tanh_relu(f32::NAN), 0.0);
        assert_eq!(tanh_relu(-0.0).to_bits(), tanh_relu(0.0).to_bits(), "±0 give the same rate");
    }
}
