//! The views a teacher and a researcher reach for, as commands (issue 19): `flychess explain`
//! (what the fly looks at: each piece taken off the board in turn), `flychess probe` (what each
//! region's rates know about the board, linear probes scored on HOLD), `flychess doing` (how a
//! fly is doing on HOLD by the piece Stockfish moves and by game phase), `flychess eye` (how a
//! position lands on the photoreceptors) and `flychess learn` (a run's snapshots answering one
//! position), and `flychess figure` (the 12 steps at once as a 4K PNG and the replay as a GIF,
//! drawn offscreen without a window). The window shows the same figures from the same functions.

use crate::cli::options::WhichBrain;
use clap::Args;
use std::path::Path;
use std::path::PathBuf;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::probe::{self, ProbeOptions};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::position_from_fen;
use flychess_fly::data::{Dataset, HOLD, shipped_path};
use flychess_fly::fly::{self, Fly};

/// The fly named, else the brain's own trained fly; it must belong to `checksum`.
fn fly_for(name: Option<&str>, checksum: &str, data: &Path) -> Result<Fly> {
    let f = match name {
        Some(name) => Fly::load(&fly::find(name, data)?)?,
        None => {
            Fly::load(&fly::trained_for(checksum, data).ok_or_else(|| anyhow!("no trained fly for this brain; name one with --fly"))?.1)?
        }
    };
    if f.meta.brain_checksum != checksum {
        return Err(anyhow!("fly {} belongs to another brain ({})", f.meta.name, f.meta.brain));
    }
    Ok(f)
}

/// `flychess explain --fen FEN [--fly F] [--json]`.
pub fn explain(args: &ExplainArgs, data: &Path) -> Result<()> {
    let (which, fen, fly_name, json_out) = (&args.which, args.fen.as_str(), args.fly.as_deref(), args.json);
    let pos = position_from_fen(fen)?;
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let f = fly_for(fly_name, &loaded.checksum, data)?;
    let e = flychess_fly::explain::explain(&brain, &f.readout, &loaded.connectome.groups.descending, &pos)
        .ok_or_else(|| anyhow!("the position has no legal move"))?;
    if json_out {
        let mut v = serde_json::to_value(&e)?;
        v["fly"] = serde_json::json!(f.meta.name);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("fly {} plays {} ({:.1} %), value {:+.2}; without each piece:", f.meta.name, e.chosen_san, 100.0 * e.probability, e.value);
    let mut order: Vec<&flychess_fly::explain::PieceEffect> = e.pieces.iter().collect();
    order.sort_by(|a, b| a.change.total_cmp(&b.change));
    for p in order {
        println!(
            "  {:<3} {:<13} {:+6.2} points ({:.1} %), descending neurons moved {:.4} (largest {:.3})",
            p.square,
            p.piece,
            100.0 * p.change,
            100.0 * p.probability_without,
            p.descending_change,
            p.descending_largest
        );
    }
    Ok(())
}

/// `flychess probe [--train N] [--val N] [--hold N] [--neurons K] [--json]`: runs the probes (or
/// reads the report kept under the same key) and prints the best region and step of each.
pub fn probe(args: &ProbeArgs, data: &Path) -> Result<()> {
    let ProbeArgs { train, val, hold, neurons, json: json_out, ref which } = *args;
    let options = ProbeOptions { train, val, hold, per_region: neurons, ..Default::default() };
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let dataset = Dataset::load(&shipped_path())?;
    let homeostasis = flychess_brain::calibrate::fingerprint(brain.homeostasis());
    let key = probe::key(&loaded.checksum, &homeostasis, &dataset, &options);
    let report = match probe::load(data, &key) {
        Some(r) => {
            eprintln!("{}: kept from an earlier run", probe::report_path(data, &key).display());
            r
        }
        None => {
            let total = options.train + options.val + options.hold;
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template("probing [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            let r = probe::run(
                &brain,
                &loaded.connectome.neurons.region,
                &loaded.checksum,
                &homeostasis,
                &dataset,
                &options,
                &|done, _| bar.set_position(done as u64),
                &|| false,
            )?;
            bar.finish_and_clear();
            probe::save(data, &r)?;
            eprintln!("{} ({:.0} s)", probe::report_path(data, &key).display(), r.seconds);
            r
        }
    };
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "linear probes of {} on {} HOLD positions (fitted on {} TRAIN, strength chosen on {} VAL):",
        loaded.connectome.provenance.label(),
        report.options.hold,
        report.options.train,
        report.options.val
    );
    for (p, info) in report.probes.iter().enumerate() {
        let unit = if info.score == probe::Score::R2 { "R²" } else { "AUC" };
        let b = &report.board[p];
        print!("  {}: the board's 768 planes {unit} {:.3} [{:.3}, {:.3}]", info.name, b.hold.value, b.hold.low, b.hold.high);
        if let Some((region, step, c)) = report.best(p) {
            print!("; best region {region} at step {step}: {:.3} [{:.3}, {:.3}]", c.hold.value, c.hold.low, c.hold.high);
        }
        println!(" (chance {})", info.chance);
    }
    Ok(())
}

/// `flychess doing [--fly F] [--json]`: the fly's HOLD positions by the piece Stockfish moves and
/// by phase.
pub fn doing(args: &DoingArgs, data: &Path) -> Result<()> {
    let (which, fly_name, json_out) = (&args.which, args.fly.as_deref(), args.json);
    let dataset = Dataset::load(&shipped_path())?;
    let (cache, loaded) = crate::cli::cache::cache(which, data, Some(HOLD), None, flychess_brain::brain::simulator::EngineChoice::Auto)?;
    let f = fly_for(fly_name, &loaded.checksum, data)?;
    let rows = dataset.hold();
    let targets: Vec<flychess_fly::scoring::Target> =
        rows.iter().map(flychess_fly::scoring::Target::of).collect::<flychess_fly::Result<_>>()?;
    let x = cache.read(0..rows.len(), f.meta.reading)?;
    let b = flychess_arena::breakdown::breakdown(&f.readout, &x, rows, &targets)?;
    if json_out {
        let mut v = serde_json::to_value(&b)?;
        v["fly"] = serde_json::json!(f.meta.name);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "fly {} on {} HOLD positions: top-1 {}, same piece as Stockfish {}",
        f.meta.name,
        b.positions,
        b.top1.percent(),
        b.same_piece.percent()
    );
    for r in &b.by_piece {
        println!(
            "  Stockfish moves a {:<6} ({:>4} positions): top-1 {}, the fly moves the same piece {}",
            r.piece,
            r.positions,
            r.top1.percent(),
            r.same_piece.percent()
        );
    }
    for r in &b.by_phase {
        println!("  {:<10} ({:>4} positions): top-1 {}, good move {}", r.phase, r.positions, r.top1.percent(), r.good.percent());
    }
    Ok(())
}

/// `flychess eye --fen FEN [--json]`: each square's photoreceptors by role and those this board lights.
pub fn eye(args: &EyeArgs, data: &Path) -> Result<()> {
    let (which, fen, json_out) = (&args.which, args.fen.as_str(), args.json);
    let pos = position_from_fen(fen)?;
    let spec = which.spec(data)?;
    let (_, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let sight = flychess_brain::eye::sight(&brain.eye, &pos);
    if json_out {
        let squares: Vec<serde_json::Value> = sight
            .iter()
            .map(|s| {
                serde_json::json!({
                    "square": shakmaty::Square::new(u32::from(s.square)).to_string(),
                    "cells": s.total(), "lit": s.total_firing(),
                    "by_role": {
                        "pawn": s.cells[0], "knight": s.cells[1], "bishop": s.cells[2], "rook": s.cells[3], "queen": s.cells[4], "king": s.cells[5], "own": s.cells[6], "opponent": s.cells[7]
                    },
                    "lit_by_role": {
                        "pawn": s.firing[0], "knight": s.firing[1], "bishop": s.firing[2], "rook": s.firing[3], "queen": s.firing[4], "king": s.firing[5], "own": s.firing[6], "opponent": s.firing[7]
                    }
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"fen": fen, "squares": squares}))?);
        return Ok(());
    }
    println!("photoreceptors lit / placed, square by square (rank 8 at the top):");
    for rank in (0..8).rev() {
        let row: Vec<String> =
            (0..8).map(|file| sight[rank * 8 + file]).map(|s| format!("{:>3}/{:<3}", s.total_firing(), s.total())).collect();
        println!("  {} {}", rank + 1, row.join(" "));
    }
    Ok(())
}

/// `flychess learn --run NAME [--fen FEN] [--json]`: what each snapshot of a run answers.
pub fn learn(args: &LearnArgs, data: &Path) -> Result<()> {
    let (which, run, fen, json_out) = (&args.which, args.run.as_str(), args.fen.as_str(), args.json);
    position_from_fen(fen)?;
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let answers = flychess_learning::pipeline::answers_on(&brain, &loaded.connectome.groups.descending, &loaded.checksum, data, run, fen)?;
    if json_out {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"run": run, "fen": fen, "snapshots": answers}))?);
        return Ok(());
    }
    for a in &answers {
        let top: Vec<String> = a.moves.iter().take(5).map(|(san, p)| format!("{san} {:.1} %", 100.0 * p)).collect();
        println!(
            "  {:<16} value {:+.2}: {}",
            if a.pass == 0 { "newborn".to_string() } else { format!("after pass {}", a.pass) },
            a.value,
            top.join(", ")
        );
    }
    Ok(())
}

/// `flychess figure --fen FEN [--png FILE] [--gif FILE] [--white]`: the 12 steps of the brain's
/// think about FEN at once (3840 × 2160) and its replay (960 × 540), drawn offscreen on the best
/// wgpu adapter there is (lavapipe without a GPU), the camera as the window frames it.
pub fn figure(args: &FigureArgs, data: &Path) -> Result<()> {
    use flychess_lab::figure_job::{FigureJob, FigureKind, FigureLook, png_bytes};
    use flychess_render::cloud::{CloudGeometry, ColourMode};
    use std::sync::Arc;
    let (which, fen, fly_name, white) = (&args.which, args.fen.as_str(), args.fly.as_deref(), args.white);
    let (png, gif) = (args.png.as_deref(), args.gif.as_deref());
    if png.is_none() && gif.is_none() {
        return Err(anyhow!("say where to write: --png FILE and/or --gif FILE"));
    }
    let pos = position_from_fen(fen)?;
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, CalibrationOptions::default())?;
    let rates = flychess_brain::brain::cpu::think(&brain, &[flychess_brain::chess::planes(&pos)]);
    let blank = flychess_brain::brain::cpu::think(&brain, &[[[false; 64]; 12]]);
    let summary = flychess_lab::lab::think_summary::ThinkSummary::from_rates(&rates.data, &blank.data, rates.neurons, &loaded.connectome);
    let mover = if shakmaty::Position::turn(&pos) == shakmaty::Color::White { "White" } else { "Black" };
    // The title says what the fly plays when there is a fly for this brain.
    let plays = fly_for(fly_name, &loaded.checksum, data).ok().and_then(|f| {
        let d = flychess_fly::readout::descending_features(&rates, 0, &loaded.connectome.groups.descending, &f.readout.read_steps);
        let p = flychess_fly::readout::policy(&pos, &f.readout.heads(&d));
        let best = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]))?;
        Some(format!(
            ": fly {} plays {} ({:.0} %)",
            f.meta.name,
            shakmaty::san::San::from_move(&pos, p.moves[best]),
            100.0 * p.probability[best]
        ))
    });
    let regions: Vec<u8> = loaded.connectome.neurons.region.iter().map(|r| *r as u8).collect();
    let geometry = Arc::new(CloudGeometry::new(&loaded.connectome.neurons.soma_um, &regions));
    let mut camera = flychess_render::camera::OrbitCamera::framing(&geometry.placed().collect::<Vec<_>>());
    // Closer than the window's framing: a tile is wider than tall, like the brain.
    camera.zoom(0.8);
    let d = flychess_brain::brain::gpu::headless_device()?;
    eprintln!("drawing on {}", d.adapter_name);
    let job = FigureJob {
        device: d.device,
        queue: d.queue,
        marks: Arc::new(vec![0.0; geometry.neurons()]),
        geometry,
        rates: Arc::new(rates.data),
        look: FigureLook { camera, mode: ColourMode::Activity, white_background: white },
        title: format!(
            "The brain's 12 steps ({mover} to move){}. {}",
            plays.unwrap_or_default(),
            loaded.connectome.provenance.positions_label()
        ),
        captions: (0..flychess_brain::brain::STEPS).map(|k| summary.caption(k)).collect(),
    };
    if let Some(path) = png {
        let (img, _) = job.render(FigureKind::Grid([3840, 2160]))?;
        flychess_brain::files::write_atomically(path, &png_bytes(&img.expect("a grid"))?)?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = gif {
        let (_, bytes) = job.render(FigureKind::Gif([960, 540]))?;
        flychess_brain::files::write_atomically(path, &bytes)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

// The arguments of `flychess explain` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct ExplainArgs {
    #[arg(long)]
    pub fen: String,
    /// The fly (default: the brain's own trained fly, the shipped one first).
    #[arg(long)]
    pub fly: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess probe` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct ProbeArgs {
    #[arg(long, default_value_t = 4_096)]
    pub train: usize,
    #[arg(long, default_value_t = 1_024)]
    pub val: usize,
    #[arg(long, default_value_t = 2_048)]
    pub hold: usize,
    /// Neurons read per region (evenly spread through it).
    #[arg(long, default_value_t = 128)]
    pub neurons: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess eye` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct EyeArgs {
    #[arg(long)]
    pub fen: String,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess learn` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct LearnArgs {
    #[arg(long)]
    pub run: String,
    #[arg(long, default_value = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")]
    pub fen: String,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess figure` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct FigureArgs {
    #[arg(long)]
    pub fen: String,
    /// The fly whose move the title names (default: the brain's own).
    #[arg(long)]
    pub fly: Option<String>,
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    #[arg(long, value_name = "FILE")]
    pub gif: Option<PathBuf>,
    /// A white background (for print).
    #[arg(long)]
    pub white: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess doing` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct DoingArgs {
    #[arg(long)]
    pub fly: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}
