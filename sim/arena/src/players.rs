//! Who plays. One description of every kind of player — the random and greedy movers, Stockfish
//! (at its lowest strength, with a share of random moves), a fly (its favourite, with imagination,
//! or sampling its policy), a dopamine fly, Charles, and a fly or Charles with one of Philidor's
//! aids — as `Entrant`: its name, the content id its games are stored under, how a command line
//! names it. What the players of a run share is a `Kit`, owned so a thread can keep it (the
//! ladder's workers, the window's thinker and its `--watch` opponent, the UCI engine): the brain,
//! its descending neurons, and every fly, dopamine fly and Charles run by the id it plays under.
//! `Player::new` makes the player an entrant is, from a kit, and `Player::consider` (in
//! `players/consider.rs`) is its move: the one way every player plays, for games, the ladder and
//! duels, `flychess play`, the dopamine fly's opponents, the window's opponent, UCI, Python and
//! the window's own think (which watches it decide). What a new kind of player touches is listed
//! in CONTRIBUTING.md.

mod consider;
mod naming;
mod seat;

pub use consider::{Considered, Look, Unwatched, Watch};
pub use naming::{Lookup, NAME_GRAMMAR, Named, named, needs_brain};
pub use seat::{Seating, Venue, check, seat};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shakmaty::{Chess, Move, Position};

use crate::bio::BioBrain;
use crate::bio::file::DopamineFly;
use crate::error::{Error, Result};
use crate::glances::Glances;
use crate::habituation::{Habituation, Memory};
use crate::network::Network;
use crate::play::boards_after;
use crate::search::{Aid, Budget, Evaluator, Searcher};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::chess::planes;
use flychess_fly::fly::Fly;
use flychess_fly::readout::{Readout, think_features_on};
use flychess_fly::stats::Dice;
use flychess_fly::stockfish::{EngineOptions, Limit, Supervised};

/// Who plays: every kind of player, by what it is. Its `name` is what people read, its `id` what
/// its games are stored under (a fly's content hash, never its name).
#[derive(Clone, Debug, PartialEq)]
pub enum Entrant {
    Random,
    Greedy,
    /// Stockfish at its lowest UCI_Elo, playing a random legal move with this probability.
    Stockfish {
        random_share: f64,
    },
    /// A fly: `id` is `Fly::player_id(imagination)`, what its games are stored under; `sample`
    /// draws its moves from the policy (the clone test) instead of playing the favourite.
    Fly {
        name: String,
        id: String,
        imagination: Option<f32>,
        sample: bool,
        /// Habituation against repetition (`crate::habituation`), when switched on.
        habituation: Option<Habituation>,
        /// Two glances (`crate::glances`), when switched on.
        glances: Option<Glances>,
    },
    /// A dopamine fly (`bio`): `id` is `DopamineFly::player_id`.
    Dopamine {
        name: String,
        id: String,
    },
    /// Charles (`charles::player`): `name` is its player name (`charles` or `charles:RUN`), `id`
    /// the content of its weights.
    Charles {
        name: String,
        id: String,
    },
    /// A fly or Charles helped by one of Philidor's aids (`search::Aid`), labelled as such and
    /// never the fly's own strength; `value` is the fly (name, id) whose value head judges
    /// Charles's boards (Charles has none).
    Aided {
        base: Box<Entrant>,
        aid: Aid,
        value: Option<(String, String)>,
    },
    /// Any UCI engine of the user's (`Entrant::uci`): `name` as the user calls it, `id` from what
    /// the engine calls itself (`id name`) and the options it plays with, so its games are kept
    /// under what plays rather than under a name that can be reused.
    Uci {
        name: String,
        id: String,
        path: PathBuf,
        options: Vec<(String, String)>,
    },
}

/// How long a UCI engine of the user's thinks a move on the ladder (`go movetime`: every engine
/// honours it, unlike a node count).
pub const UCI_MOVETIME_MS: u64 = 100;

/// A share of random moves as a whole percent, when it is one (0.25 → 25): the rungs' names and
/// ids as they always were; any other share is named by its exact value, so two shares never
/// share an id and a set of games.
fn whole_percent(share: f64) -> Option<u32> {
    let percent = (share * 100.0).round();
    ((share * 100.0 - percent).abs() < 1e-9).then_some(percent as u32)
}

/// What every engine on the ladder starts with (one thread, a small hash), before its own options.
fn ladder_engine(elo: Option<u32>, extra: Vec<(String, String)>) -> EngineOptions {
    EngineOptions { threads: 1, hash_mb: 16, elo, extra }
}

impl Entrant {
    /// Whether `name` names a rung (random, greedy, stockfish, stockfish:P) rather than a fly.
    pub fn names_rung(name: &str) -> bool {
        matches!(name.split(':').next(), Some("random" | "greedy" | "stockfish"))
    }

    /// The rung a player name on the command line means: random, greedy, stockfish, or
    /// stockfish:P (a share P of random moves); None when the name is a fly's.
    pub fn rung(name: &str) -> Option<Result<Entrant>> {
        let mut parts = name.split(':');
        Some(Ok(match parts.next()? {
            "random" => Entrant::Random,
            "greedy" => Entrant::Greedy,
            "stockfish" => {
                let text = parts.next();
                match text.map(str::parse::<f64>).transpose() {
                    Ok(share) if share.is_none_or(|p| (0.0..=1.0).contains(&p)) && parts.next().is_none() => {
                        Entrant::Stockfish { random_share: share.unwrap_or(0.0) }
                    }
                    _ => {
                        return Some(Err(Error::Invalid(format!(
                            "{name}: stockfish:P takes a share P of random moves from 0 to 1, e.g. stockfish:0.25 (not {:?})",
                            text.unwrap_or_default()
                        ))));
                    }
                }
            }
            _ => return None,
        }))
    }

    /// A fly as it plays on the ladder (the favourite, with the repetition rule).
    pub fn fly(fly: &Fly, imagination: Option<f32>) -> Entrant {
        Entrant::fly_with(fly, imagination, None)
    }

    /// A fly as it plays on the ladder with its switches: imagination at weight `imagination`,
    /// habituation with `habituation`'s parameters (its games are kept under both).
    pub fn fly_with(fly: &Fly, imagination: Option<f32>, habituation: Option<Habituation>) -> Entrant {
        let id = match habituation {
            Some(h) => format!("{}-habituation-{}", fly.player_id(imagination), h.label()),
            None => fly.player_id(imagination),
        };
        Entrant::Fly { name: fly.meta.name.clone(), id, imagination, sample: false, habituation, glances: None }
    }

    /// A fly playing with two glances (`crate::glances`) at `g`.
    pub fn glancing(fly: &Fly, g: Glances) -> Entrant {
        let id = format!("{}-glances-{}", fly.player_id(None), g.label());
        Entrant::Fly { name: fly.meta.name.clone(), id, imagination: None, sample: false, habituation: None, glances: Some(g) }
    }

    /// A dopamine fly as it plays (the highest vote, with the repetition rule).
    pub fn dopamine(fly: &DopamineFly) -> Entrant {
        Entrant::Dopamine { name: fly.meta.name.clone(), id: fly.player_id() }
    }

    /// A trained Charles as it plays (the favourite, with the repetition rule).
    pub fn charles(c: &dyn Network) -> Entrant {
        Entrant::Charles { name: c.player_name().to_string(), id: c.id().to_string() }
    }

    /// `base` (a fly playing its favourite, or Charles with the fly `value` for its values) with `aid`.
    pub fn aided(base: Entrant, aid: Aid, value: Option<&Fly>) -> Result<Entrant> {
        let value = match (&base, value) {
            (Entrant::Fly { imagination: None, sample: false, .. }, None) => None,
            (Entrant::Charles { .. }, Some(f)) => Some((f.meta.name.clone(), f.player_id(None))),
            (Entrant::Charles { name, .. }, None) => {
                return Err(Error::Invalid(format!("{name} has no value head: a fly's value must judge its boards")));
            }
            (other, _) => {
                return Err(Error::Invalid(format!(
                    "{} cannot take an aid: only a fly playing its favourite or Charles can",
                    other.name()
                )));
            }
        };
        Ok(Entrant::Aided { base: Box::new(base), aid, value })
    }

    /// The UCI engine at `path` playing with `options` (set in this order), called `name` here:
    /// the engine is started once to read what it calls itself; its id is `uci-` and the first
    /// 16 hex digits of SHA-256 over that name and the options.
    pub fn uci(name: &str, path: &Path, options: Vec<(String, String)>) -> Result<Entrant> {
        use sha2::{Digest, Sha256};
        flychess_fly::fly::check_name(name)?;
        if Entrant::names_rung(name) {
            return Err(Error::Invalid(format!("{name} is a rung's name; call the engine something else")));
        }
        let engine = flychess_fly::stockfish::Engine::start(path, &ladder_engine(None, options.clone()))?;
        let id_name = engine.id_name.clone().ok_or_else(|| Error::Invalid(format!("{} gave no `id name`", path.display())))?;
        drop(engine);
        let mut hash = Sha256::new();
        hash.update(id_name.as_bytes());
        for (k, v) in &options {
            hash.update(format!("\n{k}={v}").as_bytes());
        }
        let id = format!("uci-{}", &flychess_brain::files::hex(&hash.finalize())[..16]);
        Ok(Entrant::Uci { name: name.to_string(), id, path: path.to_path_buf(), options })
    }

    /// Whether this player needs Stockfish to play.
    pub fn needs_stockfish(&self) -> bool {
        matches!(self, Entrant::Stockfish { .. } | Entrant::Aided { aid: Aid::Select { .. }, .. })
    }

    /// The same fly drawing its moves from its policy.
    pub fn sampling(fly: &Fly) -> Entrant {
        Entrant::Fly {
            name: fly.meta.name.clone(),
            id: fly.player_id(None),
            imagination: None,
            sample: true,
            habituation: None,
            glances: None,
        }
    }

    pub fn name(&self) -> String {
        match self {
            Entrant::Random => "random".into(),
            Entrant::Greedy => "greedy".into(),
            Entrant::Stockfish { random_share } if *random_share > 0.0 => match whole_percent(*random_share) {
                Some(percent) => format!("stockfish-min {percent}% random"),
                // A share that is no whole percent is named exactly (its games are kept under it).
                None => format!("stockfish-min {random_share} random"),
            },
            Entrant::Stockfish { .. } => "stockfish-min (anchor)".into(),
            Entrant::Fly { name, sample: true, .. } => format!("{name} (sampling)"),
            Entrant::Fly { name, imagination, habituation, glances, .. } => {
                format!(
                    "{name}{}{}{}",
                    if imagination.is_some() { " +imagination" } else { "" },
                    if habituation.is_some() { " +habituation" } else { "" },
                    if glances.is_some() { " +glances" } else { "" }
                )
            }
            Entrant::Dopamine { name, .. } | Entrant::Charles { name, .. } | Entrant::Uci { name, .. } => name.clone(),
            Entrant::Aided { base, aid, value: None } => format!("{} + {}", base.name(), aid.label()),
            Entrant::Aided { base, aid, value: Some((fly, _)) } => format!("{} + {} ({fly}'s value)", base.name(), aid.label()),
        }
    }

    /// What the games are stored under: the rungs by what they are, a fly by its content.
    pub fn id(&self) -> String {
        match self {
            Entrant::Fly { id, sample: true, .. } => format!("{id}-sampling"),
            Entrant::Fly { id, .. } | Entrant::Dopamine { id, .. } | Entrant::Charles { id, .. } | Entrant::Uci { id, .. } => id.clone(),
            Entrant::Aided { base, aid, value } => {
                format!("{}+{}{}", base.id(), aid.id_part(), value.as_ref().map(|(_, id)| format!("-value-{id}")).unwrap_or_default())
            }
            other => other.name(),
        }
    }

    /// A fixed rung (random, greedy, Stockfish) rather than a player rated against the rungs.
    pub fn is_rung(&self) -> bool {
        matches!(self, Entrant::Random | Entrant::Greedy | Entrant::Stockfish { .. })
    }
}

/// What the players of a run share: the brain and its descending neurons, and each fly, dopamine
/// fly (with the mushroom-body model they think on) and Charles run under the ids of the entrants
/// that play with it. Owned (`Arc`s), so a thread can keep it; cloning it is cheap.
#[derive(Clone, Default)]
pub struct Kit {
    brain: Option<Arc<Brain>>,
    descending: Arc<Vec<u32>>,
    flies: BTreeMap<String, Arc<Fly>>,
    bio: Option<Arc<BioBrain>>,
    dopamine: BTreeMap<String, Arc<DopamineFly>>,
    charles: BTreeMap<String, Arc<dyn Network>>,
    /// The engine its readout flies think on (None: the CPU engine).
    engine: Option<Arc<Simulator>>,
}

impl Kit {
    /// A kit on `brain` read out at its `descending` neurons, with no player in it yet (made by
    /// `Seating`, the one way a door gets a kit).
    pub(crate) fn new(brain: Arc<Brain>, descending: Vec<u32>) -> Kit {
        Kit { brain: Some(brain), descending: Arc::new(descending), ..Kit::default() }
    }

    /// The kit with its readout flies thinking on `engine` (None: the CPU engine).
    pub(crate) fn on(mut self, engine: Option<Arc<Simulator>>) -> Kit {
        self.engine = engine;
        self
    }

    /// The engine its readout flies think on (None: the CPU engine).
    pub fn engine(&self) -> Option<&Simulator> {
        self.engine.as_deref()
    }

    /// The kit with these flies, each under the ids of the entrants in its list that play with it
    /// (a fly, or a fly with an aid).
    pub(crate) fn with_flies(mut self, flies: &[(Fly, Vec<Entrant>)]) -> Kit {
        for (fly, entrants) in flies {
            let fly = Arc::new(fly.clone());
            for e in entrants {
                let plays_as = match e {
                    Entrant::Aided { base, .. } => base,
                    other => other,
                };
                if let Entrant::Fly { id, .. } = plays_as {
                    self.flies.insert(id.clone(), fly.clone());
                }
            }
        }
        self
    }

    /// The kit with these Charles runs too.
    pub(crate) fn with_charles(mut self, charles: &[Arc<dyn Network>]) -> Kit {
        for c in charles {
            self.charles.insert(c.id().to_string(), c.clone());
        }
        self
    }

    /// The kit with dopamine flies too, each checked against `bio`, the model they think on.
    pub(crate) fn with_dopamine(mut self, bio: Arc<BioBrain>, flies: &[DopamineFly]) -> Result<Kit> {
        for f in flies {
            f.check(&bio)?;
            self.dopamine.insert(f.player_id(), Arc::new(f.clone()));
        }
        self.bio = Some(bio);
        Ok(self)
    }

    pub fn brain(&self) -> Option<&Arc<Brain>> {
        self.brain.as_ref()
    }

    pub fn descending(&self) -> &[u32] {
        &self.descending
    }

    /// The readout fly `e` plays with: a fly's own, an aided fly's base, Charles's value fly.
    pub fn fly(&self, e: &Entrant) -> Option<&Arc<Fly>> {
        match e {
            Entrant::Fly { id, .. } => self.flies.get(id),
            Entrant::Aided { value: Some((_, id)), .. } => self.flies.get(id),
            Entrant::Aided { base, .. } => self.fly(base),
            _ => None,
        }
    }

    /// The dopamine fly `e` is, with the model it thinks on.
    pub fn dopamine(&self, e: &Entrant) -> Option<(&Arc<DopamineFly>, &Arc<BioBrain>)> {
        match e {
            Entrant::Dopamine { id, .. } => self.dopamine.get(id).zip(self.bio.as_ref()),
            _ => None,
        }
    }

    /// The Charles run `e` plays with (itself, or the base of an aided Charles).
    pub fn charles(&self, e: &Entrant) -> Option<&dyn Network> {
        match e {
            Entrant::Charles { id, .. } => self.charles.get(id).map(|c| c.as_ref()),
            Entrant::Aided { base, .. } => self.charles(base),
            _ => None,
        }
    }

    fn brain_for(&self, e: &Entrant) -> Result<(&Brain, &[u32])> {
        self.brain.as_deref().map(|b| (b, &self.descending[..])).ok_or_else(|| Error::NeedsBrain(e.name()))
    }

    fn readout_of(&self, name: &str, id: &str) -> Result<&Readout> {
        self.flies.get(id).map(|f| &f.readout).ok_or_else(|| Error::Invalid(format!("no readout for fly {name} ({id})")))
    }
}

/// One player with the kit it plays from, owned: what the window's thinker thinks for.
#[derive(Clone)]
pub struct Seated {
    pub entrant: Entrant,
    pub kit: Arc<Kit>,
}

impl Seated {
    /// The player's own name (a fly's name without its aid or imagination; Charles's player name).
    pub fn own_name(&self) -> String {
        match &self.entrant {
            Entrant::Fly { name, .. } | Entrant::Dopamine { name, .. } | Entrant::Charles { name, .. } => name.clone(),
            Entrant::Aided { base, .. } => Seated { entrant: (**base).clone(), kit: self.kit.clone() }.own_name(),
            other => other.name(),
        }
    }

    /// Whether the brain thinks for this player (Charles and the rungs have none).
    pub fn has_brain(&self) -> bool {
        self.readout().is_some() || self.kit.dopamine(&self.entrant).is_some()
    }

    /// The readout fly, when the player is one (alone or with an aid).
    pub fn readout(&self) -> Option<&Arc<Fly>> {
        match &self.entrant {
            Entrant::Aided { value: Some(_), .. } => None,
            e => self.kit.fly(e),
        }
    }

    /// Whether its think needs the game's boards so far (a fly with habituation remembers them).
    pub fn remembers_the_game(&self) -> bool {
        matches!(self.entrant, Entrant::Fly { habituation: Some(_), .. })
    }

    /// The aid, when the player has one.
    pub fn aid(&self) -> Option<Aid> {
        match &self.entrant {
            Entrant::Aided { aid, .. } => Some(*aid),
            _ => None,
        }
    }
}

/// A player as it plays, borrowing what it needs from a `Kit` (`Player::new`).
pub enum Player<'a> {
    Random(Dice),
    Greedy(Dice),
    /// A fly; with `imagination: Some(w)` it looks at the board after each of its legal moves.
    Fly {
        brain: &'a Brain,
        readout: &'a Readout,
        descending: &'a [u32],
        /// The engine it thinks on (None: the CPU engine).
        engine: Option<&'a Simulator>,
        imagination: Option<f32>,
        /// Habituation's parameters and the fly's memory of this game's boards, when switched on.
        habituation: Option<(Habituation, Memory)>,
        /// Two glances, when switched on (a second think attending to one piece).
        glances: Option<Glances>,
    },
    /// A fly that draws its move from its policy (the probabilities as they are) with its own
    /// dice: the player of the clone test with independent seeds.
    SamplingFly {
        brain: &'a Brain,
        readout: &'a Readout,
        descending: &'a [u32],
        engine: Option<&'a Simulator>,
        dice: Dice,
    },
    Stockfish {
        engine: Supervised,
        limit: Limit,
        random_share: f64,
        dice: Dice,
    },
    /// A dopamine fly: the MBONs' vote on the board after each legal move (`bio`).
    Dopamine {
        bio: &'a BioBrain,
        m: &'a [f32],
    },
    /// Charles, the transformer that never was a fly (`charles::player`).
    Charles(&'a dyn Network),
    /// A fly or Charles with one of Philidor's aids (`search`): a judge, a search, or Stockfish
    /// choosing among its top five (`engine`); `label` names it as such.
    Aided {
        searcher: Box<Searcher<'a>>,
        aid: Aid,
        engine: Option<Supervised>,
        label: String,
    },
    /// Any UCI engine (`Entrant::Uci`), thinking `limit` a move.
    Uci {
        engine: Supervised,
        limit: Limit,
        label: String,
    },
}

impl Player<'_> {
    pub fn name(&self) -> String {
        match self {
            Player::Random(_) => "random".into(),
            Player::Greedy(_) => "greedy".into(),
            Player::Fly { imagination: Some(_), .. } => "fly (imagination)".into(),
            Player::Fly { .. } => "fly".into(),
            Player::SamplingFly { .. } => "fly (sampling)".into(),
            Player::Stockfish { random_share, .. } if *random_share > 0.0 => format!("stockfish ({:.0}% random)", 100.0 * random_share),
            Player::Stockfish { .. } => "stockfish".into(),
            Player::Dopamine { .. } => "dopamine fly".into(),
            Player::Charles(c) => c.player_name().to_string(),
            Player::Aided { label, .. } | Player::Uci { label, .. } => label.clone(),
        }
    }

    /// What its next decisions may spend (a search player's simulations; the others think once,
    /// in milliseconds, and ignore it).
    pub fn set_budget(&mut self, budget: Budget) {
        if let Player::Aided { searcher, .. } = self {
            searcher.budget = budget;
        }
    }

    /// Whether a budget changes what this player does (it searches).
    pub fn searches(&self) -> bool {
        matches!(self, Player::Aided { aid: Aid::Search { .. }, .. })
    }

    /// This player's move in `pos`; `earlier` are the keys of the game's positions so far.
    pub fn choose(&mut self, pos: &Chess, earlier: &[u64]) -> Result<Move> {
        Ok(self.consider(pos, earlier)?.chosen)
    }

    /// The value of the board after each of `moves` from the mover's side, in [−1, 1] (a mate
    /// +1, a stalemate or a dead position 0, else minus the value head's reading of the board for
    /// the opponent), all thought as one batch; None for a player without a value head.
    pub fn values_after(&mut self, pos: &Chess, moves: &[Move]) -> Result<Option<Vec<f32>>> {
        let afters = boards_after(pos, moves);
        let settled = |a: &Chess| {
            if a.is_checkmate() {
                Some(1.0)
            } else if a.is_stalemate() || a.is_insufficient_material() {
                Some(0.0)
            } else {
                None
            }
        };
        let open: Vec<Chess> = afters.iter().filter(|a| settled(a).is_none()).cloned().collect();
        let values: Vec<f32> = match self {
            Player::Fly { brain, readout, descending, engine, .. } | Player::SamplingFly { brain, readout, descending, engine, .. } => {
                let features =
                    think_features_on(*engine, brain, &open.iter().map(planes).collect::<Vec<_>>(), descending, &readout.read_steps);
                features.iter().map(|f| readout.heads(f).value).collect()
            }
            Player::Aided { searcher, .. } => searcher.evaluate(&open)?.into_iter().map(|e| e.value).collect(),
            _ => return Ok(None),
        };
        let mut values = values.into_iter();
        Ok(Some(afters.iter().map(|a| settled(a).unwrap_or_else(|| -values.next().unwrap_or(0.0))).collect()))
    }
}

impl<'a> Player<'a> {
    /// The player `e` is, from `kit`, with its dice seeded by `dice`; Stockfish (the engine at
    /// `stockfish`) at its lowest UCI_Elo limited to `stockfish_nodes` nodes a move. The ladder's,
    /// the duels', `flychess play`'s, the dopamine fly's opponents' and the window's `--watch` opponent.
    pub fn new(e: &Entrant, kit: Option<&'a Kit>, stockfish_nodes: u64, dice: u64, stockfish: &Option<PathBuf>) -> Result<Player<'a>> {
        let engine = |elo: Option<u32>| -> Result<Supervised> {
            let path = stockfish.clone().ok_or_else(|| Error::Invalid(flychess_fly::stockfish::INSTALL_HINT.into()))?;
            Ok(Supervised::new(path, ladder_engine(elo, Vec::new())))
        };
        let kit_for = |e: &Entrant| kit.ok_or_else(|| Error::NeedsBrain(e.name()));
        Ok(match e {
            Entrant::Random => Player::Random(Dice::new(dice)),
            Entrant::Greedy => Player::Greedy(Dice::new(dice)),
            Entrant::Stockfish { random_share } => Player::Stockfish {
                engine: engine(Some(0))?,
                limit: Limit::Nodes(stockfish_nodes),
                random_share: *random_share,
                dice: Dice::new(dice),
            },
            Entrant::Fly { name, id, imagination, sample, habituation, glances } => {
                let kit = kit_for(e)?;
                let (brain, descending) = kit.brain_for(e)?;
                let readout = kit.readout_of(name, id)?;
                let engine = kit.engine();
                if *sample {
                    Player::SamplingFly { brain, readout, descending, engine, dice: Dice::new(dice) }
                } else {
                    Player::Fly {
                        brain,
                        readout,
                        descending,
                        engine,
                        imagination: *imagination,
                        habituation: habituation.map(|h| (h, Memory::default())),
                        glances: *glances,
                    }
                }
            }
            Entrant::Dopamine { name, id } => {
                let (fly, bio) =
                    kit_for(e)?.dopamine(e).ok_or_else(|| Error::Invalid(format!("no mushroom body for dopamine fly {name} ({id})")))?;
                Player::Dopamine { bio, m: &fly.m }
            }
            Entrant::Charles { name, id } => {
                Player::Charles(kit_for(e)?.charles(e).ok_or_else(|| Error::Invalid(format!("no weights for {name} ({id})")))?)
            }
            Entrant::Uci { path, options, .. } => Player::Uci {
                engine: Supervised::new(path.clone(), ladder_engine(None, options.clone())),
                limit: Limit::MoveTimeMs(UCI_MOVETIME_MS),
                label: e.name(),
            },
            Entrant::Aided { base, aid, value } => {
                let kit = kit_for(e)?;
                let (brain, descending) = kit.brain_for(e)?;
                let evaluator = match (&**base, value) {
                    (Entrant::Fly { name, id, .. }, None) => Evaluator::fly(brain, kit.readout_of(name, id)?, descending),
                    (Entrant::Charles { name, id }, Some((fly, fly_id))) => Evaluator {
                        prior: Some(kit.charles(base).ok_or_else(|| Error::Invalid(format!("no weights for {name} ({id})")))?),
                        ..Evaluator::fly(brain, kit.readout_of(fly, fly_id)?, descending)
                    },
                    _ => return Err(Error::Invalid(format!("{} cannot take an aid", base.name()))),
                }
                .on(kit.engine());
                let engine = match aid {
                    Aid::Select { .. } => Some(engine(None)?),
                    _ => None,
                };
                Player::Aided { searcher: Box::new(Searcher::new(evaluator)), aid: *aid, engine, label: e.name() }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stockfish_rungs_are_kept_apart_by_their_exact_share_and_a_share_outside_0_to_1_is_refused() {
        let rung = |n: &str| Entrant::rung(n).unwrap();
        // The ladder's rungs keep the ids their games were stored under.
        assert_eq!(rung("stockfish:0.25").unwrap().id(), "stockfish-min 25% random");
        assert_eq!(rung("stockfish:0.5").unwrap().id(), "stockfish-min 50% random");
        assert_eq!(rung("stockfish").unwrap().id(), "stockfish-min (anchor)");
        // Shares that round to the same percent are two players with two sets of games.
        let (a, b) = (rung("stockfish:0.249").unwrap(), rung("stockfish:0.251").unwrap());
        assert_ne!(a.id(), b.id());
        assert_eq!(a.id(), "stockfish-min 0.249 random");
        for bad in ["stockfish:1.5", "stockfish:-0.1", "stockfish:NaN", "stockfish:x", "stockfish:0.2:3"] {
            let e = rung(bad).err().unwrap().to_string();
            assert!(e.contains(bad) && e.contains("from 0 to 1"), "{bad}: {e}");
        }
        assert!(Entrant::rung("flywire").is_none());
    }
}
