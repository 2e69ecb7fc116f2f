//! The `flychess` command line: the parser (`Cli`, with the global `--data` and the window's
//! options, `WindowArgs`), one `Command` per subcommand holding its own clap `Args` struct or its
//! family's subcommands, and `run`, which hands each whole to its family's module: `brain` (build,
//! inspect and download brains), `datasets` (`data …`: labelled datasets), `cache` (the DN-rate
//! cache), `bench` (how fast the brain thinks), `fly` (readouts: train, eval, curve, analyse,
//! lessons, the tunings), `arena` (play, rate, duel, profile, ceiling), `brain_training` (the
//! brain learns by BPTT, gradcheck, blame), `bio` (the dopamine fly), `charles`, `views` (explain,
//! probe, eye, learn, figure, doing) and `cluster` (merge, Slurm); `options` holds the flags
//! several share, `memory` the process's memory figures. With no subcommand the desktop app opens.
// A front door, not a view: the command line reads and writes files (app/clippy.toml forbids that to the ui only).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod arena;
mod bench;
mod bio;
mod brain;
mod brain_training;
mod cache;
mod charles;
mod cluster;
mod datasets;
mod fly;
mod memory;
mod options;
mod views;

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};

use options::{EngineArgs, WhichBrain};

#[derive(Parser)]
#[command(name = "flychess", version, about = "A whole fruit-fly connectome learns and plays chess")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Data folder (brains, tables, flies). Default: $FLYCHESS_DATA, else a portable copy's flychess-data folder beside the program, else the platform's data dir.
    #[arg(long, global = true)]
    data: Option<PathBuf>,
    #[command(flatten)]
    window: WindowArgs,
}

// The window's options, with no subcommand (their help is `flychess --help`'s).
#[derive(Args)]
struct WindowArgs {
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
pub enum Command {
    /// Build, inspect and download brains.
    #[command(subcommand)]
    Brain(brain::BrainCommand),
    /// Labelled positions: import, inspect.
    #[command(subcommand)]
    Data(datasets::DataCommand),
    /// Charles: a transformer that never was a fly, trained on the flies' positions and labels.
    #[command(subcommand)]
    Charles(charles::CharlesCommand),
    /// The dopamine fly: the mushroom body learns by the three-factor rule, no backprop.
    #[command(subcommand)]
    Bio(bio::BioCommand),
    /// Run the frozen brain once over the labelled positions and keep the descending neurons'
    /// rates as bytes (resumable), for fitting readouts.
    Cache(cache::CacheArgs),
    /// The rating ladder: every fly and every trained Charles against fixed rungs (random, greedy,
    /// weakened and plain Stockfish at its lowest UCI_Elo, the anchor), paired openings, the clone control,
    /// Bradley–Terry ratings with 95% intervals into DATA/ratings.json. Resumable.
    Rate(arena::rate::RateArgs),
    /// Two players over paired openings (each played twice, colours swapped): W-D-L, the Elo
    /// difference with its 95% interval from the pair scores, optionally a sequential test.
    /// Players: a fly by name, NAME+imagination, random, greedy, stockfish, stockfish:P,
    /// charles, and a fly or Charles with an aid: NAME+judge, NAME+search (64 simulations),
    /// NAME+searchN, NAME+sfD (Stockfish at depth D among its top five). Resumable.
    Duel(arena::duel::DuelArgs),
    /// How a player loses (Philidor's lesson): its ladder games against the rungs (played where
    /// missing, shared with `rate`), every position scored once by Stockfish at a fixed depth,
    /// the centipawns each of its moves lost by phase and outcome, and each lost game's shape
    /// (one fatal blunder > 400 cp, a clear mistake 200–400, a slow decline). Default player:
    /// the brain's own trained fly.
    Profile(arena::profile::ProfileArgs),
    /// The selection ceiling (Philidor's lesson): on held-out middlegame positions, the policy's
    /// favourite against its judge, its search and Stockfish at depths 1, 4 and 12 choosing among
    /// its top five, and the five's best (the ceiling): centipawns lost per move, blunder rate,
    /// time per move; with --duel-games N, each aid's Elo against the policy alone. Default
    /// player: the brain's own trained fly (or charles).
    Ceiling(arena::ceiling::CeilingArgs),
    /// The finishing lessons: won TRAIN positions relabelled by Stockfish with every legal move
    /// scored (mates ranked by distance, stalemates as draws) into DATA/lessons/, for
    /// `train --lessons SHARE`. Resumable.
    Lessons(fly::lessons::LessonsArgs),
    /// Check the brain's hand-written gradient on a small brain: against central finite
    /// differences (f64, every parameter kind) and burn's autodiff.
    Gradcheck(brain_training::GradcheckArgs),
    /// The error going back: d loss / d rate of every neuron at every step for one position
    /// (labelled by Stockfish, or the dataset's labels where it is one of them), by region.
    Blame(brain_training::BlameArgs),
    /// What the fly looks at: each piece taken off the board in turn (all boards in one batch),
    /// how much the chosen move's probability drops or rises and how much the descending neurons
    /// move without it.
    Explain(views::ExplainArgs),
    /// What each region's rates know about the board: linear probes (material balance, check, a
    /// piece hanging, a piece on e4) per region and step, fitted on TRAIN, scored on HOLD with
    /// 95% intervals, beside the same probes on the board itself. Kept in DATA/probes/.
    Probe(views::ProbeArgs),
    /// How a position lands on the fly's photoreceptors: each square's cells by what they report
    /// and those the board lights before step 1.
    Eye(views::EyeArgs),
    /// Watching it learn: what each snapshot a training run kept (newborn, after passes 1, 2, 4,
    /// …, the end) answers to one position (default: after 1.e4, the fly to move).
    Learn(views::LearnArgs),
    /// The 12 steps of the brain's think about a position at once (a 3840x2160 PNG) and its replay
    /// (a GIF), drawn offscreen without a window.
    Figure(views::FigureArgs),
    /// How a fly is doing on HOLD: by the piece Stockfish's best move moves (with the confusion
    /// of pieces) and by game phase, with 95% intervals.
    Doing(views::DoingArgs),
    /// Choose the imagination weight w on HOLD positions (0 … 16, ∞) for a fly; saved for the app.
    ImagineTune(fly::tune::ImagineTuneArgs),
    /// Habituation against repetition (FLY+habituation): its decay and weight chosen on VAL
    /// games (every position scored against the move played, with the memory of the boards the
    /// same side made), kept in DATA/habituation.json with the whole grid and its intervals.
    HabituationTune(fly::tune::HabituationTuneArgs),
    /// Two glances (FLY+glances, an experiment): the gain on the attended piece's patch of the
    /// eye and where the move is taken from, chosen on VAL; HOLD measured beside the plain fly
    /// with the paired difference; kept in DATA/glances.json.
    GlancesTune(fly::tune::GlancesTuneArgs),
    /// Fit a fly's readout over the cached DN rates (the fast way) and save the fly.
    Train(Box<fly::train::TrainArgs>),
    /// Rename a fly of DATA/flies (what the Flies tab's rename does): the name inside the file
    /// changes; its player id (a hash of what plays), and so its ratings and tunings, do not.
    Rename(RenameArgs),
    /// A fly on HOLD: top-1, good-move rate, loss, next to the blind and board-linear controls.
    Eval(fly::eval::EvalArgs),
    /// The learning curve of the fit at scale: flies fitted on more and more positions (the
    /// shipped Stockfish-labelled rows, then master-move rows of a games dataset), each measured
    /// on HOLD (top-1, good move, loss) and on the human test with 95 % intervals, and the loss
    /// per doubling beside the seed's. Points whose games rows are not cached yet are listed, not
    /// fitted. Resumable; kept in DATA/learning-curve.json (the Train tab draws it).
    Curve(fly::curve::CurveArgs),
    /// A fly's probability for every legal move of a position, its value and its choice.
    Analyse(fly::analyse::AnalyseArgs),
    /// Play games between any two players by name (the names every front door takes: random,
    /// greedy, stockfish, stockfish:P, a fly, FLY+imagination, a dopamine fly, charles or
    /// charles:RUN, a fly or Charles with an aid: +judge, +search, +searchN, +sfD); colours
    /// alternate game by game.
    Play(arena::play::PlayArgs),
    /// Measure how fast the brain thinks (positions per second per batch size, ms per move).
    Bench(bench::BenchArgs),
    /// Join the part files of a sharded job (`cache --shard I/N`, `data label --shard I/N`) into
    /// the file one unsharded run writes, byte for byte; refused, naming the file and what
    /// differs, when a part is missing, unfinished, or of another brain, dataset, option set or
    /// shard count.
    Merge(cluster::MergeArgs),
    /// Run long jobs on a cluster.
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
    /// The fly as a UCI engine on stdin/stdout, for any chess program (Cute Chess, Arena, En
    /// Croissant, Scid, lichess-bot, python-chess): `flychess uci --player flywire`.
    Uci(UciArgs),
}

// The arguments of `flychess rename` (its help text is the command's doc comment in `Command`).
#[derive(clap::Args)]
pub struct RenameArgs {
    /// The fly's name now (DATA/flies/OLD.fly).
    old: String,
    /// Its new name (not empty, not starting with a dot, none of / \ : * ? " < > | +).
    new: String,
}

// The arguments of `flychess uci` (its help text is the command's doc comment in `Command`).
#[derive(clap::Args)]
pub struct UciArgs {
    /// The player at the start (the `Player` option changes it): a fly of the brain, NAME+judge,
    /// NAME+search64, a dopamine fly, charles or charles:RUN. Default: the brain's own fly.
    #[arg(long)]
    pub player: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Runs the command line: a subcommand's work, handed its arguments whole, or the window.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let data = cli.data.unwrap_or_else(flychess_brain::store::data_dir);
    let Some(command) = cli.command else { return open_window(cli.window, data) };
    match command {
        Command::Brain(cmd) => brain::run(cmd, &data),
        Command::Data(cmd) => datasets::run(cmd, &data),
        Command::Charles(cmd) => charles::run(cmd, &data),
        Command::Bio(cmd) => bio::run(cmd, &data),
        Command::Cache(args) => cache::run(&args, &data),
        Command::Rate(args) => arena::rate::run(&args, &data),
        Command::Duel(args) => arena::duel::run(&args, &data),
        Command::Profile(args) => arena::profile::run(&args, &data),
        Command::Ceiling(args) => arena::ceiling::run(&args, &data),
        Command::Lessons(args) => fly::lessons::run(&args, &data),
        Command::Gradcheck(args) => brain_training::gradcheck(&args),
        Command::Blame(args) => brain_training::blame(&args, &data),
        Command::Explain(args) => views::explain(&args, &data),
        Command::Probe(args) => views::probe(&args, &data),
        Command::Eye(args) => views::eye(&args, &data),
        Command::Learn(args) => views::learn(&args, &data),
        Command::Figure(args) => views::figure(&args, &data),
        Command::Doing(args) => views::doing(&args, &data),
        Command::ImagineTune(args) => fly::tune::imagination(&args, &data),
        Command::HabituationTune(args) => fly::tune::habituation(&args, &data),
        Command::GlancesTune(args) => fly::tune::glances(&args, &data),
        Command::Train(args) => fly::train::run(&args, &data),
        Command::Rename(args) => rename(&args, &data),
        Command::Eval(args) => fly::eval::run(&args, &data),
        Command::Curve(args) => fly::curve::run(&args, &data),
        Command::Analyse(args) => fly::analyse::run(&args, &data),
        Command::Play(args) => arena::play::run(&args, &data),
        Command::Bench(args) => bench::run(&args, &data),
        Command::Merge(args) => cluster::merge(args),
        Command::Cluster(cluster::ClusterCommand::Slurm(args)) => cluster::slurm(args, &data),
        Command::Uci(args) => uci(args, data),
    }
}

/// The desktop app, with no subcommand: a `--watch` opponent that is no player is refused before
/// the window opens.
fn open_window(window: WindowArgs, data: PathBuf) -> anyhow::Result<()> {
    let moves = window.moves.as_deref().unwrap_or("").split_whitespace().map(str::to_owned).collect();
    let quiet = window.screenshot.is_some();
    let watch = window.watch.map(|opponent| flychess_lab::lab::Watch { opponent, plies: window.plies });
    // A name that is no player is said before the window opens (`players::check`, as the
    // window's opponent checks it; what needs the brain is made once it is loaded).
    if let Some(w) = &watch
        && let Err(e) =
            flychess_arena::players::check(&w.opponent, &flychess_arena::players::Lookup::in_folder(&data, &flychess_charles::player::Runs))
    {
        return Err(anyhow::anyhow!("--watch {}: {e}", w.opponent));
    }
    let view = window.view.as_deref().map(flychess_window::ui::View::parse).transpose()?;
    window.tab.as_deref().map(flychess_window::ui::Tab::parse).transpose().and_then(|tab| {
        flychess_window::ui::run(flychess_window::ui::Launch {
            data,
            screenshot: window.screenshot,
            moves,
            tab,
            view,
            window_size: window.window_size,
            quiet,
            watch,
            ..Default::default()
        })
    })
}

/// `flychess uci`: the fly as a UCI engine on stdin and stdout.
fn uci(args: UciArgs, data: PathBuf) -> anyhow::Result<()> {
    let UciArgs { player, engine, which } = args;
    let start = flychess::uci::Start { spec: which.spec(&data)?, data, player, engine: engine.choice() };
    let stdin = std::io::BufReader::new(std::io::stdin());
    flychess::uci::serve(start, stdin, &mut std::io::stdout())
}

/// `flychess rename`: a fly of DATA/flies renamed, as the Flies tab renames one.
fn rename(args: &RenameArgs, data: &Path) -> anyhow::Result<()> {
    let RenameArgs { old, new } = args;
    flychess_lab::lab::flies::rename_fly(data, old, new)?;
    println!("renamed {old} to {new} in {}", flychess_brain::files::DataFolder::at(data).flies().display());
    Ok(())
}

/// "1280x720" → [1280, 720].
fn parse_window_size(s: &str) -> Result<[f32; 2], String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("{s:?}: expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<f32>()
            .ok()
            .filter(|v| (320.0..=16384.0).contains(v))
            .ok_or_else(|| format!("{s:?}: sizes are numbers from 320 to 16384"))
    };
    Ok([parse(w)?, parse(h)?])
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
