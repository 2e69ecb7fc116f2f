//! Headless `flychess brain …` commands: turning command-line choices into a `BrainSpec`,
//! building or loading it with an indicatif progress bar, printing its summary (text or JSON),
//! generating the stand-in's tables and downloading the release.

use crate::cli::{BrainKind, EngineArgs, Release, WhichBrain};
use clap::{Args, Subcommand};
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::brain::simulator::{EngineChoice, Simulator, read_on_cpu};
use flychess_brain::brain::{Brain, STEPS, agreement, cpu, gpu as gpu_engine, signal as region_signal};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::{Planes, planes, sample_positions};
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::connectome::column_map::{self, ColumnMap};
use flychess_brain::connectome::download::Outcome;
use flychess_brain::connectome::release;
use flychess_brain::connectome::rules::Region;
use flychess_brain::connectome::{Control, brain_file, synthetic};
use flychess_brain::store::{self, BrainSpec, Tables};

pub fn spec(which: &WhichBrain, data: &Path) -> Result<BrainSpec> {
    let tables = match (which.brain, &which.tables) {
        (BrainKind::Flywire783, dir) => Tables::FlyWire { dir: dir.clone() },
        (BrainKind::Standin, None) => Tables::Synthetic { seed: which.seed },
        (BrainKind::Standin, Some(_)) => {
            return Err(anyhow!("the stand-in is generated from --seed; --tables is for flywire783 or malecns"));
        }
        (BrainKind::Malecns, Some(dir)) => Tables::Release { dir: dir.clone() },
        (BrainKind::Malecns, None) => Tables::Release { dir: store::malecns_dir(data) },
        (BrainKind::Itself, _) => {
            return Err(anyhow!("--brain needs a value here: flywire783, standin or malecns (only `train --brain` takes none)"));
        }
    };
    let control = match (which.shuffle_wiring, which.lesion.is_empty()) {
        (Some(_), false) => return Err(anyhow!("choose one control: --shuffle-wiring or --lesion")),
        (Some(seed), true) => Control::ShuffledWiring { seed },
        (None, false) => {
            let mut regions = Vec::new();
            for name in &which.lesion {
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

/// A progress bar that shows the current stage; the same closure feeds `sim`'s progress.
fn stage_bar() -> ProgressBar {
    let bar = ProgressBar::new(1000);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg:28} [{bar:40}] {percent:>3}% {elapsed}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

pub fn brain(cmd: BrainCommand, data: &Path) -> Result<()> {
    match cmd {
        BrainCommand::Info { which, json } => info(&spec(&which, data)?, data, json),
        BrainCommand::Build { which } => {
            let spec = spec(&which, data)?;
            let bar = stage_bar();
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
        BrainCommand::Signal { which, json, calm_unreached } => signal(&spec(&which, data)?, data, json, calm_unreached),
        BrainCommand::Think { which, fens, steps, neurons, out } => think(&spec(&which, data)?, data, &fens, &steps, &neurons, &out),
        BrainCommand::Download { release: Release::Malecns, dir, base_url, attempts, .. } => {
            let dir = dir.unwrap_or_else(|| store::malecns_dir(data));
            download(&dir, &base_url, attempts)
        }
        BrainCommand::Download { release: Release::Flywire783, dir, record_url, codex_url, attempts, .. } => {
            let dir = dir.unwrap_or_else(|| store::flywire_full_dir(data));
            download_flywire(&dir, &record_url, &codex_url, attempts)
        }
        BrainCommand::Generate { out, seed } => {
            let bar = stage_bar();
            let started = Instant::now();
            let g = synthetic::generate(&out, seed, &|stage, f| {
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
    }
}

fn info(spec: &BrainSpec, data: &Path, json: bool) -> Result<()> {
    let path = spec.brain_path(data);
    let existed = path.exists();
    let bar = stage_bar();
    let started = Instant::now();
    let loaded = store::ensure(spec, data, &|stage, f| {
        bar.set_message(stage.to_string());
        bar.set_position((f * 1000.0) as u64);
    })?;
    bar.finish_and_clear();
    let ensure_seconds = started.elapsed().as_secs_f64();
    // Always time a load from the file, the cost every later start pays.
    let reloaded = brain_file::load(&path).with_context(|| format!("reading back {}", path.display()))?;
    let info = loaded.connectome.info();
    // Is the eye right? The eye recovered from the wiring against the real column map.
    let eye_vs_columns = match ColumnMap::read(&flychess_brain::shipped::column_map()) {
        Ok(map) => column_map::eye_map_vs_columns(&loaded.connectome, &map).map_err(|e| anyhow!("the eye against the column map: {e}"))?,
        Err(e) => return Err(anyhow!("the real column map: {e}")),
    };
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if json {
        let mut v = serde_json::to_value(&info)?;
        let extra = serde_json::json!({
            "file": path.display().to_string(),
            "file_bytes": file_bytes,
            "checksum": reloaded.checksum,
            "built_now": !existed || loaded.load_seconds == 0.0,
            "generate_and_build_seconds": if loaded.load_seconds == 0.0 { Some(ensure_seconds) } else { None },
            "load_seconds": reloaded.load_seconds,
            "eye_map_vs_columns": eye_vs_columns,
        });
        if let (Some(obj), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
            obj.extend(extra.clone());
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{}", info.source);
        println!("  file            {} ({:.1} MB)", path.display(), file_bytes as f64 / 1e6);
        println!("  sha256          {}", reloaded.checksum);
        println!("  neurons         {} ({} with a position: {})", info.neurons, info.with_soma, info.positions);
        println!("  connections     {} ({} synapses)", info.connections, info.synapses);
        println!("  photoreceptors  {} ({} placed on the eye)", info.photoreceptors, info.photoreceptors_placed);
        println!("  piece-type cells per square  {}..{}", info.min_typed_cells_per_square, info.max_typed_cells_per_square);
        if let Some(r) = &info.eye_recovery {
            println!("  eye recovered from the wiring: {}", r.method);
            for e in &r.eyes {
                println!(
                    "    {} eye: {} columns; {} of {} photoreceptors in a column, {} placed; retinotopy {:.1}× (held out {:.1}×) a shuffled placement",
                    e.side, e.columns, e.in_columns, e.photoreceptors, e.placed, e.retinotopy_ratio, e.retinotopy_ratio_held_out
                );
            }
        }
        if let Some(c) = &eye_vs_columns {
            println!(
                "  the {} eye against the real column map (Matsliah et al. 2024): {} of {} columns paired by their Mi1; after the best similarity transform{} the median column is {:.2} columns from its real place (90 % within {:.2}; a shuffled pairing: {:.2}); {:.0} % of real neighbours kept (shuffled: {:.0} %)",
                c.eye,
                c.columns_compared,
                c.columns_real,
                if c.mirrored { " (a mirror)" } else { "" },
                c.median_error_columns,
                c.p90_error_columns,
                c.shuffled_median_error_columns,
                100.0 * c.neighbours_kept,
                100.0 * c.shuffled_neighbours_kept
            );
        }
        println!(
            "  descending {}  Kenyon {}  MBON {} ({} approach, {} avoid)  PAM {}  PPL1 {}",
            info.descending, info.kenyon, info.mbon, info.mbon_approach, info.mbon_avoid, info.pam, info.ppl1
        );
        match info.eye_to_descending_shortest_path {
            Some(h) => println!("  eye → descending shortest path  {h} synapses"),
            None => println!("  eye → descending shortest path  none (the eye does not reach the descending neurons)"),
        }
        println!("  regions:");
        for (name, count) in &info.regions {
            println!("    {name:20} {count}");
        }
        if loaded.load_seconds == 0.0 {
            println!("  generated and built in {ensure_seconds:.1} s (build from tables {:.1} s)", info.build_seconds);
        }
        println!("  loads in {:.2} s", reloaded.load_seconds);
    }
    Ok(())
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

fn download(dir: &Path, base_url: &str, attempts: u32) -> Result<()> {
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

fn download_flywire(dir: &Path, record_url: &str, codex_url: &str, attempts: u32) -> Result<()> {
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

/// Times `think` on successive batches of `boards`: at least 2 runs and 8 positions, then more
/// until 2 s have passed (20 s at most). One JSON row of the bench report.
fn timed_runs(engine: &str, batch: usize, boards: &[Planes], mut think: impl FnMut(&[Planes]) -> Result<()>) -> Result<serde_json::Value> {
    let started = Instant::now();
    let (mut positions, mut runs) = (0usize, 0usize);
    while runs < 2 || positions < 8 || started.elapsed().as_secs_f64() < 2.0 {
        let first = (runs * batch) % (boards.len() - batch + 1);
        think(&boards[first..first + batch])?;
        positions += batch;
        runs += 1;
        if started.elapsed().as_secs_f64() > 20.0 {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok(serde_json::json!({
        "engine": engine,
        "batch": batch,
        "positions": positions,
        "seconds": seconds,
        "positions_per_second": positions as f64 / seconds,
        "ms_per_position": 1000.0 * seconds / positions as f64,
    }))
}

/// A memory figure of this process in MB from /proc/self/status (`VmHWM`: the peak resident
/// set, `VmRSS`: now; Linux only, None elsewhere).
#[cfg(target_os = "linux")]
fn status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

// Elsewhere there is no /proc to read (under Wine a read of "/proc/self/status" would even reach
// the Linux process hosting Wine and report its figure).
#[cfg(not(target_os = "linux"))]
fn status_mb(_field: &str) -> Option<f64> {
    None
}

/// The peak resident memory of this process in MB: Linux's VmHWM; on Windows the peak working
/// set (GetProcessMemoryInfo); None elsewhere.
pub(crate) fn peak_memory_mb() -> Option<f64> {
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::ProcessStatus::{GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
        use windows_sys::Win32::System::Threading::GetCurrentProcess;
        let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        // SAFETY: `counters` is a PROCESS_MEMORY_COUNTERS of the size passed, written by the call;
        // GetCurrentProcess returns a pseudo-handle that needs no closing.
        let ok = unsafe { GetProcessMemoryInfo(GetCurrentProcess(), &mut counters, size) };
        return (ok != 0).then(|| counters.PeakWorkingSetSize as f64 / (1024.0 * 1024.0));
    }
    #[allow(unreachable_code)]
    status_mb("VmHWM:")
}

/// What one think of `boards` adds to the memory in use, in MB: the peak resident set is reset to
/// the current one (Linux's /proc/self/clear_refs), the think runs, and the new peak is read.
fn think_memory_mb(think: impl FnOnce()) -> Option<f64> {
    status_mb("VmRSS:")?;
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    let before = status_mb("VmRSS:")?;
    think();
    Some(peak_memory_mb()? - before)
}

/// The memory goal of a brain and a batch of 32, measured: the brain's own bytes (counted) plus
/// what a batch-32 think adds at its peak, both for a think that keeps two steps (training's
/// probe, the ladder) and one that keeps all 12 (what the viewer replays).
fn memory_report(brain: &Brain, boards: &[Planes]) -> serde_json::Value {
    let batch = boards.len();
    let brain_mb = brain.bytes() as f64 / (1024.0 * 1024.0);
    let two_steps = think_memory_mb(|| {
        cpu::run(brain, boards, |_, r| {
            std::hint::black_box(r);
        })
    });
    let every_step = think_memory_mb(|| {
        std::hint::black_box(cpu::think(brain, boards));
    });
    serde_json::json!({
        "batch": batch,
        "brain_mb": brain_mb,
        "think_two_steps_mb": two_steps,
        "think_every_step_mb": every_step,
        "brain_and_batch_two_steps_mb": two_steps.map(|t| brain_mb + t),
        "brain_and_batch_every_step_mb": every_step.map(|t| brain_mb + t),
    })
}

/// A think that hands each step's rates (step, rates) to the closure it is given.
type Think<'a> = dyn FnMut(&mut dyn FnMut(usize, &[f32])) + 'a;

/// The engine's two exact shortcuts measured on one position: the blank-board shortcut
/// (`cpu::BlankShortcut`, every think) and the rows a reader of the descending neurons needs
/// (`cpu::NeededRows`, what a move's readout runs). Each think is timed against walking every row,
/// interleaved, medians of 7; the rates are checked bit for bit.
fn shortcut_report(brain: &Brain, board: &[Planes], descending: &[u32]) -> serde_json::Value {
    let walked = brain.blank_shortcut().walked_share();
    let needed = brain.needed_rows(descending, STEPS - 4).walked_share();
    // `run` gives every neuron, `run_reading` only the descending ones, in their order.
    let readout_rates = |f: &mut Think, every_neuron: bool| {
        let mut kept = Vec::new();
        f(&mut |t, r| {
            if t >= STEPS - 4 {
                match every_neuron {
                    true => kept.extend(descending.iter().map(|&j| r[j as usize].to_bits())),
                    false => kept.extend(r.iter().map(|x| x.to_bits())),
                }
            }
        });
        kept
    };
    let (mut full, mut blank, mut reading) = (Vec::new(), Vec::new(), Vec::new());
    let mut identical = true;
    for _ in 0..7 {
        let started = Instant::now();
        let a = cpu::think_walking(brain, board, false);
        full.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        let b = cpu::think_in(brain, board, cpu::Layout::PLAIN);
        blank.push(started.elapsed().as_secs_f64() * 1000.0);
        let started = Instant::now();
        let c = readout_rates(&mut |v| cpu::run_reading_in(brain, board, descending, STEPS - 4, cpu::Layout::PLAIN, v), false);
        reading.push(started.elapsed().as_secs_f64() * 1000.0);
        identical &= a == b && c == readout_rates(&mut |v| cpu::run_in(brain, board, cpu::Layout::PLAIN, v), true);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (full, blank, reading) = (median(&mut full), median(&mut blank), median(&mut reading));
    let both: Vec<f64> = walked.iter().zip(&needed).map(|(a, b)| a.min(*b)).collect();
    serde_json::json!({
        "rows_walked_by_step": walked,
        "rows_walked": walked.iter().sum::<f64>() / STEPS as f64,
        "rows_walked_for_the_readout_by_step": both,
        "rows_walked_for_the_readout": both.iter().sum::<f64>() / STEPS as f64,
        "ms_walking_every_row": full,
        "ms_with_shortcut": blank,
        "ms_for_the_readout": reading,
        "speedup": full / blank,
        "speedup_for_the_readout": full / reading,
        "identical": identical,
    })
}

/// The boards a bench thinks about: the shipped sample of 512 real positions, or for batches
/// beyond it the labelled dataset's positions (twice the largest batch, so runs differ).
fn bench_boards(largest: usize) -> Result<Vec<Planes>> {
    let sample: Vec<Planes> = sample_positions().iter().map(planes).collect();
    if largest <= sample.len() {
        return Ok(sample);
    }
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path())?;
    let rows = &dataset.rows[..(2 * largest).min(dataset.rows.len())];
    let boards: Vec<Planes> =
        rows.iter().map(|r| flychess_brain::chess::position_from_fen(&r.fen).map(|p| planes(&p))).collect::<flychess_brain::Result<_>>()?;
    if boards.len() < largest {
        return Err(anyhow!("batch {largest} is more than the {} positions there are", boards.len()));
    }
    Ok(boards)
}

/// The neurons whose rates a GPU row is checked on against the CPU engine: every descending
/// neuron and every 97th neuron of the brain, at all 12 steps.
fn checked_neurons(brain: &Brain, descending: &[u32]) -> Vec<u32> {
    let mut v: Vec<u32> = descending.iter().copied().chain((0..brain.neurons as u32).step_by(97)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The GPU engine's part of the bench on the best adapter: for each batch, the cache's job (the
/// 12 steps, the descending neurons of steps 9–12 read back) timed like the CPU rows, its device
/// memory counted, its rates checked against the CPU engine, and where one think's time goes
/// (upload, kernels, read-back, each waited for); then the largest batch at other slab sizes.
fn gpu_report(brain: &Brain, descending: &[u32], boards: &[Planes], batches: &[usize]) -> Result<serde_json::Value> {
    let d = match gpu_engine::headless_device() {
        Err(e) => return Ok(serde_json::json!({ "adapter": null, "note": format!("no GPU engine: {e}") })),
        Ok(d) => d,
    };
    let limits = d.device.limits();
    let (name, hardware) = (d.adapter_name.clone(), d.hardware);
    let mut engine = gpu_engine::GpuEngine::new(d.device, d.queue, brain)?;
    let read_steps: Vec<usize> = (STEPS - 4..STEPS).collect();
    let checked = checked_neurons(brain, descending);
    let all_steps: Vec<usize> = (0..STEPS).collect();
    // What rounding alone explains on this brain, thought once for the largest sample checked.
    let most = batches.iter().copied().max().unwrap_or(1).min(256).min(boards.len());
    let nudged = agreement::Nudged::think(brain, &boards[..most]);
    let mut runs = Vec::new();
    for &batch in batches {
        let (slab, slabs) = engine.plan(batch);
        // The check first (it also warms the pipeline and the buffers up).
        let on_gpu = engine.read(&boards[..batch], &checked, &all_steps)?;
        let on_cpu = read_on_cpu(brain, &boards[..batch], &checked, &all_steps)?;
        let difference = on_gpu.iter().zip(&on_cpu).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        // Steps 1-6 alone: where rounding has not yet been grown by a brain's sensitive neurons
        // (FlyWire has a few that amplify lavapipe's unfused fma threefold a step).
        let first_half: Vec<usize> = (0..STEPS / 2).collect();
        let early_gpu = engine.read(&boards[..batch], &checked, &first_half)?;
        let early_cpu = read_on_cpu(brain, &boards[..batch], &checked, &first_half)?;
        let early = early_gpu.iter().zip(&early_cpu).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        let apart = on_gpu.iter().zip(&on_cpu).filter(|(a, b)| (*a - *b).abs() > 1e-4).count();
        // The check: per step, against what rounding alone explains on this brain (the CPU
        // engine against itself with every μ one ulp off, on the same boards: `agreement`).
        let sample = batch.min(256);
        let envelope = nudged.envelope(sample, &checked);
        let k = checked.len();
        let by_step: [f32; STEPS] = std::array::from_fn(|t| {
            (0..sample)
                .flat_map(|p| (0..k).map(move |i| (p * STEPS + t) * k + i))
                .map(|x| (on_gpu[x] - on_cpu[x]).abs())
                .fold(0f32, f32::max)
        });
        let past = agreement::first_step_past(&by_step, &envelope);
        let mut row = timed_runs("gpu", batch, boards, |chunk| {
            std::hint::black_box(engine.read(chunk, descending, &read_steps)?);
            Ok(())
        })?;
        engine.set_profiling(true);
        engine.take_phases();
        engine.read(&boards[..batch], descending, &read_steps)?;
        let p = engine.take_phases();
        engine.set_profiling(false);
        let extra = serde_json::json!({
            "job": "12 steps; descending neurons of steps 9-12 read back",
            "slab": slab,
            "slabs": slabs,
            "device_memory_mb": engine.device_bytes(batch, descending.len() * read_steps.len()) as f64 / (1024.0 * 1024.0),
            "checked_rates": on_gpu.len(),
            "max_difference_vs_cpu": difference,
            "max_difference_vs_cpu_steps_1_to_6": early,
            "rates_more_than_1e-4_apart": apart,
            "agreement": {
                "positions": sample,
                "max_difference_vs_cpu_by_step": by_step,
                "rounding_envelope_by_step": envelope,
                "tolerance_by_step": agreement::tolerance(&envelope),
                "how": format!("per step, the largest difference from the CPU engine must stay within {} times what one ulp of every neuron's μ makes on this brain (at least {:e})", agreement::ENVELOPE_FACTOR, agreement::TOLERANCE_FLOOR),
                "within": past.is_none(),
            },
            "phases_ms": { "upload": 1000.0 * p.upload_s, "kernels": 1000.0 * p.kernel_s, "readback": 1000.0 * p.readback_s },
        });
        row.as_object_mut().expect("a row is an object").extend(extra.as_object().expect("an object").clone());
        // A kernel error shows from the first step on, where rounding explains ~1e-7; rounding
        // grown by a brain's sensitive neurons stays within the envelope.
        if let Some(t) = past {
            row["failed"] = serde_json::json!(format!(
                "at step {} the GPU's rates differ from the CPU engine's by {:e}, where rounding explains {:e} on this brain ({early:e} in steps 1-6, {difference:e} over all steps)",
                t + 1,
                by_step[t],
                agreement::tolerance(&envelope)[t]
            ));
        }
        runs.push(row);
    }
    // The largest batch at other slab sizes (what DEFAULT_SLAB is chosen from): one warm-up read
    // (buffers of the new size), then timed reads.
    let largest = batches.iter().copied().max().unwrap_or(1);
    let largest_reads = |engine: &mut gpu_engine::GpuEngine| -> Result<serde_json::Value> {
        engine.read(&boards[..largest], descending, &read_steps)?;
        let r = timed_runs("gpu", largest, boards, |chunk| {
            std::hint::black_box(engine.read(chunk, descending, &read_steps)?);
            Ok(())
        })?;
        Ok(r["positions_per_second"].clone())
    };
    let (default_slab, fits) = engine.slab_limits();
    let mut sweep = Vec::new();
    for slab in [8usize, 16, 32, 64, 128, 256, 512] {
        if slab > fits || slab > largest {
            continue;
        }
        engine.set_slab_limit(slab);
        sweep.push(serde_json::json!({ "slab": slab, "batch": largest, "positions_per_second": largest_reads(&mut engine)? }));
    }
    engine.set_slab_limit(default_slab);
    // The same at the default slab with one position to an invocation (the `step` kernel).
    engine.set_four_at_a_time(false);
    let one = largest_reads(&mut engine)?;
    engine.set_four_at_a_time(true);
    sweep.push(serde_json::json!({ "slab": engine.plan(largest).0, "batch": largest, "positions_per_second": one, "one_position_an_invocation": true }));
    // Every row worked out at every step, against the default (only the rows the descending
    // neurons of steps 9-12 need): timed in this run, the readings compared bit for bit.
    let rows_only = engine.read(&boards[..largest], descending, &read_steps)?;
    engine.set_rows_only(false);
    let every_row = engine.read(&boards[..largest], descending, &read_steps)?;
    let every_row_speed = largest_reads(&mut engine)?;
    engine.set_rows_only(true);
    let needed_speed = largest_reads(&mut engine)?;
    let needed_rows = serde_json::json!({
        "batch": largest,
        "needed_rows_positions_per_second": needed_speed,
        "every_row_positions_per_second": every_row_speed,
        "speedup": needed_speed.as_f64().zip(every_row_speed.as_f64()).map(|(a, b)| a / b),
        "identical_readings": rows_only.iter().map(|x| x.to_bits()).eq(every_row.iter().map(|x| x.to_bits())),
        "share_of_rows_by_step": brain.needed_rows(descending, STEPS - 4).walked_share(),
    });
    Ok(serde_json::json!({
        "adapter": name,
        "hardware": hardware,
        "limits": {
            "max_storage_buffer_binding_size": limits.max_storage_buffer_binding_size,
            "max_buffer_size": limits.max_buffer_size,
            "max_compute_workgroups_per_dimension": limits.max_compute_workgroups_per_dimension,
            "slab_positions": default_slab,
            "slab_positions_that_fit": fits,
        },
        "runs": runs,
        "slab_sweep": sweep,
        "needed_rows": needed_rows,
    }))
}

/// How far the CPU engine is from this machine's limits, and what its layout buys, for the job
/// the DN cache, a fly's move and imagination run (the 12 steps, the descending neurons of steps
/// 9-12 read): per batch, the plain layout (the brain's order, ordinary pages) and the fast one
/// (`cpu::Layout::FAST`) timed in alternation in this run, their rates checked bit for bit, the
/// bytes the engine asks the memory system for per position and step and the multiply-adds, as
/// GB/s and GFLOP/s beside the machine's peaks measured now (`peaks`). Bytes counted: each
/// connection walked its sender index and weight (8 bytes) and its sender's rates of the batch
/// (4 a position); each row worked out its new rates, its previous ones and μ, g. A gather the
/// core's own cache holds costs less than that, one it misses more (a whole line): the misses of a
/// 1 MiB cache at batch 32 are given for both orders.
fn engine_report(brain: &Brain, boards: &[Planes], descending: &[u32], batches: &[usize]) -> Result<serde_json::Value> {
    use flychess_brain::brain::{local_order, peaks};
    let peaks = peaks::measure();
    let work = cpu::work(brain, Some((descending, STEPS - 4)));
    let local = brain.local_order();
    let held = (1usize << 20) / (4 * 32);
    let (distance_plain, distance_local) = local.mean_sender_distance(brain);
    let misses = serde_json::json!({
        "senders_a_1mib_cache_holds_at_batch_32": held,
        "plain": local_order::cache_misses(brain, held),
        "local_order": local_order::cache_misses(local.brain(), held),
        "mean_sender_distance": { "plain": distance_plain, "local_order": distance_local },
    });
    let read = |layout: cpu::Layout, chunk: &[Planes]| {
        let mut kept = Vec::new();
        cpu::run_reading_in(brain, chunk, descending, STEPS - 4, layout, |_, r| kept.extend(r.iter().map(|x| x.to_bits())));
        kept
    };
    // The half-gather engine (not the reference: `cpu::run_reading_half`), in the fast layout.
    let read_half = |chunk: &[Planes]| {
        let mut kept = Vec::new();
        cpu::run_reading_half(brain, chunk, descending, STEPS - 4, cpu::Layout::FAST, |_, r| kept.extend(r.iter().map(|x| x.to_bits())));
        kept
    };
    let mut rows = Vec::new();
    for &batch in batches {
        let chunk = &boards[..batch];
        let exact = read(cpu::Layout::FAST, chunk);
        let identical = read(cpu::Layout::PLAIN, chunk) == exact;
        let half_parts =
            exact.iter().zip(read_half(chunk)).map(|(&a, b)| (f32::from_bits(a) - f32::from_bits(b)).abs()).fold(0f32, f32::max);
        // The engine before issue 42, its pages alone, its layout alone (the plain kernels in the
        // local order on huge pages), and the fast engine (that layout and the fast kernels).
        let layouts = [
            cpu::Layout::PLAIN,
            cpu::Layout { huge_pages: true, ..cpu::Layout::PLAIN },
            cpu::Layout { kernels: cpu::Kernels::Plain, ..cpu::Layout::FAST },
            cpu::Layout::FAST,
        ];
        let mut seconds = [Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        let started = Instant::now();
        let mut turn = 0usize;
        while seconds[3].len() < 3 || (started.elapsed().as_secs_f64() < 8.0 && seconds[3].len() < 200) {
            let first = (turn * batch) % (boards.len() - batch + 1);
            turn += 1;
            for (l, layout) in layouts.iter().enumerate() {
                let t = Instant::now();
                std::hint::black_box(read(*layout, &boards[first..first + batch]));
                seconds[l].push(t.elapsed().as_secs_f64());
            }
            let t = Instant::now();
            std::hint::black_box(read_half(&boards[first..first + batch]));
            seconds[4].push(t.elapsed().as_secs_f64());
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let timings = seconds[3].len();
        let [plain, huge, plain_kernels, fast, half] = seconds.map(|mut v| median(&mut v));
        let b = batch as f64;
        let bytes: f64 = work.iter().map(|&(r, c)| c as f64 * (8.0 + 4.0 * b) + r as f64 * (8.0 * b + 8.0)).sum();
        let flops: f64 = work.iter().map(|&(_, c)| 2.0 * c as f64 * b).sum();
        let figures = |s: f64| {
            serde_json::json!({
                "positions_per_second": b / s,
                "ms_per_think": 1000.0 * s,
                "gb_per_s": bytes / s / 1e9,
                "gflop_per_s": flops / s / 1e9,
                "share_of_copy_bandwidth": bytes / s / 1e9 / peaks.copy_gb_per_s,
                "share_of_fma_peak": flops / s / 1e9 / peaks.fma_gflop_per_s,
            })
        };
        rows.push(serde_json::json!({
            "batch": batch,
            "job": "12 steps; descending neurons of steps 9-12 read",
            "bytes_per_position_step": bytes / (b * STEPS as f64),
            "flop_per_position_step": flops / (b * STEPS as f64),
            "plain": figures(plain),
            "huge_pages_only": figures(huge),
            "fast_layout_plain_kernels": figures(plain_kernels),
            "fast": figures(fast),
            "speedup": plain / fast,
            "speedup_of_the_layout": plain / plain_kernels,
            "speedup_of_the_kernels": plain_kernels / fast,
            "timings_each": timings,
            "identical_rates": identical,
            "half_gather": {
                "positions_per_second": b / half,
                "ms_per_think": 1000.0 * half,
                "speedup_over_fast": fast / half,
                "max_reading_difference": half_parts,
                "how": "the senders' rates gathered as half floats on the plain kernels (not the reference engine: no fly thinks on it); timed in alternation with the layouts above",
            },
        }));
    }
    let best = rows
        .iter()
        .max_by(|a, b| {
            a["fast"]["positions_per_second"].as_f64().unwrap_or(0.0).total_cmp(&b["fast"]["positions_per_second"].as_f64().unwrap_or(0.0))
        })
        .map(|r| serde_json::json!({ "batch": r["batch"], "positions_per_second": r["fast"]["positions_per_second"] }));
    if let Some(bad) = rows.iter().find(|r| r["identical_rates"] != true) {
        return Err(anyhow!("the fast layout's rates differ from the plain layout's at batch {}", bad["batch"]));
    }
    Ok(serde_json::json!({ "peaks": peaks, "cache_misses": misses, "runs": rows, "best": best }))
}

pub fn bench(which: &WhichBrain, data: &Path, batches: &[usize], json: bool, reference: bool) -> Result<()> {
    let spec = spec(which, data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    if let Some(&bad) = batches.iter().find(|&&b| b == 0) {
        return Err(anyhow!("batch {bad}: a batch holds at least one position"));
    }
    let largest = batches.iter().copied().max().unwrap_or(1);
    let boards = bench_boards(largest)?;
    let descending = &loaded.connectome.groups.descending;
    let mut rows = Vec::new();
    for &batch in batches {
        // The peak resident set over the runs, above what was in use before: the think's memory.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = status_mb("VmRSS:");
        let mut row = timed_runs("cpu", batch, &boards, |chunk| {
            if batch == 1 {
                // A move in play keeps all 12 steps for the viewer.
                std::hint::black_box(cpu::think(&brain, chunk));
            } else {
                cpu::run(&brain, chunk, |_, r| {
                    std::hint::black_box(r);
                });
            }
            Ok(())
        })?;
        row["job"] = serde_json::json!(if batch == 1 { "12 steps, all kept" } else { "12 steps, two buffers" });
        row["memory_mb"] = serde_json::json!(if reset { before.zip(peak_memory_mb()).map(|(b, p)| p - b) } else { None });
        rows.push(row);
    }
    let one_position_ms = rows.iter().find(|r| r["batch"] == 1).map(|r| r["ms_per_position"].clone());
    let shortcut = shortcut_report(&brain, &boards[..1], descending);
    let memory = memory_report(&brain, &boards[..32.min(boards.len())]);
    let gpu = gpu_report(&brain, descending, &boards, batches)?;
    let reference = if reference { Some(scipy_reference(&brain, &boards[..32], &loaded.connectome.neurons.region, data)?) } else { None };
    let engine = engine_report(&brain, &boards, descending, &batches.iter().copied().filter(|&b| b <= boards.len()).collect::<Vec<_>>())?;
    // A fly's move and imagination in the plain layout, then in the fast one (every think of the
    // process uses the layout set).
    cpu::use_layout(cpu::Layout::PLAIN);
    let fly_move_plain = fly_move_timing(&brain, &loaded, data);
    cpu::use_layout(cpu::Layout::FAST);
    let fly_move = fly_move_timing(&brain, &loaded, data)?;
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
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} — {} neurons, {} connections, {} threads",
            report["brain"].as_str().unwrap_or(""),
            brain.neurons,
            brain.connections(),
            report["threads"]
        );
        let gpu_runs = report["gpu"]["runs"].as_array().cloned().unwrap_or_default();
        for r in rows.iter().chain(&gpu_runs) {
            print!(
                "  {}  batch {:>4}: {:>9.1} positions/s  ({:.2} ms per position)",
                r["engine"].as_str().unwrap_or(""),
                r["batch"],
                r["positions_per_second"].as_f64().unwrap_or(0.0),
                r["ms_per_position"].as_f64().unwrap_or(0.0)
            );
            if let Some(mb) = r["memory_mb"].as_f64() {
                print!(", {mb:.0} MB");
            }
            if let Some(mb) = r["device_memory_mb"].as_f64() {
                let p = &r["phases_ms"];
                print!(
                    ", {} slab(s) of {}, {mb:.0} MB on the device; one think: upload {:.1} ms, kernels {:.1} ms, read-back {:.1} ms; rates within {:.1e} of the CPU engine's",
                    r["slabs"],
                    r["slab"],
                    p["upload"].as_f64().unwrap_or(0.0),
                    p["kernels"].as_f64().unwrap_or(0.0),
                    p["readback"].as_f64().unwrap_or(0.0),
                    r["max_difference_vs_cpu"].as_f64().unwrap_or(f64::NAN)
                );
            }
            println!();
            if let Some(why) = r["failed"].as_str() {
                println!("    FAILED: {why}");
            }
            if r["agreement"].is_object() {
                println!("    {}", agreement_line(&r["agreement"], "max_difference_vs_cpu_by_step"));
            }
        }
        for r in report["gpu"]["slab_sweep"].as_array().cloned().unwrap_or_default() {
            let kernel =
                if r["one_position_an_invocation"] == true { "one position an invocation" } else { "four positions an invocation" };
            println!(
                "  gpu  batch {} in slabs of {:>3}, {kernel}: {:>9.1} positions/s",
                r["batch"],
                r["slab"],
                r["positions_per_second"].as_f64().unwrap_or(0.0)
            );
        }
        if let Some(r) = &report["reference"].as_object() {
            println!(
                "  scipy reference, batch 32: {:.2} s per think against {:.2} s here: the CPU engine is {:.1}x faster; rates agree within {:.1e} (mean {:.1e}, {:.2}% within 1e-4)",
                r["scipy_seconds"].as_f64().unwrap_or(0.0),
                r["cpu_seconds"].as_f64().unwrap_or(0.0),
                r["speedup"].as_f64().unwrap_or(0.0),
                r["max_difference"].as_f64().unwrap_or(0.0),
                r["mean_difference"].as_f64().unwrap_or(0.0),
                100.0 * r["share_within_1e-4"].as_f64().unwrap_or(0.0)
            );
            println!("    {}", agreement_line(&report["reference"], "max_difference_by_step"));
        }
        let s = &report["blank_shortcut"];
        println!(
            "  one position, walking every row {:.1} ms; blank-board shortcut ({:.0}% of rows) {:.1} ms ({:.2}x); only what the readout reads ({:.0}% of rows) {:.1} ms ({:.2}x); same rates: {}",
            s["ms_walking_every_row"].as_f64().unwrap_or(0.0),
            100.0 * s["rows_walked"].as_f64().unwrap_or(0.0),
            s["ms_with_shortcut"].as_f64().unwrap_or(0.0),
            s["speedup"].as_f64().unwrap_or(0.0),
            100.0 * s["rows_walked_for_the_readout"].as_f64().unwrap_or(0.0),
            s["ms_for_the_readout"].as_f64().unwrap_or(0.0),
            s["speedup_for_the_readout"].as_f64().unwrap_or(0.0),
            s["identical"]
        );
        let m = &report["memory"];
        if let (Some(two), Some(every)) = (m["brain_and_batch_two_steps_mb"].as_f64(), m["brain_and_batch_every_step_mb"].as_f64()) {
            println!(
                "  memory: brain {:.0} MB; brain + a batch of {} thinking {:.0} MB (keeping two steps) or {:.0} MB (keeping all 12 for the viewer)",
                m["brain_mb"].as_f64().unwrap_or(0.0),
                m["batch"],
                two,
                every
            );
        }
        if let Some(m) = report["fly_move"].as_object() {
            println!(
                "  one move of fly {:?} after 1.e4 e5: {:.0} ms, with imagination {:.0} ms (the position and {} boards after, one batch)",
                m["fly"].as_str().unwrap_or(""),
                m["ms"].as_f64().unwrap_or(0.0),
                m["ms_imagination"].as_f64().unwrap_or(0.0),
                m["boards_imagined"]
            );
            let g = &m["games_at_once"];
            println!(
                "  fly moves of {} games asked for at once: {:.0} ms a move (one at a time: {:.0} ms a move)",
                g["games"],
                g["ms_per_move"].as_f64().unwrap_or(0.0),
                g["ms_per_move_one_at_a_time"].as_f64().unwrap_or(0.0)
            );
        }
        let e = &report["engine"];
        let p = &e["peaks"];
        println!(
            "  this machine now: copy {:.1} GB/s, {} {:.0} GFLOP/s ({} threads)",
            p["copy_gb_per_s"].as_f64().unwrap_or(0.0),
            if p["fma_instructions"] == true { "AVX2 FMA" } else { "plain multiply-add" },
            p["fma_gflop_per_s"].as_f64().unwrap_or(0.0),
            p["threads"]
        );
        for r in e["runs"].as_array().cloned().unwrap_or_default() {
            let (plain, fast) = (&r["plain"], &r["fast"]);
            println!(
                "  readout job, batch {:>3}: the engine before issue 42 {:>6.1} positions/s, huge pages only {:>6.1}, the fast layout on the plain kernels {:>6.1}, the fast engine {:>6.1} ({:.2}x: layout {:.2}x, kernels {:.2}x); {:.0} bytes and {:.0} FLOP per position and step: {:.1} GB/s ({:.0}% of copy), {:.1} GFLOP/s ({:.1}% of FMA peak); same rates: {}",
                r["batch"],
                plain["positions_per_second"].as_f64().unwrap_or(0.0),
                r["huge_pages_only"]["positions_per_second"].as_f64().unwrap_or(0.0),
                r["fast_layout_plain_kernels"]["positions_per_second"].as_f64().unwrap_or(0.0),
                fast["positions_per_second"].as_f64().unwrap_or(0.0),
                r["speedup"].as_f64().unwrap_or(0.0),
                r["speedup_of_the_layout"].as_f64().unwrap_or(0.0),
                r["speedup_of_the_kernels"].as_f64().unwrap_or(0.0),
                r["bytes_per_position_step"].as_f64().unwrap_or(0.0),
                r["flop_per_position_step"].as_f64().unwrap_or(0.0),
                fast["gb_per_s"].as_f64().unwrap_or(0.0),
                100.0 * fast["share_of_copy_bandwidth"].as_f64().unwrap_or(0.0),
                fast["gflop_per_s"].as_f64().unwrap_or(0.0),
                100.0 * fast["share_of_fma_peak"].as_f64().unwrap_or(0.0),
                r["identical_rates"]
            );
            let h = &r["half_gather"];
            println!(
                "    half-gather engine (not the reference): {:>6.1} positions/s ({:.2}x the fast layout), readings up to {:.2e} from the exact engine's",
                h["positions_per_second"].as_f64().unwrap_or(0.0),
                h["speedup_over_fast"].as_f64().unwrap_or(0.0),
                h["max_reading_difference"].as_f64().unwrap_or(0.0)
            );
        }
        let m = &e["cache_misses"];
        println!(
            "  gathers missing a 1 MiB cache at batch 32: {:.0}% in the brain's order, {:.0}% in the local order (mean sender distance {:.0} → {:.0} neurons)",
            100.0 * m["plain"].as_f64().unwrap_or(0.0),
            100.0 * m["local_order"].as_f64().unwrap_or(0.0),
            m["mean_sender_distance"]["plain"].as_f64().unwrap_or(0.0),
            m["mean_sender_distance"]["local_order"].as_f64().unwrap_or(0.0)
        );
        if let Some(m) = report["fly_move_plain_layout"].as_object() {
            println!(
                "  the same fly move in the plain layout: {:.0} ms, with imagination {:.0} ms",
                m["ms"].as_f64().unwrap_or(0.0),
                m["ms_imagination"].as_f64().unwrap_or(0.0)
            );
        }
        match report["gpu"]["adapter"].as_str() {
            Some(name) => println!("  gpu adapter: {name}"),
            None => println!("  {}", report["gpu"]["note"].as_str().unwrap_or("")),
        }
        if let Some(mb) = peak_memory_mb() {
            println!("  peak memory {mb:.0} MB");
        }
    }
    // The figures are out; a GPU whose rates are not the CPU engine's still fails the command.
    let failed = report["gpu"]["runs"].as_array().map_or(0, |runs| runs.iter().filter(|r| r["failed"].is_string()).count());
    if failed > 0 {
        return Err(anyhow!("{failed} GPU row(s) failed their check against the CPU engine (see the rows above)"));
    }
    Ok(())
}

fn signal(spec: &BrainSpec, data: &Path, json: bool, calm_unreached: bool) -> Result<()> {
    let (loaded, brain) = ready(spec, data, CalibrationOptions { calm_unreached })?;
    let boards: Vec<Planes> = sample_positions().iter().skip(256).take(48).map(planes).collect();
    let by_region = region_signal::by_region(&brain, &loaded.connectome.neurons.region, &boards);
    if json {
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

/// `flychess brain think`: the rates of `fens` at `steps` (1-based; empty: all) of `neurons`
/// (empty: all) on the CPU engine, written to `out` as a long Feather table.
fn think(spec: &BrainSpec, data: &Path, fens: &[String], steps: &[usize], neurons: &[u32], out: &Path) -> Result<()> {
    let boards: Vec<Planes> =
        fens.iter().map(|f| flychess_brain::chess::position_from_fen(f).map(|p| planes(&p))).collect::<flychess_brain::Result<_>>()?;
    if let Some(s) = steps.iter().find(|&&s| !(1..=STEPS).contains(&s)) {
        return Err(anyhow!("step {s} is not one of 1 to {STEPS}"));
    }
    let (loaded, brain) = ready(spec, data, CalibrationOptions::default())?;
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

/// One line of an engine's agreement with the CPU engine, step by step, beside the rounding
/// envelope (`agreement`).
fn agreement_line(a: &serde_json::Value, differences: &str) -> String {
    let steps = |key: &str| -> Vec<f64> { a[key].as_array().map(|v| v.iter().filter_map(|x| x.as_f64()).collect()).unwrap_or_default() };
    let (d, e) = (steps(differences), steps("rounding_envelope_by_step"));
    let pairs: Vec<String> = [0usize, 3, 7, 11]
        .iter()
        .filter(|&&t| t < d.len() && t < e.len())
        .map(|&t| format!("step {} {:.1e} ({:.1e})", t + 1, d[t], e[t]))
        .collect();
    let verdict =
        if a["within"] == true || a["within_rounding"] == true { "within rounding at every step" } else { "PAST what rounding explains" };
    format!("per step, difference from the CPU engine (rounding envelope on this brain): {}; {verdict}", pairs.join(", "))
}

const REFERENCE_SCRIPT: &str = include_str!("../../../tools/reference_scipy.py");

/// Runs tools/reference_scipy.py on the same brain and boards (in a venv with scipy in the data
/// folder, made on first use), and compares its rates and speed with the CPU engine's.
fn scipy_reference(
    brain: &Brain,
    boards: &[Planes],
    regions: &[flychess_brain::connectome::rules::Region],
    data: &Path,
) -> Result<serde_json::Value> {
    use std::process::Command;
    let venv = flychess_brain::files::DataFolder::at(data).reference_venv();
    let python = venv.join("bin").join("python3");
    if !python.exists() {
        eprintln!("making a Python venv with scipy in {} (once)", venv.display());
        let ok = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().map(|s| s.success()).unwrap_or(false)
            && Command::new(venv.join("bin").join("pip"))
                .args(["install", "-q", "numpy", "scipy"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
        if !ok {
            let _ = std::fs::remove_dir_all(&venv);
            return Err(anyhow!("could not make a Python venv with scipy (needs python3 with venv and pip, and PyPI)"));
        }
    }
    let dir = tempfile::tempdir()?;
    let d = dir.path();
    let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes);
    let batch = boards.len();
    let n = brain.neurons;
    // The eye input as a dense neurons × batch matrix.
    let x_eye = brain.eye_input(boards);
    let mut x = vec![0f32; n * batch];
    for (i, c) in brain.eye.iter().enumerate() {
        x[c.neuron as usize * batch..(c.neuron as usize + 1) * batch].copy_from_slice(&x_eye[i * batch..(i + 1) * batch]);
    }
    let bytes_u32 = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let bytes_f32 = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    write("row_start.u32", &bytes_u32(&brain.row_start))?;
    write("pre.u32", &bytes_u32(&brain.pre))?;
    write("weight.f32", &bytes_f32(&brain.weight))?;
    write("x.f32", &bytes_f32(&x))?;
    write("mu.f32", &bytes_f32(&brain.homeostasis().mu))?;
    write("gain.f32", &bytes_f32(brain.gains()))?;
    write("reference_scipy.py", REFERENCE_SCRIPT.as_bytes())?;
    let manifest =
        serde_json::json!({"neurons": n, "batch": batch, "steps": STEPS, "beta": brain.params().beta, "leak": brain.params().leak});
    write("manifest.json", manifest.to_string().as_bytes())?;
    let out = Command::new(&python).arg(d.join("reference_scipy.py")).arg(d).output()?;
    if !out.status.success() {
        return Err(anyhow!("the scipy reference failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let scipy_seconds = answer["seconds_per_think"].as_f64().unwrap_or(f64::NAN);
    let theirs: Vec<f32> =
        std::fs::read(d.join("rates.f32"))?.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // The CPU engine on the same boards, timed the same way (one warm-up, then three thinks).
    let mut ours = cpu::think(brain, boards);
    let started = Instant::now();
    for _ in 0..3 {
        ours = cpu::think(brain, boards);
    }
    let cpu_seconds = started.elapsed().as_secs_f64() / 3.0;
    if theirs.len() != ours.data.len() {
        return Err(anyhow!("the scipy reference wrote {} rates, {} expected", theirs.len(), ours.data.len()));
    }
    let diffs: Vec<f32> = ours.data.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).collect();
    let max_difference = diffs.iter().copied().fold(0f32, f32::max);
    let mean_difference = diffs.iter().map(|&d| d as f64).sum::<f64>() / diffs.len() as f64;
    let within_1e4 = diffs.iter().filter(|&&d| d <= 1e-4).count() as f64 / diffs.len() as f64;
    // Where they part: per step against what rounding alone explains on this brain, and per region
    // at the last step.
    let by_step = agreement::per_step_max(&ours.data, &theirs, n, batch, &[]);
    let envelope = agreement::Nudged::beside(brain, boards, ours.data.clone()).envelope(batch, &[]);
    let past = agreement::first_step_past(&by_step, &envelope);
    let share_within =
        |t: usize| diffs[t * n * batch..(t + 1) * n * batch].iter().filter(|&&d| d <= 1e-4).count() as f64 / (n * batch) as f64;
    let mut by_region: std::collections::BTreeMap<String, (f32, usize, usize)> = Default::default();
    let last = (STEPS - 1) * n * batch;
    for (j, region) in regions.iter().enumerate().take(n) {
        let e = by_region.entry(format!("{region:?}")).or_default();
        for &d in &diffs[last + j * batch..last + (j + 1) * batch] {
            e.0 = e.0.max(d);
            e.1 += (d <= 1e-4) as usize;
            e.2 += 1;
        }
    }
    let by_region: serde_json::Map<String, serde_json::Value> = by_region
        .into_iter()
        .map(|(r, (max, within, all))| {
            (r, serde_json::json!({ "max_difference": max, "share_within_1e-4": within as f64 / all.max(1) as f64 }))
        })
        .collect();
    Ok(serde_json::json!({
        "max_difference_by_step": by_step,
        "share_within_1e-4_by_step": (0..STEPS).map(share_within).collect::<Vec<_>>(),
        "rounding_envelope_by_step": envelope,
        "tolerance_by_step": agreement::tolerance(&envelope),
        "within_rounding": past.is_none(),
        "first_step_past_rounding": past.map(|t| t + 1),
        "last_step_by_region": by_region,
        "batch": batch,
        "scipy_seconds": scipy_seconds,
        "cpu_seconds": cpu_seconds,
        "speedup": scipy_seconds / cpu_seconds,
        "max_difference": max_difference,
        "mean_difference": mean_difference,
        "share_within_1e-4": within_1e4,
        "versions": answer,
    }))
}

pub fn data(cmd: DataCommand, data: &Path) -> Result<()> {
    use flychess_fly::data::{Dataset, shipped_path};
    match cmd {
        DataCommand::Games { pgn, out, positions, seed, human_games, val_games, json } => {
            use flychess::game_positions::{GamesOptions, positions_from_games};
            let pgn = pgn.unwrap_or_else(book_pgn);
            let out = dataset_path(&out, data)?;
            let shipped = Dataset::load(&shipped_path())?;
            let bar = ProgressBar::new(1);
            bar.set_style(
                ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes}, {bytes_per_sec}, eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            let started = Instant::now();
            let report = positions_from_games(
                &pgn,
                &shipped,
                &GamesOptions { human_games, val_games, ..GamesOptions::new(positions, seed) },
                &out,
                &|pass, done, total| {
                    bar.set_message(pass.to_string());
                    bar.set_length(total);
                    bar.set_position(done);
                },
            )?;
            bar.finish_and_clear();
            let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
            let peak = peak_memory_mb();
            if json {
                let mut v = serde_json::to_value(&report)?;
                v["file"] = out.display().to_string().into();
                v["bytes"] = size.into();
                v["seconds"] = started.elapsed().as_secs_f64().into();
                v["peak_memory_mb"] = peak.into();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!(
                    "{} games read ({} broken, {} without a result, {} left out for the shipped HOLD/VAL{})\n\
                     human test (HOLD) {} positions, VAL {}, TRAIN {} of {} candidates ({} left out for equalling a held-out position)\n\
                     → {} ({:.1} MB) in {:.0} s, peak memory {}",
                    report.games,
                    report.broken_games,
                    report.unfinished_games,
                    report.held_out_games,
                    if report.same_games_as_shipped { "" } else { "; not the shipped rows' book: games left out by equal positions only" },
                    report.human_test_positions,
                    report.human_val_positions,
                    report.train_positions,
                    report.train_candidates,
                    report.equal_to_held_out,
                    out.display(),
                    size as f64 / 1e6,
                    started.elapsed().as_secs_f64(),
                    peak.map(|mb| format!("{mb:.0} MB")).unwrap_or_else(|| "unknown".into()),
                );
            }
            Ok(())
        }
        DataCommand::Label { pgn, dataset, out, positions, depth, multipv, every_move, workers, seed, shards } => {
            use flychess::label::{DatasetLabelKey, LabelKey, LabelOptions, dataset_samples, label, sample};
            let crate::cli::cluster::ShardArgs { shard, merge_shards } = shards;
            let multipv = if every_move { flychess::label::EVERY_MOVE } else { multipv };
            if every_move && dataset.is_none() {
                return Err(anyhow!("--every-move labels a dataset's TRAIN rows: give --dataset NAME"));
            }
            let file = out.join("labels.jsonl");
            if let Some(count) = merge_shards {
                let (whole, lines, bytes) = flychess::label::merge_shards::<LabelKey>(&file, count as usize, "flychess data label")?;
                println!("{}: {lines} labelled positions joined from {count} parts ({bytes} bytes)", whole.display());
                return Ok(());
            }
            let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
            let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
            // Where the positions come from: a PGN's sample, or a dataset's TRAIN rows.
            let (samples, first_row, dataset_key) = match (&pgn, &dataset) {
                (_, Some(name)) => {
                    let path = dataset_path(name, data)?;
                    println!("reading the TRAIN rows of {}…", path.display());
                    let d = Dataset::load(&path)?;
                    let first_row = d.meta.hold + d.meta.val;
                    (dataset_samples(&d), first_row, Some(d.content_hash()))
                }
                (Some(pgn), None) => {
                    println!("sampling positions from {}…", pgn.display());
                    (sample(pgn, seed)?, 0, None)
                }
                (None, None) => return Err(anyhow!("data label needs --pgn FILE or --dataset NAME")),
            };
            let total = positions.min(samples.len());
            let start = |file: &Path, shard: flychess_fly::shard::Shard| -> Result<()> {
                let part = flychess_fly::shard::Part { shard, total };
                match (&dataset_key, &pgn) {
                    (Some(sha), _) => {
                        let key = DatasetLabelKey { dataset_sha256: sha.clone(), first_row, depth, multipv, every_move };
                        flychess_fly::shard::start_part(file, &key, part)?;
                    }
                    (None, Some(pgn)) => {
                        let key = LabelKey { pgn_sha256: flychess_brain::connectome::download::sha256_file(pgn)?, seed, depth, multipv };
                        flychess_fly::shard::start_part(file, &key, part)?;
                    }
                    (None, None) => unreachable!("a source was found above"),
                }
                Ok(())
            };
            let (file, range) = match shard {
                Some(shard) => {
                    let part_file = flychess_fly::shard::part_path(&file, shard);
                    start(&part_file, shard)?;
                    (part_file, shard.range(total))
                }
                None => {
                    // A dataset's labels carry their sidecar unsharded too: they name rows, not FENs.
                    if dataset_key.is_some() {
                        start(&file, flychess_fly::shard::Shard { index: 1, count: 1 })?;
                    }
                    (file, 0..total)
                }
            };
            println!(
                "{} positions sampled; labelling {} (positions {}..{} of {total}) with {} at depth {depth}, MultiPV {multipv}, {workers} engines",
                samples.len(),
                range.len(),
                range.start,
                range.end,
                stockfish.display()
            );
            let bar = ProgressBar::new(range.len() as u64);
            bar.set_style(
                ProgressStyle::with_template("labelling [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            let options = LabelOptions {
                first_index: first_row + range.start,
                depth,
                multipv,
                workers,
                positions: range.len(),
                seed,
                stockfish,
                compact: dataset_key.is_some(),
                every_move,
            };
            let done = label(&samples[range.clone()], &file, &options, &|d, _| bar.set_position(d as u64))?;
            bar.finish_and_clear();
            match shard {
                Some(shard) => println!(
                    "{done} positions labelled in {} (shard {shard}; join the parts with --merge-shards {})",
                    file.display(),
                    shard.count
                ),
                None => println!(
                    "{done} positions labelled in {} (import with `flychess data import --jsonl {} --out FILE.flyd`)",
                    file.display(),
                    file.display()
                ),
            }
            Ok(())
        }
        DataCommand::Curriculum {
            out,
            games,
            engine_labels,
            labels_searched,
            won,
            endgames,
            stalemates,
            depth,
            multipv,
            workers,
            seed,
            positions,
            json,
            own_games,
            own_player,
            own_lead,
            own_most,
            no_human_test,
            shards,
        } => {
            let dir = out.unwrap_or_else(|| flychess::finishing::default_dir(data));
            let games_path = dataset_path(&games, data)?;
            let own = if own_games.is_empty() {
                None
            } else {
                Some(OwnGamesRun { files: own_games, player: own_player, lead: own_lead, most: own_most })
            };
            let curriculum = CurriculumRun {
                dir,
                games_path,
                engine_labels,
                labels_searched,
                won,
                endgames,
                stalemates,
                depth,
                multipv,
                own,
                human_test: !no_human_test,
            };
            curriculum.run(workers, seed, positions, json, shards)
        }
        DataCommand::Import { jsonl, out, source, labeller } => {
            let file = std::fs::File::open(&jsonl).with_context(|| format!("opening {}", jsonl.display()))?;
            let reader: Box<dyn std::io::BufRead> = if jsonl.extension().is_some_and(|e| e == "zst") {
                Box::new(std::io::BufReader::new(zstd::stream::read::Decoder::new(file)?))
            } else {
                Box::new(std::io::BufReader::new(file))
            };
            let d = Dataset::from_jsonl(reader, &source, &labeller).with_context(|| format!("reading {}", jsonl.display()))?;
            d.save(&out)?;
            println!(
                "{} positions: HOLD {}, VAL {}, TRAIN {} → {} ({:.1} MB)",
                d.rows.len(),
                d.hold().len(),
                d.val().len(),
                d.train().len(),
                out.display(),
                std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0) as f64 / 1e6
            );
            Ok(())
        }
        DataCommand::Info { path, json } => {
            let path = path.unwrap_or_else(shipped_path);
            let d = Dataset::load(&path)?;
            let moves: usize = d.rows.iter().map(|r| r.moves.len()).sum();
            let v = serde_json::json!({
                "file": path.display().to_string(),
                "source": d.meta.source,
                "labeller": d.meta.labeller,
                "positions": d.rows.len(),
                "hold": d.hold().len(),
                "val": d.val().len(),
                "train": d.train().len(),
                "labelled_moves": moves,
            });
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!(
                    "{}: {} positions (HOLD {}, VAL {}, TRAIN {}), {} labelled moves\n  from {}\n  labelled by {}",
                    path.display(),
                    d.rows.len(),
                    d.hold().len(),
                    d.val().len(),
                    d.train().len(),
                    moves,
                    d.meta.source,
                    d.meta.labeller
                );
            }
            Ok(())
        }
    }
}

/// Fills (or resumes) the DN-rate cache of a brain over the shipped dataset.
/// Returns the cache and the brain file it belongs to.
pub fn cache(
    which: &WhichBrain,
    data: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    cache_of(which, data, &flychess_fly::data::shipped_path(), positions, batch, engine)
}

/// Which part of a cache job a run does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheJob {
    /// Every position, into the whole cache.
    Whole,
    /// One shard's positions into its part file.
    Shard(flychess_fly::shard::Shard),
    /// No thinking: the parts of a job cut this many ways joined into the whole cache.
    Merge(usize),
}

/// Fills (or resumes) the DN-rate cache of a brain over the dataset at `dataset` (its first
/// `positions` rows, default all), reading the rows off the file as it goes: memory is one batch
/// and the brain, whatever the dataset's size. Prints the speed, the bytes a position takes and
/// the peak memory.
pub fn cache_of(
    which: &WhichBrain,
    data: &Path,
    dataset: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    cache_job(which, data, dataset, positions, batch, engine, CacheJob::Whole)
}

/// `cache_of` for the whole cache, one shard of it (its positions `Shard::range` of the total into
/// `….part-I-of-N.dn`, resumable on its own), or the merge of the shards' parts into the whole
/// cache (refused, naming the file, when a part is missing, unfinished or of another job).
pub fn cache_job(
    which: &WhichBrain,
    data: &Path,
    dataset: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
    job: CacheJob,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    use flychess_fly::cache::{Cache, CacheMeta};
    use flychess_fly::data::Dataset;
    let spec = spec(which, data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    let stream = Dataset::stream(dataset)?;
    let meta = stream.meta.clone();
    let total = positions.unwrap_or(meta.rows).min(meta.rows);
    let descending = &loaded.connectome.groups.descending;
    let whole_meta = CacheMeta::of(
        &loaded.checksum,
        &flychess_brain::calibrate::fingerprint(brain.homeostasis()),
        &meta.source,
        meta.rows,
        &stream.content_hash()?,
        descending.len(),
    );
    let cache_dir = flychess_brain::files::DataFolder::at(data).cache();
    let whole = whole_meta.path_in(&cache_dir, &spec.name());
    let (meta, range) = match job {
        CacheJob::Whole => (whole_meta, 0..total),
        CacheJob::Shard(shard) => (whole_meta.part(shard, total), shard.range(total)),
        CacheJob::Merge(count) => {
            let started = Instant::now();
            let merged = Cache::merge(&Cache::part_files(&whole, count)).map_err(|e| match e {
                flychess_fly::Error::Invalid(m) if m.starts_with("no part files") => {
                    anyhow!("no part of this cache cut {count} ways is in {} (run `cache --shard I/{count}` first)", cache_dir.display())
                }
                e => e.into(),
            })?;
            if merged.cache.positions != total {
                return Err(anyhow!("the parts hold {} positions, {total} asked for", merged.cache.positions));
            }
            eprintln!(
                "{}: {} positions joined from {} parts ({:.1} MB in {:.2} s)",
                merged.cache.path.display(),
                merged.cache.positions,
                merged.parts,
                merged.bytes as f64 / 1e6,
                started.elapsed().as_secs_f64()
            );
            return Ok((merged.cache, loaded));
        }
    };
    let path = meta.path_in(&cache_dir, &spec.name());
    let mut cache = Cache::open(&path, meta)?;
    let want = range.len();
    if cache.positions >= want {
        eprintln!("{}: all {want} positions already cached", path.display());
        return Ok((cache, loaded));
    }
    let sim = Simulator::choose(engine, &brain)?;
    let batch = batch.unwrap_or_else(|| sim.preferred_batch());
    match job {
        CacheJob::Shard(shard) => eprintln!(
            "shard {shard}: positions {}..{} of {total}, thinking on the {}, {batch} positions at a time",
            range.start,
            range.end,
            sim.describe()
        ),
        _ => eprintln!("thinking on the {}, {batch} positions at a time", sim.describe()),
    }
    let bar = ProgressBar::new(want as u64);
    bar.set_style(
        ProgressStyle::with_template("caching DN rates [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(cache.positions as u64);
    let started = Instant::now();
    let from = cache.positions;
    let rows = Dataset::stream(dataset)?.skip(range.start);
    cache.fill_streamed(&sim, &brain, descending, rows, want, batch, &|done, _| bar.set_position(done as u64), &|| false)?;
    bar.finish_and_clear();
    let made = cache.positions - from;
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "{}: {} positions cached ({} new in {:.1} s, {:.1} positions/s, {}, batch {batch}); {} bytes a position ({:.2} GB in all); peak memory {}",
        path.display(),
        cache.positions,
        made,
        seconds,
        made as f64 / seconds,
        sim.describe(),
        2 * descending.len(),
        (cache.positions * 2 * descending.len()) as f64 / 1e9,
        peak_memory_mb().map(|mb| format!("{mb:.0} MB")).unwrap_or_else(|| "unknown".into()),
    );
    Ok((cache, loaded))
}

/// How long one fly move takes in play, plain and with imagination, for the first fly of this
/// brain found among the user's and the shipped flies (None when there is none).
fn fly_move_timing(brain: &Brain, loaded: &Loaded, data: &Path) -> Result<Option<serde_json::Value>> {
    use flychess_arena::players::Player;
    use flychess_fly::fly::Fly;
    let Some((_, path)) = flychess_fly::fly::trained_for(&loaded.checksum, data) else { return Ok(None) };
    let fly = Fly::load(&path)?;
    let pos = flychess_brain::chess::position_from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")?;
    let descending = &loaded.connectome.groups.descending;
    let player =
        |imagination: Option<f32>| Player::Fly { brain, readout: &fly.readout, descending, imagination, habituation: None, glances: None };
    let time = |imagination: Option<f32>| -> Result<f64> {
        let mut p = player(imagination);
        p.choose(&pos, &[])?; // warm-up
        let started = Instant::now();
        for _ in 0..3 {
            p.choose(&pos, &[])?;
        }
        Ok(started.elapsed().as_secs_f64() * 1000.0 / 3.0)
    };
    // The ladder's case: one fly move in each of the games it plays at once, asked for one after
    // another and then all at once from as many threads (their thinks go through the brain together).
    let games = flychess_arena::ladder::LadderOptions::default().workers;
    let positions: Vec<shakmaty::Chess> =
        sample_positions().into_iter().skip(300).filter(|p| !p.legal_moves().is_empty()).take(games).collect();
    let one_move = |pos: &shakmaty::Chess| player(None).choose(pos, &[]).map(|_| ());
    let started = Instant::now();
    for pos in &positions {
        one_move(pos)?;
    }
    let one_at_a_time = started.elapsed().as_secs_f64() * 1000.0 / positions.len() as f64;
    let start = std::sync::Barrier::new(positions.len());
    let started = Instant::now();
    std::thread::scope(|s| {
        let moves: Vec<_> = positions
            .iter()
            .map(|pos| {
                s.spawn(|| {
                    start.wait();
                    one_move(pos)
                })
            })
            .collect();
        moves.into_iter().try_for_each(|m| m.join().map_err(|_| anyhow!("a move's thread panicked"))?.map_err(anyhow::Error::from))
    })?;
    let at_once = started.elapsed().as_secs_f64() * 1000.0 / positions.len() as f64;
    use shakmaty::Position;
    Ok(Some(serde_json::json!({
        "fly": fly.meta.name,
        "ms": time(None)?,
        "ms_imagination": time(Some(1.0))?,
        "boards_imagined": pos.legal_moves().len(),
        "games_at_once": { "games": positions.len(), "ms_per_move": at_once, "ms_per_move_one_at_a_time": one_at_a_time },
    })))
}

/// `flychess bench --render`: frame time of the full point cloud at 1280×800, drawn offscreen by
/// the app's own renderer on the best adapter (a GPU, else lavapipe), with one real think's rates.
/// `bench --fit`: seconds a pass per million positions, GFLOP/s of the two products and the FMA
/// peak, for the new fit (`gemm_fit`) and the old (burn's autodiff on the CPU) over the same rows
/// in the same order, each pass timed in turn (old, new, old, new, …) so a busy machine slows both.
pub fn fit_bench(which: &WhichBrain, data: &Path, positions: usize, passes: usize, json: bool) -> Result<()> {
    use flychess_fly::cache::Reading;
    use flychess_fly::data::{Dataset, HOLD, VAL};
    use flychess_fly::readout::Readout;
    use flychess_learning::train::{BatchStep, FitOptions, InMemory, Target, TrainSet};
    if positions == 0 || passes == 0 {
        return Err(anyhow!("bench --fit needs at least one position and one pass"));
    }
    let dataset = Dataset::load(&flychess_fly::data::shipped_path())?;
    let n = positions.min(dataset.train().len());
    let (cache, _) = cache(which, data, Some(HOLD + VAL + n), None, EngineChoice::Auto)?;
    let x = cache.read(HOLD + VAL..HOLD + VAL + n, Reading::Mean9To12)?;
    let targets: Vec<Target> = crate::cli::fly::targets(&dataset.train()[..n])?;
    let inputs = cache.meta.descending;
    let options = FitOptions::default();
    let start = Readout::newborn(inputs, vec![8, 9, 10, 11], options.seed);
    let peaks = flychess_brain::brain::peaks::measure();
    // The two products of a step: out = X·Wᵀ and deltaᵀ·X, 2·n·d·134 FLOPs each.
    let flops = 4.0 * n as f64 * inputs as f64 * flychess_fly::readout::OUTPUTS as f64;
    let mut gemm = flychess_learning::gemm_fit::GemmFit::new(&start);
    let mut burn = flychess_learning::burn_fit::BurnFit::on(&start, flychess_learning::burn_device::FitOn::Cpu)?;
    let mut set_new = InMemory::new(&x, &targets, inputs, options.seed);
    let mut set_old = InMemory::new(&x, &targets, inputs, options.seed);
    let (mut new_s, mut old_s) = (Vec::new(), Vec::new());
    let bar = ProgressBar::new(2 * passes as u64);
    bar.set_style(ProgressStyle::with_template("timing the fits [{bar:30}] {pos}/{len} passes {elapsed}").expect("valid template"));
    for _ in 0..passes {
        let started = Instant::now();
        set_old.pass(options.batch, &mut |x, t| burn.step(std::mem::take(x), t, options.learning_rate))?;
        old_s.push(started.elapsed().as_secs_f64());
        bar.inc(1);
        let started = Instant::now();
        let step: &mut BatchStep = &mut |x, t| gemm.step(x, t, options.learning_rate);
        set_new.pass(options.batch, step)?;
        new_s.push(started.elapsed().as_secs_f64());
        bar.inc(1);
    }
    bar.finish_and_clear();
    // The median pass of each (the first pass of either pays its warm-up too).
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (new, old) = (median(&mut new_s.clone()), median(&mut old_s.clone()));
    let figures = |seconds: f64, each: &[f64]| {
        serde_json::json!({
            "seconds_per_pass": seconds,
            "seconds_per_pass_per_million_positions": seconds * 1e6 / n as f64,
            "gflops": flops / seconds / 1e9,
            "passes_seconds": each,
        })
    };
    let mut fit = figures(new, &new_s);
    fit["fma_peak_gflops"] = serde_json::json!(peaks.fma_gflop_per_s);
    fit["share_of_fma_peak"] = serde_json::json!(flops / new / 1e9 / peaks.fma_gflop_per_s);
    fit["old"] = figures(old, &old_s);
    fit["old"]["kernel"] = serde_json::json!("burn (autodiff, ndarray) on the CPU");
    fit["kernel"] = serde_json::json!("two GEMMs a block of 1,024 positions, one block a task (gemm crate, rayon)");
    fit["speedup"] = serde_json::json!(old / new);
    fit["positions"] = serde_json::json!(n);
    fit["inputs"] = serde_json::json!(inputs);
    fit["batch"] = serde_json::json!(options.batch);
    fit["threads"] = serde_json::json!(rayon::current_num_threads());
    fit["fma_instructions"] = serde_json::json!(peaks.fma_instructions);
    if json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "fit": fit }))?);
    } else {
        println!(
            "the readout fit over {n} cached positions ({inputs} inputs, batch {}), median of {passes} passes each, timed in turn:\n\
             \x20 new (two GEMMs a batch): {:.1} s a pass per million positions, {:.1} GFLOP/s ({:.0} % of the FMA peak, {:.1} GFLOP/s)\n\
             \x20 old (burn's autodiff):    {:.1} s a pass per million positions, {:.1} GFLOP/s\n\
             \x20 speedup {:.2}x",
            options.batch,
            new * 1e6 / n as f64,
            flops / new / 1e9,
            100.0 * flops / new / 1e9 / peaks.fma_gflop_per_s,
            peaks.fma_gflop_per_s,
            old * 1e6 / n as f64,
            flops / old / 1e9,
            old / new
        );
    }
    Ok(())
}

pub fn render_bench(which: &WhichBrain, data: &Path, json: bool) -> Result<()> {
    use flychess_render::camera::OrbitCamera;
    use flychess_render::cloud::{CloudGeometry, CloudRenderer, ColourMode, OFFSCREEN_FORMAT, Offscreen, Rates, ViewSettings};
    let spec = spec(which, data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    let rates = cpu::think(&brain, &[planes(&shakmaty::Chess::default())]);
    let regions: Vec<u8> = loaded.connectome.neurons.region.iter().map(|r| *r as u8).collect();
    let geometry = CloudGeometry::new(&loaded.connectome.neurons.soma_um, &regions);
    let drawn = geometry.placed().count();
    let d = gpu_engine::headless_device().map_err(|e| anyhow!("no wgpu adapter to render with: {e}"))?;
    let size = [1280u32, 800u32];
    let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &geometry);
    cloud.upload_rates(&d.queue, &rates.data);
    let camera = OrbitCamera::framing(&geometry.placed().collect::<Vec<_>>());
    let view = ViewSettings {
        view_proj: camera.view_projection(size[0] as f32 / size[1] as f32),
        viewport_px: [size[0] as f32, size[1] as f32],
        point_px: [1.2, 3.2],
        ghost: 0.08,
        rate_scale: 1.0,
        mode: ColourMode::Activity,
        white_background: false,
    };
    let target = Offscreen::new(&d.device, size);
    let frame = |step: usize| -> Result<()> {
        target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, step, [0.03, 0.03, 0.055, 1.0]);
        d.device.poll(wgpu_types_poll()).map(|_| ()).map_err(|e| anyhow!("GPU wait failed: {e}"))
    };
    frame(11)?;
    frame(11)?;
    // As many frames as fit in about 3 s (at least 5, at most 240), each waited to completion.
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (times.len() < 240 && start.elapsed().as_secs_f64() < 3.0) {
        let t = Instant::now();
        frame(times.len() % 12)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let report = serde_json::json!({
        "adapter": d.adapter_name,
        "width": size[0],
        "height": size[1],
        "neurons_drawn": drawn,
        "frames": times.len(),
        "ms_per_frame_mean": mean,
        "ms_per_frame_median": times[times.len() / 2],
        "ms_per_frame_min": times[0],
        "frames_per_second": 1000.0 / mean,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} neurons at {}x{} on {}: {:.2} ms per frame (median {:.2}, min {:.2}, {} frames) = {:.0} frames/s",
            drawn,
            size[0],
            size[1],
            d.adapter_name,
            mean,
            times[times.len() / 2],
            times[0],
            times.len(),
            1000.0 / mean
        );
    }
    Ok(())
}

fn wgpu_types_poll() -> flychess_render::wgpu::PollType {
    flychess_render::wgpu::PollType::Wait { submission_index: None, timeout: None }
}

#[derive(Subcommand)]
pub enum BrainCommand {
    /// Summary of a brain (building it first when needed).
    Info {
        #[command(flatten)]
        which: WhichBrain,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Build a brain from its tables, even when an up-to-date file exists.
    Build {
        #[command(flatten)]
        which: WhichBrain,
    },
    /// Download a release's tables (resumable; checked): MaleCNS v1.0 (size and sha256 pinned) or
    /// the full FlyWire v783 (checked against what Zenodo and the Codex bucket state).
    Download {
        /// Which release: malecns or flywire783.
        #[arg(long, value_enum, default_value_t = Release::Malecns)]
        release: Release,
        /// Where to put them. Default: DATA/connectome/malecns-v1.0 or DATA/connectome/flywire783.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// MaleCNS: base address of the tables (a mirror, or a local server in tests).
        #[arg(long, default_value = flychess_brain::connectome::release::BASE_URL)]
        base_url: String,
        /// FlyWire: the Zenodo record's API address (its file list with sizes and md5 sums).
        #[arg(long, default_value = flychess_brain::connectome::flywire_release::ZENODO_RECORD)]
        record_url: String,
        /// FlyWire: the Codex bucket holding the classification and neuron tables.
        #[arg(long, default_value = flychess_brain::connectome::flywire_release::CODEX_BASE)]
        codex_url: String,
        /// Resume this many times after a dropped connection.
        #[arg(long, default_value_t = 8)]
        attempts: u32,
    },
    /// How much the board changes each region's rates, step by step, on 48 real positions.
    Signal {
        #[command(flatten)]
        which: WhichBrain,
        #[arg(long)]
        json: bool,
        /// Measure homeostasis with "calm unreached" (σ = 1 where the input never moves).
        #[arg(long)]
        calm_unreached: bool,
    },
    /// The 12 steps of rates for positions, as a long Feather table (position, step, neuron,
    /// root_id, rate: one row each), on the CPU engine: what `import flychess`'s
    /// `export_think` writes (the same floats, bit for bit).
    Think {
        #[command(flatten)]
        which: WhichBrain,
        /// A position (FEN); give --fen again for more.
        #[arg(long = "fen", required = true)]
        fens: Vec<String>,
        /// The steps, 1-based and comma-separated (default: all 12).
        #[arg(long, value_delimiter = ',')]
        steps: Vec<usize>,
        /// Only these neurons, by index, comma-separated (default: all; only the rows they
        /// depend on are worked out).
        #[arg(long, value_delimiter = ',')]
        neurons: Vec<u32>,
        /// The Feather file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the synthetic stand-in's three tables (the release's schema) into a folder.
    Generate {
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = flychess_brain::connectome::synthetic::DEFAULT_SEED)]
        seed: u64,
    },
}
#[derive(Subcommand)]
pub enum DataCommand {
    /// Convert labelled positions in JSONL (plain or .zst: fen, game, ply, legal, moves[uci, cp,
    /// mate, wdl]) into the project's dataset format, keeping their order (HOLD, VAL, TRAIN).
    Import {
        #[arg(long)]
        jsonl: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Where the positions come from (kept in the file).
        #[arg(long, default_value = "book_1.02.pgn (Debian gnuchess-book), one or two positions per game")]
        source: String,
        /// Who labelled them (kept in the file).
        #[arg(long, default_value = "Stockfish 15.1, 1 thread, 32 MB hash, MultiPV 8, depth 10")]
        labeller: String,
    },
    /// Sample positions from real games in a PGN file (one per game, sometimes two, at a random
    /// ply; duplicates and finished positions skipped; shuffled) and label them with Stockfish
    /// (MultiPV 8 at a fixed depth, one engine per worker) into DIR/labels.jsonl, the format
    /// `data import` reads. Resumable: a killed run continues after its last complete line.
    ///
    /// With --dataset instead of --pgn: Stockfish's own moves for the TRAIN rows of a dataset
    /// (e.g. `games-1200k`, whose rows carry the master's move), in the dataset's order, as lines
    /// naming their row (`i`) without the FEN; `--multipv 1` gives the best move alone (about 60
    /// positions a second a core at depth 10).
    Label {
        #[arg(long, required_unless_present = "dataset", conflicts_with = "dataset")]
        pgn: Option<PathBuf>,
        /// A dataset whose TRAIN rows to label: a name (DATA/datasets/NAME.flyd) or a .flyd path.
        #[arg(long)]
        dataset: Option<String>,
        #[arg(long)]
        out: PathBuf,
        /// How many positions to label (the first ones of the shuffled sample, or of the dataset's
        /// TRAIN rows).
        #[arg(long, default_value_t = 10_000)]
        positions: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long, default_value_t = 8)]
        multipv: usize,
        /// Every legal move of each position scored (Stockfish's whole opinion, the seed's
        /// teacher: `train --teacher every-move`); a dataset's rows only.
        #[arg(long, conflicts_with = "multipv")]
        every_move: bool,
        /// Engines run at once (default: one per core).
        #[arg(long)]
        workers: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        shards: crate::cli::cluster::ShardArgs,
    },
    /// The curriculum of finishing (issue 56): won positions whose moves Stockfish ranks by
    /// centipawns and distance to mate, so the quickest win is the target. Won TRAIN positions of
    /// a games dataset (by its engine labels), the dataset's human-test positions (held out),
    /// random basic won endgames (KQ-K, KR-K, KRR-K, KBB-K, KQ against a minor piece, a pawn to
    /// promote) and stalemate lessons (a move stalemates; the target is the best one that does
    /// not); a tenth of the made positions held out. Labelled into DIR/labels.jsonl (resumable,
    /// sharded like `data label`), then built into DIR/curriculum.flyd for `train --curriculum`
    /// and `eval` (`fastest_win`).
    Curriculum {
        /// Where the curriculum goes (default: DATA/curriculum).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The games dataset its game positions come from (a name or a .flyd path).
        #[arg(long, default_value = "games-1200k")]
        games: String,
        /// Stockfish's moves for that dataset's TRAIN rows (`data label --dataset`), searched for
        /// won positions; without them only the held-out human-test positions come from games.
        #[arg(long)]
        engine_labels: Option<PathBuf>,
        /// Engine labels searched (the first ones; there must be this many).
        #[arg(long, default_value_t = 400_000)]
        labels_searched: usize,
        /// Won TRAIN positions taken (at most).
        #[arg(long, default_value_t = 12_000)]
        won: usize,
        /// Random positions of each basic endgame.
        #[arg(long, default_value_t = 5_000)]
        endgames: usize,
        #[arg(long, default_value_t = 10_000)]
        stalemates: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        /// Stockfish's best moves ranked per position.
        #[arg(long, default_value_t = 8)]
        multipv: usize,
        /// Engines run at once (default: one per core).
        #[arg(long)]
        workers: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Label at most this many of the planned positions (default: all); the dataset is
        /// built from what is labelled.
        #[arg(long)]
        positions: Option<usize>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// A fly's own games (a games file `duel` or `rate` wrote; repeat for more): the positions
        /// where the fly of --own-player, to move, is --own-lead points ahead become lessons,
        /// a tenth of the games held out whole (imitation learning's DAgger).
        #[arg(long = "own-games", value_name = "FILE")]
        own_games: Vec<PathBuf>,
        /// The player of --own-games by its name in those games (one player id must answer to it).
        #[arg(long, default_value = "flywire")]
        own_player: String,
        /// Material ahead (pawn 1, knight and bishop 3, rook 5, queen 9) for a position of the own
        /// games to be taken.
        #[arg(long, default_value_t = 5)]
        own_lead: i32,
        /// Positions of the own games taken at most (a seeded sample).
        #[arg(long, default_value_t = 8_000)]
        own_most: usize,
        /// Leave out the games dataset's human-test positions (held-out won positions of real games).
        #[arg(long)]
        no_human_test: bool,
        #[command(flatten)]
        shards: crate::cli::cluster::ShardArgs,
    },
    /// Summary of a dataset (default: the one shipped with the project).
    Info {
        path: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Training positions from real games, labelled for free: every position of every game
    /// before a move, with the move the master played and the game's result (mover's side). The
    /// games of the shipped HOLD/VAL rows and every position equal to one are left out; 4,096
    /// games no shipped row came from give the human test (the new dataset's HOLD, one position
    /// a game) and 2,048 more its VAL. Streams the PGN (plain or .zst) twice; resumable (parts
    /// beside the output); a broken or unfinished game is skipped and counted.
    Games {
        /// The games (default: the book the shipped positions came from,
        /// sim/brain/data/games/book_1.02.pgn.zst in a checkout).
        pgn: Option<PathBuf>,
        /// A name (the file goes to DATA/datasets/NAME.flyd) or a path ending in .flyd.
        #[arg(long)]
        out: String,
        /// A seeded sample of this many TRAIN positions (default: all of them, about 10 million).
        #[arg(long)]
        positions: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Games whose one position each makes the human test (the dataset's HOLD).
        #[arg(long, default_value_t = flychess::game_positions::HUMAN_TEST_GAMES)]
        human_games: usize,
        /// Games whose one position each makes the dataset's VAL.
        #[arg(long, default_value_t = flychess::game_positions::HUMAN_VAL_GAMES)]
        val_games: usize,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Where a dataset named on the command line lives: a path ending in .flyd as it is, else
/// `DATA/datasets/NAME.flyd`.
pub fn dataset_path(name: &str, data: &Path) -> Result<PathBuf> {
    if name.ends_with(".flyd") {
        return Ok(PathBuf::from(name));
    }
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(anyhow!("{name:?} is neither a dataset name (letters, digits, - and _) nor a path ending in .flyd"));
    }
    Ok(flychess_brain::files::DataFolder::at(data).datasets().join(format!("{name}.flyd")))
}

/// The games PGN of a checkout (the book the shipped positions came from).
pub fn book_pgn() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/brain/data/games/book_1.02.pgn.zst")
}
// The arguments of `flychess cache` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct CacheArgs {
    /// How many positions (in dataset order: HOLD, VAL, then TRAIN). Default: all.
    #[arg(long)]
    pub positions: Option<usize>,
    /// The dataset: a name (DATA/datasets/NAME.flyd, e.g. from `flychess data games`) or a
    /// path ending in .flyd. Default: the shipped positions.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Positions per think (default: 32 on the CPU engine, a few thousand on a GPU).
    #[arg(long)]
    pub batch: Option<usize>,
    #[command(flatten)]
    pub shards: crate::cli::cluster::ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

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

/// `data curriculum --own-games`: the files, the player's name in them, the lead and the cap.
struct OwnGamesRun {
    files: Vec<PathBuf>,
    player: String,
    lead: i32,
    most: usize,
}

impl OwnGamesRun {
    /// The games and the plan's key for them: the files' content hash and the one player id
    /// that answers to the name (refused when none or several do).
    fn read(&self) -> Result<(Vec<flychess_arena::ladder::GameRow>, flychess::finishing::OwnGames)> {
        let mut texts = Vec::new();
        let mut games = Vec::new();
        for f in &self.files {
            let text = std::fs::read_to_string(f).with_context(|| format!("reading the own games {}", f.display()))?;
            games.extend(flychess_arena::ladder::games_in_text(&text, f)?);
            texts.push(text.into_bytes());
        }
        let ids: std::collections::BTreeSet<&str> = games
            .iter()
            .flat_map(|g| [(&g.white, &g.white_id), (&g.black, &g.black_id)])
            .filter(|(name, id)| **name == self.player && !id.is_empty())
            .map(|(_, id)| id.as_str())
            .collect();
        let player_id = match ids.len() {
            1 => ids.into_iter().next().expect("one").to_string(),
            0 => return Err(anyhow!("no game of the own games is played by a player named {:?}", self.player)),
            _ => {
                return Err(anyhow!(
                    "{} different players are named {:?} in the own games ({}); give files of one of them",
                    ids.len(),
                    self.player,
                    ids.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        };
        let key = flychess::finishing::OwnGames {
            games_sha256: flychess::finishing::games_files_sha256(&texts),
            player_id,
            lead: self.lead,
            most: self.most,
        };
        Ok((games, key))
    }
}

/// `data curriculum` (`flychess::finishing`): plan, label, build.
struct CurriculumRun {
    own: Option<OwnGamesRun>,
    human_test: bool,
    dir: PathBuf,
    games_path: PathBuf,
    engine_labels: Option<PathBuf>,
    labels_searched: usize,
    won: usize,
    endgames: usize,
    stalemates: usize,
    depth: u32,
    multipv: usize,
}

impl CurriculumRun {
    fn run(
        self,
        workers: Option<usize>,
        seed: u64,
        positions: Option<usize>,
        json: bool,
        shards: crate::cli::cluster::ShardArgs,
    ) -> Result<()> {
        use flychess::finishing::{CurriculumKey, Plan, build, plan, positions as planned_positions};
        use flychess::label::{LabelOptions, label};
        use flychess_fly::data::Dataset;
        let crate::cli::cluster::ShardArgs { shard, merge_shards } = shards;
        let file = self.dir.join("labels.jsonl");
        let labeller = format!("Stockfish, 1 thread, MultiPV {}, depth {}", self.multipv, self.depth);
        if let Some(count) = merge_shards {
            let (whole, lines, bytes) = flychess::label::merge_shards::<CurriculumKey>(&file, count as usize, "flychess data curriculum")?;
            eprintln!("{}: {lines} labelled positions joined from {count} parts ({bytes} bytes)", whole.display());
        }
        eprintln!("reading {}…", self.games_path.display());
        let games = Dataset::load(&self.games_path)?;
        let sha = games.content_hash();
        let labels = match &self.engine_labels {
            Some(dir) => {
                let l = flychess_learning::teacher::EngineLabels::read(dir, &sha, self.labels_searched)?;
                if l.labels.len() < self.labels_searched {
                    return Err(anyhow!(
                        "{} holds {} whole lines of labels; search that many with --labels-searched {} (the plan must not change as labels arrive)",
                        dir.display(),
                        l.labels.len(),
                        l.labels.len()
                    ));
                }
                Some(l)
            }
            None => None,
        };
        let (own_rows, own) = match &self.own {
            Some(o) => {
                let (rows, key) = o.read()?;
                (rows, Some(key))
            }
            None => (Vec::new(), None),
        };
        let the_plan = Plan {
            games_sha256: sha,
            labels_searched: if labels.is_some() { self.labels_searched } else { 0 },
            won: if labels.is_some() { self.won } else { 0 },
            endgames: self.endgames,
            stalemates: self.stalemates,
            seed,
            own,
            human_test: self.human_test,
        };
        let (planned, fresh) = planned_positions(&self.dir, &the_plan, || plan(&games, labels.as_ref(), &the_plan, &own_rows))?;
        drop(games);
        let mut origins = std::collections::BTreeMap::<&str, (usize, usize)>::new();
        for p in &planned {
            let c = origins.entry(p.origin.as_str()).or_default();
            if p.held { c.0 += 1 } else { c.1 += 1 }
        }
        eprintln!(
            "{} {} positions in {} (held out / trained on): {}",
            if fresh { "planned" } else { "read back" },
            planned.len(),
            self.dir.display(),
            origins.iter().map(|(o, (h, t))| format!("{o} {h}/{t}")).collect::<Vec<_>>().join(", ")
        );
        // The labels' sidecar names the whole plan; --positions only says how far this run goes.
        let total = planned.len();
        let stop = positions.unwrap_or(total).min(total);
        let key = CurriculumKey { plan: the_plan, depth: self.depth, multipv: self.multipv };
        let samples: Vec<flychess::label::Sample> = planned.iter().map(|p| p.sample()).collect();
        if merge_shards.is_none() {
            let (label_file, range) = match shard {
                Some(shard) => {
                    let part_file = flychess_fly::shard::part_path(&file, shard);
                    flychess_fly::shard::start_part(&part_file, &key, flychess_fly::shard::Part { shard, total })?;
                    (part_file, shard.range(total))
                }
                None => {
                    flychess_fly::shard::start_part(
                        &file,
                        &key,
                        flychess_fly::shard::Part { shard: flychess_fly::shard::Shard { index: 1, count: 1 }, total },
                    )?;
                    (file.clone(), 0..stop)
                }
            };
            let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
            let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
            let bar = ProgressBar::new(range.len() as u64);
            bar.set_style(
                ProgressStyle::with_template("curriculum [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            let options = LabelOptions {
                first_index: range.start,
                depth: self.depth,
                multipv: self.multipv,
                workers,
                positions: range.len(),
                seed,
                stockfish,
                compact: false,
                every_move: false,
            };
            let done = label(&samples[range.clone()], &label_file, &options, &|d, _| bar.set_position(d as u64))?;
            bar.finish_and_clear();
            if let Some(shard) = shard {
                eprintln!(
                    "{done} positions labelled in {} (shard {shard}; join with --merge-shards {})",
                    label_file.display(),
                    shard.count
                );
                return Ok(());
            }
        }
        let built = build(&self.dir, &planned, &labeller)?;
        if json {
            println!("{}", serde_json::to_string_pretty(&built)?);
        } else {
            println!(
                "{}: {} of {} labelled positions are won for the mover; {} held out, {} to train on. By kind (held out / train): {}. By origin: {}",
                built.path.display(),
                built.won,
                built.labelled,
                built.held_out,
                built.train,
                built.by_kind.iter().map(|(k, (h, t))| format!("{k} {h}/{t}")).collect::<Vec<_>>().join(", "),
                built.by_origin.iter().map(|(k, (h, t))| format!("{k} {h}/{t}")).collect::<Vec<_>>().join(", ")
            );
        }
        Ok(())
    }
}
