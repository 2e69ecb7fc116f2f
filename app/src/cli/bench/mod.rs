//! `flychess bench`: how fast the brain thinks. The engine bench (`engines`) times the CPU engine
//! batch by batch (`cpu`), the GPU engine on the best adapter (`gpu`), the engine's shortcuts and
//! layouts against this machine's limits, a fly's move in play (`fly_move`) and, asked for, the
//! scipy reference (`reference`), and prints the report as JSON or text (`text`); `--fit` times
//! the readout fit instead (`fit`), `--render` the brain view's frames (`render`).

mod cpu;
mod fit;
mod fly_move;
mod gpu;
mod reference;
mod render;
mod text;

use std::path::Path;

use anyhow::{Result, anyhow};
use clap::Args;

use flychess_brain::brain::cpu as cpu_engine;
use flychess_brain::calibrate::CalibrationOptions;

use crate::cli::memory::peak_memory_mb;
use crate::cli::options::WhichBrain;
use crate::cli::options::ready;

// The arguments of `flychess bench` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct BenchArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 8, 32, 128])]
    pub batches: Vec<usize>,
    /// Also run the same 12 steps with scipy.sparse (tools/reference_scipy.py, in its own venv
    /// in the data folder), check both give the same rates, and print the speed ratio.
    #[arg(long)]
    pub reference: bool,
    /// Measure the brain view instead: the frame time of the full point cloud at 1280×800.
    #[arg(long)]
    pub render: bool,
    /// Measure the readout fit instead: a pass of the new fit (two GEMMs a batch) and of the old
    /// one (burn's autodiff) over the same cached TRAIN rows, timed in alternation, with the
    /// machine's FMA peak measured in the same run.
    #[arg(long, conflicts_with = "render")]
    pub fit: bool,
    /// With --fit: TRAIN positions a pass goes over (their DN rates cached first if missing). The
    /// default, 8 batches a pass, keeps the first batch after the other fit's pass (caches and
    /// threads cold) a small part of what is timed, as it is in a real pass of 146 batches.
    #[arg(long, default_value_t = 65_536, requires = "fit")]
    pub fit_positions: usize,
    /// With --fit: passes timed of each fit (alternating old, new, old, new, …).
    #[arg(long, default_value_t = 3, requires = "fit")]
    pub fit_passes: usize,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Runs `flychess bench`: the brain view's frames with --render, the readout fit with --fit,
/// else the engines.
pub fn run(args: &BenchArgs, data: &Path) -> Result<()> {
    if args.render {
        render::run(args, data)
    } else if args.fit {
        fit::run(args, data)
    } else {
        engines(args, data)
    }
}

/// The engine bench: every measurement in one report, printed as JSON or text; a GPU row whose
/// rates are not the CPU engine's fails the command once the figures are out.
fn engines(args: &BenchArgs, data: &Path) -> Result<()> {
    let batches = &args.batches;
    let spec = args.which.spec(data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    if let Some(&bad) = batches.iter().find(|&&b| b == 0) {
        return Err(anyhow!("batch {bad}: a batch holds at least one position"));
    }
    let largest = batches.iter().copied().max().unwrap_or(1);
    let boards = cpu::bench_boards(largest)?;
    let descending = &loaded.connectome.groups.descending;
    let rows = cpu::rows(&brain, &boards, batches)?;
    let one_position_ms = rows.iter().find(|r| r["batch"] == 1).map(|r| r["ms_per_position"].clone());
    let shortcut = cpu::shortcut_report(&brain, &boards[..1], descending);
    let memory = cpu::memory_report(&brain, &boards[..32.min(boards.len())]);
    let gpu = gpu::gpu_report(&brain, descending, &boards, batches)?;
    let reference = if args.reference {
        Some(reference::scipy_reference(&brain, &boards[..32], &loaded.connectome.neurons.region, data)?)
    } else {
        None
    };
    let engine =
        cpu::engine_report(&brain, &boards, descending, &batches.iter().copied().filter(|&b| b <= boards.len()).collect::<Vec<_>>())?;
    // A fly's move and imagination in the plain layout, then in the fast one (every think of the
    // process uses the layout set).
    cpu_engine::use_layout(cpu_engine::Layout::PLAIN);
    let fly_move_plain = fly_move::fly_move_timing(&brain, &loaded, data);
    cpu_engine::use_layout(cpu_engine::Layout::FAST);
    let fly_move = fly_move::fly_move_timing(&brain, &loaded, data)?;
    let fly_move_plain = fly_move_plain?;
    let report = serde_json::json!({
        "reference": reference,
        "brain": loaded.connectome.provenance.label(),
        "neurons": brain.neurons,
        "connections": brain.connections(),
        "threads": rayon::current_num_threads(),
        "gpu": gpu,
        "runs": rows,
        "one_position_ms": one_position_ms,
        "blank_shortcut": shortcut,
        "memory": memory,
        "fly_move": fly_move,
        "fly_move_plain_layout": fly_move_plain,
        "engine": engine,
        "peak_memory_mb": peak_memory_mb(),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        text::print(&report, &rows, &brain);
    }
    // The figures are out; a GPU whose rates are not the CPU engine's still fails the command.
    let failed = report["gpu"]["runs"].as_array().map_or(0, |runs| runs.iter().filter(|r| r["failed"].is_string()).count());
    if failed > 0 {
        return Err(anyhow!("{failed} GPU row(s) failed their check against the CPU engine (see the rows above)"));
    }
    Ok(())
}
