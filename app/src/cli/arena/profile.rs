//! `flychess profile`: how a player loses (Philidor's lesson, `flychess_lab::profiling`). Its ladder
//! games against the rungs (played where missing, shared with `rate`), every position scored once
//! by Stockfish at a fixed depth: the centipawns each of its moves lost by phase and outcome, and
//! each lost game's shape.

use std::path::Path;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::players::{Lookup, Seating};
use flychess_fly::fly;
use flychess_fly::stats;
use flychess_fly::stockfish::find_stockfish;

use super::{game_bar, hall, seat};
use crate::cli::options::{EngineArgs, WhichBrain};

// The arguments of `flychess profile` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct ProfileArgs {
    /// A fly by name, NAME+imagination, charles or charles:RUN, or a rung.
    #[arg(long)]
    pub player: Option<String>,
    /// Games analysed (taken from its ladder games, 20-ply openings shared with `rate`).
    #[arg(long, default_value_t = 40)]
    pub games: usize,
    /// Stockfish's search depth per position.
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// `flychess profile`: how a player loses (`sim::profile`). Its games come from the ladder's
/// file for this brain (the same games `rate --games N` plays: each rung, openings 0, 1, … with
/// colours swapped), played where missing; the first `games` of them by opening are analysed,
/// two at a time, each by a fresh engine (the same figures on every run).
pub fn run(args: &ProfileArgs, data: &Path) -> Result<()> {
    let ProfileArgs { ref player, games, depth, json, engine: ref engine_args, ref which } = *args;
    let (player, engine_choice) = (player.as_deref(), engine_args.choice());
    let stockfish = find_stockfish(None)?;
    let hall = hall(which, data)?;
    let loaded = &hall.loaded;
    let player = match player {
        Some(p) => p.to_string(),
        None => fly::trained_for(&loaded.checksum, data)
            .map(|(n, _)| n)
            .ok_or_else(|| anyhow!("no trained fly for {}; name a player with --player", loaded.connectome.provenance.label()))?,
    };
    let at = Lookup::in_folder(data, &flychess_charles::player::Runs).of_brain(&loaded.checksum, Some(hall.venue()));
    let mut seating = Seating::new(&at);
    let entrant = seat(&mut seating, &player, &at)?;
    let kit = seating.on(Some(super::engine(engine_choice, &hall.brain)?)).kit();
    let bar = game_bar();
    let analysis_bar = ProgressBar::new(0);
    analysis_bar.set_style(
        ProgressStyle::with_template("analysis [{bar:40}] {pos}/{len} games {elapsed}/{eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let job = flychess_lab::profiling::ProfileJob {
        player: &entrant,
        kit: &kit,
        brain: loaded.connectome.provenance.label(),
        checksum: loaded.checksum.clone(),
        stockfish,
        games,
        depth,
    };
    let (p, report) = flychess_lab::profiling::run(&job, data, &|stage, done, total| match stage {
        flychess_lab::profiling::Stage::Playing => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        flychess_lab::profiling::Stage::Analysing => {
            bar.finish_and_clear();
            analysis_bar.set_length(total as u64);
            analysis_bar.set_position(done as u64);
        }
    })?;
    bar.finish_and_clear();
    analysis_bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} over {} games against the ladder's rungs (+{} ={} -{}), {} moves, Stockfish depth {depth}:",
        entrant.name(),
        p.games,
        p.won,
        p.drawn,
        p.lost,
        p.moves
    );
    println!("  mean loss per move {:.0} cp [{:.0}, {:.0}]", p.mean_loss.value, p.mean_loss.low, p.mean_loss.high);
    println!("  {:12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}", "phase", "moves", "all", "won", "drawn", "lost", "blunders");
    for (row, (_, b)) in p.phases.iter().zip(&p.blunders_per_100_moves) {
        let cp = |e: &stats::Estimate| if e.value.is_nan() { "—".to_string() } else { format!("{:.0}", e.value) };
        println!(
            "  {:12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9.1}%",
            row.phase,
            row.moves,
            cp(&row.all),
            cp(&row.won),
            cp(&row.drawn),
            cp(&row.lost),
            b
        );
    }
    println!("  how its {} losses went:", p.lost);
    for (shape, n) in &p.loss_shapes {
        println!("    {shape:18} {n}");
    }
    println!(
        "  decided by one blunder (> 400 cp): {}; games with such a move, all outcomes: {}",
        p.losses_by_one_blunder.percent(),
        p.games_with_a_blunder.percent()
    );
    Ok(())
}
