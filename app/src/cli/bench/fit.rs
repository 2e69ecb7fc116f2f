//! `flychess bench --fit`: the readout fit timed, the new fit (two GEMMs a batch, `gemm_fit`)
//! against the old (burn's autodiff on the CPU) over the same cached TRAIN rows in the same order,
//! each pass in turn, beside the machine's FMA peak measured in the same run.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::brain::simulator::EngineChoice;
use flychess_fly::cache::Reading;
use flychess_fly::data::{Dataset, HOLD, VAL};
use flychess_fly::readout::Readout;
use flychess_fly::scoring::Target;
use flychess_learning::train::{BatchStep, FitOptions, InMemory, TrainSet};

use super::BenchArgs;

/// `bench --fit`: seconds a pass per million positions, GFLOP/s of the two products and the FMA
/// peak, for the new fit (`gemm_fit`) and the old (burn's autodiff on the CPU) over the same rows
/// in the same order, each pass timed in turn (old, new, old, new, …) so a busy machine slows both.
pub fn run(args: &BenchArgs, data: &Path) -> Result<()> {
    let (positions, passes) = (args.fit_positions, args.fit_passes);
    if positions == 0 || passes == 0 {
        return Err(anyhow!("bench --fit needs at least one position and one pass"));
    }
    let dataset = Dataset::load(&flychess_fly::data::shipped_path())?;
    let n = positions.min(dataset.train().len());
    let (cache, _) = crate::cli::cache::cache(&args.which, data, Some(HOLD + VAL + n), None, EngineChoice::Auto)?;
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
    if args.json {
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
