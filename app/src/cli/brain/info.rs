//! `flychess brain info`: a brain's summary, building it first when needed: its file and
//! checksum, its neurons, connections and photoreceptors, the eye recovered from the wiring
//! against the real column map, its regions and how long it takes to load (text or JSON).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use clap::Args;

use flychess_brain::connectome::brain_file;
use flychess_brain::connectome::column_map::{self, ColumnMap};
use flychess_brain::store;

use crate::cli::options::WhichBrain;

// The arguments of `flychess brain info` (its help text is the subcommand's doc comment in `BrainCommand`).
#[derive(Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub which: WhichBrain,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flychess brain info`.
pub fn run(args: &InfoArgs, data: &Path) -> Result<()> {
    let spec = args.which.spec(data)?;
    let path = spec.brain_path(data);
    let existed = path.exists();
    let bar = crate::cli::options::stage_bar();
    let started = Instant::now();
    let loaded = store::ensure(&spec, data, &|stage, f| {
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
    if args.json {
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
