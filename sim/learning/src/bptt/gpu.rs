//! The backward pass on a GPU adapter (`shaders/brain_backward.wgsl`), checked against the CPU's
//! (`bptt::gradient`, its mirror). The brain's wiring (the CSR and its transpose) is uploaded
//! once; each call uploads what changes — the weights, the per-step constants, the neurons' α and
//! β, the eye input, the forward pass's rates of the steps the window reaches — runs the steps
//! from 12 back (`seed` where the readout reads, `rows`, `theta`, `transpose`), and reads back
//! θ̄, ᾱ and β̄. The readout's part is the CPU's (a few thousand numbers); θ̄'s softplus factor
//! is applied on the CPU. Sums run in a fixed order on both sides but not the same one (the
//! CPU's runs in eight lanes), so the two agree to f32's rounding, not bit for bit.

use super::{Gradient, Heads, Model, Reader, readout_gradient};
use crate::error::{Error, Result};
use crate::train::Target;
use flychess_brain::brain::gpu::{Device, pipeline, storage, storage_with, workgroups};
use flychess_brain::brain::{Brain, STEPS};

pub const SHADER: &str =
    concat!(include_str!("../../../../shaders/brain_backward.wgsl"), include_str!("../../../../shaders/rate_math.wgsl"));

const UNIFORM_STRIDE: u64 = 256;
const MAX_GROUPS_X: u32 = 65_535;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct BackParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,
    has_prev: u32,
    edges: u32,
    read: u32,
    zero: u32,
    beta: f32,
    leak: f32,
    read_share: f32,
    _pad: f32,
}

/// The backward pass's kernels and the brain's wiring on a device.
pub struct GpuBackward {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pub adapter: String,
    seed: wgpu::ComputePipeline,
    rows: wgpu::ComputePipeline,
    theta: wgpu::ComputePipeline,
    transpose: wgpu::ComputePipeline,
    row_start: wgpu::Buffer,
    pre: wgpu::Buffer,
    post: wgpu::Buffer,
    eye_slot: wgpu::Buffer,
    sender_start: wgpu::Buffer,
    by_sender: wgpu::Buffer,
    neurons: usize,
    edges: usize,
}

impl GpuBackward {
    /// The kernels compiled and `brain`'s wiring uploaded (`base` holds its transpose).
    pub fn new(device: Device, brain: &Brain, base: &super::Base) -> Result<GpuBackward> {
        let d = &device.device;
        let scopes =
            [wgpu::ErrorFilter::Validation, wgpu::ErrorFilter::OutOfMemory, wgpu::ErrorFilter::Internal].map(|f| d.push_error_scope(f));
        let g = GpuBackward {
            seed: pipeline(d, "brain_backward.wgsl seed", SHADER, "seed"),
            rows: pipeline(d, "brain_backward.wgsl rows", SHADER, "rows"),
            theta: pipeline(d, "brain_backward.wgsl theta", SHADER, "theta"),
            transpose: pipeline(d, "brain_backward.wgsl transpose", SHADER, "transpose"),
            row_start: storage(d, "row_start", bytemuck::cast_slice(&brain.row_start)),
            pre: storage(d, "pre", bytemuck::cast_slice(&brain.pre)),
            post: storage(d, "post", bytemuck::cast_slice(&base.post)),
            eye_slot: storage(d, "eye_slot", bytemuck::cast_slice(&brain.eye_slot)),
            sender_start: storage(d, "sender_start", bytemuck::cast_slice(&base.sender_start)),
            by_sender: storage(d, "by_sender", bytemuck::cast_slice(&base.by_sender)),
            neurons: brain.neurons,
            edges: brain.connections(),
            adapter: device.adapter_name.clone(),
            device: device.device,
            queue: device.queue,
        };
        for scope in scopes.into_iter().rev() {
            if let Some(e) = pollster::block_on(scope.pop()) {
                return Err(Error::Invalid(format!("the backward pass could not start on this device: {e}")));
            }
        }
        Ok(g)
    }

    fn buffer(&self, label: &str, bytes: &[u8], extra: wgpu::BufferUsages) -> wgpu::Buffer {
        storage_with(&self.device, label, bytes, extra)
    }

    /// The same gradient as `bptt::gradient` (f32, no blame kept), with the brain's part on the GPU.
    #[allow(clippy::too_many_arguments)]
    pub fn gradient(
        &self,
        m: &Model<f32>,
        x: &[f32],
        rates: &[f32],
        batch: usize,
        heads: &Heads<f32>,
        reader: &Reader,
        targets: &[Target],
        window: usize,
    ) -> Result<Gradient<f32>> {
        let n = self.neurons;
        if m.brain.neurons != n || m.weight.len() != self.edges || rates.len() != STEPS * n * batch {
            return Err(Error::Invalid("the GPU backward pass was given another brain or batch".into()));
        }
        let features = reader.features(rates, n, batch);
        let (loss, readout_weights, readout_bias, gx) = readout_gradient(heads, &features, targets);
        let window = window.clamp(1, STEPS);
        let first = STEPS - window;
        let d = &self.device;
        let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let weight = self.buffer("weight", bytemuck::cast_slice(&m.weight), wgpu::BufferUsages::empty());
        let homeostasis: Vec<f32> = m.mu.iter().chain(&m.gain).copied().collect();
        let homeostasis = self.buffer("homeostasis", bytemuck::cast_slice(&homeostasis), wgpu::BufferUsages::empty());
        let constants: Vec<f32> = m.alpha.iter().map(|a| 1.0 / a).chain(m.beta.iter().copied()).collect();
        let constants = self.buffer("neuron constants", bytemuck::cast_slice(&constants), wgpu::BufferUsages::empty());
        let eye = self.buffer("eye input", bytemuck::cast_slice(x), wgpu::BufferUsages::empty());
        let seeds = self.buffer("seeds", bytemuck::cast_slice(&gx), wgpu::BufferUsages::empty());
        let descending = self.buffer("descending", bytemuck::cast_slice(reader.descending), wgpu::BufferUsages::empty());
        let zeros = |len: usize| vec![0f32; len.max(1)];
        let rbar = self.buffer("rbar", bytemuck::cast_slice(&zeros(n * batch)), copy);
        let ubar = self.buffer("ubar", bytemuck::cast_slice(&zeros(n * batch)), copy);
        let next = self.buffer("next rbar", bytemuck::cast_slice(&zeros(n * batch)), copy);
        let theta_grad = self.buffer("theta grad", bytemuck::cast_slice(&zeros(self.edges)), copy);
        let neuron_grad = self.buffer("neuron grad", bytemuck::cast_slice(&zeros(2 * n)), copy);
        // The forward rates after each step the window reads from (t − 1 for t in the window).
        let step_rates: Vec<Option<wgpu::Buffer>> = (0..STEPS)
            .map(|s| {
                (s + 1 >= first.max(1) && s + 1 < STEPS).then(|| {
                    self.buffer("rates", bytemuck::cast_slice(&rates[s * n * batch..(s + 1) * n * batch]), wgpu::BufferUsages::empty())
                })
            })
            .collect();
        let dummy = self.buffer("no rates", &[0u8; 4], wgpu::BufferUsages::empty());
        let uniforms = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("backward params"),
            size: UNIFORM_STRIDE * STEPS as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // One x width for every dispatch: the widest any kernel needs (each wraps into y past it).
        let gx_all = [n, self.edges, n * batch, reader.descending.len() * batch]
            .into_iter()
            .map(|k| workgroups(k as u64, MAX_GROUPS_X).0)
            .max()
            .unwrap_or(1)
            .max(1);
        let mut encoder = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("backward") });
        for t in (first..STEPS).rev() {
            let p = BackParams {
                neurons: n as u32,
                batch: batch as u32,
                step: t as u32,
                groups_x: gx_all,
                has_prev: u32::from(t > 0),
                edges: self.edges as u32,
                read: reader.descending.len() as u32,
                zero: 0,
                beta: m.beta0,
                leak: m.leak,
                read_share: 1.0 / reader.steps.len().max(1) as f32,
                _pad: 0.0,
            };
            self.queue.write_buffer(&uniforms, t as u64 * UNIFORM_STRIDE, bytemuck::bytes_of(&p));
            let params = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &uniforms,
                offset: t as u64 * UNIFORM_STRIDE,
                size: wgpu::BufferSize::new(std::mem::size_of::<BackParams>() as u64),
            });
            let prev = if t > 0 { step_rates[t - 1].as_ref().unwrap_or(&dummy) } else { &dummy };
            let group = |pipeline: &wgpu::ComputePipeline, entries: &[(u32, &wgpu::Buffer)]| {
                let mut all = vec![wgpu::BindGroupEntry { binding: 0, resource: params.clone() }];
                all.extend(entries.iter().map(|(b, buf)| wgpu::BindGroupEntry { binding: *b, resource: buf.as_entire_binding() }));
                d.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &all })
            };
            let dispatch =
                |encoder: &mut wgpu::CommandEncoder, pipeline: &wgpu::ComputePipeline, bind: &wgpu::BindGroup, invocations: usize| {
                    let groups = (invocations as u64).div_ceil(64);
                    let (x, y) = (groups.min(gx_all as u64) as u32, groups.div_ceil(gx_all.max(1) as u64) as u32);
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(x.max(1), y.max(1), 1);
                };
            if reader.steps.contains(&t) {
                let b = group(&self.seed, &[(8, &rbar), (17, &seeds), (18, &descending)]);
                dispatch(&mut encoder, &self.seed, &b, reader.descending.len() * batch);
            }
            let b = group(
                &self.rows,
                &[
                    (1, &self.row_start),
                    (2, &self.pre),
                    (3, &weight),
                    (4, &self.eye_slot),
                    (5, &eye),
                    (6, &homeostasis),
                    (7, prev),
                    (8, &rbar),
                    (9, &ubar),
                    (11, &neuron_grad),
                    (12, &constants),
                ],
            );
            dispatch(&mut encoder, &self.rows, &b, n);
            if t > 0 {
                let b = group(&self.theta, &[(2, &self.pre), (7, prev), (9, &ubar), (10, &theta_grad), (13, &self.post)]);
                dispatch(&mut encoder, &self.theta, &b, self.edges);
            }
            if t > first {
                let b = group(
                    &self.transpose,
                    &[(3, &weight), (8, &rbar), (9, &ubar), (13, &self.post), (14, &self.sender_start), (15, &self.by_sender), (16, &next)],
                );
                dispatch(&mut encoder, &self.transpose, &b, n * batch);
                encoder.copy_buffer_to_buffer(&next, 0, &rbar, 0, (n * batch * 4) as u64);
            }
        }
        let staging = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gradient read-back"),
            size: ((self.edges + 2 * n) * 4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(&theta_grad, 0, &staging, 0, (self.edges * 4) as u64);
        encoder.copy_buffer_to_buffer(&neuron_grad, 0, &staging, (self.edges * 4) as u64, (2 * n * 4) as u64);
        let index = self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        d.poll(wgpu::PollType::Wait { submission_index: Some(index), timeout: None })
            .map_err(|e| Error::Invalid(format!("GPU wait failed: {e}")))?;
        rx.recv()
            .map_err(|_| Error::Invalid("the GPU never answered the read-back".into()))?
            .map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
        let values: Vec<f32> = {
            let view = staging.get_mapped_range(..).map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
            bytemuck::cast_slice(&view).to_vec()
        };
        staging.unmap();
        let mut theta: Vec<f32> = values[..self.edges].to_vec();
        for (g, &dw) in theta.iter_mut().zip(&m.dweight) {
            *g *= dw;
        }
        Ok(Gradient {
            loss,
            theta,
            alpha: values[self.edges..self.edges + n].to_vec(),
            beta: values[self.edges + n..].to_vec(),
            readout_weights,
            readout_bias,
            blame: None,
        })
    }
}

/// Brain training on a GPU: the forward pass on the GPU engine (retuned to the brain's numbers
/// before each batch, every rate read back) and the backward pass here, on one device.
pub struct GpuTrainer {
    pub engine: flychess_brain::brain::gpu::GpuEngine,
    pub backward: GpuBackward,
}

impl GpuTrainer {
    pub fn new(device: Device, brain: &Brain, base: &super::Base) -> Result<GpuTrainer> {
        let engine = flychess_brain::brain::gpu::GpuEngine::new(device.device.clone(), device.queue.clone(), brain)?;
        Ok(GpuTrainer { engine, backward: GpuBackward::new(device, brain, base)? })
    }

    /// The trainer where `choice` says: the GPU engine's adapter rules (auto: a hardware GPU only).
    pub fn for_choice(
        choice: flychess_brain::brain::simulator::EngineChoice,
        brain: &Brain,
        base: &super::Base,
    ) -> Result<Option<GpuTrainer>> {
        use flychess_brain::brain::simulator::EngineChoice;
        if choice == EngineChoice::Cpu {
            return Ok(None);
        }
        match flychess_brain::brain::gpu::headless_device() {
            Ok(d) if d.hardware || choice == EngineChoice::Gpu => Ok(Some(GpuTrainer::new(d, brain, base)?)),
            Ok(_) => Ok(None),
            Err(e) if choice == EngineChoice::Gpu => Err(e.into()),
            Err(_) => Ok(None),
        }
    }
}
