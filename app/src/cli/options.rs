//! The options several command families share: which brain a command works on (`WhichBrain`:
//! FlyWire v783, the stand-in or MaleCNS, a tables folder, a seed; turned into a `BrainSpec` by
//! `WhichBrain::spec` and loaded or built with its homeostasis behind a progress bar by `ready`), which engine thinks
//! (`EngineArgs`), how a readout is fitted (`FitArgs`), and UCI engines of the user's as players
//! (`UciEnginesArgs`).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::brain::Brain;
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::connectome::Control;
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::connectome::rules::Region;
use flychess_brain::store::{self, BrainSpec, Tables};

/// How readouts are fitted (SPEC §5 defaults).
#[derive(Args, Clone, Debug)]
pub struct FitArgs {
    /// Positions per Adam step.
    #[arg(long, default_value_t = 8_192)]
    pub batch: usize,
    /// Adam's step size.
    #[arg(long, default_value_t = 2e-3)]
    pub lr: f32,
    /// Most passes over TRAIN.
    #[arg(long, default_value_t = 60)]
    pub passes: usize,
    /// Where the fit runs: a hardware GPU when there is one (auto), the CPU, or the best GPU
    /// adapter even a software one (gpu).
    #[arg(long, value_enum, default_value_t = FitOnArg::Auto)]
    pub fit_on: FitOnArg,
}

/// Where the brain thinks in a headless job.
#[derive(Args, Clone, Copy, Debug)]
pub struct EngineArgs {
    /// The GPU engine on a hardware GPU when there is one (auto), the CPU engine, or the GPU engine
    /// on the best adapter even a software one (gpu).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum EngineArg {
    Auto,
    Cpu,
    Gpu,
}

impl EngineArgs {
    pub fn choice(&self) -> flychess_brain::brain::simulator::EngineChoice {
        use flychess_brain::brain::simulator::EngineChoice;
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

impl From<FitOnArg> for flychess_learning::burn_device::FitOn {
    fn from(a: FitOnArg) -> Self {
        use flychess_learning::burn_device::FitOn;
        match a {
            FitOnArg::Auto => FitOn::Auto,
            FitOnArg::Cpu => FitOn::Cpu,
            FitOnArg::Gpu => FitOn::Gpu,
        }
    }
}

impl FitArgs {
    pub fn options(&self) -> flychess_learning::train::FitOptions {
        flychess_learning::train::FitOptions {
            batch: self.batch,
            learning_rate: self.lr,
            max_passes: self.passes,
            on: self.fit_on.into(),
            ..Default::default()
        }
    }
}

/// Which brain a command means.
#[derive(Args, Clone, Debug)]
pub struct WhichBrain {
    /// Which brain: flywire783 (real FlyWire v783 wiring, the default), standin (the synthetic
    /// stand-in), malecns (the MaleCNS release; needs --tables or `brain download`).
    /// (`train --brain` with no value: the default brain, and it learns too.)
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "itself", default_value_t = BrainKind::Flywire783)]
    pub brain: BrainKind,
    /// The release tables' folder (FlyWire: the full release as downloaded; MaleCNS: its tables).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// Seed of the synthetic stand-in.
    #[arg(long, default_value_t = flychess_brain::connectome::synthetic::DEFAULT_SEED)]
    pub seed: u64,
    /// Control: hand out the receiving ends of all connections again (optional seed).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "SEED")]
    pub shuffle_wiring: Option<u64>,
    /// Control: drop every connection sent from this region (repeatable), e.g. "optic lobe".
    #[arg(long, value_name = "REGION")]
    pub lesion: Vec<String>,
}

impl WhichBrain {
    /// The brain the command line names: its tables and its control (refused where they do not go
    /// together, or where `--brain` was given without a value outside `train`).
    pub fn spec(&self, data: &Path) -> Result<BrainSpec> {
        let tables = match (self.brain, &self.tables) {
            (BrainKind::Flywire783, dir) => Tables::FlyWire { dir: dir.clone() },
            (BrainKind::Standin, None) => Tables::Synthetic { seed: self.seed },
            (BrainKind::Standin, Some(_)) => {
                return Err(anyhow!("the stand-in is generated from --seed; --tables is for flywire783 or malecns"));
            }
            (BrainKind::Malecns, Some(dir)) => Tables::Release { dir: dir.clone() },
            (BrainKind::Malecns, None) => Tables::Release { dir: store::malecns_dir(data) },
            (BrainKind::Itself, _) => {
                return Err(anyhow!("--brain needs a value here: flywire783, standin or malecns (only `train --brain` takes none)"));
            }
        };
        let control = match (self.shuffle_wiring, self.lesion.is_empty()) {
            (Some(_), false) => return Err(anyhow!("choose one control: --shuffle-wiring or --lesion")),
            (Some(seed), true) => Control::ShuffledWiring { seed },
            (None, false) => {
                let mut regions = Vec::new();
                for name in &self.lesion {
                    let r = Region::parse(name).ok_or_else(|| {
                        let all: Vec<&str> = Region::ALL.iter().map(|r| r.name()).collect();
                        anyhow!("unknown region {name:?}; the regions are: {}", all.join(", "))
                    })?;
                    if !regions.contains(&r) {
                        regions.push(r);
                    }
                }
                regions.sort();
                Control::Lesion { regions }
            }
            (None, true) => Control::None,
        };
        Ok(BrainSpec { tables, control })
    }
}

/// A progress bar that shows the current stage; the same closure feeds `sim`'s progress.
pub fn stage_bar() -> ProgressBar {
    let bar = ProgressBar::new(1000);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:28} [{bar:40}] {percent:>3}% {elapsed}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// Loads (or builds) a brain and its homeostasis with a progress bar.
pub fn ready(spec: &BrainSpec, data: &Path, options: CalibrationOptions) -> Result<(Loaded, Brain)> {
    let bar = stage_bar();
    let r = store::ready_brain(spec, data, options, &|stage, f| {
        bar.set_message(stage.to_string());
        bar.set_position((f * 1000.0) as u64);
    });
    bar.finish_and_clear();
    Ok(r?)
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

/// UCI engines of the user's as players on the ladder and in duels.
#[derive(Args, Clone, Debug, Default)]
pub struct UciEnginesArgs {
    /// A UCI engine as a player called NAME: NAME=PATH (repeat for more). Its games are kept under
    /// what it calls itself (`id name`) and its options; it thinks 100 ms a move.
    #[arg(long = "uci", value_name = "NAME=PATH")]
    pub uci: Vec<String>,
    /// An option for the engine NAME: NAME:KEY=VALUE (repeat for more; set in order after one
    /// thread and a 16 MB hash).
    #[arg(long = "uci-option", value_name = "NAME:KEY=VALUE")]
    pub uci_option: Vec<String>,
}

impl UciEnginesArgs {
    /// The engines named, each started once to read its `id name`.
    pub fn entrants(&self) -> anyhow::Result<Vec<flychess_arena::players::Entrant>> {
        let mut options: Vec<(String, String, String)> = Vec::new();
        for o in &self.uci_option {
            let (name, kv) = o.split_once(':').ok_or_else(|| anyhow::anyhow!("--uci-option {o}: expected NAME:KEY=VALUE"))?;
            let (k, v) = kv.split_once('=').ok_or_else(|| anyhow::anyhow!("--uci-option {o}: expected NAME:KEY=VALUE"))?;
            if !self.uci.iter().any(|u| u.split_once('=').is_some_and(|(n, _)| n == name)) {
                return Err(anyhow::anyhow!("--uci-option {o}: no --uci {name}=PATH"));
            }
            options.push((name.to_string(), k.trim().to_string(), v.trim().to_string()));
        }
        let mut out = Vec::new();
        for u in &self.uci {
            let (name, path) = u.split_once('=').ok_or_else(|| anyhow::anyhow!("--uci {u}: expected NAME=PATH"))?;
            let mine = options.iter().filter(|(n, _, _)| n == name).map(|(_, k, v)| (k.clone(), v.clone())).collect();
            let entrant = flychess_arena::players::Entrant::uci(name, std::path::Path::new(path), mine)
                .map_err(|e| anyhow::anyhow!("--uci {name}: {e}"))?;
            out.push(entrant);
        }
        Ok(out)
    }
}
