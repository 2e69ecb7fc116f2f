//! A sparse, plastic input on the GPU engine: the dopamine fly's mushroom body
//! (`shaders/mushroom_body.wgsl`). The engine thinks the brain without the plastic synapses (W′,
//! the dopamine fly's model); with a `SparseInput` set, every step from the second on also finds
//! each position's cut among the Kenyon cells' rates of the step before (an exact GPU select, no
//! round trip to the CPU) and gives each MBON its rate again with Σ M r̂ added to its input, in the
//! CPU model's order. The strengths M change between looks (`GpuEngine::set_strengths`); the
//! wiring is uploaded once. What the CPU model does with the rates at step 12 (the vote, the
//! sparse Kenyon cells) it still does, on the rates read back.

use super::{GpuEngine, UNIFORM_STRIDE, pipeline, storage, storage_with, uniform_block, workgroups};
use crate::brain::STEPS;
use crate::error::{Error, Result};

pub const SHADER: &str =
    concat!(include_str!("../../../../../shaders/mushroom_body.wgsl"), include_str!("../../../../../shaders/rate_math.wgsl"));

/// Cells whose most active `pass` alone hand their rates on (faded through a sigmoid of width
/// `width` around the cut) through plastic synapses to some target neurons: in the dopamine fly,
/// the Kenyon cells and the MBONs (`flychess_arena::bio::MushroomBody`).
#[derive(Clone, Debug, PartialEq)]
pub struct SparseInput {
    /// Neuron ids of the cells.
    pub cells: Vec<u32>,
    /// How many cells pass (at least 1, at most all).
    pub pass: usize,
    pub width: f32,
    /// Neuron ids of the targets.
    pub targets: Vec<u32>,
    /// Target i's synapses are `edge_start[i]..edge_start[i + 1]`.
    pub edge_start: Vec<u32>,
    /// Each synapse's cell (an index into `cells`).
    pub edge_cell: Vec<u32>,
}

impl SparseInput {
    pub fn synapses(&self) -> usize {
        self.edge_cell.len()
    }

    /// Every index in range and the synapse table whole: a wrong input is an error here, never a
    /// read out of bounds on the device.
    fn check(&self, neurons: usize) -> Result<()> {
        let bad = |what: String| Err(Error::Invalid(format!("the mushroom body for the GPU: {what}")));
        if self.cells.is_empty() {
            return bad("no Kenyon cells".into());
        }
        if let Some(&j) = self.cells.iter().chain(&self.targets).find(|&&j| j as usize >= neurons) {
            return bad(format!("neuron {j} is not in this brain of {neurons}"));
        }
        if self.edge_start.len() != self.targets.len() + 1
            || self.edge_start.first() != Some(&0)
            || self.edge_start.last().map(|&e| e as usize) != Some(self.edge_cell.len())
            || self.edge_start.windows(2).any(|w| w[0] > w[1])
        {
            return bad("the synapses' starts do not cover the synapses in order".into());
        }
        if let Some(&k) = self.edge_cell.iter().find(|&&k| k as usize >= self.cells.len()) {
            return bad(format!("a synapse from cell {k} of {}", self.cells.len()));
        }
        if !(self.width > 0.0 && self.width.is_finite()) {
            return bad(format!("the cut's width {} is not a positive number", self.width));
        }
        Ok(())
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct BodyParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,
    beta: f32,
    leak: f32,
    zero: u32,
    width: f32,
    kenyons: u32,
    passing: u32,
    mbons: u32,
    mbon_at: u32,
    start_at: u32,
    kc_at: u32,
    _pad0: u32,
    _pad1: u32,
}

/// The mushroom body on the device: its kernels, its wiring packed in one buffer, the strengths.
pub(super) struct Body {
    cut_pipeline: wgpu::ComputePipeline,
    mbon_pipeline: wgpu::ComputePipeline,
    wiring: wgpu::Buffer,
    strength: wgpu::Buffer,
    input: SparseInput,
}

/// A slab's part: each position's cut, and per step from the second on the two kernels' bind
/// groups (over the slab's rates and eye input).
pub(super) struct SlabBody {
    /// The parameter blocks (the bind groups name them).
    _uniforms: wgpu::Buffer,
    cut: Vec<wgpu::BindGroup>,
    mbon: Vec<wgpu::BindGroup>,
    mbon_groups: (u32, u32),
}

impl GpuEngine {
    /// Runs `input` between the steps of every think from now on (strengths M⁰ = 0 until
    /// `set_strengths`). The engine's own brain must be the one without the plastic synapses.
    pub fn set_sparse_input(&mut self, input: &SparseInput) -> Result<()> {
        input.check(self.neurons)?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let packed: Vec<u32> = input.cells.iter().chain(&input.targets).chain(&input.edge_start).chain(&input.edge_cell).copied().collect();
        let body = Body {
            cut_pipeline: pipeline(&self.device, "mushroom_body.wgsl (the cut)", SHADER, "kenyon_cut"),
            mbon_pipeline: pipeline(&self.device, "mushroom_body.wgsl (the MBONs)", SHADER, "mbon_step"),
            wiring: storage(&self.device, "mushroom body wiring", bytemuck::cast_slice(&packed)),
            strength: storage_with(
                &self.device,
                "plastic strengths",
                bytemuck::cast_slice(&vec![0f32; input.synapses()]),
                wgpu::BufferUsages::COPY_DST,
            ),
            input: input.clone(),
        };
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Invalid(format!("the mushroom body's kernels could not start on this device: {e}")));
        }
        self.body = Some(body);
        self.current = None;
        Ok(())
    }

    /// The plastic synapses' strengths M for the next thinks (one per synapse, in `SparseInput`'s
    /// order).
    pub fn set_strengths(&mut self, m: &[f32]) -> Result<()> {
        let body = self.body.as_ref().ok_or_else(|| Error::Invalid("no mushroom body on this engine".into()))?;
        if m.len() != body.input.synapses() {
            return Err(Error::Invalid(format!("{} strengths for {} plastic synapses", m.len(), body.input.synapses())));
        }
        if !m.is_empty() {
            self.queue.write_buffer(&body.strength, 0, bytemuck::cast_slice(m));
        }
        Ok(())
    }

    /// The mushroom body's part of a slab of `positions` positions, over its `rates` and
    /// `eye_input`.
    pub(super) fn slab_body(&self, positions: usize, rates: &wgpu::Buffer, eye_input: &wgpu::Buffer) -> Option<SlabBody> {
        let body = self.body.as_ref()?;
        let input = &body.input;
        let cuts = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("Kenyon cuts"),
            size: (positions.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let uniforms = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("mushroom body params"),
            size: STEPS as u64 * UNIFORM_STRIDE,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mbon_groups = workgroups((input.targets.len() * positions) as u64, self.max_groups_x);
        let (mbon_at, start_at) = (input.cells.len(), input.cells.len() + input.targets.len());
        let mut block = vec![0u8; STEPS * UNIFORM_STRIDE as usize];
        for t in 0..STEPS {
            let p = BodyParams {
                neurons: self.neurons as u32,
                batch: positions as u32,
                step: t as u32,
                groups_x: mbon_groups.0,
                beta: self.params.beta,
                leak: self.params.leak,
                zero: 0,
                width: input.width,
                kenyons: input.cells.len() as u32,
                passing: input.pass.clamp(1, input.cells.len()) as u32,
                mbons: input.targets.len() as u32,
                mbon_at: mbon_at as u32,
                start_at: start_at as u32,
                kc_at: (start_at + input.edge_start.len()) as u32,
                _pad0: 0,
                _pad1: 0,
            };
            let at = t * UNIFORM_STRIDE as usize;
            block[at..at + std::mem::size_of::<BodyParams>()].copy_from_slice(bytemuck::bytes_of(&p));
        }
        self.queue.write_buffer(&uniforms, 0, &block);
        let group = |pipeline: &wgpu::ComputePipeline, t: usize, buffers: &[(u32, &wgpu::Buffer)]| {
            let entries: Vec<wgpu::BindGroupEntry> =
                std::iter::once(wgpu::BindGroupEntry { binding: 0, resource: uniform_block::<BodyParams>(&uniforms, t) })
                    .chain(buffers.iter().map(|&(binding, b)| wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() }))
                    .collect();
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("mushroom body"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        };
        let cut = (1..STEPS).map(|t| group(&body.cut_pipeline, t, &[(7, rates), (8, &body.wiring), (10, &cuts)])).collect();
        let mbon = (1..STEPS)
            .map(|t| {
                group(
                    &body.mbon_pipeline,
                    t,
                    &[
                        (1, &self.row_start),
                        (2, &self.pre),
                        (3, &self.weight),
                        (4, &self.eye_slot),
                        (5, eye_input),
                        (6, &self.homeostasis),
                        (7, rates),
                        (8, &body.wiring),
                        (9, &body.strength),
                        (10, &cuts),
                    ],
                )
            })
            .collect();
        Some(SlabBody { _uniforms: uniforms, cut, mbon, mbon_groups })
    }

    /// Records step `t`'s mushroom body work around the brain's step: `before` the step the cut
    /// (from the rates of step t−1), after it the MBONs' rates again. Nothing at step 0 (no
    /// rates before it: the CPU model adds no plastic input there either).
    pub(super) fn encode_body(&self, pass: &mut wgpu::ComputePass, slab: &SlabBody, positions: usize, t: usize, before: bool) {
        let Some(body) = &self.body else { return };
        if t == 0 {
            return;
        }
        if before {
            pass.set_pipeline(&body.cut_pipeline);
            pass.set_bind_group(0, &slab.cut[t - 1], &[]);
            pass.dispatch_workgroups(positions as u32, 1, 1);
        } else {
            pass.set_pipeline(&body.mbon_pipeline);
            pass.set_bind_group(0, &slab.mbon[t - 1], &[]);
            pass.dispatch_workgroups(slab.mbon_groups.0, slab.mbon_groups.1, 1);
        }
    }

    /// Bytes the mushroom body holds on the device (its wiring, strengths, and a slab's cuts and
    /// parameters).
    pub(super) fn body_bytes(&self, positions: usize) -> u64 {
        self.body.as_ref().map_or(0, |b| b.wiring.size() + b.strength.size() + (positions * 4) as u64 + STEPS as u64 * UNIFORM_STRIDE)
    }
}
