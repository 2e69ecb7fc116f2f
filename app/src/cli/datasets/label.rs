//! `flychess data label`: positions labelled by Stockfish (MultiPV at a fixed depth, one engine a
//! worker) into DIR/labels.jsonl, the format `data import` reads: a seeded sample of a PGN's
//! positions, or a dataset's TRAIN rows by their row number; resumable, one shard of the job at a
//! time (`--shard I/N`) or its parts joined (`--merge-shards N`).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_fly::data::Dataset;
use flychess_learning::datasets::stockfish_labels::{DatasetLabelKey, LabelKey, LabelOptions, dataset_samples, label, sample};

use super::dataset_path;
use crate::cli::cluster::ShardArgs;

// The arguments of `flychess data label` (its help text is the subcommand's doc comment in `DataCommand`).
#[derive(Args)]
pub struct LabelArgs {
    #[arg(long, required_unless_present = "dataset", conflicts_with = "dataset")]
    pub pgn: Option<PathBuf>,
    /// A dataset whose TRAIN rows to label: a name (DATA/datasets/NAME.flyd) or a .flyd path.
    #[arg(long)]
    pub dataset: Option<String>,
    #[arg(long)]
    pub out: PathBuf,
    /// How many positions to label (the first ones of the shuffled sample, or of the dataset's
    /// TRAIN rows).
    #[arg(long, default_value_t = 10_000)]
    pub positions: usize,
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    #[arg(long, default_value_t = 8)]
    pub multipv: usize,
    /// Every legal move of each position scored (Stockfish's whole opinion, the seed's
    /// teacher: `train --teacher every-move`); a dataset's rows only.
    #[arg(long, conflicts_with = "multipv")]
    pub every_move: bool,
    /// Engines run at once (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub shards: ShardArgs,
}

/// Runs `flychess data label`: the positions sampled (or read), this run's share labelled, or the
/// shards' parts joined.
pub fn run(args: &LabelArgs, data: &Path) -> Result<()> {
    let LabelArgs { ref pgn, ref dataset, ref out, positions, depth, multipv, every_move, workers, seed, shards } = *args;
    let ShardArgs { shard, merge_shards } = shards;
    let multipv = if every_move { flychess_learning::datasets::stockfish_labels::EVERY_MOVE } else { multipv };
    if every_move && dataset.is_none() {
        return Err(anyhow!("--every-move labels a dataset's TRAIN rows: give --dataset NAME"));
    }
    let file = out.join("labels.jsonl");
    if let Some(count) = merge_shards {
        let (whole, lines, bytes) =
            flychess_learning::datasets::stockfish_labels::merge_shards::<LabelKey>(&file, count as usize, "flychess data label")?;
        println!("{}: {lines} labelled positions joined from {count} parts ({bytes} bytes)", whole.display());
        return Ok(());
    }
    let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
    let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    // Where the positions come from: a PGN's sample, or a dataset's TRAIN rows.
    let (samples, first_row, dataset_key) = match (pgn, dataset) {
        (_, Some(name)) => {
            let path = dataset_path(name, data)?;
            println!("reading the TRAIN rows of {}…", path.display());
            let d = Dataset::load(&path)?;
            let first_row = d.meta.hold + d.meta.val;
            (dataset_samples(&d), first_row, Some(d.content_hash()))
        }
        (Some(pgn), None) => {
            println!("sampling positions from {}…", pgn.display());
            (sample(pgn, seed)?, 0, None)
        }
        (None, None) => return Err(anyhow!("data label needs --pgn FILE or --dataset NAME")),
    };
    let total = positions.min(samples.len());
    let start = |file: &Path, shard: flychess_fly::shard::Shard| -> Result<()> {
        let part = flychess_fly::shard::Part { shard, total };
        match (&dataset_key, pgn) {
            (Some(sha), _) => {
                let key = DatasetLabelKey { dataset_sha256: sha.clone(), first_row, depth, multipv, every_move };
                flychess_fly::shard::start_part(file, &key, part)?;
            }
            (None, Some(pgn)) => {
                let key = LabelKey { pgn_sha256: flychess_brain::connectome::download::sha256_file(pgn)?, seed, depth, multipv };
                flychess_fly::shard::start_part(file, &key, part)?;
            }
            (None, None) => unreachable!("a source was found above"),
        }
        Ok(())
    };
    let (file, range) = match shard {
        Some(shard) => {
            let part_file = flychess_fly::shard::part_path(&file, shard);
            start(&part_file, shard)?;
            (part_file, shard.range(total))
        }
        None => {
            // A dataset's labels carry their sidecar unsharded too: they name rows, not FENs. The
            // first N rows are the same whatever N, so asking for more grows the file.
            if let Some(sha) = &dataset_key {
                let key = DatasetLabelKey { dataset_sha256: sha.clone(), first_row, depth, multipv, every_move };
                flychess_fly::shard::start_growing(&file, &key, total)?;
            }
            (file, 0..total)
        }
    };
    println!(
        "{} positions sampled; labelling {} (positions {}..{} of {total}) with {} at depth {depth}, MultiPV {multipv}, {workers} engines",
        samples.len(),
        range.len(),
        range.start,
        range.end,
        stockfish.display()
    );
    let bar = ProgressBar::new(range.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("labelling [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let options = LabelOptions {
        first_index: first_row + range.start,
        depth,
        multipv,
        workers,
        positions: range.len(),
        seed,
        stockfish,
        compact: dataset_key.is_some(),
        every_move,
    };
    let done = label(&samples[range.clone()], &file, &options, &|d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    match shard {
        Some(shard) => {
            println!("{done} positions labelled in {} (shard {shard}; join the parts with --merge-shards {})", file.display(), shard.count)
        }
        None => println!(
            "{done} positions labelled in {} (import with `flychess data import --jsonl {} --out FILE.flyd`)",
            file.display(),
            file.display()
        ),
    }
    Ok(())
}
