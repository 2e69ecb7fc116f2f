//! The UCI engine keeps the clock (issue 59), driven by python-chess: a search player answers a
//! `go movetime 200` within 400 ms, never loses on time in a 10 s + 0.1 s game, and a 100,000-
//! simulation search stops at its budget and answers `isready` and `stop` at once. A test binary
//! of its own so that no other test's think shares the two cores while it measures the clock.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

#[test]
fn a_search_player_keeps_the_clock_and_answers_stop_and_isready_at_once() {
    let data = tempfile::tempdir().unwrap();
    let Some(seen) = common::python_chess_client("uci_clock.py", data.path(), &["--engine", "cpu"]) else { return };
    eprintln!("{}", serde_json::to_string_pretty(&seen).unwrap());

    let movetimes: Vec<f64> = seen["movetime_200_s"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
    assert_eq!(movetimes.len(), 5);
    for t in &movetimes {
        assert!(*t < 0.4, "go movetime 200 answered in {t:.3} s (at most 0.4): {movetimes:?}");
    }
    // The nodes reported are the boards the brain thought (the root and the search's leaves).
    assert!(seen["movetime_200_nodes"].as_u64().is_some_and(|n| n >= 1), "{}", seen["movetime_200_nodes"]);

    let game = &seen["game"];
    assert!(game["flagged"].as_str() != Some("white"), "the fly lost on time: {game}");
    assert!(game["plies"].as_u64().unwrap() >= 20, "{game}");

    let raw = &seen["raw"];
    let movetime = raw["movetime_100_bestmove_s"].as_f64().unwrap();
    assert!(movetime < 0.3, "search100000 under go movetime 100: bestmove after {movetime:.3} s (at most 0.3)");
    assert!(raw["movetime_100_line"].as_str().unwrap().starts_with("bestmove "), "{raw}");
    let isready = raw["isready_while_thinking_s"].as_f64().unwrap();
    let stop = raw["stop_s"].as_f64().unwrap();
    assert!(isready < 0.1, "isready while thinking answered after {isready:.3} s");
    assert!(stop < 0.1, "stop answered after {stop:.3} s");
    let best = raw["stop_line"].as_str().unwrap();
    assert!(best.starts_with("bestmove ") && !best.contains("0000") && !best.contains("(none)"), "{best}");
    assert!(raw["quit_s"].as_f64().unwrap() < 5.0, "{raw}");
}
