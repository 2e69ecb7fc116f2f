//! `flychess bench` as text: the report the engine bench builds (`super::engines`), printed a
//! section a function, in the order the JSON keeps them: the CPU and GPU rows, the GPU's slab
//! sweep, the scipy reference, the blank-board shortcut and the memory goal, a fly's move, the
//! CPU engine against this machine's peaks, and the adapter and peak memory.

use flychess_brain::brain::Brain;
use serde_json::Value;

use crate::cli::memory::peak_memory_mb;

/// The whole report as text (`rows`: the CPU engine's rows, then the GPU's from the report).
pub fn print(report: &Value, rows: &[Value], brain: &Brain) {
    println!(
        "{} — {} neurons, {} connections, {} threads",
        report["brain"].as_str().unwrap_or(""),
        brain.neurons,
        brain.connections(),
        report["threads"]
    );
    runs(report, rows);
    slab_sweep(report);
    reference(report);
    shortcut_and_memory(report);
    fly_move(report);
    cpu_engine(report);
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

/// Each CPU and GPU row: its speed, memory, and for the GPU its slabs, phases and agreement.
fn runs(report: &Value, rows: &[Value]) {
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
}

/// The largest GPU batch at each slab size, and with one position an invocation.
fn slab_sweep(report: &Value) {
    for r in report["gpu"]["slab_sweep"].as_array().cloned().unwrap_or_default() {
        let kernel = if r["one_position_an_invocation"] == true { "one position an invocation" } else { "four positions an invocation" };
        println!(
            "  gpu  batch {} in slabs of {:>3}, {kernel}: {:>9.1} positions/s",
            r["batch"],
            r["slab"],
            r["positions_per_second"].as_f64().unwrap_or(0.0)
        );
    }
}

/// The scipy reference's speed and agreement, where it ran (`--reference`).
fn reference(report: &Value) {
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
}

/// The engine's exact shortcuts on one position, and the memory goal of a brain and a batch.
fn shortcut_and_memory(report: &Value) {
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
}

/// One fly move after 1.e4 e5, plain and with imagination, and the ladder's case of many games.
fn fly_move(report: &Value) {
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
}

/// The CPU engine against this machine's peaks, batch by batch, and the cache misses of its orders.
fn cpu_engine(report: &Value) {
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
