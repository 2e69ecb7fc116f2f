//! The UCI client against the real Stockfish, and against fake engines that hang or die: every
//! call times out, a broken engine is killed, reaped and replaced, and nothing is left running.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flychess_fly::grading::Score;
use flychess_fly::stockfish::{Engine, EngineOptions, Limit, Supervised, find_stockfish};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn stockfish() -> Option<PathBuf> {
    match find_stockfish(None) {
        Ok(p) => Some(p),
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Answers the handshake, then never answers `go`.
const HANGS: &str = r#"while read line; do
  case "$line" in
    uci) echo "id name Hangs"; echo "uciok" ;;
    isready) echo "readyok" ;;
    quit) exit 0 ;;
  esac
done
"#;

fn gone(pid: u32) -> bool {
    // Reaped children leave no /proc entry (a zombie would keep one).
    !Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn stockfish_analyses_with_multipv_and_plays_a_legal_move() {
    let Some(sf) = stockfish() else { return };
    let mut e = Engine::start(&sf, &EngineOptions::default()).unwrap();
    let lines = e.analyse(START, Limit::Depth(8), 4, Duration::from_secs(30)).unwrap();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines.iter().map(|l| l.multipv).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert!(lines.iter().all(|l| l.depth == 8 && matches!(l.score, Score::Cp(cp) if cp.abs() < 150)));
    assert!(lines.iter().all(|l| l.wdl.is_some()), "UCI_ShowWDL is on");
    let pos = flychess_brain::chess::position_from_fen(START).unwrap();
    use shakmaty::Position;
    let legal: Vec<String> = pos.legal_moves().iter().map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string()).collect();
    assert!(lines.iter().all(|l| legal.contains(&l.uci)), "{lines:?}");
    let best = e.best_move(START, Limit::Nodes(2_000), Duration::from_secs(30)).unwrap().unwrap();
    assert!(legal.contains(&best));
    // Mate: no move.
    let mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3";
    assert_eq!(e.best_move(mated, Limit::Depth(3), Duration::from_secs(10)).unwrap(), None);
    assert!(e.min_elo.is_some_and(|m| m == 1320 || m == 1350), "lowest UCI_Elo: {:?}", e.min_elo);
}

#[test]
fn searchmoves_grades_exactly_the_listed_moves_and_bad_moves_are_refused() {
    let Some(sf) = stockfish() else { return };
    let mut e = Engine::start(&sf, &EngineOptions::default()).unwrap();
    // A blunder (the queen walks into a pawn) next to two normal moves.
    let fen = "rnbqkbnr/ppp2ppp/8/3pp3/4P3/5Q2/PPPP1PPP/RNB1KBNR w KQkq - 0 3";
    let among: Vec<String> = ["f3f7", "b1c3", "e4d5"].iter().map(|s| s.to_string()).collect();
    let lines = e.analyse_among(fen, Limit::Depth(8), 3, &among, Duration::from_secs(30)).unwrap();
    let mut got: Vec<&str> = lines.iter().map(|l| l.uci.as_str()).collect();
    got.sort();
    assert_eq!(got, vec!["b1c3", "e4d5", "f3f7"]);
    let blunder = lines.iter().find(|l| l.uci == "f3f7").unwrap();
    assert!(lines.iter().all(|l| l.score.as_cp() >= blunder.score.as_cp()), "{lines:?}");
    assert!(e.analyse_among(fen, Limit::Depth(4), 1, &["quit\ngo".to_string()], Duration::from_secs(5)).is_err());
    // The engine still answers after the refused request.
    assert_eq!(e.analyse(fen, Limit::Depth(4), 1, Duration::from_secs(10)).unwrap().len(), 1);
}

#[test]
fn a_hung_engine_times_out_and_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let hangs = script(dir.path(), "hangs.sh", HANGS);
    let mut e = Engine::start(&hangs, &EngineOptions::default()).unwrap();
    let pid = e.pid();
    let started = std::time::Instant::now();
    let err = e.analyse(START, Limit::Depth(5), 1, Duration::from_millis(400)).unwrap_err().to_string();
    assert!(err.contains("did not answer within 0.4 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    drop(e);
    assert!(gone(pid), "the hung engine was killed and reaped");
}

#[test]
fn a_supervised_engine_that_dies_mid_analysis_is_replaced() {
    let Some(sf) = stockfish() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("died-once");
    // The first process dies when asked to search; the next one is the real Stockfish.
    let dies_once = script(
        dir.path(),
        "dies-once.sh",
        &format!(
            r#"if [ -e "{m}" ]; then exec "{sf}"; fi
while read line; do
  case "$line" in
    uci) echo "uciok" ;;
    isready) echo "readyok" ;;
    go*) echo "info depth 1 score cp 10 pv e2e4"; touch "{m}"; exit 3 ;;
  esac
done
"#,
            m = marker.display(),
            sf = sf.display()
        ),
    );
    let mut s = Supervised::new(dies_once, EngineOptions::default());
    let lines = s.analyse(START, Limit::Depth(6), 2, Duration::from_secs(30)).unwrap();
    assert_eq!(lines.len(), 2, "the replacement answered");
    assert_eq!(s.replaced, 1);
}

#[test]
fn a_supervised_engine_that_keeps_hanging_gives_up_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Supervised::new(script(dir.path(), "hangs.sh", HANGS), EngineOptions::default());
    let err = s.best_move(START, Limit::Depth(5), Duration::from_millis(300)).unwrap_err().to_string();
    assert!(err.contains("did not answer"), "{err}");
    assert_eq!(s.replaced, 1, "one replacement was tried");
    assert!(s.pid().is_none(), "nothing left running");
}

#[test]
fn a_missing_engine_says_how_to_install_it() {
    let err = Engine::start(Path::new("/nonexistent/stockfish"), &EngineOptions::default()).err().unwrap().to_string();
    assert!(err.contains("could not start"), "{err}");
    assert!(flychess_fly::stockfish::INSTALL_HINT.contains("apt-get install stockfish"));
}
