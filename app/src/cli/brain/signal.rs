//! What a brain does with positions, as commands: `flychess brain signal` (how much the board
//! moves each region's rates, step by step, on 48 real positions) and `flychess brain think`
//! (the 12 steps of rates for positions on the CPU engine, written as a long Feather table).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;

use flychess_brain::brain::{STEPS, signal as region_signal};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::{Planes, planes, sample_positions};
use flychess_brain::connectome::rules::Region;

use crate::cli::options::WhichBrain;
use crate::cli::options::ready;

// The arguments of `flychess brain signal` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct SignalArgs {
    #[command(flatten)]
    pub which: WhichBrain,
    #[arg(long)]
    pub json: bool,
    /// Measure homeostasis with "calm unreached" (σ = 1 where the input never moves).
    #[arg(long)]
    pub calm_unreached: bool,
}

// The arguments of `flychess brain think` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct ThinkArgs {
    #[command(flatten)]
    pub which: WhichBrain,
    /// A position (FEN); give --fen again for more.
    #[arg(long = "fen", required = true)]
    pub fens: Vec<String>,
    /// The steps, 1-based and comma-separated (default: all 12).
    #[arg(long, value_delimiter = ',')]
    pub steps: Vec<usize>,
    /// Only these neurons, by index, comma-separated (default: all; only the rows they
    /// depend on are worked out).
    #[arg(long, value_delimiter = ',')]
    pub neurons: Vec<u32>,
    /// The Feather file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// `flychess brain signal`: the standard deviation of each region's rates across 48 real
/// positions at every step (text or JSON).
pub fn signal(args: &SignalArgs, data: &Path) -> Result<()> {
    let spec = args.which.spec(data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions { calm_unreached: args.calm_unreached })?;
    let boards: Vec<Planes> = sample_positions().iter().skip(256).take(48).map(planes).collect();
    let by_region = region_signal::by_region(&brain, &loaded.connectome.neurons.region, &boards);
    if args.json {
        let regions: serde_json::Map<String, serde_json::Value> =
            Region::ALL.iter().map(|r| (r.name().to_string(), serde_json::json!(by_region[*r as usize].to_vec()))).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "brain": loaded.connectome.provenance.label(),
                "positions": boards.len(),
                "steps": (1..=STEPS).collect::<Vec<_>>(),
                "measure": "mean over a region's neurons of the standard deviation of rates across the positions",
                "regions": regions,
            }))?
        );
    } else {
        println!(
            "{}: how much the board moves each region (std of rates across {} positions)",
            loaded.connectome.provenance.label(),
            boards.len()
        );
        print!("  {:20}", "step");
        for t in 1..=STEPS {
            print!("{t:>7}");
        }
        println!();
        for r in Region::ALL {
            print!("  {:20}", r.name());
            for v in by_region[r as usize] {
                print!("{v:>7.3}");
            }
            println!();
        }
    }
    Ok(())
}

/// `flychess brain think`: the rates of `--fen`s at `--steps` (1-based; none: all) of `--neurons`
/// (none: all) on the CPU engine, written to `--out` as a long Feather table.
pub fn think(args: &ThinkArgs, data: &Path) -> Result<()> {
    let spec = args.which.spec(data)?;
    let ThinkArgs { fens, steps, neurons, out, .. } = args;
    let boards: Vec<Planes> =
        fens.iter().map(|f| flychess_brain::chess::position_from_fen(f).map(|p| planes(&p))).collect::<flychess_brain::Result<_>>()?;
    if let Some(s) = steps.iter().find(|&&s| !(1..=STEPS).contains(&s)) {
        return Err(anyhow!("step {s} is not one of 1 to {STEPS}"));
    }
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    let steps: Vec<usize> = if steps.is_empty() { (0..STEPS).collect() } else { steps.iter().map(|s| s - 1).collect() };
    let neurons: Vec<u32> = if neurons.is_empty() { (0..brain.neurons as u32).collect() } else { neurons.to_vec() };
    let started = Instant::now();
    let rates = flychess_brain::brain::simulator::read_on_cpu(&brain, &boards, &neurons, &steps)?;
    let seconds = started.elapsed().as_secs_f64();
    flychess_brain::connectome::feather::write_rates(out, &rates, boards.len(), &steps, &neurons, &loaded.connectome.neurons.body_id)?;
    println!(
        "{}: {} positions × {} steps × {} neurons thought in {seconds:.3} s ({:.1} positions/s), written to {}",
        loaded.connectome.provenance.label(),
        boards.len(),
        steps.len(),
        neurons.len(),
        boards.len() as f64 / seconds.max(1e-9),
        out.display()
    );
    Ok(())
}
