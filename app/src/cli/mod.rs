//! The `flychess` command line: the parser (`Cli`, with the window's options and the global
//! `--data`), one `Command` per subcommand, each holding its own clap `Args` struct or its
//! family's subcommands, and `run`, which hands each to its family's module: `brain` (build,
//! inspect and download brains, bench, the DN cache, labelled data), `fly` (readouts: train, eval,
//! analyse, lessons, imagine-tune; the arena: play, rate, duel, profile, ceiling),
//! `brain_training` (the brain learns by BPTT, gradcheck, blame), `bio` (the dopamine fly),
//! `charles`, `views` (explain, probe, eye, learn, figure, doing); `options` holds what several
//! share. With no subcommand the desktop app opens.
// A front door, not a view: the command line reads and writes files (app/clippy.toml forbids that to the ui only).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod bio;
mod brain;
mod brain_training;
mod charles;
mod cluster;
mod controls;
mod curve;
mod fly;
mod options;
mod views;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use bio::BioCommand;
use brain::{BrainCommand, DataCommand};
use brain_training::BrainOpt;
use charles::CharlesCommand;
pub use options::*;

#[derive(Parser)]
#[command(name = "flychess", version, about = "A whole fruit-fly connectome learns and plays chess")]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Data folder (brains, tables, flies). Default: $FLYCHESS_DATA, else a portable copy's flychess-data folder beside the program, else the platform's data dir.
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
pub enum Command {
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
    Cache(brain::CacheArgs),
    /// The rating ladder: every fly and every trained Charles against fixed rungs (random, greedy,
    /// weakened and plain Stockfish at its lowest UCI_Elo, the anchor), paired openings, the clone control,
    /// Bradley–Terry ratings with 95% intervals into DATA/ratings.json. Resumable.
    Rate(fly::RateArgs),
    /// Two players over paired openings (each played twice, colours swapped): W-D-L, the Elo
    /// difference with its 95% interval from the pair scores, optionally a sequential test.
    /// Players: a fly by name, NAME+imagination, random, greedy, stockfish, stockfish:P,
    /// charles, and a fly or Charles with an aid: NAME+judge, NAME+search (64 simulations),
    /// NAME+searchN, NAME+sfD (Stockfish at depth D among its top five). Resumable.
    Duel(fly::DuelArgs),
    /// How a player loses (Philidor's lesson): its ladder games against the rungs (played where
    /// missing, shared with `rate`), every position scored once by Stockfish at a fixed depth,
    /// the centipawns each of its moves lost by phase and outcome, and each lost game's shape
    /// (one fatal blunder > 400 cp, a clear mistake 200–400, a slow decline). Default player:
    /// the brain's own trained fly.
    Profile(fly::ProfileArgs),
    /// The selection ceiling (Philidor's lesson): on held-out middlegame positions, the policy's
    /// favourite against its judge, its search and Stockfish at depths 1, 4 and 12 choosing among
    /// its top five, and the five's best (the ceiling): centipawns lost per move, blunder rate,
    /// time per move; with --duel-games N, each aid's Elo against the policy alone. Default
    /// player: the brain's own trained fly (or charles).
    Ceiling(fly::CeilingArgs),
    /// The finishing lessons: won TRAIN positions relabelled by Stockfish with every legal move
    /// scored (mates ranked by distance, stalemates as draws) into DATA/lessons/, for
    /// `train --lessons SHARE`. Resumable.
    Lessons(fly::LessonsArgs),
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
    ImagineTune(fly::ImagineTuneArgs),
    /// Habituation against repetition (FLY+habituation): its decay and weight chosen on VAL
    /// games (every position scored against the move played, with the memory of the boards the
    /// same side made), kept in DATA/habituation.json with the whole grid and its intervals.
    HabituationTune(fly::HabituationTuneArgs),
    /// Two glances (FLY+glances, an experiment): the gain on the attended piece's patch of the
    /// eye and where the move is taken from, chosen on VAL; HOLD measured beside the plain fly
    /// with the paired difference; kept in DATA/glances.json.
    GlancesTune(fly::GlancesTuneArgs),
    /// Fit a fly's readout over the cached DN rates (the fast way) and save the fly.
    Train(Box<fly::TrainArgs>),
    /// Rename a fly of DATA/flies (what the Flies tab's rename does): the name inside the file
    /// changes; its player id (a hash of what plays), and so its ratings and tunings, do not.
    Rename(RenameArgs),
    /// A fly on HOLD: top-1, good-move rate, loss, next to the blind and board-linear controls.
    Eval(fly::EvalArgs),
    /// The learning curve of the fit at scale: flies fitted on more and more positions (the
    /// shipped Stockfish-labelled rows, then master-move rows of a games dataset), each measured
    /// on HOLD (top-1, good move, loss) and on the human test with 95 % intervals, and the loss
    /// per doubling beside the seed's. Points whose games rows are not cached yet are listed, not
    /// fitted. Resumable; kept in DATA/learning-curve.json (the Train tab draws it).
    Curve(curve::CurveArgs),
    /// A fly's probability for every legal move of a position, its value and its choice.
    Analyse(fly::AnalyseArgs),
    /// Play games between any two players by name (the names every front door takes: random,
    /// greedy, stockfish, stockfish:P, a fly, FLY+imagination, a dopamine fly, charles or
    /// charles:RUN, a fly or Charles with an aid: +judge, +search, +searchN, +sfD); colours
    /// alternate game by game.
    Play(fly::PlayArgs),
    /// Measure how fast the brain thinks (positions per second per batch size, ms per move).
    Bench(brain::BenchArgs),
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

/// Runs the command line: a subcommand's work, or the window.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let data = cli.data.unwrap_or_else(flychess_brain::store::data_dir);
    match cli.command {
        None => {
            let moves = cli.moves.as_deref().unwrap_or("").split_whitespace().map(str::to_owned).collect();
            let quiet = cli.screenshot.is_some();
            let watch = cli.watch.map(|opponent| flychess::lab::Watch { opponent, plies: cli.plies });
            // A name that is no player is said before the window opens (the same resolver the
            // window's opponent uses; what needs the brain is made once it is loaded).
            if let Some(w) = &watch
                && let Err(e) = flychess_arena::players::named(
                    &w.opponent,
                    &flychess_arena::players::Lookup::in_folder(&data, &flychess_charles::player::Runs),
                )
                && !e.to_string().contains("needs its brain")
            {
                return Err(anyhow::anyhow!("--watch {}: {e}", w.opponent));
            }
            let view = cli.view.as_deref().map(flychess::ui::View::parse).transpose()?;
            cli.tab.as_deref().map(flychess::ui::Tab::parse).transpose().and_then(|tab| {
                flychess::ui::run(flychess::ui::Launch {
                    data,
                    screenshot: cli.screenshot,
                    moves,
                    tab,
                    view,
                    window_size: cli.window_size,
                    quiet,
                    watch,
                    ..Default::default()
                })
            })
        }
        Some(Command::Uci(UciArgs { player, engine, which })) => {
            let start = flychess::uci::Start { spec: brain::spec(&which, &data)?, data, player, engine: engine.choice() };
            let stdin = std::io::BufReader::new(std::io::stdin());
            flychess::uci::serve(start, stdin, &mut std::io::stdout())
        }
        Some(Command::Brain(cmd)) => brain::brain(cmd, &data),
        Some(Command::Data(cmd)) => brain::data(cmd, &data),
        Some(Command::Bio(bio::BioCommand::Train {
            name,
            lessons,
            games,
            every,
            monitor,
            lesson_seed,
            pass_share,
            eta,
            strengthen_silent,
            harder_after,
            own_dopamine,
            ship,
            which,
        })) => {
            let variation = bio::Variation {
                pass_share,
                eta,
                rule: flychess_arena::bio::learn::Rule { strengthen_silent, harder_after, own_dopamine },
            };
            bio::train(&which, &data, &name, lessons, games, every, monitor, lesson_seed, &variation, ship)
        }
        Some(Command::Bio(bio::BioCommand::Eval { fly, pairs, ceiling_pairs, top1, json, which })) => {
            bio::eval(&which, &data, fly.as_deref(), flychess_arena::bio::measure::EvalSizes { pairs, ceiling_pairs, top1 }, json)
        }
        Some(Command::Bio(bio::BioCommand::Speed { fly, lessons, repeat, json, engine, which })) => {
            bio::speed(&which, &data, fly.as_deref(), lessons, repeat, engine.choice(), json)
        }
        Some(Command::Bio(bio::BioCommand::Lesson { fen, good, bad, fly, json, which })) => {
            bio::lesson(&which, &data, &fen, good.as_deref(), bad.as_deref(), fly.as_deref(), json)
        }
        Some(Command::Bio(bio::BioCommand::Pilots { lessons, pairs, top1, only, json, which })) => {
            bio::pilots(&which, &data, lessons, pairs, top1, &only, json)
        }
        Some(Command::Train(args)) => {
            let fly::TrainArgs {
                name,
                positions,
                read,
                ship,
                newborn,
                lessons,
                games,
                games_positions,
                stockfish_share,
                engine_labels,
                teacher,
                curriculum,
                curriculum_dataset,
                from,
                brain_training: b,
                fit,
                engine,
                mut which,
            } = *args;
            let brain_learns = b.train_brain || which.brain == BrainKind::Itself;
            if which.brain == BrainKind::Itself {
                which.brain = BrainKind::Flywire783;
            }
            if brain_learns {
                let leash = flychess_learning::bptt::run::Leash {
                    window: b.window as usize,
                    calm_unreached: b.calm_unreached,
                    brain_optimizer: match b.brain_opt {
                        BrainOpt::Adam => flychess_learning::bptt::run::BrainOptimizer::Adam,
                        BrainOpt::Sgd => flychess_learning::bptt::run::BrainOptimizer::Sgd,
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
                let job = brain_training::BrainJob {
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
                if b.pilots {
                    brain_training::pilots(&which, &data, &job, &b.only, b.pilot_brain_scale)
                } else {
                    brain_training::train(&which, &data, &job)
                }
            } else if newborn {
                fly::newborn(&which, &data, &name, ship)
            } else {
                let games = match games {
                    Some(g) => {
                        let dataset = brain::dataset_path(&g, &data)?;
                        let meta = flychess_fly::data::Dataset::stream(&dataset)?.meta;
                        let all = meta.rows - (meta.hold + meta.val).min(meta.rows);
                        let positions = games_positions.unwrap_or(all).min(all);
                        Some(flychess::training::GamesMix::taught(dataset, positions, stockfish_share, engine_labels, teacher.as_deref())?)
                    }
                    None => None,
                };
                if !(0.0..0.9).contains(&curriculum) {
                    return Err(anyhow::anyhow!("--curriculum {curriculum}: a share of every batch from 0 to below 0.9, e.g. 0.1"));
                }
                if curriculum <= 0.0 && !curriculum_dataset.is_empty() {
                    return Err(anyhow::anyhow!(
                        "--curriculum-dataset {} needs --curriculum SHARE (the share of every batch it takes, e.g. 0.1); without it the curriculum would not be used",
                        curriculum_dataset[0].display()
                    ));
                }
                let curriculum = (curriculum > 0.0).then(|| {
                    let mut paths = curriculum_dataset.clone().into_iter();
                    flychess::training::CurriculumMix {
                        dataset: paths.next().unwrap_or_else(|| flychess::finishing::default_dir(&data).join("curriculum.flyd")),
                        share: curriculum,
                        more: paths.collect(),
                    }
                });
                fly::train(
                    &which,
                    &data,
                    &name,
                    positions,
                    &read,
                    ship,
                    &fit.options(),
                    lessons,
                    engine.choice(),
                    games,
                    curriculum,
                    from.as_deref().map(|f| flychess::training::StartFrom::named(f, &data)).transpose()?,
                    b.json,
                )
            }
        }
        Some(Command::Curve(args)) => curve::curve(&data, &args),
        Some(Command::Lessons(fly::LessonsArgs { positions, depth, workers })) => fly::lessons(&data, positions, depth, workers),
        Some(Command::Play(args)) => fly::play(&data, &args),
        Some(Command::Rate(args)) => fly::rate(&data, &args),
        Some(Command::Duel(args)) => fly::duel(&data, &args),
        Some(Command::Profile(args)) => fly::profile(&data, &args),
        Some(Command::Ceiling(args)) => fly::ceiling(&data, &args),
        Some(Command::Gradcheck(brain_training::GradcheckArgs { seed, json })) => brain_training::gradcheck(seed, json),
        Some(Command::Blame(brain_training::BlameArgs { fen, fly, json, which })) => {
            brain_training::blame(&which, &data, &fen, fly.as_deref(), json)
        }
        Some(Command::Explain(views::ExplainArgs { fen, fly, json, which })) => views::explain(&which, &data, &fen, fly.as_deref(), json),
        Some(Command::Probe(views::ProbeArgs { train, val, hold, neurons, json, which })) => views::probe(
            &which,
            &data,
            flychess_arena::probe::ProbeOptions { train, val, hold, per_region: neurons, ..Default::default() },
            json,
        ),
        Some(Command::Doing(views::DoingArgs { fly, json, which })) => views::doing(&which, &data, fly.as_deref(), json),
        Some(Command::Eye(views::EyeArgs { fen, json, which })) => views::eye(&which, &data, &fen, json),
        Some(Command::Figure(views::FigureArgs { fen, fly, png, gif, white, which })) => {
            views::figure(&which, &data, &fen, fly.as_deref(), png.as_deref(), gif.as_deref(), white)
        }
        Some(Command::Learn(views::LearnArgs { run, fen, json, which })) => views::learn(&which, &data, &run, &fen, json),
        Some(Command::GlancesTune(fly::GlancesTuneArgs { fly, positions, json, which })) => {
            fly::glances_tune(&which, &data, &fly, positions, json)
        }
        Some(Command::HabituationTune(fly::HabituationTuneArgs { fly, games, starts, max_plies, json, which })) => {
            fly::habituation_tune(&which, &data, &fly, games, starts, max_plies, json)
        }
        Some(Command::ImagineTune(fly::ImagineTuneArgs { fly, positions, json, which })) => {
            fly::imagine_tune(&which, &data, &fly, positions, json)
        }
        Some(Command::Eval(fly::EvalArgs { player: Some(player), charles, json, fit, which, .. })) => match player.as_str() {
            "charles" => charles::eval(&which, &data, &charles, &fit.options(), json),
            other => Err(anyhow::anyhow!("unknown player {other:?}: a fly is named with --fly; --player takes charles")),
        },
        Some(Command::Eval(fly::EvalArgs {
            fly,
            json,
            no_controls,
            positions,
            human_positions,
            against,
            curriculum,
            controls_at_scale,
            scale_controls,
            fit,
            which,
            ..
        })) => {
            // A curriculum named must be there (issue 68: a missing path measured something else
            // without a word); the default one is used where it exists.
            if let Some(named) = curriculum.as_ref().filter(|p| !p.exists()) {
                return Err(anyhow::anyhow!(
                    "--curriculum {}: no such file (make it with `flychess data curriculum`, or leave --curriculum out)",
                    named.display()
                ));
            }
            let curriculum = curriculum.unwrap_or_else(|| flychess::finishing::default_dir(&data).join("curriculum.flyd"));
            fly::eval(
                &which,
                &data,
                fly.as_deref(),
                positions,
                json,
                &fit.options(),
                !no_controls,
                human_positions,
                &against,
                Some(curriculum),
                controls_at_scale.as_deref().map(|run| (run, &scale_controls[..])),
            )
        }
        Some(Command::Charles(charles::CharlesCommand::Train {
            name,
            size,
            positions,
            epochs,
            batch,
            lr,
            val,
            val_every,
            fit_on,
            json,
        })) => match flychess_charles::CharlesConfig::parse(&size) {
            Some(config) => {
                let options = flychess_charles::run::TrainOptions {
                    config,
                    positions,
                    epochs,
                    batch,
                    learning_rate: lr,
                    val,
                    val_every,
                    ..Default::default()
                };
                charles::train(&data, &name, options, fit_on.into(), json)
            }
            None => Err(anyhow::anyhow!("unknown size {size:?}: small, seed or tiny")),
        },
        Some(Command::Analyse(fly::AnalyseArgs { fly, fen, fens, json, imagination, which })) => {
            let positions = match (fen, fens) {
                (Some(f), None) => fly::Positions::One(f),
                (None, Some(p)) => fly::Positions::File(p),
                _ => return Err(anyhow::anyhow!("give one of --fen FEN or --fens FILE")),
            };
            fly::analyse(&which, &data, &fly, positions, json, imagination)
        }
        Some(Command::Cache(brain::CacheArgs {
            positions,
            dataset,
            batch,
            shards: cluster::ShardArgs { shard, merge_shards },
            engine,
            which,
        })) => {
            let dataset = match dataset {
                Some(name) => brain::dataset_path(&name, &data)?,
                None => flychess_fly::data::shipped_path(),
            };
            let job = match (shard, merge_shards) {
                (Some(shard), _) => brain::CacheJob::Shard(shard),
                (None, Some(n)) => brain::CacheJob::Merge(n as usize),
                (None, None) => brain::CacheJob::Whole,
            };
            brain::cache_job(&which, &data, &dataset, positions, batch, engine.choice(), job).map(|_| ())
        }
        Some(Command::Merge(args)) => cluster::merge(args),
        Some(Command::Rename(RenameArgs { old, new })) => {
            flychess::lab::flies::rename_fly(&data, &old, &new)?;
            println!("renamed {old} to {new} in {}", flychess_brain::files::DataFolder::at(&data).flies().display());
            Ok(())
        }
        Some(Command::Cluster(cluster::ClusterCommand::Slurm(args))) => cluster::slurm(args, &data),
        Some(Command::Bench(brain::BenchArgs { json, render: true, which, .. })) => brain::render_bench(&which, &data, json),
        Some(Command::Bench(brain::BenchArgs { json, fit: true, fit_positions, fit_passes, which, .. })) => {
            brain::fit_bench(&which, &data, fit_positions, fit_passes, json)
        }
        Some(Command::Bench(brain::BenchArgs { json, batches, reference, which, .. })) => {
            brain::bench(&which, &data, &batches, json, reference)
        }
    }
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
