//! The arena's commands, games between players by the names every front door takes: `play`
//! (games between any two players), `rate` (the rating ladder), `duel` (two players over paired
//! openings, optionally a sequential test), `profile` (how a player loses) and `ceiling` (the
//! selection ceiling of a fly or Charles and its aids). What they share lives here: the games'
//! progress bar, the line each finished game writes on it, the engine the flies think on and how a
//! name is seated on the terminal.

pub mod ceiling;
pub mod duel;
pub mod play;
pub mod profile;
pub mod rate;

use std::sync::Arc;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::players::{Entrant, Lookup, Seating};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{EngineChoice, Simulator};

/// The bar the games of a ladder, a duel or a profile run on.
fn game_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("games [{bar:40}] {pos}/{len} {elapsed}/{eta} {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// What a finished game writes on `game_bar`: how far the games are, and its players and result.
fn on_game(bar: &ProgressBar) -> impl Fn(usize, usize, &flychess_arena::ladder::GameRow) + Sync + '_ {
    move |done, total, row| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("{} – {}: {} ({})", row.white, row.black, row.result, row.termination));
    }
}

/// The engine `--engine` chooses for the flies' thinks (the GPU one batches the games' moves too),
/// said; it is seated with the players (`players::Seating::new`).
fn engine(choice: EngineChoice, brain: &Brain) -> Result<Arc<Simulator>> {
    let sim = Arc::new(Simulator::choose(choice, brain)?);
    eprintln!("the flies think on the {}", sim.describe());
    Ok(sim)
}

/// Seats `name` on `seating` as every front door does (`players::Seating::seat` with `at`), what
/// takes time said on the terminal.
fn seat(seating: &mut Seating, name: &str, at: &Lookup) -> Result<Entrant> {
    Ok(flychess::terminal::with_lookup_bar(|progress| seating.seat(name, &Lookup { progress, ..*at }))?)
}

/// The brain of `which`, loaded on the terminal as players are seated on it.
fn hall(which: &crate::cli::options::WhichBrain, data: &std::path::Path) -> Result<flychess_lab::players::Hall> {
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    Ok(flychess_lab::players::Hall::new(&spec, data, Arc::new(loaded), Arc::new(brain)))
}
