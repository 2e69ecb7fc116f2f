//! The fly thinks off the UI thread. A worker thread owns the calibrated brain and answers think
//! requests over crossbeam channels: the 12 steps for the position (every step's rates kept for
//! the brain view), the readout's policy over the legal moves and its value, the move it plays
//! (repetition-avoiding; with imagination, the one-move look-ahead of `sim::play::look_ahead`), and
//! what it expects the opponent to play next (read from the look-ahead's board after the chosen
//! move when imagination has thought it, else one more think). The 12 steps run on the CPU engine, or on the GPU
//! engine when it shares the window's device (a real GPU): then the view draws straight from the
//! engine's rates buffer, only the descending neurons' read steps come back for the readout, and
//! the panels' copy of the rates (region bars, sentence, inspector) follows the answer, worked
//! out on the CPU. Requests carry an id; the window ignores answers to
//! requests it no longer wants (a takeback or new game mid-think). A recall asks again for an old
//! think whose rates the window let go (it keeps full rates only for the thinks it can show):
//! the same position thinks again on the CPU (the same rates, bit for bit), never on the GPU,
//! whose one rates buffer belongs to the newest think. Of the requests waiting, only the newest
//! think and the newest recall are answered. When the window goes, the request channel closes
//! and the worker ends after the think in hand; a worker that died is noticed (`alive`) and the
//! window starts another.

use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, unbounded};
use shakmaty::{Chess, Move, Position};

use flychess_sim::bio::BioBrain;
use flychess_sim::bio::file::DopamineFly;
use flychess_sim::brain::engine::Fallback;
use flychess_sim::brain::gpu::GpuEngine;
use flychess_sim::brain::{Brain, cpu};
use flychess_sim::charles::player::Trained;
use flychess_sim::chess::planes;
use flychess_sim::play::look_ahead;
use flychess_sim::players::Entrant;
use flychess_sim::readout::{Policy, choose, descending_features, policy, think_features};

/// Who thinks: a player with the kit it plays from (`sim::players`). The thinker thinks for a
/// readout fly (alone or with one of Philidor's aids), a dopamine fly with the model of the brain
/// it thinks on, and Charles (a trained transformer: no brain at all).
pub use flychess_sim::players::Seated;

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

/// What the fly thought about one position.
#[derive(Clone)]
pub struct Thought {
    pub id: u64,
    pub position: Chess,
    pub policy: Policy,
    /// The move it plays.
    pub chosen: Move,
    /// It skipped its favourite because that would bring back an earlier position.
    pub skipped_favourite: Option<Move>,
    /// Its value readout for the position it moved in, from its own side, in [−1, 1].
    pub value: f32,
    /// Every step's rates for this think: `rates[step * neurons + neuron]`. Empty when let go
    /// (recalled when shown) and, for a GPU think, until its CPU copy follows (`rates_follow`).
    pub rates: Arc<Vec<f32>>,
    /// A GPU think's panels' copy is on its way: the GPU engine read back only the descending
    /// neurons' read steps, and the thinker works the same position out on the CPU right after
    /// answering, sending it as a `follow_up` of the same id.
    pub rates_follow: bool,
    /// This answer only brings the rates of the think with the same id.
    pub follow_up: bool,
    /// The same rates still on the GPU, when the GPU engine thought on the view's device: the
    /// brain view binds this buffer as it is.
    pub gpu_rates: Option<wgpu::Buffer>,
    pub neurons: usize,
    /// The same brain's rates for an empty board (what the board itself moved is the difference).
    pub baseline: Arc<Vec<f32>>,
    /// Its policy for the position after its move: what it expects the opponent to play.
    pub expects: Option<Policy>,
    pub think_ms: f64,
    /// With two glances: the second look (the attended piece's patch of the eye driven harder),
    /// a think of its own the Brain tab can show; this think is then the first look.
    pub second_glance: Option<Box<SecondGlance>>,
}

/// The second of two glances (`flychess_sim::glances`): which square was looked at again, how
/// much harder, and the think it made (its policy chose the move played).
#[derive(Clone)]
pub struct SecondGlance {
    pub square: shakmaty::Square,
    pub gain: f32,
    pub thought: Thought,
}

/// Thinks for `request` on the calling thread (the worker's body; tests call it directly).
pub fn think(
    brain: &Brain,
    descending: &[u32],
    baseline: &Arc<Vec<f32>>,
    request: &ThinkRequest,
    gpu: Option<&Fallback<GpuEngine>>,
) -> Option<Thought> {
    let started = Instant::now();
    let pos = &request.position;
    if pos.legal_moves().is_empty() {
        return None;
    }
    let seat = &request.fly;
    let fly = match &seat.entrant {
        Entrant::Dopamine { .. } => {
            let (f, bio) = seat.kit.dopamine(&seat.entrant)?;
            return dopamine_think(bio, f, baseline, request, started);
        }
        Entrant::Charles { .. } => return charles_think(seat.kit.charles(&seat.entrant)?, baseline, request, started),
        _ => seat.readout()?,
    };
    let board = [planes(pos)];
    let readout = &fly.readout;
    // On the GPU the whole think stays in the engine's buffer (the view draws it); only the
    // descending neurons' read steps come back for the readout.
    let mut gpu_rates = None;
    let (features, rates) = match gpu.and_then(|g| {
        g.attempt(|g| {
            let buffer = g.think(&board)?.clone();
            let readings = g.read_current(descending, &readout.read_steps)?;
            Ok((buffer, readings))
        })
    }) {
        Some((buffer, readings)) => {
            gpu_rates = Some(buffer);
            (features_from_readings(&readings, descending.len(), readout.read_steps.len()), None)
        }
        // No GPU engine, or it failed (said once; the CPU thinks from now on).
        None => {
            let rates = cpu::think(brain, &board);
            (descending_features(&rates, 0, descending, &readout.read_steps), Some(rates))
        }
    };
    let heads = readout.heads(&features);
    let p = policy(pos, &heads);
    // Habituation lowers the moves whose boards look like those its side made this game.
    let habituated = match &seat.entrant {
        flychess_sim::players::Entrant::Fly { habituation: Some(h), .. } if !request.history.is_empty() => {
            let memory = flychess_sim::habituation::Memory::from_game(&request.history, pos.turn());
            let mut lowered = p.clone();
            memory.habituate(*h, pos, &p.moves, &mut lowered.probability, request.earlier.len());
            Some(lowered)
        }
        _ => None,
    };
    // Two glances: the piece the first think likes most looked at again, on the CPU engine.
    let second_look = match &seat.entrant {
        flychess_sim::players::Entrant::Fly { glances: Some(g), .. } => flychess_sim::glances::attended(&p).map(|square| {
            let seen = flychess_sim::glances::eye_square(pos, square);
            let x = flychess_sim::glances::attended_input(brain, &[(planes(pos), seen)], g.gain);
            let rates = cpu::think_from_input(brain, &x, 1);
            let again = policy(pos, &readout.heads(&descending_features(&rates, 0, descending, &readout.read_steps)));
            (square, *g, again, rates)
        }),
        _ => None,
    };
    let (index, skipped) = choose(pos, habituated.as_ref().unwrap_or(&p), &request.earlier)?;
    let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]));
    let (chosen, seen) = match (seat.aid(), request.imagination) {
        // The aid picks among the fly's five most probable moves (the picture stays the fly's think).
        (Some(aid), _) => {
            let evaluator = flychess_sim::search::Evaluator::fly(brain, readout, descending);
            match flychess_sim::search::Searcher::new(evaluator).decide(aid, pos, &request.earlier, None) {
                Ok(d) => (d.chosen, None),
                Err(e) => {
                    tracing::warn!("the {} could not choose ({e}); the fly's own move is played", aid.label());
                    (p.moves[index], None)
                }
            }
        }
        (_, Some(w)) => {
            let seen = look_ahead(brain, readout, descending, pos, habituated.as_ref().unwrap_or(&p), &request.earlier);
            (p.moves[seen.pick(w)], Some(seen))
        }
        (_, None) => match &second_look {
            // The second look's pick, as a player with two glances plays it.
            Some((square, g, again, _)) => {
                let picked = flychess_sim::glances::pick(&p, again, Some(*square), g.among).unwrap_or(index);
                (again.moves[flychess_sim::glances::unless_it_repeats(pos, again, picked, &request.earlier)], None)
            }
            None => (p.moves[index], None),
        },
    };
    let skipped_favourite = (skipped && chosen == p.moves[index]).then(|| favourite.map(|f| p.moves[f])).flatten();
    let mut after = pos.clone();
    after.play_unchecked(chosen);
    let expects = (!after.legal_moves().is_empty()).then(|| {
        // Imagination has already thought the board after the chosen move.
        let imagined = seen.as_ref().zip(p.moves.iter().position(|&m| m == chosen)).and_then(|(s, k)| s.features.get(k));
        match imagined {
            Some(f) => policy(&after, &readout.heads(f)),
            None => policy(&after, &readout.heads(&think_features(brain, &[planes(&after)], descending, &readout.read_steps)[0])),
        }
    });
    let second_glance = second_look.map(|(square, g, again, rates)| {
        Box::new(SecondGlance {
            square,
            gain: g.gain,
            thought: Thought {
                id: request.id,
                position: pos.clone(),
                value: again.value,
                policy: again,
                chosen,
                skipped_favourite: None,
                neurons: brain.neurons,
                rates_follow: false,
                follow_up: false,
                rates: Arc::new(rates.data),
                gpu_rates: None,
                baseline: baseline.clone(),
                expects: None,
                think_ms: started.elapsed().as_secs_f64() * 1000.0,
                second_glance: None,
            },
        })
    });
    Some(Thought {
        id: request.id,
        position: pos.clone(),
        value: p.value,
        policy: p,
        chosen,
        skipped_favourite,
        neurons: brain.neurons,
        rates_follow: rates.is_none(),
        follow_up: false,
        rates: Arc::new(rates.map(|r| r.data).unwrap_or_default()),
        gpu_rates,
        baseline: baseline.clone(),
        expects,
        think_ms: started.elapsed().as_secs_f64() * 1000.0,
        second_glance,
    })
}

/// The readout's features from `GpuEngine::read_current`'s readings of one position
/// (`[step][descending]`): each neuron's read steps summed in the readout's order and averaged,
/// as `descending_features` does over a whole think.
fn features_from_readings(readings: &[f32], descending: usize, steps: usize) -> Vec<f32> {
    (0..descending).map(|k| (0..steps).map(|s| readings[s * descending + k]).sum::<f32>() / steps.max(1) as f32).collect()
}

/// A dopamine fly's think: the board after each legal move from its own side in one look, the
/// MBONs' vote as its probabilities (softmax), the highest vote that does not repeat a position;
/// the rates shown are those of the board after its chosen move (what it smelled before moving),
/// on its own model of the brain (CPU). It has no value readout (0) and no forecast.
fn dopamine_think(
    bio: &BioBrain,
    fly: &DopamineFly,
    baseline: &Arc<Vec<f32>>,
    request: &ThinkRequest,
    started: Instant,
) -> Option<Thought> {
    let pos = &request.position;
    let (moves, votes, i) = bio.choose(&fly.m, pos, &request.earlier)?;
    let favourite = (0..votes.len()).max_by(|&a, &b| votes[a].total_cmp(&votes[b]).then(b.cmp(&a)))?;
    let board = flychess_sim::bio::learn::after(pos, moves[i], pos.turn());
    let rates = bio.glance(&fly.m, &[board], true).rates.expect("kept");
    let probability = flychess_sim::bio::vote_probabilities(&votes, bio.constants.temperature);
    Some(Thought {
        id: request.id,
        position: pos.clone(),
        value: 0.0,
        chosen: moves[i],
        skipped_favourite: (favourite != i).then(|| moves[favourite]),
        policy: Policy { moves, probability, value: 0.0 },
        neurons: rates.neurons,
        rates: Arc::new(rates.data),
        rates_follow: false,
        follow_up: false,
        gpu_rates: None,
        baseline: baseline.clone(),
        expects: None,
        think_ms: started.elapsed().as_secs_f64() * 1000.0,
        second_glance: None,
    })
}

/// Charles's think: its probabilities for the legal moves, the favourite that does not repeat a
/// position, and its probabilities after that move as its forecast. No neuron takes part: the
/// rates shown are the brain's at rest (an empty board), so every region's signal is zero. No
/// value head (0).
fn charles_think(c: &Trained, baseline: &Arc<Vec<f32>>, request: &ThinkRequest, started: Instant) -> Option<Thought> {
    let pos = &request.position;
    let (p, i) = match c.choose(pos, &request.earlier) {
        Ok(x) => x,
        Err(e) => {
            tracing::error!("Charles could not move: {e}");
            return None;
        }
    };
    let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]))?;
    let chosen = p.moves[i];
    let mut after = pos.clone();
    after.play_unchecked(chosen);
    let expects = (!after.legal_moves().is_empty()).then(|| c.policy(&after).ok()).flatten();
    Some(Thought {
        id: request.id,
        position: pos.clone(),
        value: 0.0,
        chosen,
        skipped_favourite: (favourite != i).then(|| p.moves[favourite]),
        policy: p,
        neurons: baseline.len() / flychess_sim::brain::STEPS,
        rates: baseline.clone(),
        rates_follow: false,
        follow_up: false,
        gpu_rates: None,
        baseline: baseline.clone(),
        expects,
        think_ms: started.elapsed().as_secs_f64() * 1000.0,
        second_glance: None,
    })
}

/// The handle the window keeps: send requests, poll answers.
pub struct Thinker {
    requests: Sender<ThinkRequest>,
    pub answers: Receiver<Thought>,
    /// Which engine the worker thinks with, in words, once it has started it (the GPU engine's
    /// brain upload and pipelines are made on the worker, never on the UI thread).
    pub engine: Receiver<String>,
    worker: std::thread::JoinHandle<()>,
}

/// The GPU engine the thinker is asked to make on its own thread: eframe's device and queue.
pub type GpuDevice = (wgpu::Device, wgpu::Queue);

impl Thinker {
    /// Starts the worker; `wake` is called after each answer (the window's repaint). With `gpu`,
    /// the worker makes the GPU engine on that device (the view's) and the 12 steps run there, the
    /// view binding its rates buffer; it says which engine it thinks with on `engine`.
    pub fn start(brain: Arc<Brain>, descending: Arc<Vec<u32>>, gpu: Option<GpuDevice>, wake: impl Fn() + Send + 'static) -> Thinker {
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
                        if let Some(t) = think(&brain, &descending, &baseline, &request, engine) {
                            // A GPU think answers first; its panels' copy follows from the CPU.
                            let follow = t.rates_follow.then(|| (t.clone(), planes(&t.position)));
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
        !self.worker.is_finished()
    }

    /// A thinker whose worker has already ended, as one that died would be (tests of the
    /// window's recovery).
    #[doc(hidden)]
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
    }
}
