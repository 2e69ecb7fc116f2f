//! The UCI engine keeps the clock for every player (issues 59 and 71), checked by what the engine
//! controls and says, never by this machine's wall clock: the nodes it stops at, the `info
//! string` that says a think was left out because the clock could not hold it, its own `info
//! time` (with a margin a busy machine does not break), `info` lines at least once a second under
//! `go infinite`, and `bestmove` only after `stop`. Driven by `tests/uci_clock.py`: python-chess
//! chooses every player through the options, then the bare pipe. A test binary of its own so that
//! no other test's think shares the cores while the engine weighs its budget.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use serde_json::Value;

/// The engine's own `time` may exceed the movetime by this much: the budget keeps 40 ms back,
/// and a think it starts is one it expects to end in time; what is left is the machine stalling
/// the process (another job on a shared machine), which this margin allows for.
const STALL_MS: u64 = 1_000;

fn nodes(answer: &Value) -> u64 {
    answer["nodes"].as_u64().unwrap_or_else(|| panic!("no nodes: {answer}"))
}

fn said(answer: &Value, what: &str) -> bool {
    answer["strings"].as_array().unwrap().iter().any(|s| s.as_str().unwrap().contains(what))
}

fn legal_bestmove(answer: &Value) {
    let best = answer["bestmove"].as_str().unwrap();
    assert!(best.starts_with("bestmove ") && !best.contains("0000") && !best.contains("(none)"), "{answer}");
}

#[test]
fn every_player_keeps_the_clock_by_what_the_engine_says_and_stops() {
    let data = tempfile::tempdir().unwrap();
    let Some(seen) = common::python_chess_client("uci_clock.py", data.path(), &["--engine", "cpu"]) else { return };
    eprintln!("{}", serde_json::to_string_pretty(&seen).unwrap());

    // python-chess chooses every player docs/uci.md names: two from the combo, a search of any
    // size through the Search spin.
    let chosen = &seen["python_chess"];
    let players: Vec<&str> = chosen["players"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    for p in ["flywire", "flywire+imagination", "flywire+search64", "flywire+judge", "charles"] {
        assert!(players.contains(&p), "{p} in the Player combo: {players:?}");
    }
    assert_eq!(chosen["search_option"], serde_json::json!({"type": "spin", "min": 0, "max": 100000}), "{chosen}");
    for (name, answers) in chosen["answers"].as_object().unwrap() {
        assert!(answers.get("refused").is_none(), "python-chess could not choose {name}: {answers}");
        for (movetime, list) in answers.as_object().unwrap() {
            let movetime: u64 = movetime.parse().unwrap();
            for a in list.as_array().unwrap() {
                let t = a["time_ms"].as_u64().unwrap_or_else(|| panic!("{name}: no info time: {a}"));
                assert!(t <= movetime + STALL_MS, "{name} at movetime {movetime}: its own info time {t} ms: {answers}");
            }
        }
    }
    assert_eq!(chosen["answers"].as_object().unwrap().len(), 3, "{chosen}");

    let pipe = &seen["pipe"];
    // Imagination: under a 1 ms clock its look-ahead (the board and each move's) is not started,
    // and it says so: the fly's own answer, one board thought (no time to value the line's).
    let short = &pipe["imagination_movetime_1"];
    assert!(said(short, "imagination left out of this move"), "{short}");
    assert_eq!(nodes(short), 1, "{short}");
    legal_bestmove(short);
    // Given a minute, it looks: the board, the 20 boards after Black's moves after 1. e4, the
    // line's value.
    let long = &pipe["imagination_movetime_60000"];
    assert!(!said(long, "left out"), "{long}");
    assert_eq!(nodes(long), 1 + 20 + 1, "{long}");
    assert!(long["time_ms"].as_u64().unwrap() < 60_000, "{long}");

    // A search of 100,000 simulations: `nodes 40` caps it (the root, at most 40 leaves, the
    // line's value), under a 1 ms clock not even its first batch is started, and under 300 ms it
    // stops on its budget, far short of its simulations.
    let capped = &pipe["search_nodes_40"];
    assert!((2..=1 + 40 + 1).contains(&nodes(capped)), "{capped}");
    let short = &pipe["search_movetime_1"];
    assert!(said(short, "search left out of this move"), "{short}");
    assert_eq!(nodes(short), 1, "{short}");
    legal_bestmove(short);
    let budget = &pipe["search_movetime_300"];
    assert!(nodes(budget) < 10_000, "{budget}");
    assert!(budget["time_ms"].as_u64().unwrap() <= 300 + STALL_MS, "{budget}");
    assert!(nodes(budget) > 2 || said(budget, "search left out"), "it searched, or said why not: {budget}");

    // `go infinite`, the search's and the fly's: info lines (the search's own after each slice,
    // or a heartbeat) at least once a second by the engine's own times, no bestmove until
    // `stop`, then the best move so far.
    for (which, lasted) in [("infinite", 3_000), ("infinite_fly", 2_000)] {
        let infinite = &pipe[which];
        let times: Vec<u64> = infinite["info_times_ms"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
        assert!(!times.is_empty() && times.windows(2).all(|w| w[0] <= w[1]), "{which}: {infinite}");
        let gaps = std::iter::once(times[0]).chain(times.windows(2).map(|w| w[1] - w[0]));
        assert!(gaps.clone().all(|g| g <= 1_000 + STALL_MS / 2), "{which}: an info line at least once a second: {times:?}");
        // Until `stop` (sent after `lasted` ms here; the engine's clock may have run less if
        // this machine stalled the pipe, never more than the isready before stop).
        assert!(times.last().unwrap() + 1_000 + STALL_MS / 2 >= lasted, "{which}: {times:?}");
        assert_eq!(infinite["bestmove_before_stop"], serde_json::json!([]), "{which}: {infinite}");
        legal_bestmove(&infinite["after_stop"]);
    }
    assert_eq!(pipe["exit"], 0, "{pipe}");
}
