//! Checking the hand-written backward pass (`flychess gradcheck`): on a small brain made here
//! (a few dozen neurons, an eye on real positions, the rate model's constants, a σ at the 0.02
//! floor among them), the gradient of every kind of learnable number — connection strengths θ,
//! neuron gains α and biases β, the readout's weights and biases — against central finite
//! differences of the loss in f64 (all 12 steps, where truncation would make them differ), and
//! against burn's autodiff of the same model written as dense tensor ops (any window: there the
//! rates before the window are detached).

use burn::module::Param;
use burn::tensor::activation::{relu, softplus};
use burn::tensor::{Int, Tensor, TensorData};
use serde::Serialize;

use super::{Base, Gradient, Heads, Learnable, LearnableF64, Reader, gradient};
use crate::error::{Error, Result};
use flychess_brain::brain::{Brain, Homeostasis, STEPS};
use flychess_brain::chess::Planes;
use flychess_brain::eye::{EyeCell, EyeRole};
use flychess_fly::data::Row;
use flychess_fly::readout::{OUTPUTS, Readout};
use flychess_fly::scoring::Target;

/// A small brain to check gradients on: its model, the readout and what it reads, and the
/// learnable numbers moved off their start (so every kind has a gradient of its own).
pub struct SmallBrain {
    pub brain: Brain,
    pub base: Base,
    pub params: Learnable,
    pub readout: Readout,
    pub descending: Vec<u32>,
    pub read_steps: Vec<usize>,
}

impl SmallBrain {
    /// A training run's setup on this brain (checksum "small", homeostasis "h", its own readout as
    /// the start, on the CPU): `brain` is the copy the run works on, `base` its measured numbers.
    pub fn run_setup<'a>(&'a self, base: &'a Base, brain: &'a mut Brain, train: &'a [Row], val: &'a [Row]) -> super::run::Setup<'a> {
        super::run::Setup {
            base,
            brain,
            brain_checksum: "small",
            homeostasis: "h",
            descending: &self.descending,
            start: ("start", &self.readout),
            train,
            val,
            gpu: None,
        }
    }
}

/// A deterministic stream of numbers in [0, 1).
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 48 neurons: 24 photoreceptors (each on a square with a role), 16 central neurons, 8
/// descending; each non-eye neuron hears 6 others (a quarter inhibitory), strengths as the
/// brain file makes them (shares of the row); homeostasis drawn around the rates' scale with a
/// few σ at the floor; the readout reads steps 9–12.
pub fn small_brain(seed: u64) -> SmallBrain {
    let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (n, eye_n, dn) = (48usize, 24usize, 8usize);
    let eye: Vec<EyeCell> = (0..eye_n)
        .map(|i| {
            let role = match i % 8 {
                6 => EyeRole::Own,
                7 => EyeRole::Opponent,
                k => EyeRole::PieceType(k as u8),
            };
            EyeCell { neuron: i as u32, square: [12, 28, 27, 36, 52, 6, 57, 35, 20, 44, 11, 53][i % 12], role }
        })
        .collect();
    let inhibitory: Vec<bool> = (0..n).map(|_| dice.next() < 0.25).collect();
    let mut row_start = vec![0u32];
    let (mut pre, mut weight) = (Vec::new(), Vec::new());
    for j in 0..n {
        if j >= eye_n {
            let mut senders: Vec<u32> = Vec::new();
            while senders.len() < 6 {
                let p = (dice.next() * n as f64) as u32;
                if p as usize != j && !senders.contains(&p) {
                    senders.push(p);
                }
            }
            senders.sort_unstable();
            let counts: Vec<f64> = senders.iter().map(|_| 5.0 + (dice.next() * 40.0).floor()).collect();
            let total: f64 = counts.iter().map(|c| (1.0 + c).ln()).sum();
            for (&p, c) in senders.iter().zip(&counts) {
                let s = ((1.0 + c).ln() / total * 2.5) as f32;
                pre.push(p);
                weight.push(if inhibitory[p as usize] { -s } else { s });
            }
        }
        row_start.push(pre.len() as u32);
    }
    let mut brain = Brain::from_parts(n, row_start, pre, weight, eye);
    let mu = (0..STEPS * n).map(|_| (dice.next() * 0.6) as f32).collect();
    let sigma = (0..STEPS * n).map(|k| if k % 17 == 3 { 0.02 } else { (0.1 + dice.next() * 0.6) as f32 }).collect();
    brain.set_homeostasis(Homeostasis { neurons: n, mu, sigma });
    let base = Base::of(&brain);
    let mut params = base.start();
    for t in params.theta.iter_mut() {
        *t += (dice.next() * 0.2 - 0.1) as f32;
    }
    for a in params.alpha.iter_mut() {
        *a += (dice.next() * 0.2 - 0.1) as f32;
    }
    for b in params.beta.iter_mut() {
        *b += (dice.next() * 0.2 - 0.1) as f32;
    }
    let descending: Vec<u32> = ((n - dn) as u32..n as u32).collect();
    let mut readout = Readout::newborn(dn, Readout::default_steps(), seed);
    readout.weights.iter_mut().for_each(|w| *w *= 3.0);
    for (o, b) in readout.bias.iter_mut().enumerate() {
        *b = ((o * 7919) % 13) as f32 * 0.05 - 0.3;
    }
    SmallBrain { brain, base, params, readout, descending, read_steps: Readout::default_steps() }
}

/// One kind of learnable number, checked.
#[derive(Clone, Debug, Serialize)]
pub struct KindCheck {
    pub kind: String,
    pub checked: usize,
    /// max |hand − reference| / max(|hand|, |reference|, 1e-4 × the kind's largest), element by
    /// element: a gradient under 1e-4 of its kind's largest is measured against that scale, as
    /// finite differences in f64 carry about 1e-9 of rounding noise.
    pub max_relative_error: f64,
    /// max |hand − reference| / max |reference|: the error against the kind's scale (what an f32
    /// reference can be held to, its small gradients being noise).
    pub max_error_over_largest: f64,
    /// The largest gradient of this kind (what the errors are relative to).
    pub largest_gradient: f64,
}

/// The relative error the report uses: against the larger of the two, or `floor` where both are
/// smaller.
pub fn relative_error(a: f64, b: f64, floor: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(floor).max(1e-30)
}

fn kind(kind: &str, hand: &[f64], reference: &[f64]) -> KindCheck {
    let largest = reference.iter().fold(0f64, |m, g| m.max(g.abs()));
    KindCheck {
        kind: kind.to_string(),
        checked: hand.len(),
        max_relative_error: hand.iter().zip(reference).map(|(&a, &b)| relative_error(a, b, 1e-4 * largest)).fold(0.0, f64::max),
        max_error_over_largest: hand.iter().zip(reference).map(|(&a, &b)| (a - b).abs()).fold(0.0, f64::max)
            / reference.iter().fold(1e-30f64, |m, g| m.max(g.abs())),
        largest_gradient: hand.iter().fold(0f64, |m, g| m.max(g.abs())),
    }
}

/// The hand-written gradient in f64 for the small brain.
pub fn hand_gradient(
    s: &SmallBrain,
    boards: &[Planes],
    targets: &[Target],
    window: usize,
    p: &LearnableF64,
    heads: &Heads<f64>,
) -> Gradient<f64> {
    let m = s.base.model_f64(&s.brain, p);
    let x = super::eye_input::<f64>(&s.brain, boards);
    let rates = m.forward(&x, boards.len());
    gradient(&m, &x, &rates, boards.len(), heads, &Reader { descending: &s.descending, steps: &s.read_steps }, targets, window, false)
}

fn loss_at(s: &SmallBrain, boards: &[Planes], targets: &[Target], p: &LearnableF64, heads: &Heads<f64>) -> f64 {
    let m = s.base.model_f64(&s.brain, p);
    let x = super::eye_input::<f64>(&s.brain, boards);
    let rates = m.forward(&x, boards.len());
    let features = Reader { descending: &s.descending, steps: &s.read_steps }.features(&rates, s.brain.neurons, boards.len());
    super::readout_gradient(heads, &features, targets).0
}

/// Moves the `i`th number of one kind by `d`.
type Nudge = dyn Fn(&mut LearnableF64, &mut Heads<f64>, usize, f64);

/// Every kind against central finite differences (step `h`, f64, all 12 steps).
pub fn against_finite_differences(s: &SmallBrain, boards: &[Planes], targets: &[Target], h: f64) -> Vec<KindCheck> {
    let p = LearnableF64::from(&s.params);
    let heads = Heads::<f64>::of(&s.readout);
    let g = hand_gradient(s, boards, targets, STEPS, &p, &heads);
    let central = |nudge: &dyn Fn(&mut LearnableF64, &mut Heads<f64>, f64)| {
        let (mut p1, mut h1) = (p.clone(), heads.clone());
        nudge(&mut p1, &mut h1, h);
        let (mut p2, mut h2) = (p.clone(), heads.clone());
        nudge(&mut p2, &mut h2, -h);
        (loss_at(s, boards, targets, &p1, &h1) - loss_at(s, boards, targets, &p2, &h2)) / (2.0 * h)
    };
    let numeric = |count: usize, at: &Nudge| -> Vec<f64> { (0..count).map(|i| central(&|p, hd, d| at(p, hd, i, d))).collect() };
    let n = s.brain.neurons;
    vec![
        kind("connection strength θ", &g.theta, &numeric(g.theta.len(), &|p, _, i, d| p.theta[i] += d)),
        kind("neuron gain α", &g.alpha, &numeric(n, &|p, _, i, d| p.alpha[i] += d)),
        kind("neuron bias β", &g.beta, &numeric(n, &|p, _, i, d| p.beta[i] += d)),
        kind("readout weight", &g.readout_weights, &numeric(g.readout_weights.len(), &|_, hd, i, d| hd.weights[i] += d)),
        kind("readout bias", &g.readout_bias, &numeric(OUTPUTS, &|_, hd, i, d| hd.bias[i] += d)),
    ]
}

/// Every kind against burn's autodiff (ndarray backend, f32) of the same model over the last
/// `window` steps. The hand-written side runs in f64, so the errors are f32's.
pub fn against_burn(s: &SmallBrain, boards: &[Planes], targets: &[Target], window: usize) -> Result<Vec<KindCheck>> {
    let p = LearnableF64::from(&s.params);
    let heads = Heads::<f64>::of(&s.readout);
    let g = hand_gradient(s, boards, targets, window, &p, &heads);
    let b = burn_gradient(s, boards, targets, window)?;
    Ok(vec![
        kind("connection strength θ", &g.theta, &b.theta),
        kind("neuron gain α", &g.alpha, &b.alpha),
        kind("neuron bias β", &g.beta, &b.beta),
        kind("readout weight", &g.readout_weights, &b.readout_weights),
        kind("readout bias", &g.readout_bias, &b.readout_bias),
    ])
}

/// The gradient burn's autodiff finds for the small brain: W dense (n × n, zero where there is
/// no connection), the steps as tensor ops, the readout's loss as `burn_fit` builds it.
pub fn burn_gradient(s: &SmallBrain, boards: &[Planes], targets: &[Target], window: usize) -> Result<Gradient<f64>> {
    #[allow(deprecated)]
    let device = burn::tensor::Device::ndarray().autodiff();
    let (n, batch, brain) = (s.brain.neurons, boards.len(), &s.brain);
    let mut theta = vec![0f32; n * n];
    let mut sign = vec![0f32; n * n];
    for j in 0..n {
        for e in brain.row(j) {
            let i = brain.pre[e] as usize;
            theta[j * n + i] = s.params.theta[e];
            sign[j * n + i] = s.base.sign[e];
        }
    }
    let t2 = |v: Vec<f32>, shape: [usize; 2]| Tensor::<2>::from_data(TensorData::new(v, shape), &device);
    let t1 = |v: Vec<f32>| {
        let len = v.len();
        Tensor::<1>::from_data(TensorData::new(v, [len]), &device)
    };
    let theta = Param::from_tensor(t2(theta, [n, n]));
    let alpha = Param::from_tensor(t1(s.params.alpha.clone()));
    let beta = Param::from_tensor(t1(s.params.beta.clone()));
    let weight = (softplus(theta.val(), 1.0) * t2(sign, [n, n])).transpose();
    let x_eye = brain.eye_input(boards);
    let mut x = vec![0f32; batch * n];
    for (slot, cell) in brain.eye.iter().enumerate() {
        for b in 0..batch {
            x[b * n + cell.neuron as usize] = x_eye[slot * batch + b];
        }
    }
    let x = t2(x, [batch, n]);
    let leak = s.base.leak as f64;
    let first = STEPS - window.clamp(1, STEPS);
    let mut r = t2(vec![0f32; batch * n], [batch, n]);
    let mut read: Option<Tensor<2>> = None;
    let dn = Tensor::<1, Int>::from_data(
        TensorData::new(s.descending.iter().map(|&j| j as i64).collect::<Vec<_>>(), [s.descending.len()]),
        &device,
    );
    for t in 0..STEPS {
        let mu = t1(s.base.mu[t * n..(t + 1) * n].to_vec()).unsqueeze_dim::<2>(0);
        let sigma = t1(s.base.sigma[t * n..(t + 1) * n].to_vec());
        let gain = (alpha.val() / sigma).unsqueeze_dim::<2>(0);
        let u = r.clone().matmul(weight.clone()) + x.clone();
        let z = (u - mu) * gain + beta.val().unsqueeze_dim::<2>(0);
        r = relu(z.tanh()).mul_scalar(leak) + r.mul_scalar(1.0 - leak);
        if t + 1 == first {
            r = r.detach();
        }
        if s.read_steps.contains(&t) {
            let d = r.clone().select(1, dn.clone());
            read = Some(match read {
                Some(sum) => sum + d,
                None => d,
            });
        }
    }
    let features = read.ok_or_else(|| Error::Invalid("the readout reads no step".into()))?.div_scalar(s.read_steps.len() as f64);
    let heads = crate::burn_fit::HeadsModule::from_readout(&s.readout, &device);
    let mut batch_tensors = crate::burn_fit::Batch::new(
        vec![0f32; batch * s.descending.len()],
        &targets.iter().collect::<Vec<_>>(),
        s.descending.len(),
        &device,
    );
    batch_tensors.x = Some(features);
    let loss = heads.loss(&batch_tensors);
    let mut grads = loss.clone().backward();
    let read_back = |t: Option<Tensor<2>>, what: &str| -> Result<Vec<f64>> {
        let t = t.ok_or_else(|| Error::Invalid(format!("burn found no gradient for the {what}")))?;
        let v = t.into_data().try_into_vec::<f32>().map_err(|e| Error::Invalid(format!("reading burn's {what} gradient: {e:?}")))?;
        Ok(v.into_iter().map(f64::from).collect())
    };
    let dense = read_back(theta.val().grad_remove(&mut grads), "connections")?;
    let mut theta_grad = vec![0f64; brain.pre.len()];
    for j in 0..n {
        for e in brain.row(j) {
            theta_grad[e] = dense[j * n + brain.pre[e] as usize];
        }
    }
    let (readout_weights, readout_bias) = heads.gradients(&mut grads)?;
    Ok(Gradient {
        loss: read_back(Some(loss.unsqueeze_dim(0)), "loss")?[0],
        theta: theta_grad,
        alpha: read_back(alpha.val().grad_remove(&mut grads).map(|g| g.unsqueeze_dim(0)), "gains")?,
        beta: read_back(beta.val().grad_remove(&mut grads).map(|g| g.unsqueeze_dim(0)), "biases")?,
        readout_weights: readout_weights.into_iter().map(f64::from).collect(),
        readout_bias: readout_bias.into_iter().map(f64::from).collect(),
        blame: None,
    })
}

/// What `flychess gradcheck` prints.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub neurons: usize,
    pub connections: usize,
    pub positions: usize,
    pub finite_difference_step: f64,
    /// Hand-written (f64) against central finite differences, all 12 steps.
    pub finite_differences: Vec<KindCheck>,
    /// Hand-written (f64) against burn's autodiff (f32), window 6 and 12.
    pub burn_window_6: Vec<KindCheck>,
    pub burn_window_12: Vec<KindCheck>,
    /// Hand-written in f32 (what training runs) against f64, window 6.
    pub f32_against_f64: Vec<KindCheck>,
    /// Whether every finite-difference error is ≤ 1e-3.
    pub passed: bool,
}

/// The whole check on the small brain of `seed` with `targets`' positions.
pub fn report(seed: u64, boards: &[Planes], targets: &[Target]) -> Result<Report> {
    let s = small_brain(seed);
    let h = 1e-5;
    let finite_differences = against_finite_differences(&s, boards, targets, h);
    let p = LearnableF64::from(&s.params);
    let heads = Heads::<f64>::of(&s.readout);
    let exact = hand_gradient(&s, boards, targets, 6, &p, &heads);
    let mut brain32 = s.brain.clone();
    s.base.apply(&s.params, &mut brain32);
    let m32 = s.base.model_of_brain(&brain32, &s.params);
    let x = brain32.eye_input(boards);
    let rates = m32.forward(&x, boards.len());
    let g32 = gradient(
        &m32,
        &x,
        &rates,
        boards.len(),
        &Heads::<f32>::of(&s.readout),
        &Reader { descending: &s.descending, steps: &s.read_steps },
        targets,
        6,
        false,
    );
    let f = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let f32_against_f64 = vec![
        kind("connection strength θ", &f(&g32.theta), &exact.theta),
        kind("neuron gain α", &f(&g32.alpha), &exact.alpha),
        kind("neuron bias β", &f(&g32.beta), &exact.beta),
        kind("readout weight", &f(&g32.readout_weights), &exact.readout_weights),
        kind("readout bias", &f(&g32.readout_bias), &exact.readout_bias),
    ];
    let passed = finite_differences.iter().all(|k| k.max_relative_error <= 1e-3);
    Ok(Report {
        neurons: s.brain.neurons,
        connections: s.brain.connections(),
        positions: boards.len(),
        finite_difference_step: h,
        finite_differences,
        burn_window_6: against_burn(&s, boards, targets, 6)?,
        burn_window_12: against_burn(&s, boards, targets, STEPS)?,
        f32_against_f64,
        passed,
    })
}
