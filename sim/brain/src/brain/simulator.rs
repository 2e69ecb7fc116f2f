//! Which engine a headless job thinks on, and the one question such jobs ask of it: the rates of a
//! few neurons at a few steps for a batch of boards (the readout's descending neurons at steps
//! 9–12, for the DN cache, the ladder's fly moves, training's probes). `Simulator::choose` takes
//! the GPU engine where there is a hardware adapter (`auto`), or what `--engine cpu|gpu` asks for
//! (`gpu` accepts a software adapter too, which tests use on lavapipe). Both answer in the same
//! layout, and the CPU engine's answer is the reference the GPU's is checked against.
//!
//! A player's simulator travels with it (the arena's `Kit` holds one, handed to
//! `readout::think_features_on`); no list of simulators is kept for the process.

use super::Brain;
use super::cpu;
use super::engine::Fallback;
use super::gpu::{GpuEngine, headless_device};
use crate::chess::Planes;
use crate::error::{Error, Result};

/// What a user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// The GPU engine on a hardware adapter, else the CPU engine.
    #[default]
    Auto,
    Cpu,
    /// The GPU engine on the best adapter, even a software one; an error without any.
    Gpu,
}

impl std::str::FromStr for EngineChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(EngineChoice::Auto),
            "cpu" => Ok(EngineChoice::Cpu),
            "gpu" => Ok(EngineChoice::Gpu),
            other => Err(Error::Invalid(format!("engine {other:?}: auto, cpu or gpu"))),
        }
    }
}

/// An engine ready to think for one brain: the CPU engine, or the GPU engine that hands over to
/// the CPU for good when a think fails (`engine::Fallback`).
pub enum Simulator {
    Cpu,
    Gpu(Box<Fallback<GpuEngine>>),
}

impl Simulator {
    /// The engine `choice` asks for, for `brain` (its wiring uploaded to the GPU when it is one).
    pub fn choose(choice: EngineChoice, brain: &Brain) -> Result<Simulator> {
        if choice == EngineChoice::Cpu {
            return Ok(Simulator::Cpu);
        }
        let device = match (headless_device(), choice) {
            (Ok(d), EngineChoice::Gpu) => d,
            (Ok(d), _) if d.hardware => d,
            (Ok(d), _) => {
                tracing::info!("simulator: the CPU engine (the only adapter, {}, is a software one)", d.adapter_name);
                return Ok(Simulator::Cpu);
            }
            (Err(e), EngineChoice::Gpu) => return Err(e),
            (Err(e), _) => {
                tracing::info!("simulator: the CPU engine ({e})");
                return Ok(Simulator::Cpu);
            }
        };
        let engine = match GpuEngine::new(device.device, device.queue, brain) {
            Ok(engine) => engine,
            Err(e) if choice == EngineChoice::Auto => {
                tracing::warn!("simulator: the CPU engine ({}: {e})", device.adapter_name);
                return Ok(Simulator::Cpu);
            }
            Err(e) => return Err(e),
        };
        tracing::info!("simulator: the GPU engine on {}", device.adapter_name);
        Ok(Simulator::Gpu(Box::new(Fallback::new(engine, device.adapter_name, "a headless job"))))
    }

    /// "GPU engine on NVIDIA H200 (Vulkan)", "CPU engine (16 threads)".
    pub fn describe(&self) -> String {
        match self {
            Simulator::Gpu(gpu) => format!("GPU engine on {}", gpu.adapter()),
            Simulator::Cpu => format!("CPU engine ({} threads)", rayon::current_num_threads()),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Simulator::Gpu(gpu) if gpu.alive())
    }

    /// The batch a job of many positions should hand over at once: the CPU engine's fastest (32),
    /// or on the GPU as many slabs as one read holds (large batches keep the GPU busy between
    /// the CPU's turns).
    pub fn preferred_batch(&self) -> usize {
        match self {
            Simulator::Gpu(gpu) => gpu.with(|engine| (engine.slab_limits().0 * 64).clamp(32, 4096)).unwrap_or(32),
            Simulator::Cpu => 32,
        }
    }

    /// The rates of `neurons` at `steps` (0-based) for every board:
    /// `[(position · steps.len() + s) · neurons.len() + k]`. On the GPU when this simulator is one
    /// (a failed GPU think is logged and answered by the CPU engine, which answers from then on).
    pub fn read(&self, brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        if let Simulator::Gpu(gpu) = self
            && let Some(r) = gpu.attempt(|engine| engine.read(boards, neurons, steps))
        {
            return Ok(r);
        }
        read_on_cpu(brain, boards, neurons, steps)
    }
}

/// `Simulator::read` on the CPU engine: only the rows those neurons depend on are worked out
/// (`cpu::run_reading`), the same rates bit for bit as a full think.
pub fn read_on_cpu(brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
    super::engine::read_in(brain, boards, neurons, steps, cpu::default_layout())
}
