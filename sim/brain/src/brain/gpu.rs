//! The GPU engine: the same 12 steps as `cpu`, as a WGSL compute kernel (`shaders/brain_step.wgsl`)
//! run through wgpu, for a batch of any size on any adapter. The brain is uploaded once. A batch
//! is cut into *slabs* of positions small enough that one slab's rates of all 12 steps fit in one
//! binding of the device (128 MiB on lavapipe: 17 positions of the default brain; 2 GiB on an
//! H200: 273); the slabs go through one after another over the same buffers, queued without
//! waiting. Slabs of a multiple of 4 positions think four positions to an invocation (`step4`).
//!
//! Three ways to think:
//! - `think` (a batch that fits one slab): all 12 steps stay in one `wgpu::Buffer` (layout in
//!   `brain/mod.rs`) that the brain view binds directly when it shares the device (in the app:
//!   eframe's own device and queue); `read_rates` copies it back for readouts and tests.
//! - `think_rates` (any batch): every step of every position back on the CPU, slab by slab.
//! - `read` (any batch): only the rates a reader wants (some neurons at some steps, e.g. the
//!   descending neurons of steps 9–12) are copied out of each slab on the GPU
//!   (`shaders/brain_read.wgsl`) and come back in groups, each while the next group thinks: what
//!   the DN cache and the ladder use.
//!
//! On the command line a headless device is made; with no adapter at all, callers fall back to
//! the CPU engine (`brain::simulator`).

mod mushroom;

use std::time::Instant;

use wgpu::util::DeviceExt;

use super::{Brain, Rates, STEPS};
use crate::chess::Planes;
use crate::error::{Error, Result};

pub use mushroom::SparseInput;

pub const SHADER: &str = concat!(include_str!("../../../../shaders/brain_step.wgsl"), include_str!("../../../../shaders/rate_math.wgsl"));
pub const READ_SHADER: &str = include_str!("../../../../shaders/brain_read.wgsl");
const WORKGROUP: u32 = 64;
const MAX_GROUPS_X: u32 = 65_535;
/// Uniform blocks are placed this many bytes apart: the largest `min_uniform_buffer_offset_alignment`
/// WebGPU allows an adapter to ask for.
const UNIFORM_STRIDE: u64 = 256;
/// Positions per slab unless the device binds fewer. On an H200 (`flychess bench`'s
/// `gpu.slab_sweep`, batch 4096, four positions an invocation): slabs of 8 gave 1,396
/// positions/s, 16 3,161, 32 6,367, 64 11,329, 128 17,055, 256 20,092 (one run): larger dispatches
/// keep more of the GPU busy through each step's tail of long rows. 256 positions of the default
/// brain's 12 steps are 2.0 GB, under the 2 GiB a binding holds there; smaller devices get what fits.
pub const DEFAULT_SLAB: usize = 256;
/// The most positions whose readings come back in one piece (`GpuEngine::read`).
const READ_GROUP: usize = 1024;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StepParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,
    alpha: f32,
    beta: f32,
    leak: f32,
    /// Always 0 (the shader's `product` hides its products from fusing behind it).
    zero: u32,
    /// `step_rows`, `step4_rows`: how many rows the step's list holds.
    rows: u32,
    _pad: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ReadParams {
    neurons: u32,
    slab: u32,
    positions: u32,
    first: u32,
    wanted: u32,
    read_steps: u32,
    groups_x: u32,
    _pad: u32,
}

/// A device and queue, with what the adapter said about itself.
pub struct Device {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter_name: String,
    /// A real GPU (not a software rasteriser such as lavapipe).
    pub hardware: bool,
}

/// In a page (wasm32) there is no headless GPU engine: an adapter is asked for without blocking
/// there, and the page thinks on the CPU engine.
#[cfg(target_arch = "wasm32")]
const NO_HEADLESS_GPU: &str = "no headless GPU engine in a page: it thinks on the CPU";

/// The best adapter there is, without a window: a real GPU (high performance preferred), else
/// Mesa lavapipe. In a page, an error (`NO_HEADLESS_GPU`).
#[cfg(target_arch = "wasm32")]
pub fn best_adapter() -> Result<wgpu::Adapter> {
    Err(Error::Invalid(NO_HEADLESS_GPU.into()))
}

/// The best adapter there is, without a window: a real GPU (high performance preferred), else
/// Mesa lavapipe.
#[cfg(not(target_arch = "wasm32"))]
pub fn best_adapter() -> Result<wgpu::Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    pollster::block_on(
        instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }),
    )
    .map_err(|e| Error::Invalid(format!("no GPU adapter: {e}")))
}

/// A headless device: in a page (wasm32), an error (`NO_HEADLESS_GPU`), before anything blocks.
#[cfg(target_arch = "wasm32")]
pub fn headless_device() -> Result<Device> {
    Err(Error::Invalid(NO_HEADLESS_GPU.into()))
}

/// A headless device on the best adapter there is (a real GPU, else Mesa lavapipe), with the
/// adapter's own limits so slabs can be as large as it binds.
#[cfg(not(target_arch = "wasm32"))]
pub fn headless_device() -> Result<Device> {
    let adapter = best_adapter()?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("flychess headless"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| Error::Invalid(format!("could not open the GPU {}: {e}", info.name)))?;
    Ok(Device {
        device,
        queue,
        adapter_name: format!("{} ({:?})", info.name, info.backend),
        hardware: info.device_type != wgpu::DeviceType::Cpu,
    })
}

/// Where a think's time went, summed over thinks since `take_phases` (filled only while
/// `set_profiling(true)`: each phase is then waited for before the next starts, which costs the
/// overlap a plain think has).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Eye input worked out and written to the device.
    pub upload_s: f64,
    /// The 12 steps of every slab, and the copying-out of what the reader wants.
    pub kernel_s: f64,
    /// Mapping the results and bringing them to the CPU.
    pub readback_s: f64,
}

/// The brain on a device, and the rates buffer of the current slab size.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    step_pipeline: wgpu::ComputePipeline,
    /// The same step four positions to an invocation, for slabs of a multiple of 4 positions.
    step4_pipeline: wgpu::ComputePipeline,
    read_pipeline: wgpu::ComputePipeline,
    neurons: usize,
    brain_bytes: u64,
    row_start: wgpu::Buffer,
    pre: wgpu::Buffer,
    weight: wgpu::Buffer,
    eye_slot: wgpu::Buffer,
    homeostasis: wgpu::Buffer,
    eye: Vec<crate::eye::EyeCell>,
    params: super::Params,
    /// The buffers of the current slab size.
    current: Option<Slab>,
    /// Workgroups along x before the dispatch wraps into y (the device's 65,535 by default).
    max_groups_x: u32,
    /// The most positions the device binds in one slab.
    slab_fits: usize,
    /// The most positions a slab takes: `DEFAULT_SLAB`, or what `set_slab_limit` asked, at most
    /// `slab_fits`.
    slab_limit: usize,
    /// The most bytes one binding (or buffer) may have on this device.
    binding_limit: u64,
    profiling: bool,
    phases: Phases,
    /// Slabs of a multiple of 4 positions go through `step4` (off: always `step`; the bench
    /// compares the two).
    four_at_a_time: bool,
    /// The dopamine fly's mushroom body, run between the steps when set (`set_sparse_input`).
    body: Option<mushroom::Body>,
    /// The same steps over the rows a reader needs only (`step_rows`, `step4_rows`).
    step_rows_pipeline: wgpu::ComputePipeline,
    step4_rows_pipeline: wgpu::ComputePipeline,
    /// Who hears whom, to work out which rows a reader needs (`cpu::NeededRows`).
    wiring: super::cpu::Hearing,
    /// `read` works out only the rows its reader needs at each step (the default; off: every row,
    /// for measuring the difference).
    rows_only: bool,
}

/// Where one group of slabs' readings go on the device and come back through.
struct ReadSet {
    out: wgpu::Buffer,
    staging: wgpu::Buffer,
    /// One per slab of the group (each with its own parameter block).
    bind_groups: Vec<wgpu::BindGroup>,
}

/// A slab's buffers: all 12 steps of `positions` positions, their eye input, and one bind group
/// per step (each with its own parameter block).
struct Slab {
    positions: usize,
    /// Thought by `step4` (positions a multiple of 4), else by `step`.
    by_four: bool,
    rates: wgpu::Buffer,
    eye_input: wgpu::Buffer,
    uniforms: wgpu::Buffer,
    steps: Vec<wgpu::BindGroup>,
    /// The mushroom body's part, when the engine has one.
    body: Option<mushroom::SlabBody>,
    /// The rows-only steps of the readers met on this slab (by neurons and first read step).
    row_plans: Vec<(Vec<u32>, usize, std::sync::Arc<RowPlan>)>,
}

/// A reader's rows-only steps on a slab: for each step where the reader needs fewer than all
/// rows, the bind group over that step's row list and the dispatch it takes.
struct RowPlan {
    steps: Vec<Option<(wgpu::BindGroup, (u32, u32))>>,
    /// The row lists and parameter blocks (the bind groups name them).
    _buffers: Vec<wgpu::Buffer>,
}

pub fn storage(device: &wgpu::Device, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    storage_with(device, label, bytes, wgpu::BufferUsages::empty())
}

/// A storage buffer that can also be `extra` (written again: `COPY_DST`).
pub fn storage_with(device: &wgpu::Device, label: &str, bytes: &[u8], extra: wgpu::BufferUsages) -> wgpu::Buffer {
    // Empty arrays still need a binding of at least 4 bytes.
    let bytes = if bytes.is_empty() { &[0u8; 4][..] } else { bytes };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage: wgpu::BufferUsages::STORAGE | extra,
    })
}

pub fn pipeline(device: &wgpu::Device, label: &str, source: &str, entry: &str) -> wgpu::ComputePipeline {
    let module =
        device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Parameter block `k` of a uniform buffer holding one `T` every `UNIFORM_STRIDE` bytes.
fn uniform_block<T>(buffer: &wgpu::Buffer, k: usize) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: k as u64 * UNIFORM_STRIDE,
        size: wgpu::BufferSize::new(std::mem::size_of::<T>() as u64),
    })
}

/// A dispatch of `invocations` in workgroups of 64, wrapped into a second dimension after
/// `max_x` workgroups: (x, y).
pub fn workgroups(invocations: u64, max_x: u32) -> (u32, u32) {
    let groups = invocations.div_ceil(WORKGROUP as u64);
    let x = groups.min(max_x as u64) as u32;
    (x, groups.div_ceil(max_x as u64) as u32)
}

fn bytes_per_position(neurons: usize, eye: usize) -> (u64, u64) {
    ((STEPS * neurons * 4) as u64, (eye.max(1) * 4) as u64)
}

impl GpuEngine {
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, brain: &Brain) -> Result<GpuEngine> {
        let limits = device.limits();
        let binding_limit = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let biggest = (brain.connections() * 4) as u64;
        if biggest > binding_limit {
            return Err(Error::Invalid(format!(
                "the device binds at most {binding_limit} bytes per buffer, the brain's connections need {biggest}"
            )));
        }
        let (rates_per, eye_per) = bytes_per_position(brain.neurons, brain.eye.len());
        let slab_fits = (binding_limit / rates_per.max(eye_per)) as usize;
        if slab_fits == 0 {
            return Err(Error::Invalid(format!(
                "the device binds at most {binding_limit} bytes per buffer; one position's 12 steps need {rates_per}"
            )));
        }
        // A driver that cannot compile the kernels or hold the brain says so here (an error, which
        // callers answer with the CPU engine) instead of panicking later.
        let scopes = [wgpu::ErrorFilter::Validation, wgpu::ErrorFilter::OutOfMemory, wgpu::ErrorFilter::Internal]
            .map(|f| device.push_error_scope(f));
        let homeostasis: Vec<f32> = brain.homeostasis().mu.iter().chain(brain.gains()).copied().collect();
        let brain_bytes = (std::mem::size_of_val(&brain.row_start[..])
            + std::mem::size_of_val(&brain.pre[..])
            + std::mem::size_of_val(&brain.weight[..])
            + std::mem::size_of_val(&brain.eye_slot[..])
            + std::mem::size_of_val(&homeostasis[..])) as u64;
        let engine = GpuEngine {
            step_pipeline: pipeline(&device, "brain_step.wgsl", SHADER, "step"),
            step4_pipeline: pipeline(&device, "brain_step.wgsl (4 positions an invocation)", SHADER, "step4"),
            read_pipeline: pipeline(&device, "brain_read.wgsl", READ_SHADER, "copy_out"),
            step_rows_pipeline: pipeline(&device, "brain_step.wgsl (needed rows)", SHADER, "step_rows"),
            step4_rows_pipeline: pipeline(&device, "brain_step.wgsl (needed rows, 4 positions an invocation)", SHADER, "step4_rows"),
            row_start: storage(&device, "row_start", bytemuck::cast_slice(&brain.row_start)),
            pre: storage(&device, "pre", bytemuck::cast_slice(&brain.pre)),
            weight: storage_with(&device, "weight", bytemuck::cast_slice(&brain.weight), wgpu::BufferUsages::COPY_DST),
            eye_slot: storage(&device, "eye_slot", bytemuck::cast_slice(&brain.eye_slot)),
            homeostasis: storage_with(&device, "homeostasis", bytemuck::cast_slice(&homeostasis), wgpu::BufferUsages::COPY_DST),
            eye: brain.eye.clone(),
            params: brain.params,
            neurons: brain.neurons,
            brain_bytes,
            device,
            queue,
            current: None,
            max_groups_x: MAX_GROUPS_X,
            slab_fits,
            slab_limit: DEFAULT_SLAB.min(slab_fits),
            binding_limit,
            profiling: false,
            phases: Phases::default(),
            four_at_a_time: true,
            body: None,
            wiring: super::cpu::Hearing::of(brain),
            rows_only: true,
        };
        // Scopes pop innermost first.
        for scope in scopes.into_iter().rev() {
            if let Some(e) = pollster::block_on(scope.pop()) {
                return Err(Error::Invalid(format!("the GPU engine could not start on this device: {e}")));
            }
        }
        Ok(engine)
    }

    /// Takes the weights and per-step constants of `brain` (the same wiring, tuned by brain
    /// training: `Brain::tune`) for the next thinks.
    pub fn retune(&mut self, brain: &Brain) -> Result<()> {
        if brain.neurons != self.neurons || (brain.connections() * 4) as u64 != self.weight.size().max(4) && brain.connections() > 0 {
            return Err(Error::Invalid("retune takes a brain of the same wiring".into()));
        }
        let homeostasis: Vec<f32> = brain.homeostasis().mu.iter().chain(brain.gains()).copied().collect();
        self.queue.write_buffer(&self.weight, 0, bytemuck::cast_slice(&brain.weight));
        self.queue.write_buffer(&self.homeostasis, 0, bytemuck::cast_slice(&homeostasis));
        Ok(())
    }

    /// The device and queue the engine runs on (another kernel can share them).
    pub fn device_and_queue(&self) -> (wgpu::Device, wgpu::Queue) {
        (self.device.clone(), self.queue.clone())
    }

    /// Wraps the dispatch into a second dimension after `n` workgroups (tests use a small `n` to
    /// exercise the path a large batch takes on a real device).
    pub fn set_max_groups_x(&mut self, n: u32) {
        self.max_groups_x = n.clamp(1, MAX_GROUPS_X);
    }

    /// At most `n` positions per slab (at least 1, at most what the device binds); returns the
    /// limit in force.
    pub fn set_slab_limit(&mut self, n: usize) -> usize {
        self.slab_limit = n.clamp(1, self.slab_fits);
        self.slab_limit
    }

    /// The most positions a slab takes now, and the most the device could bind.
    pub fn slab_limits(&self) -> (usize, usize) {
        (self.slab_limit, self.slab_fits)
    }

    /// How a batch is cut: (positions per slab, slabs). Slabs are as even as they can be, and
    /// from 8 positions on a multiple of 4 (the faster kernel's), the last one padded.
    pub fn plan(&self, batch: usize) -> (usize, usize) {
        let slabs = batch.div_ceil(self.slab_limit).max(1);
        let even = batch.div_ceil(slabs);
        let slab = match even.next_multiple_of(4) {
            _ if even < 8 => even,
            up if up <= self.slab_limit => up,
            _ => even / 4 * 4,
        };
        (slab, batch.div_ceil(slab))
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// Bytes of one slab's rates buffer for `positions` positions (all 12 steps).
    pub fn rates_bytes(&self, positions: usize) -> u64 {
        (STEPS * self.neurons * positions * 4) as u64
    }

    /// Device memory a think of `batch` boards holds: the brain, the slab's buffers and, for a
    /// read of `read_floats` floats a position, its output and read-back buffers (two of each
    /// when the batch comes back in more than one group).
    pub fn device_bytes(&self, batch: usize, read_floats: usize) -> u64 {
        let (slab, _) = self.plan(batch);
        let group = self.read_group(slab, read_floats);
        let sets = if batch > group { 2 } else { 1 };
        let out = (group.min(batch) * read_floats * 4) as u64;
        self.brain_bytes
            + self.rates_bytes(slab)
            + (self.eye.len() * slab * 4) as u64
            + STEPS as u64 * UNIFORM_STRIDE
            + sets * 2 * out
            + self.body_bytes(slab)
    }

    /// Whether slabs of a multiple of 4 positions think four positions to an invocation (the
    /// default) or one (the same rates; for measuring the difference).
    pub fn set_four_at_a_time(&mut self, on: bool) {
        if on != self.four_at_a_time {
            self.four_at_a_time = on;
            self.current = None;
        }
    }

    pub fn set_profiling(&mut self, on: bool) {
        self.profiling = on;
    }

    /// The phases measured since the last call (see `Phases`).
    pub fn take_phases(&mut self) -> Phases {
        std::mem::take(&mut self.phases)
    }

    /// The buffers of a slab of `positions` positions (kept while the size stays). A device that
    /// cannot hold them says so here instead of failing later.
    fn prepare(&mut self, positions: usize) -> Result<()> {
        if self.current.as_ref().is_some_and(|c| c.positions == positions) {
            return Ok(());
        }
        // The old slab's buffers go first, so a device never holds two.
        self.current = None;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let rates = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rates (12 steps of a slab)"),
            size: self.rates_bytes(positions),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::VERTEX,
            mapped_at_creation: false,
        });
        let eye_input = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("eye input"),
            size: ((self.eye.len() * positions).max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("step params"),
            size: STEPS as u64 * UNIFORM_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let by_four = self.four_at_a_time && positions.is_multiple_of(4);
        // `step4` sees the eye input and the rates as vec4 (bindings 8 and 9), `step` as f32 (5, 7).
        let (layout, eye_binding, rates_binding) = if by_four {
            (self.step4_pipeline.get_bind_group_layout(0), 8, 9)
        } else {
            (self.step_pipeline.get_bind_group_layout(0), 5, 7)
        };
        let steps = (0..STEPS)
            .map(|t| {
                let params = uniform_block::<StepParams>(&uniforms, t);
                let buffers = [
                    (1, &self.row_start),
                    (2, &self.pre),
                    (3, &self.weight),
                    (4, &self.eye_slot),
                    (eye_binding, &eye_input),
                    (6, &self.homeostasis),
                    (rates_binding, &rates),
                ];
                let entries: Vec<wgpu::BindGroupEntry> = std::iter::once(wgpu::BindGroupEntry { binding: 0, resource: params })
                    .chain(buffers.iter().map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() }))
                    .collect();
                self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("brain step"), layout: &layout, entries: &entries })
            })
            .collect();
        let body = self.slab_body(positions, &rates, &eye_input);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Invalid(format!(
                "the GPU could not hold a slab of {positions} positions ({} MB): {e}",
                self.rates_bytes(positions) >> 20
            )));
        }
        self.current = Some(Slab { positions, by_four, rates, eye_input, uniforms, steps, body, row_plans: Vec::new() });
        Ok(())
    }

    /// Prepares the slab `batch` is cut into; where the device runs out of memory for it, the
    /// slab limit halves until a slab fits. Returns (positions per slab, slabs).
    fn prepare_for(&mut self, batch: usize) -> Result<(usize, usize)> {
        loop {
            let (slab, slabs) = self.plan(batch);
            match self.prepare(slab) {
                Ok(()) => return Ok((slab, slabs)),
                Err(e) if self.slab_limit > 1 => {
                    self.slab_limit /= 2;
                    tracing::warn!("{e}; slabs of at most {} positions from now on", self.slab_limit);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Step `t`'s parameter block for a slab of `positions`, dispatched `groups_x` wide, over
    /// `rows` rows (all the brain's for `step`, `step4`).
    fn step_params(&self, positions: usize, t: usize, groups_x: u32, rows: usize) -> StepParams {
        StepParams {
            neurons: self.neurons as u32,
            batch: positions as u32,
            step: t as u32,
            groups_x,
            alpha: self.params.alpha,
            beta: self.params.beta,
            leak: self.params.leak,
            zero: 0,
            rows: rows as u32,
            _pad: [0; 3],
        }
    }

    /// Writes the 12 steps' parameters of the current slab (before the slab's first submission).
    fn write_step_params(&self) -> (u32, u32) {
        let cur = self.current.as_ref().expect("prepared");
        let per_neuron = if cur.by_four { cur.positions / 4 } else { cur.positions };
        let (gx, gy) = workgroups((self.neurons * per_neuron) as u64, self.max_groups_x);
        let mut block = vec![0u8; STEPS * UNIFORM_STRIDE as usize];
        for t in 0..STEPS {
            let p = self.step_params(cur.positions, t, gx, self.neurons);
            let at = t * UNIFORM_STRIDE as usize;
            block[at..at + std::mem::size_of::<StepParams>()].copy_from_slice(bytemuck::bytes_of(&p));
        }
        self.queue.write_buffer(&cur.uniforms, 0, &block);
        (gx, gy)
    }

    /// Writes a slab's boards (padded with blank boards to the slab's size) as the eye input.
    fn upload_boards(&mut self, boards: &[Planes]) -> Result<()> {
        let started = Instant::now();
        let cur = self.current.as_ref().expect("prepared");
        let mut padded = boards.to_vec();
        padded.resize(cur.positions, [[false; 64]; 12]);
        let x = crate::eye::batch_input(&self.eye, &padded);
        if !x.is_empty() {
            self.queue.write_buffer(&cur.eye_input, 0, bytemuck::cast_slice(&x));
        }
        if self.profiling {
            self.queue.submit(std::iter::empty::<wgpu::CommandBuffer>());
            self.wait()?;
            self.phases.upload_s += started.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Records the 12 steps of the current slab into one compute pass (WebGPU orders the
    /// dispatches of a pass: each step sees the one before).
    /// With `rows`, a step where the reader needs fewer than all rows works out only those.
    fn encode_steps(&self, encoder: &mut wgpu::CommandEncoder, (gx, gy): (u32, u32), rows: Option<&RowPlan>) {
        let cur = self.current.as_ref().expect("prepared");
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("brain steps"), timestamp_writes: None });
        let (all, some) =
            if cur.by_four { (&self.step4_pipeline, &self.step4_rows_pipeline) } else { (&self.step_pipeline, &self.step_rows_pipeline) };
        for (t, group) in cur.steps.iter().enumerate() {
            if let Some(body) = &cur.body {
                // The mushroom body's cut before the step and its MBONs after it, each step.
                self.encode_body(&mut pass, body, cur.positions, t, true);
            }
            match rows.and_then(|p| p.steps[t].as_ref()) {
                Some((needed, (rx, ry))) => {
                    pass.set_pipeline(some);
                    pass.set_bind_group(0, needed, &[]);
                    pass.dispatch_workgroups(*rx, *ry, 1);
                }
                None => {
                    pass.set_pipeline(all);
                    pass.set_bind_group(0, group, &[]);
                    pass.dispatch_workgroups(gx, gy, 1);
                }
            }
            if let Some(body) = &cur.body {
                self.encode_body(&mut pass, body, cur.positions, t, false);
            }
        }
    }

    /// Whether `read` works out only the rows its reader needs (the default) or every row (the
    /// same readings; for measuring the difference).
    pub fn set_rows_only(&mut self, on: bool) {
        self.rows_only = on;
    }

    /// The rows-only steps of a reader of `neurons` from step `first_read` on, on the current
    /// slab (made once per slab and reader). None where every step needs every row, or with a
    /// mushroom body (its plastic synapses are not in the wiring the needed rows follow).
    fn row_plan(&mut self, neurons: &[u32], first_read: usize) -> Option<std::sync::Arc<RowPlan>> {
        if !self.rows_only || self.body.is_some() {
            return None;
        }
        let cur = self.current.as_ref()?;
        if let Some((_, _, plan)) = cur.row_plans.iter().find(|(n, f, _)| n == neurons && *f == first_read) {
            return Some(plan.clone());
        }
        let needed = self.wiring.needed_rows(neurons, first_read);
        let per_row = if cur.by_four { cur.positions / 4 } else { cur.positions };
        let layout =
            if cur.by_four { self.step4_rows_pipeline.get_bind_group_layout(0) } else { self.step_rows_pipeline.get_bind_group_layout(0) };
        let (eye_binding, rates_binding) = if cur.by_four { (8, 9) } else { (5, 7) };
        let uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("needed-rows step params"),
            size: STEPS as u64 * UNIFORM_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut block = vec![0u8; STEPS * UNIFORM_STRIDE as usize];
        let mut buffers = Vec::new();
        let mut steps = Vec::new();
        for t in 0..STEPS {
            let Some(mask) = needed.rows_at(t) else {
                steps.push(None);
                continue;
            };
            let rows: Vec<u32> = (0..self.neurons as u32).filter(|&j| mask[j as usize]).collect();
            // Where nearly every row is needed, every row is worked out (one lookup an
            // invocation saved; a row no reader needs is worked out from whatever its senders'
            // rows hold, and nothing reads it).
            if rows.len() * 10 > self.neurons * 9 {
                steps.push(None);
                continue;
            }
            let (rx, ry) = workgroups((rows.len() * per_row) as u64, self.max_groups_x);
            let p = self.step_params(cur.positions, t, rx, rows.len());
            let at = t * UNIFORM_STRIDE as usize;
            block[at..at + std::mem::size_of::<StepParams>()].copy_from_slice(bytemuck::bytes_of(&p));
            let list = storage(&self.device, "needed rows", bytemuck::cast_slice(&rows));
            let entries = [
                wgpu::BindGroupEntry { binding: 0, resource: uniform_block::<StepParams>(&uniforms, t) },
                wgpu::BindGroupEntry { binding: 1, resource: self.row_start.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: self.pre.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: self.weight.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 4, resource: self.eye_slot.as_entire_binding() },
                wgpu::BindGroupEntry { binding: eye_binding, resource: cur.eye_input.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 6, resource: self.homeostasis.as_entire_binding() },
                wgpu::BindGroupEntry { binding: rates_binding, resource: cur.rates.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 10, resource: list.as_entire_binding() },
            ];
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("brain step (needed rows)"),
                layout: &layout,
                entries: &entries,
            });
            // An empty list (no row needed) still dispatches nothing harmful: no invocation passes
            // its bounds check.
            steps.push(Some((group, (rx.max(1), ry.max(1)))));
            buffers.push(list);
        }
        self.queue.write_buffer(&uniforms, 0, &block);
        buffers.push(uniforms);
        let plan = std::sync::Arc::new(RowPlan { steps, _buffers: buffers });
        self.current.as_mut()?.row_plans.push((neurons.to_vec(), first_read, plan.clone()));
        Some(plan)
    }

    /// Submits `encoder`; while profiling, waits for it and counts the time as kernel time.
    fn submit(&mut self, encoder: wgpu::CommandEncoder) -> Result<wgpu::SubmissionIndex> {
        let started = Instant::now();
        let index = self.queue.submit([encoder.finish()]);
        if self.profiling {
            self.wait()?;
            self.phases.kernel_s += started.elapsed().as_secs_f64();
        }
        Ok(index)
    }

    /// Runs the 12 steps for `boards`, which must fit in one slab (`slab_limits().1`; the view's
    /// single position always does), and returns the device buffer holding all their rates.
    pub fn think(&mut self, boards: &[Planes]) -> Result<&wgpu::Buffer> {
        let batch = boards.len();
        if batch == 0 {
            return Err(Error::Invalid("no boards to think about".into()));
        }
        if batch > self.slab_fits {
            return Err(Error::Invalid(format!(
                "batch {batch} needs a {}-byte rates buffer; this device binds at most {} (think_rates and read take any batch)",
                self.rates_bytes(batch),
                self.binding_limit
            )));
        }
        self.prepare(batch)?;
        let groups = self.write_step_params();
        self.upload_boards(boards)?;
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("brain think") });
        self.encode_steps(&mut encoder, groups, None);
        self.submit(encoder)?;
        Ok(&self.current.as_ref().expect("prepared").rates)
    }

    /// Waits until the device has finished everything submitted.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
            .map(|_| ())
            .map_err(|e| Error::Invalid(format!("GPU wait failed: {e}")))
    }

    /// Maps `staging` once submission `after` (None: everything submitted) is done and hands its
    /// bytes to `f`.
    fn map_read<T>(&mut self, staging: &wgpu::Buffer, after: Option<wgpu::SubmissionIndex>, f: impl FnOnce(&[u8]) -> T) -> Result<T> {
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::Wait { submission_index: after, timeout: None })
            .map_err(|e| Error::Invalid(format!("GPU wait failed: {e}")))?;
        rx.recv()
            .map_err(|_| Error::Invalid("the GPU never answered the read-back".into()))?
            .map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
        let out = {
            let view = staging.get_mapped_range(..).map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
            f(&view)
        };
        staging.unmap();
        if self.profiling {
            self.phases.readback_s += started.elapsed().as_secs_f64();
        }
        Ok(out)
    }

    fn staging(&self, label: &str, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Copies the current slab's rates back to the CPU (after `think`; tests and readouts, the
    /// viewer never does).
    pub fn read_rates(&mut self) -> Result<Rates> {
        let positions = self.current.as_ref().ok_or_else(|| Error::Invalid("nothing thought yet".into()))?.positions;
        let size = self.rates_bytes(positions);
        let staging = self.staging("rates read-back", size);
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read-back") });
        encoder.copy_buffer_to_buffer(&self.current.as_ref().expect("prepared").rates, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let data = self.map_read(&staging, None, |bytes| bytemuck::cast_slice::<u8, f32>(bytes).to_vec())?;
        Ok(Rates { batch: positions, neurons: self.neurons, data })
    }

    /// A reader's neurons and steps must belong to this brain.
    fn check_reader(&self, neurons: &[u32], steps: &[usize]) -> Result<()> {
        if let Some(&j) = neurons.iter().find(|&&j| j as usize >= self.neurons) {
            return Err(Error::Invalid(format!("neuron {j} is not in this brain of {}", self.neurons)));
        }
        if let Some(&t) = steps.iter().find(|&&t| t >= STEPS) {
            return Err(Error::Invalid(format!("step {t} is past the last (0-based {})", STEPS - 1)));
        }
        Ok(())
    }

    /// The rates of `neurons` at `steps` (0-based) of the slab `think` left on the device, without
    /// thinking again and without copying the rest back: what a readout needs while the view
    /// draws the whole buffer. Same layout as `read`: `[(position · steps.len() + s) ·
    /// neurons.len() + k]`.
    pub fn read_current(&mut self, neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        let positions = self.current.as_ref().ok_or_else(|| Error::Invalid("nothing thought yet".into()))?.positions;
        if neurons.is_empty() || steps.is_empty() {
            return Ok(Vec::new());
        }
        self.check_reader(neurons, steps)?;
        let per_position = neurons.len() * steps.len();
        let out_bytes = (positions * per_position * 4) as u64;
        let params_buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read params"),
            size: UNIFORM_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let (gx, gy) = workgroups((positions * per_position) as u64, self.max_groups_x);
        let p = ReadParams {
            neurons: self.neurons as u32,
            slab: positions as u32,
            positions: positions as u32,
            first: 0,
            wanted: neurons.len() as u32,
            read_steps: steps.len() as u32,
            groups_x: gx,
            _pad: 0,
        };
        self.queue.write_buffer(&params_buffer, 0, bytemuck::bytes_of(&p));
        let neuron_buffer = storage(&self.device, "read neurons", bytemuck::cast_slice(neurons));
        let steps32: Vec<u32> = steps.iter().map(|&t| t as u32).collect();
        let step_buffer = storage(&self.device, "read steps", bytemuck::cast_slice(&steps32));
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readings"),
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = self.staging("readings read-back", out_bytes);
        let layout = self.read_pipeline.get_bind_group_layout(0);
        let rates = &self.current.as_ref().expect("checked above").rates;
        let entries = [
            wgpu::BindGroupEntry { binding: 0, resource: uniform_block::<ReadParams>(&params_buffer, 0) },
            wgpu::BindGroupEntry { binding: 1, resource: neuron_buffer.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: step_buffer.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 3, resource: rates.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 4, resource: out.as_entire_binding() },
        ];
        let bind_group =
            self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("brain read"), layout: &layout, entries: &entries });
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read the current think") });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("brain read"), timestamp_writes: None });
            pass.set_pipeline(&self.read_pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, out_bytes);
        let index = self.queue.submit([encoder.finish()]);
        self.map_read(&staging, Some(index), |bytes| bytemuck::cast_slice::<u8, f32>(bytes).to_vec())
    }

    /// All 12 steps of every position of `boards`, any batch: slab by slab, each copied back and
    /// put in its place in the usual layout.
    pub fn think_rates(&mut self, boards: &[Planes]) -> Result<Rates> {
        let batch = boards.len();
        if batch == 0 {
            return Err(Error::Invalid("no boards to think about".into()));
        }
        let (slab, slabs) = self.prepare_for(batch)?;
        let groups = self.write_step_params();
        let n = self.neurons;
        let mut data = vec![0f32; STEPS * n * batch];
        let size = self.rates_bytes(slab);
        let staging = self.staging("rates read-back", size);
        for k in 0..slabs {
            let first = k * slab;
            let part = &boards[first..(first + slab).min(batch)];
            self.upload_boards(part)?;
            let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("brain think") });
            self.encode_steps(&mut encoder, groups, None);
            encoder.copy_buffer_to_buffer(&self.current.as_ref().expect("prepared").rates, 0, &staging, 0, size);
            self.submit(encoder)?;
            self.map_read(&staging, None, |bytes| {
                let rates: &[f32] = bytemuck::cast_slice(bytes);
                for row in 0..STEPS * n {
                    data[row * batch + first..row * batch + first + part.len()]
                        .copy_from_slice(&rates[row * slab..row * slab + part.len()]);
                }
            })?;
        }
        Ok(Rates { batch, neurons: n, data })
    }

    /// Positions whose readings come back together: whole slabs, at most `READ_GROUP` positions
    /// (so a large batch's read-back overlaps the next group's think) and what one output binding
    /// holds.
    fn read_group(&self, slab: usize, floats: usize) -> usize {
        let fit = ((self.binding_limit / (floats.max(1) * 4) as u64) as usize).min(READ_GROUP);
        (fit / slab).max(1) * slab
    }

    /// The rates of `neurons` at `steps` (0-based) for every board, any batch:
    /// `[(position · steps.len() + s) · neurons.len() + k]`. Each slab's readings are copied out on
    /// the GPU; they come back once per group of slabs, each group while the next one thinks.
    pub fn read(&mut self, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        let batch = boards.len();
        if batch == 0 || neurons.is_empty() || steps.is_empty() {
            return Ok(Vec::new());
        }
        self.check_reader(neurons, steps)?;
        let per_position = neurons.len() * steps.len();
        let (slab, _) = self.plan(batch);
        if (slab * per_position * 4) as u64 > self.binding_limit {
            return Err(Error::Invalid(format!(
                "{per_position} readings a position for {slab} positions do not fit one binding of {} bytes",
                self.binding_limit
            )));
        }
        let (slab, slabs) = self.prepare_for(batch)?;
        let groups = self.write_step_params();
        let first_read = steps.iter().copied().min().unwrap_or(0);
        let row_plan = self.row_plan(neurons, first_read);
        let group = self.read_group(slab, per_position).min(slab * slabs);
        let slabs_per_group = group / slab;
        let neuron_buffer = storage(&self.device, "read neurons", bytemuck::cast_slice(neurons));
        let steps32: Vec<u32> = steps.iter().map(|&t| t as u32).collect();
        let step_buffer = storage(&self.device, "read steps", bytemuck::cast_slice(&steps32));
        let out_bytes = (group * per_position * 4) as u64;
        let read_uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read params"),
            size: slabs_per_group as u64 * UNIFORM_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // Two sets of output and read-back buffers: a group's readings come back while the next
        // group thinks.
        let layout = self.read_pipeline.get_bind_group_layout(0);
        let sets: Vec<ReadSet> = (0..if batch > group { 2 } else { 1 })
            .map(|_| {
                let out = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readings"),
                    size: out_bytes,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let bind_groups = (0..slabs_per_group)
                    .map(|s| {
                        let params = uniform_block::<ReadParams>(&read_uniforms, s);
                        let rates = &self.current.as_ref().expect("prepared").rates;
                        let rest = [&neuron_buffer, &step_buffer, rates, &out];
                        let entries: Vec<wgpu::BindGroupEntry> = std::iter::once(wgpu::BindGroupEntry { binding: 0, resource: params })
                            .chain(
                                rest.iter()
                                    .enumerate()
                                    .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() }),
                            )
                            .collect();
                        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: Some("brain read"),
                            layout: &layout,
                            entries: &entries,
                        })
                    })
                    .collect();
                ReadSet { staging: self.staging("readings read-back", out_bytes), out, bind_groups }
            })
            .collect();
        let mut result = vec![0f32; batch * per_position];
        // (first position, positions, set, submission) of the group whose readings are on their way.
        let mut pending: Option<(usize, usize, usize, wgpu::SubmissionIndex)> = None;
        for (g, group_start) in (0..batch).step_by(group).enumerate() {
            let in_group = group.min(batch - group_start);
            let set = &sets[g % sets.len()];
            // Every slab of the group gets its own parameter block (where its readings go). The
            // write lands after the previous group's dispatches, which were submitted before it.
            let mut block = vec![0u8; slabs_per_group * UNIFORM_STRIDE as usize];
            let mut dispatches = Vec::new();
            for s in 0..in_group.div_ceil(slab) {
                let positions = slab.min(in_group - s * slab);
                let (gx, gy) = workgroups((positions * per_position) as u64, self.max_groups_x);
                let p = ReadParams {
                    neurons: self.neurons as u32,
                    slab: slab as u32,
                    positions: positions as u32,
                    first: (s * slab) as u32,
                    wanted: neurons.len() as u32,
                    read_steps: steps.len() as u32,
                    groups_x: gx,
                    _pad: 0,
                };
                let at = s * UNIFORM_STRIDE as usize;
                block[at..at + std::mem::size_of::<ReadParams>()].copy_from_slice(bytemuck::bytes_of(&p));
                dispatches.push((gx, gy));
            }
            self.queue.write_buffer(&read_uniforms, 0, &block);
            let mut last = None;
            for (s, &(gx, gy)) in dispatches.iter().enumerate() {
                let first = group_start + s * slab;
                self.upload_boards(&boards[first..(first + slab).min(batch)])?;
                let mut encoder =
                    self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("brain think and read") });
                self.encode_steps(&mut encoder, groups, row_plan.as_deref());
                {
                    let mut pass =
                        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("brain read"), timestamp_writes: None });
                    pass.set_pipeline(&self.read_pipeline);
                    pass.set_bind_group(0, &set.bind_groups[s], &[]);
                    pass.dispatch_workgroups(gx, gy, 1);
                }
                if s + 1 == dispatches.len() {
                    encoder.copy_buffer_to_buffer(&set.out, 0, &set.staging, 0, (in_group * per_position * 4) as u64);
                }
                last = Some(self.submit(encoder)?);
            }
            let submitted = last.expect("a group has at least one slab");
            if let Some((start, count, k, index)) = pending.replace((group_start, in_group, g % sets.len(), submitted)) {
                let target = &mut result[start * per_position..(start + count) * per_position];
                self.map_read(&sets[k].staging, Some(index), |bytes| {
                    target.copy_from_slice(&bytemuck::cast_slice::<u8, f32>(bytes)[..target.len()])
                })?;
            }
        }
        if let Some((start, count, k, index)) = pending {
            let target = &mut result[start * per_position..(start + count) * per_position];
            self.map_read(&sets[k].staging, Some(index), |bytes| {
                target.copy_from_slice(&bytemuck::cast_slice::<u8, f32>(bytes)[..target.len()])
            })?;
        }
        Ok(result)
    }
}
