//! The arena's commands, games between players by the names every front door takes: `play`
//! (games between any two players), `rate` (the rating ladder), `duel` (two players over paired
//! openings, optionally a sequential test), `profile` (how a player loses) and `ceiling` (the
//! selection ceiling of a fly or Charles and its aids). What they share lives here: the games'
//! progress bar, the line each finished game writes on it, and the engine the flies think on.

pub mod ceiling;
pub mod duel;
pub mod play;
pub mod profile;
pub mod rate;

use std::sync::Arc;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{self, EngineChoice, Installed, Simulator};

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

/// Puts the engine `--engine` chooses under the brain for the flies' thinks while the guard lives
/// (the GPU one batches the games' moves too), and says which it is.
fn think_on(engine: EngineChoice, brain: &Brain) -> Result<Installed<'_>> {
    let sim = Arc::new(Simulator::choose(engine, brain)?);
    eprintln!("the flies think on the {}", sim.describe());
    Ok(simulator::install(brain, sim))
}
