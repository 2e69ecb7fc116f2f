//! `flychess bench --reference`: the same 12 steps run by tools/reference_scipy.py (scipy.sparse,
//! in a venv of its own in the data folder, made on first use) on the same brain and boards, its
//! rates compared with the CPU engine's step by step and region by region, and its speed beside.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};

use flychess_brain::brain::{Brain, STEPS, agreement, cpu};
use flychess_brain::chess::Planes;

const REFERENCE_SCRIPT: &str = include_str!("../../../../tools/reference_scipy.py");

/// Runs tools/reference_scipy.py on the same brain and boards (in a venv with scipy in the data
/// folder, made on first use), and compares its rates and speed with the CPU engine's.
pub fn scipy_reference(
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
