//! Long jobs in shards and on a real Slurm (issue 37): a cache cut into shards and merged is the
//! unsharded run's file byte for byte; parts of another job are refused by name; and the same
//! through Debian's slurm-wlm started on this machine by `installer/slurm/local-cluster`, with a
//! task cancelled mid-run by `scancel` and submitted again.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BRAIN: [&str; 4] = ["--brain", "standin", "--seed", "3"];

fn flychess(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flychess")).arg("--data").arg(data).args(args).output().expect("the binary runs")
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

fn refused(out: Output) -> String {
    assert!(!out.status.success(), "expected a refusal: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The whole cache file in `data` (the one `.dn` without `.part-`).
fn whole_cache(data: &Path) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(data.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dn") && !p.to_string_lossy().contains(".part-"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

/// Runs the unsharded cache of `positions` positions and moves its file aside; returns where it
/// was, its bytes and the bytes of one position.
fn reference_cache(data: &Path, positions: usize) -> (PathBuf, Vec<u8>, usize) {
    ok(flychess(data, &[&["cache", "--positions", &positions.to_string(), "--batch", "8"], &BRAIN[..]].concat()));
    let whole = whole_cache(data);
    let bytes = std::fs::read(&whole).unwrap();
    std::fs::remove_file(&whole).unwrap();
    std::fs::remove_file(whole.with_extension("json")).unwrap();
    assert!(!bytes.is_empty() && bytes.len().is_multiple_of(positions));
    let per = bytes.len() / positions;
    (whole, bytes, per)
}

#[test]
fn a_cache_in_shards_merges_into_the_single_runs_bytes_and_parts_of_another_job_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let data = t.path();
    let (_, reference, per) = reference_cache(data, 100);
    let cache = |extra: &[&str]| flychess(data, &[&["cache", "--positions", "100", "--batch", "8"], extra, &BRAIN[..]].concat());
    // Shards 1 and 3 of 3 (batches that start mid-batch of the single run: 33 and 34 positions).
    ok(cache(&["--shard", "1/3"]));
    ok(cache(&["--shard", "3/3"]));
    let missing = refused(cache(&["--merge-shards", "3"]));
    assert!(missing.contains("shard 2/3 is missing") && missing.contains(".part-2-of-3.dn"), "{missing}");
    ok(cache(&["--shard", "2/3"]));
    let parts: Vec<PathBuf> = {
        let mut p: Vec<PathBuf> = std::fs::read_dir(data.join("cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains(".part-") && p.extension().is_some_and(|e| e == "dn"))
            .collect();
        p.sort();
        p
    };
    assert_eq!(parts.len(), 3);
    // A part cut short (a killed task) is refused, naming it.
    let second = std::fs::read(&parts[1]).unwrap();
    std::fs::write(&parts[1], &second[..second.len() - per + 7]).unwrap();
    let short = refused(flychess(data, &["merge", parts[0].to_str().unwrap(), parts[1].to_str().unwrap(), parts[2].to_str().unwrap()]));
    assert!(short.contains("part-2-of-3.dn") && short.contains("has not finished"), "{short}");
    // Run again, the shard resumes after its last whole position.
    let resumed = ok(cache(&["--shard", "2/3"]));
    assert!(resumed.contains("(1 new"), "{resumed}");
    let merged = ok(flychess(data, &["merge", parts[2].to_str().unwrap(), parts[0].to_str().unwrap(), parts[1].to_str().unwrap()]));
    assert!(merged.contains("100 positions joined from 3 parts"), "{merged}");
    assert!(std::fs::read(whole_cache(data)).unwrap() == reference, "the merged cache differs from the single run's");

    // Parts of another job: another brain, another dataset, another shard count.
    ok(flychess(data, &["cache", "--positions", "100", "--batch", "8", "--shard", "2/3", "--brain", "standin", "--seed", "4"]));
    let other_brain = whole_cache_parts(data, |p| p.contains("synthetic-s4-"));
    let e = refused(flychess(data, &["merge", parts[0].to_str().unwrap(), other_brain[0].to_str().unwrap(), parts[2].to_str().unwrap()]));
    assert!(e.contains(other_brain[0].file_name().unwrap().to_str().unwrap()) && e.contains(": its brain_checksum is "), "{e}");
    let pgn = t.path().join("games.pgn");
    let game = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7";
    std::fs::write(&pgn, (0..12).map(|g| format!("[Event \"g{g}\"]\n[Result \"1-0\"]\n\n{game} 1-0\n\n")).collect::<String>()).unwrap();
    ok(flychess(data, &["data", "games", pgn.to_str().unwrap(), "--out", "g", "--human-games", "2", "--val-games", "2"]));
    ok(flychess(data, &[&["cache", "--dataset", "g", "--positions", "100", "--shard", "3/3"], &BRAIN[..]].concat()));
    let other_dataset = whole_cache_parts(data, |p| p.contains("synthetic-s3-") && p.contains("part-3-of-3") && Path::new(p) != parts[2]);
    assert_eq!(other_dataset.len(), 1, "{other_dataset:?}");
    let e = refused(flychess(data, &["merge", parts[0].to_str().unwrap(), parts[1].to_str().unwrap(), other_dataset[0].to_str().unwrap()]));
    assert!(e.contains(other_dataset[0].file_name().unwrap().to_str().unwrap()) && e.contains(": its dataset is "), "{e}");
    ok(cache(&["--shard", "2/4"]));
    let four = whole_cache_parts(data, |p| p.contains("part-2-of-4"));
    let e = refused(flychess(data, &["merge", parts[0].to_str().unwrap(), four[0].to_str().unwrap(), parts[2].to_str().unwrap()]));
    assert!(e.contains("part-2-of-4.dn: shard 2/4 of a job cut 4 ways"), "{e}");
}

fn whole_cache_parts(data: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut p: Vec<PathBuf> = std::fs::read_dir(data.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dn") && p.to_string_lossy().contains(".part-") && keep(&p.to_string_lossy()))
        .collect();
    p.sort();
    p
}

/// The local Slurm of `installer/slurm/local-cluster`, stopped when dropped.
struct LocalSlurm {
    dir: PathBuf,
    conf: PathBuf,
}

impl LocalSlurm {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../installer/slurm/local-cluster")
    }

    fn start(dir: &Path) -> LocalSlurm {
        let out = Command::new(Self::script()).arg("start").arg(dir).output().expect("local-cluster runs");
        assert!(out.status.success(), "the local Slurm did not start: {}", String::from_utf8_lossy(&out.stderr));
        LocalSlurm { dir: dir.to_path_buf(), conf: dir.join("slurm.conf") }
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn run(&self, program: &str, args: &[&str]) -> String {
        let out = self.command(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until no job of `id` (an array's tasks too) is pending or running.
    fn wait_gone(&self, id: &str, limit: Duration) {
        let started = Instant::now();
        while !self.run("squeue", &["-h", "-j", id]).trim().is_empty() {
            assert!(started.elapsed() < limit, "job {id} still queued after {limit:?}: {}", self.run("squeue", &[]));
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn state(&self, id: &str) -> String {
        let show = self.run("scontrol", &["show", "job", id]);
        show.split_whitespace().find_map(|w| w.strip_prefix("JobState=")).unwrap_or("").to_string()
    }
}

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).arg("stop").arg(&self.dir).status();
    }
}

fn slurm_installed() -> bool {
    ["slurmctld", "slurmd", "munged", "sbatch"]
        .iter()
        .all(|b| Command::new("sh").arg("-c").arg(format!("command -v {b}")).output().is_ok_and(|o| o.status.success()))
}

#[test]
fn a_cache_as_a_slurm_array_job_merges_into_the_single_runs_bytes_even_after_a_task_is_cancelled() {
    if !slurm_installed() {
        assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs munge and slurm-wlm (.ci/run)");
        eprintln!("skipped: Slurm is not installed (apt-get install munge slurm-wlm)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    // The single run first: it also builds the stand-in and its homeostasis, which the tasks share.
    let (whole, reference, per) = reference_cache(&data, 960);
    let positions = "960";
    let slurm = LocalSlurm::start(&t.path().join("slurm"));

    // The scripts as printed, accepted by sbatch --test-only.
    let job = [&["cache", "--positions", positions, "--batch", "8"], &BRAIN[..]].concat();
    let written = ok(flychess(&data, &[&["cluster", "slurm"], &job[..], &["--shards", "4", "--cpus-per-shard", "1"]].concat()));
    assert!(written.contains("#SBATCH --array=1-4") && written.contains("--merge-shards 4"), "{written}");
    let folder =
        written.lines().find_map(|l| l.strip_prefix("# scripts and the tasks' logs: ")).expect("the folder is printed").to_string();
    let (array, merge) = (Path::new(&folder).join("array.sbatch"), Path::new(&folder).join("merge.sbatch"));
    for script in [&array, &merge] {
        let test = slurm.command("sbatch").arg("--test-only").arg(script).output().unwrap();
        assert!(test.status.success(), "sbatch --test-only {}: {}", script.display(), String::from_utf8_lossy(&test.stderr));
    }
    // With GPUs asked for (the local cluster counts one, with no device behind it): every job that
    // thinks gets the GPU engine, and Slurm accepts the scripts as written.
    let rate_job = [&["rate", "--games", "2"][..], &BRAIN[..]].concat();
    for gpu_job in [&job[..], &rate_job[..], &["duel", "random", "greedy", "--games", "2"][..]] {
        let out_dir = t.path().join(format!("gpu-{}", gpu_job[0])).to_string_lossy().into_owned();
        let args = [&["cluster", "slurm"], gpu_job, &["--shards", "2", "--gpus-per-shard", "1", "--out", &out_dir]].concat();
        let written = ok(flychess(&data, &args));
        let array = t.path().join(format!("gpu-{}", gpu_job[0])).join("array.sbatch");
        let text = std::fs::read_to_string(&array).unwrap();
        assert!(text.contains("#SBATCH --gpus-per-task=1") && text.contains("--engine gpu"), "{written}\n{text}");
        let test = slurm.command("sbatch").arg("--test-only").arg(&array).output().unwrap();
        assert!(test.status.success(), "sbatch --test-only {}: {}", array.display(), String::from_utf8_lossy(&test.stderr));
    }

    // Submitted: four tasks, two at a time on this machine's two CPUs, the merge after them.
    let mut submit = Command::new(env!("CARGO_BIN_EXE_flychess"));
    submit.env("SLURM_CONF", &slurm.conf).arg("--data").arg(&data).args(["cluster", "slurm"]).args(&job).args([
        "--shards",
        "4",
        "--cpus-per-shard",
        "1",
        "--submit",
    ]);
    let submitted = ok(submit.output().unwrap());
    let id =
        |key: &str| submitted.lines().find_map(|l| l.strip_prefix(key)).unwrap_or_else(|| panic!("no {key} in {submitted}")).to_string();
    let (array_job, merge_job) = (id("array_job="), id("merge_job="));

    // Task 2 cancelled while its part is half written.
    let part2 = whole.with_extension("part-2-of-4.dn");
    let full = reference.len() as u64 / 4;
    let started = Instant::now();
    loop {
        let len = std::fs::metadata(&part2).map(|m| m.len()).unwrap_or(0);
        if len > 0 && len < full {
            break;
        }
        assert!(len < full, "task 2 finished before it could be cancelled: make its share larger");
        assert!(started.elapsed() < Duration::from_secs(300), "task 2 never started writing: {}", slurm.run("squeue", &[]));
        std::thread::sleep(Duration::from_millis(20));
    }
    slurm.run("scancel", &[&format!("{array_job}_2")]);
    slurm.wait_gone(&array_job, Duration::from_secs(600));
    let cut = std::fs::metadata(&part2).unwrap().len();
    assert!(cut < full, "task 2 was not cut short ({cut} of {full} bytes)");
    // Its merge can never run now (afterok on a cancelled task): Slurm cancels it.
    slurm.wait_gone(&merge_job, Duration::from_secs(60));
    assert_ne!(slurm.state(&merge_job), "COMPLETED");
    let unfinished = refused(flychess(&data, &[&job[..], &["--merge-shards", "4"]].concat()));
    assert!(unfinished.contains("part-2-of-4.dn") && unfinished.contains("has not finished"), "{unfinished}");

    // Task 2 submitted again alone: it resumes its part; then the merge.
    let again = slurm.run("sbatch", &["--parsable", "--array=2", array.to_str().unwrap()]);
    let again = again.trim().split(';').next().unwrap().to_string();
    let merged = slurm.run("sbatch", &["--parsable", &format!("--dependency=afterok:{again}"), merge.to_str().unwrap()]);
    let merged = merged.trim().split(';').next().unwrap().to_string();
    slurm.wait_gone(&merged, Duration::from_secs(600));
    assert_eq!(slurm.state(&merged), "COMPLETED", "the merge job");
    let log = std::fs::read_dir(Path::new(&folder).join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(&format!("-{again}_2.out")))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap_or_default();
    let resumed_from = cut as usize / per;
    assert!(
        log.contains(&format!("{} new", 240 - resumed_from)),
        "the resubmitted task did not resume after {resumed_from} positions: {log}"
    );
    assert!(std::fs::read(whole_cache(&data)).unwrap() == reference, "the merged cache differs from the single run's");
}

fn json(out: Output) -> serde_json::Value {
    let stdout = out.stdout.clone();
    ok(out);
    serde_json::from_slice(&stdout).expect("JSON on stdout")
}

/// The games file of a duel in `data` (the one `.jsonl` of DATA/ladder without `.part-`), its
/// lines sorted.
fn duel_games(data: &Path) -> Vec<String> {
    let files: Vec<PathBuf> = std::fs::read_dir(data.join("ladder"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.to_string_lossy().contains(".part-"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let mut lines: Vec<String> = std::fs::read_to_string(&files[0]).unwrap().lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[test]
fn a_duel_in_shards_plays_the_same_games_and_gives_the_same_result() {
    let t = tempfile::tempdir().unwrap();
    let (one, sharded) = (t.path().join("one"), t.path().join("sharded"));
    let duel = ["duel", "random", "greedy", "--games", "12"];
    let whole = json(flychess(&one, &[&duel[..], &["--json"]].concat()));
    for shard in ["2/3", "3/3"] {
        let said = ok(flychess(&sharded, &[&duel[..], &["--shard", shard]].concat()));
        assert!(said.contains(&format!("shard {shard}: 4 games")), "{said}");
    }
    let missing = refused(flychess(&sharded, &[&duel[..], &["--merge-shards", "3"]].concat()));
    assert!(missing.contains("shard 1/3 is missing") && missing.contains(".part-1-of-3.jsonl"), "{missing}");
    ok(flychess(&sharded, &[&duel[..], &["--shard", "1/3"]].concat()));
    // Parts of 12 games are not the 14-game duel's (its games file has the same name: more games
    // are more openings of the same seed).
    let other = refused(flychess(&sharded, &["duel", "random", "greedy", "--games", "14", "--merge-shards", "3"]));
    assert!(other.contains(".part-1-of-3.jsonl: the games of another run: its options differ"), "{other}");
    let merging = flychess(&sharded, &[&duel[..], &["--merge-shards", "3", "--json"]].concat());
    let said = String::from_utf8_lossy(&merging.stderr).into_owned();
    assert!(said.contains("12 games of 3 shards added to"), "the merge played games itself: {said}");
    let merged = json(merging);
    for field in ["games", "wins", "draws", "losses", "pentanomial", "score", "score_interval", "elo", "elo_interval", "endings"] {
        assert_eq!(whole[field], merged[field], "{field}");
    }
    assert_eq!(whole["games"], 12);
    assert_eq!(duel_games(&one), duel_games(&sharded), "the same games");
}
