//! The `flychess data …` family: labelled datasets made, labelled, imported and summarised.
//! `DataCommand` and its dispatch, where a dataset named on the command line lives
//! (`dataset_path`), the book the shipped positions came from (`book_pgn`), and the two small
//! subcommands, `import` and `info`; beside this file `games` (positions of real games, labelled
//! by the masters' moves), `label` (positions labelled by Stockfish) and `curriculum` (the
//! curriculum of finishing).

mod curriculum;
mod games;
mod label;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};

use flychess_fly::data::{Dataset, shipped_path};

#[derive(Subcommand)]
pub enum DataCommand {
    /// Convert labelled positions in JSONL (plain or .zst: fen, game, ply, legal, moves[uci, cp,
    /// mate, wdl]) into the project's dataset format, keeping their order (HOLD, VAL, TRAIN).
    Import(ImportArgs),
    /// Sample positions from real games in a PGN file (one per game, sometimes two, at a random
    /// ply; duplicates and finished positions skipped; shuffled) and label them with Stockfish
    /// (MultiPV 8 at a fixed depth, one engine per worker) into DIR/labels.jsonl, the format
    /// `data import` reads. Resumable: a killed run continues after its last complete line.
    ///
    /// With --dataset instead of --pgn: Stockfish's own moves for the TRAIN rows of a dataset
    /// (e.g. `games-1200k`, whose rows carry the master's move), in the dataset's order, as lines
    /// naming their row (`i`) without the FEN; `--multipv 1` gives the best move alone (about 60
    /// positions a second a core at depth 10).
    Label(label::LabelArgs),
    /// The curriculum of finishing (issue 56): won positions whose moves Stockfish ranks by
    /// centipawns and distance to mate, so the quickest win is the target. Won TRAIN positions of
    /// a games dataset (by its engine labels), the dataset's human-test positions (held out),
    /// random basic won endgames (KQ-K, KR-K, KRR-K, KBB-K, KQ against a minor piece, a pawn to
    /// promote) and stalemate lessons (a move stalemates; the target is the best one that does
    /// not); a tenth of the made positions held out. Labelled into DIR/labels.jsonl (resumable,
    /// sharded like `data label`), then built into DIR/curriculum.flyd for `train --curriculum`
    /// and `eval` (`fastest_win`).
    Curriculum(curriculum::CurriculumArgs),
    /// Summary of a dataset (default: the one shipped with the project).
    Info(InfoArgs),
    /// Training positions from real games, labelled for free: every position of every game
    /// before a move, with the move the master played and the game's result (mover's side). The
    /// games of the shipped HOLD/VAL rows and every position equal to one are left out; 4,096
    /// games no shipped row came from give the human test (the new dataset's HOLD, one position
    /// a game) and 2,048 more its VAL. Streams the PGN (plain or .zst) twice; resumable (parts
    /// beside the output); a broken or unfinished game is skipped and counted.
    Games(games::GamesArgs),
}

/// Runs a `flychess data …` subcommand.
pub fn run(cmd: DataCommand, data: &Path) -> Result<()> {
    match cmd {
        DataCommand::Import(args) => import(&args),
        DataCommand::Label(args) => label::run(&args, data),
        DataCommand::Curriculum(args) => curriculum::run(&args, data),
        DataCommand::Info(args) => info(&args),
        DataCommand::Games(args) => games::run(&args, data),
    }
}

/// Where a dataset named on the command line lives: a path ending in .flyd as it is, else
/// `DATA/datasets/NAME.flyd`.
pub fn dataset_path(name: &str, data: &Path) -> Result<PathBuf> {
    if name.ends_with(".flyd") {
        return Ok(PathBuf::from(name));
    }
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(anyhow!("{name:?} is neither a dataset name (letters, digits, - and _) nor a path ending in .flyd"));
    }
    Ok(flychess_brain::files::DataFolder::at(data).datasets().join(format!("{name}.flyd")))
}

/// The games PGN of a checkout (the book the shipped positions came from).
pub fn book_pgn() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/brain/data/games/book_1.02.pgn.zst")
}

// The arguments of `flychess data import` (its help text is the subcommand's doc comment in `DataCommand`).
#[derive(Args)]
pub struct ImportArgs {
    #[arg(long)]
    pub jsonl: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    /// Where the positions come from (kept in the file).
    #[arg(long, default_value = "book_1.02.pgn (Debian gnuchess-book), one or two positions per game")]
    pub source: String,
    /// Who labelled them (kept in the file).
    #[arg(long, default_value = "Stockfish 15.1, 1 thread, 32 MB hash, MultiPV 8, depth 10")]
    pub labeller: String,
}

/// `flychess data import`: labelled positions in JSONL (plain or .zst) into the project's
/// dataset format, in their order.
fn import(args: &ImportArgs) -> Result<()> {
    let ImportArgs { jsonl, out, source, labeller } = args;
    let file = std::fs::File::open(jsonl).with_context(|| format!("opening {}", jsonl.display()))?;
    let reader: Box<dyn std::io::BufRead> = if jsonl.extension().is_some_and(|e| e == "zst") {
        Box::new(std::io::BufReader::new(zstd::stream::read::Decoder::new(file)?))
    } else {
        Box::new(std::io::BufReader::new(file))
    };
    let d = Dataset::from_jsonl(reader, source, labeller).with_context(|| format!("reading {}", jsonl.display()))?;
    d.save(out)?;
    println!(
        "{} positions: HOLD {}, VAL {}, TRAIN {} → {} ({:.1} MB)",
        d.rows.len(),
        d.hold().len(),
        d.val().len(),
        d.train().len(),
        out.display(),
        std::fs::metadata(out).map(|m| m.len()).unwrap_or(0) as f64 / 1e6
    );
    Ok(())
}

// The arguments of `flychess data info` (its help text is the subcommand's doc comment in `DataCommand`).
#[derive(Args)]
pub struct InfoArgs {
    pub path: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// `flychess data info`: a dataset's summary (default: the shipped one).
fn info(args: &InfoArgs) -> Result<()> {
    let path = args.path.clone().unwrap_or_else(shipped_path);
    let d = Dataset::load(&path)?;
    let moves: usize = d.rows.iter().map(|r| r.moves.len()).sum();
    let v = serde_json::json!({
        "file": path.display().to_string(),
        "source": d.meta.source,
        "labeller": d.meta.labeller,
        "positions": d.rows.len(),
        "hold": d.hold().len(),
        "val": d.val().len(),
        "train": d.train().len(),
        "labelled_moves": moves,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: {} positions (HOLD {}, VAL {}, TRAIN {}), {} labelled moves\n  from {}\n  labelled by {}",
            path.display(),
            d.rows.len(),
            d.hold().len(),
            d.val().len(),
            d.train().len(),
            moves,
            d.meta.source,
            d.meta.labeller
        );
    }
    Ok(())
}
