//! The backward pass on a GPU adapter (`shaders/brain_backward.wgsl`), checked against the CPU's
//! (`bptt::gradient`, its mirror). The brain's wiring (the CSR and its transpose) is uploaded
//! once; each call uploads what changes — the weights, the per-step constants, the neurons' α and
//! β, the eye input, the forward pass's rates of the steps the window reaches — runs the steps
//! from 12 back (`seed` where the readout reads, `rows`, `theta`, `transpose`), and reads back
//! θ̄, ᾱ and β̄. The readout's part is the CPU's (a few thousand numbers); θ̄'s softplus factor
//! is applied on the CPU. Sums run in a fixed order on both sides but not the same one (the
//! CPU's runs in eight lanes), so the two agree to f32's rounding, not bit for bit.

use super::{Forward, Gradient, Heads, Model, Reader, readout_gradient};
use crate::error::{Error, Result};
use flychess_brain::brain::gpu::{Device, pipeline, storage, storage_with, workgroups};
use flychess_brain::brain::{Brain, STEPS};
use flychess_fly::scoring::Target;

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
    pub fn gradient(
        &self,
        m: &Model<f32>,
        forward: Forward<f32>,
        heads: &Heads<f32>,
        reader: &Reader,
        targets: &[Target],
        window: usize,
    ) -> Result<Gradient<f32>> {
        let n = self.neurons;
        let Forward { rates, batch, .. } = forward;
        if m.brain.neurons != n || m.weight.len() != self.edges || rates.len() != STEPS * n * batch {
            return Err(Error::Invalid("the GPU backward pass was given another brain or batch".into()));
        }
        let features = reader.features(rates, n, batch);
        let (loss, readout_weights, readout_bias, gx) = readout_gradient(heads, &features, targets);
        let window = window.clamp(1, STEPS);
        let first = STEPS - window;
        let buffers = self.upload(m, forward, reader, &gx, first);
        // One x width for every dispatch: the widest any kernel needs (each wraps into y past it).
        let gx_all = [n, self.edges, n * batch, reader.descending.len() * batch]
            .into_iter()
            .map(|k| workgroups(k as u64, MAX_GROUPS_X).0)
            .max()
            .unwrap_or(1)
            .max(1);
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("backward") });
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
            self.encode_step(&mut encoder, &buffers, &p, first, reader.steps.contains(&t));
        }
        let values = self.read_back(encoder, &buffers)?;
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

    /// Everything one backward pass reads and writes on the device, uploaded: the model's numbers,
    /// the forward pass, the readout's seeds `gx`, and zeroed accumulators; the forward rates only
    /// of the steps a window from step `first` (0-based) reads.
    fn upload(&self, m: &Model<f32>, forward: Forward<f32>, reader: &Reader, gx: &[f32], first: usize) -> PassBuffers {
        let Forward { x, rates, batch } = forward;
        let n = self.neurons;
        let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let homeostasis: Vec<f32> = m.mu.iter().chain(&m.gain).copied().collect();
        let constants: Vec<f32> = m.alpha.iter().map(|a| 1.0 / a).chain(m.beta.iter().copied()).collect();
        let zeros = |len: usize| vec![0f32; len.max(1)];
        PassBuffers {
            weight: self.buffer("weight", bytemuck::cast_slice(&m.weight), wgpu::BufferUsages::empty()),
            homeostasis: self.buffer("homeostasis", bytemuck::cast_slice(&homeostasis), wgpu::BufferUsages::empty()),
            constants: self.buffer("neuron constants", bytemuck::cast_slice(&constants), wgpu::BufferUsages::empty()),
            eye: self.buffer("eye input", bytemuck::cast_slice(x), wgpu::BufferUsages::empty()),
            seeds: self.buffer("seeds", bytemuck::cast_slice(gx), wgpu::BufferUsages::empty()),
            descending: self.buffer("descending", bytemuck::cast_slice(reader.descending), wgpu::BufferUsages::empty()),
            rbar: self.buffer("rbar", bytemuck::cast_slice(&zeros(n * batch)), copy),
            ubar: self.buffer("ubar", bytemuck::cast_slice(&zeros(n * batch)), copy),
            next: self.buffer("next rbar", bytemuck::cast_slice(&zeros(n * batch)), copy),
            theta_grad: self.buffer("theta grad", bytemuck::cast_slice(&zeros(self.edges)), copy),
            neuron_grad: self.buffer("neuron grad", bytemuck::cast_slice(&zeros(2 * n)), copy),
            step_rates: (0..STEPS)
                .map(|s| {
                    (s + 1 >= first.max(1) && s + 1 < STEPS).then(|| {
                        self.buffer("rates", bytemuck::cast_slice(&rates[s * n * batch..(s + 1) * n * batch]), wgpu::BufferUsages::empty())
                    })
                })
                .collect(),
            dummy: self.buffer("no rates", &[0u8; 4], wgpu::BufferUsages::empty()),
            uniforms: self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("backward params"),
                size: UNIFORM_STRIDE * STEPS as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
    }

    /// One step back (`p.step`) of a window from step `first`: the readout's seeds where it
    /// reads (`seeded`), the rows, each connection's θ̄ (past the first step), and r̄ carried back
    /// through the transpose (past the window's first step).
    fn encode_step(&self, encoder: &mut wgpu::CommandEncoder, b: &PassBuffers, p: &BackParams, first: usize, seeded: bool) {
        let d = &self.device;
        let (t, n, batch, gx_all) = (p.step as usize, self.neurons, p.batch as usize, p.groups_x);
        self.queue.write_buffer(&b.uniforms, t as u64 * UNIFORM_STRIDE, bytemuck::bytes_of(p));
        let params = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &b.uniforms,
            offset: t as u64 * UNIFORM_STRIDE,
            size: wgpu::BufferSize::new(std::mem::size_of::<BackParams>() as u64),
        });
        let prev = if t > 0 { b.step_rates[t - 1].as_ref().unwrap_or(&b.dummy) } else { &b.dummy };
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
        if seeded {
            let bind = group(&self.seed, &[(8, &b.rbar), (17, &b.seeds), (18, &b.descending)]);
            dispatch(encoder, &self.seed, &bind, p.read as usize * batch);
        }
        let bind = group(
            &self.rows,
            &[
                (1, &self.row_start),
                (2, &self.pre),
                (3, &b.weight),
                (4, &self.eye_slot),
                (5, &b.eye),
                (6, &b.homeostasis),
                (7, prev),
                (8, &b.rbar),
                (9, &b.ubar),
                (11, &b.neuron_grad),
                (12, &b.constants),
            ],
        );
        dispatch(encoder, &self.rows, &bind, n);
        if t > 0 {
            let bind = group(&self.theta, &[(2, &self.pre), (7, prev), (9, &b.ubar), (10, &b.theta_grad), (13, &self.post)]);
            dispatch(encoder, &self.theta, &bind, self.edges);
        }
        if t > first {
            let bind = group(
                &self.transpose,
                &[
                    (3, &b.weight),
                    (8, &b.rbar),
                    (9, &b.ubar),
                    (13, &self.post),
                    (14, &self.sender_start),
                    (15, &self.by_sender),
                    (16, &b.next),
                ],
            );
            dispatch(encoder, &self.transpose, &bind, n * batch);
            encoder.copy_buffer_to_buffer(&b.next, 0, &b.rbar, 0, (n * batch * 4) as u64);
        }
    }

    /// Runs the encoded steps and reads back θ̄ (before the softplus factor), then ᾱ and β̄.
    fn read_back(&self, mut encoder: wgpu::CommandEncoder, b: &PassBuffers) -> Result<Vec<f32>> {
        let (d, n) = (&self.device, self.neurons);
        let staging = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("gradient read-back"),
            size: ((self.edges + 2 * n) * 4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(&b.theta_grad, 0, &staging, 0, (self.edges * 4) as u64);
        encoder.copy_buffer_to_buffer(&b.neuron_grad, 0, &staging, (self.edges * 4) as u64, (2 * n * 4) as u64);
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
        Ok(values)
    }
}

/// What one backward pass uploads and works in on the device.
struct PassBuffers {
    weight: wgpu::Buffer,
    /// Every step's μ, then every step's gain.
    homeostasis: wgpu::Buffer,
    /// Every neuron's 1/α, then its β.
    constants: wgpu::Buffer,
    eye: wgpu::Buffer,
    /// The readout's d loss / d feature (`gx`).
    seeds: wgpu::Buffer,
    descending: wgpu::Buffer,
    rbar: wgpu::Buffer,
    ubar: wgpu::Buffer,
    next: wgpu::Buffer,
    theta_grad: wgpu::Buffer,
    neuron_grad: wgpu::Buffer,
    /// The forward rates after each step the window reads from (t − 1 for t in the window).
    step_rates: Vec<Option<wgpu::Buffer>>,
    /// Bound where a step has no previous rates.
    dummy: wgpu::Buffer,
    /// Each step's `BackParams`, `UNIFORM_STRIDE` apart.
    uniforms: wgpu::Buffer,
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
