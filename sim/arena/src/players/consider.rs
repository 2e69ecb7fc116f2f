//! The one way a player of any kind decides its move: `Player::consider`, what games, the ladder,
//! duels, `flychess play`, `--watch`, UCI, Python and the window all play through. While it
//! decides, a player reports what it thinks to a `Watch`: the ladder's and UCI's `Unwatched`
//! keeps nothing (`consider` is `consider_watched` with it), the window's keeps every step's rates
//! to show (`crate::thinking`). A watcher may think a readout fly's looks itself (the window: on
//! its GPU engine, or on the CPU keeping every step), handing back the readout's features, and is
//! handed what the player would otherwise not work out (what it expects the opponent to play, the
//! rates of a dopamine fly's smell, two glances' first look): the move and the probabilities are
//! the same whoever watches.

use shakmaty::{Chess, Move, Position, Square};

use super::Player;
use crate::error::{Error, Result};
use crate::habituation::{Habituation, Memory};
use crate::play::{boards_after, greedy, look_ahead, think_and_look_ahead};
use crate::search::Evaluator;
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::brain::{Brain, Rates, cpu};
use flychess_brain::chess::planes;
use flychess_fly::readout::{Policy, Readout, choose, descending_features, policy, think_features_on};

/// What a player saw in a position before it moved.
#[derive(Clone, Debug)]
pub struct Considered {
    /// The legal moves (shakmaty's order) with the probability the player gives each: a fly's
    /// readout, Charles's network, a dopamine fly's vote, an aided player's base policy. Empty
    /// for the random and greedy movers and Stockfish, which have no policy.
    pub moves: Vec<Move>,
    pub probability: Vec<f32>,
    /// Its value of the position for the side to move, in [−1, 1], where it has a value head.
    pub value: Option<f32>,
    /// The move it plays.
    pub chosen: Move,
    /// Boards that went through the brain (or the mushroom body) to choose it: UCI's `nodes`.
    pub thinks: usize,
}

/// One board a readout fly's brain is asked to think: the position, or (two glances' second
/// look) the position with one square's patch of the eye driven `gain` times harder.
pub struct Look<'a> {
    pub brain: &'a Brain,
    pub descending: &'a [u32],
    /// The readout's read steps (its features are the descending neurons' mean over them).
    pub read_steps: &'a [usize],
    pub pos: &'a Chess,
    /// The attended square (as the board shows it, not as the mover's eye sees it) and the gain.
    pub attending: Option<(Square, f32)>,
}

impl Look<'_> {
    /// Every step's rates of this think, on the CPU engine.
    pub fn rates(&self) -> Rates {
        match self.attending {
            None => cpu::think(self.brain, &[planes(self.pos)]),
            Some((square, gain)) => {
                let seen = crate::glances::eye_square(self.pos, square);
                cpu::think_from_input(self.brain, &crate::glances::attended_input(self.brain, &[(planes(self.pos), seen)], gain), 1)
            }
        }
    }

    /// The readout's features from this think's `rates`.
    pub fn features(&self, rates: &Rates) -> Vec<f32> {
        descending_features(rates, 0, self.descending, self.read_steps)
    }
}

/// What watches a player decide. Every hook has a default that keeps nothing, so a watcher names
/// only what it keeps; a player calls the hooks of what it does, and they never change its move.
pub trait Watch {
    /// A readout fly's brain thinks `look`: a watcher that keeps what the brain did thinks it
    /// itself and hands back the readout's features (the same numbers the player's own think
    /// gives); None leaves the think to the player, which works out only what its readout reads.
    fn think(&mut self, _look: &Look) -> Option<Vec<f32>> {
        None
    }

    /// Two glances looked again at `square` (as the board shows it) with `gain`; `first` is the
    /// first look's policy (the move played and the probabilities considered are the second's).
    fn glanced(&mut self, _first: &Policy, _square: Square, _gain: f32) {}

    /// What the player expects the opponent to play after its move (None when the game is over
    /// by then), for a watcher that wants it: `reply` works it out.
    fn expects(&mut self, _reply: &dyn Fn() -> Option<Policy>) {}

    /// The rates of the think to show when the player's own model thought them (a dopamine fly:
    /// the board after its chosen move), for a watcher that wants them: `rates` works them out.
    fn rates(&mut self, _rates: &dyn Fn() -> Rates) {}
}

/// The watcher that keeps nothing: how every door but the window plays.
pub struct Unwatched;

impl Watch for Unwatched {}

/// A readout fly as it thinks: the brain, the readout, its descending neurons and the engine.
#[derive(Clone, Copy)]
struct ReadoutFly<'a> {
    brain: &'a Brain,
    readout: &'a Readout,
    descending: &'a [u32],
    engine: Option<&'a Simulator>,
}

impl<'a> ReadoutFly<'a> {
    fn of(evaluator: &Evaluator<'a>) -> ReadoutFly<'a> {
        ReadoutFly { brain: evaluator.brain, readout: evaluator.readout, descending: evaluator.descending, engine: evaluator.engine }
    }

    fn look<'p>(&self, pos: &'p Chess) -> Look<'p>
    where
        'a: 'p,
    {
        Look { brain: self.brain, descending: self.descending, read_steps: &self.readout.read_steps, pos, attending: None }
    }

    /// The first look's policy: the watcher's think when it thinks the board itself, else this
    /// fly's on its engine.
    fn first_look(&self, pos: &Chess, watch: &mut dyn Watch) -> Policy {
        let features = watch.think(&self.look(pos)).unwrap_or_else(|| {
            think_features_on(self.engine, self.brain, &[planes(pos)], self.descending, &self.readout.read_steps).remove(0)
        });
        policy(pos, &self.readout.heads(&features))
    }

    /// Its policy for the position after `chosen` (None when the opponent has no legal move),
    /// from the features imagination already worked out for that board when there are some.
    fn reply(&self, pos: &Chess, chosen: Move, imagined: Option<&[f32]>) -> Option<Policy> {
        let after = after_move(pos, chosen)?;
        Some(match imagined {
            Some(f) => policy(&after, &self.readout.heads(f)),
            None => {
                let features = think_features_on(self.engine, self.brain, &[planes(&after)], self.descending, &self.readout.read_steps);
                policy(&after, &self.readout.heads(&features[0]))
            }
        })
    }
}

/// The position after `chosen`, when the opponent has a legal move there.
fn after_move(pos: &Chess, chosen: Move) -> Option<Chess> {
    let mut after = pos.clone();
    after.play_unchecked(chosen);
    (!after.legal_moves().is_empty()).then_some(after)
}

fn over() -> Error {
    Error::Invalid("the game is over: no legal move to choose".into())
}

/// A policy's move `i` as considered.
fn of(p: Policy, i: usize, value: Option<f32>, thinks: usize) -> Considered {
    Considered { chosen: p.moves[i], moves: p.moves, probability: p.probability, value, thinks }
}

/// A move chosen without a policy (the rungs, the user's engines).
fn rung(chosen: Move) -> Considered {
    Considered { moves: Vec::new(), probability: Vec::new(), value: None, chosen, thinks: 0 }
}

impl Player<'_> {
    /// This player's move in `pos` with what it saw: its policy over the legal moves and its
    /// value of the position, where it has them. A position without a legal move is an error.
    pub fn consider(&mut self, pos: &Chess, earlier: &[u64]) -> Result<Considered> {
        self.consider_watched(pos, earlier, &mut Unwatched)
    }

    /// `consider`, reporting what it thinks to `watch` (the same move and probabilities).
    pub fn consider_watched(&mut self, pos: &Chess, earlier: &[u64], watch: &mut dyn Watch) -> Result<Considered> {
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            return Err(over());
        }
        Ok(match self {
            Player::Random(d) => rung(moves[d.below(moves.len())]),
            Player::Greedy(d) => rung(greedy(pos, &moves, d)),
            Player::Fly { brain, readout, descending, engine, imagination: Some(w), habituation, .. } => {
                let fly = ReadoutFly { brain, readout, descending, engine: *engine };
                imagining(fly, *w, habituation, pos, earlier, watch)
            }
            Player::Fly { brain, readout, descending, engine, imagination: None, glances: Some(g), .. } => {
                glancing(ReadoutFly { brain, readout, descending, engine: *engine }, *g, pos, earlier, watch)
            }
            Player::Fly { brain, readout, descending, engine, imagination: None, habituation, .. } => {
                favourite(ReadoutFly { brain, readout, descending, engine: *engine }, habituation, pos, earlier, watch)?
            }
            Player::SamplingFly { brain, readout, descending, engine, dice } => {
                let fly = ReadoutFly { brain, readout, descending, engine: *engine };
                let p = fly.first_look(pos, watch);
                let (i, value) = (dice.sample(&p.probability), p.value);
                watch.expects(&|| fly.reply(pos, p.moves[i], None));
                of(p, i, Some(value), 1)
            }
            Player::Dopamine { bio, m } => {
                let (moves, votes, i) = bio.choose(m, pos, earlier).ok_or_else(over)?;
                let probability = crate::bio::vote_probabilities(&votes, bio.constants.temperature);
                // What it smelled before moving: the board after its chosen move, on its own model.
                let board = crate::bio::learn::after(pos, moves[i], pos.turn());
                watch.rates(&|| bio.glance(m, &[board], true).rates.expect("kept"));
                let thinks = moves.len();
                Considered { chosen: moves[i], moves, probability, value: None, thinks }
            }
            Player::Charles(c) => {
                let (p, i) = c.choose(pos, earlier)?;
                watch.expects(&|| after_move(pos, p.moves[i]).and_then(|after| c.policy(&after).ok()));
                of(p, i, None, 0)
            }
            Player::Aided { searcher, aid, engine, .. } => {
                // The brain's think of the position the aid decides in, for a watcher that shows it.
                let _shown = watch.think(&ReadoutFly::of(&searcher.evaluator).look(pos));
                let decision = searcher.decide(*aid, pos, earlier, engine.as_mut())?;
                // The base policy and the value the aid worked from (kept from its decision).
                let root = searcher.evaluate(std::slice::from_ref(pos))?.remove(0);
                let evaluator = searcher.evaluator;
                watch.expects(&|| {
                    let e = evaluator.evaluate(&[after_move(pos, decision.chosen)?]).ok()?.remove(0);
                    Some(Policy { moves: e.moves, probability: e.prior, value: e.value })
                });
                Considered {
                    moves: root.moves,
                    probability: root.prior,
                    value: Some(root.value),
                    chosen: decision.chosen,
                    thinks: decision.boards_thought,
                }
            }
            Player::Uci { engine, limit, label } => {
                let fen = shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string();
                let answer = engine.best_move(&fen, *limit, std::time::Duration::from_secs(60))?;
                let chosen = answer.as_deref().and_then(|u| moves.iter().find(|m| flychess_brain::chess::uci(m) == u));
                rung(*chosen.ok_or_else(|| {
                    Error::Invalid(format!("{label} answered {} in {fen}, not a legal move", answer.as_deref().unwrap_or("no move")))
                })?)
            }
            Player::Stockfish { engine, limit, random_share, dice } => {
                if *random_share > 0.0 && dice.chance(*random_share) {
                    rung(moves[dice.below(moves.len())])
                } else {
                    let fen = shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string();
                    // An engine that answers no move or an illegal one is an error, never a random
                    // move stored as Stockfish's (the game that asked is replayed or left out).
                    let answer = engine.best_move(&fen, *limit, std::time::Duration::from_secs(60))?;
                    let chosen = answer.as_deref().and_then(|u| moves.iter().find(|m| flychess_brain::chess::uci(m) == u));
                    rung(*chosen.ok_or_else(|| {
                        Error::Invalid(format!("Stockfish answered {} in {fen}, not a legal move", answer.as_deref().unwrap_or("no move")))
                    })?)
                }
            }
        })
    }

    /// A player that remembers the game (a fly with habituation) reads it off the game's
    /// positions so far (`positions`, the last being the one it is to move in) instead of the
    /// moves it played itself: the window's game, which can be taken back. Any other player, or
    /// no positions, changes nothing.
    pub fn remember_game(&mut self, positions: &[Chess]) {
        if let (Player::Fly { habituation: Some((_, memory)), .. }, Some(last)) = (self, positions.last()) {
            *memory = Memory::from_game(positions, last.turn());
        }
    }
}

/// A readout fly playing its favourite that does not bring back an earlier position, its policy
/// lowered first by habituation when switched on (its memory then keeps the board its move made).
fn favourite(
    fly: ReadoutFly,
    habituation: &mut Option<(Habituation, Memory)>,
    pos: &Chess,
    earlier: &[u64],
    watch: &mut dyn Watch,
) -> Result<Considered> {
    let p = fly.first_look(pos, watch);
    let i = match habituation {
        Some((h, memory)) => {
            memory.at_ply(earlier.len());
            let mut lowered = p.clone();
            memory.habituate(*h, pos, &p.moves, &mut lowered.probability, earlier.len());
            let i = choose(pos, &lowered, earlier).ok_or_else(over)?.0;
            memory.remember(earlier.len(), &boards_after(pos, &p.moves[i..=i])[0]);
            i
        }
        None => choose(pos, &p, earlier).ok_or_else(over)?.0,
    };
    watch.expects(&|| fly.reply(pos, p.moves[i], None));
    let value = p.value;
    Ok(of(p, i, Some(value), 1))
}

/// A readout fly with one-move imagination at weight `w` (`play::LookAhead::pick`), its
/// look-ahead's probabilities lowered by habituation when switched on. Unwatched, the position and
/// the boards after its moves think as one batch; a watcher that thinks the position itself gets
/// the boards after thought as a batch of their own (the same numbers).
fn imagining(
    fly: ReadoutFly,
    w: f32,
    habituation: &mut Option<(Habituation, Memory)>,
    pos: &Chess,
    earlier: &[u64],
    watch: &mut dyn Watch,
) -> Considered {
    let (p, mut seen) = match watch.think(&fly.look(pos)) {
        Some(features) => {
            let p = policy(pos, &fly.readout.heads(&features));
            let seen = look_ahead(fly.brain, fly.readout, fly.descending, fly.engine, pos, &p, earlier);
            (p, seen)
        }
        None => think_and_look_ahead(fly.brain, fly.readout, fly.descending, fly.engine, pos, earlier),
    };
    if let Some((h, memory)) = habituation {
        memory.at_ply(earlier.len());
        memory.habituate(*h, pos, &p.moves, &mut seen.probability, earlier.len());
    }
    let (i, value) = (seen.pick(w), p.value);
    if let Some((_, memory)) = habituation {
        memory.remember(earlier.len(), &boards_after(pos, &p.moves[i..=i])[0]);
    }
    // Imagination has already thought the board after each move.
    watch.expects(&|| fly.reply(pos, p.moves[i], seen.features.get(i).map(Vec::as_slice)));
    // The board, and the board after each move unless one mates (then it is played).
    let thinks = 1 + if seen.mate.is_some() { 0 } else { p.moves.len() };
    of(p, i, Some(value), thinks)
}

/// A readout fly with two glances at `g` (`crate::glances`): the piece its first look likes most
/// looked at again on the CPU engine, the move the second look's pick unless it repeats.
fn glancing(fly: ReadoutFly, g: crate::glances::Glances, pos: &Chess, earlier: &[u64], watch: &mut dyn Watch) -> Considered {
    let p = fly.first_look(pos, watch);
    let look = crate::glances::second_look(fly.readout, pos, &p, g, |square| {
        watch.think(&Look { attending: Some((square, g.gain)), ..fly.look(pos) }).unwrap_or_else(|| {
            let seen = crate::glances::eye_square(pos, square);
            crate::glances::attending_features(fly.brain, &[(planes(pos), seen)], g.gain, fly.descending, &fly.readout.read_steps).remove(0)
        })
    });
    if let Some(square) = look.square {
        watch.glanced(&look.first, square, g.gain);
    }
    let i = crate::glances::unless_it_repeats(pos, &look.second, look.chosen, earlier);
    watch.expects(&|| fly.reply(pos, look.second.moves[i], None));
    let value = look.second.value;
    of(look.second, i, Some(value), 2)
}
