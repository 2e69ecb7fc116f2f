//! `flychess lessons`: the finishing lessons. Won positions of the shipped TRAIN split relabelled
//! by Stockfish with every legal move scored (mates ranked by distance, a stalemating move the
//! draw it is) into DATA/lessons/labels.jsonl, resumable, for `train --lessons SHARE`.

use std::path::Path;

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use shakmaty::Position;

use flychess_brain::chess::position_from_fen;
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::grading::Score;
use flychess_learning::datasets::stockfish_labels::{LabelOptions, Sample, label};

// The arguments of `flychess lessons` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct LessonsArgs {
    #[arg(long, default_value_t = 1_000)]
    pub positions: usize,
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    #[arg(long)]
    pub workers: Option<usize>,
}

/// `flychess lessons`: the finishing lessons. Won positions of the shipped TRAIN split (the mover
/// mates by force or leads by 3 pawns or more) relabelled by Stockfish with every legal move
/// scored, so mates can be ranked by distance and a stalemating move shows as the draw it is;
/// written to DATA/lessons/labels.jsonl (resumable) for `train --lessons SHARE`.
pub fn run(args: &LessonsArgs, data: &Path) -> Result<()> {
    let LessonsArgs { positions, depth, workers } = *args;
    let dataset = Dataset::load(&shipped_path())?;
    let won: Vec<&Row> = dataset.rows[HOLD + VAL..]
        .iter()
        .filter(|r| {
            r.moves.first().is_some_and(|m| match m.score {
                Score::Mate(n) => n > 0,
                Score::Cp(cp) => cp >= 300,
            })
        })
        .collect();
    let samples: Vec<Sample> = won.iter().map(|r| Sample { fen: r.fen.clone(), game: r.game, ply: r.ply, legal: r.legal }).collect();
    let traps = won
        .iter()
        .take(positions)
        .filter(|r| {
            position_from_fen(&r.fen).is_ok_and(|p| {
                p.legal_moves().iter().any(|m| {
                    let mut a = p.clone();
                    a.play_unchecked(*m);
                    a.is_stalemate()
                })
            })
        })
        .count();
    let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
    let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let total = positions.min(samples.len());
    println!(
        "{} won TRAIN positions; relabelling {total} with every legal move at depth {depth} ({traps} of them hold a stalemate trap)",
        samples.len()
    );
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("lessons [{bar:40}] {pos}/{len}, {per_sec}, eta {eta}").expect("valid template").progress_chars("=> "),
    );
    let file = flychess_learning::pipeline::lessons_path(data);
    let options =
        LabelOptions { first_index: 0, depth, multipv: 255, workers, positions, seed: 0, stockfish, compact: false, every_move: false };
    let done = label(&samples, &file, &options, &|d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    println!("{done} lessons in {}; mix them into training with `flychess train --lessons 0.1`", file.display());
    Ok(())
}
