//! The `flychess brain …` family: `BrainCommand`, whose subcommands live beside this file: `info` (the summary), `build` (building a brain, generating the stand-in's tables),
//! `download` (the releases) and `signal` (what the board does to each region, a think's rates
//! as a Feather table).

mod build;
mod download;
mod info;
mod signal;

use std::path::Path;

use anyhow::Result;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum BrainCommand {
    /// Summary of a brain (building it first when needed).
    Info(info::InfoArgs),
    /// Build a brain from its tables, even when an up-to-date file exists.
    Build(build::BuildArgs),
    /// Download a release's tables (resumable; checked): MaleCNS v1.0 (size and sha256 pinned) or
    /// the full FlyWire v783 (checked against what Zenodo and the Codex bucket state).
    Download(download::DownloadArgs),
    /// How much the board changes each region's rates, step by step, on 48 real positions.
    Signal(signal::SignalArgs),
    /// The 12 steps of rates for positions, as a long Feather table (position, step, neuron,
    /// root_id, rate: one row each), on the CPU engine: what `import flychess`'s
    /// `export_think` writes (the same floats, bit for bit).
    Think(signal::ThinkArgs),
    /// Write the synthetic stand-in's three tables (the release's schema) into a folder.
    Generate(build::GenerateArgs),
}

/// Runs a `flychess brain …` subcommand.
pub fn run(cmd: BrainCommand, data: &Path) -> Result<()> {
    match cmd {
        BrainCommand::Info(args) => info::run(&args, data),
        BrainCommand::Build(args) => build::build(&args, data),
        BrainCommand::Download(args) => download::run(&args, data),
        BrainCommand::Signal(args) => signal::signal(&args, data),
        BrainCommand::Think(args) => signal::think(&args, data),
        BrainCommand::Generate(args) => build::generate(&args),
    }
}
