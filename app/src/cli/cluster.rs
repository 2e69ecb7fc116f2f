//! Long jobs beyond one machine: `flychess merge` (the part files of a sharded job joined into the
//! file one run writes) and `flychess cluster slurm` (a job as an ordinary Slurm array job, one
//! task a shard, and a merge job that waits for it). The shards themselves are the jobs' own
//! `--shard I/N` (`flychess_fly::shard`); nothing here schedules anything: Slurm does.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};

/// The jobs that take `--shard I/N` and `--merge-shards N`, as their command words.
pub const SHARDED_JOBS: [&[&str]; 4] = [&["cache"], &["data", "label"], &["rate"], &["duel"]];

/// `--shard I/N` and `--merge-shards N`, the same for every job in `SHARDED_JOBS`.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct ShardArgs {
    /// Only shard I of N (1-based, e.g. 2/4, a Slurm array task's number): its share of the job's
    /// positions or games (in a fixed order) into a part file beside the job's output, resumable
    /// on its own. Join the parts with --merge-shards N; `flychess cluster slurm` writes both.
    #[arg(long, value_name = "I/N", conflicts_with = "merge_shards")]
    pub shard: Option<flychess_fly::shard::Shard>,
    /// Join the N shards' part files into the output one unsharded run writes (refused when a
    /// part is missing, unfinished or of another job): the cache and labels byte for byte; `rate`
    /// and `duel` add the games to their games file and go on as one run would.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub merge_shards: Option<u32>,
}

// The arguments of `flychess merge` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct MergeArgs {
    /// The part files (`NAME.part-I-of-N.dn` of `cache --shard`, `labels.part-I-of-N.jsonl` of
    /// `data label --shard`), every shard of one job.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
}

#[derive(Subcommand)]
pub enum ClusterCommand {
    /// Write a job as a Slurm array job (one task a shard, each running `--shard
    /// $SLURM_ARRAY_TASK_ID/N`) and a merge job that waits for it (`--dependency=afterok`); print
    /// both, and with --submit hand them to sbatch. Usage: `flychess cluster slurm cache --dataset
    /// games-1200k --shards 8 --submit` (the options below may come before or after the job's).
    /// Jobs: cache, data label, rate, duel.
    Slurm(SlurmArgs),
}

#[derive(Args, Clone, Debug, PartialEq)]
pub struct SlurmArgs {
    /// How many shards (array tasks).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub shards: u32,
    /// The partition (default: the cluster's default one).
    #[arg(long)]
    pub partition: Option<String>,
    /// Each task's time limit, in any form sbatch takes (e.g. 2:00:00, 1-00:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// CPUs per task (the engine's threads).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub cpus_per_shard: u32,
    /// GPUs per task; with any, a job that thinks with the brain (cache, rate, duel) runs on the
    /// GPU engine (`--engine gpu`, unless the job names its engine); refused for `data label`,
    /// which runs Stockfish alone.
    #[arg(long, default_value_t = 0)]
    pub gpus_per_shard: u32,
    /// Submit both scripts with sbatch (the merge after the array) and print the job ids.
    #[arg(long)]
    pub submit: bool,
    /// Where the scripts and the tasks' logs go (default: DATA/cluster/JOB-KEY/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The job and its arguments, as after `flychess` (e.g. cache --dataset games-1200k).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "JOB-ARGS")]
    pub job: Vec<String>,
}

impl SlurmArgs {
    /// Takes this command's own options out of the job's words (they may follow the job, as in
    /// `cluster slurm cache --shards 4`), leaving the job's arguments alone.
    pub fn split_own_options(mut self) -> Result<SlurmArgs> {
        let words = std::mem::take(&mut self.job);
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            let (name, inline) = match w.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
                _ => (w.as_str(), None),
            };
            let takes_value = matches!(name, "--shards" | "--partition" | "--time" | "--cpus-per-shard" | "--gpus-per-shard" | "--out");
            if name == "--submit" && inline.is_none() {
                self.submit = true;
                i += 1;
                continue;
            }
            if !takes_value {
                self.job.push(w.clone());
                i += 1;
                continue;
            }
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    words.get(i).cloned().ok_or_else(|| anyhow!("{name} needs a value"))?
                }
            };
            let number = |v: &str, lo: u32, hi: u32| -> Result<u32> {
                v.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| anyhow!("{name} {v:?}: a number from {lo} to {hi}"))
            };
            match name {
                "--shards" => self.shards = number(&value, 1, 100_000)?,
                "--cpus-per-shard" => self.cpus_per_shard = number(&value, 1, 4096)?,
                "--gpus-per-shard" => self.gpus_per_shard = number(&value, 0, 64)?,
                "--partition" => self.partition = Some(value),
                "--time" => self.time = Some(value),
                _ => self.out = Some(PathBuf::from(value)),
            }
            i += 1;
        }
        if self.job.is_empty() {
            return Err(anyhow!("no job given: e.g. `flychess cluster slurm cache --dataset NAME --shards 4`"));
        }
        Ok(self)
    }
}

/// The job's command words (`cache`, `data label`) among `job`, or an error listing the jobs.
fn job_words(job: &[String]) -> Result<&'static [&'static str]> {
    SHARDED_JOBS.iter().copied().find(|words| job.len() >= words.len() && words.iter().zip(job).all(|(w, j)| w == j)).ok_or_else(|| {
        let names: Vec<String> = SHARDED_JOBS.iter().map(|w| w.join(" ")).collect();
        anyhow!("{:?} cannot run in shards; the jobs that can: {}", job.join(" "), names.join(", "))
    })
}

/// `'…'` for a POSIX shell.
fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The two scripts of a sharded job.
pub struct Scripts {
    pub dir: PathBuf,
    pub array: PathBuf,
    pub merge: PathBuf,
    pub name: String,
}

/// Writes `array.sbatch` and `merge.sbatch` for `args` (the job run by `binary` on the data
/// folder `data`) into their folder, and returns where they are.
pub fn write_scripts(args: &SlurmArgs, binary: &Path, data: &Path) -> Result<Scripts> {
    let words = job_words(&args.job)?;
    if args.job.iter().any(|w| w == "--shard" || w.starts_with("--shard=") || w == "--merge-shards" || w.starts_with("--merge-shards=")) {
        return Err(anyhow!("give the job without --shard or --merge-shards: each task gets its own shard, the merge job the count"));
    }
    let n = args.shards;
    // The job's arguments must parse, with a shard and with the merge, before anything is written.
    let parses = |extra: &[String]| -> Result<()> {
        let argv = std::iter::once("flychess".to_string()).chain(args.job.iter().cloned()).chain(extra.iter().cloned());
        <crate::cli::Cli as clap::Parser>::try_parse_from(argv).map(|_| ()).map_err(|e| anyhow!("the job's arguments: {e}"))
    };
    parses(&["--shard".into(), format!("1/{n}")])?;
    parses(&["--merge-shards".into(), n.to_string()])?;
    let name = format!("flychess-{}", words.join("-"));
    let key = {
        let described = serde_json::json!({"job": args.job, "shards": n, "data": data, "binary": binary});
        flychess_brain::files::hex(&Sha256::digest(described.to_string()))
    };
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => data.join("cluster").join(format!("{}-{}", words.join("-"), &key[..12])),
    };
    std::fs::create_dir_all(dir.join("logs")).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    let logs = dir.join("logs");
    // Every sharded job that thinks with the brain (cache, rate, duel) runs on the GPU engine when
    // GPUs are asked for; `data label` thinks with Stockfish alone, so GPUs would sit idle.
    let names_engine = args.job.iter().any(|w| w == "--engine" || w.starts_with("--engine="));
    if args.gpus_per_shard > 0 && words.first().is_some_and(|w| *w == "data") {
        return Err(anyhow!("--gpus-per-shard: `{}` runs Stockfish on the CPU and has no GPU engine; leave it out", words.join(" ")));
    }
    let gpu = args.gpus_per_shard > 0 && !names_engine;
    let job: Vec<String> = args.job.iter().map(|w| quote(w)).collect();
    let command = format!("{} --data {} {}", quote(&binary.to_string_lossy()), quote(&data.to_string_lossy()), job.join(" "));
    let head = |job_name: &str, array: bool| {
        let mut h = vec!["#!/bin/bash".to_string()];
        h.push(format!("#SBATCH --job-name={job_name}"));
        if array {
            h.push(format!("#SBATCH --array=1-{n}"));
            h.push(format!("#SBATCH --cpus-per-task={}", args.cpus_per_shard));
            if args.gpus_per_shard > 0 {
                h.push(format!("#SBATCH --gpus-per-task={}", args.gpus_per_shard));
            }
            h.push("#SBATCH --requeue".into());
            h.push(format!("#SBATCH --output={}/%x-%A_%a.out", logs.display()));
        } else {
            h.push("#SBATCH --cpus-per-task=1".into());
            h.push("#SBATCH --kill-on-invalid-dep=yes".into());
            h.push(format!("#SBATCH --output={}/%x-%j.out", logs.display()));
        }
        h.push("#SBATCH --ntasks=1".into());
        if let Some(p) = &args.partition {
            h.push(format!("#SBATCH --partition={p}"));
        }
        if let Some(t) = &args.time {
            h.push(format!("#SBATCH --time={t}"));
        }
        h.join("\n")
    };
    let array_text = format!(
        "{}\n# Written by `flychess cluster slurm`: `flychess {}` cut into {n} shards, one array task a shard.\n\
         # Each task's part file resumes where it stopped: a failed or cancelled task is run again\n\
         # alone with `sbatch --array=I {}`, then the merge with `sbatch --dependency=afterok:JOB {}`.\n\
         set -euo pipefail\n\
         export RAYON_NUM_THREADS=\"${{SLURM_CPUS_PER_TASK:-{}}}\"\n\
         exec {command} --shard \"${{SLURM_ARRAY_TASK_ID}}/{n}\"{}\n",
        head(&name, true),
        args.job.join(" "),
        dir.join("array.sbatch").display(),
        dir.join("merge.sbatch").display(),
        args.cpus_per_shard,
        if gpu { " --engine gpu" } else { "" },
    );
    let merge_text = format!(
        "{}\n# Written by `flychess cluster slurm`: joins the {n} shards' parts of `flychess {}` into the\n\
         # file one unsharded run writes (refused, naming the file, when a part is missing or unfinished).\n\
         set -euo pipefail\n\
         exec {command} --merge-shards {n}\n",
        head(&format!("{name}-merge"), false),
        args.job.join(" "),
    );
    let (array, merge) = (dir.join("array.sbatch"), dir.join("merge.sbatch"));
    flychess_brain::files::write_atomically(&array, array_text.as_bytes())?;
    flychess_brain::files::write_atomically(&merge, merge_text.as_bytes())?;
    Ok(Scripts { dir, array, merge, name })
}

/// Runs `sbatch --parsable ARGS SCRIPT` and returns the job id it prints.
pub fn sbatch(extra: &[String], script: &Path) -> Result<String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(extra)
        .arg(script)
        .output()
        .map_err(|e| anyhow!("could not run sbatch ({e}); is Slurm installed and SLURM_CONF set?"))?;
    if !out.status.success() {
        return Err(anyhow!("sbatch {}: {}", script.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(anyhow!("sbatch {}: no job id in its answer {:?}", script.display(), flychess_brain::files::quote(text.trim(), 200)));
    }
    Ok(id)
}

/// `flychess merge`: the parts joined by the reader of their kind (by extension).
pub fn merge(args: MergeArgs) -> Result<()> {
    let started = std::time::Instant::now();
    let ext = |p: &PathBuf| p.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
    let kind = ext(&args.parts[0]);
    if let Some(other) = args.parts.iter().find(|p| ext(p) != kind) {
        return Err(anyhow!("{}: not the same kind of part as {}", other.display(), args.parts[0].display()));
    }
    let (whole, records, bytes) = match kind.as_str() {
        "dn" => {
            let merged = flychess_fly::cache::Cache::merge(&args.parts)?;
            (merged.cache.path, merged.cache.positions, merged.bytes)
        }
        "jsonl" => flychess_learning::datasets::stockfish_labels::merge(&args.parts)?,
        _ => return Err(anyhow!("{}: not a part file this program writes (.dn of cache, .jsonl of data label)", args.parts[0].display())),
    };
    println!(
        "{}: {records} positions joined from {} parts ({:.1} MB in {:.2} s)",
        whole.display(),
        args.parts.len(),
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `flychess cluster slurm`.
pub fn slurm(args: SlurmArgs, data: &Path) -> Result<()> {
    let args = args.split_own_options()?;
    let binary = std::env::current_exe().and_then(|p| p.canonicalize()).map_err(|e| anyhow!("where this program is: {e}"))?;
    std::fs::create_dir_all(data).map_err(|e| anyhow!("{}: {e}", data.display()))?;
    let data = data.canonicalize().map_err(|e| anyhow!("{}: {e}", data.display()))?;
    let scripts = write_scripts(&args, &binary, &data)?;
    for path in [&scripts.array, &scripts.merge] {
        println!("# ---- {} ----", path.display());
        print!("{}", std::fs::read_to_string(path)?);
    }
    println!("# scripts and the tasks' logs: {}", scripts.dir.display());
    if !args.submit {
        println!(
            "# submit with: a=$(sbatch --parsable {}) && sbatch --dependency=afterok:$a {}",
            scripts.array.display(),
            scripts.merge.display()
        );
        return Ok(());
    }
    let array = sbatch(&[], &scripts.array)?;
    let merge = sbatch(&[format!("--dependency=afterok:{array}")], &scripts.merge)?;
    println!("submitted: array job {array} ({} tasks, {}), merge job {merge} after it", args.shards, scripts.name);
    println!("array_job={array}");
    println!("merge_job={merge}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> SlurmArgs {
        SlurmArgs {
            shards: 4,
            partition: None,
            time: None,
            cpus_per_shard: 2,
            gpus_per_shard: 0,
            submit: false,
            out: None,
            job: words.iter().map(|w| w.to_string()).collect(),
        }
    }

    #[test]
    fn own_options_after_the_job_are_taken_out_and_the_jobs_kept() {
        let a = args(&["cache", "--dataset", "g", "--shards", "8", "--time=1:00:00", "--submit", "--positions", "64"])
            .split_own_options()
            .unwrap();
        assert_eq!(a.job, ["cache", "--dataset", "g", "--positions", "64"]);
        assert_eq!((a.shards, a.time.as_deref(), a.submit), (8, Some("1:00:00"), true));
        assert!(args(&["cache", "--shards", "0"]).split_own_options().is_err());
        assert!(args(&["--shards", "2"]).split_own_options().is_err());
    }

    #[test]
    fn only_sharded_jobs_are_written_and_their_arguments_must_parse() {
        let t = tempfile::tempdir().unwrap();
        let bin = Path::new("/opt/fly chess/flychess");
        let e = write_scripts(&args(&["eval"]), bin, t.path()).err().unwrap().to_string();
        assert!(e.contains("cannot run in shards") && e.contains("data label, rate, duel"), "{e}");
        let e = write_scripts(&args(&["cache", "--no-such-option"]), bin, t.path()).err().unwrap().to_string();
        assert!(e.contains("the job's arguments"), "{e}");
        let e = write_scripts(&args(&["cache", "--shard", "1/2"]), bin, t.path()).err().unwrap().to_string();
        assert!(e.contains("without --shard"), "{e}");
        let mut a = args(&["cache", "--dataset", "my games"]);
        a.gpus_per_shard = 1;
        a.partition = Some("gpu".into());
        let s = write_scripts(&a, bin, t.path()).unwrap();
        let array = std::fs::read_to_string(&s.array).unwrap();
        assert!(
            array.contains("#SBATCH --array=1-4")
                && array.contains("#SBATCH --gpus-per-task=1")
                && array.contains("#SBATCH --partition=gpu")
        );
        assert!(
            array.contains("exec '/opt/fly chess/flychess' --data ")
                && array.contains("cache --dataset 'my games' --shard \"${SLURM_ARRAY_TASK_ID}/4\" --engine gpu"),
            "{array}"
        );
        let merge = std::fs::read_to_string(&s.merge).unwrap();
        assert!(merge.contains("cache --dataset 'my games' --merge-shards 4") && !merge.contains("--array"), "{merge}");
        // rate and duel think with the brain too: on the GPU engine when GPUs are asked for; a job
        // that names its engine keeps it; data label (Stockfish alone) is refused GPUs.
        for job in [&["rate", "--games", "2"][..], &["duel", "flywire", "greedy", "--games", "2"]] {
            let mut a = args(job);
            a.gpus_per_shard = 1;
            let array = std::fs::read_to_string(write_scripts(&a, bin, t.path()).unwrap().array).unwrap();
            assert!(array.contains("--shard \"${SLURM_ARRAY_TASK_ID}/4\" --engine gpu"), "{array}");
        }
        let mut a = args(&["rate", "--engine", "cpu"]);
        a.gpus_per_shard = 1;
        let array = std::fs::read_to_string(write_scripts(&a, bin, t.path()).unwrap().array).unwrap();
        assert!(!array.contains("--engine gpu"), "{array}");
        let mut a = args(&["data", "label", "--pgn", "g.pgn", "--out", "l"]);
        a.gpus_per_shard = 1;
        let e = write_scripts(&a, bin, t.path()).err().unwrap().to_string();
        assert!(e.contains("no GPU engine"), "{e}");
    }
}
