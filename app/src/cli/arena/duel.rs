//! `flychess duel A B`: two players over paired openings (each played with colours swapped, dice by
//! seat), the Elo difference with its 95 % interval from the pentanomial pair scores, optionally
//! as a sequential test (SPRT) that stops at Wald's bounds. Resumable (DATA/ladder/duel-…) and
//! shardable; the players are any names the front doors take, or the user's UCI engines.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::ProgressBar;

use flychess_arena::duel::{Duel, Sprt, SprtState};
use flychess_arena::ladder::{self, GameRow, LadderOptions};
use flychess_arena::players::{Entrant, Kit, Lookup, Seating};
use flychess_lab::players::Hall;
use flychess_lab::profiling::games_file;

use super::{engine, game_bar, hall, on_game, seat};
use crate::cli::cluster::ShardArgs;
use crate::cli::options::{EngineArgs, UciEnginesArgs, WhichBrain};

// The arguments of `flychess duel` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct DuelArgs {
    pub first: String,
    pub second: String,
    /// Games (the most, with --sprt).
    #[arg(long, default_value_t = 40)]
    pub games: usize,
    #[arg(long, default_value_t = 1)]
    pub game_seed: u64,
    /// Stop as soon as the sequential test decides between --elo0 and --elo1.
    #[arg(long)]
    pub sprt: bool,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub elo0: f64,
    #[arg(long, default_value_t = 50.0, allow_hyphen_values = true)]
    pub elo1: f64,
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub shards: ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub uci: UciEnginesArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Runs `flychess duel`: the two players seated, their games played (all, one shard, or a round
/// at a time under --sprt), the result reported as text or JSON.
pub fn run(args: &DuelArgs, data: &Path) -> Result<()> {
    let DuelArgs { games, game_seed: seed, sprt, elo0, elo1, alpha, beta, json, shards, .. } = *args;
    if sprt && (shards.shard.is_some() || shards.merge_shards.is_some()) {
        return Err(anyhow!("a sequential test (--sprt) decides after each round of games: it cannot run in shards"));
    }
    // Games come in pairs (each opening with colours swapped): an odd count is played as the next
    // pair up, and said; none at all is refused.
    if games == 0 {
        return Err(anyhow!("duel --games 0: nothing to play (games come in pairs, each opening with colours swapped)"));
    }
    if games % 2 == 1 && !json {
        eprintln!("duel --games {games}: games come in pairs (colours swapped), so {} are played", games + 1);
    }
    let (a, b) = (args.first.as_str(), args.second.as_str());
    let sprt = sprt.then_some(Sprt { elo0, elo1, alpha, beta });
    // The user's UCI engines, by the names given them here.
    let engines = args.uci.entrants()?;
    let needs_no_brain = |name: &str| Entrant::names_rung(name) || engines.iter().any(|e| e.name() == name);
    let hall = if needs_no_brain(a) && needs_no_brain(b) { None } else { Some(hall(&args.which, data)?) };
    let checksum = hall.as_ref().map(|h| h.loaded.checksum.clone());
    let at = Lookup {
        checksum: checksum.as_deref(),
        venue: hall.as_ref().map(Hall::venue),
        engines: &engines,
        ..Lookup::in_folder(data, &flychess_charles::player::Runs)
    };
    let mut seating = Seating::new(&at);
    let first = seat(&mut seating, a, &at)?;
    let second = seat(&mut seating, b, &at)?;
    if first.id() == second.id() {
        return Err(anyhow!("{a} and {b} are the same player; `flychess rate` runs the clone test"));
    }
    let kit = match &hall {
        Some(h) => Some(seating.on(Some(engine(args.engine.choice(), &h.brain)?)).kit()),
        None => None,
    };
    let options = LadderOptions { games: games.max(2), seed, dice_by_seat: true, ..Default::default() };
    let file = games_file(data, &format!("duel-{}-{}-", &first.id(), &second.id()), checksum.as_deref().unwrap_or("rungs-only"), &options);
    let bar = game_bar();
    let started = Instant::now();
    let seats = [first.clone(), second.clone()];
    if let Some(shard) = shards.shard {
        let (part, rows) = ladder::play_shard(&seats, &[(0, 1)], kit.as_ref(), &options, &file, shard, &on_game(&bar))?;
        bar.finish_and_clear();
        println!("shard {shard}: {} games in {} (join the parts with --merge-shards {})", rows.len(), part.display(), shard.count);
        return Ok(());
    }
    if let Some(count) = shards.merge_shards {
        let added = ladder::merge_shards(&seats, &[(0, 1)], &options, &file, count as usize)?;
        eprintln!("{added} games of {count} shards added to {}", file.display());
    }
    let (rows, state) = play_rounds(&seats, kit.as_ref(), &options, &file, &bar, sprt)?;
    bar.finish_and_clear();
    let d = Duel::of(&ladder::pair_scores(&rows));
    if json {
        let report = report(&seats, &rows, &d, (sprt, &state), &options, (&file, started.elapsed().as_secs_f64()));
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_duel(&seats, &rows, &d, (sprt, &state));
    Ok(())
}

/// The duel's games: all at once, or under a sequential test a round of pairs at a time until it
/// decides (or `options.games` are played), with the test's last state.
fn play_rounds(
    [first, second]: &[Entrant; 2],
    kit: Option<&Kit>,
    options: &LadderOptions,
    file: &Path,
    bar: &ProgressBar,
    sprt: Option<Sprt>,
) -> Result<(Vec<GameRow>, Option<SprtState>)> {
    let round = if sprt.is_some() { 2 * options.workers.max(1) } else { options.games };
    let mut played = round.min(options.games);
    loop {
        let now = LadderOptions { games: played, ..options.clone() };
        let rows = ladder::duel_games(first, second, kit, &now, file, &on_game(bar))?;
        let state = sprt.map(|t| t.state(&ladder::pair_scores(&rows)));
        let decided = state.as_ref().is_some_and(|s| s.verdict != "continue");
        if decided || played >= options.games {
            return Ok((rows, state));
        }
        played = (played + round).min(options.games);
    }
}

/// The first seat's wins and losses (a game with colours swapped scored for the first).
fn wins_and_losses(rows: &[GameRow]) -> (usize, usize) {
    let first_score = |g: &GameRow| if g.swapped { 1.0 - g.score() } else { g.score() };
    (rows.iter().filter(|g| first_score(g) == 1.0).count(), rows.iter().filter(|g| first_score(g) == 0.0).count())
}

/// `duel --json`'s report.
fn report(
    [first, second]: &[Entrant; 2],
    rows: &[GameRow],
    d: &Duel,
    (sprt, state): (Option<Sprt>, &Option<SprtState>),
    options: &LadderOptions,
    (file, seconds): (&Path, f64),
) -> serde_json::Value {
    let (wins, losses) = wins_and_losses(rows);
    serde_json::json!({
        "first": first.name(), "second": second.name(),
        "first_id": first.id(), "second_id": second.id(),
        "games": rows.len(), "pairs": d.pairs,
        "wins": wins, "draws": rows.len() - wins - losses, "losses": losses,
        "pentanomial": d.pentanomial,
        "score": d.score, "score_interval": [d.score_low, d.score_high],
        "elo": d.elo, "elo_interval": [d.elo_low, d.elo_high],
        "difference_shown": !d.holds_even(),
        "sprt": sprt.map(|t| serde_json::json!({"elo0": t.elo0, "elo1": t.elo1, "alpha": t.alpha, "beta": t.beta, "state": state})),
        "endings": ladder::endings(rows),
        "options": options,
        "games_file": file.display().to_string(),
        "seconds": seconds,
    })
}

/// The duel as text: W-D-L, the score and Elo difference with their intervals, the verdict, and
/// the sequential test's state.
fn print_duel([first, second]: &[Entrant; 2], rows: &[GameRow], d: &Duel, (sprt, state): (Option<Sprt>, &Option<SprtState>)) {
    let (wins, losses) = wins_and_losses(rows);
    println!(
        "{} against {}: +{wins} ={} -{losses} over {} games ({} pairs)",
        first.name(),
        second.name(),
        rows.len() - wins - losses,
        rows.len(),
        d.pairs
    );
    println!(
        "  score {:.1}% [{:.1}, {:.1}], Elo difference {:+.0} [{:+.0}, {:+.0}] (95% intervals, pentanomial {:?})",
        100.0 * d.score,
        100.0 * d.score_low,
        100.0 * d.score_high,
        d.elo,
        d.elo_low,
        d.elo_high,
        d.pentanomial
    );
    println!(
        "  {}",
        if d.holds_even() {
            "no difference shown: the interval holds 50%"
        } else if d.score > 0.5 {
            "the first is stronger"
        } else {
            "the second is stronger"
        }
    );
    if let (Some(t), Some(s)) = (sprt, state) {
        println!("  SPRT [{:.0}, {:.0}] Elo: LLR {:.2} in [{:.2}, {:.2}] → {}", t.elo0, t.elo1, s.llr, s.lower, s.upper, s.verdict);
    }
}
