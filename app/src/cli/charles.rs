//! `flychess charles train` and `flychess eval --player charles`: Charles (`flychess_charles`),
//! a transformer that never was a fly, trained on the flies' positions and labels and measured on
//! the same HOLD positions, with the blind baseline fitted beside it as `flychess eval` fits it.

use crate::cli::options::FitOnArg;
use clap::{Args, Subcommand};
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};

use flychess_charles::Charles;
use flychess_charles::run::{self, RunFiles, TrainOptions};
use flychess_fly::data::{Dataset, shipped_path};
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{PositionOutcome, outcomes, summarise};
use flychess_fly::stats;
use flychess_learning::burn_device::FitOn;
use flychess_learning::train::FitOptions;

use crate::cli::fly::eval::PlayerRow;

/// `flychess charles train`: Charles of the size asked for, trained (or resumed) with a bar and
/// its VAL checks printed above it.
fn train(args: &TrainArgs, data: &Path) -> Result<()> {
    let Some(config) = flychess_charles::CharlesConfig::parse(&args.size) else {
        return Err(anyhow!("unknown size {:?}: small, seed or tiny", args.size));
    };
    let options = TrainOptions {
        config,
        positions: args.positions,
        epochs: args.epochs,
        batch: args.batch,
        learning_rate: args.lr,
        val: args.val,
        val_every: args.val_every,
        ..Default::default()
    };
    let (name, on, json) = (args.name.as_str(), FitOn::from(args.fit_on), args.json);
    flychess_fly::fly::check_name(name)?;
    let dataset = Dataset::load(&shipped_path())?;
    let files = RunFiles::of(data, name);
    let params = Charles::new(&options.config, &on.device()?).parameters();
    eprintln!(
        "Charles {name}: {params} parameters ({:?}), {} TRAIN positions × {} epochs, batch {}, on {}",
        options.config,
        options.positions,
        options.epochs,
        options.batch,
        on.describe()?
    );
    let bar = ProgressBar::new(options.steps() as u64);
    bar.set_style(
        ProgressStyle::with_template("charles [{bar:40}] step {pos}/{len} {per_sec} eta {eta} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    if let Some(s) = files.read_state().filter(|s| s.options == options) {
        bar.set_position(s.step as u64);
    }
    let state = run::train(
        &files,
        &dataset,
        &options,
        on,
        &|p, s| {
            bar.set_position(s.step as u64);
            bar.set_message(format!("VAL loss {:.3}, top-1 {:.1} %", p.val_loss, 100.0 * p.val_top1));
            bar.suspend(|| {
                eprintln!(
                    "  step {:>6}: train loss {:.3}, VAL loss {:.3}, top-1 {:.1} % ({:.0} s)",
                    p.step,
                    p.train_loss,
                    p.val_loss,
                    100.0 * p.val_top1,
                    p.seconds
                )
            });
        },
        &|| false,
    )?;
    bar.finish_and_clear();
    let speed = state.curve.last().map(|p| p.positions as f64 / p.seconds.max(1e-9)).unwrap_or(0.0);
    let report = serde_json::json!({ "name": name, "parameters": state.parameters, "options": state.options, "steps": state.step, "seconds": state.seconds, "training_positions_per_second": speed, "curve": state.curve, "finished": state.finished });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        eprintln!("{}: {} steps in {:.0} s ({speed:.1} positions/s)", files.dir.display(), state.step, state.seconds);
    }
    Ok(())
}

/// `flychess eval --player charles [--charles NAME]`: HOLD top-1, good move and loss with 95 %
/// intervals, the blind baseline beside (fitted on the same TRAIN positions as Charles), and one
/// move's inference time.
pub fn eval(which: &crate::cli::options::WhichBrain, data: &Path, name: &str, fit: &FitOptions, json: bool) -> Result<()> {
    let dataset = Dataset::load(&shipped_path())?;
    // The user's run of that name, else the shipped one.
    let files = flychess_charles::player::find(name, data)?;
    let device = FitOn::Cpu.device()?;
    let (model, state) = run::load(&files, &device).map_err(|e| anyhow!("{e} (train one with `flychess charles train --name {name}`)"))?;
    let id = flychess_charles::player::content_id(&files, &state)?;
    let hold: Vec<run::Prepared> = dataset.hold().iter().map(run::prepare).collect::<flychess_charles::Result<_>>()?;
    let started = Instant::now();
    let charles = run::evaluate(&model, &hold, 64, &device)?;
    let eval_seconds = started.elapsed().as_secs_f64();
    // One move, as in play: a single position's think, timed over a few positions.
    let started = Instant::now();
    for p in hold.iter().take(16) {
        run::probabilities(&model, &p.position, &device)?;
    }
    let move_ms = started.elapsed().as_secs_f64() * 1000.0 / 16.0;
    // The blind baseline: move popularity only, fitted on the TRAIN positions Charles saw.
    let train_rows = &dataset.train()[..state.options.positions.min(dataset.train().len())];
    let (train_t, val_t, hold_t) =
        (crate::cli::fly::targets(train_rows)?, crate::cli::fly::targets(dataset.val())?, crate::cli::fly::targets(dataset.hold())?);
    let (blind, _) = crate::cli::fly::fit_logged("blind", fit, &Readout::newborn(0, vec![], 1), (&[], &train_t), (&[], &val_t))?;
    // Charles has no value head: every loss in this report is the policy loss (cross-entropy).
    let blind = policy_only(&outcomes(&blind, &[], &hold_t));
    let hits = |o: &[flychess_fly::scoring::PositionOutcome], good: bool| {
        o.iter().map(|x| if good { x.good } else { x.top1 }).collect::<Vec<bool>>()
    };
    let (c, b) = (summarise(&charles), summarise(&blind));
    let row = |o: &[flychess_fly::scoring::PositionOutcome]| {
        let (t, g) = (stats::rate_of(&hits(o, false)), stats::rate_of(&hits(o, true)));
        let l = stats::mean(&o.iter().map(|x| x.loss).collect::<Vec<_>>());
        serde_json::json!({"top1": t.value, "top1_interval": [t.low, t.high], "good": g.value, "good_interval": [g.low, g.high], "loss": l.value, "loss_interval": [l.low, l.high]})
    };
    // The brain's own fly on the same HOLD positions (its descending neurons cached once), so
    // the table has "fly − this" for Charles as for every control.
    let fly = fly_on_hold(which, data, &dataset)?.map(|(n, o)| (n, policy_only(&o)));
    let mut players = Vec::new();
    if let Some((fly_name, fly_o)) = &fly {
        players =
            vec![PlayerRow::of("fly", fly_o, fly_o), PlayerRow::of("charles", &charles, fly_o), PlayerRow::of("blind", &blind, fly_o)];
        if !json {
            println!("the fly {fly_name} beside Charles on the same HOLD positions (fly − this, paired):");
            for p in &players {
                println!("{}", p.line());
            }
        }
    }
    let minus_top1 = stats::paired_difference(&hits(&charles, false), &hits(&blind, false));
    let minus_good = stats::paired_difference(&hits(&charles, true), &hits(&blind, true));
    let report = serde_json::json!({
        "player": "charles", "name": name, "id": id, "run": files.dir.display().to_string(), "finished": state.finished, "parameters": state.parameters, "config": state.options.config,
        "train_positions": train_rows.len(), "training_seconds": state.seconds, "hold_positions": hold.len(),
        "charles": row(&charles), "blind": row(&blind),
        "top1": c.top1, "good": c.good, "loss": c.loss, "blind_top1": b.top1, "blind_good": b.good, "blind_loss": b.policy_loss,
        "charles_minus_blind_top1": minus_top1, "charles_minus_blind_good": minus_good,
        "note": "Charles has no value head: every loss in this report (Charles's, the blind baseline's, the fly's) is the policy loss, the cross-entropy alone.",
        "move_ms": move_ms, "hold_seconds": eval_seconds,
        "fly": fly.as_ref().map(|(n, _)| n.clone()),
        "players": players.iter().map(PlayerRow::json).collect::<Vec<_>>(),
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "Charles {name} ({} parameters, {} TRAIN positions, {:.0} s of training) on {} HOLD positions:",
            state.parameters,
            train_rows.len(),
            state.seconds,
            hold.len()
        );
        println!(
            "  charles  top-1 {}  good {}  loss {:.3}",
            stats::rate_of(&hits(&charles, false)).percent(),
            stats::rate_of(&hits(&charles, true)).percent(),
            c.loss
        );
        println!(
            "  blind    top-1 {}  good {}  loss {:.3}",
            stats::rate_of(&hits(&blind, false)).percent(),
            stats::rate_of(&hits(&blind, true)).percent(),
            b.policy_loss
        );
        println!("  charles − blind: top-1 {}, good {}; one move {move_ms:.1} ms", minus_top1.points(), minus_good.points());
    }
    Ok(())
}

/// Outcomes whose `loss` is their policy loss alone: what Charles (no value head) is compared on.
fn policy_only(outcomes: &[PositionOutcome]) -> Vec<PositionOutcome> {
    outcomes.iter().map(|o| PositionOutcome { loss: o.policy_loss, ..*o }).collect()
}

/// The trained fly of the brain asked for (its own shipped one first) on HOLD: its name and
/// outcomes, from the brain's descending-neuron cache (filled for HOLD on first use). None when
/// the brain has no trained fly.
fn fly_on_hold(which: &crate::cli::options::WhichBrain, data: &Path, dataset: &Dataset) -> Result<Option<(String, Vec<PositionOutcome>)>> {
    use flychess_fly::fly::{self, Fly};
    let spec = which.spec(data)?;
    let loaded = flychess_brain::store::ensure(&spec, data, &|_, _| {})?;
    let Some((name, path)) = fly::trained_for(&loaded.checksum, data) else { return Ok(None) };
    let f = Fly::load(&path)?;
    let hold = flychess_fly::data::HOLD;
    let (cache, _) = crate::cli::cache::cache(which, data, Some(hold), None, flychess_brain::brain::simulator::EngineChoice::Auto)?;
    let x = cache.read(0..hold, f.meta.reading)?;
    let t = crate::cli::fly::targets(&dataset.rows[..hold])?;
    Ok(Some((name, outcomes(&f.readout, &x, &t))))
}

#[derive(Subcommand)]
pub enum CharlesCommand {
    /// Train Charles (resumable: the same name and options go on from the last checkpoint) into
    /// DATA/charles/NAME/.
    Train(TrainArgs),
}

/// Runs a `flychess charles …` subcommand.
pub fn run(cmd: CharlesCommand, data: &Path) -> Result<()> {
    match cmd {
        CharlesCommand::Train(args) => train(&args, data),
    }
}

// The arguments of `flychess charles train` (its help text is the subcommand's doc comment in `CharlesCommand`).
#[derive(Args)]
pub struct TrainArgs {
    #[arg(long, default_value = "charles")]
    pub name: String,
    /// small (the shipped size), seed (the seed's 32.5 M parameters) or tiny (a test size:
    /// seconds to train, no player).
    #[arg(long, default_value = "small")]
    pub size: String,
    /// TRAIN positions used.
    #[arg(long, default_value_t = 16_384)]
    pub positions: usize,
    #[arg(long, default_value_t = 1)]
    pub epochs: usize,
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// AdamW's peak step (warm-up, then cosine to a tenth).
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// VAL positions measured at each checkpoint.
    #[arg(long, default_value_t = 512)]
    pub val: usize,
    /// Steps between VAL checks and checkpoints.
    #[arg(long, default_value_t = 128)]
    pub val_every: usize,
    #[arg(long, value_enum, default_value_t = FitOnArg::Cpu)]
    pub fit_on: FitOnArg,
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_compares_policy_losses_only() {
        // A fly or blind outcome carries a total loss (policy + value) beside its policy loss;
        // beside Charles (policy only) its row must show the policy loss.
        let with_value = [PositionOutcome { loss: 3.5, policy_loss: 3.0, top1: true, good: true }; 4];
        let charles = [PositionOutcome { loss: 2.9, policy_loss: 2.9, top1: false, good: true }; 4];
        let fly = policy_only(&with_value);
        let rows = [PlayerRow::of("fly", &fly, &fly), PlayerRow::of("charles", &charles, &fly)];
        assert_eq!(rows[0].json()["loss"], serde_json::json!(3.0), "the fly's policy loss, not its total 3.5");
        assert_eq!(rows[1].json()["loss"], serde_json::json!(2.9));
    }
}
