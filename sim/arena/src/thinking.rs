//! The whole think of a seated player, whatever its kind, as the window shows it: the 12 steps
//! for the position (every step's rates kept for the brain view), the policy over the legal moves
//! and the value, the move played (repetition-avoiding; with imagination the one-move look-ahead
//! of `play::look_ahead`; with habituation its memory of the game's boards; with two glances the
//! second look; with one of Philidor's aids the aid's choice), and what it expects the opponent to
//! play next. A readout fly thinks on the CPU engine, or on the GPU engine when one is given (its
//! rates then stay in the engine's buffer and only the descending neurons' read steps come back);
//! a dopamine fly on its own model of the brain; Charles with no brain at all. The window's thinker
//! (`flychess_lab::thinker`) only calls `Seated::think` and never looks at a player's kind.

use std::sync::Arc;
use std::time::Instant;

use shakmaty::{Chess, Move, Position, Square};

use crate::bio::BioBrain;
use crate::bio::file::DopamineFly;
use crate::glances::Glances;
use crate::network::Network;
use crate::play::look_ahead;
use crate::players::{Entrant, Seated};
use flychess_brain::brain::engine::Fallback;
use flychess_brain::brain::gpu::GpuEngine;
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::brain::{Brain, Rates, cpu};
use flychess_brain::chess::planes;
use flychess_fly::readout::{Policy, Readout, choose, descending_features, policy, think_features_on};

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

/// The second of two glances (`crate::glances`): which square was looked at again, how
/// much harder, and the think it made (its policy chose the move played).
#[derive(Clone)]
pub struct SecondGlance {
    pub square: shakmaty::Square,
    pub gain: f32,
    pub thought: Thought,
}

/// What a seated player is asked to think about.
pub struct Asked<'a> {
    /// The think's number (answers carry it back).
    pub id: u64,
    pub position: &'a Chess,
    /// Keys of the game's positions so far (for the repetition rule).
    pub earlier: &'a [u64],
    /// Some(w): one-move imagination with weight w.
    pub imagination: Option<f32>,
    /// The game's positions so far (the last one is `position`), for a fly with habituation;
    /// empty otherwise.
    pub history: &'a [Chess],
}

impl Seated {
    /// The whole think of this player for `request`, whatever kind it is, on the calling thread:
    /// `brain` is the model the readout flies think on (the GPU engine in `gpu` when given, said
    /// once and left for the CPU if it fails), `descending` its readout's neurons, `baseline` its
    /// rates for an empty board. None when the position has no legal move or the player cannot
    /// think (a kit without it).
    pub fn think(
        &self,
        brain: &Brain,
        descending: &[u32],
        baseline: &Arc<Vec<f32>>,
        request: &Asked,
        gpu: Option<&Fallback<GpuEngine>>,
    ) -> Option<Thought> {
        let seat = self;
        let started = Instant::now();
        let pos = request.position;
        if pos.legal_moves().is_empty() {
            return None;
        }
        let fly = match &seat.entrant {
            Entrant::Dopamine { .. } => {
                let (f, bio) = seat.kit.dopamine(&seat.entrant)?;
                return dopamine_think(bio, f, baseline, request, started);
            }
            Entrant::Charles { .. } => return charles_think(seat.kit.charles(&seat.entrant)?, baseline, request, started),
            _ => seat.readout()?,
        };
        let readout = &fly.readout;
        let FirstLook { features, rates, gpu_rates } = first_look(brain, descending, &readout.read_steps, pos, gpu);
        let p = policy(pos, &readout.heads(&features));
        let habituated = habituated(&seat.entrant, request, &p);
        let second_look = second_look(&seat.entrant, brain, readout, descending, pos, &p);
        let (index, skipped) = choose(pos, habituated.as_ref().unwrap_or(&p), request.earlier)?;
        let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]));
        let (chosen, seen) = match (seat.aid(), request.imagination) {
            // The aid picks among the fly's five most probable moves (the picture stays the fly's think).
            (Some(aid), _) => {
                let evaluator = crate::search::Evaluator::fly(brain, readout, descending).on(seat.kit.engine());
                match crate::search::Searcher::new(evaluator).decide(aid, pos, request.earlier, None) {
                    Ok(d) => (d.chosen, None),
                    Err(e) => {
                        tracing::warn!("the {} could not choose ({e}); the fly's own move is played", aid.label());
                        (p.moves[index], None)
                    }
                }
            }
            (_, Some(w)) => {
                let seen =
                    look_ahead(brain, readout, descending, seat.kit.engine(), pos, habituated.as_ref().unwrap_or(&p), request.earlier);
                (p.moves[seen.pick(w)], Some(seen))
            }
            (_, None) => match &second_look {
                // The second look's pick, as a player with two glances plays it.
                Some((square, g, again, _)) => {
                    let picked = crate::glances::pick(&p, again, Some(*square), g.among).unwrap_or(index);
                    (again.moves[crate::glances::unless_it_repeats(pos, again, picked, request.earlier)], None)
                }
                None => (p.moves[index], None),
            },
        };
        let skipped_favourite = (skipped && chosen == p.moves[index]).then(|| favourite.map(|f| p.moves[f])).flatten();
        // Imagination has already thought the board after the chosen move.
        let imagined = seen.as_ref().zip(p.moves.iter().position(|&m| m == chosen)).and_then(|(s, k)| s.features.get(k)).map(Vec::as_slice);
        let expects = expected_reply((brain, readout, descending, seat.kit.engine()), pos, chosen, imagined);
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
}

/// A readout fly's first look at the board: the readout's features, and every step's rates
/// when the CPU thought them.
struct FirstLook {
    features: Vec<f32>,
    /// None when the GPU engine thought: the whole think stays in its buffer (`gpu_rates`, which
    /// the view draws) and only the descending neurons' read steps came back.
    rates: Option<Rates>,
    gpu_rates: Option<wgpu::Buffer>,
}

/// The first look on the GPU engine in `gpu` when given, else (or when it fails: said once, the
/// CPU thinks from then on) on the CPU engine.
fn first_look(brain: &Brain, descending: &[u32], read_steps: &[usize], pos: &Chess, gpu: Option<&Fallback<GpuEngine>>) -> FirstLook {
    let board = [planes(pos)];
    let on_gpu = gpu.and_then(|g| {
        g.attempt(|g| {
            let buffer = g.think(&board)?.clone();
            let readings = g.read_current(descending, read_steps)?;
            Ok::<_, flychess_brain::Error>((buffer, readings))
        })
    });
    match on_gpu {
        Some((buffer, readings)) => FirstLook {
            features: features_from_readings(&readings, descending.len(), read_steps.len()),
            rates: None,
            gpu_rates: Some(buffer),
        },
        None => {
            let rates = cpu::think(brain, &board);
            FirstLook { features: descending_features(&rates, 0, descending, read_steps), rates: Some(rates), gpu_rates: None }
        }
    }
}

/// With habituation, the policy `p` lowered for the moves whose boards look like those its side
/// made this game (None without habituation or before any move).
fn habituated(entrant: &Entrant, request: &Asked, p: &Policy) -> Option<Policy> {
    match entrant {
        Entrant::Fly { habituation: Some(h), .. } if !request.history.is_empty() => {
            let pos = request.position;
            let memory = crate::habituation::Memory::from_game(request.history, pos.turn());
            let mut lowered = p.clone();
            memory.habituate(*h, pos, &p.moves, &mut lowered.probability, request.earlier.len());
            Some(lowered)
        }
        _ => None,
    }
}

/// With two glances, the second look: the piece the first think (`p`) likes most looked at
/// again, on the CPU engine, as (its square, the glances' settings, the policy, the rates).
fn second_look(
    entrant: &Entrant,
    brain: &Brain,
    readout: &Readout,
    descending: &[u32],
    pos: &Chess,
    p: &Policy,
) -> Option<(Square, Glances, Policy, Rates)> {
    let Entrant::Fly { glances: Some(g), .. } = entrant else { return None };
    crate::glances::attended(p).map(|square| {
        let seen = crate::glances::eye_square(pos, square);
        let x = crate::glances::attended_input(brain, &[(planes(pos), seen)], g.gain);
        let rates = cpu::think_from_input(brain, &x, 1);
        let again = policy(pos, &readout.heads(&descending_features(&rates, 0, descending, &readout.read_steps)));
        (square, *g, again, rates)
    })
}

/// What the fly expects the opponent to play after `chosen` (None when the opponent has no legal
/// move): its policy for that position, from the features imagination already worked out for it
/// when there are some.
fn expected_reply(
    (brain, readout, descending, engine): (&Brain, &Readout, &[u32], Option<&Simulator>),
    pos: &Chess,
    chosen: Move,
    imagined: Option<&[f32]>,
) -> Option<Policy> {
    let mut after = pos.clone();
    after.play_unchecked(chosen);
    (!after.legal_moves().is_empty()).then(|| match imagined {
        Some(f) => policy(&after, &readout.heads(f)),
        None => policy(&after, &readout.heads(&think_features_on(engine, brain, &[planes(&after)], descending, &readout.read_steps)[0])),
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
fn dopamine_think(bio: &BioBrain, fly: &DopamineFly, baseline: &Arc<Vec<f32>>, request: &Asked, started: Instant) -> Option<Thought> {
    let pos = request.position;
    let (moves, votes, i) = bio.choose(&fly.m, pos, request.earlier)?;
    let favourite = (0..votes.len()).max_by(|&a, &b| votes[a].total_cmp(&votes[b]).then(b.cmp(&a)))?;
    let board = crate::bio::learn::after(pos, moves[i], pos.turn());
    let rates = bio.glance(&fly.m, &[board], true).rates.expect("kept");
    let probability = crate::bio::vote_probabilities(&votes, bio.constants.temperature);
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
fn charles_think(c: &dyn Network, baseline: &Arc<Vec<f32>>, request: &Asked, started: Instant) -> Option<Thought> {
    let pos = request.position;
    let (p, i) = match c.choose(pos, request.earlier) {
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
        neurons: baseline.len() / flychess_brain::brain::STEPS,
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
