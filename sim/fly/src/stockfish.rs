//! Stockfish over UCI: finding the binary, starting it, MultiPV analysis by depth or nodes,
//! limited strength (UCI_LimitStrength / UCI_Elo), best moves. Every call has a timeout; an engine
//! that hangs or dies is killed and (by `Supervised`) replaced once before the call gives up; every
//! child is killed and reaped when its `Engine` is dropped. Without Stockfish the error says how to
//! install it, and nothing else in the app depends on it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::grading::Score;

/// What to do when no Stockfish is found, for the system the program runs on.
#[cfg(windows)]
pub const INSTALL_HINT: &str = "Stockfish was not found: download it from stockfishchess.org/download (Windows, x86-64), unzip it beside flychess.exe or into Program Files\\Stockfish, or choose its .exe in About (or set FLYCHESS_STOCKFISH); the fly plays without it, only the grades wait for it";
#[cfg(not(windows))]
pub const INSTALL_HINT: &str = "Stockfish was not found: install it (Debian/Ubuntu: `sudo apt-get install stockfish`; macOS: `brew install stockfish`; Windows: stockfishchess.org) or point FLYCHESS_STOCKFISH at the binary";

/// Where Stockfish is: the given setting, `$FLYCHESS_STOCKFISH`, then the places of
/// [`search_places`] in order. A setting that names no file is an error of its own (the user
/// asked for that engine), not a reason to quietly use another.
pub fn find_stockfish(setting: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = setting {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(Error::Invalid(format!(
                "the Stockfish set at {} is not there; fix the path or clear it to search {} ({})",
                p.display(),
                SEARCHED,
                GET_IT
            )))
        };
    }
    if let Some(p) = std::env::var_os("FLYCHESS_STOCKFISH").map(PathBuf::from).filter(|p| p.is_file()) {
        return Ok(p);
    }
    let beside_program = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf));
    search_places(beside_program.as_deref(), |name| std::env::var_os(name))
        .iter()
        .find_map(|dir| stockfish_in(dir))
        .ok_or_else(|| Error::Invalid(INSTALL_HINT.to_string()))
}

/// Where to get Stockfish, in a few words.
#[cfg(windows)]
const GET_IT: &str = "install: download it from stockfishchess.org/download";
#[cfg(not(windows))]
const GET_IT: &str = "install: `sudo apt-get install stockfish`";

/// The places searched when no Stockfish is set, in words (for the settings' hint).
#[cfg(windows)]
pub const SEARCHED: &str = "beside flychess.exe, PATH and Program Files";
#[cfg(not(windows))]
pub const SEARCHED: &str = "beside the program, PATH and /usr/games";

/// The folders searched for Stockfish, in order: the program's own folder and its `stockfish`
/// subfolder (where a user unzips the download beside the app), every folder on PATH, Windows'
/// usual install folders (`Program Files\Stockfish`, `Program Files (x86)\Stockfish`,
/// `%LOCALAPPDATA%\Programs\Stockfish`, each with its `stockfish` subfolder as the official
/// zip unpacks), then (not on Windows) Debian's `/usr/games`, `/usr/local/bin` and Homebrew's
/// folders. `env`
/// reads an environment variable (a parameter so that tests can set a Windows environment).
pub fn search_places(beside_program: Option<&Path>, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(dir) = beside_program {
        places.push(dir.to_path_buf());
        places.push(dir.join("stockfish"));
    }
    if let Some(path) = env("PATH") {
        places.extend(std::env::split_paths(&path));
    }
    for (variable, below) in [
        ("ProgramFiles", "Stockfish"),
        ("ProgramFiles(x86)", "Stockfish"),
        ("ProgramW6432", "Stockfish"),
        ("LOCALAPPDATA", "Programs/Stockfish"),
    ] {
        if let Some(root) = env(variable).filter(|r| !r.is_empty()) {
            let dir = below.split('/').fold(PathBuf::from(root), |d, part| d.join(part));
            places.push(dir.join("stockfish"));
            places.push(dir);
        }
    }
    // Unix folders (on Windows a path like /usr/games would name a folder of the current drive;
    // under Wine, the Linux host's own Stockfish, which Windows cannot run).
    #[cfg(not(windows))]
    places.extend(["/usr/games", "/usr/local/bin", "/opt/homebrew/bin"].map(PathBuf::from));
    places
}

/// The Stockfish in one folder: `stockfish` or `stockfish.exe`, else the first (by name) file
/// named `stockfish….exe` (the official Windows builds are called e.g.
/// `stockfish-windows-x86-64-avx2.exe`). None when the folder has none or cannot be read.
pub fn stockfish_in(dir: &Path) -> Option<PathBuf> {
    if let Some(plain) = ["stockfish", "stockfish.exe"].iter().map(|n| dir.join(n)).find(|p| p.is_file()) {
        return Some(plain);
    }
    let mut named: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().map(|n| n.to_string_lossy().to_lowercase()).is_some_and(|n| n.starts_with("stockfish") && n.ends_with(".exe"))
                && p.is_file()
        })
        .collect();
    named.sort();
    named.into_iter().next()
}

/// How long an analysis may search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Depth(u32),
    Nodes(u64),
    MoveTimeMs(u64),
}

impl Limit {
    fn go(self) -> String {
        match self {
            Limit::Depth(d) => format!("go depth {d}"),
            Limit::Nodes(n) => format!("go nodes {n}"),
            Limit::MoveTimeMs(ms) => format!("go movetime {ms}"),
        }
    }
}

/// One line of a MultiPV analysis, from the side to move.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub multipv: usize,
    pub depth: u32,
    /// The line's first move in UCI.
    pub uci: String,
    pub score: Score,
    /// Win/draw/loss per mille when the engine reports it.
    pub wdl: Option<[u32; 3]>,
}

/// Start-up settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineOptions {
    pub threads: u32,
    pub hash_mb: u32,
    /// Some(elo): play at that strength (UCI_LimitStrength).
    pub elo: Option<u32>,
    /// Any other engine's own options, set in this order after the ones above (`setoption name
    /// K value V`; an engine ignores a name it does not know).
    pub extra: Vec<(String, String)>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions { threads: 1, hash_mb: 32, elo: None, extra: Vec::new() }
    }
}

/// A running engine process.
pub struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    pub path: PathBuf,
    /// The lowest UCI_Elo this engine accepts (1350 for Stockfish 15.1, 1320 from 16 on).
    pub min_elo: Option<u32>,
    /// What the engine calls itself (`id name`).
    pub id_name: Option<String>,
}

/// How long an engine may take to answer `uci` and `isready` (an engine that loads a network or
/// a brain at start takes seconds).
const START_TIMEOUT: Duration = Duration::from_secs(120);

impl Engine {
    pub fn start(path: &Path, options: &EngineOptions) -> Result<Engine> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::Invalid(format!("could not start {}: {e}", path.display())))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut e = Engine { child, stdin, lines, path: path.to_path_buf(), min_elo: None, id_name: None };
        e.send("uci")?;
        let hello = e.wait_for(|l| l == "uciok", START_TIMEOUT)?;
        e.min_elo = hello.iter().find(|l| l.starts_with("option name UCI_Elo")).and_then(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.windows(2).find(|w| w[0] == "min").and_then(|w| w[1].parse().ok())
        });
        e.id_name = hello.iter().find_map(|l| l.trim().strip_prefix("id name ")).map(|n| n.trim().to_string());
        e.send(&format!("setoption name Threads value {}", options.threads))?;
        e.send(&format!("setoption name Hash value {}", options.hash_mb))?;
        e.send("setoption name UCI_ShowWDL value true")?;
        if let Some(elo) = options.elo {
            let elo = e.min_elo.map_or(elo, |m| elo.max(m));
            e.send("setoption name UCI_LimitStrength value true")?;
            e.send(&format!("setoption name UCI_Elo value {elo}"))?;
        }
        for (k, v) in &options.extra {
            e.send(&format!("setoption name {k} value {v}"))?;
        }
        e.ready(START_TIMEOUT)?;
        Ok(e)
    }

    fn send(&mut self, command: &str) -> Result<()> {
        writeln!(self.stdin, "{command}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| Error::Invalid(format!("{} stopped listening: {e}", self.path.display())))
    }

    /// Lines until (and with) the first one `done` accepts.
    fn wait_for(&mut self, done: impl Fn(&str) -> bool, timeout: Duration) -> Result<Vec<String>> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let finished = done(line.trim());
                    seen.push(line);
                    if finished {
                        return Ok(seen);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Error::Invalid(format!("{} did not answer within {:.1} s", self.path.display(), timeout.as_secs_f64())));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Invalid(format!("{} exited in the middle of a reply", self.path.display())));
                }
            }
        }
    }

    fn ready(&mut self, timeout: Duration) -> Result<()> {
        self.send("isready")?;
        self.wait_for(|l| l == "readyok", timeout).map(|_| ())
    }

    /// Forgets everything searched so far (`ucinewgame`, its hash table cleared): the next
    /// analysis at a fixed depth then depends only on its position, not on what the engine saw
    /// before it (so labels are the same whichever worker, shard or order gave them).
    pub fn forget(&mut self) -> Result<()> {
        self.send("ucinewgame")?;
        self.ready(START_TIMEOUT)
    }

    /// MultiPV analysis of `fen`: the best `multipv` lines, best first.
    pub fn analyse(&mut self, fen: &str, limit: Limit, multipv: usize, timeout: Duration) -> Result<Vec<Line>> {
        self.analyse_among(fen, limit, multipv, &[], timeout)
    }

    /// MultiPV analysis restricted to the root moves `among` (UCI `searchmoves`; empty: all moves):
    /// one line per listed move when `multipv` is at least their number — how the app grades the
    /// fly's candidates and the move actually played.
    pub fn analyse_among(&mut self, fen: &str, limit: Limit, multipv: usize, among: &[String], timeout: Duration) -> Result<Vec<Line>> {
        if let Some(bad) = among.iter().find(|m| !(4..=5).contains(&m.len()) || !m.chars().all(|c| c.is_ascii_alphanumeric())) {
            return Err(Error::Invalid(format!("{bad:?} is not a UCI move")));
        }
        self.send(&format!("setoption name MultiPV value {}", multipv.max(1)))?;
        self.send(&format!("position fen {fen}"))?;
        if among.is_empty() {
            self.send(&limit.go())?;
        } else {
            self.send(&format!("{} searchmoves {}", limit.go(), among.join(" ")))?;
        }
        let reply = self.wait_for(|l| l.starts_with("bestmove"), timeout)?;
        let mut best: Vec<Option<Line>> = vec![None; multipv.max(1)];
        for l in &reply {
            if let Some(line) = parse_info(l) {
                let k = line.multipv;
                if k >= 1 && k <= best.len() {
                    best[k - 1] = Some(line);
                }
            }
        }
        Ok(best.into_iter().flatten().collect())
    }

    /// The engine's move for `fen` (None when the side to move has no legal move).
    pub fn best_move(&mut self, fen: &str, limit: Limit, timeout: Duration) -> Result<Option<String>> {
        self.send("setoption name MultiPV value 1")?;
        self.send(&format!("position fen {fen}"))?;
        self.send(&limit.go())?;
        let reply = self.wait_for(|l| l.starts_with("bestmove"), timeout)?;
        let last = reply.last().map(|s| s.trim().to_string()).unwrap_or_default();
        match last.split_whitespace().nth(1) {
            Some("(none)") | Some("0000") => Ok(None),
            Some(m) if (4..=5).contains(&m.len()) => Ok(Some(m.to_string())),
            _ => Err(Error::Invalid(format!("{} answered {last:?}, not a move", self.path.display()))),
        }
    }

    /// Stops the process now (also done on drop).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to leave on its own, then make sure.
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.kill();
    }
}

/// One "info … multipv k … score …" line; None for anything else (or a bound, or garbage).
pub fn parse_info(line: &str) -> Option<Line> {
    read_info(line).ok().flatten()
}

/// `parse_info` with its refusals said: Ok(None) for a line that is no scored line (not `info`,
/// `info string …`, `info … currmove …`, a bound), an error quoting the line (at most 80
/// characters) for an `info` line that claims a score or a move and does not parse.
pub fn read_info(line: &str) -> std::result::Result<Option<Line>, String> {
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.first() != Some(&"info") || w.get(1) == Some(&"string") || w.contains(&"lowerbound") || w.contains(&"upperbound") {
        return Ok(None);
    }
    if !w.contains(&"score") && !w.contains(&"pv") {
        return Ok(None);
    }
    let bad = |what: &str| {
        let quoted: String = line.chars().take(80).collect();
        format!("Stockfish's info line {what}: {quoted:?}")
    };
    let after = |key: &str| w.iter().position(|&x| x == key).and_then(|i| w.get(i + 1)).copied();
    let depth = after("depth").and_then(|d| d.parse().ok()).ok_or_else(|| bad("has no depth"))?;
    let multipv = after("multipv").map_or(Some(1), |v| v.parse().ok()).ok_or_else(|| bad("has a bad multipv"))?;
    let score_at = w.iter().position(|&x| x == "score").ok_or_else(|| bad("has no score"))?;
    let score = match (w.get(score_at + 1), w.get(score_at + 2)) {
        (Some(&"cp"), Some(v)) => Score::Cp(v.parse().map_err(|_| bad("has a bad centipawn score"))?),
        (Some(&"mate"), Some(v)) => Score::Mate(v.parse().map_err(|_| bad("has a bad mate score"))?),
        _ => return Err(bad("has a score that is neither cp nor mate")),
    };
    let wdl = w.iter().position(|&x| x == "wdl").and_then(|i| {
        let v: Vec<u32> = w.get(i + 1..i + 4)?.iter().filter_map(|x| x.parse().ok()).collect();
        (v.len() == 3).then(|| [v[0], v[1], v[2]])
    });
    let uci = after("pv").ok_or_else(|| bad("has no move (pv)"))?.to_string();
    Ok(Some(Line { multipv, depth, uci, score, wdl }))
}

/// An engine that is started on first use and replaced once when it hangs or dies mid-call.
pub struct Supervised {
    path: PathBuf,
    options: EngineOptions,
    engine: Option<Engine>,
    /// How many times an engine was replaced (for logs and tests).
    pub replaced: u32,
    /// Where each started engine's process id is written (0: none runs), so another thread can
    /// kill a hung engine without waiting for this one (`kill_process`).
    pid_slot: Option<Arc<AtomicU32>>,
}

/// Kills the process `pid` (a hung engine) from any thread; its owner's wait then ends and the
/// owner reaps it. Best effort: a process already gone is not an error. On Unix the signal is sent
/// by the system call itself (a fresh Debian has no `kill` program: procps is not installed, and a
/// hung engine then stayed, found by `installer/fresh-debian-check`).
pub fn kill_process(pid: u32) {
    // 0: none runs (and kill(2) would signal our whole process group).
    #[cfg(windows)]
    if pid != 0 {
        let _ = std::process::Command::new("taskkill").args(["/F", "/PID", &pid.to_string()]).status();
    }
    #[cfg(unix)]
    if pid != 0
        && let Ok(pid) = libc::pid_t::try_from(pid)
    {
        // SAFETY: kill(2) with a positive pid signals that one process; it touches no memory of ours.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    // A page (wasm32) starts no process, so has none to kill.
    #[cfg(not(any(windows, unix)))]
    let _ = pid;
}

impl Supervised {
    pub fn new(path: PathBuf, options: EngineOptions) -> Supervised {
        Supervised { path, options, engine: None, replaced: 0, pid_slot: None }
    }

    /// Publishes every engine's process id in `slot` as it starts (0 when it is gone).
    pub fn publish_pid(mut self, slot: Arc<AtomicU32>) -> Supervised {
        self.pid_slot = Some(slot);
        self
    }

    fn with<T>(&mut self, mut call: impl FnMut(&mut Engine) -> Result<T>) -> Result<T> {
        for attempt in 0..2 {
            if self.engine.is_none() {
                let started = Engine::start(&self.path, &self.options)?;
                if let Some(slot) = &self.pid_slot {
                    slot.store(started.pid(), Ordering::SeqCst);
                }
                self.engine = Some(started);
            }
            let engine = self.engine.as_mut().expect("started");
            match call(engine) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    // Hung or dead: kill it (dropping reaps it) and start a fresh one.
                    tracing::warn!("{e}; replacing the engine");
                    if let Some(mut old) = self.engine.take() {
                        old.kill();
                    }
                    if let Some(slot) = &self.pid_slot {
                        slot.store(0, Ordering::SeqCst);
                    }
                    if attempt == 1 {
                        return Err(e);
                    }
                    self.replaced += 1;
                }
            }
        }
        unreachable!("two attempts return")
    }

    pub fn analyse(&mut self, fen: &str, limit: Limit, multipv: usize, timeout: Duration) -> Result<Vec<Line>> {
        self.with(|e| e.analyse(fen, limit, multipv, timeout))
    }

    pub fn analyse_among(&mut self, fen: &str, limit: Limit, multipv: usize, among: &[String], timeout: Duration) -> Result<Vec<Line>> {
        self.with(|e| e.analyse_among(fen, limit, multipv, among, timeout))
    }

    /// `analyse` by an engine that has forgotten every earlier search (`Engine::forget`).
    pub fn analyse_fresh(&mut self, fen: &str, limit: Limit, multipv: usize, timeout: Duration) -> Result<Vec<Line>> {
        self.with(|e| {
            e.forget()?;
            e.analyse(fen, limit, multipv, timeout)
        })
    }

    pub fn best_move(&mut self, fen: &str, limit: Limit, timeout: Duration) -> Result<Option<String>> {
        self.with(|e| e.best_move(fen, limit, timeout))
    }

    /// The running engine's process id, if one runs.
    pub fn pid(&self) -> Option<u32> {
        self.engine.as_ref().map(Engine::pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_parse_and_garbage_does_not() {
        let l = parse_info("info depth 10 seldepth 14 multipv 2 score cp -44 wdl 1 933 66 nodes 12345 nps 1 pv c7c5 d4c5").unwrap();
        assert_eq!(l, Line { multipv: 2, depth: 10, uci: "c7c5".into(), score: Score::Cp(-44), wdl: Some([1, 933, 66]) });
        let m = parse_info("info depth 5 score mate -3 pv e1e2").unwrap();
        assert_eq!((m.multipv, m.score), (1, Score::Mate(-3)));
        assert!(parse_info("info depth 9 score cp 20 lowerbound pv e2e4").is_none());
        assert!(parse_info("info string NNUE evaluation enabled").is_none());
        // Refusals are said, quoting the line; lines that carry no score are no refusal.
        assert_eq!(read_info("info depth 3 currmove e2e4 currmovenumber 1"), Ok(None));
        let e = read_info("info depth 9 score cp x12 pv e2e4").unwrap_err();
        assert!(e.contains("bad centipawn") && e.contains("info depth 9 score cp x12"), "{e}");
        assert!(read_info("info depth 9 score cp 12").unwrap_err().contains("no move"));
        assert!(parse_info("info depth x score cp 1 pv e2e4").is_none());
        assert!(parse_info("bestmove e2e4").is_none());
        assert!(parse_info("").is_none());
    }

    /// Where Windows users put Stockfish: unzipped beside the app (the official zip's folder and
    /// its long file name), or in Program Files; the app's own folder comes before PATH and
    /// Program Files, and a folder without it is passed over.
    #[test]
    fn stockfish_is_found_where_windows_users_put_it() {
        let root = tempfile::tempdir().unwrap();
        let app = root.path().join("Fly Chess");
        let program_files = root.path().join("Program Files");
        let on_path = root.path().join("bin");
        for d in [&app, &program_files.join("Stockfish"), &on_path] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(app.join("readme.txt"), "").unwrap();
        let env = |pf: &Path, path: &Path| {
            let (pf, path) = (pf.as_os_str().to_owned(), path.as_os_str().to_owned());
            move |name: &str| match name {
                "ProgramFiles" => Some(pf.clone()),
                "PATH" => Some(path.clone()),
                _ => None,
            }
        };
        let first = |places: Vec<PathBuf>| places.iter().find_map(|d| stockfish_in(d));
        // Nothing anywhere (the system folders of this machine aside).
        let none = first(search_places(Some(&app), env(&program_files, &on_path)));
        assert!(none.as_ref().is_none_or(|p| !p.starts_with(root.path())), "{none:?}");
        // In Program Files, in the zip's `stockfish` folder with its long name.
        let zipped = program_files.join("Stockfish/stockfish");
        std::fs::create_dir_all(&zipped).unwrap();
        std::fs::write(zipped.join("stockfish-windows-x86-64-avx2.exe"), "").unwrap();
        std::fs::write(zipped.join("README.md"), "").unwrap();
        assert_eq!(first(search_places(Some(&app), env(&program_files, &on_path))), Some(zipped.join("stockfish-windows-x86-64-avx2.exe")));
        // On PATH comes before Program Files.
        std::fs::write(on_path.join("stockfish.exe"), "").unwrap();
        assert_eq!(first(search_places(Some(&app), env(&program_files, &on_path))), Some(on_path.join("stockfish.exe")));
        // Beside the app (in the zip's folder) comes first.
        std::fs::create_dir_all(app.join("stockfish")).unwrap();
        std::fs::write(app.join("stockfish/stockfish-windows-x86-64-sse41-popcnt.exe"), "").unwrap();
        assert_eq!(
            first(search_places(Some(&app), env(&program_files, &on_path))),
            Some(app.join("stockfish/stockfish-windows-x86-64-sse41-popcnt.exe"))
        );
        // A folder named like the engine is not the engine.
        let odd = root.path().join("odd");
        std::fs::create_dir_all(odd.join("stockfish.exe")).unwrap();
        assert_eq!(stockfish_in(&odd), None);
    }
}
