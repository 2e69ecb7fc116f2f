//! `flychess brain download`: a release's tables fetched (resumable, checked) with a bar of
//! bytes: MaleCNS v1.0 (size and sha256 pinned) or the full FlyWire v783 (checked against what
//! Zenodo and the Codex bucket state, its licence written beside).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::connectome::download::Outcome;
use flychess_brain::connectome::release;
use flychess_brain::store;

use crate::cli::options::Release;

// The arguments of `flychess brain download` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct DownloadArgs {
    /// Which release: malecns or flywire783.
    #[arg(long, value_enum, default_value_t = Release::Malecns)]
    pub release: Release,
    /// Where to put them. Default: DATA/connectome/malecns-v1.0 or DATA/connectome/flywire783.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// MaleCNS: base address of the tables (a mirror, or a local server in tests).
    #[arg(long, default_value = flychess_brain::connectome::release::BASE_URL)]
    pub base_url: String,
    /// FlyWire: the Zenodo record's API address (its file list with sizes and md5 sums).
    #[arg(long, default_value = flychess_brain::connectome::flywire_release::ZENODO_RECORD)]
    pub record_url: String,
    /// FlyWire: the Codex bucket holding the classification and neuron tables.
    #[arg(long, default_value = flychess_brain::connectome::flywire_release::CODEX_BASE)]
    pub codex_url: String,
    /// Resume this many times after a dropped connection.
    #[arg(long, default_value_t = 8)]
    pub attempts: u32,
}

/// Runs `flychess brain download`: the release asked for, into `--dir` or its place in DATA.
pub fn run(args: &DownloadArgs, data: &Path) -> Result<()> {
    match args.release {
        Release::Malecns => {
            let dir = args.dir.clone().unwrap_or_else(|| store::malecns_dir(data));
            malecns(&dir, &args.base_url, args.attempts)
        }
        Release::Flywire783 => {
            let dir = args.dir.clone().unwrap_or_else(|| store::flywire_full_dir(data));
            flywire(&dir, &args.record_url, &args.codex_url, args.attempts)
        }
    }
}

/// The bar both release downloads draw: the file, its bytes, speed and time left.
fn download_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg:50} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// A download's progress on `download_bar`.
fn show_bytes(bar: &ProgressBar, file: &str, done: u64, total: Option<u64>) {
    bar.set_message(file.to_string());
    if let Some(t) = total {
        bar.set_length(t);
    }
    bar.set_position(done);
}

/// MaleCNS v1.0's tables from `base_url` into `dir`, each checked against its pinned size and sha256.
fn malecns(dir: &Path, base_url: &str, attempts: u32) -> Result<()> {
    let base = if base_url.ends_with('/') { base_url.to_string() } else { format!("{base_url}/") };
    println!("Downloading MaleCNS {} (Berg et al. 2026, CC BY 4.0) into {}", release::RELEASE, dir.display());
    let bar = download_bar();
    let outcomes = store::download_malecns(dir, &base, attempts, &|file, done, total| show_bytes(&bar, file, done, total));
    bar.finish_and_clear();
    for (file, outcome) in outcomes? {
        match outcome {
            Outcome::AlreadyThere => println!("  {file} already there, verified"),
            Outcome::Fetched { resumes: 0 } => println!("  {file} fetched and verified"),
            Outcome::Fetched { resumes } => println!("  {file} fetched and verified (resumed {resumes} times)"),
        }
    }
    println!("Build it with: flychess brain build --tables {}", dir.display());
    Ok(())
}

/// The full FlyWire v783 release into `dir`, each file checked against what the server states.
fn flywire(dir: &Path, record_url: &str, codex_url: &str, attempts: u32) -> Result<()> {
    use flychess_brain::connectome::flywire_release;
    println!("Downloading FlyWire v783 (the FlyWire Consortium, CC BY-NC 4.0) into {}", dir.display());
    let bar = download_bar();
    let outcomes =
        flywire_release::download(dir, record_url, codex_url, attempts, &|file, done, total| show_bytes(&bar, file, done, total));
    bar.finish_and_clear();
    for (file, outcome) in outcomes? {
        match outcome {
            Outcome::AlreadyThere => println!("  {file} already there, matches what the server states"),
            Outcome::Fetched { resumes } => println!("  {file} fetched, matches what the server states (resumed {resumes} times)"),
        }
    }
    std::fs::write(dir.join("LICENSE.md"), flywire_release::LICENCE)
        .with_context(|| format!("writing the licence into {}", dir.display()))?;
    println!("Build it with: flychess brain build --brain flywire783 --tables {}", dir.display());
    Ok(())
}
