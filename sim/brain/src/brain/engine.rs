//! One interface over the brain's engines (issue 58): the CPU engine in the brain's own order on
//! the plain kernels, the CPU engine in its fast layout (the default), and the GPU engine on any
//! wgpu adapter. `Engine` asks each the same two questions, every step's rates of every neuron
//! (`think`) and the rates of a few neurons at a few steps (`read`, in `Simulator::read`'s
//! layout), so one test suite (sim/brain/tests/engines.rs) runs on every engine present. The
//! handing over from a failed GPU engine to the CPU for good is written once here (`Fallback`),
//! and used by the headless `Simulator`, the window's thinker and the dopamine fly's looks.
//! (The half-gather engine reads approximately, by design: it is measured against these, not one
//! of them.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::cpu::{self, Layout};
use super::gpu::{GpuEngine, headless_device};
use super::{Brain, Rates, STEPS};
use crate::chess::Planes;
use crate::error::{Error, Result};

/// What every engine answers. An engine is made for one brain: the GPU engine holds its brain's
/// wiring on the device, and the `brain` handed to it must be that one.
pub trait Engine {
    /// In words: "CPU engine, plain layout", "GPU engine on llvmpipe".
    fn name(&self) -> String;
    /// All 12 steps' rates of every neuron for `boards`.
    fn think(&mut self, brain: &Brain, boards: &[Planes]) -> Result<Rates>;
    /// The rates of `neurons` at `steps` (0-based) for every board:
    /// `[(position · steps.len() + s) · neurons.len() + k]`.
    fn read(&mut self, brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>>;
}

/// The CPU engine in a given layout (`Layout::PLAIN`, `Layout::FAST`); the layouts give the same
/// rates bit for bit.
pub struct CpuEngine {
    pub layout: Layout,
}

impl CpuEngine {
    /// The brain's own order on the plain kernels (the engine before issue 42).
    pub fn plain() -> CpuEngine {
        CpuEngine { layout: Layout::PLAIN }
    }

    /// The fast layout every think uses by default.
    pub fn fast() -> CpuEngine {
        CpuEngine { layout: Layout::FAST }
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> String {
        let layout = if self.layout == Layout::FAST {
            "fast layout"
        } else if self.layout == Layout::PLAIN {
            "plain layout"
        } else {
            "own layout"
        };
        format!("CPU engine, {layout}")
    }

    fn think(&mut self, brain: &Brain, boards: &[Planes]) -> Result<Rates> {
        Ok(cpu::think_in(brain, boards, self.layout))
    }

    fn read(&mut self, brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        read_in(brain, boards, neurons, steps, self.layout)
    }
}

impl Engine for GpuEngine {
    fn name(&self) -> String {
        "GPU engine".into()
    }

    fn think(&mut self, _brain: &Brain, boards: &[Planes]) -> Result<Rates> {
        self.think_rates(boards)
    }

    fn read(&mut self, _brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        GpuEngine::read(self, boards, neurons, steps)
    }
}

/// Every engine this machine has for `brain`: both CPU layouts, and the GPU engine on the best
/// wgpu adapter (a software one too) when there is one and the brain fits it. What kept the GPU
/// engine out is said in the second value.
pub fn engines_present(brain: &Brain) -> (Vec<Box<dyn Engine>>, Option<String>) {
    let mut engines: Vec<Box<dyn Engine>> = vec![Box::new(CpuEngine::plain()), Box::new(CpuEngine::fast())];
    let missing = match headless_device().and_then(|d| GpuEngine::new(d.device, d.queue, brain).map(|e| (e, d.adapter_name))) {
        Ok((engine, adapter)) => {
            engines.push(Box::new(Named { engine, name: format!("GPU engine on {adapter}") }));
            None
        }
        Err(e) => Some(format!("no GPU engine: {e}")),
    };
    (engines, missing)
}

/// An engine under another name (the GPU engine with its adapter's).
struct Named<E> {
    engine: E,
    name: String,
}

impl<E: Engine> Engine for Named<E> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn think(&mut self, brain: &Brain, boards: &[Planes]) -> Result<Rates> {
        self.engine.think(brain, boards)
    }
    fn read(&mut self, brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize]) -> Result<Vec<f32>> {
        self.engine.read(brain, boards, neurons, steps)
    }
}

/// `Engine::read` on the CPU engine in `layout`: only the rows those neurons depend on are worked
/// out (`cpu::run_reading_in`), the same rates bit for bit as a full think.
pub fn read_in(brain: &Brain, boards: &[Planes], neurons: &[u32], steps: &[usize], layout: Layout) -> Result<Vec<f32>> {
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
    cpu::run_reading_in(brain, boards, neurons, first, layout, |t, rates| {
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

/// A GPU engine (or anything that thinks on one) that hands over to the CPU engine for good the
/// first time it fails: the failure is logged once, naming `what` thinks, and from then on
/// `attempt` answers None at once, so the caller thinks on the CPU.
pub struct Fallback<E> {
    engine: Mutex<E>,
    adapter: String,
    what: &'static str,
    failed: AtomicBool,
}

impl<E> Fallback<E> {
    /// `engine` on `adapter`, thinking for `what` ("the fly", "the dopamine fly").
    pub fn new(engine: E, adapter: impl Into<String>, what: &'static str) -> Fallback<E> {
        Fallback { engine: Mutex::new(engine), adapter: adapter.into(), what, failed: AtomicBool::new(false) }
    }

    /// Whether the engine still thinks (it has not failed).
    pub fn alive(&self) -> bool {
        !self.failed.load(Ordering::Relaxed)
    }

    /// The adapter's name.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// `work` on the engine while it has not failed; its first error is logged, ends the engine's
    /// turn for good and answers None (think on the CPU). The work may fail with any crate's error
    /// (each crate above has its own).
    pub fn attempt<T, Failure: std::fmt::Display>(&self, work: impl FnOnce(&mut E) -> std::result::Result<T, Failure>) -> Option<T> {
        if !self.alive() {
            return None;
        }
        match work(&mut self.engine.lock().unwrap_or_else(PoisonError::into_inner)) {
            Ok(answer) => Some(answer),
            Err(e) => {
                tracing::warn!("{}: the GPU engine on {} failed ({e}); thinking on the CPU from now on", self.what, self.adapter);
                self.failed.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// The engine, for work that is not a think (its limits, its device); None once it failed.
    pub fn with<T>(&self, look: impl FnOnce(&mut E) -> T) -> Option<T> {
        self.alive().then(|| look(&mut self.engine.lock().unwrap_or_else(PoisonError::into_inner)))
    }

    /// The engine itself (to hand it on: a dopamine fly takes the simulator's).
    pub fn into_inner(self) -> E {
        self.engine.into_inner().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fallback_answers_until_its_first_failure_and_then_never_asks_again() {
        let calls = std::cell::Cell::new(0);
        let f = Fallback::new(0u32, "test adapter", "the test");
        let attempt = |fail: bool| {
            f.attempt(|n| {
                calls.set(calls.get() + 1);
                *n += 1;
                if fail { Err(Error::Invalid("lost the device".into())) } else { Ok(*n) }
            })
        };
        assert_eq!(attempt(false), Some(1));
        assert_eq!(attempt(true), None, "the failure is answered by None: the caller thinks on the CPU");
        assert_eq!(attempt(false), None, "and so is every later think, without asking the engine");
        assert_eq!(calls.get(), 2);
        assert!(!f.alive());
        assert_eq!(f.with(|n| *n), None);
        assert_eq!(f.into_inner(), 2);
    }
}
