//! The GPU engine: the same 12 steps as `cpu`, as a WGSL compute kernel (`shaders/brain_step.wgsl`)
//! run through wgpu. The brain is uploaded once; each think writes all 12 steps of rates into one
//! `wgpu::Buffer` (layout in `brain/mod.rs`) that stays on the device: the brain view binds it
//! directly when it shares the device (in the app: eframe's own device and queue), and only
//! tests and readouts copy it back. On the command line a headless device is made; with no
//! adapter at all, callers fall back to the CPU engine.

use wgpu::util::DeviceExt;

use super::{Brain, Rates, STEPS};
use crate::chess::Planes;
use crate::error::{Error, Result};

pub const SHADER: &str = include_str!("../../../shaders/brain_step.wgsl");
const WORKGROUP: u32 = 64;
const MAX_GROUPS_X: u32 = 65_535;

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
    _pad: f32,
}

/// A device and queue, with what the adapter said about itself.
pub struct Device {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter_name: String,
}

/// The best adapter there is, without a window: a real GPU (high performance preferred), else
/// Mesa lavapipe.
pub fn best_adapter() -> Result<wgpu::Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))
    .map_err(|e| Error::Invalid(format!("no GPU adapter: {e}")))
}

/// A headless device on the best adapter there is (a real GPU, else Mesa lavapipe), with the
/// adapter's own limits so large batches fit in one binding.
pub fn headless_device() -> Result<Device> {
    let adapter = best_adapter()?;
    let info = adapter.get_info();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("flychess headless"),
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| Error::Invalid(format!("could not open the GPU {}: {e}", info.name)))?;
    Ok(Device { device, queue, adapter_name: format!("{} ({:?})", info.name, info.backend) })
}

/// The brain on a device, and the rates buffer of the last think.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    neurons: usize,
    row_start: wgpu::Buffer,
    pre: wgpu::Buffer,
    weight: wgpu::Buffer,
    eye_slot: wgpu::Buffer,
    homeostasis: wgpu::Buffer,
    eye: Vec<crate::eye::EyeCell>,
    params: super::Params,
    /// (batch, rates buffer, eye input buffer, uniform buffer, bind group) of the current size.
    current: Option<Batch>,
    /// Workgroups along x before the dispatch wraps into y (the device's 65,535 by default).
    max_groups_x: u32,
}

struct Batch {
    batch: usize,
    rates: wgpu::Buffer,
    eye_input: wgpu::Buffer,
    uniforms: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

fn storage(device: &wgpu::Device, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    // Empty arrays still need a binding of at least 4 bytes.
    let bytes = if bytes.is_empty() { &[0u8; 4][..] } else { bytes };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: bytes, usage: wgpu::BufferUsages::STORAGE })
}

impl GpuEngine {
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, brain: &Brain) -> Result<GpuEngine> {
        let limits = device.limits();
        let biggest = (brain.connections() * 4) as u64;
        if biggest > limits.max_storage_buffer_binding_size {
            return Err(Error::Invalid(format!(
                "the device binds at most {} bytes per buffer, the brain's connections need {biggest}",
                limits.max_storage_buffer_binding_size
            )));
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("brain_step.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("brain step"),
            layout: None,
            module: &module,
            entry_point: Some("step"),
            compilation_options: Default::default(),
            cache: None,
        });
        let homeostasis: Vec<f32> = brain.homeostasis().mu.iter().chain(brain.gains()).copied().collect();
        Ok(GpuEngine {
            row_start: storage(&device, "row_start", bytemuck::cast_slice(&brain.row_start)),
            pre: storage(&device, "pre", bytemuck::cast_slice(&brain.pre)),
            weight: storage(&device, "weight", bytemuck::cast_slice(&brain.weight)),
            eye_slot: storage(&device, "eye_slot", bytemuck::cast_slice(&brain.eye_slot)),
            homeostasis: storage(&device, "homeostasis", bytemuck::cast_slice(&homeostasis)),
            eye: brain.eye.clone(),
            params: brain.params,
            neurons: brain.neurons,
            pipeline,
            device,
            queue,
            current: None,
            max_groups_x: MAX_GROUPS_X,
        })
    }

    /// Wraps the dispatch into a second dimension after `n` workgroups (tests use a small `n` to
    /// exercise the path a large batch takes on a real device).
    pub fn set_max_groups_x(&mut self, n: u32) {
        self.max_groups_x = n.clamp(1, MAX_GROUPS_X);
    }

    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// Bytes of the rates buffer for a batch (all 12 steps).
    pub fn rates_bytes(&self, batch: usize) -> u64 {
        (STEPS * self.neurons * batch * 4) as u64
    }

    fn prepare(&mut self, batch: usize) -> Result<()> {
        if self.current.as_ref().is_some_and(|c| c.batch == batch) {
            return Ok(());
        }
        let bytes = self.rates_bytes(batch);
        let limit = self.device.limits().max_storage_buffer_binding_size;
        if bytes > limit {
            return Err(Error::Invalid(format!("batch {batch} needs a {bytes}-byte rates buffer; this device binds at most {limit}")));
        }
        let rates = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rates (12 steps)"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::VERTEX,
            mapped_at_creation: false,
        });
        let eye_input = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("eye input"),
            size: ((self.eye.len() * batch).max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("step params"),
            size: std::mem::size_of::<StepParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = self.pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> = [&uniforms, &self.row_start, &self.pre, &self.weight, &self.eye_slot, &eye_input, &self.homeostasis, &rates]
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some("brain step"), layout: &layout, entries: &entries });
        self.current = Some(Batch { batch, rates, eye_input, uniforms, bind_group });
        Ok(())
    }

    /// Runs the 12 steps for `boards` and returns the device buffer holding all their rates.
    pub fn think(&mut self, boards: &[Planes]) -> Result<&wgpu::Buffer> {
        let batch = boards.len();
        if batch == 0 {
            return Err(Error::Invalid("no boards to think about".into()));
        }
        self.prepare(batch)?;
        let cur = self.current.as_ref().expect("prepared");
        let x = crate::eye::batch_input(&self.eye, boards);
        if !x.is_empty() {
            self.queue.write_buffer(&cur.eye_input, 0, bytemuck::cast_slice(&x));
        }
        let invocations = (self.neurons * batch) as u32;
        let groups = invocations.div_ceil(WORKGROUP);
        let (gx, gy) = (groups.min(self.max_groups_x), groups.div_ceil(self.max_groups_x));
        for t in 0..STEPS {
            let p = StepParams {
                neurons: self.neurons as u32,
                batch: batch as u32,
                step: t as u32,
                groups_x: gx,
                alpha: self.params.alpha,
                beta: self.params.beta,
                leak: self.params.leak,
                _pad: 0.0,
            };
            // Written before this step's submission: each step sees its own parameters.
            self.queue.write_buffer(&cur.uniforms, 0, bytemuck::bytes_of(&p));
            let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("brain step") });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("brain step"), timestamp_writes: None });
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &cur.bind_group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
            self.queue.submit([encoder.finish()]);
        }
        Ok(&cur.rates)
    }

    /// Waits until the device has finished everything submitted.
    pub fn wait(&self) -> Result<()> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: None, timeout: None })
            .map(|_| ())
            .map_err(|e| Error::Invalid(format!("GPU wait failed: {e}")))
    }

    /// Copies the last think's rates back to the CPU (tests and readouts; the viewer never does).
    pub fn read_rates(&self) -> Result<Rates> {
        let cur = self.current.as_ref().ok_or_else(|| Error::Invalid("nothing thought yet".into()))?;
        let size = self.rates_bytes(cur.batch);
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rates read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read-back") });
        encoder.copy_buffer_to_buffer(&cur.rates, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        rx.recv()
            .map_err(|_| Error::Invalid("the GPU never answered the read-back".into()))?
            .map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
        let data: Vec<f32> = {
            let view = staging.get_mapped_range(..).map_err(|e| Error::Invalid(format!("read-back failed: {e}")))?;
            bytemuck::cast_slice(&view).to_vec()
        };
        staging.unmap();
        Ok(Rates { batch: cur.batch, neurons: self.neurons, data })
    }
}
