//! The readout's four heads as a burn module and one training step with burn's autodiff and Adam:
//! what `train::fit` runs batch after batch. The loss is the one `train` states (cross-entropy over
//! each position's legal moves against the target shares, plus the squared value error) built from
//! tensor ops: the heads are one matrix product, a move's score is its from + to + promotion
//! outputs gathered from the flattened heads, positions are padded to the batch's most legal moves
//! (padding scores −1e9, share 0) and the softmax is a log-softmax along each row. burn runs it on
//! its ndarray backend on the CPU, or on its wgpu backend where there is a GPU (`FitOn`); the
//! hand-written gradient in `train` is the reference both are tested against.

use burn::module::{Module, Param};
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer, OptimizerRecord};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor, TensorData};

use crate::error::{Error, Result};
use flychess_fly::readout::{FROM, OUTPUTS, Readout, TO};
use flychess_fly::scoring::Target;

/// Score of a padding slot: its softmax share underflows to exactly 0.
const PADDING: f32 = -1e9;

/// The four heads: `weight[output, input]` (the `Readout` layout) and `bias[output]`.
#[derive(Module, Debug)]
pub struct HeadsModule {
    /// None for a readout without inputs (the blind baseline: only the biases learn).
    weight: Option<Param<Tensor<2>>>,
    bias: Param<Tensor<1>>,
}

/// A batch of positions as tensors: the features and, per position, its legal moves padded to the
/// batch's longest list.
pub(crate) struct Batch {
    /// None when the readout has no inputs (the brain's gradient check puts its own features here).
    pub(crate) x: Option<Tensor<2>>,
    from: Tensor<1, Int>,
    to: Tensor<1, Int>,
    promotion: Tensor<1, Int>,
    padding: Tensor<2>,
    share: Tensor<2>,
    value: Tensor<1>,
    positions: usize,
    width: usize,
}

impl Batch {
    /// `x` is moved into the tensor (no copy); the targets are only read.
    pub(crate) fn new(x: Vec<f32>, targets: &[&Target], inputs: usize, device: &Device) -> Batch {
        let n = targets.len();
        let width = targets.iter().map(|t| t.legal.len()).max().unwrap_or(0).max(1);
        let mut from = vec![0i64; n * width];
        let mut to = vec![0i64; n * width];
        let mut promotion = vec![0i64; n * width];
        let mut padding = vec![PADDING; n * width];
        let mut share = vec![0f32; n * width];
        for (i, t) in targets.iter().enumerate() {
            let base = (i * OUTPUTS) as i64;
            for (k, &(f, tt, p)) in t.legal.iter().enumerate() {
                let slot = i * width + k;
                from[slot] = base + f as i64;
                to[slot] = base + (FROM + tt as usize) as i64;
                promotion[slot] = base + (FROM + TO + p as usize) as i64;
                padding[slot] = 0.0;
                share[slot] = t.share[k];
            }
        }
        let ints = |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v, [n * width]), device);
        let floats = |v: Vec<f32>, shape: [usize; 2]| Tensor::<2>::from_data(TensorData::new(v, shape), device);
        Batch {
            x: (inputs > 0).then(|| floats(x, [n, inputs])),
            from: ints(from),
            to: ints(to),
            promotion: ints(promotion),
            padding: floats(padding, [n, width]),
            share: floats(share, [n, width]),
            value: Tensor::<1>::from_data(TensorData::new(targets.iter().map(|t| t.value).collect::<Vec<f32>>(), [n]), device),
            positions: n,
            width,
        }
    }
}

/// The parameters' fixed ids: Adam's saved state (keyed by parameter id) fits every module built
/// from a readout, so a fit resumed from a checkpoint goes on with its moments.
const WEIGHT: u64 = 1;
const BIAS: u64 = 2;

fn with_id<T: burn::module::Parameter>(mut p: Param<T>, id: u64) -> Param<T> {
    p.id = burn::module::ParamId::from(id);
    p
}

impl HeadsModule {
    pub fn from_readout(r: &Readout, device: &Device) -> HeadsModule {
        HeadsModule {
            weight: (r.inputs > 0).then(|| {
                with_id(Param::from_tensor(Tensor::<2>::from_data(TensorData::new(r.weights.clone(), [OUTPUTS, r.inputs]), device)), WEIGHT)
            }),
            bias: with_id(Param::from_tensor(Tensor::<1>::from_data(TensorData::new(r.bias.clone(), [OUTPUTS]), device)), BIAS),
        }
    }

    /// The same readout (read steps and inputs from `like`) with this module's weights.
    pub fn to_readout(&self, like: &Readout) -> Result<Readout> {
        let read =
            |t: Tensor<2>| t.into_data().try_into_vec::<f32>().map_err(|e| Error::Invalid(format!("reading the fitted heads back: {e:?}")));
        let mut r = like.clone();
        if let Some(w) = &self.weight {
            r.weights = read(w.val())?;
        }
        r.bias = read(self.bias.val().unsqueeze_dim(0))?;
        Ok(r)
    }

    /// The heads' gradients (weights, biases) out of a backward pass's.
    pub(crate) fn gradients(&self, grads: &mut burn::tensor::Gradients) -> Result<(Vec<f32>, Vec<f32>)> {
        let read = |t: Option<Tensor<2>>, what: &str| -> Result<Vec<f32>> {
            let t = t.ok_or_else(|| Error::Invalid(format!("no gradient for the {what}")))?;
            t.into_data().try_into_vec::<f32>().map_err(|e| Error::Invalid(format!("reading the {what} gradient: {e:?}")))
        };
        let gw = match &self.weight {
            Some(w) => read(w.val().grad_remove(grads), "weights")?,
            None => Vec::new(),
        };
        let gb = read(self.bias.val().grad_remove(grads).map(|g| g.unsqueeze_dim(0)), "biases")?;
        Ok((gw, gb))
    }

    /// Mean loss of a batch (a one-element tensor, on the autodiff tape when the device has one).
    pub(crate) fn loss(&self, b: &Batch) -> Tensor<1> {
        let n = b.positions as f32;
        let bias = self.bias.val().unsqueeze_dim::<2>(0);
        let out = match (&self.weight, &b.x) {
            (Some(w), Some(x)) => x.clone().matmul(w.val().transpose()) + bias,
            _ => bias.repeat_dim(0, b.positions),
        };
        let flat = out.clone().reshape([b.positions * OUTPUTS]);
        let scores = flat.clone().select(0, b.from.clone()) + flat.clone().select(0, b.to.clone()) + flat.select(0, b.promotion.clone());
        let scores = scores.reshape([b.positions, b.width]) + b.padding.clone();
        let cross_entropy = (log_softmax(scores, 1) * b.share.clone()).sum().neg() / n;
        let value = out.slice([0..b.positions, OUTPUTS - 1..OUTPUTS]).reshape([b.positions]).tanh();
        let value_error = (value - b.value.clone()).powi_scalar(2).sum() / n;
        cross_entropy + value_error
    }
}

pub use crate::burn_device::FitOn;

/// A fit in progress: the module, Adam's state and the device they live on.
pub struct BurnFit {
    device: Device,
    module: HeadsModule,
    adam: ModuleOptimizer,
    inputs: usize,
}

/// Adam as `train` specifies it (β₁ 0.9, β₂ 0.999, ε 1e-8), fresh state.
fn adam() -> ModuleOptimizer {
    AdamConfig::new().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).init()
}

fn scalar(t: Tensor<1>) -> Result<f64> {
    t.into_data()
        .try_into_vec::<f32>()
        .ok()
        .and_then(|v| v.first().copied())
        .map(f64::from)
        .ok_or_else(|| Error::Invalid("the loss tensor is empty".into()))
}

impl BurnFit {
    /// A fit starting from `start` on burn's CPU backend (ndarray) with autodiff.
    pub fn on_cpu(start: &Readout) -> BurnFit {
        BurnFit::on(start, FitOn::Cpu).expect("the CPU backend is always there")
    }

    /// A fit starting from `start` where `on` says.
    pub fn on(start: &Readout, on: FitOn) -> Result<BurnFit> {
        Ok(BurnFit::new(start, on.device()?))
    }

    pub fn new(start: &Readout, device: Device) -> BurnFit {
        BurnFit { module: HeadsModule::from_readout(start, &device), device, adam: adam(), inputs: start.inputs }
    }

    /// A fit starting from `start` with Adam's state as [`BurnFit::adam_state`] saved it (None: a
    /// fresh Adam). A state that cannot be read is an error, never a panic.
    pub fn resume(start: &Readout, on: FitOn, adam_state: Option<&[u8]>) -> Result<BurnFit> {
        let mut fit = BurnFit::on(start, on)?;
        if let Some(bytes) = adam_state {
            crate::burn_device::default_device_that_exists();
            // burn reads and loads the record with `expect`s of its own (a damaged record can reach
            // them, as the fuzz test found): a panic there is an error here.
            let bytes = bytes.to_vec();
            let record = std::panic::catch_unwind(move || OptimizerRecord::from_bytes(burn::tensor::Bytes::from_bytes_vec(bytes)))
                .map_err(|_| Error::Invalid("Adam's saved state is damaged (reading it failed)".into()))?
                .map_err(|e| Error::Invalid(format!("Adam's saved state is damaged: {e:?}")))?;
            fit.adam = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| adam().load_record(record)))
                .map_err(|_| Error::Invalid("Adam's saved state is damaged (loading it failed)".into()))?;
        }
        Ok(fit)
    }

    /// Adam's state (its moments and step count), as bytes for a checkpoint.
    pub fn adam_state(&self) -> Result<Vec<u8>> {
        let bytes = self.adam.to_record().into_bytes().map_err(|e| Error::Invalid(format!("saving Adam's state: {e:?}")))?;
        Ok(bytes.to_vec())
    }

    /// Goes back to `r` with a fresh Adam (after a pass that did not improve).
    pub fn restart_from(&mut self, r: &Readout) {
        self.module = HeadsModule::from_readout(r, &self.device);
        self.adam = adam();
    }

    /// One Adam step on a batch; returns the batch's mean loss before the step.
    pub fn step(&mut self, x: Vec<f32>, targets: &[&Target], learning_rate: f32) -> Result<f64> {
        let batch = Batch::new(x, targets, self.inputs, &self.device);
        let loss = self.module.loss(&batch);
        let grads = GradientsParams::from_grads(loss.backward(), &self.module);
        self.module = self.adam.step(learning_rate as f64, self.module.clone(), grads);
        scalar(loss)
    }

    /// Mean loss and its gradient (weights, biases) of a batch at the current weights, as
    /// `scoring::gradient` computes them by hand.
    pub fn gradient(&self, x: &[f32], targets: &[Target]) -> Result<(f64, Vec<f32>, Vec<f32>)> {
        let batch = Batch::new(x.to_vec(), &targets.iter().collect::<Vec<_>>(), self.inputs, &self.device);
        let loss = self.module.loss(&batch);
        let mut grads = loss.backward();
        let (gw, gb) = self.module.gradients(&mut grads)?;
        Ok((scalar(loss)?, gw, gb))
    }

    pub fn readout(&self, like: &Readout) -> Result<Readout> {
        self.module.to_readout(like)
    }
}
