//! Players by name, for every front door that names one (the command line, the UCI engine): a
//! name resolved to what plays (`entrant_named`: a rung, a fly of the brain, NAME+imagination at
//! its tuned weight, a dopamine fly, Charles or charles:RUN, a fly or Charles with one of
//! Philidor's aids), what the named players bring to a `flychess_sim::players::Kit`
//! (`kit_parts`), and a brain's roster: its readout flies, its dopamine flies on their model of
//! the brain, the finished Charles runs.

use std::path::Path;

use anyhow::{Result, anyhow};

use flychess_sim::bio::file::DopamineFly;
use flychess_sim::fly::{self, Fly};

/// The flies of the brain `loaded` (the user's first: a shipped fly of the same name is shadowed).
pub fn flies_of_brain(data: &Path, checksum: &str) -> Vec<Fly> {
    let mut out = Vec::new();
    for name in fly::list(data) {
        if fly::find(&name, data).is_ok_and(|p| flychess_sim::bio::file::is_dopamine_fly(&p)) {
            continue;
        }
        match fly::find(&name, data).and_then(|p| Fly::load(&p)) {
            Ok(f) if f.meta.brain_checksum == checksum => out.push(f),
            Ok(_) => {}
            Err(e) => eprintln!("skipping fly {name}: {e}"),
        }
    }
    out
}

/// The dopamine flies of the brain that think on one model (the first's constants; others are
/// said and left out), and that model.
pub fn dopamine_of_brain(
    spec: &flychess_sim::store::BrainSpec,
    data: &Path,
    loaded: &flychess_sim::connectome::brain_file::Loaded,
    brain: &flychess_sim::brain::Brain,
    wanted: Option<Vec<DopamineFly>>,
) -> Result<(Vec<DopamineFly>, Option<std::sync::Arc<flychess_sim::bio::BioBrain>>)> {
    let all = match wanted {
        Some(w) => w,
        None => flychess_sim::bio::file::dopamine_flies(&loaded.checksum, data).into_iter().map(|(_, f)| f).collect(),
    };
    let Some(first) = all.first() else { return Ok((Vec::new(), None)) };
    let constants = first.meta.constants;
    let bio = flychess_sim::bio::prepare(&loaded.connectome, &loaded.checksum, brain, &spec.brain_path(data), constants, &|_| {})?;
    let mut kept = Vec::new();
    for f in all {
        match f.check(&bio) {
            Ok(()) => kept.push(f),
            Err(e) => eprintln!("leaving out dopamine fly {}: {e}", f.meta.name),
        }
    }
    Ok((kept, Some(std::sync::Arc::new(bio))))
}

/// Every finished Charles run that loads (those that do not are said and left out).
pub fn charles_runs(data: &Path) -> Vec<std::sync::Arc<flychess_sim::charles::player::Trained>> {
    let mut out = Vec::new();
    for name in flychess_sim::charles::player::list(data) {
        match flychess_sim::charles::player::Trained::load(&name, data) {
            Ok(c) => out.push(std::sync::Arc::new(c)),
            Err(e) => eprintln!("leaving out Charles {name}: {e}"),
        }
    }
    out
}

/// A player named on the command line: random, greedy, stockfish, stockfish:P (a share P of
/// random moves), a fly of this brain by name, NAME+imagination (its tuned weight), a dopamine
/// fly, charles or charles:RUN, or a fly or Charles with one of Philidor's aids: NAME+judge,
/// NAME+search (64 simulations) or NAME+searchN, NAME+sfD (Stockfish at depth D among its top
/// five); Charles's boards are valued by the brain's trained fly.
pub enum Named {
    Rung,
    Fly(Fly),
    Dopamine(DopamineFly),
    Charles(std::sync::Arc<flychess_sim::charles::player::Trained>),
    /// Charles with an aid, and the fly whose value judges its boards.
    ValuedCharles(std::sync::Arc<flychess_sim::charles::player::Trained>, Fly),
}

/// What named players bring to a `Kit`: the flies with the entrant each plays as, the dopamine
/// flies, the Charles runs (rungs bring nothing).
pub type KitParts =
    (Vec<(Fly, Vec<flychess_sim::players::Entrant>)>, Vec<DopamineFly>, Vec<std::sync::Arc<flychess_sim::charles::player::Trained>>);

pub fn kit_parts<'e>(named: impl IntoIterator<Item = (Named, &'e flychess_sim::players::Entrant)>) -> KitParts {
    let (mut flies, mut dopamine, mut charles) = (Vec::new(), Vec::new(), Vec::new());
    for (n, e) in named {
        match n {
            Named::Fly(f) => flies.push((f, vec![e.clone()])),
            Named::Dopamine(f) => dopamine.push(f),
            Named::Charles(c) => charles.push(c),
            Named::ValuedCharles(c, f) => {
                let plain = flychess_sim::players::Entrant::fly(&f, None);
                flies.push((f, vec![plain]));
                charles.push(c);
            }
            Named::Rung => {}
        }
    }
    (flies, dopamine, charles)
}

/// A brain ready to play on (for the judge's weight, chosen on VAL the first time).
pub type Ready<'a> = Option<(&'a flychess_sim::brain::Brain, &'a [u32])>;

pub fn entrant_named(name: &str, data: &Path, checksum: Option<&str>, ready: Ready) -> Result<(flychess_sim::players::Entrant, Named)> {
    use flychess_sim::players::Entrant;
    use flychess_sim::search::Aid;
    if let Some(rung) = Entrant::rung(name) {
        return Ok((rung?, Named::Rung));
    }
    if let Some((base, suffix)) = name.rsplit_once('+')
        && suffix != "imagination"
    {
        let aid =
            Aid::parse(suffix).ok_or_else(|| anyhow!("{name}: +{suffix} is no aid (+imagination, +judge, +search, +search64, +sf4)"))??;
        let (base_entrant, named) = entrant_named(base, data, checksum, ready)?;
        let (entrant, named) = match named {
            Named::Fly(f) => {
                let aid = match aid {
                    Aid::Judge { .. } => {
                        let (brain, descending) = ready.ok_or_else(|| anyhow!("{name} needs its brain"))?;
                        Aid::Judge { weight: crate::training::judge_weight(data, &f, brain, descending)? }
                    }
                    other => other,
                };
                (Entrant::aided(base_entrant, aid, None)?, Named::Fly(f))
            }
            Named::Charles(c) => {
                if matches!(aid, Aid::Judge { .. }) {
                    return Err(anyhow!(
                        "{name}: Charles has no value head of its own; try {base}+search (the brain's fly values its boards)"
                    ));
                }
                let c_sum = checksum.ok_or_else(|| anyhow!("{name} needs a brain whose fly values its boards"))?;
                let (_, path) = fly::trained_for(c_sum, data).ok_or_else(|| {
                    anyhow!("{name}: this brain has no trained fly to value Charles's boards; train one with `flychess train`")
                })?;
                let f = Fly::load(&path)?;
                (Entrant::aided(base_entrant, aid, Some(&f))?, Named::ValuedCharles(c, f))
            }
            _ => return Err(anyhow!("{name}: only a fly or Charles takes an aid")),
        };
        return Ok((entrant, named));
    }
    if let Some(run) = flychess_sim::charles::player::run_name(name) {
        let c = flychess_sim::charles::player::Trained::load(run, data)?;
        return Ok((Entrant::charles(&c), Named::Charles(std::sync::Arc::new(c))));
    }
    let (fly_name, imagining) = match name.strip_suffix("+imagination") {
        Some(n) => (n, true),
        None => (name, false),
    };
    let path = fly::find(fly_name, data)?;
    if flychess_sim::bio::file::is_dopamine_fly(&path) {
        let f = DopamineFly::load(&path)?;
        if imagining {
            return Err(anyhow!("{fly_name} is a dopamine fly: it looks one move ahead already, it has no imagination switch"));
        }
        if let Some(c) = checksum
            && f.meta.brain_checksum != c
        {
            return Err(anyhow!("dopamine fly {fly_name} belongs to brain {}, not to the brain asked for", f.meta.brain));
        }
        return Ok((Entrant::dopamine(&f), Named::Dopamine(f)));
    }
    let f = Fly::load(&path)?;
    if let Some(c) = checksum
        && f.meta.brain_checksum != c
    {
        return Err(anyhow!("fly {fly_name} belongs to brain {}, not to the brain asked for", f.meta.brain));
    }
    let w = imagining.then(|| crate::training::tuned_imagination(data, &f));
    Ok((Entrant::fly(&f, w), Named::Fly(f)))
}
