//! `flychess data games`: training positions from real games, labelled for free by the move the
//! master played and the game's result, the shipped HOLD/VAL games and every position equal to
//! one left out, a human test and a VAL of games no shipped row came from; the PGN streamed
//! twice, resumable.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_fly::data::{Dataset, shipped_path};
use flychess_learning::datasets::game_positions::{GamesOptions, positions_from_games};

use super::{book_pgn, dataset_path};
use crate::cli::memory::peak_memory_mb;

// The arguments of `flychess data games` (its help text is the subcommand's doc comment in `DataCommand`).
#[derive(Args)]
pub struct GamesArgs {
    /// The games (default: the book the shipped positions came from,
    /// sim/brain/data/games/book_1.02.pgn.zst in a checkout).
    pub pgn: Option<PathBuf>,
    /// A name (the file goes to DATA/datasets/NAME.flyd) or a path ending in .flyd.
    #[arg(long)]
    pub out: String,
    /// A seeded sample of this many TRAIN positions (default: all of them, about 10 million).
    #[arg(long)]
    pub positions: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games whose one position each makes the human test (the dataset's HOLD).
    #[arg(long, default_value_t = flychess_learning::datasets::game_positions::HUMAN_TEST_GAMES)]
    pub human_games: usize,
    /// Games whose one position each makes the dataset's VAL.
    #[arg(long, default_value_t = flychess_learning::datasets::game_positions::HUMAN_VAL_GAMES)]
    pub val_games: usize,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flychess data games`: the dataset written to `--out`, its report printed.
pub fn run(args: &GamesArgs, data: &Path) -> Result<()> {
    let pgn = args.pgn.clone().unwrap_or_else(book_pgn);
    let out = dataset_path(&args.out, data)?;
    let shipped = Dataset::load(&shipped_path())?;
    let bar = ProgressBar::new(1);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes}, {bytes_per_sec}, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let report = positions_from_games(
        &pgn,
        &shipped,
        &GamesOptions { human_games: args.human_games, val_games: args.val_games, ..GamesOptions::new(args.positions, args.seed) },
        &out,
        &|pass, done, total| {
            bar.set_message(pass.to_string());
            bar.set_length(total);
            bar.set_position(done);
        },
    )?;
    bar.finish_and_clear();
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let peak = peak_memory_mb();
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["file"] = out.display().to_string().into();
        v["bytes"] = size.into();
        v["seconds"] = started.elapsed().as_secs_f64().into();
        v["peak_memory_mb"] = peak.into();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{} games read ({} broken, {} without a result, {} left out for the shipped HOLD/VAL{})\n\
             human test (HOLD) {} positions, VAL {}, TRAIN {} of {} candidates ({} left out for equalling a held-out position)\n\
             → {} ({:.1} MB) in {:.0} s, peak memory {}",
            report.games,
            report.broken_games,
            report.unfinished_games,
            report.held_out_games,
            if report.same_games_as_shipped { "" } else { "; not the shipped rows' book: games left out by equal positions only" },
            report.human_test_positions,
            report.human_val_positions,
            report.train_positions,
            report.train_candidates,
            report.equal_to_held_out,
            out.display(),
            size as f64 / 1e6,
            started.elapsed().as_secs_f64(),
            peak.map(|mb| format!("{mb:.0} MB")).unwrap_or_else(|| "unknown".into()),
        );
    }
    Ok(())
}
