//! Helpers shared by the UI tests: a harness around the real app on the shared default brain,
//! waiting in real time for its worker threads, and pointer gestures on board squares.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use shakmaty::Square;

use flychess_window::ui::{FlyChessApp, Launch};

pub type App = Option<FlyChessApp>;

pub fn data() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain")
}

pub fn harness(data: &Path) -> Harness<'static, App> {
    let mut h = Harness::builder().with_size([1280.0, 800.0]).with_step_dt(1.0 / 30.0).with_accessibility_check(false).build_ui_state(
        |ui, app: &mut App| {
            if let Some(a) = app {
                a.show(ui)
            }
        },
        None,
    );
    let launch = Launch { data: data.to_path_buf(), quiet: true, ..Default::default() };
    let app = FlyChessApp::new(&h.ctx, "test".into(), launch, None, None);
    *h.state_mut() = Some(app);
    wait(&mut h, "the brain, its view and the fly", |a| a.ready().is_some() && a.brain_view.is_some() && a.lab.play().fly.is_some());
    h
}

pub fn app<'h>(h: &'h Harness<'static, App>) -> &'h FlyChessApp {
    h.state().as_ref().unwrap()
}

pub fn app_mut<'h>(h: &'h mut Harness<'static, App>) -> &'h mut FlyChessApp {
    h.state_mut().as_mut().unwrap()
}

/// Steps the UI (in real time, the workers are real threads) until `done` holds.
pub fn wait(h: &mut Harness<'static, App>, what: &str, done: impl Fn(&FlyChessApp) -> bool) {
    let start = Instant::now();
    while !done(app(h)) {
        if let flychess_lab::lab::BrainState::Failed(e) = &app(h).lab.brain() {
            panic!("the brain could not be prepared while waiting for {what}: {e}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(limit_seconds()),
            "timed out waiting for {what}; status: {}",
            app(h).lab.play().status()
        );
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    h.step();
}

/// Presses on `from`, moves to `to`, releases: a drag-and-drop as the mouse makes it.
pub fn drag(h: &mut Harness<'static, App>, from: Square, to: Square) {
    let a = app(h).play.board.square_center(from);
    let b = app(h).play.board.square_center(to);
    h.hover_at(a);
    h.step();
    h.drag_at(a);
    h.step();
    h.hover_at(a + (b - a) * 0.5);
    h.step();
    h.hover_at(b);
    h.step();
    h.drop_at(b);
    h.step();
}

pub fn click(h: &mut Harness<'static, App>, sq: Square) {
    let p = app(h).play.board.square_center(sq);
    h.hover_at(p);
    h.step();
    h.drag_at(p);
    h.step();
    h.drop_at(p);
    h.step();
}

/// How long a wait may take: generous, the first run builds the brain and caches.
fn limit_seconds() -> u64 {
    std::env::var("FLYCHESS_TEST_WAIT").ok().and_then(|v| v.parse().ok()).unwrap_or(900)
}

/// A brain-training (BPTT) run small enough for a test, shared by the CLI test and the kill
/// test: a 6-step window on a leash of 0.2, plain SGD, 64 positions in batches of 16, VAL of 32
/// positions, HOLD of 48 (each caller adds `--val-every` and its name).
pub const SMALL_BRAIN_TRAINING: [&str; 14] = [
    "--window",
    "6",
    "--max-change",
    "0.2",
    "--brain-opt",
    "sgd",
    "--positions",
    "64",
    "--brain-batch",
    "16",
    "--val",
    "32",
    "--hold",
    "48",
];

/// Whether Stockfish is here; a test that needs it skips without it, saying so, except in CI
/// (FLYCHESS_CI), which installs it.
pub fn stockfish_or_skip() -> bool {
    if flychess_fly::stockfish::find_stockfish(None).is_ok() {
        return true;
    }
    assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs Stockfish");
    eprintln!("skipped: no Stockfish (apt-get install stockfish)");
    false
}

/// The Python with python-chess: FLYCHESS_PYTHON (`.ci/run` makes a virtual environment under the
/// target folder and names its python3), else `python3` on PATH.
pub fn python() -> String {
    std::env::var("FLYCHESS_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs a python-chess client script of `tests/` as `SCRIPT STOCKFISH FLYCHESS --data DATA uci
/// ARGS…` and returns the JSON it prints; None (said) where python-chess or Stockfish is missing,
/// which CI (FLYCHESS_CI) never allows.
pub fn python_chess_client(script: &str, data: &Path, uci_args: &[&str]) -> Option<serde_json::Value> {
    use std::process::Command;
    let ci = std::env::var_os("FLYCHESS_CI").is_some();
    if !Command::new(python()).args(["-c", "import chess.engine"]).status().is_ok_and(|s| s.success()) {
        assert!(!ci, "python-chess is missing; CI installs it into a virtual environment (FLYCHESS_PYTHON)");
        eprintln!("skipped: python-chess is not installed (pip install chess)");
        return None;
    }
    let Ok(stockfish) = flychess_fly::stockfish::find_stockfish(None) else {
        assert!(!ci, "CI has Stockfish");
        eprintln!("skipped: no Stockfish");
        return None;
    };
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(script))
        .arg(&stockfish)
        .arg(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(data)
        .arg("uci")
        .args(uci_args)
        .output()
        .expect("python runs");
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the client's JSON"))
}

/// Runs `flychess --data DATA uci` with `input` on its stdin (then its end), returns (status,
/// stdout, stderr).
pub fn session(data: &Path, input: &[u8]) -> (std::process::ExitStatus, String, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(data)
        .arg("uci")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, &input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (out.status, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}
