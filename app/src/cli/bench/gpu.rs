//! The GPU engine's part of `flychess bench` on the best adapter: for each batch, the cache's job
//! (the 12 steps, the descending neurons of steps 9–12 read back) timed like the CPU rows, its
//! device memory counted, its rates checked against the CPU engine within what rounding explains
//! on this brain, and where one think's time goes; then the largest batch at other slab sizes,
//! one position an invocation, and every row worked out against only the rows the readout needs.

use anyhow::Result;

use flychess_brain::brain::simulator::read_on_cpu;
use flychess_brain::brain::{Brain, STEPS, agreement, gpu as gpu_engine};
use flychess_brain::chess::Planes;

use super::cpu::timed_runs;

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
pub fn gpu_report(brain: &Brain, descending: &[u32], boards: &[Planes], batches: &[usize]) -> Result<serde_json::Value> {
    let d = match gpu_engine::headless_device() {
        Err(e) => return Ok(serde_json::json!({ "adapter": null, "note": format!("no GPU engine: {e}") })),
        Ok(d) => d,
    };
    let limits = d.device.limits();
    let (name, hardware) = (d.adapter_name.clone(), d.hardware);
    let mut engine = gpu_engine::GpuEngine::new(d.device, d.queue, brain)?;
    // What rounding alone explains on this brain, thought once for the largest sample checked.
    let most = batches.iter().copied().max().unwrap_or(1).min(256).min(boards.len());
    let bench = GpuBench {
        brain,
        descending,
        boards,
        read_steps: (STEPS - 4..STEPS).collect(),
        checked: checked_neurons(brain, descending),
        nudged: agreement::Nudged::think(brain, &boards[..most]),
    };
    let runs = batches.iter().map(|&batch| bench.row(&mut engine, batch)).collect::<Result<Vec<_>>>()?;
    let largest = batches.iter().copied().max().unwrap_or(1);
    let (default_slab, fits) = engine.slab_limits();
    let sweep = bench.slab_sweep(&mut engine, largest)?;
    let needed_rows = bench.needed_rows(&mut engine, largest)?;
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

/// What every GPU row is measured against: the boards, the descending neurons read back at
/// steps 9–12, the neurons checked against the CPU engine, and what rounding alone explains.
struct GpuBench<'a> {
    brain: &'a Brain,
    descending: &'a [u32],
    boards: &'a [Planes],
    read_steps: Vec<usize>,
    checked: Vec<u32>,
    nudged: agreement::Nudged,
}

impl GpuBench<'_> {
    /// One batch's row: its speed, slabs, device memory, phases, and its rates against the CPU
    /// engine's (with `failed` where a step parts further than rounding explains).
    fn row(&self, engine: &mut gpu_engine::GpuEngine, batch: usize) -> Result<serde_json::Value> {
        let (brain, descending, boards) = (self.brain, self.descending, self.boards);
        let (read_steps, checked) = (self.read_steps.as_slice(), self.checked.as_slice());
        let all_steps: Vec<usize> = (0..STEPS).collect();
        let (slab, slabs) = engine.plan(batch);
        // The check first (it also warms the pipeline and the buffers up).
        let on_gpu = engine.read(&boards[..batch], checked, &all_steps)?;
        let on_cpu = read_on_cpu(brain, &boards[..batch], checked, &all_steps)?;
        let difference = on_gpu.iter().zip(&on_cpu).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        // Steps 1-6 alone: where rounding has not yet been grown by a brain's sensitive neurons
        // (FlyWire has a few that amplify lavapipe's unfused fma threefold a step).
        let first_half: Vec<usize> = (0..STEPS / 2).collect();
        let early_gpu = engine.read(&boards[..batch], checked, &first_half)?;
        let early_cpu = read_on_cpu(brain, &boards[..batch], checked, &first_half)?;
        let early = early_gpu.iter().zip(&early_cpu).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        let apart = on_gpu.iter().zip(&on_cpu).filter(|(a, b)| (*a - *b).abs() > 1e-4).count();
        // The check: per step, against what rounding alone explains on this brain (the CPU
        // engine against itself with every μ one ulp off, on the same boards: `agreement`).
        let sample = batch.min(256);
        let envelope = self.nudged.envelope(sample, checked);
        let k = checked.len();
        let by_step: [f32; STEPS] = std::array::from_fn(|t| {
            (0..sample)
                .flat_map(|p| (0..k).map(move |i| (p * STEPS + t) * k + i))
                .map(|x| (on_gpu[x] - on_cpu[x]).abs())
                .fold(0f32, f32::max)
        });
        let past = agreement::first_step_past(&by_step, &envelope);
        let mut row = timed_runs("gpu", batch, boards, |chunk| {
            std::hint::black_box(engine.read(chunk, descending, read_steps)?);
            Ok(())
        })?;
        engine.set_profiling(true);
        engine.take_phases();
        engine.read(&boards[..batch], descending, read_steps)?;
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
        Ok(row)
    }

    /// The largest batch's speed at the engine's settings now: one warm-up read (buffers of the
    /// new size), then timed reads.
    fn largest_reads(&self, engine: &mut gpu_engine::GpuEngine, largest: usize) -> Result<serde_json::Value> {
        engine.read(&self.boards[..largest], self.descending, &self.read_steps)?;
        let r = timed_runs("gpu", largest, self.boards, |chunk| {
            std::hint::black_box(engine.read(chunk, self.descending, &self.read_steps)?);
            Ok(())
        })?;
        Ok(r["positions_per_second"].clone())
    }

    /// The largest batch at other slab sizes (what DEFAULT_SLAB is chosen from), and at the
    /// default slab with one position to an invocation (the `step` kernel).
    fn slab_sweep(&self, engine: &mut gpu_engine::GpuEngine, largest: usize) -> Result<Vec<serde_json::Value>> {
        let (default_slab, fits) = engine.slab_limits();
        let mut sweep = Vec::new();
        for slab in [8usize, 16, 32, 64, 128, 256, 512] {
            if slab > fits || slab > largest {
                continue;
            }
            engine.set_slab_limit(slab);
            sweep.push(serde_json::json!({ "slab": slab, "batch": largest, "positions_per_second": self.largest_reads(engine, largest)? }));
        }
        engine.set_slab_limit(default_slab);
        engine.set_four_at_a_time(false);
        let one = self.largest_reads(engine, largest)?;
        engine.set_four_at_a_time(true);
        sweep.push(serde_json::json!({ "slab": engine.plan(largest).0, "batch": largest, "positions_per_second": one, "one_position_an_invocation": true }));
        Ok(sweep)
    }

    /// Every row worked out at every step, against the default (only the rows the descending
    /// neurons of steps 9-12 need): timed in this run, the readings compared bit for bit.
    fn needed_rows(&self, engine: &mut gpu_engine::GpuEngine, largest: usize) -> Result<serde_json::Value> {
        let (boards, descending, read_steps) = (self.boards, self.descending, self.read_steps.as_slice());
        let rows_only = engine.read(&boards[..largest], descending, read_steps)?;
        engine.set_rows_only(false);
        let every_row = engine.read(&boards[..largest], descending, read_steps)?;
        let every_row_speed = self.largest_reads(engine, largest)?;
        engine.set_rows_only(true);
        let needed_speed = self.largest_reads(engine, largest)?;
        Ok(serde_json::json!({
            "batch": largest,
            "needed_rows_positions_per_second": needed_speed,
            "every_row_positions_per_second": every_row_speed,
            "speedup": needed_speed.as_f64().zip(every_row_speed.as_f64()).map(|(a, b)| a / b),
            "identical_readings": rows_only.iter().map(|x| x.to_bits()).eq(every_row.iter().map(|x| x.to_bits())),
            "share_of_rows_by_step": self.brain.needed_rows(descending, STEPS - 4).walked_share(),
        }))
    }
}
