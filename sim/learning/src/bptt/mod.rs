//! Training the brain itself (seed "Let the brain learn, on a leash", "The maths" 6): backprop
//! through time over the last `window` of the 12 steps, written by hand. This module owns the
//! learnable numbers (`Learnable`: each connection's strength θ with W = sign × softplus(θ), each
//! neuron's gain α and bias β), how they become a brain the engines run (`Base::apply`: W, and
//! α, β folded into the per-step constants μ′ and g = α/σ the engines already take, so both
//! engines run a tuned brain unchanged), and the backward pass (`gradient`).
//!
//! The backward pass walks back one step at a time from step 12 (t is 0-based below):
//!
//! ```text
//! z̄ = r̄ · λ (1 − a²) [a > 0]          a = max(0, tanh z), recomputed from u = W r⁽ᵗ⁻¹⁾ + x
//! β̄ⱼ += Σ z̄,   ᾱⱼ += Σ z̄ (u − μ)/σ,   ū = z̄ · α/σ
//! θ̄ₑ += Σ ū_post r⁽ᵗ⁻¹⁾_pre             (× sign · sigmoid θ at the end)
//! r̄⁽ᵗ⁻¹⁾ = (1 − λ) r̄⁽ᵗ⁾ + Wᵀ ū           (the transpose of the CSR, gathered per sender)
//! ```
//!
//! Every sum runs in a fixed order (edges in row order, senders' edges in receiver order, steps
//! from 12 down, positions in batch order), so the gradient is the same bit for bit whatever the
//! thread count. The code is generic over the float (`Real`): f32 for training (the forward pass
//! is the CPU engine itself, and the recomputed input u is the engine's bit for bit), f64 for the
//! gradient check against finite differences (`check`).

pub mod blame;
pub mod check;
pub mod gpu;
pub mod run;

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use rayon::prelude::*;

use flychess_brain::brain::{Brain, NO_EYE, STEPS};
use flychess_fly::readout::{FROM, OUTPUTS, Readout, TO};
use flychess_fly::scoring::Target;

/// The floats the backward pass runs in.
pub trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    fn of(x: f64) -> Self;
    fn get(self) -> f64;
    /// max(0, tanh z) as this float's forward pass computes it.
    fn tanh_relu(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn tanh(self) -> Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn of(x: f64) -> f32 {
        x as f32
    }
    fn get(self) -> f64 {
        self as f64
    }
    /// The engines' own (a polynomial e^x inside tanh), so the recomputed rates are theirs.
    #[inline(always)]
    fn tanh_relu(self) -> f32 {
        flychess_brain::brain::cpu::tanh_relu(self)
    }
    fn exp(self) -> f32 {
        f32::exp(self)
    }
    fn ln(self) -> f32 {
        f32::ln(self)
    }
    fn tanh(self) -> f32 {
        f32::tanh(self)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    fn of(x: f64) -> f64 {
        x
    }
    fn get(self) -> f64 {
        self
    }
    fn tanh_relu(self) -> f64 {
        f64::tanh(self).max(0.0)
    }
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    fn ln(self) -> f64 {
        f64::ln(self)
    }
    fn tanh(self) -> f64 {
        f64::tanh(self)
    }
}

pub fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

/// softplus⁻¹(y) = ln(e^y − 1), for y > 0.
pub fn softplus_inverse(y: f64) -> f64 {
    if y > 30.0 { y } else { y.exp_m1().ln() }
}

pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The numbers brain training moves: θ per connection (CSR order), α and β per neuron.
#[derive(Clone, Debug, PartialEq)]
pub struct Learnable {
    pub theta: Vec<f32>,
    pub alpha: Vec<f32>,
    pub beta: Vec<f32>,
}

/// The brain as measured, which training starts from and is leashed to: each connection's sign
/// and measured strength (θ⁰ = softplus⁻¹ of it), the measured weights and constants bit for bit,
/// and the homeostasis.
#[derive(Clone, Debug)]
pub struct Base {
    pub sign: Vec<f32>,
    pub theta0: Vec<f32>,
    pub weight0: Vec<f32>,
    pub mu: Vec<f32>,
    pub sigma: Vec<f32>,
    pub alpha0: f32,
    pub beta0: f32,
    pub leak: f32,
    /// The receiver of each connection, and the transpose of the CSR: sender i's connections are
    /// `by_sender[sender_start[i]..sender_start[i + 1]]` (edge indices, receivers ascending).
    pub post: Vec<u32>,
    pub sender_start: Vec<u32>,
    pub by_sender: Vec<u32>,
}

impl Base {
    /// The base of a brain (with its homeostasis installed) as it stands.
    pub fn of(brain: &Brain) -> Base {
        let sign: Vec<f32> = brain.weight.iter().map(|w| if *w < 0.0 { -1.0 } else { 1.0 }).collect();
        let theta0 = brain.weight.par_iter().map(|w| softplus_inverse(w.abs().max(1e-30) as f64) as f32).collect();
        let outgoing = brain.outgoing();
        let h = brain.homeostasis();
        Base {
            sign,
            theta0,
            weight0: brain.weight.clone(),
            mu: h.mu.clone(),
            sigma: h.sigma.clone(),
            alpha0: brain.params().alpha,
            beta0: brain.params().beta,
            leak: brain.params().leak,
            post: outgoing.post.clone(),
            sender_start: outgoing.start.clone(),
            by_sender: outgoing.by_sender.clone(),
        }
    }

    pub fn neurons(&self) -> usize {
        self.mu.len() / STEPS
    }

    /// The measured brain's learnable numbers.
    pub fn start(&self) -> Learnable {
        let n = self.neurons();
        Learnable { theta: self.theta0.clone(), alpha: vec![self.alpha0; n], beta: vec![self.beta0; n] }
    }

    /// The weights, μ′ and gains of `p` in f32, as the engines run them: a connection whose θ
    /// is still θ⁰ keeps its measured weight bit for bit, and a neuron with α⁰ and β⁰ its measured
    /// constants.
    pub fn engine_form(&self, p: &Learnable) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let weight = (p.theta.par_iter(), self.theta0.par_iter(), self.weight0.par_iter(), self.sign.par_iter())
            .into_par_iter()
            .map(|(&t, &t0, &w0, &s)| if t == t0 { w0 } else { s * softplus(t as f64) as f32 })
            .collect();
        let n = self.neurons();
        let mut mu = self.mu.clone();
        let mut gain = vec![0f32; STEPS * n];
        mu.par_chunks_mut(n).zip(gain.par_chunks_mut(n)).enumerate().for_each(|(t, (mu, gain))| {
            for j in 0..n {
                gain[j] = p.alpha[j] / self.sigma[t * n + j];
                if p.beta[j] != self.beta0 {
                    mu[j] -= (p.beta[j] - self.beta0) / gain[j];
                }
            }
        });
        (weight, mu, gain)
    }

    /// Puts `p` into `brain` (a brain of this base): what both engines then run.
    pub fn apply(&self, p: &Learnable, brain: &mut Brain) {
        let (weight, mu, gain) = self.engine_form(p);
        brain.tune(weight, mu, gain);
    }

    /// The f32 model of `brain`, into which `p` has been put (`apply`): its weights and
    /// constants as the engines run them.
    pub fn model_of_brain<'a>(&'a self, brain: &'a Brain, p: &Learnable) -> Model<'a, f32> {
        Model {
            brain,
            base: self,
            weight: brain.weight.clone(),
            mu: brain.homeostasis().mu.clone(),
            gain: brain.gains().to_vec(),
            alpha: p.alpha.clone(),
            beta: p.beta.clone(),
            dweight: (p.theta.par_iter(), self.sign.par_iter())
                .into_par_iter()
                .map(|(&t, &s)| (s as f64 * sigmoid(t as f64)) as f32)
                .collect(),
            leak: self.leak,
            beta0: self.beta0,
            engine: true,
        }
    }

    /// The model of `p` in f64 computed in f64 throughout (the gradient check's): W = sign ·
    /// softplus(θ), g = α/σ and μ′ = μ − (β − β⁰)/g without rounding to f32 on the way.
    pub fn model_f64<'a>(&'a self, brain: &'a Brain, p: &LearnableF64) -> Model<'a, f64> {
        let n = self.neurons();
        let weight = p.theta.iter().zip(&self.sign).map(|(&t, &s)| s as f64 * softplus(t)).collect();
        let mut mu = vec![0f64; STEPS * n];
        let mut gain = vec![0f64; STEPS * n];
        for t in 0..STEPS {
            for j in 0..n {
                let k = t * n + j;
                gain[k] = p.alpha[j] / self.sigma[k] as f64;
                mu[k] = self.mu[k] as f64 - (p.beta[j] - self.beta0 as f64) / gain[k];
            }
        }
        Model {
            brain,
            base: self,
            weight,
            mu,
            gain,
            alpha: p.alpha.clone(),
            beta: p.beta.clone(),
            dweight: p.theta.iter().zip(&self.sign).map(|(&t, &s)| s as f64 * sigmoid(t)).collect(),
            leak: self.leak as f64,
            beta0: self.beta0 as f64,
            engine: false,
        }
    }
}

/// The learnable numbers in f64 (the gradient check moves them by 1e-6).
#[derive(Clone, Debug)]
pub struct LearnableF64 {
    pub theta: Vec<f64>,
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
}

impl From<&Learnable> for LearnableF64 {
    fn from(p: &Learnable) -> Self {
        let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect();
        LearnableF64 { theta: f(&p.theta), alpha: f(&p.alpha), beta: f(&p.beta) }
    }
}

/// A brain in the form the backward pass needs, in float `F`.
pub struct Model<'a, F> {
    pub brain: &'a Brain,
    pub base: &'a Base,
    /// W per connection (CSR order).
    pub weight: Vec<F>,
    /// μ′ₜ and gₜ = α/σₜ, `[step · n + neuron]`.
    pub mu: Vec<F>,
    pub gain: Vec<F>,
    pub alpha: Vec<F>,
    pub beta: Vec<F>,
    /// dW/dθ = sign · sigmoid(θ) per connection.
    pub dweight: Vec<F>,
    pub leak: F,
    pub beta0: F,
    /// The weights and constants are the brain's own (`Base::model_of_brain`, f32): the inputs u
    /// can be summed by the CPU engine itself.
    pub engine: bool,
}

/// `v` as f32 when `F` is f32.
fn as_f32<F: Real>(v: &[F]) -> Option<&[f32]> {
    (std::any::TypeId::of::<F>() == std::any::TypeId::of::<f32>())
        // SAFETY: F is f32 (same type, same layout).
        .then(|| unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f32>(), v.len()) })
}

/// Σ a·b over a batch in eight running sums (combined in lane order): the same result for any
/// thread count, and vector instructions where a single running sum would wait on each add.
#[inline(always)]
fn dot<F: Real>(a: &[F], b: &[F]) -> F {
    let mut lanes = [F::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let mut s = combine(lanes);
    for (&x, &y) in ta.iter().zip(tb) {
        s += x * y;
    }
    s
}

/// Rows a rayon task takes in the backward pass.
const BLOCK: usize = 256;

impl<F: Real> Model<'_, F> {
    fn neurons(&self) -> usize {
        self.brain.neurons
    }

    /// u = x + Σ W r⁽ᵗ⁻¹⁾ of row `j` for every position, in the engine's order.
    fn input(&self, j: usize, x: &[F], prev: Option<&[F]>, batch: usize, u: &mut [F]) {
        let slot = self.brain.eye_slot[j];
        if slot == NO_EYE {
            u.fill(F::ZERO);
        } else {
            u.copy_from_slice(&x[slot as usize * batch..(slot as usize + 1) * batch]);
        }
        if let Some(prev) = prev {
            for e in self.brain.row(j) {
                let (p, w) = (self.brain.pre[e] as usize, self.weight[e]);
                for (a, &r) in u.iter_mut().zip(&prev[p * batch..(p + 1) * batch]) {
                    *a = r * w + *a;
                }
            }
        }
    }

    /// u = W r⁽ᵗ⁻¹⁾ + x of every row (`[neuron · batch + position]`): by the CPU engine where the
    /// model is the brain's own in f32 (the forward pass's u bit for bit, at the engine's speed),
    /// else row by row in the same order.
    fn inputs(&self, x: &[F], prev: Option<&[F]>, batch: usize) -> Vec<F> {
        use std::any::Any;
        let n = self.neurons();
        if self.engine
            && let Some(prev) = prev
            && let (Some(x32), Some(prev32)) = (as_f32(x), as_f32(prev))
        {
            let mut u = vec![0f32; n * batch];
            flychess_brain::brain::cpu::input_sum(self.brain, prev32, x32, batch, &mut u);
            let boxed: Box<dyn Any> = Box::new(u);
            if let Ok(u) = boxed.downcast::<Vec<F>>() {
                return *u;
            }
        }
        let mut u = vec![F::ZERO; n * batch];
        u.par_chunks_mut(batch).enumerate().for_each(|(j, out)| self.input(j, x, prev, batch, out));
        u
    }

    /// All 12 steps of a batch (`[(step · n + neuron) · batch + position]`), in `F` as written
    /// above: what the gradient check and the tests run; training uses the CPU engine, which gives
    /// the same f32 rates.
    pub fn forward(&self, x: &[F], batch: usize) -> Vec<F> {
        let n = self.neurons();
        let mut rates = vec![F::ZERO; STEPS * n * batch];
        for t in 0..STEPS {
            let (done, rest) = rates.split_at_mut(t * n * batch);
            let prev = (t > 0).then(|| &done[(t - 1) * n * batch..]);
            rest[..n * batch].par_chunks_mut(batch).enumerate().for_each(|(j, out)| {
                self.input(j, x, prev, batch, out);
                let (mu, g) = (self.mu[t * n + j], self.gain[t * n + j]);
                for (b, v) in out.iter_mut().enumerate() {
                    let a = ((*v - mu) * g + self.beta0).tanh_relu();
                    let rp = prev.map_or(F::ZERO, |p| p[j * batch + b]);
                    *v = self.leak * a + (F::ONE - self.leak) * rp;
                }
            });
        }
        rates
    }
}

/// The readout's four heads in float `F`.
#[derive(Clone, Debug)]
pub struct Heads<F> {
    pub inputs: usize,
    pub weights: Vec<F>,
    pub bias: Vec<F>,
}

impl<F: Real> Heads<F> {
    pub fn of(r: &Readout) -> Heads<F> {
        Heads {
            inputs: r.inputs,
            weights: r.weights.iter().map(|&w| F::of(w as f64)).collect(),
            bias: r.bias.iter().map(|&w| F::of(w as f64)).collect(),
        }
    }
}

/// The readout's part of the gradient: mean loss, d loss / d weights, biases, and each
/// position's features (`[position · inputs + k]`), the loss of `train` (cross-entropy over the
/// legal moves against the target shares plus the squared value error), averaged over the batch.
pub fn readout_gradient<F: Real>(h: &Heads<F>, x: &[F], targets: &[Target]) -> (f64, Vec<F>, Vec<F>, Vec<F>) {
    let d = h.inputs;
    let n = F::of(targets.len().max(1) as f64);
    let per: Vec<(f64, [F; OUTPUTS], Vec<F>)> = targets
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let xi = &x[i * d..(i + 1) * d];
            let mut out = [F::ZERO; OUTPUTS];
            for (o, v) in out.iter_mut().enumerate() {
                let mut s = h.bias[o];
                for (&w, &a) in h.weights[o * d..(o + 1) * d].iter().zip(xi) {
                    s += w * a;
                }
                *v = s;
            }
            let scores: Vec<F> =
                t.legal.iter().map(|&(f, to, p)| out[f as usize] + out[FROM + to as usize] + out[FROM + TO + p as usize]).collect();
            let top = scores.iter().copied().fold(scores[0], |a, b| if b > a { b } else { a });
            let exp: Vec<F> = scores.iter().map(|&s| (s - top).exp()).collect();
            let mut total = F::ZERO;
            for &e in &exp {
                total += e;
            }
            let v = out[OUTPUTS - 1].tanh();
            let y = F::of(t.value as f64);
            let mut loss = (v - y).get().powi(2);
            let mut delta = [F::ZERO; OUTPUTS];
            // The shares sum to 1 only to f32's rounding: d/ds of −Σ q ln p is p·Σq − q.
            let mut shares = F::ZERO;
            for &q in &t.share {
                shares += F::of(q as f64);
            }
            for (k, &(f, to, pr)) in t.legal.iter().enumerate() {
                let p = exp[k] / total;
                let share = F::of(t.share[k] as f64);
                if t.share[k] > 0.0 {
                    loss -= t.share[k] as f64 * p.get().max(1e-30).ln();
                }
                let g = (p * shares - share) / n;
                delta[f as usize] += g;
                delta[FROM + to as usize] += g;
                delta[FROM + TO + pr as usize] += g;
            }
            delta[OUTPUTS - 1] = F::of(2.0) * (v - y) * (F::ONE - v * v) / n;
            let mut gx = vec![F::ZERO; d];
            for (o, &g) in delta.iter().enumerate() {
                if g != F::ZERO {
                    for (a, &w) in gx.iter_mut().zip(&h.weights[o * d..(o + 1) * d]) {
                        *a += g * w;
                    }
                }
            }
            (loss, delta, gx)
        })
        .collect();
    let mut gw = vec![F::ZERO; OUTPUTS * d];
    let mut gb = vec![F::ZERO; OUTPUTS];
    gw.par_chunks_mut(d).enumerate().for_each(|(o, row)| {
        for (i, (_, delta, _)) in per.iter().enumerate() {
            let g = delta[o];
            if g != F::ZERO {
                for (w, &a) in row.iter_mut().zip(&x[i * d..(i + 1) * d]) {
                    *w += g * a;
                }
            }
        }
    });
    for (_, delta, _) in &per {
        for (b, &g) in gb.iter_mut().zip(delta) {
            *b += g;
        }
    }
    let loss = per.iter().map(|p| p.0).sum::<f64>() / targets.len().max(1) as f64;
    let gx = per.into_iter().flat_map(|p| p.2).collect();
    (loss, gw, gb, gx)
}

/// What the readout reads: its descending neurons and steps (0-based, averaged).
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    pub descending: &'a [u32],
    pub steps: &'a [usize],
}

impl Reader<'_> {
    /// The features of every position of a think, `[position · k + i]`, summed in ascending step
    /// order and divided (as `readout::think_features`).
    pub fn features<F: Real>(&self, rates: &[F], neurons: usize, batch: usize) -> Vec<F> {
        let k = self.descending.len();
        let mut steps = self.steps.to_vec();
        steps.sort_unstable();
        let count = F::of(steps.len().max(1) as f64);
        let mut out = vec![F::ZERO; batch * k];
        for b in 0..batch {
            for (i, &j) in self.descending.iter().enumerate() {
                let mut s = F::ZERO;
                for &t in &steps {
                    s += rates[(t * neurons + j as usize) * batch + b];
                }
                out[b * k + i] = s / count;
            }
        }
        out
    }
}

/// The forward pass of a batch that a backward pass goes back through: the eye's input
/// (`Brain::eye_input`'s layout) and every step's rates (`[(step · neurons + neuron) · batch +
/// position]`).
#[derive(Clone, Copy, Debug)]
pub struct Forward<'a, F> {
    pub x: &'a [F],
    pub rates: &'a [F],
    pub batch: usize,
}

/// The gradient of the mean loss of a batch, for every kind of learnable number.
#[derive(Clone, Debug)]
pub struct Gradient<F> {
    pub loss: f64,
    pub theta: Vec<F>,
    pub alpha: Vec<F>,
    pub beta: Vec<F>,
    pub readout_weights: Vec<F>,
    pub readout_bias: Vec<F>,
    /// With `keep_blame`: d loss / d rate of every neuron after every step the window reaches
    /// (zero before it), in the rates' layout.
    pub blame: Option<Vec<F>>,
}

/// The whole gradient of a batch: the readout's, then back through the last `window` steps of
/// the brain (1 ..= 12). `x` is the eye's input and `rates` the forward pass's (the CPU engine's
/// for f32, `Model::forward` otherwise).
#[allow(clippy::too_many_arguments)]
pub fn gradient<F: Real>(
    m: &Model<F>,
    x: &[F],
    rates: &[F],
    batch: usize,
    heads: &Heads<F>,
    reader: &Reader,
    targets: &[Target],
    window: usize,
    keep_blame: bool,
) -> Gradient<F> {
    let n = m.neurons();
    let features = reader.features(rates, n, batch);
    let (loss, readout_weights, readout_bias, gx) = readout_gradient(heads, &features, targets);
    let window = window.clamp(1, STEPS);
    let first = STEPS - window;
    let k = reader.descending.len();
    let read_share = F::ONE / F::of(reader.steps.len().max(1) as f64);
    let edges = m.weight.len();
    let mut theta = vec![F::ZERO; edges];
    let mut alpha = vec![F::ZERO; n];
    let mut beta = vec![F::ZERO; n];
    let mut blame = keep_blame.then(|| vec![F::ZERO; STEPS * n * batch]);
    let mut rbar = vec![F::ZERO; n * batch];
    let mut ubar = vec![F::ZERO; n * batch];
    // θ̄'s slices for each block of rows, so that blocks run in parallel.
    let blocks = n.div_ceil(BLOCK);
    for t in (first..STEPS).rev() {
        if reader.steps.contains(&t) {
            for b in 0..batch {
                for (i, &j) in reader.descending.iter().enumerate() {
                    rbar[j as usize * batch + b] += gx[b * k + i] * read_share;
                }
            }
        }
        if let Some(bl) = blame.as_mut() {
            bl[t * n * batch..(t + 1) * n * batch].copy_from_slice(&rbar);
        }
        let prev = (t > 0).then(|| &rates[(t - 1) * n * batch..t * n * batch]);
        let inputs = m.inputs(x, prev, batch);
        let mut theta_blocks: Vec<&mut [F]> = Vec::with_capacity(blocks);
        let mut rest: &mut [F] = &mut theta;
        let mut at = 0usize;
        for bi in 0..blocks {
            let end = m.brain.row_start[((bi + 1) * BLOCK).min(n)] as usize;
            let (head, tail) = rest.split_at_mut(end - at);
            theta_blocks.push(head);
            rest = tail;
            at = end;
        }
        let step = StepView { m, t, inputs: &inputs, rbar: &rbar, prev, batch };
        let avx2 = flychess_brain::brain::cpu::has_avx2();
        theta_blocks
            .into_par_iter()
            .zip(ubar.par_chunks_mut(BLOCK * batch))
            .zip(alpha.par_chunks_mut(BLOCK).zip(beta.par_chunks_mut(BLOCK)))
            .enumerate()
            .for_each(|(bi, ((theta, ubar), (alpha, beta)))| {
                let out = BlockOut { theta, ubar, alpha, beta };
                if avx2 {
                    // SAFETY: the CPU has AVX2 (checked above).
                    unsafe { backward_block_avx2(&step, bi * BLOCK, out) }
                } else {
                    backward_block(&step, bi * BLOCK, out)
                }
            });
        if t == first {
            break;
        }
        // r̄⁽ᵗ⁻¹⁾ = (1 − λ) r̄⁽ᵗ⁾ + Wᵀ ū, gathered per sender.
        let keep = F::ONE - m.leak;
        let mut next = vec![F::ZERO; n * batch];
        // Which neurons pass any blame back (ū ≠ 0): the others' rows are not read.
        let active: Vec<bool> = ubar.par_chunks(batch).map(|u| u.iter().any(|&x| x != F::ZERO)).collect();
        next.par_chunks_mut(BLOCK * batch).enumerate().for_each(|(bi, out)| {
            let v = TransposeView { m, keep, rbar: &rbar, ubar: &ubar, active: &active, batch };
            if avx2 {
                // SAFETY: the CPU has AVX2 (checked above).
                unsafe { transpose_block_avx2(&v, bi * BLOCK, out) }
            } else {
                transpose_block(&v, bi * BLOCK, out)
            }
        });
        rbar = next;
    }
    theta.par_iter_mut().zip(&m.dweight).for_each(|(g, &d)| *g = *g * d);
    Gradient { loss, theta, alpha, beta, readout_weights, readout_bias, blame }
}

/// What every block of rows of one backward step reads.
struct StepView<'a, 'm, F> {
    m: &'a Model<'m, F>,
    t: usize,
    inputs: &'a [F],
    rbar: &'a [F],
    prev: Option<&'a [F]>,
    batch: usize,
}

/// What a block of rows writes: its connections' θ̄, its ū, ᾱ and β̄.
struct BlockOut<'a, F> {
    theta: &'a mut [F],
    ubar: &'a mut [F],
    alpha: &'a mut [F],
    beta: &'a mut [F],
}

/// One backward step for the rows from `first_row` (as many as `out.ubar` holds): z̄, ᾱ, β̄, ū,
/// and each connection's θ̄ (before the softplus factor).
#[inline(always)]
fn backward_block<F: Real>(v: &StepView<F>, first_row: usize, out: BlockOut<F>) {
    let (m, t, batch) = (v.m, v.t, v.batch);
    let n = m.neurons();
    let edge0 = m.brain.row_start[first_row] as usize;
    let mut scratch = vec![F::ZERO; 2 * batch];
    for (r, ub) in out.ubar.chunks_exact_mut(batch).enumerate() {
        let j = first_row + r;
        let u = &v.inputs[j * batch..(j + 1) * batch];
        let rbar = &v.rbar[j * batch..(j + 1) * batch];
        let (mu, g) = (m.mu[t * n + j], m.gain[t * n + j]);
        let (inv_aj, bj) = (F::ONE / m.alpha[j], m.beta[j]);
        let (zbars, weighted) = scratch.split_at_mut(batch);
        if rbar.iter().all(|&x| x == F::ZERO) {
            // No blame reaches this neuron at this step (late steps: most of the brain).
            ub.fill(F::ZERO);
            continue;
        }
        let c = Elementwise { mu, g, beta0: m.beta0, leak: m.leak, bj };
        macro_rules! fixed {
            ($($b:literal)*) => {
                match batch {
                    $($b => c.run::<$b>(u.try_into().expect("batch"), rbar.try_into().expect("batch"), zbars.try_into().expect("batch"), weighted.try_into().expect("batch"), ub.try_into().expect("batch")),)*
                    _ => c.run_any(u, rbar, zbars, weighted, ub),
                }
            };
        }
        fixed!(8 16 32 64);
        let any = zbars.iter().any(|&z| z != F::ZERO);
        let (sb, sa) = (sum(zbars), sum(weighted) * inv_aj);
        out.beta[r] += sb;
        out.alpha[r] += sa;
        if let Some(prev) = v.prev
            && any
        {
            let ub: &[F] = ub;
            let prev32 = as_f32(prev);
            macro_rules! fixed {
                ($($b:literal)*) => {
                    match batch {
                        $($b => {
                            let ub: &[F; $b] = ub.try_into().expect("batch");
                            let row = m.brain.row(j);
                            let ahead = prev32.is_some();
                            for e in row {
                                if ahead && let (Some(&q), Some(prev32)) = (m.brain.pre.get(e + PREFETCH_AHEAD), prev32) {
                                    flychess_brain::brain::cpu::prefetch(&prev32[q as usize * $b..(q as usize + 1) * $b]);
                                }
                                let p = m.brain.pre[e] as usize;
                                out.theta[e - edge0] += dot_fixed::<F, $b>(ub, prev[p * $b..(p + 1) * $b].try_into().expect("batch"));
                            }
                        })*
                        _ => for e in m.brain.row(j) {
                            let p = m.brain.pre[e] as usize;
                            out.theta[e - edge0] += dot(ub, &prev[p * batch..(p + 1) * batch]);
                        },
                    }
                };
            }
            fixed!(8 16 32 64);
        }
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn backward_block_avx2<F: Real>(v: &StepView<F>, first_row: usize, out: BlockOut<F>) {
    backward_block(v, first_row, out)
}

/// `dot` for a batch size known when compiling.
#[inline(always)]
fn dot_fixed<F: Real, const B: usize>(a: &[F; B], b: &[F; B]) -> F {
    let mut lanes = [F::ZERO; 8];
    for c in 0..B / 8 {
        for l in 0..8 {
            lanes[l] += a[c * 8 + l] * b[c * 8 + l];
        }
    }
    combine(lanes)
}

/// One neuron's step constants for the element-by-element part of the backward step.
struct Elementwise<F> {
    mu: F,
    g: F,
    beta0: F,
    leak: F,
    bj: F,
}

impl<F: Real> Elementwise<F> {
    /// z̄ = r̄ λ (1 − a²)[a > 0], z̄ (z − β) and ū = z̄ g for each position, with no running sum
    /// (so that it runs as vectors).
    #[inline(always)]
    fn one(&self, u: F, rbar: F) -> (F, F, F) {
        let z = (u - self.mu) * self.g + self.beta0;
        let a = z.tanh_relu();
        let zbar = if a > F::ZERO { rbar * self.leak * (F::ONE - a * a) } else { F::ZERO };
        (zbar, zbar * (z - self.bj), zbar * self.g)
    }

    #[inline(always)]
    fn run<const B: usize>(&self, u: &[F; B], rbar: &[F; B], zbars: &mut [F; B], weighted: &mut [F; B], ub: &mut [F; B]) {
        for b in 0..B {
            (zbars[b], weighted[b], ub[b]) = self.one(u[b], rbar[b]);
        }
    }

    #[inline(always)]
    fn run_any(&self, u: &[F], rbar: &[F], zbars: &mut [F], weighted: &mut [F], ub: &mut [F]) {
        for b in 0..u.len() {
            (zbars[b], weighted[b], ub[b]) = self.one(u[b], rbar[b]);
        }
    }
}

/// How many connections ahead the θ̄ pass asks for the senders' rates (as the engine does).
const PREFETCH_AHEAD: usize = 24;

/// Σ v in eight running sums, combined as `combine` does.
#[inline(always)]
fn sum<F: Real>(v: &[F]) -> F {
    let mut lanes = [F::ZERO; 8];
    let chunks = v.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            lanes[l] += c[l];
        }
    }
    let mut s = combine(lanes);
    for &x in tail {
        s += x;
    }
    s
}

/// The eight running sums added as a tree (lanes 0+4, 1+5, …), which vector units do in three
/// steps.
#[inline(always)]
fn combine<F: Real>(l: [F; 8]) -> F {
    let (a, b, c, d) = (l[0] + l[4], l[1] + l[5], l[2] + l[6], l[3] + l[7]);
    (a + c) + (b + d)
}

/// What the transposed gather of one step reads.
struct TransposeView<'a, 'm, F> {
    m: &'a Model<'m, F>,
    keep: F,
    rbar: &'a [F],
    ubar: &'a [F],
    active: &'a [bool],
    batch: usize,
}

/// r̄⁽ᵗ⁻¹⁾ of the senders from `first` (as many as `out` holds): (1 − λ) r̄⁽ᵗ⁾ + Σ W ū over each
/// sender's connections in receiver order (those to a neuron with no blame add nothing).
#[inline(always)]
fn transpose_block<F: Real>(v: &TransposeView<F>, first: usize, out: &mut [F]) {
    let (m, keep, rbar, ubar, batch) = (v.m, v.keep, v.rbar, v.ubar, v.batch);
    let base = m.base;
    for (k, o) in out.chunks_exact_mut(batch).enumerate() {
        let i = first + k;
        let edges = &base.by_sender[base.sender_start[i] as usize..base.sender_start[i + 1] as usize];
        macro_rules! fixed {
            ($($b:literal)*) => {
                match batch {
                    $($b => {
                        let mut acc = [F::ZERO; $b];
                        for (a, &r) in acc.iter_mut().zip(&rbar[i * $b..(i + 1) * $b]) {
                            *a = keep * r;
                        }
                        for &e in edges {
                            let j = base.post[e as usize] as usize;
                            if !v.active[j] {
                                continue;
                            }
                            let w = m.weight[e as usize];
                            let u: &[F; $b] = ubar[j * $b..(j + 1) * $b].try_into().expect("batch");
                            for b in 0..$b {
                                acc[b] += w * u[b];
                            }
                        }
                        o.copy_from_slice(&acc);
                    })*
                    _ => {
                        for (a, &r) in o.iter_mut().zip(&rbar[i * batch..(i + 1) * batch]) {
                            *a = keep * r;
                        }
                        for &e in edges {
                            let j = base.post[e as usize] as usize;
                            if !v.active[j] {
                                continue;
                            }
                            let w = m.weight[e as usize];
                            for (a, &u) in o.iter_mut().zip(&ubar[j * batch..(j + 1) * batch]) {
                                *a += w * u;
                            }
                        }
                    }
                }
            };
        }
        fixed!(1 8 16 32 64);
    }
}

#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2"))]
unsafe fn transpose_block_avx2<F: Real>(v: &TransposeView<F>, first: usize, out: &mut [F]) {
    transpose_block(v, first, out)
}

/// The eye's input of a batch in float `F`.
pub fn eye_input<F: Real>(brain: &Brain, boards: &[flychess_brain::chess::Planes]) -> Vec<F> {
    brain.eye_input(boards).into_iter().map(|v| F::of(v as f64)).collect()
}
