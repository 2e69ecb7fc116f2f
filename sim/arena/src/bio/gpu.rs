//! The dopamine fly on the GPU engine. `BioBrain::think_on` uploads the model (W′, its own
//! homeostasis) and the mushroom body (the Kenyon cells, their cut, the plastic synapses onto the
//! MBONs: `brain::gpu::SparseInput`) to a GPU engine; from then on every look without kept rates
//! (`look`, `look_reading`, `glance_reading` with `keep` false: a move, a lesson batch, a
//! measurement) thinks its 12 steps there with the fly's strengths M, and only the rates of step
//! 9–12 that the look reports come back (the Kenyon cells' and MBONs' at step 12, the reader's).
//! The vote, the sparse Kenyon cells at step 12 and the reading are then worked out here from
//! those rates exactly as the CPU model does. The two engines agree to rounding (the sigmoid's
//! exp differs in the last bit), not bit for bit; a GPU that fails is said once and the CPU model
//! answers from then on.

use super::{BioBrain, Glance};
use crate::error::{Error, Result};
use flychess_brain::brain::STEPS;
use flychess_brain::brain::engine::Fallback;
use flychess_brain::brain::gpu::{GpuEngine, SparseInput};
use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::chess::Planes;

/// A dopamine fly's model on a GPU engine; a look that fails hands over to the CPU model for
/// good (`engine::Fallback`).
pub struct GpuBody(Fallback<GpuEngine>);

impl std::fmt::Debug for GpuBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuBody({})", self.0.adapter())
    }
}

/// The steps a look reads back: the last four (the reading is their mean; the vote and the
/// Kenyon cells are the last's).
const READ_STEPS: [usize; 4] = [STEPS - 4, STEPS - 3, STEPS - 2, STEPS - 1];

impl BioBrain {
    /// The mushroom body as the GPU engine takes it.
    pub fn sparse_input(&self) -> SparseInput {
        let b = &self.body;
        SparseInput {
            cells: b.kenyon.clone(),
            pass: b.pass,
            width: self.constants.cut_width,
            targets: b.mbon.clone(),
            edge_start: b.edge_start.clone(),
            edge_cell: b.edge_kc.clone(),
        }
    }

    /// Makes this model's looks think on the engine `choice` asks for (auto: a hardware GPU, else
    /// the CPU; gpu: the best adapter, a software one too). Returns what it thinks on.
    pub fn think_on(&mut self, choice: EngineChoice) -> Result<String> {
        self.gpu = None;
        match Simulator::choose(choice, &self.brain)? {
            Simulator::Cpu => Ok(Simulator::Cpu.describe()),
            Simulator::Gpu(gpu) => {
                let adapter = gpu.adapter().to_string();
                let mut engine = gpu.into_inner();
                engine.set_sparse_input(&self.sparse_input())?;
                self.gpu = Some(std::sync::Arc::new(GpuBody(Fallback::new(engine, adapter.clone(), "the dopamine fly"))));
                Ok(format!("GPU engine on {adapter}"))
            }
        }
    }

    /// Whether looks think on a GPU engine now.
    pub fn on_gpu(&self) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.0.alive())
    }

    /// A look on the GPU engine (None when there is none or it failed: the caller looks on the
    /// CPU).
    pub(super) fn glance_on_gpu(&self, m: &[f32], boards: &[Planes], reader: &[u32]) -> Option<Glance> {
        self.gpu.as_ref()?.0.attempt(|engine| self.glance_gpu(engine, m, boards, reader))
    }

    fn glance_gpu(&self, engine: &mut GpuEngine, m: &[f32], boards: &[Planes], reader: &[u32]) -> Result<Glance> {
        let batch = boards.len();
        let body = &self.body;
        if m.len() != body.synapses() {
            return Err(Error::Invalid(format!("{} strengths for {} plastic synapses", m.len(), body.synapses())));
        }
        let (k, nm) = (body.kenyon.len(), body.mbon.len());
        let wanted: Vec<u32> = body.kenyon.iter().chain(&body.mbon).chain(reader).copied().collect();
        let w = wanted.len();
        engine.set_strengths(m)?;
        let readings = engine.read(boards, &wanted, &READ_STEPS)?;
        let at = |b: usize, s: usize, i: usize| readings[(b * READ_STEPS.len() + s) * w + i];
        let last = READ_STEPS.len() - 1;
        let mut g = Glance {
            batch,
            vote: vec![0f32; batch],
            kenyon: vec![0f32; k * batch],
            mbon: vec![0f32; nm * batch],
            reading: vec![0f32; reader.len() * batch],
            rates: None,
        };
        let mut column = vec![0f32; k];
        for b in 0..batch {
            for (i, c) in column.iter_mut().enumerate() {
                *c = at(b, last, i);
            }
            for (i, h) in body.sparse_column(&column, self.constants.cut_width).into_iter().enumerate() {
                g.kenyon[i * batch + b] = h;
            }
            for i in 0..nm {
                let r = at(b, last, k + i);
                g.mbon[i * batch + b] = r;
                g.vote[b] += body.valence[i] * r;
            }
            // The mean of steps 9–12 summed as the CPU model sums it, step by step.
            for i in 0..reader.len() {
                for s in 0..READ_STEPS.len() {
                    g.reading[i * batch + b] += at(b, s, k + nm + i) / 4.0;
                }
            }
        }
        Ok(g)
    }
}
