//! Which engine a headless job thinks on, and the one question such jobs ask of it: the rates of a
//! few neurons at a few steps for a batch of boards (the readout's descending neurons at steps
//! 9–12, for the DN cache, the ladder's fly moves, training's probes). `Simulator::choose` takes
//! the GPU engine where there is a hardware adapter (`auto`), or what `--engine cpu|gpu` asks for
//! (`gpu` accepts a software adapter too, which tests use on lavapipe). Both answer in the same
//! layout, and the CPU engine's answer is the reference the GPU's is checked against.
//!
//! Readers that go through `readout::think_features` (players, the ladder) find the simulator of
//! their brain here: `install` puts one in force for a borrowed brain until the returned guard
//! goes, and without one the CPU engine thinks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::gpu::{GpuEngine, headless_device};
use super::{Brain, STEPS, cpu};
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

/// An engine ready to think for one brain.
pub enum Simulator {
    Cpu,
    Gpu {
        engine: Box<Mutex<GpuEngine>>,
        adapter: String,
        /// Set when a GPU think failed: later thinks go to the CPU engine.
        failed: AtomicBool,
    },
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
        Ok(Simulator::Gpu { engine: Box::new(Mutex::new(engine)), adapter: device.adapter_name, failed: AtomicBool::new(false) })
    }

    /// "GPU engine on NVIDIA H200 (Vulkan)", "CPU engine (16 threads)".
    pub fn describe(&self) -> String {
        match self {
            Simulator::Gpu { adapter, .. } => format!("GPU engine on {adapter}"),
            Simulator::Cpu => format!("CPU engine ({} threads)", rayon::current_num_threads()),
        }
    }

    pub fn is_gpu(&self) -> bool {
        matches!(self, Simulator::Gpu { failed, .. } if !failed.load(Ordering::Relaxed))
    }

    /// The batch a job of many positions should hand over at once: the CPU engine's fastest (32),
    /// or on the GPU as many slabs as one read holds (large batches keep the GPU busy between
    /// the CPU's turns).
    pub fn preferred_batch(&self) -> usize {
        match self {
            Simulator::Gpu { engine, .. } => {
                let (slab, _) = engine.lock().unwrap_or_else(PoisonError::into_inner).slab_limits();
                (slab * 64).clamp(32, 4096)
            }
            Simulator::Cpu => 32,
        }
    }

    /// The rates of `neurons` at `steps` (0-based) for every board:
    /// `[(position · steps.len() + s) · neurons.len() + k]`. On the GPU when this simulator is one
    /// (a failed GPU think is logged and answered by the CPU engine, which answers from then on).
    pub fn read(&self, brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        if let Simulator::Gpu { engine, failed, .. } = self
            && !failed.load(Ordering::Relaxed)
        {
            match engine.lock().unwrap_or_else(PoisonError::into_inner).read(boards, neurons, steps) {
                Ok(r) => return Ok(r),
                Err(e) => {
                    tracing::warn!("the GPU engine failed ({e}); thinking on the CPU from now on");
                    failed.store(true, Ordering::Relaxed);
                }
            }
        }
        read_on_cpu(brain, boards, neurons, steps)
    }
}

/// `Simulator::read` on the CPU engine: only the rows those neurons depend on are worked out
/// (`cpu::run_reading`), the same rates bit for bit as a full think.
pub fn read_on_cpu(brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
    if let Some(&t) = steps.iter().find(|&&t| t >= STEPS) {
        return Err(Error::Invalid(format!("step {t} is past the last (0-based {})", STEPS - 1)));
    }
    if let Some(&j) = neurons.iter().find(|&&j| j as usize >= brain.neurons) {
        return Err(Error::Invalid(format!("neuron {j} is not in this brain of {}", brain.neurons)));
    }
    let (b, k, r) = (boards.len(), neurons.len(), steps.len());
    let mut out = vec![0f32; b * k * r];
    if out.is_empty() {
        return Ok(out);
    }
    let first = steps.iter().copied().min().expect("steps is not empty");
    cpu::run_reading(brain, boards, neurons, first, |t, rates| {
        for (s, _) in steps.iter().enumerate().filter(|&(_, &st)| st == t) {
            for p in 0..b {
                for i in 0..k {
                    out[(p * r + s) * k + i] = rates[i * b + p];
                }
            }
        }
    });
    Ok(out)
}

/// Simulators in force, by the address of the brain they think for.
type InstalledList = Mutex<Vec<(usize, Arc<Simulator>)>>;

fn installed_list() -> &'static InstalledList {
    static LIST: std::sync::OnceLock<InstalledList> = std::sync::OnceLock::new();
    LIST.get_or_init(Default::default)
}

/// Keeps a simulator in force for a brain; dropping it (at the latest when the brain's borrow
/// ends) takes it out again, so a later brain at the same address never finds it.
pub struct Installed<'a> {
    brain: &'a Brain,
}

impl Drop for Installed<'_> {
    fn drop(&mut self) {
        let key = self.brain as *const Brain as usize;
        installed_list().lock().unwrap_or_else(PoisonError::into_inner).retain(|(b, _)| *b != key);
    }
}

/// Puts `simulator` in force for `brain`'s thinks through `readout::think_features` while the
/// guard lives (a CPU simulator installs nothing: the CPU engine is the default).
pub fn install(brain: &Brain, simulator: Arc<Simulator>) -> Installed<'_> {
    let key = brain as *const Brain as usize;
    let mut list = installed_list().lock().unwrap_or_else(PoisonError::into_inner);
    list.retain(|(b, _)| *b != key);
    if matches!(*simulator, Simulator::Gpu { .. }) {
        list.push((key, simulator));
    }
    Installed { brain }
}

/// The simulator in force for `brain`, if any.
pub fn installed(brain: &Brain) -> Option<Arc<Simulator>> {
    let key = brain as *const Brain as usize;
    installed_list().lock().unwrap_or_else(PoisonError::into_inner).iter().find(|(b, _)| *b == key).map(|(_, s)| s.clone())
}
