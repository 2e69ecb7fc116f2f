//! The CPU engine's part of `flychess bench`: the boards it thinks about, each batch's speed and
//! memory (`rows`), the engine's exact shortcuts on one position, the memory goal of a brain and a
//! batch, and how far the engine is from this machine's limits in each of its layouts.

use std::time::Instant;

use anyhow::{Result, anyhow};

use flychess_brain::brain::{Brain, STEPS, cpu};
use flychess_brain::chess::{Planes, planes, sample_positions};

use crate::cli::memory::{peak_memory_mb, status_mb};

/// Times `think` on successive batches of `boards`: at least 2 runs and 8 positions, then more
/// until 2 s have passed (20 s at most). One JSON row of the bench report.
pub fn timed_runs(
    engine: &str,
    batch: usize,
    boards: &[Planes],
    mut think: impl FnMut(&[Planes]) -> Result<()>,
) -> Result<serde_json::Value> {
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

/// The CPU engine's rows: each batch timed (`timed_runs`) with the memory its thinks took above
/// what was in use before (the peak resident set over the runs, where Linux lets it be reset).
pub fn rows(brain: &Brain, boards: &[Planes], batches: &[usize]) -> Result<Vec<serde_json::Value>> {
    let mut rows = Vec::new();
    for &batch in batches {
        // The peak resident set over the runs, above what was in use before: the think's memory.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = status_mb("VmRSS:");
        let mut row = timed_runs("cpu", batch, boards, |chunk| {
            if batch == 1 {
                // A move in play keeps all 12 steps for the viewer.
                std::hint::black_box(cpu::think(brain, chunk));
            } else {
                cpu::run(brain, chunk, |_, r| {
                    std::hint::black_box(r);
                });
            }
            Ok(())
        })?;
        row["job"] = serde_json::json!(if batch == 1 { "12 steps, all kept" } else { "12 steps, two buffers" });
        row["memory_mb"] = serde_json::json!(if reset { before.zip(peak_memory_mb()).map(|(b, p)| p - b) } else { None });
        rows.push(row);
    }
    Ok(rows)
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
pub fn memory_report(brain: &Brain, boards: &[Planes]) -> serde_json::Value {
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
pub fn shortcut_report(brain: &Brain, board: &[Planes], descending: &[u32]) -> serde_json::Value {
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
pub fn bench_boards(largest: usize) -> Result<Vec<Planes>> {
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
pub fn engine_report(brain: &Brain, boards: &[Planes], descending: &[u32], batches: &[usize]) -> Result<serde_json::Value> {
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
