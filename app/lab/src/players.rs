//! Players for the terminal's front doors (the command line, the UCI engine): a name resolved by
//! the one resolver, `flychess_arena::players::named`, with a progress bar while it takes time
//! (`player_on_terminal`), and a brain's roster: its readout flies, its dopamine flies on their
//! model of the brain, the finished Charles runs.

use std::path::Path;

use anyhow::Result;

use flychess_arena::bio::file::DopamineFly;
use flychess_fly::fly::{self, Fly};

/// The flies of the brain `loaded` (the user's first: a shipped fly of the same name is shadowed).
pub fn flies_of_brain(data: &Path, checksum: &str) -> Vec<Fly> {
    let mut out = Vec::new();
    for name in fly::list(data) {
        if fly::find(&name, data).is_ok_and(|p| flychess_arena::bio::file::is_dopamine_fly(&p)) {
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
    spec: &flychess_brain::store::BrainSpec,
    data: &Path,
    loaded: &flychess_brain::connectome::brain_file::Loaded,
    brain: &flychess_brain::brain::Brain,
    wanted: Option<Vec<DopamineFly>>,
) -> Result<(Vec<DopamineFly>, Option<std::sync::Arc<flychess_arena::bio::BioBrain>>)> {
    let all = match wanted {
        Some(w) => w,
        None => flychess_arena::bio::file::dopamine_flies(&loaded.checksum, data).into_iter().map(|(_, f)| f).collect(),
    };
    let Some(first) = all.first() else { return Ok((Vec::new(), None)) };
    let constants = first.meta.constants;
    let bio = flychess_arena::bio::prepare(&loaded.connectome, &loaded.checksum, brain, &spec.brain_path(data), constants, &|_| {})?;
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
pub fn charles_runs(data: &Path) -> Vec<std::sync::Arc<dyn flychess_arena::network::Network>> {
    let mut out = Vec::new();
    for name in flychess_charles::player::list(data) {
        match flychess_charles::player::Trained::load(&name, data) {
            Ok(c) => out.push(std::sync::Arc::new(c) as std::sync::Arc<dyn flychess_arena::network::Network>),
            Err(e) => eprintln!("leaving out Charles {name}: {e}"),
        }
    }
    out
}

/// `flychess_arena::players::named` on the terminal: the same names and errors, with a progress
/// bar while a fly's judge weight is chosen on VAL positions the first time. `ready` is the
/// brain the flies must belong to, when it is loaded.
pub fn player_on_terminal(
    name: &str,
    data: &Path,
    checksum: Option<&str>,
    ready: Option<(&flychess_brain::brain::Brain, &[u32])>,
) -> Result<(flychess_arena::players::Entrant, flychess_arena::players::Named)> {
    let bar = indicatif::ProgressBar::hidden();
    bar.set_style(indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len}").expect("valid template").progress_chars("=> "));
    let progress = |what: &str, done: usize, total: usize| {
        if total > 1 {
            if bar.is_hidden() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
            bar.set_message(what.to_string());
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let at =
        flychess_arena::players::Lookup { data, networks: &flychess_charles::player::Runs, checksum, brain: ready, progress: &progress };
    let found = flychess_arena::players::named(name, &at);
    bar.finish_and_clear();
    Ok(found?)
}
