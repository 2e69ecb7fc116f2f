//! A full disk (issue 39): each writer (the atomic write every container and JSON file goes
//! through, a dataset, a cache merge, the DN cache's appends, the ladder's games, a Charles
//! checkpoint) pointed at a small tmpfs this test mounts (and unmounts)
//! over a folder that already holds the earlier version of its file. Every write must fail with
//! an error that names the file and says the disk is full, leave the earlier file whole, and
//! leave no temporary file behind; an append-only file keeps every record it had.
//!
//! Mounting needs root (CI runs as root); where mounting is refused the test says so and skips,
//! except under FLYCHESS_CI, where it fails.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `kib` KiB mounted on a fresh folder, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// The disk, or why mounting it was refused.
    fn mount(kib: usize) -> Result<SmallDisk, String> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount could not run: {e}"))?;
        if out.status.success() {
            Ok(SmallDisk { dir })
        } else {
            Err(format!("mount said: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the disk up to `left` bytes of free space.
    fn fill_leaving(&self, left: u64) {
        let free = || {
            let out = Command::new("df").args(["-B1", "--output=avail"]).arg(self.path()).output().unwrap();
            String::from_utf8_lossy(&out.stdout).lines().nth(1).unwrap().trim().parse::<u64>().unwrap()
        };
        let filler = self.path().join("filler");
        let now = free();
        if now > left {
            let _ = std::fs::write(&filler, vec![0u8; (now - left) as usize]);
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn no_temporary_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".tmp"))
        .collect()
}

fn says_full(e: &str, file: &str) -> bool {
    e.contains(file) && (e.contains("No space left") || e.contains("os error 28"))
}

#[test]
fn every_writer_on_a_full_disk_fails_by_name_and_leaves_the_earlier_file_whole() {
    let disk = match SmallDisk::mount(1024) {
        Ok(d) => d,
        // CI runs as root and must mount: a skip there would pass without testing anything.
        Err(e) if std::env::var_os("FLYCHESS_CI").is_some() => panic!("CI must mount a small tmpfs for this test: {e}"),
        Err(e) => {
            eprintln!("skipped: mounting a tmpfs was refused (this test needs root): {e}");
            return;
        }
    };
    let dir = disk.path();

    // A fly saved over an earlier one (write_atomically: temporary file, sync, rename).
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/flywire.fly");
    let fly = flychess_fly::fly::Fly::load(&shipped).unwrap();
    let path = dir.join("old.fly");
    std::fs::copy(&shipped, &path).unwrap();
    let before = std::fs::read(&path).unwrap();
    disk.fill_leaving(64 * 1024);
    let e = fly.save(&path).unwrap_err().to_string();
    assert!(says_full(&e, "old.fly"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the earlier fly changed");
    assert!(no_temporary_files(dir).is_empty(), "{:?}", no_temporary_files(dir));
    let _ = std::fs::remove_file(dir.join("filler"));

    std::fs::remove_file(&path).unwrap();

    // A dataset saved over an earlier one.
    let mut dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
    let path = dir.join("old.flyd");
    dataset.rows.truncate(64);
    dataset.save(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let mut bigger = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
    bigger.rows.truncate(5_000);
    disk.fill_leaving(32 * 1024);
    let e = bigger.save(&path).unwrap_err().to_string();
    assert!(says_full(&e, "old.flyd"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the earlier dataset changed");
    assert!(no_temporary_files(dir).is_empty(), "{:?}", no_temporary_files(dir));
    let _ = std::fs::remove_file(dir.join("filler"));

    std::fs::remove_file(&path).unwrap();

    // A merge's output over an earlier whole cache.
    use flychess_fly::cache::{Cache, CacheMeta};
    let meta = CacheMeta::of("0123456789abcdef", "h", "small", 4000, "c0ffee", 1000);
    let whole = dir.join("cache/x.dn");
    Cache::open(&whole, meta.clone()).unwrap();
    std::fs::write(&whole, vec![7u8; 2000 * 4]).unwrap();
    let before = std::fs::read(&whole).unwrap();
    let part = dir.join("cache/x.part-1-of-1.dn");
    std::fs::write(part.with_extension("json"), serde_json::to_vec(&meta.part("1/1".parse().unwrap(), 200)).unwrap()).unwrap();
    std::fs::write(&part, vec![9u8; 2000 * 200]).unwrap();
    disk.fill_leaving(16 * 1024);
    let e = Cache::merge(std::slice::from_ref(&part)).err().unwrap().to_string();
    assert!(says_full(&e, "x.dn"), "{e}");
    assert_eq!(std::fs::read(&whole).unwrap(), before, "the earlier cache changed");
    assert!(no_temporary_files(&dir.join("cache")).is_empty(), "{:?}", no_temporary_files(&dir.join("cache")));
    let _ = std::fs::remove_file(dir.join("filler"));

    std::fs::remove_dir_all(dir.join("cache")).unwrap();

    // The DN cache's appends (the `cache` job's writer) running out of room mid-fill: the positions
    // already cached stay as they were, a torn last position is cut off by the next fill, and that
    // fill, once there is room, ends with the bytes of a fill never interrupted.
    use flychess_brain::brain::simulator::Simulator;
    let small = flychess_learning::bptt::check::small_brain(5);
    let rows = &flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap().rows[..4096];
    // Seven neurons: 14 bytes a position, so a disk that fills at a page's end tears one.
    let descending = &small.descending[..7];
    let meta = CacheMeta::of("small", "h", "shipped", rows.len(), "c0ffee", descending.len());
    let fill = |cache: &mut Cache, rows: &[flychess_fly::data::Row]| {
        cache.fill(&Simulator::Cpu, &small.brain, descending, rows, 64, &|_, _| {}, &|| false)
    };
    let path = dir.join("cache/y.dn");
    let mut cache = Cache::open(&path, meta.clone()).unwrap();
    fill(&mut cache, &rows[..256]).unwrap();
    let before = std::fs::read(&path).unwrap();
    disk.fill_leaving(8 * 1024);
    let e = fill(&mut cache, rows).unwrap_err().to_string();
    assert!(says_full(&e, "y.dn"), "{e}");
    assert!(std::fs::read(&path).unwrap().starts_with(&before), "the positions already cached changed");
    assert!(std::fs::metadata(&path).unwrap().len() % 14 != 0, "the disk filled inside a position (what the next fill must cut)");
    let _ = std::fs::remove_file(dir.join("filler"));
    let mut cache = Cache::open(&path, meta.clone()).unwrap();
    assert!(cache.positions >= 256 && cache.positions < rows.len(), "{} positions", cache.positions);
    fill(&mut cache, rows).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut unbroken = Cache::open(&elsewhere.path().join("y.dn"), meta).unwrap();
    fill(&mut unbroken, rows).unwrap();
    assert!(std::fs::read(&path).unwrap() == std::fs::read(elsewhere.path().join("y.dn")).unwrap(), "resumed = never interrupted");
    std::fs::remove_dir_all(dir.join("cache")).unwrap();

    // Games appended to a ladder's file by the program: the games already there stay, whole.
    let data = dir.join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(&data)
        .args(["duel", "random", "greedy", "--games", "4"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let games = std::fs::read_dir(data.join("ladder"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let before = flychess_arena::ladder::read_games(&games).unwrap();
    disk.fill_leaving(0);
    let out = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(&data)
        .args(["duel", "random", "greedy", "--games", "400"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success() && says_full(&e, &games.file_name().unwrap().to_string_lossy()), "{e}");
    let after = flychess_arena::ladder::read_games(&games).unwrap();
    assert!(after.len() >= before.len() && after[..before.len()] == before[..], "the games already played changed");
    let _ = std::fs::remove_file(dir.join("filler"));
    std::fs::remove_dir_all(&data).unwrap();

    // A Charles checkpoint over the run's last one: the run's record and the weights it names
    // stay as they were, and a later start goes on from them.
    use flychess_charles::run::{self, RunFiles, TrainOptions};
    use flychess_learning::burn_device::FitOn;
    let dataset = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
    let options = TrainOptions {
        config: flychess_charles::CharlesConfig::tiny(),
        positions: 64,
        batch: 16,
        val: 16,
        val_every: 2,
        ..Default::default()
    };
    let files = RunFiles::of(&dir.join("data"), "c");
    let calls = std::cell::Cell::new(0);
    let stop_at_first = || {
        calls.set(calls.get() + 1);
        calls.get() >= 2
    };
    assert_eq!(run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &stop_at_first).unwrap().step, 2);
    let before: Vec<Vec<u8>> = [files.model(), files.state()].iter().map(|p| std::fs::read(p).unwrap()).collect();
    disk.fill_leaving(8 * 1024);
    let e = run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap_err().to_string();
    assert!(says_full(&e, "model.next.bpk") || says_full(&e, "optimiser.next.bpk"), "{e}");
    let after: Vec<Vec<u8>> = [files.model(), files.state()].iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(after == before, "the run's last checkpoint changed");
    assert_eq!(files.checked_state().unwrap().0.step, 2);
    assert!(no_temporary_files(&files.dir).is_empty(), "{:?}", no_temporary_files(&files.dir));
    let _ = std::fs::remove_file(dir.join("filler"));
    assert!(run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap().finished, "goes on once there is room");
}
