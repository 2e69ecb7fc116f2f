//! The point cloud: the GPU side of the brain view. `CloudRenderer` holds the pipeline of
//! `shaders/brain_cloud.wgsl`, the neurons' positions (uploaded once per brain), a per-neuron
//! mark buffer (selection and partners), and — for the CPU engine — an uploaded copy of a think's
//! rates. It draws one instanced sprite per neuron into any render pass: eframe's (through the
//! paint callback in `egui_view`) or an offscreen texture (tests, `flychess bench --render`). The
//! rates are bound as a per-instance vertex buffer, either that upload or the simulator's own
//! `wgpu::Buffer` straight from the GPU engine: the same layout, no copy through the CPU.
//! `pick` finds the neuron under a screen point with the same projection, on the CPU.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};
use wgpu::util::DeviceExt;

pub const SHADER: &str = include_str!("../../shaders/brain_cloud.wgsl");

/// One colour per region: Kelly's colours of maximum contrast (white and black left out) for the
/// first 16, four more kept as far from them for the optic lobe's neuropils.
pub const REGION_PALETTE: [[u8; 3]; 20] = [
    [0xF3, 0xC3, 0x00],
    [0x87, 0x56, 0x92],
    [0xF3, 0x84, 0x00],
    [0xA1, 0xCA, 0xF1],
    [0xBE, 0x00, 0x32],
    [0xC2, 0xB2, 0x80],
    [0x84, 0x84, 0x82],
    [0x00, 0x88, 0x56],
    [0xE6, 0x8F, 0xAC],
    [0x00, 0x67, 0xA5],
    [0xF9, 0x93, 0x79],
    [0x60, 0x4E, 0x97],
    [0x8D, 0xB6, 0x00],
    [0xB3, 0x44, 0x6C],
    [0x65, 0x45, 0x22],
    [0x88, 0x2D, 0x17],
    [0x00, 0xB5, 0xC8],
    [0x2B, 0x3D, 0x26],
    [0xE2, 0x58, 0x22],
    [0xFF, 0x4F, 0xD8],
];

/// The inferno colour map as the shader computes it (for legends and tests), t in 0..1.
pub fn inferno(t: f32) -> [f32; 3] {
    const C: [[f64; 3]; 7] = [
        [0.0002189403691192265, 0.001651004631001012, -0.01948089843709184],
        [0.1065134194856116, 0.5639564367884091, 3.932712388889277],
        [11.60249308247187, -3.972853965665698, -15.9423941062914],
        [-41.70399613139459, 17.43639888205313, 44.35414519872813],
        [77.162935699427, -33.40235894210092, -81.80730925738993],
        [-71.31942824499214, 32.62606426397723, 73.20951985803202],
        [25.13112622477341, -12.24266895238567, -23.07032500287172],
    ];
    let t = t.clamp(0.0, 1.0) as f64;
    let mut out = [0f32; 3];
    for (k, o) in out.iter_mut().enumerate() {
        let mut v = C[6][k];
        for c in C[..6].iter().rev() {
            v = c[k] + t * v;
        }
        *o = v.clamp(0.0, 1.0) as f32;
    }
    out
}

/// The colour a rate is drawn with in activity mode (the shader's mapping of 0..1).
pub fn activity_colour(rate: f32) -> [f32; 3] {
    inferno(0.25 + 0.75 * rate.clamp(0.0, 1.0))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColourMode {
    Activity,
    Region,
    /// A signed value per neuron in [−1, 1] (the error going back): red above 0, blue below.
    Blame,
}

/// The shader's uniform block (see `View` in brain_cloud.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct ViewUniform {
    pub view_proj: [[f32; 4]; 4],
    pub viewport: [f32; 2],
    pub point_px: [f32; 2],
    pub ghost: f32,
    pub rate_scale: f32,
    pub mode: u32,
    pub white_background: u32,
    pub palette: [[f32; 4]; 20],
}

/// What the view looks like, in app terms.
#[derive(Clone, Copy, Debug)]
pub struct ViewSettings {
    pub view_proj: Mat4,
    pub viewport_px: [f32; 2],
    /// Sprite radius in pixels: silent, fully active.
    pub point_px: [f32; 2],
    pub ghost: f32,
    pub rate_scale: f32,
    pub mode: ColourMode,
    pub white_background: bool,
}

impl ViewSettings {
    pub fn uniform(&self) -> ViewUniform {
        let mut palette = [[0f32; 4]; 20];
        for (p, c) in palette.iter_mut().zip(REGION_PALETTE) {
            *p = [c[0] as f32 / 255.0, c[1] as f32 / 255.0, c[2] as f32 / 255.0, 1.0];
        }
        ViewUniform {
            view_proj: self.view_proj.to_cols_array_2d(),
            viewport: self.viewport_px,
            point_px: self.point_px,
            ghost: self.ghost,
            rate_scale: self.rate_scale,
            mode: match self.mode {
                ColourMode::Activity => 0,
                ColourMode::Region => 1,
                ColourMode::Blame => 2,
            },
            white_background: u32::from(self.white_background),
            palette,
        }
    }
}

/// The neurons as the cloud draws them: cell-body position in µm (NaN where there is none) and
/// region index, for every neuron in brain order (instance = neuron index).
#[derive(Clone, Debug, Default)]
pub struct CloudGeometry {
    pub positions: Vec<[f32; 4]>,
}

impl CloudGeometry {
    pub fn new(soma_um: &[[f32; 3]], region: &[u8]) -> CloudGeometry {
        CloudGeometry { positions: soma_um.iter().zip(region).map(|(p, &r)| [p[0], p[1], p[2], r as f32]).collect() }
    }

    pub fn neurons(&self) -> usize {
        self.positions.len()
    }

    pub fn placed(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.positions.iter().filter(|p| p[0].is_finite()).map(|p| [p[0], p[1], p[2]])
    }
}

/// Where the rates of the drawn step come from.
#[derive(Clone, Copy)]
pub enum Rates<'a> {
    /// The renderer's own upload (one position, all steps).
    Uploaded,
    /// A simulator buffer with layout [(step·neurons + neuron)·batch + position].
    Buffer { buffer: &'a wgpu::Buffer, batch: usize, position: usize },
}

pub struct CloudRenderer {
    pipeline: wgpu::RenderPipeline,
    /// Pipelines whose rate attribute strides over a simulator batch (`batch` floats), made on
    /// first use: drawing one position of a batch binds the batch's buffer as it is.
    strided: std::sync::Mutex<std::collections::HashMap<u64, wgpu::RenderPipeline>>,
    device: wgpu::Device,
    pipeline_layout: wgpu::PipelineLayout,
    module: wgpu::ShaderModule,
    format: wgpu::TextureFormat,
    uniforms: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    positions: wgpu::Buffer,
    marks: wgpu::Buffer,
    uploaded: wgpu::Buffer,
    /// Steps held by `uploaded` (0: nothing uploaded yet: zeros are drawn).
    uploaded_steps: usize,
    neurons: usize,
    /// The runs of consecutive neurons that have a cell body: the draw call covers these
    /// instances only, so a neuron without a position is never drawn (not left to a NaN test in
    /// the shader, which a compiler may fold away).
    runs: Vec<std::ops::Range<u32>>,
}

pub const MAX_STEPS: usize = 12;

/// The largest vertex stride every adapter allows (WebGPU's default limit): batches up to 512
/// positions can be drawn straight from the simulator's buffer.
pub const MAX_STRIDE_BYTES: u64 = 2048;

/// The runs of consecutive neurons of `geometry` with a finite position, in order.
pub fn placed_runs(geometry: &CloudGeometry) -> Vec<std::ops::Range<u32>> {
    let mut runs: Vec<std::ops::Range<u32>> = Vec::new();
    for (i, p) in geometry.positions.iter().enumerate() {
        if !(p[0].is_finite() && p[1].is_finite() && p[2].is_finite()) {
            continue;
        }
        let i = i as u32;
        match runs.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

impl CloudRenderer {
    /// A renderer drawing into targets of `format` (premultiplied-alpha blending).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, geometry: &CloudGeometry) -> CloudRenderer {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("brain_cloud.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        let uniforms = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("brain view uniforms"),
            size: std::mem::size_of::<ViewUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("brain view"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None },
                count: None,
            }],
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("brain view"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: uniforms.as_entire_binding() }],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("brain view"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = Self::pipeline(device, &pipeline_layout, &module, format, 1);
        let positions = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("neuron positions"),
            contents: bytemuck::cast_slice(&geometry.positions),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let n = geometry.neurons().max(1);
        let marks = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("neuron marks"),
            size: (n * 4) as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let uploaded = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("uploaded rates"),
            size: (MAX_STEPS * n * 4) as u64,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        CloudRenderer {
            pipeline,
            strided: Default::default(),
            device: device.clone(),
            pipeline_layout,
            module,
            format,
            uniforms,
            bind_group,
            positions,
            marks,
            uploaded,
            uploaded_steps: 0,
            neurons: geometry.neurons(),
            runs: placed_runs(geometry),
        }
    }

    /// The pipeline whose rates attribute steps `batch` floats per neuron.
    fn pipeline(
        device: &wgpu::Device,
        layout: &wgpu::PipelineLayout,
        module: &wgpu::ShaderModule,
        format: wgpu::TextureFormat,
        batch: u64,
    ) -> wgpu::RenderPipeline {
        // Per-instance (per-neuron) attributes: position + region, rate at the step, mark.
        let attribute =
            |location: u32, format: wgpu::VertexFormat| [wgpu::VertexAttribute { format, offset: 0, shader_location: location }];
        let (pa, ra, ma) = (
            attribute(0, wgpu::VertexFormat::Float32x4),
            attribute(1, wgpu::VertexFormat::Float32),
            attribute(2, wgpu::VertexFormat::Float32),
        );
        let buffers = [
            Some(wgpu::VertexBufferLayout { array_stride: 16, step_mode: wgpu::VertexStepMode::Instance, attributes: &pa }),
            Some(wgpu::VertexBufferLayout { array_stride: 4 * batch, step_mode: wgpu::VertexStepMode::Instance, attributes: &ra }),
            Some(wgpu::VertexBufferLayout { array_stride: 4, step_mode: wgpu::VertexStepMode::Instance, attributes: &ma }),
        ];
        let buffers = &buffers[..];
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("brain cloud"),
            layout: Some(layout),
            vertex: wgpu::VertexState { module, entry_point: Some("vs"), compilation_options: Default::default(), buffers },
            fragment: Some(wgpu::FragmentState {
                module,
                entry_point: Some("fs"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            multiview_mask: None,
            cache: None,
        })
    }

    pub fn neurons(&self) -> usize {
        self.neurons
    }

    /// Uploads one think's rates (`steps × neurons`, step-major) for the CPU engine's path.
    pub fn upload_rates(&mut self, queue: &wgpu::Queue, rates: &[f32]) {
        let steps = (rates.len() / self.neurons.max(1)).min(MAX_STEPS);
        queue.write_buffer(&self.uploaded, 0, bytemuck::cast_slice(&rates[..steps * self.neurons]));
        self.uploaded_steps = steps;
    }

    /// Per-neuron marks: 0 none, 1 partner, 2 selected.
    pub fn set_marks(&self, queue: &wgpu::Queue, marks: &[f32]) {
        if marks.len() == self.neurons {
            queue.write_buffer(&self.marks, 0, bytemuck::cast_slice(marks));
        }
    }

    pub fn prepare(&self, queue: &wgpu::Queue, view: &ViewSettings) {
        queue.write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&view.uniform()));
    }

    /// Draws every neuron at `step` (0-based) into `pass`.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, rates: Rates<'_>, step: usize) {
        if self.neurons == 0 {
            return;
        }
        let n = self.neurons as u64;
        match rates {
            Rates::Uploaded => {
                pass.set_pipeline(&self.pipeline);
                pass.set_bind_group(0, &self.bind_group, &[]);
                pass.set_vertex_buffer(0, self.positions.slice(..));
                let step = step.min(self.uploaded_steps.max(1) - 1) as u64;
                pass.set_vertex_buffer(1, self.uploaded.slice(step * n * 4..(step + 1) * n * 4));
            }
            Rates::Buffer { buffer, batch, position } => {
                // Neuron k of position p at this step sits at float (step·n + k)·batch + p: the
                // binding starts at the step's position and strides over the batch.
                let b = batch.max(1) as u64;
                if b * 4 > MAX_STRIDE_BYTES || position as u64 >= b {
                    return;
                }
                let start = (step as u64 * n * b + position as u64) * 4;
                let end = start + ((n - 1) * b + 1) * 4;
                if b == 1 {
                    pass.set_pipeline(&self.pipeline);
                } else {
                    let mut strided = self.strided.lock().expect("not poisoned");
                    let p = strided
                        .entry(b)
                        .or_insert_with(|| Self::pipeline(&self.device, &self.pipeline_layout, &self.module, self.format, b));
                    pass.set_pipeline(p);
                }
                pass.set_bind_group(0, &self.bind_group, &[]);
                pass.set_vertex_buffer(0, self.positions.slice(..));
                pass.set_vertex_buffer(1, buffer.slice(start..end));
            }
        }
        pass.set_vertex_buffer(2, self.marks.slice(..));
        // Instance k reads neuron k of every per-instance buffer: a run is drawn as its range.
        for run in &self.runs {
            pass.draw(0..6, run.clone());
        }
    }
}

/// The neuron drawn under the screen point `at` (pixels from the viewport's top-left): the nearest
/// sprite centre within `radius_px`, the one nearest the camera on ties. Uses the same projection
/// as the shader.
pub fn pick(geometry: &CloudGeometry, view_proj: Mat4, viewport_px: [f32; 2], at: [f32; 2], radius_px: f32) -> Option<u32> {
    let mut best: Option<(f32, f32, u32)> = None;
    for (i, p) in geometry.positions.iter().enumerate() {
        if !p[0].is_finite() {
            continue;
        }
        let clip: Vec4 = view_proj * Vec3::new(p[0], p[1], p[2]).extend(1.0);
        if clip.w <= 0.0 {
            continue;
        }
        let ndc = clip.truncate() / clip.w;
        if !(0.0..=1.0).contains(&ndc.z) {
            continue;
        }
        let sx = (ndc.x * 0.5 + 0.5) * viewport_px[0];
        let sy = (0.5 - ndc.y * 0.5) * viewport_px[1];
        let d2 = (sx - at[0]).powi(2) + (sy - at[1]).powi(2);
        if d2 > radius_px * radius_px {
            continue;
        }
        let better = match best {
            None => true,
            Some((bd, bz, _)) => d2 + 0.25 < bd || ((d2 - bd).abs() <= 0.25 && ndc.z < bz),
        };
        if better {
            best = Some((d2, ndc.z, i as u32));
        }
    }
    best.map(|b| b.2)
}

/// Where a point lands on screen (pixels from the top-left), if in front of the camera.
pub fn project(view_proj: Mat4, viewport_px: [f32; 2], p: [f32; 3]) -> Option<[f32; 2]> {
    let clip = view_proj * Vec3::from_array(p).extend(1.0);
    if clip.w <= 0.0 {
        return None;
    }
    let ndc = clip.truncate() / clip.w;
    Some([(ndc.x * 0.5 + 0.5) * viewport_px[0], (0.5 - ndc.y * 0.5) * viewport_px[1]])
}

/// Draws a whole frame into a new texture of `size` and reads it back (tests and benches).
pub struct Offscreen {
    pub texture: wgpu::Texture,
    pub size: [u32; 2],
}

pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

impl Offscreen {
    pub fn new(device: &wgpu::Device, size: [u32; 2]) -> Offscreen {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("offscreen brain view"),
            size: wgpu::Extent3d { width: size[0], height: size[1], depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: OFFSCREEN_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        Offscreen { texture, size }
    }

    /// Clears to `background` and draws the cloud at `step`.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        cloud: &CloudRenderer,
        view: &ViewSettings,
        rates: Rates<'_>,
        step: usize,
        background: [f64; 4],
    ) {
        cloud.prepare(queue, view);
        let target = self.texture.create_view(&Default::default());
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("brain view offscreen") });
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("brain view offscreen"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: background[0], g: background[1], b: background[2], a: background[3] }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: None,
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            cloud.draw(&mut pass, rates, step);
        }
        queue.submit([encoder.finish()]);
    }

    /// Copies the texture back to the CPU as RGBA8 rows (width × height × 4 bytes).
    pub fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<u8>, String> {
        let [w, h] = self.size;
        let row = (w * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("offscreen read-back"),
            size: (row * h) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &staging,
                layout: wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(row), rows_per_image: Some(h) },
            },
            wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        );
        queue.submit([encoder.finish()]);
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        device.poll(wgpu::PollType::Wait { submission_index: None, timeout: None }).map_err(|e| e.to_string())?;
        rx.recv().map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
        let data = slice.get_mapped_range().map_err(|e| format!("{e:?}"))?;
        let mut out = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            let start = (y * row) as usize;
            out.extend_from_slice(&data[start..start + (w * 4) as usize]);
        }
        drop(data);
        staging.unmap();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colour_map_runs_from_dark_to_light_evenly() {
        let lum = |c: [f32; 3]| 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
        let first = inferno(0.0);
        assert!(lum(first) < 0.02, "{first:?}");
        let last = inferno(1.0);
        assert!(lum(last) > 0.85, "{last:?}");
        let mut prev = lum(first);
        for k in 1..=20 {
            let l = lum(inferno(k as f32 / 20.0));
            assert!(l > prev, "luminance rises monotonically");
            prev = l;
        }
    }

    #[test]
    fn the_region_palette_keeps_its_colours_apart() {
        for (i, a) in REGION_PALETTE.iter().enumerate() {
            for b in &REGION_PALETTE[i + 1..] {
                let d: i32 = a.iter().zip(b).map(|(x, y)| (*x as i32 - *y as i32).pow(2)).sum();
                assert!(d > 40 * 40, "{a:?} and {b:?} are too close");
            }
        }
    }
}
