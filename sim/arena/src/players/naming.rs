//! From a name to a player: the one grammar every front door takes (`named`, `NAME_GRAMMAR`), a
//! rung, a fly by name with its switches (+imagination, +habituation, +glances), a dopamine fly,
//! Charles, or a fly or Charles with one of Philidor's aids; where a name is looked up
//! (`Lookup`), what a named player brings to a `Kit` (`Named`, `kit_parts`, which `Seating`
//! takes) and which names need a brain loaded (`needs_brain`).

use std::path::Path;
use std::sync::Arc;

use super::{Entrant, Venue};
use crate::bio::file::DopamineFly;
use crate::error::{Error, Result};
use crate::habituation::Habituation;
use crate::network::{Network, Networks};
use crate::search::Aid;
use flychess_fly::fly::Fly;

/// What a named player brings to a `Kit` besides its entrant (`named`): the fly, dopamine fly or
/// Charles run it plays with, loaded; a rung brings nothing.
pub enum Named {
    Rung,
    Fly(Fly),
    Dopamine(DopamineFly),
    Charles(Arc<dyn Network>),
    /// Charles with an aid, and the fly whose value judges its boards.
    ValuedCharles(Arc<dyn Network>, Fly),
}

/// Where `named` looks a name up: the data folder, the brain a fly must belong to (None: any),
/// that brain when it is loaded (`Venue`: the judge's weight is chosen on it the first time, and
/// `seat` seats players on it), what to say while that takes time (`progress(what, done,
/// total)`), where network players such as Charles are found (`flychess_charles::player::Runs`;
/// `NoNetworks` refuses them), the user's UCI engines by the names given them here (found before
/// any other name), and the imagination a readout fly playing its favourite is seated with.
#[derive(Clone, Copy)]
pub struct Lookup<'a> {
    pub data: &'a Path,
    pub networks: &'a dyn Networks,
    pub checksum: Option<&'a str>,
    pub venue: Option<Venue<'a>>,
    pub progress: &'a dyn Fn(&str, usize, usize),
    pub engines: &'a [Entrant],
    /// Some(w): `seat` seats a readout fly playing its favourite (no switch, no aid) with
    /// imagination at weight w (`play --imagination`, the UCI engine's Imagination option).
    pub imagination: Option<f32>,
}

impl<'a> Lookup<'a> {
    /// A lookup in `data` for flies of any brain and the networks `networks` finds, with no brain
    /// loaded, no engine of the user's and nothing said.
    pub fn in_folder(data: &'a Path, networks: &'a dyn Networks) -> Lookup<'a> {
        Lookup { data, networks, checksum: None, venue: None, progress: &|_, _, _| {}, engines: &[], imagination: None }
    }

    /// The same lookup for flies of the brain with `checksum`, loaded as `venue` when it is.
    pub fn of_brain(self, checksum: &'a str, venue: Option<Venue<'a>>) -> Lookup<'a> {
        Lookup { checksum: Some(checksum), venue, ..self }
    }
}

/// Whether a player name needs a brain loaded to be seated: everything but a rung and plain
/// Charles (`charles`, `charles:RUN`; Charles with an aid is valued by the brain's fly).
pub fn needs_brain(name: &str) -> bool {
    let plain_charles = crate::network::run_name(name).is_some() && !name.contains('+');
    Entrant::rung(name).is_none() && !plain_charles
}

/// The names every front door takes, in words (what an unknown name's error lists).
pub const NAME_GRAMMAR: &str = "random, greedy, stockfish, stockfish:P (a share P of random moves), charles or charles:RUN, \
     a fly by name with its switches FLY+imagination[:W] and FLY+habituation[:W] (tuned weights unless W is given) \
     or FLY+glances (two glances, experimental), \
     or a fly or Charles with an aid: +judge, +search, +searchN, +sfD";

/// The one way from a name to a player, for every front door (the window, `--watch`, the UCI
/// engine, the command line, the dopamine fly's opponents): a rung (random, greedy, stockfish,
/// stockfish:P), a fly of the brain by name, FLY+imagination (at its tuned weight), a dopamine
/// fly, charles or charles:RUN, or a fly or Charles with one of Philidor's aids (+judge, +search,
/// +searchN, +sfD; Charles's boards valued by the brain's trained fly). Returns the entrant and
/// what it plays with; an unknown name's error lists the names there are.
pub fn named(name: &str, at: &Lookup) -> Result<(Entrant, Named)> {
    if let Some(engine) = at.engines.iter().find(|e| e.name() == name) {
        return Ok((engine.clone(), Named::Rung));
    }
    if let Some(rung) = Entrant::rung(name) {
        return Ok((rung?, Named::Rung));
    }
    if let Some((base, suffix)) = name.rsplit_once('+')
        && Switch::parse(name, suffix).is_none()
    {
        let aid = Aid::parse(suffix).ok_or_else(|| {
            Error::Invalid(format!(
                "{name}: +{suffix} is no switch or aid (+imagination, +habituation, +glances, +judge, +search, +search64, +sf4)"
            ))
        })??;
        let (base_entrant, base_named) = named(base, at)?;
        return match base_named {
            Named::Fly(f) => {
                let aid = match aid {
                    Aid::Judge { .. } => {
                        let venue = at.venue.ok_or_else(|| Error::NeedsBrain(name.to_string()))?;
                        let (brain, descending) = (&**venue.brain, venue.descending);
                        let what = format!("choosing {name}'s weight on VAL positions");
                        Aid::Judge {
                            weight: crate::tuned::judge_weight(at.data, &f, brain, descending, &|d, t| (at.progress)(&what, d, t))?,
                        }
                    }
                    other => other,
                };
                Ok((Entrant::aided(base_entrant, aid, None)?, Named::Fly(f)))
            }
            Named::Charles(c) => {
                if matches!(aid, Aid::Judge { .. }) {
                    return Err(Error::Invalid(format!(
                        "{name}: Charles has no value head of its own; try {base}+search (the brain's fly values its boards)"
                    )));
                }
                let checksum = at.checksum.ok_or_else(|| Error::Invalid(format!("{name} needs a brain whose fly values its boards")))?;
                let (_, path) = flychess_fly::fly::trained_for(checksum, at.data).ok_or_else(|| {
                    Error::Invalid(format!(
                        "{name}: this brain has no trained fly to value Charles's boards; train one with `flychess train`"
                    ))
                })?;
                let f = Fly::load(&path)?;
                Ok((Entrant::aided(base_entrant, aid, Some(&f))?, Named::ValuedCharles(c, f)))
            }
            _ => Err(Error::Invalid(format!("{name}: only a fly or Charles takes an aid"))),
        };
    }
    if let Some(run) = crate::network::run_name(name) {
        (at.progress)(&format!("loading {name}"), 0, 1);
        let c = at.networks.load(run, at.data)?;
        return Ok((Entrant::charles(c.as_ref()), Named::Charles(c)));
    }
    let (fly_name, switches) = Switches::split(name)?;
    let imagining = switches.imagination.is_some();
    let path = flychess_fly::fly::find(fly_name, at.data).map_err(|_| unknown(name, at))?;
    let other_brain = |kind: &str, brain: &str| {
        Error::Invalid(format!("{kind} {fly_name} belongs to another brain ({brain}), not to the brain asked for"))
    };
    if crate::bio::file::is_dopamine_fly(&path) {
        let f = DopamineFly::load(&path)?;
        if imagining {
            return Err(Error::Invalid(format!(
                "{fly_name} is a dopamine fly: it looks one move ahead already, it has no imagination switch"
            )));
        }
        if switches.habituation.is_some() || switches.glances {
            return Err(Error::Invalid(format!(
                "{name}: {fly_name} is a dopamine fly; habituation and two glances are switches of a readout fly"
            )));
        }
        if at.checksum.is_some_and(|c| f.meta.brain_checksum != c) {
            return Err(other_brain("dopamine fly", &f.meta.brain));
        }
        return Ok((Entrant::dopamine(&f), Named::Dopamine(f)));
    }
    let f = Fly::load(&path)?;
    if at.checksum.is_some_and(|c| f.meta.brain_checksum != c) {
        return Err(other_brain("fly", &f.meta.brain));
    }
    let w = switches.imagination.map(|w| w.unwrap_or_else(|| crate::tuned::imagination(at.data, &f)));
    let h = match switches.habituation {
        None => None,
        Some(weight) => {
            let tuned = crate::tuned::habituation(at.data, &f).ok_or_else(|| {
                Error::Invalid(format!(
                    "{name}: habituation is not tuned for {fly_name} yet; choose its decay and weight on VAL games with `flychess habituation-tune --fly {fly_name}`"
                ))
            })?;
            Some(match weight {
                Some(w) => Habituation::checked(tuned.decay, w)?,
                None => tuned,
            })
        }
    };
    if switches.glances {
        if w.is_some() || h.is_some() {
            return Err(Error::Invalid(format!("{name}: two glances play alone, not with imagination or habituation")));
        }
        let g = crate::tuned::glances(at.data, &f).ok_or_else(|| {
            Error::Invalid(format!(
                "{name}: two glances are not tuned for {fly_name} yet; choose the gain on VAL with `flychess glances-tune --fly {fly_name}`"
            ))
        })?;
        return Ok((Entrant::glancing(&f, g), Named::Fly(f)));
    }
    Ok((Entrant::fly_with(&f, w, h), Named::Fly(f)))
}

/// A fly's switch after its name: `imagination` or `habituation`, with an optional weight
/// (`:W`). Some(Err) names a bad weight; None: not a switch.
enum Switch {
    Imagination(Option<f32>),
    Habituation(Option<f32>),
    Glances,
}

impl Switch {
    fn parse(name: &str, suffix: &str) -> Option<Result<Switch>> {
        let (word, value) = match suffix.split_once(':') {
            Some((w, v)) => (w, Some(v)),
            None => (suffix, None),
        };
        if word == "glances" {
            return Some(match value {
                None => Ok(Switch::Glances),
                Some(v) => Err(Error::Invalid(format!("{name}: +glances:{v} — two glances take their tuned gain, no value"))),
            });
        }
        if word != "imagination" && word != "habituation" {
            return None;
        }
        let weight = match value {
            None => None,
            Some(v) => match v.parse::<f32>() {
                Ok(w) if w >= 0.0 && !w.is_nan() && (w.is_finite() || word == "imagination") => Some(w),
                _ => {
                    return Some(Err(Error::Invalid(format!(
                        "{name}: +{word}:{v} — the weight must be a number of 0 or more{}",
                        if word == "imagination" { " (or inf)" } else { "" }
                    ))));
                }
            },
        };
        Some(Ok(if word == "imagination" { Switch::Imagination(weight) } else { Switch::Habituation(weight) }))
    }
}

/// The switches after a fly's name (each at most once): Some(weight given) when on.
#[derive(Default)]
struct Switches {
    imagination: Option<Option<f32>>,
    habituation: Option<Option<f32>>,
    glances: bool,
}

impl Switches {
    /// The fly's name and its switches, from `FLY+imagination+habituation:2` and the like.
    fn split(name: &str) -> Result<(&str, Switches)> {
        let mut switches = Switches::default();
        let mut rest = name;
        while let Some((base, suffix)) = rest.rsplit_once('+') {
            let Some(switch) = Switch::parse(name, suffix) else {
                return Err(Error::Invalid(format!(
                    "{name}: +{suffix} cannot come before a switch; switches (+imagination, +habituation) follow the fly's name, an aid comes alone"
                )));
            };
            let slot = match switch? {
                Switch::Imagination(w) => (&mut switches.imagination, w),
                Switch::Habituation(w) => (&mut switches.habituation, w),
                Switch::Glances if switches.glances => return Err(Error::Invalid(format!("{name}: +{suffix} is given twice"))),
                Switch::Glances => {
                    switches.glances = true;
                    rest = base;
                    continue;
                }
            };
            if slot.0.is_some() {
                return Err(Error::Invalid(format!("{name}: +{suffix} is given twice")));
            }
            *slot.0 = Some(slot.1);
            rest = base;
        }
        Ok((rest, switches))
    }
}

/// An unknown name's error: the names there are (the flies and Charles runs in `data` by name).
fn unknown(name: &str, at: &Lookup) -> Error {
    let flies = flychess_fly::fly::list(at.data);
    let runs: Vec<String> = at.networks.list(at.data).iter().map(|r| crate::network::player_name(r)).collect();
    let listed = |names: &[String]| {
        if names.is_empty() {
            "none".to_string()
        } else if names.len() > 24 {
            format!("{}, … ({} in all)", names[..24].join(", "), names.len())
        } else {
            names.join(", ")
        }
    };
    Error::Invalid(format!(
        "no player named {name:?}. The names are {NAME_GRAMMAR}. Flies here: {}. Charles runs: {}.",
        listed(&flies),
        listed(&runs)
    ))
}

/// What named players bring to a `Kit`: the flies with the entrants each plays as, the dopamine
/// flies, the Charles runs (rungs bring nothing).
pub(crate) type KitParts = (Vec<(Fly, Vec<Entrant>)>, Vec<DopamineFly>, Vec<Arc<dyn Network>>);

/// What these named players bring to a `Kit` (`Seating::seat` takes them).
pub(crate) fn kit_parts<'e>(named: impl IntoIterator<Item = (Named, &'e Entrant)>) -> KitParts {
    let (mut flies, mut dopamine, mut charles) = (Vec::new(), Vec::new(), Vec::new());
    for (n, e) in named {
        match n {
            Named::Fly(f) => flies.push((f, vec![e.clone()])),
            Named::Dopamine(f) => dopamine.push(f),
            Named::Charles(c) => charles.push(c),
            Named::ValuedCharles(c, f) => {
                let plain = Entrant::fly(&f, None);
                flies.push((f, vec![plain]));
                charles.push(c);
            }
            Named::Rung => {}
        }
    }
    (flies, dopamine, charles)
}
