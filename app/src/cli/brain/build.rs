//! `flychess brain build` (a brain built from its tables, even where an up-to-date file exists)
//! and `flychess brain generate` (the synthetic stand-in's three tables, in the release's schema).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Result;
use clap::Args;

use flychess_brain::connectome::{brain_file, synthetic};
use flychess_brain::store;

use crate::cli::options::WhichBrain;

// The arguments of `flychess brain build` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess brain generate` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct GenerateArgs {
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, default_value_t = flychess_brain::connectome::synthetic::DEFAULT_SEED)]
    pub seed: u64,
}

/// Runs `flychess brain build`: the brain's file written afresh, its size and checksum printed.
pub fn build(args: &BuildArgs, data: &Path) -> Result<()> {
    let spec = args.which.spec(data)?;
    let bar = crate::cli::options::stage_bar();
    let started = Instant::now();
    let key = spec.inputs_key(data)?;
    let c = store::build_spec(&spec, data, key, &|stage, f| {
        bar.set_message(stage.to_string());
        bar.set_position((f * 1000.0) as u64);
    })?;
    let path = spec.brain_path(data);
    let checksum = brain_file::save(&c, &path)?;
    bar.finish_and_clear();
    println!(
        "built {} in {:.1} s: {} neurons, {} connections\n  file {}\n  sha256 {checksum}",
        c.provenance.label(),
        started.elapsed().as_secs_f64(),
        c.neurons.len(),
        c.inputs.len(),
        path.display()
    );
    Ok(())
}

/// Runs `flychess brain generate`: the stand-in's tables written into `--out`.
pub fn generate(args: &GenerateArgs) -> Result<()> {
    let seed = args.seed;
    let bar = crate::cli::options::stage_bar();
    let started = Instant::now();
    let g = synthetic::generate(&args.out, seed, &|stage, f| {
        bar.set_message(stage.to_string());
        bar.set_position((f * 1000.0) as u64);
    })?;
    bar.finish_and_clear();
    println!(
        "wrote the synthetic stand-in (seed {seed}) in {:.1} s: {} annotation rows, {} weight rows\n  {}\n  {}\n  {}",
        started.elapsed().as_secs_f64(),
        g.annotation_rows,
        g.weight_rows,
        g.paths.annotations.display(),
        g.paths.transmitters.display(),
        g.paths.weights.display()
    );
    Ok(())
}
