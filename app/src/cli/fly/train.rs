//! `flychess train`: a fly's readout fitted over the DN-rate cache (the fast way), with a progress
//! bar and the metrics log the Train tab draws; the shipped Stockfish-labelled rows, with `--games`
//! a games dataset's rows too, finishing lessons and the curriculum mixed in, or from another
//! fly's readout. `--newborn` makes an untrained fly; `--train-brain` (or a bare `--brain`) lets
//! the brain learn too (`cli::brain_training`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_fly::cache::Reading;
use flychess_fly::fly::{self, Fly};
use flychess_learning::pipeline::{self, Controls, CurriculumMix, GamesMix, Prepared, StartFrom, TrainEvent, TrainJob};

use super::pass_line;
use crate::cli::brain_training::BrainTrainArgs;
use crate::cli::options::{BrainKind, EngineArgs, FitArgs, WhichBrain};

// The arguments of `flychess train` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct TrainArgs {
    #[arg(long)]
    pub name: String,
    /// Positions of the shipped dataset to use (HOLD and VAL first, the rest TRAIN).
    #[arg(long)]
    pub positions: Option<usize>,
    /// Steps the readout reads: 9,10,11,12 (their mean) or 12.
    #[arg(long, value_delimiter = ',', default_values_t = [9usize, 10, 11, 12])]
    pub read: Vec<usize>,
    /// Also write the fly into models/ (shipped with the app).
    #[arg(long)]
    pub ship: bool,
    /// Make an untrained (newborn) fly instead.
    #[arg(long)]
    pub newborn: bool,
    /// Share of TRAIN made of finishing lessons (`flychess lessons`), e.g. 0.1.
    #[arg(long, default_value_t = 0.0)]
    pub lessons: f64,
    /// The fit at scale: also the TRAIN rows of a games dataset (`flychess data games --out
    /// NAME`; a name or a path ending in .flyd), their DN readings cached and streamed off disk.
    #[arg(long)]
    pub games: Option<String>,
    /// With --games: how many of its TRAIN positions (default: all).
    #[arg(long, requires = "games")]
    pub games_positions: Option<usize>,
    /// With --games: the share of every batch drawn from the shipped Stockfish-labelled rows.
    #[arg(long, default_value_t = 0.25, requires = "games")]
    pub stockfish_share: f64,
    /// With --games: Stockfish's own moves for its TRAIN rows, a folder `data label --dataset`
    /// wrote (labels.json and labels.jsonl; a running job's folder is fine: the run uses the
    /// lines written when it starts).
    #[arg(long, requires = "games")]
    pub engine_labels: Option<PathBuf>,
    /// With --games: who teaches its rows: `master` (the game's move), `engine` (Stockfish's move;
    /// only labelled rows are used), `every-move` (Stockfish's whole opinion: every legal move's
    /// share exp((win % − best win %) / 2.5), from labels of `data label --every-move`) or weights
    /// `master=1,engine=3` / `master=1,every-move=3` (a row without a label takes the master's
    /// move). The value head learns Stockfish's best score where there is one, else the game's
    /// result. Default: engine where --engine-labels is given, else master.
    #[arg(long, requires = "games")]
    pub teacher: Option<String>,
    /// The share of every batch from the curriculum of finishing (`flychess data curriculum`:
    /// won positions taught the quickest win, stalemate lessons), e.g. 0.1; its held-out
    /// positions are never trained on.
    #[arg(long, default_value_t = 0.0)]
    pub curriculum: f64,
    /// The curriculum's dataset (default: DATA/curriculum/curriculum.flyd). Repeat it to mix
    /// several (their TRAIN rows together make the --curriculum share), e.g. the curriculum and
    /// the lessons of a fly's own games (`data curriculum --own-games`).
    #[arg(long)]
    pub curriculum_dataset: Vec<PathBuf>,
    /// Start the readout's fit from this fly's readout (same brain and steps) instead of a
    /// newborn one: a finished fly taught more (e.g. the curriculum) without refitting its
    /// millions of rows. Nothing worse on VAL than this fly is kept.
    #[arg(long, value_name = "FLY", conflicts_with_all = ["newborn", "train_brain"])]
    pub from: Option<String>,
    #[command(flatten)]
    pub brain_training: BrainTrainArgs,
    #[command(flatten)]
    pub fit: FitArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Runs `flychess train`: the brain learns too where `--train-brain` or a bare `--brain` says so,
/// a newborn fly with `--newborn`, else a readout fitted over the cached DN rates.
pub fn run(args: &TrainArgs, data: &Path) -> Result<()> {
    if args.brain_training.train_brain || args.which.brain == BrainKind::Itself {
        crate::cli::brain_training::train(args, data)
    } else if args.newborn {
        newborn(args, data)
    } else {
        readout(args, data)
    }
}

fn reading_of(read: &[usize]) -> Result<(Reading, Vec<usize>)> {
    match read {
        [12] => Ok((Reading::Step12, vec![11])),
        [9, 10, 11, 12] => Ok((Reading::Mean9To12, vec![8, 9, 10, 11])),
        _ => Err(anyhow!("--read takes 9,10,11,12 (the mean of steps 9–12) or 12")),
    }
}

/// The training job the command line asks for, checked in this order: the games mix, the
/// curriculum, the fly it starts from, the fly's name, the steps it reads.
fn readout_job(args: &TrainArgs, data: &Path) -> Result<TrainJob> {
    let games = games_mix(args, data)?;
    let curriculum = curriculum_mix(args, data)?;
    let from = args.from.as_deref().map(|f| StartFrom::named(f, data)).transpose()?;
    // A shipped fly's name only for the developers' --ship, which replaces that fly itself.
    if args.ship {
        fly::check_name(&args.name)?
    } else {
        fly::check_new_name(&args.name)?
    }
    let (reading, _) = reading_of(&args.read)?;
    Ok(TrainJob {
        name: args.name.clone(),
        positions: args.positions.unwrap_or(usize::MAX),
        reading,
        options: args.fit.options(),
        lessons: args.lessons,
        games,
        curriculum,
        from,
    })
}

/// `--games NAME`: the games dataset's TRAIN rows (all, or `--games-positions` of them) with
/// their teacher; None without it.
fn games_mix(args: &TrainArgs, data: &Path) -> Result<Option<GamesMix>> {
    let Some(g) = &args.games else { return Ok(None) };
    let dataset = crate::cli::datasets::dataset_path(g, data)?;
    let meta = flychess_fly::data::Dataset::stream(&dataset)?.meta;
    let all = meta.rows - (meta.hold + meta.val).min(meta.rows);
    let positions = args.games_positions.unwrap_or(all).min(all);
    Ok(Some(GamesMix::taught(dataset, positions, args.stockfish_share, args.engine_labels.clone(), args.teacher.as_deref())?))
}

/// `--curriculum SHARE` and its datasets (default: DATA/curriculum/curriculum.flyd); None at a
/// share of 0, where naming a dataset is refused (it would not be used).
fn curriculum_mix(args: &TrainArgs, data: &Path) -> Result<Option<CurriculumMix>> {
    let curriculum = args.curriculum;
    if !(0.0..0.9).contains(&curriculum) {
        return Err(anyhow!("--curriculum {curriculum}: a share of every batch from 0 to below 0.9, e.g. 0.1"));
    }
    if curriculum <= 0.0 && !args.curriculum_dataset.is_empty() {
        return Err(anyhow!(
            "--curriculum-dataset {} needs --curriculum SHARE (the share of every batch it takes, e.g. 0.1); without it the curriculum would not be used",
            args.curriculum_dataset[0].display()
        ));
    }
    Ok((curriculum > 0.0).then(|| {
        let mut paths = args.curriculum_dataset.clone().into_iter();
        CurriculumMix {
            dataset: paths.next().unwrap_or_else(|| flychess_learning::datasets::finishing::default_dir(data).join("curriculum.flyd")),
            share: curriculum,
            more: paths.collect(),
        }
    }))
}

/// A readout fitted over the cached DN rates and saved as a fly (and into models/ with --ship),
/// its VAL and HOLD figures printed as text or JSON.
fn readout(args: &TrainArgs, data: &Path) -> Result<()> {
    let job = readout_job(args, data)?;
    let (name, ship) = (args.name.as_str(), args.ship);
    let spec = args.which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let prepared = Prepared {
        connectome: &loaded.connectome,
        brain: &brain,
        checksum: &loaded.checksum,
        spec_name: spec.name(),
        engine: args.engine.choice(),
        sensor: flychess_fly::cache::Sensor::Brain,
    };
    let bar = ProgressBar::new(1000);
    bar.set_style(ProgressStyle::with_template("[{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    let started = Instant::now();
    let controls = Controls::default();
    let fly = pipeline::train(&prepared, data, &job, &controls, &|e| match e {
        TrainEvent::Stage { text, fraction } => {
            bar.set_position((fraction * 1000.0) as u64);
            bar.set_message(text);
        }
        TrainEvent::Pass(p) => bar.suspend(|| eprintln!("{}", pass_line(name, &p))),
        TrainEvent::Resumed { passes, why } => bar.suspend(|| eprintln!("{name}: resumed after pass {passes}, on {why}")),
        TrainEvent::Done { .. } | TrainEvent::Stopped => {}
    })?;
    bar.finish_and_clear();
    let f = fly.ok_or_else(|| anyhow!("the run was stopped"))?;
    if ship {
        f.save(&flychess_brain::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    let (val, hold) = (f.meta.val.unwrap_or_default(), f.meta.hold.unwrap_or_default());
    let saved = flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"));
    let peak = crate::cli::memory::peak_memory_mb();
    if args.brain_training.json {
        let figures = |m: &flychess_fly::scoring::Metrics| serde_json::json!({"top1": m.top1, "good": m.good, "loss": m.loss});
        let report = serde_json::json!({
            "name": name,
            "seconds": started.elapsed().as_secs_f64(),
            "positions_trained": f.meta.train_positions,
            "teacher": f.meta.teacher,
            "positions_by_teacher": f.meta.positions_by_teacher,
            "peak_memory_mb": peak,
            "val": figures(&val),
            "hold": figures(&hold),
            "saved": saved,
            "shipped": ship,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{name}: fitted in {:.0} s on {} positions (peak memory {}); VAL top-1 {:.1}%, HOLD top-1 {:.1}% (good {:.1}%, loss {:.3})\n  saved {}{}",
        started.elapsed().as_secs_f64(),
        f.meta.train_positions,
        peak.map(|m| format!("{m:.0} MB")).unwrap_or_else(|| "unknown".into()),
        100.0 * val.top1,
        100.0 * hold.top1,
        100.0 * hold.good,
        hold.loss,
        saved.display(),
        if ship { " and models/" } else { "" }
    );
    Ok(())
}

/// A newborn fly (untrained readout) for a brain, saved like any other (by the lab, as the Flies
/// tab saves one).
fn newborn(args: &TrainArgs, data: &Path) -> Result<()> {
    let (name, ship) = (args.name.as_str(), args.ship);
    if !ship {
        fly::check_new_name(name)?;
    }
    let spec = args.which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let path = flychess_lab::lab::flies::save_newborn(&loaded.connectome, &loaded.checksum, &brain, data, name)?;
    if ship {
        Fly::load(&path)?.save(&flychess_brain::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    println!("saved the newborn fly {}", path.display());
    Ok(())
}
