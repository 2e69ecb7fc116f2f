//! The readout fit as matrix products (issue 55): the same model, loss and Adam as `burn_fit`,
//! written as two GEMMs a batch on the CPU with the `gemm` crate (its blocked, vectorised kernels,
//! in tasks on every core through rayon), instead of burn's autodiff over gathered tensors.
//!
//! A batch of n positions with d inputs each is cut into blocks of 1,024 positions, each block a
//! rayon task on one thread that makes both products while its features (5 MB) are still in the
//! cache: the heads `out = X · Wᵀ + b` ([rows × 134]); each position's scores, softmax over its
//! legal moves, cross-entropy and value error, and the loss's derivative by each head output
//! (`delta`, in place of the outputs: the softmax minus the target share, summed into the from,
//! to and promotion outputs each move uses; `2 (v − t)(1 − v²)` for the value); then the block's
//! part of the weights' gradient, `deltaᵀ · X`, into a buffer of its own. The parts are summed in
//! the blocks' order and divided by n; the biases' gradient is the column means of `delta`. Every
//! sum is made in one order whatever the threads do, so the same batch gives the same bits on
//! any number of threads, which a resumed fit needs. (Before: one product for the heads and one
//! for the gradient across the whole batch, reading the batch's features twice from memory.)
//! Adam's update is burn's to the letter (β₁ 0.9, β₂ 0.999, ε 1e-8, ε scaled by √(1 − β₂ᵗ) as
//! burn does), so a fit lands where burn's lands. `scoring::gradient` (written out position by
//! position) is the reference the gradient here is tested against, and a whole fit against burn's
//! fit on the same rows.
//!
//! Adam's state is kept as bytes for a checkpoint (`adam_state`, `GEMMADAM` first): its step
//! count and both moments, so a resumed fit goes on exactly where it stopped.

use rayon::prelude::*;

use crate::error::{Error, Result};
use flychess_fly::readout::{FROM, OUTPUTS, Readout, TO};
use flychess_fly::scoring::Target;

const BETA_1: f32 = 0.9;
const BETA_2: f32 = 0.999;
const EPSILON: f32 = 1e-8;
/// Positions a block takes: a task on one thread makes both products of its block (1,024
/// positions of ~1,250 inputs: 5 MB, kept in the cache between the two).
const ROWS_PER_BLOCK: usize = 1024;
/// The first bytes of Adam's state as this fit saves it.
const STATE_MAGIC: &[u8; 8] = b"GEMMADAM";

/// A fit in progress: the readout's weights and biases, and Adam's moments for each (weights
/// first, then biases, in the `Readout` layout).
pub struct GemmFit {
    inputs: usize,
    weights: Vec<f32>,
    bias: Vec<f32>,
    moment_1: Vec<f32>,
    moment_2: Vec<f32>,
    /// Adam's steps so far (0: fresh).
    time: u64,
    /// The heads' outputs then their deltas, and the weights' gradient: kept from batch to batch
    /// (a fresh 4 MB and 0.7 MB a batch cost page faults on every step).
    scratch: Vec<f32>,
    grad_w: Vec<f32>,
    /// Each block's part of the weights' gradient, before they are summed.
    partials: Vec<f32>,
}

/// A matrix read in place: its elements in `data`, element (i, j) at `i · row_stride + j ·
/// col_stride`.
#[derive(Clone, Copy)]
struct Matrix<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// `rows × cols` elements stored row after row.
    fn row_major(data: &'a [f32], rows: usize, cols: usize) -> Matrix<'a> {
        Matrix { data, rows, cols, row_stride: cols, col_stride: 1 }
    }

    /// The same elements read as the transpose (no copy).
    fn transposed(self) -> Matrix<'a> {
        Matrix { rows: self.cols, cols: self.rows, row_stride: self.col_stride, col_stride: self.row_stride, ..self }
    }

    /// Whether `data` holds every element (an empty matrix holds none).
    fn fits(&self) -> bool {
        self.rows == 0 || self.cols == 0 || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride < self.data.len()
    }
}

/// `dst = scale · lhs · rhs`, `dst` an `lhs.rows × rhs.cols` matrix stored row after row.
fn product(dst: &mut [f32], lhs: Matrix, rhs: Matrix, scale: f32) {
    assert_eq!(lhs.cols, rhs.rows, "the operands' inner sizes agree");
    let (m, n, k) = (lhs.rows, rhs.cols, lhs.cols);
    if m == 0 || n == 0 {
        return;
    }
    assert!(k == 0 || (lhs.fits() && rhs.fits()), "the operands hold the product");
    assert!(m * n <= dst.len(), "the destination holds the product");
    if k == 0 {
        for row in 0..m {
            dst[row * n..row * n + n].fill(0.0);
        }
        return;
    }
    // One thread per call: the callers split the work into pieces whose every output element one
    // sequential product computes, so the sums run in the same order whatever the threads do (a
    // killed fit resumes to the same bits).
    // SAFETY: every element the product reads or writes lies inside the slices (asserted above),
    // the destination does not overlap the operands (a `&mut` and two `&`), and gemm with
    // read_dst = false only writes dst = scale · lhs · rhs.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            lhs.data.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.data.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            0.0,
            scale,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

impl GemmFit {
    /// A fit starting from `start`, with a fresh Adam.
    pub fn new(start: &Readout) -> GemmFit {
        let n = start.weights.len() + start.bias.len();
        GemmFit {
            inputs: start.inputs,
            weights: start.weights.clone(),
            bias: start.bias.clone(),
            moment_1: vec![0.0; n],
            moment_2: vec![0.0; n],
            time: 0,
            scratch: Vec::new(),
            grad_w: vec![0.0; start.weights.len()],
            partials: Vec::new(),
        }
    }

    /// A fit starting from `start` with Adam's state as `adam_state` saved it (None: fresh). A
    /// state of another shape, or of the older burn fit, is an error, never a panic.
    pub fn resume(start: &Readout, state: Option<&[u8]>) -> Result<GemmFit> {
        let mut fit = GemmFit::new(start);
        let Some(bytes) = state else { return Ok(fit) };
        let n = fit.moment_1.len();
        if bytes.len() < 16 || &bytes[..8] != STATE_MAGIC {
            return Err(Error::Invalid(
                "Adam's saved state is not this fit's (a checkpoint of the older burn fit resumes with --fit-kernel burn)".into(),
            ));
        }
        if bytes.len() != 16 + 8 * n {
            return Err(Error::Invalid(format!(
                "Adam's saved state holds {} bytes, not the {} of this readout's moments",
                bytes.len(),
                16 + 8 * n
            )));
        }
        fit.time = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        let values = flychess_brain::container::f32_values(&bytes[16..]);
        fit.moment_1.copy_from_slice(&values[..n]);
        fit.moment_2.copy_from_slice(&values[n..]);
        Ok(fit)
    }

    /// Adam's state (its step count and both moments) as bytes for a checkpoint.
    pub fn adam_state(&self) -> Vec<u8> {
        let mut out = STATE_MAGIC.to_vec();
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend(flychess_brain::container::f32_bytes(self.moment_1.iter().chain(&self.moment_2).copied()));
        out
    }

    /// Goes back to `r` with a fresh Adam (after a pass that did not improve).
    pub fn restart_from(&mut self, r: &Readout) {
        *self = GemmFit::new(r);
    }

    /// The readout as it stands (`like` gives what a readout carries beside its weights).
    pub fn readout(&self, like: &Readout) -> Readout {
        Readout { weights: self.weights.clone(), bias: self.bias.clone(), ..like.clone() }
    }

    /// Mean loss of the batch and its gradient (weights, biases) at the current weights.
    pub fn gradient(&self, x: &[f32], targets: &[&Target]) -> Result<(f64, Vec<f32>, Vec<f32>)> {
        let (mut scratch, mut grad_w, mut partials) = (Vec::new(), vec![0f32; self.weights.len()], Vec::new());
        let (loss, grad_b) = self.gradient_into(x, targets, &mut scratch, &mut grad_w, &mut partials)?;
        Ok((loss, grad_w, grad_b))
    }

    /// `gradient` into buffers kept by the caller: returns the loss and the biases' gradient,
    /// the weights' in `grad_w`.
    fn gradient_into(
        &self,
        x: &[f32],
        targets: &[&Target],
        out: &mut Vec<f32>,
        grad_w: &mut [f32],
        partials: &mut Vec<f32>,
    ) -> Result<(f64, Vec<f32>)> {
        let (n, d) = (targets.len(), self.inputs);
        if x.len() != n * d {
            return Err(Error::Invalid(format!("{} features for {n} positions of {d} inputs", x.len())));
        }
        // Block by block, each block a task on one thread, so that its features are read from
        // memory once and stay in the cache for both products: the heads `out = X · Wᵀ` (W is
        // [134 × d], so Wᵀ has row stride 1 and column stride d), each position's loss and
        // `delta` in place of its outputs, then the block's own part of the weights' gradient,
        // `deltaᵀ · X`, into its own buffer.
        let blocks = n.div_ceil(ROWS_PER_BLOCK);
        let part = (OUTPUTS * d).max(1);
        out.resize(n * OUTPUTS, 0.0);
        partials.resize(blocks * part, 0.0);
        let losses: Vec<Vec<f64>> = out
            .par_chunks_mut(ROWS_PER_BLOCK * OUTPUTS)
            .zip(partials.par_chunks_mut(part))
            .enumerate()
            .map(|(b, (o, g))| {
                let (first, rows) = (b * ROWS_PER_BLOCK, o.len() / OUTPUTS);
                let xs = &x[first * d..(first + rows) * d];
                if d > 0 {
                    product(o, Matrix::row_major(xs, rows, d), Matrix::row_major(&self.weights, OUTPUTS, d).transposed(), 1.0);
                } else {
                    o.fill(0.0);
                }
                let losses = o
                    .chunks_mut(OUTPUTS)
                    .zip(&targets[first..first + rows])
                    .map(|(row, t)| {
                        for (o, b) in row.iter_mut().zip(&self.bias) {
                            *o += b;
                        }
                        position_delta(row, t)
                    })
                    .collect();
                if d > 0 {
                    product(g, Matrix::row_major(o, rows, OUTPUTS).transposed(), Matrix::row_major(xs, rows, d), 1.0);
                }
                losses
            })
            .collect();
        // The losses summed in the positions' order, and the blocks' gradients in the blocks'
        // order (rayon's own sums split as the threads steal work): the same bits on any number
        // of threads.
        let loss: f64 = losses.iter().flatten().sum();
        let delta = &out[..];
        let scale = 1.0 / n.max(1) as f32;
        if d > 0 && n > 0 {
            const CHUNK: usize = 1 << 12;
            let partials = &partials[..];
            grad_w.par_chunks_mut(CHUNK).enumerate().for_each(|(c, g)| {
                let at = c * CHUNK;
                g.copy_from_slice(&partials[at..at + g.len()]);
                for b in 1..blocks {
                    for (w, p) in g.iter_mut().zip(&partials[b * part + at..]) {
                        *w += p;
                    }
                }
                g.iter_mut().for_each(|w| *w *= scale);
            });
        } else {
            grad_w.fill(0.0);
        }
        let mut grad_b = vec![0f32; OUTPUTS];
        for row in delta.chunks_exact(OUTPUTS) {
            for (g, r) in grad_b.iter_mut().zip(row) {
                *g += r;
            }
        }
        grad_b.iter_mut().for_each(|g| *g *= scale);
        Ok((loss / n.max(1) as f64, grad_b))
    }

    /// One Adam step on a batch; returns the batch's mean loss before the step.
    pub fn step(&mut self, x: &[f32], targets: &[&Target], learning_rate: f32) -> Result<f64> {
        let (mut scratch, mut grad_w, mut partials) =
            (std::mem::take(&mut self.scratch), std::mem::take(&mut self.grad_w), std::mem::take(&mut self.partials));
        let answer = self.gradient_into(x, targets, &mut scratch, &mut grad_w, &mut partials);
        self.scratch = scratch;
        self.partials = partials;
        let (loss, grad_b) = match answer {
            Ok(a) => a,
            Err(e) => {
                self.grad_w = grad_w;
                return Err(e);
            }
        };
        self.time += 1;
        let t = self.time.min(i32::MAX as u64) as i32;
        let correction_2 = (1.0 - BETA_2.powi(t)).sqrt();
        let factor = correction_2 / (1.0 - BETA_1.powi(t));
        let epsilon = EPSILON * correction_2;
        let nw = self.weights.len();
        let (m_w, m_b) = self.moment_1.split_at_mut(nw);
        let (v_w, v_b) = self.moment_2.split_at_mut(nw);
        let update = |p: &mut f32, g: f32, m: &mut f32, v: &mut f32| {
            *m = BETA_1 * *m + (1.0 - BETA_1) * g;
            *v = BETA_2 * *v + (1.0 - BETA_2) * g * g;
            *p -= learning_rate * (*m * factor) / (v.sqrt() + epsilon);
        };
        const CHUNK: usize = 1 << 14;
        self.weights
            .par_chunks_mut(CHUNK)
            .zip(grad_w.par_chunks(CHUNK))
            .zip(m_w.par_chunks_mut(CHUNK).zip(v_w.par_chunks_mut(CHUNK)))
            .for_each(|((p, g), (m, v))| {
                for i in 0..p.len() {
                    update(&mut p[i], g[i], &mut m[i], &mut v[i]);
                }
            });
        for i in 0..self.bias.len() {
            update(&mut self.bias[i], grad_b[i], &mut m_b[i], &mut v_b[i]);
        }
        self.grad_w = grad_w;
        Ok(loss)
    }

    /// Floating-point operations of one step on `n` positions (the two products).
    pub fn flops_per_step(&self, n: usize) -> f64 {
        4.0 * n as f64 * self.inputs as f64 * OUTPUTS as f64
    }
}

/// One position: `row` holds its head outputs (biases added) and is overwritten with d loss /
/// d output; returns the position's loss (cross-entropy over its legal moves against the target
/// shares, plus the squared value error), as `scoring::gradient` and burn's loss count it.
fn position_delta(row: &mut [f32], t: &Target) -> f64 {
    // A position has at most 218 legal moves: the scores stay on the stack.
    let mut exp = [0f32; 256];
    let exp = &mut exp[..t.legal.len().min(256)];
    let mut top = f32::NEG_INFINITY;
    for (e, &(f, to, p)) in exp.iter_mut().zip(&t.legal) {
        *e = row[f as usize] + row[FROM + to as usize] + row[FROM + TO + p as usize];
        top = top.max(*e);
    }
    for e in exp.iter_mut() {
        *e = libm::expf(*e - top);
    }
    let total: f32 = exp.iter().sum();
    let value = libm::tanhf(row[OUTPUTS - 1]);
    let mut loss = 0f64;
    for (k, s) in t.share.iter().enumerate() {
        if *s > 0.0 {
            loss -= *s as f64 * libm::log((exp[k] / total).max(1e-30) as f64);
        }
    }
    loss += ((value - t.value) as f64).powi(2);
    row.fill(0.0);
    for (k, &(f, to, p)) in t.legal.iter().enumerate() {
        let g = exp[k] / total - t.share[k];
        row[f as usize] += g;
        row[FROM + to as usize] += g;
        row[FROM + TO + p as usize] += g;
    }
    row[OUTPUTS - 1] = 2.0 * (value - t.value) * (1.0 - value * value);
    loss
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few positions with random features and real targets (the shipped rows).
    fn rows(n: usize, d: usize) -> (Vec<f32>, Vec<Target>) {
        let data = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
        let targets: Vec<Target> = data.train().iter().take(n).map(|r| Target::of(r).unwrap()).collect();
        let mut s = 0x1234_5678_9ABC_DEF1u64;
        let x = (0..n * d)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 1000) as f32 / 1000.0
            })
            .collect();
        (x, targets)
    }

    #[test]
    fn the_gradient_is_the_hand_written_one() {
        let (d, n) = (37, 61);
        let (x, targets) = rows(n, d);
        let mut start = Readout::newborn(d, vec![12], 3);
        // Weights away from zero, so every term of the gradient counts.
        for (i, w) in start.weights.iter_mut().enumerate() {
            *w = ((i * 7919) % 113) as f32 / 113.0 - 0.5;
        }
        let fit = GemmFit::new(&start);
        let refs: Vec<&Target> = targets.iter().collect();
        let (loss, gw, gb) = fit.gradient(&x, &refs).unwrap();
        let (want_loss, want_w, want_b) = flychess_fly::scoring::gradient(&start, &x, &targets);
        assert!((loss - want_loss).abs() < 1e-5 * want_loss.abs().max(1.0), "{loss} vs {want_loss}");
        let worst = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(p, q)| (p - q).abs()).fold(0f32, f32::max);
        assert!(worst(&gw, &want_w) < 1e-5, "weights' gradient off by {}", worst(&gw, &want_w));
        assert!(worst(&gb, &want_b) < 1e-5, "biases' gradient off by {}", worst(&gb, &want_b));
        // The blind baseline (no inputs): only the biases.
        let blind = GemmFit::new(&Readout::newborn(0, vec![], 1));
        let (_, gw0, gb0) = blind.gradient(&[], &refs).unwrap();
        let (_, _, want_b0) = flychess_fly::scoring::gradient(&Readout::newborn(0, vec![], 1), &[], &targets);
        assert!(gw0.is_empty() && worst(&gb0, &want_b0) < 1e-6);
    }

    #[test]
    fn the_same_batch_gives_the_same_bits_on_any_number_of_threads() {
        // A batch wide enough to be cut into several tasks each way.
        let (d, n) = (300, 2_500);
        let (x, targets) = rows(n, d);
        let refs: Vec<&Target> = targets.iter().collect();
        let start = Readout::newborn(d, vec![12], 7);
        let steps = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut fit = GemmFit::new(&start);
                let losses: Vec<u64> = (0..3).map(|_| fit.step(&x, &refs, 2e-3).unwrap().to_bits()).collect();
                (losses, fit.readout(&start).weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>())
            })
        };
        let one = steps(1);
        assert_eq!(steps(3), one, "3 threads against 1");
        assert_eq!(steps(8), one, "8 threads against 1");
    }

    #[test]
    fn adams_state_round_trips_and_a_foreign_one_is_refused() {
        let (d, n) = (9, 40);
        let (x, targets) = rows(n, d);
        let refs: Vec<&Target> = targets.iter().collect();
        let start = Readout::newborn(d, vec![12], 5);
        let mut a = GemmFit::new(&start);
        for _ in 0..3 {
            a.step(&x, &refs, 2e-3).unwrap();
        }
        let mut b = GemmFit::resume(&a.readout(&start), Some(&a.adam_state())).unwrap();
        a.step(&x, &refs, 2e-3).unwrap();
        b.step(&x, &refs, 2e-3).unwrap();
        assert_eq!(a.readout(&start).weights, b.readout(&start).weights, "resumed: the same step, bit for bit");
        let e = GemmFit::resume(&start, Some(b"not adam at all")).err().unwrap().to_string();
        assert!(e.contains("not this fit's"), "{e}");
        let mut short = a.adam_state();
        short.truncate(short.len() - 4);
        assert!(GemmFit::resume(&start, Some(&short)).is_err());
    }
}
