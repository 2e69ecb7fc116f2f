//! The fly thinks off the UI thread. A worker thread owns the calibrated brain and answers think
//! requests over crossbeam channels; each think is the seated player's own (`Seated::think` in
//! `flychess_arena::thinking`, which knows every kind of player: the thinker never looks at one).
//! The 12 steps run on the CPU engine, or on the GPU engine when it shares the window's device (a
//! real GPU): then the view draws straight from the engine's rates buffer, and the panels' copy of
//! the rates (region bars, sentence, inspector) follows the answer, worked out on the CPU.
//! Requests carry an id; the window ignores answers to requests it no longer wants (a takeback or
//! new game mid-think). A recall asks again for an old think whose rates the window let go (it
//! keeps full rates only for the thinks it can show): the same position thinks again on the CPU
//! (the same rates, bit for bit), never on the GPU, whose one rates buffer belongs to the newest
//! think. Of the requests waiting, only the newest think and the newest recall are answered. When
//! the window goes, the request channel closes and the worker ends after the think in hand; a
//! worker that died is noticed (`alive`) and the window starts another. In a page (wasm32),
//! which has one thread, there is no worker: each request queues a drain (`jobs::runner::spawn`)
//! that answers the newest think and the newest recall waiting, on the CPU engine.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use shakmaty::Chess;

use flychess_arena::thinking::Asked;
pub use flychess_arena::thinking::{SecondGlance, Thought};
use flychess_brain::brain::engine::Fallback;
use flychess_brain::brain::gpu::GpuEngine;
use flychess_brain::brain::{Brain, cpu};

/// Who thinks: a player with the kit it plays from (`sim::players`), of any kind.
pub use flychess_arena::players::Seated;

pub struct ThinkRequest {
    pub id: u64,
    pub fly: Seated,
    pub position: Chess,
    /// Keys of the game's positions so far (for the repetition rule).
    pub earlier: Vec<u64>,
    /// Some(w): one-move imagination with weight w.
    pub imagination: Option<f32>,
    /// The game's positions so far (the last one is `position`), for a fly with habituation
    /// (its memory of the boards its side made); empty otherwise.
    pub history: Vec<Chess>,
    /// Only the rates are wanted again (a think shown again after its rates were let go).
    pub recall: bool,
}

/// Thinks for `request` on the calling thread (the worker's body; tests call it directly): the
/// seated player's own think (`Seated::think`), whatever its kind, on the brain it is seated on.
pub fn think(baseline: &Arc<Vec<f32>>, request: &ThinkRequest, gpu: Option<&Fallback<GpuEngine>>) -> Option<Thought> {
    let asked = Asked {
        id: request.id,
        position: &request.position,
        earlier: &request.earlier,
        imagination: request.imagination,
        history: &request.history,
    };
    request.fly.think(baseline, &asked, gpu)
}

/// The handle the window keeps: send requests, poll answers.
pub struct Thinker {
    requests: Sender<ThinkRequest>,
    pub answers: Receiver<Thought>,
    /// Which engine the worker thinks with, in words, once it has started it (the GPU engine's
    /// brain upload and pipelines are made on the worker, never on the UI thread).
    pub engine: Receiver<String>,
    #[cfg(not(target_arch = "wasm32"))]
    worker: std::thread::JoinHandle<()>,
    /// A page's drain, queued once per request.
    #[cfg(target_arch = "wasm32")]
    drain: Arc<Drain>,
}

/// What a page's thinker drains its requests with (one at a time, in the page's one thread).
#[cfg(target_arch = "wasm32")]
struct Drain {
    brain: Arc<Brain>,
    jobs: Receiver<ThinkRequest>,
    done: Sender<Thought>,
    wake: std::sync::Mutex<Box<dyn Fn() + Send>>,
    /// The brain at rest (an empty board's think), made at the first request.
    baseline: std::sync::OnceLock<Arc<Vec<f32>>>,
}

#[cfg(target_arch = "wasm32")]
impl Drain {
    /// Answers the newest think and the newest recall waiting (none: an earlier drain took them).
    fn drain(&self) {
        let (mut think_next, mut recall_next) = (None, None);
        for request in self.jobs.try_iter() {
            if request.recall {
                recall_next = Some(request);
            } else {
                think_next = Some(request);
            }
        }
        if think_next.is_none() && recall_next.is_none() {
            return;
        }
        let baseline = self.baseline.get_or_init(|| Arc::new(cpu::think(&self.brain, &[[[false; 64]; 12]]).data));
        for request in [think_next, recall_next].into_iter().flatten() {
            if let Some(t) = think(baseline, &request, None) {
                let _ = self.done.send(t);
                if let Ok(wake) = self.wake.lock() {
                    wake();
                }
            }
        }
    }
}

/// The GPU engine the thinker is asked to make on its own thread: eframe's device and queue.
pub type GpuDevice = (wgpu::Device, wgpu::Queue);

impl Thinker {
    /// A page's thinker: no worker, each request queues a drain (`ask`); `gpu` is let go (no GPU
    /// engine in a page) and `engine` says the CPU engine thinks.
    #[cfg(target_arch = "wasm32")]
    pub fn start(brain: Arc<Brain>, gpu: Option<GpuDevice>, wake: impl Fn() + Send + 'static) -> Thinker {
        // No GPU engine in a page: the CPU engine thinks, in the page's one thread.
        drop(gpu);
        let (requests, jobs) = unbounded::<ThinkRequest>();
        let (done, answers) = unbounded();
        let (said, engine) = unbounded();
        let _ = said.send("CPU engine, in the page's one thread".to_string());
        let drain =
            Arc::new(Drain { brain, jobs, done, wake: std::sync::Mutex::new(Box::new(wake)), baseline: std::sync::OnceLock::new() });
        Thinker { requests, answers, engine, drain }
    }

    /// Starts the worker; `wake` is called after each answer (the window's repaint). With `gpu`,
    /// the worker makes the GPU engine on that device (the view's) and the 12 steps run there, the
    /// view binding its rates buffer; it says which engine it thinks with on `engine`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn start(brain: Arc<Brain>, gpu: Option<GpuDevice>, wake: impl Fn() + Send + 'static) -> Thinker {
        let (requests, jobs) = unbounded::<ThinkRequest>();
        let (done, answers) = unbounded();
        let (said, engine) = unbounded();
        let worker = std::thread::Builder::new()
            .name("fly-thinker".into())
            .spawn(move || {
                let gpu = gpu.and_then(|(device, queue)| match GpuEngine::new(device, queue, &brain) {
                    Ok(g) => {
                        let _ = said.send("GPU engine on the window's device (the view draws its rates buffer directly)".to_string());
                        Some(Fallback::new(g, "the window's device", "the fly"))
                    }
                    Err(e) => {
                        let _ = said
                            .send(format!("CPU engine ({} threads): the GPU engine could not start ({e})", rayon::current_num_threads()));
                        None
                    }
                });
                wake();
                let baseline = Arc::new(cpu::think(&brain, &[[[false; 64]; 12]]).data);
                while let Ok(first) = jobs.recv() {
                    // Only the newest think and the newest recall matter.
                    let (mut think_next, mut recall_next) = (None, None);
                    for request in std::iter::once(first).chain(std::iter::from_fn(|| jobs.try_recv().ok())) {
                        if request.recall {
                            recall_next = Some(request);
                        } else {
                            think_next = Some(request);
                        }
                    }
                    for request in [think_next, recall_next].into_iter().flatten() {
                        let engine = if request.recall { None } else { gpu.as_ref() };
                        if let Some(t) = think(&baseline, &request, engine) {
                            // A GPU think answers first; its panels' copy follows from the CPU.
                            let follow = t.rates_follow.then(|| (t.clone(), flychess_brain::chess::planes(&t.position)));
                            if done.send(t).is_err() {
                                return;
                            }
                            wake();
                            if let Some((t, board)) = follow {
                                let rates = Arc::new(cpu::think(&brain, &[board]).data);
                                if done.send(Thought { rates, rates_follow: false, follow_up: true, gpu_rates: None, ..t }).is_err() {
                                    return;
                                }
                                wake();
                            }
                        }
                    }
                }
            })
            .expect("a thread can be started");
        Thinker { requests, answers, engine, worker }
    }

    /// False once the worker has ended (it died: the window holds the request channel open).
    pub fn alive(&self) -> bool {
        #[cfg(not(target_arch = "wasm32"))]
        {
            !self.worker.is_finished()
        }
        #[cfg(target_arch = "wasm32")]
        {
            true
        }
    }

    /// A thinker whose worker has already ended, as one that died would be (tests of the
    /// window's recovery).
    #[doc(hidden)]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn dead() -> Thinker {
        let (requests, _) = unbounded();
        let (_, answers) = unbounded();
        let (_, engine) = unbounded();
        let worker = std::thread::spawn(|| {});
        while !worker.is_finished() {
            std::thread::yield_now();
        }
        Thinker { requests, answers, engine, worker }
    }

    pub fn ask(&self, request: ThinkRequest) {
        let _ = self.requests.send(request);
        #[cfg(target_arch = "wasm32")]
        {
            let drain = self.drain.clone();
            if let Err(e) = crate::lab::jobs::runner::spawn("fly-thinker", move || drain.drain()) {
                tracing::error!("{e}");
            }
        }
    }
}
