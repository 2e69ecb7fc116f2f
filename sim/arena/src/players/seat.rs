//! Seating: the one way every front door (the window's board and its `--watch` opponent, the UCI
//! engine, the command line, Python, the ladder) turns a name into a player with what it plays
//! from. `seat(name, &Lookup, engine)` resolves the name (`named`), loads what it plays with into
//! a `Kit` on the brain the lookup holds (`Venue`: the model, its descending neurons and the
//! mushroom body a dopamine fly thinks on), and puts the engine its readout flies think on in the
//! kit, so the engine travels with the player. `Seating` seats several players on one kit (a
//! game's two, a duel's, the ladder's field by name or from a brain's roster); `check` says
//! whether a name can be seated once its brain is loaded. A door adds no rule of its own: what
//! differs between doors is an option of the `Lookup` (`engines`, `imagination`).

use std::sync::Arc;

use super::naming::kit_parts;
use super::{Entrant, Kit, Lookup, Named, Player, Seated, named};
use crate::bio::file::DopamineFly;
use crate::bio::{BioBrain, Constants};
use crate::error::{Error, Result};
use crate::network::Network;
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::Simulator;
use flychess_fly::fly::Fly;

/// The brain players are seated on, when it is loaded: the model (shared by every player seated
/// on it), its descending neurons, and the mushroom body a dopamine fly with given constants
/// thinks on (made by the door that loaded the brain, which may keep those it made).
#[derive(Clone, Copy)]
pub struct Venue<'a> {
    pub brain: &'a Arc<Brain>,
    pub descending: &'a [u32],
    pub mushroom_body: &'a dyn Fn(Constants) -> Result<Arc<BioBrain>>,
}

/// Players seated on one kit: the brain of the lookup it was started with (none: only the rungs,
/// Charles and the user's engines can play) and the engine its readout flies think on.
pub struct Seating<'a> {
    kit: Kit,
    venue: Option<Venue<'a>>,
}

impl<'a> Seating<'a> {
    /// No one seated yet, on the brain `at` holds, its readout flies thinking on the CPU engine
    /// until `on` says otherwise.
    pub fn new(at: &Lookup<'a>) -> Seating<'a> {
        let kit = match at.venue {
            Some(v) => Kit::new(v.brain.clone(), v.descending.to_vec()),
            None => Kit::default(),
        };
        Seating { kit, venue: at.venue }
    }

    /// The readout flies seated here think on `engine` (None: the CPU engine).
    pub fn on(self, engine: Option<Arc<Simulator>>) -> Seating<'a> {
        Seating { kit: self.kit.on(engine), ..self }
    }

    /// Seats the player `name` (resolved by `named`, with the lookup's options): what it plays
    /// with joins the kit, a dopamine fly with the mushroom body it thinks on. Returns its entrant.
    pub fn seat(&mut self, name: &str, at: &Lookup) -> Result<Entrant> {
        let (entrant, found) = named(name, at)?;
        let entrant = match (&entrant, &found, at.imagination) {
            (Entrant::Fly { imagination: None, sample: false, .. }, Named::Fly(f), Some(w)) => Entrant::fly(f, Some(w)),
            _ => entrant,
        };
        let (flies, dopamine, charles) = kit_parts([(found, &entrant)]);
        let kit = std::mem::take(&mut self.kit).with_flies(&flies).with_charles(&charles);
        self.kit = match dopamine.first() {
            // One mushroom body for the kit: the first dopamine fly's, which any other must fit.
            Some(first) => {
                let bio = match &kit.bio {
                    Some(bio) => bio.clone(),
                    None => (self.venue.ok_or_else(|| Error::NeedsBrain(entrant.name()))?.mushroom_body)(first.meta.constants)?,
                };
                kit.with_dopamine(bio, &dopamine)?
            }
            None => kit,
        };
        Ok(entrant)
    }

    /// Seats a brain's roster: these flies, each under the entrants in its list that play with it.
    pub fn with_flies(self, flies: &[(Fly, Vec<Entrant>)]) -> Seating<'a> {
        Seating { kit: self.kit.with_flies(flies), ..self }
    }

    /// Seats these Charles runs too.
    pub fn with_charles(self, charles: &[Arc<dyn Network>]) -> Seating<'a> {
        Seating { kit: self.kit.with_charles(charles), ..self }
    }

    /// Seats these dopamine flies too, each checked against `bio`, the mushroom body they think on.
    pub fn with_dopamine(self, bio: Arc<BioBrain>, flies: &[DopamineFly]) -> Result<Seating<'a>> {
        Ok(Seating { kit: self.kit.with_dopamine(bio, flies)?, ..self })
    }

    /// The kit every player seated here plays from.
    pub fn kit(self) -> Kit {
        self.kit
    }

    /// `entrant`, seated here, with the kit.
    pub fn seated(self, entrant: Entrant) -> Seated {
        Seated { entrant, kit: Arc::new(self.kit) }
    }
}

/// The player `name`, resolved by `named` with `at`'s options and seated on the brain `at` holds
/// with what it plays from, its readout flies thinking on `engine` (None: the CPU engine).
pub fn seat(name: &str, at: &Lookup, engine: Option<Arc<Simulator>>) -> Result<Seated> {
    let mut seating = Seating::new(at);
    let entrant = seating.seat(name, at)?;
    Ok(seating.on(engine).seated(entrant))
}

/// Whether `name` names a player here, its brain aside: a name that needs the brain loaded (a
/// judge's weight chosen on it, a dopamine fly's mushroom body) passes, and is seated once it is.
pub fn check(name: &str, at: &Lookup) -> Result<()> {
    match seat(name, at, None) {
        Ok(_) | Err(Error::NeedsBrain(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

impl Seated {
    /// The player that plays: `Player::new` from this seat's kit (Stockfish, where it plays, at
    /// `stockfish` limited to `stockfish_nodes` nodes a move; the dice seeded by `dice`).
    pub fn player(&self, stockfish_nodes: u64, dice: u64, stockfish: &Option<std::path::PathBuf>) -> Result<Player<'_>> {
        Player::new(&self.entrant, Some(&self.kit), stockfish_nodes, dice, stockfish)
    }

    /// The same player with its readout flies thinking on `engine` (None: the CPU engine).
    pub fn on(&self, engine: Option<Arc<Simulator>>) -> Seated {
        Seated { entrant: self.entrant.clone(), kit: Arc::new((*self.kit).clone().on(engine)) }
    }

    /// A fly seated with imagination: the same fly without it (with its habituation), on the same
    /// kit, what plays a move whose budget cannot hold the look-ahead. None for any other player.
    pub fn without_imagination(&self) -> Option<Seated> {
        let Entrant::Fly { imagination: Some(_), sample: false, habituation, .. } = &self.entrant else { return None };
        let fly = self.kit.fly(&self.entrant)?;
        let plain = Entrant::fly_with(fly, None, *habituation);
        let mut kit = (*self.kit).clone();
        kit.flies.insert(plain.id(), fly.clone());
        Some(Seated { entrant: plain, kit: Arc::new(kit) })
    }

    /// A readout fly playing its favourite seated with one-move imagination at weight `w` instead
    /// (with its habituation; imagination, not a second glance, then picks the move), on the same
    /// kit: the window's switch under the board. Any other player is itself.
    pub fn with_imagination(&self, w: f32) -> Seated {
        let (Entrant::Fly { imagination: None, sample: false, habituation, .. }, Some(fly)) = (&self.entrant, self.kit.fly(&self.entrant))
        else {
            return self.clone();
        };
        let imagining = Entrant::fly_with(fly, Some(w), *habituation);
        let mut kit = (*self.kit).clone();
        kit.flies.insert(imagining.id(), fly.clone());
        Seated { entrant: imagining, kit: Arc::new(kit) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::NoNetworks;

    #[test]
    fn every_door_seats_the_same_way_with_its_options_and_a_name_that_needs_the_brain_waits_for_it() {
        let data = tempfile::tempdir().unwrap();
        let at = Lookup::in_folder(data.path(), &NoNetworks);
        // A rung needs no brain: seated, it plays a legal move.
        let random = seat("random", &at, None).unwrap();
        assert_eq!(random.entrant, Entrant::Random);
        assert!(random.kit.brain().is_none() && random.kit.engine().is_none());
        let start = shakmaty::Chess::default();
        let chosen = random.player(0, 1, &None).unwrap().choose(&start, &[]).unwrap();
        assert!(shakmaty::Position::legal_moves(&start).contains(&chosen));
        // An unknown name is refused with the names there are, by `check` as by `seat`.
        let unknown = check("nobody-here", &at).unwrap_err().to_string();
        assert!(unknown.starts_with("no player named \"nobody-here\""), "{unknown}");
        // The user's UCI engines come first, by the name given them (a lookup option, not a door's rule).
        let mine = Entrant::Uci { name: "mine".into(), id: "uci-0".into(), path: "/nowhere".into(), options: Vec::new() };
        let engines = [mine.clone()];
        let with_engines = Lookup { engines: &engines, ..at };
        assert_eq!(seat("mine", &with_engines, None).unwrap().entrant, mine);
        assert!(check("mine", &at).is_err(), "without the option, the engine's name is no player");
        // A player that plays from the brain cannot play without it: the error says so by kind.
        let fly = Entrant::Fly { name: "f".into(), id: "f-id".into(), imagination: None, sample: false, habituation: None, glances: None };
        let no_brain = Seated { entrant: fly, kit: random.kit.clone() };
        assert!(matches!(no_brain.player(0, 1, &None), Err(Error::NeedsBrain(name)) if name == "f"));
    }
}
