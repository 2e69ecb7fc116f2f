//! The `flychess` binary: with no subcommand it opens the desktop app (eframe); subcommands do
//! the headless work (building and inspecting brains, downloading the release). This file owns
//! the command line and hands each command to its module.

mod bio_cli;
mod charles_cli;
mod brain_cli;
mod cli;
mod fly_cli;
mod views_cli;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(name = "flychess", version, about = "A whole fruit-fly connectome learns and plays chess")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Data folder (brains, tables, flies). Default: $FLYCHESS_DATA, else the platform's data dir.
    #[arg(long, global = true)]
    data: Option<PathBuf>,
    /// Open the window, save a PNG of it once the brain is ready (and the moves are played), and close.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// Moves to play when the window opens (UCI or SAN, space-separated): "e2e4 e7e5 Nf3".
    #[arg(long, value_name = "MOVES")]
    moves: Option<String>,
    /// A view to open on: looks-at, eye, all-moves (Play); steps, brain-eye, chart, probes,
    /// classroom (Brain); learn (Train); doing, loses (Flies). With --screenshot: a picture of it.
    #[arg(long, value_name = "VIEW")]
    view: Option<String>,
    /// The window's size, WIDTHxHEIGHT (e.g. 1280x720 for a projector).
    #[arg(long, value_name = "WxH", value_parser = parse_window_size)]
    window_size: Option<[f32; 2]>,
    /// The tab to open: play, brain, train, flies or about.
    #[arg(long, value_name = "TAB")]
    tab: Option<String>,
    /// Watch the fly (White) play OPPONENT move after move in the window: random, greedy,
    /// stockfish, stockfish:P (a share P of random moves) or a fly's name. With --screenshot the
    /// last frame is saved and the window closes when the game ends (or at --plies).
    #[arg(long, value_name = "OPPONENT")]
    watch: Option<String>,
    /// With --watch: stop after this many plies.
    #[arg(long, value_name = "N", requires = "watch")]
    plies: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Build, inspect and download brains.
    #[command(subcommand)]
    Brain(BrainCommand),
    /// Labelled positions: import, inspect.
    #[command(subcommand)]
    Data(DataCommand),
    /// Charles: a transformer that never was a fly, trained on the flies' positions and labels.
    #[command(subcommand)]
    Charles(CharlesCommand),
    /// The dopamine fly: the mushroom body learns by the three-factor rule, no backprop.
    #[command(subcommand)]
    Bio(BioCommand),
    /// Run the frozen brain once over the labelled positions and keep the descending neurons'
    /// rates as bytes (resumable), for fitting readouts.
    Cache {
        /// How many positions (in dataset order: HOLD, VAL, then TRAIN). Default: all.
        #[arg(long)]
        positions: Option<usize>,
        /// Positions per think (default: 32 on the CPU engine, a few thousand on a GPU).
        #[arg(long)]
        batch: Option<usize>,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// The rating ladder: every fly and every trained Charles against fixed rungs (random, greedy,
    /// weakened and plain Stockfish at its lowest UCI_Elo, the anchor), paired openings, the clone control,
    /// Bradley–Terry ratings with 95% intervals into DATA/ratings.json. Resumable.
    Rate {
        /// Games per pairing (each opening twice, colours swapped).
        #[arg(long, default_value_t = 20)]
        games: usize,
        /// 2 games per pairing, a 200-ply cap, flies without imagination only: minutes, not hours.
        #[arg(long)]
        quick: bool,
        /// Philidor's aided players too, labelled as such: each trained fly + judge and + search
        /// 64, and Charles + search 64 (the brain's fly valuing its boards). Hours on a CPU.
        #[arg(long)]
        aided: bool,
        /// Seed of the openings and of the simple players' choices.
        #[arg(long, default_value_t = 1)]
        game_seed: u64,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Two players over paired openings (each played twice, colours swapped): W-D-L, the Elo
    /// difference with its 95% interval from the pair scores, optionally a sequential test.
    /// Players: a fly by name, NAME+imagination, random, greedy, stockfish, stockfish:P,
    /// charles, and a fly or Charles with an aid: NAME+judge, NAME+search (64 simulations),
    /// NAME+searchN, NAME+sfD (Stockfish at depth D among its top five). Resumable.
    Duel {
        first: String,
        second: String,
        /// Games (the most, with --sprt).
        #[arg(long, default_value_t = 40)]
        games: usize,
        #[arg(long, default_value_t = 1)]
        game_seed: u64,
        /// Stop as soon as the sequential test decides between --elo0 and --elo1.
        #[arg(long)]
        sprt: bool,
        #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
        elo0: f64,
        #[arg(long, default_value_t = 50.0, allow_hyphen_values = true)]
        elo1: f64,
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        #[arg(long, default_value_t = 0.05)]
        beta: f64,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// How a player loses (Philidor's lesson): its ladder games against the rungs (played where
    /// missing, shared with `rate`), every position scored once by Stockfish at a fixed depth,
    /// the centipawns each of its moves lost by phase and outcome, and each lost game's shape
    /// (one fatal blunder > 400 cp, a clear mistake 200–400, a slow decline). Default player:
    /// the brain's own trained fly.
    Profile {
        /// A fly by name, NAME+imagination, charles or charles:RUN, or a rung.
        #[arg(long)]
        player: Option<String>,
        /// Games analysed (taken from its ladder games, 20-ply openings shared with `rate`).
        #[arg(long, default_value_t = 40)]
        games: usize,
        /// Stockfish's search depth per position.
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// The selection ceiling (Philidor's lesson): on held-out middlegame positions, the policy's
    /// favourite against its judge, its search and Stockfish at depths 1, 4 and 12 choosing among
    /// its top five, and the five's best (the ceiling): centipawns lost per move, blunder rate,
    /// time per move; with --duel-games N, each aid's Elo against the policy alone. Default
    /// player: the brain's own trained fly (or charles).
    Ceiling {
        #[arg(long)]
        player: Option<String>,
        /// HOLD middlegame positions.
        #[arg(long, default_value_t = 200)]
        positions: usize,
        /// Stockfish's depth when scoring a pick.
        #[arg(long, default_value_t = 10)]
        depth: u32,
        /// The search's simulations a move.
        #[arg(long, default_value_t = 64)]
        simulations: usize,
        /// Games of each aided player against the policy alone (0: no duels).
        #[arg(long, default_value_t = 0)]
        duel_games: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// The finishing lessons: won TRAIN positions relabelled by Stockfish with every legal move
    /// scored (mates ranked by distance, stalemates as draws) into DATA/lessons/, for
    /// `train --lessons SHARE`. Resumable.
    Lessons {
        #[arg(long, default_value_t = 1_000)]
        positions: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long)]
        workers: Option<usize>,
    },
    /// Check the brain's hand-written gradient on a small brain: against central finite
    /// differences (f64, every parameter kind) and burn's autodiff.
    Gradcheck {
        /// Seed of the small brain.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// The error going back: d loss / d rate of every neuron at every step for one position
    /// (labelled by Stockfish, or the dataset's labels where it is one of them), by region.
    Blame {
        #[arg(long)]
        fen: String,
        /// The fly whose readout the loss is of (default: the brain's own).
        #[arg(long)]
        fly: Option<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// What the fly looks at: each piece taken off the board in turn (all boards in one batch),
    /// how much the chosen move's probability drops or rises and how much the descending neurons
    /// move without it.
    Explain {
        #[arg(long)]
        fen: String,
        /// The fly (default: the brain's own trained fly, the shipped one first).
        #[arg(long)]
        fly: Option<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// What each region's rates know about the board: linear probes (material balance, check, a
    /// piece hanging, a piece on e4) per region and step, fitted on TRAIN, scored on HOLD with
    /// 95% intervals, beside the same probes on the board itself. Kept in DATA/probes/.
    Probe {
        #[arg(long, default_value_t = 4_096)]
        train: usize,
        #[arg(long, default_value_t = 1_024)]
        val: usize,
        #[arg(long, default_value_t = 2_048)]
        hold: usize,
        /// Neurons read per region (evenly spread through it).
        #[arg(long, default_value_t = 128)]
        neurons: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// How a position lands on the fly's photoreceptors: each square's cells by what they report
    /// and those the board lights before step 1.
    Eye {
        #[arg(long)]
        fen: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Watching it learn: what each snapshot a training run kept (newborn, after passes 1, 2, 4,
    /// …, the end) answers to one position (default: after 1.e4, the fly to move).
    Learn {
        #[arg(long)]
        run: String,
        #[arg(long, default_value = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")]
        fen: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// The 12 steps of the brain's think about a position at once (a 3840x2160 PNG) and its replay
    /// (a GIF), drawn offscreen without a window.
    Figure {
        #[arg(long)]
        fen: String,
        /// The fly whose move the title names (default: the brain's own).
        #[arg(long)]
        fly: Option<String>,
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        #[arg(long, value_name = "FILE")]
        gif: Option<PathBuf>,
        /// A white background (for print).
        #[arg(long)]
        white: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// How a fly is doing on HOLD: by the piece Stockfish's best move moves (with the confusion
    /// of pieces) and by game phase, with 95% intervals.
    Doing {
        #[arg(long)]
        fly: Option<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Choose the imagination weight w on HOLD positions (0 … 16, ∞) for a fly; saved for the app.
    ImagineTune {
        #[arg(long)]
        fly: String,
        /// HOLD positions to try (each costs one think per legal move).
        #[arg(long, default_value_t = 256)]
        positions: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Fit a fly's readout over the cached DN rates (the fast way) and save the fly.
    Train {
        #[arg(long)]
        name: String,
        /// Positions of the shipped dataset to use (HOLD and VAL first, the rest TRAIN).
        #[arg(long)]
        positions: Option<usize>,
        /// Steps the readout reads: 9,10,11,12 (their mean) or 12.
        #[arg(long, value_delimiter = ',', default_values_t = [9usize, 10, 11, 12])]
        read: Vec<usize>,
        /// Also write the fly into models/ (shipped with the app).
        #[arg(long)]
        ship: bool,
        /// Make an untrained (newborn) fly instead.
        #[arg(long)]
        newborn: bool,
        /// Share of TRAIN made of finishing lessons (`flychess lessons`), e.g. 0.1.
        #[arg(long, default_value_t = 0.0)]
        lessons: f64,
        #[command(flatten)]
        brain_training: BrainTrainArgs,
        #[command(flatten)]
        fit: FitArgs,
        #[command(flatten)]
        engine: EngineArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// A fly on HOLD: top-1, good-move rate, loss, next to the blind and board-linear controls.
    Eval {
        /// The fly (default: the brain's own trained fly, the shipped one first).
        #[arg(long)]
        fly: Option<String>,
        /// Another player than a fly: `charles` (a transformer trained on the same positions,
        /// `flychess charles train`), measured on the same HOLD positions with the blind baseline.
        #[arg(long, conflicts_with = "fly")]
        player: Option<String>,
        /// With --player charles: the Charles run's name.
        #[arg(long, default_value = "charles")]
        charles: String,
        #[arg(long)]
        json: bool,
        /// Leave out the shuffled-wiring control (it caches a second brain the first time).
        #[arg(long)]
        no_controls: bool,
        /// Positions of the shipped dataset the controls train on (default: as many as the fly).
        #[arg(long)]
        positions: Option<usize>,
        #[command(flatten)]
        fit: FitArgs,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// A fly's probability for every legal move of a position, its value and its choice.
    Analyse {
        #[arg(long)]
        fly: String,
        #[arg(long)]
        fen: Option<String>,
        /// A file with one FEN per line, streamed in batches of 32: one JSON line per position
        /// as it goes with --json; a bad line is reported with its number and the rest go on.
        #[arg(long)]
        fens: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        /// Also the move one-move imagination plays, with weight W (default: the fly's tuned
        /// weight), and the value the fly sees after each move.
        #[arg(long, num_args = 0..=1, value_name = "W")]
        imagination: Option<Option<f32>>,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Play games: a fly (by name), charles or charles:RUN (a trained Charles), random, greedy,
    /// stockfish or stockfish:P (a share P of random moves) against another; colours alternate
    /// game by game.
    Play {
        #[arg(long)]
        white: String,
        #[arg(long)]
        black: String,
        #[arg(long, default_value_t = 20)]
        games: usize,
        /// Seed of the random choices (random and greedy movers, Stockfish's random moves).
        #[arg(long, default_value_t = 1)]
        game_seed: u64,
        #[arg(long)]
        json: bool,
        /// Flies look one move ahead (weight w of the value after; SPEC default 1).
        #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "W")]
        imagination: Option<f32>,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Measure how fast the brain thinks (positions per second per batch size, ms per move).
    Bench {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Batch sizes to measure.
        #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8, 32, 128])]
        batches: Vec<usize>,
        /// Also run the same 12 steps with scipy.sparse (tools/reference_scipy.py, in its own venv
        /// in the data folder), check both give the same rates, and print the speed ratio.
        #[arg(long)]
        reference: bool,
        /// Measure the brain view instead: the frame time of the full point cloud at 1280×800.
        #[arg(long)]
        render: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
}

#[derive(Subcommand)]
pub enum CharlesCommand {
    /// Train Charles (resumable: the same name and options go on from the last checkpoint) into
    /// DATA/charles/NAME/.
    Train {
        #[arg(long, default_value = "charles")]
        name: String,
        /// small (the shipped size) or seed (the seed's 32.5 M parameters).
        #[arg(long, default_value = "small")]
        size: String,
        /// TRAIN positions used.
        #[arg(long, default_value_t = 16_384)]
        positions: usize,
        #[arg(long, default_value_t = 1)]
        epochs: usize,
        #[arg(long, default_value_t = 32)]
        batch: usize,
        /// AdamW's peak step (warm-up, then cosine to a tenth).
        #[arg(long, default_value_t = 1e-3)]
        lr: f64,
        /// Steps between VAL checks and checkpoints.
        #[arg(long, default_value_t = 128)]
        val_every: usize,
        #[arg(long, value_enum, default_value_t = FitOnArg::Cpu)]
        fit_on: FitOnArg,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum BioCommand {
    /// Give a dopamine fly lessons (Stockfish's move: sugar; another legal move: a shock), or
    /// games with --games. Resumable: run it again with the same name to go on to --lessons.
    Train {
        #[arg(long)]
        name: String,
        /// Lessons in all (games with --games), counting those the fly already had.
        #[arg(long, default_value_t = 32_000)]
        lessons: usize,
        /// Learn from its own games instead (eligibility traces, dopamine from material).
        #[arg(long)]
        games: bool,
        /// Lessons between points of the curve (pairs right on VAL pairs) and saves.
        #[arg(long, default_value_t = 2_048)]
        every: usize,
        /// VAL pairs the curve is measured on.
        #[arg(long, default_value_t = 512)]
        monitor: usize,
        /// Seed of the lesson order and the other moves.
        #[arg(long, default_value_t = 1)]
        lesson_seed: u64,
        /// Share of Kenyon cells that pass (default 0.05).
        #[arg(long)]
        pass_share: Option<f32>,
        /// Learning rate η (default 0.1).
        #[arg(long)]
        eta: Option<f32>,
        /// Silent cells' synapses get stronger (a pilot).
        #[arg(long)]
        strengthen_silent: bool,
        /// The second best move as the bad one from this lesson on (a pilot).
        #[arg(long)]
        harder_after: Option<usize>,
        /// The dose from the fly's own dopamine neurons' rates instead of the connectome's shares (a pilot).
        #[arg(long)]
        own_dopamine: bool,
        /// Also write the fly into models/ (shipped with the app).
        #[arg(long)]
        ship: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Measure a dopamine fly on held-out pairs (before and after training, flips, harder pairs,
    /// top-1, the logistic ceilings, speed). Default: the brain's shipped dopamine fly.
    Eval {
        #[arg(long)]
        fly: Option<String>,
        /// HOLD pairs (at least 2,048 for the must-show figures).
        #[arg(long, default_value_t = 2_048)]
        pairs: usize,
        /// TRAIN pairs the logistic ceilings are fitted on.
        #[arg(long, default_value_t = 8_192)]
        ceiling_pairs: usize,
        /// HOLD positions for top-1 (every legal move looked at).
        #[arg(long, default_value_t = 300)]
        top1: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// One lesson seen from inside the mushroom body (the lesson comic): Kenyon cells that fire
    /// after the good and the bad move, their overlap, the vote, the dose, the MBONs it changes.
    Lesson {
        #[arg(long)]
        fen: String,
        /// The good move (default: Stockfish's best).
        #[arg(long)]
        good: Option<String>,
        /// The bad move (default: a random other legal move).
        #[arg(long)]
        bad: Option<String>,
        /// The dopamine fly (default: the brain's shipped one).
        #[arg(long)]
        fly: Option<String>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
    /// The seed's pilots side by side, each from the same untrained mushroom body.
    Pilots {
        #[arg(long, default_value_t = 8_192)]
        lessons: usize,
        #[arg(long, default_value_t = 1_024)]
        pairs: usize,
        #[arg(long, default_value_t = 200)]
        top1: usize,
        /// Only these pilots (their numbers in the list, from 0).
        #[arg(long, value_delimiter = ',')]
        only: Vec<usize>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        which: WhichBrain,
    },
}

#[derive(Subcommand)]
pub enum BrainCommand {
    /// Summary of a brain (building it first when needed).
    Info {
        #[command(flatten)]
        which: WhichBrain,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Build a brain from its tables, even when an up-to-date file exists.
    Build {
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Download a release's tables (resumable; checked): MaleCNS v1.0 (size and sha256 pinned) or
    /// the full FlyWire v783 (checked against what Zenodo and the Codex bucket state).
    Download {
        /// Which release: malecns or flywire783.
        #[arg(long, value_enum, default_value_t = Release::Malecns)]
        release: Release,
        /// Where to put them. Default: DATA/connectome/malecns-v1.0 or DATA/connectome/flywire783.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// MaleCNS: base address of the tables (a mirror, or a local server in tests).
        #[arg(long, default_value = flychess_sim::connectome::release::BASE_URL)]
        base_url: String,
        /// FlyWire: the Zenodo record's API address (its file list with sizes and md5 sums).
        #[arg(long, default_value = flychess_sim::connectome::flywire_release::ZENODO_RECORD)]
        record_url: String,
        /// FlyWire: the Codex bucket holding the classification and neuron tables.
        #[arg(long, default_value = flychess_sim::connectome::flywire_release::CODEX_BASE)]
        codex_url: String,
        /// Resume this many times after a dropped connection.
        #[arg(long, default_value_t = 8)]
        attempts: u32,
    },
    /// How much the board changes each region's rates, step by step, on 48 real positions.
    Signal {
        #[command(flatten)]
        which: WhichBrain,
        #[arg(long)]
        json: bool,
        /// Measure homeostasis with "calm unreached" (σ = 1 where the input never moves).
        #[arg(long)]
        calm_unreached: bool,
    },
    /// Write the synthetic stand-in's three tables (the release's schema) into a folder.
    Generate {
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = flychess_sim::connectome::synthetic::DEFAULT_SEED)]
        seed: u64,
    },
}

#[derive(Subcommand)]
pub enum DataCommand {
    /// Convert labelled positions in JSONL (plain or .zst: fen, game, ply, legal, moves[uci, cp,
    /// mate, wdl]) into the project's dataset format, keeping their order (HOLD, VAL, TRAIN).
    Import {
        #[arg(long)]
        jsonl: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Where the positions come from (kept in the file).
        #[arg(long, default_value = "book_1.02.pgn (Debian gnuchess-book), one or two positions per game")]
        source: String,
        /// Who labelled them (kept in the file).
        #[arg(long, default_value = "Stockfish 15.1, 1 thread, 32 MB hash, MultiPV 8, depth 10")]
        labeller: String,
    },
    /// Sample positions from real games in a PGN file (one per game, sometimes two, at a random
    /// ply; duplicates and finished positions skipped; shuffled) and label them with Stockfish
    /// (MultiPV 8 at a fixed depth, one engine per worker) into DIR/labels.jsonl, the format
    /// `data import` reads. Resumable: a killed run continues after its last complete line.
    Label {
        #[arg(long)]
        pgn: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// How many positions to label (the first ones of the shuffled sample).
        #[arg(long, default_value_t = 10_000)]
        positions: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long, default_value_t = 8)]
        multipv: usize,
        /// Engines run at once (default: one per core).
        #[arg(long)]
        workers: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Summary of a dataset (default: the one shipped with the project).
    Info {
        path: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// How readouts are fitted (SPEC §5 defaults).
#[derive(Args, Clone, Debug)]
pub struct FitArgs {
    /// Positions per Adam step.
    #[arg(long, default_value_t = 8_192)]
    batch: usize,
    /// Adam's step size.
    #[arg(long, default_value_t = 2e-3)]
    lr: f32,
    /// Most passes over TRAIN.
    #[arg(long, default_value_t = 60)]
    passes: usize,
    /// Where the fit runs: a hardware GPU when there is one (auto), the CPU, or the best GPU
    /// adapter even a software one (gpu).
    #[arg(long, value_enum, default_value_t = FitOnArg::Auto)]
    fit_on: FitOnArg,
}

/// Where the brain thinks in a headless job.
#[derive(Args, Clone, Copy, Debug)]
pub struct EngineArgs {
    /// The GPU engine on a hardware GPU when there is one (auto), the CPU engine, or the GPU engine
    /// on the best adapter even a software one (gpu).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    engine: EngineArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum EngineArg {
    Auto,
    Cpu,
    Gpu,
}

impl EngineArgs {
    fn choice(&self) -> flychess_sim::brain::simulator::EngineChoice {
        use flychess_sim::brain::simulator::EngineChoice;
        match self.engine {
            EngineArg::Auto => EngineChoice::Auto,
            EngineArg::Cpu => EngineChoice::Cpu,
            EngineArg::Gpu => EngineChoice::Gpu,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FitOnArg {
    Auto,
    Cpu,
    Gpu,
}

impl From<FitOnArg> for flychess_sim::burn_fit::FitOn {
    fn from(a: FitOnArg) -> Self {
        use flychess_sim::burn_fit::FitOn;
        match a {
            FitOnArg::Auto => FitOn::Auto,
            FitOnArg::Cpu => FitOn::Cpu,
            FitOnArg::Gpu => FitOn::Gpu,
        }
    }
}

impl FitArgs {
    fn options(&self) -> flychess_sim::train::FitOptions {
        flychess_sim::train::FitOptions { batch: self.batch, learning_rate: self.lr, max_passes: self.passes, on: self.fit_on.into(), ..Default::default() }
    }
}

/// `train --brain`: the brain learns too (backprop through time over the last steps, on a leash).
#[derive(Args, Clone, Debug)]
pub struct BrainTrainArgs {
    /// Train the brain itself as well as the readout (`--brain` with no value says the same for
    /// the default brain).
    #[arg(long)]
    train_brain: bool,
    /// Steps the gradient walks back through, from step 12 (1–12).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u8).range(1..=12))]
    window: u8,
    /// Homeostasis with "calm unreached": σ = 1 for neurons whose input never moved at a step.
    #[arg(long)]
    calm_unreached: bool,
    /// How the brain's numbers move: adam, or sgd (momentum 0.9: each synapse by its own gradient).
    #[arg(long, value_enum, default_value_t = BrainOpt::Adam)]
    brain_opt: BrainOpt,
    /// Keep each connection within this share of its measured strength (e.g. 0.2).
    #[arg(long)]
    max_change: Option<f32>,
    /// Step size of the connection strengths (default 1e-5 with adam; 0.1 with sgd, whose step is
    /// the gradient itself: 2.3 M synapses share a gradient of length ≤ 1).
    #[arg(long)]
    lr_synapses: Option<f32>,
    /// Step size of the neurons' gains and biases (defaults as --lr-synapses).
    #[arg(long)]
    lr_neurons: Option<f32>,
    /// Step size of the readout (Adam), for the brain run and its readout-only control alike.
    #[arg(long, default_value_t = 3e-4)]
    lr_readout: f32,
    /// Positions per step of brain training.
    #[arg(long, default_value_t = 32)]
    brain_batch: usize,
    /// VAL positions measured for the curve.
    #[arg(long, default_value_t = 512)]
    val: usize,
    /// Positions between VAL points and checkpoints (default: an eighth of the run).
    #[arg(long)]
    val_every: Option<usize>,
    /// HOLD positions measured at the end (at most 4,096).
    #[arg(long, default_value_t = 4096)]
    hold: usize,
    /// The readout-only fly to start from (default: the brain's own).
    #[arg(long)]
    start: Option<String>,
    /// Leave out the readout-only control run on the same positions.
    #[arg(long)]
    no_control: bool,
    /// Also time a training step against the forward pass at these batch sizes.
    #[arg(long, value_delimiter = ',')]
    speed_batches: Vec<usize>,
    /// Seed of the TRAIN stream's order.
    #[arg(long, default_value_t = 1)]
    stream_seed: u64,
    /// Run the seed's pilots instead (readout only, then each leash) on the same positions.
    #[arg(long)]
    pilots: bool,
    /// With --pilots: only these (0 = readout only is always run), e.g. 3,5.
    #[arg(long, value_delimiter = ',')]
    only: Vec<usize>,
    /// With --pilots: every brain step size times this (e.g. 0.1: ten times smaller steps).
    #[arg(long, default_value_t = 1.0)]
    pilot_brain_scale: f32,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum BrainOpt {
    Adam,
    Sgd,
}

/// Which brain a command means.
#[derive(Args, Clone, Debug)]
pub struct WhichBrain {
    /// Which brain: flywire783 (real FlyWire v783 wiring, the default), standin (the synthetic
    /// stand-in), malecns (the MaleCNS release; needs --tables or `brain download`).
    /// (`train --brain` with no value: the default brain, and it learns too.)
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "itself", default_value_t = BrainKind::Flywire783)]
    brain: BrainKind,
    /// The release tables' folder (FlyWire: the full release as downloaded; MaleCNS: its tables).
    #[arg(long)]
    tables: Option<PathBuf>,
    /// Seed of the synthetic stand-in.
    #[arg(long, default_value_t = flychess_sim::connectome::synthetic::DEFAULT_SEED)]
    seed: u64,
    /// Control: hand out the receiving ends of all connections again (optional seed).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "SEED")]
    shuffle_wiring: Option<u64>,
    /// Control: drop every connection sent from this region (repeatable), e.g. "optic lobe".
    #[arg(long, value_name = "REGION")]
    lesion: Vec<String>,
}

/// Releases `brain download` fetches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Release {
    Malecns,
    Flywire783,
}

/// The brains a command can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BrainKind {
    /// FlyWire v783: the shipped bundle (within hemispheres), or --tables DIR.
    Flywire783,
    /// The synthetic stand-in (MaleCNS schema, random wiring within populations), from --seed.
    Standin,
    /// MaleCNS v1.0 from --tables DIR (default: where `brain download` puts it).
    Malecns,
    /// `--brain` given without a value (only `train` takes it: the default brain learns too).
    #[value(hide = true)]
    Itself,
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,wgpu=warn,naga=warn,eframe=warn,egui_wgpu=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let data = cli.data.unwrap_or_else(flychess_sim::store::data_dir);
    let result = match cli.command {
        None => {
            let moves = cli.moves.as_deref().unwrap_or("").split_whitespace().map(str::to_owned).collect();
            let quiet = cli.screenshot.is_some();
            let watch = cli.watch.map(|opponent| flychess::lab::Watch { opponent, plies: cli.plies });
            // A fly opponent that does not exist is said before the window opens.
            if let Some(w) = &watch
                && !flychess_sim::ladder::Entrant::names_rung(&w.opponent)
                && let Err(e) = flychess_sim::fly::find(&w.opponent, &data)
            {
                return report(Err(anyhow::anyhow!("--watch {}: {e} (or random, greedy, stockfish, stockfish:P)", w.opponent)));
            }
            let view = match cli.view.as_deref().map(flychess::ui::View::parse).transpose() {
                Ok(v) => v,
                Err(e) => return report(Err(e)),
            };
            cli.tab
                .as_deref()
                .map(flychess::ui::Tab::parse)
                .transpose()
                .and_then(|tab| flychess::ui::run(flychess::ui::Launch { data, screenshot: cli.screenshot, moves, tab, view, window_size: cli.window_size, quiet, watch, ..Default::default() }))
        }
        Some(Command::Brain(cmd)) => cli::brain(cmd, &data),
        Some(Command::Data(cmd)) => cli::data(cmd),
        Some(Command::Bio(BioCommand::Train { name, lessons, games, every, monitor, lesson_seed, pass_share, eta, strengthen_silent, harder_after, own_dopamine, ship, which })) => {
            let variation = bio_cli::Variation { pass_share, eta, rule: flychess_sim::bio::learn::Rule { strengthen_silent, harder_after, own_dopamine } };
            bio_cli::train(&which, &data, &name, lessons, games, every, monitor, lesson_seed, &variation, ship)
        }
        Some(Command::Bio(BioCommand::Eval { fly, pairs, ceiling_pairs, top1, json, which })) => {
            bio_cli::eval(&which, &data, fly.as_deref(), flychess_sim::bio::measure::EvalSizes { pairs, ceiling_pairs, top1 }, json)
        }
        Some(Command::Bio(BioCommand::Lesson { fen, good, bad, fly, json, which })) => bio_cli::lesson(&which, &data, &fen, good.as_deref(), bad.as_deref(), fly.as_deref(), json),
        Some(Command::Bio(BioCommand::Pilots { lessons, pairs, top1, only, json, which })) => bio_cli::pilots(&which, &data, lessons, pairs, top1, &only, json),
        Some(Command::Train { name, positions, read, ship, newborn, lessons, brain_training: b, fit, engine, mut which }) => {
            let brain_learns = b.train_brain || which.brain == BrainKind::Itself;
            if which.brain == BrainKind::Itself {
                which.brain = BrainKind::Flywire783;
            }
            if brain_learns {
                let leash = flychess_sim::bptt::run::Leash {
                    window: b.window as usize,
                    calm_unreached: b.calm_unreached,
                    brain_optimizer: match b.brain_opt {
                        BrainOpt::Adam => flychess_sim::bptt::run::BrainOptimizer::Adam,
                        BrainOpt::Sgd => flychess_sim::bptt::run::BrainOptimizer::Sgd,
                    },
                    max_change: b.max_change,
                    lr_synapses: b.lr_synapses.unwrap_or(match b.brain_opt {
                        BrainOpt::Adam => 1e-5,
                        BrainOpt::Sgd => 0.1,
                    }),
                    lr_neurons: b.lr_neurons.unwrap_or(match b.brain_opt {
                        BrainOpt::Adam => 1e-5,
                        BrainOpt::Sgd => 0.1,
                    }),
                    lr_readout: b.lr_readout,
                };
                let job = brain_cli::BrainJob {
                    name,
                    positions: positions.unwrap_or(8_192),
                    batch: b.brain_batch,
                    leash,
                    val: b.val,
                    val_every: b.val_every,
                    hold: b.hold,
                    start: b.start,
                    control: !b.no_control,
                    speed_batches: b.speed_batches,
                    seed: b.stream_seed,
                    json: b.json,
                    engine: engine.choice(),
                };
                if b.pilots { brain_cli::pilots(&which, &data, &job, &b.only, b.pilot_brain_scale) } else { brain_cli::train(&which, &data, &job) }
            } else if newborn {
                fly_cli::newborn(&which, &data, &name, ship)
            } else {
                fly_cli::train(&which, &data, &name, positions, &read, ship, &fit.options(), lessons, engine.choice())
            }
        }
        Some(Command::Lessons { positions, depth, workers }) => fly_cli::lessons(&data, positions, depth, workers),
        Some(Command::Play { white, black, games, game_seed, json, imagination, which }) => {
            fly_cli::play(&which, &data, &white, &black, games, game_seed, json, imagination)
        }
        Some(Command::Rate { games, quick, aided, game_seed, json, engine, which }) => fly_cli::rate(&which, &data, games, quick, aided, game_seed, json, engine.choice()),
        Some(Command::Duel { first, second, games, game_seed, sprt, elo0, elo1, alpha, beta, json, engine, which }) => {
            let test = sprt.then_some(flychess_sim::duel::Sprt { elo0, elo1, alpha, beta });
            fly_cli::duel(&which, &data, &first, &second, games, game_seed, test, json, engine.choice())
        }
        Some(Command::Profile { player, games, depth, json, engine, which }) => fly_cli::profile(&which, &data, player.as_deref(), games, depth, json, engine.choice()),
        Some(Command::Ceiling { player, positions, depth, simulations, duel_games, json, engine, which }) => {
            fly_cli::ceiling(&which, &data, player.as_deref(), positions, depth, simulations, duel_games, json, engine.choice())
        }
        Some(Command::Gradcheck { seed, json }) => brain_cli::gradcheck(seed, json),
        Some(Command::Blame { fen, fly, json, which }) => brain_cli::blame(&which, &data, &fen, fly.as_deref(), json),
        Some(Command::Explain { fen, fly, json, which }) => views_cli::explain(&which, &data, &fen, fly.as_deref(), json),
        Some(Command::Probe { train, val, hold, neurons, json, which }) => {
            views_cli::probe(&which, &data, flychess_sim::probe::ProbeOptions { train, val, hold, per_region: neurons, ..Default::default() }, json)
        }
        Some(Command::Doing { fly, json, which }) => views_cli::doing(&which, &data, fly.as_deref(), json),
        Some(Command::Eye { fen, json, which }) => views_cli::eye(&which, &data, &fen, json),
        Some(Command::Figure { fen, fly, png, gif, white, which }) => views_cli::figure(&which, &data, &fen, fly.as_deref(), png.as_deref(), gif.as_deref(), white),
        Some(Command::Learn { run, fen, json, which }) => views_cli::learn(&which, &data, &run, &fen, json),
        Some(Command::ImagineTune { fly, positions, json, which }) => fly_cli::imagine_tune(&which, &data, &fly, positions, json),
        Some(Command::Eval { player: Some(player), charles, json, fit, which, .. }) => match player.as_str() {
            "charles" => charles_cli::eval(&which, &data, &charles, &fit.options(), json),
            other => Err(anyhow::anyhow!("unknown player {other:?}: a fly is named with --fly; --player takes charles")),
        },
        Some(Command::Eval { fly, json, no_controls, positions, fit, which, .. }) => {
            fly_cli::eval(&which, &data, fly.as_deref(), positions, json, &fit.options(), !no_controls)
        }
        Some(Command::Charles(CharlesCommand::Train { name, size, positions, epochs, batch, lr, val_every, fit_on, json })) => match flychess_sim::charles::CharlesConfig::parse(&size) {
            Some(config) => {
                let options = flychess_sim::charles::run::TrainOptions { config, positions, epochs, batch, learning_rate: lr, val_every, ..Default::default() };
                charles_cli::train(&data, &name, options, fit_on.into(), json)
            }
            None => Err(anyhow::anyhow!("unknown size {size:?}: small or seed")),
        },
        Some(Command::Analyse { fly, fen, fens, json, imagination, which }) => {
            let positions = match (fen, fens) {
                (Some(f), None) => fly_cli::Positions::One(f),
                (None, Some(p)) => fly_cli::Positions::File(p),
                _ => return report(Err(anyhow::anyhow!("give one of --fen FEN or --fens FILE"))),
            };
            fly_cli::analyse(&which, &data, &fly, positions, json, imagination)
        }
        Some(Command::Cache { positions, batch, engine, which }) => cli::cache(&which, &data, positions, batch, engine.choice()).map(|_| ()),
        Some(Command::Bench { json, render: true, which, .. }) => cli::render_bench(&which, &data, json),
        Some(Command::Bench { json, batches, reference, which, .. }) => cli::bench(&which, &data, &batches, json, reference),
    };
    report(result)
}

/// "1280x720" → [1280, 720].
fn parse_window_size(s: &str) -> Result<[f32; 2], String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("{s:?}: expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let parse = |v: &str| v.trim().parse::<f32>().ok().filter(|v| (320.0..=16384.0).contains(v)).ok_or_else(|| format!("{s:?}: sizes are numbers from 320 to 16384"));
    Ok([parse(w)?, parse(h)?])
}

fn report(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        // Catches clashing argument names between a command and the options it flattens in.
        super::Cli::command().debug_assert();
    }
}
