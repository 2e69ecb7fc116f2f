//! The whole think of a seated player, whatever its kind, as the window shows it. The player
//! plays as every door plays it (`Player::consider_watched`: the same move, the same
//! probabilities), watched by `Shown`, which keeps what the window shows: every one of the 12
//! steps' rates of its readout fly's first look (thought on the GPU engine when one is given:
//! its rates then stay in the engine's buffer and only the descending neurons' read steps come
//! back), two glances' second look, what it expects the opponent to play next, a dopamine fly's
//! rates on its own model of the brain; Charles, with no brain at all, shows the brain at rest.
//! The `Thought` is built from what the watcher kept and what the player considered, never from a
//! match on the player's kind. The window's thinker (`flychess_lab::thinker`) only calls
//! `Seated::think`.

use std::sync::Arc;

use shakmaty::{Chess, Move, Position, Square};
use web_time::Instant;

use crate::players::{Considered, Look, Seated, Watch};
use flychess_brain::brain::Rates;
use flychess_brain::brain::engine::Fallback;
use flychess_brain::brain::gpu::GpuEngine;
use flychess_brain::chess::planes;
use flychess_fly::readout::{Policy, position_key};

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
    /// The whole think of this player for `request`, on the calling thread: it plays as every
    /// door plays it (with imagination at the request's weight when one is asked for, its memory
    /// of the game read off `request.history`), watched for what the window shows, a readout
    /// fly's first look on the GPU engine in `gpu` when given (said once and left for the CPU if
    /// it fails); `baseline` is the brain's rates for an empty board. None when the position has
    /// no legal move, the player cannot play here (a kit without it, an aid that needs
    /// Stockfish), or it has no policy to show (the rungs, the user's engines).
    pub fn think(&self, baseline: &Arc<Vec<f32>>, request: &Asked, gpu: Option<&Fallback<GpuEngine>>) -> Option<Thought> {
        let started = Instant::now();
        if request.position.legal_moves().is_empty() {
            return None;
        }
        let seat = match request.imagination {
            Some(w) => self.with_imagination(w),
            None => self.clone(),
        };
        let considered = seat.player(0, request.id, &None).and_then(|mut player| {
            player.remember_game(request.history);
            let mut shown = Shown { gpu, ..Shown::default() };
            Ok((player.consider_watched(request.position, request.earlier, &mut shown)?, shown))
        });
        match considered {
            Ok((considered, shown)) => shown.thought(request, considered, baseline, started),
            Err(e) => {
                tracing::warn!("{} could not think: {e}", seat.entrant.name());
                None
            }
        }
    }
}

/// What the window keeps of a player's decision (the `Watch` it plays under).
#[derive(Default)]
struct Shown<'a> {
    /// The GPU engine a readout fly's first look runs on, when the view has one.
    gpu: Option<&'a Fallback<GpuEngine>>,
    first: Option<FirstLook>,
    /// Two glances: the first look's policy, the square looked at again and the gain, and the
    /// second look's rates.
    glanced: Option<(Policy, Square, f32)>,
    second: Option<Rates>,
    expects: Option<Policy>,
    /// The rates the player's own model thought (a dopamine fly's).
    rates: Option<Rates>,
}

/// A readout fly's first look at the board, as the window keeps it.
struct FirstLook {
    /// Every step's rates when the CPU thought them; None when the GPU engine thought: the whole
    /// think stays in its buffer (`gpu_rates`, which the view draws) and only the descending
    /// neurons' read steps came back.
    rates: Option<Rates>,
    gpu_rates: Option<wgpu::Buffer>,
    neurons: usize,
}

impl Watch for Shown<'_> {
    fn think(&mut self, look: &Look) -> Option<Vec<f32>> {
        if look.attending.is_some() {
            // Two glances' second look, on the CPU engine (the eye's input is changed before the steps).
            let rates = look.rates();
            let features = look.features(&rates);
            self.second = Some(rates);
            return Some(features);
        }
        let (features, first) = first_look(look, self.gpu);
        self.first = Some(first);
        Some(features)
    }

    fn glanced(&mut self, first: &Policy, square: Square, gain: f32) {
        self.glanced = Some((first.clone(), square, gain));
    }

    fn expects(&mut self, reply: &dyn Fn() -> Option<Policy>) {
        self.expects = reply();
    }

    fn rates(&mut self, rates: &dyn Fn() -> Rates) {
        self.rates = Some(rates());
    }
}

impl Shown<'_> {
    /// The think to show: the policy the player considered (two glances: the first look's, the
    /// second a think of its own), the rates the watcher kept (the brain at rest when nothing of
    /// the brain thought: Charles). None for a player without a policy.
    fn thought(self, request: &Asked, considered: Considered, baseline: &Arc<Vec<f32>>, started: Instant) -> Option<Thought> {
        let Considered { moves, probability, value, chosen, .. } = considered;
        if moves.is_empty() {
            return None;
        }
        let decided = Policy { moves, probability, value: value.unwrap_or(0.0) };
        let think_ms = || started.elapsed().as_secs_f64() * 1000.0;
        let blank = |policy: Policy, rates: Vec<f32>, neurons: usize| Thought {
            id: request.id,
            position: request.position.clone(),
            value: policy.value,
            policy,
            chosen,
            skipped_favourite: None,
            neurons,
            rates: Arc::new(rates),
            rates_follow: false,
            follow_up: false,
            gpu_rates: None,
            baseline: baseline.clone(),
            expects: None,
            think_ms: think_ms(),
            second_glance: None,
        };
        let (policy, second_glance) = match (self.glanced, self.second) {
            (Some((first, square, gain)), Some(rates)) => {
                let neurons = rates.neurons;
                (first, Some(Box::new(SecondGlance { square, gain, thought: blank(decided, rates.data, neurons) })))
            }
            _ => (decided, None),
        };
        let skipped_favourite = skipped_favourite(request, &policy, chosen);
        let shown = |rates: Vec<f32>, neurons| Thought { skipped_favourite, second_glance, ..blank(policy, rates, neurons) };
        let mut thought = match (self.first, self.rates) {
            (Some(first), _) => Thought {
                rates_follow: first.rates.is_none(),
                gpu_rates: first.gpu_rates,
                ..shown(first.rates.map(|r| r.data).unwrap_or_default(), first.neurons)
            },
            (None, Some(rates)) => shown(rates.data, rates.neurons),
            // No neuron took part: every region's signal is zero.
            (None, None) => Thought { rates: baseline.clone(), ..shown(Vec::new(), baseline.len() / flychess_brain::brain::STEPS) },
        };
        thought.expects = self.expects;
        thought.think_ms = think_ms();
        Some(thought)
    }
}

/// The favourite of the policy shown, when the player did not play it because it would bring
/// back one of the game's earlier positions.
fn skipped_favourite(request: &Asked, p: &Policy, chosen: Move) -> Option<Move> {
    let favourite = p.moves[(0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]))?];
    let mut after = request.position.clone();
    after.play_unchecked(favourite);
    (favourite != chosen && request.earlier.contains(&position_key(&after))).then_some(favourite)
}

/// The first look on the GPU engine in `gpu` when given, else (or when it fails: said once, the
/// CPU thinks from then on) on the CPU engine: the readout's features and what the window keeps.
fn first_look(look: &Look, gpu: Option<&Fallback<GpuEngine>>) -> (Vec<f32>, FirstLook) {
    let board = [planes(look.pos)];
    let on_gpu = gpu.and_then(|g| {
        g.attempt(|g| {
            let buffer = g.think(&board)?.clone();
            let readings = g.read_current(look.descending, look.read_steps)?;
            Ok::<_, flychess_brain::Error>((buffer, readings))
        })
    });
    let neurons = look.brain.neurons;
    match on_gpu {
        Some((buffer, readings)) => (
            features_from_readings(&readings, look.descending.len(), look.read_steps.len()),
            FirstLook { rates: None, gpu_rates: Some(buffer), neurons },
        ),
        None => {
            let rates = look.rates();
            (look.features(&rates), FirstLook { rates: Some(rates), gpu_rates: None, neurons })
        }
    }
}

/// The readout's features from `GpuEngine::read_current`'s readings of one position
/// (`[step][descending]`): each neuron's read steps summed in the readout's order and averaged,
/// as `descending_features` does over a whole think.
fn features_from_readings(readings: &[f32], descending: usize, steps: usize) -> Vec<f32> {
    (0..descending).map(|k| (0..steps).map(|s| readings[s * descending + k]).sum::<f32>() / steps.max(1) as f32).collect()
}
