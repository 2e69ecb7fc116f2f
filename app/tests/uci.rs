//! `flychess uci` as chess programs use it: the real binary on a pipe, driven by hand for the
//! protocol's robustness and by python-chess's engine client (a UCI client nobody here wrote) for
//! a game against Stockfish with clocks, a MultiPV analysis checked against the fly's own policy,
//! and a switch of player through the `Player` option.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;
use common::session;

use std::path::Path;
use std::process::{Command, Stdio};

use shakmaty::{CastlingMode, Chess, Position};

#[test]
fn bad_input_is_said_and_ignored_the_last_good_position_kept_and_the_end_of_input_ends_it() {
    let data = tempfile::tempdir().unwrap();
    let mut input = String::new();
    input.push_str("uci\nisready\n");
    input.push_str("position startpos moves e2e4\n");
    input.push_str("position fen this is no fen\n");
    input.push_str("position startpos moves e7e5 e2e4\n");
    input.push_str("position sideways\n");
    input.push_str("frobnicate the board\n");
    input.push_str("setoption name MultiPV value 0\n");
    input.push_str("setoption name Player value nobody-at-all\n");
    input.push_str(&"x".repeat(70_000));
    input.push('\n');
    input.push_str("\n   \n");
    input.push_str("go wtime 1000 btime 1000 bogus\n");
    // No quit: the end of the input ends the session.
    let (status, out, err) = session(data.path(), input.as_bytes());
    assert!(status.success(), "exit {status:?}\nstdout:\n{out}\nstderr:\n{err}");
    for wanted in ["id name Fly Chess (", "option name Player type combo", "option name MultiPV type spin", "uciok", "readyok"] {
        assert!(out.contains(wanted), "{wanted:?} missing:\n{out}");
    }
    let said: Vec<&str> = out.lines().filter(|l| l.starts_with("info string")).collect();
    let refused = said.iter().filter(|l| l.contains("position refused, the last one kept")).count();
    assert_eq!(refused, 3, "three bad positions refused: {said:#?}");
    assert!(said.iter().any(|l| l.contains("move 1 (e7e5) is not legal here")), "{said:#?}");
    assert!(said.iter().any(|l| l.contains("MultiPV is 1 to")), "{said:#?}");
    assert!(said.iter().any(|l| l.contains("nobody-at-all cannot play")), "{said:#?}");
    assert!(said.iter().any(|l| l.contains("refused unread")), "{said:#?}");
    assert!(said.iter().all(|l| l.len() < 400), "errors quote a short prefix: {said:#?}");
    assert!(err.contains("unknown command frobnicate"), "{err}");
    assert!(err.contains("unknown token bogus"), "{err}");
    // The answer is a legal move for Black after 1. e4: the last good position.
    let best = out.lines().find_map(|l| l.strip_prefix("bestmove ")).expect("a bestmove");
    let mut after_e4 = Chess::default();
    after_e4.play_unchecked(shakmaty::uci::UciMove::from_ascii(b"e2e4").unwrap().to_move(&after_e4).unwrap());
    let m: shakmaty::uci::UciMove = best.split_whitespace().next().unwrap().parse().unwrap();
    assert!(m.to_move(&after_e4).is_ok(), "bestmove {best} is not legal after 1. e4");
    // Its MultiPV line is there, with the move's probability.
    assert!(out.lines().any(|l| l.starts_with("info depth 1") && l.contains("multipv 1 score cp")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("info string multipv 1") && l.contains("probability")), "{out}");
}

#[test]
fn go_infinite_waits_for_stop_and_a_finished_game_says_none() {
    let data = tempfile::tempdir().unwrap();
    let input = "uci\nposition fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\ngo\nposition startpos\ngo infinite\nisready\nstop\nquit\nisready\n";
    let (status, out, _) = session(data.path(), input.as_bytes());
    assert!(status.success(), "{out}");
    let bests: Vec<&str> = out.lines().filter(|l| l.starts_with("bestmove")).collect();
    assert_eq!(bests.len(), 2, "{out}");
    assert_eq!(bests[0], "bestmove (none)", "stalemate: no move");
    // `isready` while holding is answered, and the held bestmove comes after it (on `stop`).
    let lines: Vec<&str> = out.lines().collect();
    let ready = lines.iter().rposition(|l| *l == "readyok").unwrap();
    let held = lines.iter().rposition(|l| l.starts_with("bestmove")).unwrap();
    assert!(ready < held, "{out}");
    // `quit` ended it: the last `isready` was never answered.
    assert_eq!(lines.iter().filter(|l| **l == "readyok").count(), 1, "{out}");
}

#[test]
fn python_chess_plays_a_game_with_clocks_analyses_with_multipv_3_and_switches_player() {
    let data = tempfile::tempdir().unwrap();
    let Some(seen) = common::python_chess_client("uci_client.py", data.path(), &[]) else { return };
    eprintln!("{}", serde_json::to_string_pretty(&seen["game"]).unwrap());

    // Who it says it is, and its options.
    assert_eq!(seen["id"], "Fly Chess (flywire)");
    for o in ["Player", "Imagination", "Engine", "MultiPV", "Threads", "UCI_ShowWDL"] {
        assert!(seen["options"].as_array().unwrap().iter().any(|x| x == o), "option {o}: {}", seen["options"]);
    }
    let players: Vec<&str> = seen["players"].as_array().unwrap().iter().filter_map(|p| p.as_str()).collect();
    for p in ["flywire", "flywire+search64", "charles"] {
        assert!(players.contains(&p), "{p} offered: {players:?}");
    }

    // The game reached a result by the rules, the fly never out of time.
    let game = &seen["game"];
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&game["result"].as_str().unwrap()), "{game}");
    assert_ne!(game["termination"], "move cap", "{game}");
    assert!(game["flagged"] != "white", "the fly lost on time: {game}");
    assert!(game["fly_clock_left"].as_f64().unwrap() > 0.0, "{game}");

    // MultiPV 3: the fly's own three most probable moves, most probable first.
    let (loaded, brain) = flychess_brain::store::ready_brain(
        &flychess_brain::store::BrainSpec::default(),
        data.path(),
        flychess_brain::calibrate::CalibrationOptions::default(),
        &|_, _| {},
    )
    .unwrap();
    let (_, path) = flychess_fly::fly::trained_for(&loaded.checksum, data.path()).expect("the shipped fly");
    let fly = flychess_fly::fly::Fly::load(&path).unwrap();
    let fen = seen["analysis"]["fen"].as_str().unwrap();
    let pos: Chess = fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let features = flychess_fly::readout::think_features(
        &brain,
        &[flychess_brain::chess::planes(&pos)],
        &loaded.connectome.groups.descending,
        &fly.readout.read_steps,
    );
    let p = flychess_fly::readout::policy(&pos, &fly.readout.heads(&features[0]));
    let mut order: Vec<usize> = (0..p.moves.len()).collect();
    order.sort_by(|&a, &b| p.probability[b].total_cmp(&p.probability[a]));
    let top3: Vec<String> = order[..3].iter().map(|&i| flychess_brain::chess::uci(&p.moves[i])).collect();
    let analysed: Vec<String> = seen["analysis"]["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
    assert_eq!(analysed, top3, "MultiPV 3 shows the fly's top three");

    // Player switched to Charles: Charles's favourite, with its probability said.
    let charles = flychess_charles::player::Trained::load("charles", data.path()).expect("the shipped Charles");
    let cp = flychess_arena::network::Network::policy(&charles, &Chess::default()).unwrap();
    let fav = (0..cp.moves.len()).max_by(|&a, &b| cp.probability[a].total_cmp(&cp.probability[b])).unwrap();
    assert_eq!(seen["charles"]["move"], flychess_brain::chess::uci(&cp.moves[fav]), "{}", seen["charles"]);
    assert!(seen["charles"]["string"].as_str().unwrap().contains("probability"), "{}", seen["charles"]);
}

fn flychess_json(data: &Path, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flychess")).arg("--data").arg(data).args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn any_uci_engine_plays_duels_under_what_it_calls_itself_and_its_options() {
    let Ok(stockfish) = flychess_fly::stockfish::find_stockfish(None) else {
        assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI has Stockfish");
        eprintln!("skipped: no Stockfish");
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let engine = format!("sf={}", stockfish.display());
    let duel = |option: &str| {
        flychess_json(data.path(), &["duel", "random", "sf", "--games", "2", "--json", "--uci", &engine, "--uci-option", option])
    };
    let first = duel("sf:Skill Level=0");
    assert_eq!((first["games"].as_u64(), first["second"].as_str()), (Some(2), Some("sf")), "{first}");
    let id = first["second_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("uci-") && id.len() == 20, "{id}");
    let file = first["games_file"].as_str().unwrap().to_string();
    let lines = |f: &str| std::fs::read_to_string(f).unwrap().lines().count();
    assert_eq!(lines(&file), 2);
    // The same engine and options again: its games are there, nothing is played.
    let again = duel("sf:Skill Level=0");
    assert_eq!((again["second_id"].as_str(), again["games"].as_u64()), (Some(id.as_str()), Some(2)));
    assert_eq!(lines(&file), 2, "resumed, not replayed");
    // Another option is another player.
    let stronger = duel("sf:Skill Level=3");
    assert_ne!(stronger["second_id"].as_str(), Some(id.as_str()));
    // The fly itself as a UCI engine, started under the name flychess-uci (no arguments).
    #[cfg(unix)]
    {
        let link = data.path().join("flychess-uci");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_flychess"), &link).unwrap();
        let fly = format!("fly={}", link.display());
        let games = flychess_json(
            data.path(),
            &["duel", "random", "fly", "--games", "2", "--json", "--uci", &fly, "--uci-option", "fly:MultiPV=1"],
        );
        assert_eq!(games["games"].as_u64(), Some(2), "{games}");
        let rows = std::fs::read_to_string(games["games_file"].as_str().unwrap()).unwrap();
        for row in rows.lines() {
            let row: serde_json::Value = serde_json::from_str(row).unwrap();
            assert!(["1-0", "0-1", "1/2-1/2"].contains(&row["result"].as_str().unwrap()), "{row}");
            assert!(row["plies"].as_u64().unwrap() > 0);
        }
    }
}

/// A player that cannot play is refused where it is chosen, never replaced by a first legal move:
/// named at start-up, the engine exits 1 with the reason on stderr before answering anything; set
/// by `setoption` it is refused in an `info string`; options a player has no use for are said once.
#[test]
fn a_player_that_cannot_play_is_refused_where_it_is_chosen_and_options_it_ignores_are_said_once() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(data.path())
        .args(["uci", "--player", "nobody-at-all"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("nobody-at-all cannot play") && stderr.contains("no player named"), "{stderr}");
    assert!(!stdout.contains("bestmove") && !stdout.contains("uciok"), "{stdout}");

    // Imagination given to the greedy mover (no readout fly), twice: said once, and the move is
    // the greedy mover's own (it takes the queen).
    let input = "uci\nsetoption name Player value greedy\nsetoption name Imagination value 1\nisready\n\
                 position fen 4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1\ngo movetime 50\ngo movetime 50\nquit\n";
    let (status, out, _) = session(data.path(), input.as_bytes());
    assert!(status.success(), "{out}");
    let said = |what: &str| out.lines().filter(|l| l.starts_with("info string") && l.contains(what)).count();
    assert_eq!(said("Imagination is for a plain readout fly"), 1, "{out}");
    assert_eq!(said("thinks once"), 1, "{out}");
    let bests: Vec<&str> = out.lines().filter(|l| l.starts_with("bestmove")).collect();
    assert_eq!(bests, ["bestmove d2d5", "bestmove d2d5"], "{out}");
}

/// Every name docs/uci.md offers can be chosen from a drop-down or a spin: the `Player` combo
/// holds the trained fly with `+imagination` beside `+judge` and `+search64`, and the `Search`
/// spin gives any search (0 to 100,000 simulations) over the player; a search a player cannot
/// take is refused and Search stays as it was.
#[test]
fn the_options_offer_every_name_the_docs_accept_and_search_is_a_spin() {
    let data = tempfile::tempdir().unwrap();
    let input = "uci\nsetoption name Search value 100\nisready\nposition startpos\ngo nodes 16\n\
                 setoption name Player value random\nsetoption name Search value 0\nsetoption name Player value random\n\
                 setoption name Search value 8\nsetoption name Search value 100001\nisready\nquit\n";
    let (status, out, err) = session(data.path(), input.as_bytes());
    assert!(status.success(), "{out}\n{err}");
    let combo = out.lines().find(|l| l.starts_with("option name Player type combo")).expect("the Player combo");
    let vars: Vec<&str> = combo.split(" var ").skip(1).collect();
    for p in ["flywire", "flywire+imagination", "flywire+judge", "flywire+search64", "charles", "random", "greedy"] {
        assert!(vars.contains(&p), "{p} offered: {vars:?}");
    }
    assert!(out.lines().any(|l| l == "option name Search type spin default 0 min 0 max 100000"), "{out}");
    // Search 100 over flywire plays (the end of the input stops its think at once: its move is
    // the root's favourite, still a move).
    assert!(out.lines().any(|l| l.starts_with("bestmove ") && l != "bestmove 0000"), "{out}");
    let said: Vec<&str> = out.lines().filter(|l| l.starts_with("info string")).collect();
    // Player random while Search is 100: refused, saying why, and flywire+search100 stays.
    assert!(
        said.iter().any(|l| l.contains("random cannot play") && l.contains("Search is 100") && l.ends_with("(playing flywire+search100)")),
        "{said:#?}"
    );
    // Search 8 over random: refused, the player stays random; 100001 is out of range.
    assert!(
        said.iter().any(|l| l.contains("random+search8 cannot play") && l.contains("Search stays as it was (playing random)")),
        "{said:#?}"
    );
    assert!(said.iter().any(|l| l.contains("Search is 0 (off) to 100000 simulations, not 100001")), "{said:#?}");
}

/// A GPU that cannot start is said where a GUI shows it (an `info string`), not only on stderr
/// which GUIs hide; the engine thinks on the CPU. No adapter is made to be found: the Vulkan and
/// EGL drivers are pointed at files that do not exist.
#[test]
fn a_gpu_that_cannot_start_is_said_in_an_info_string() {
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(data.path())
        .arg("uci")
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .env("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/egl.json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = "uci\nsetoption name Engine value gpu\nisready\nposition startpos\ngo movetime 100\nquit\n";
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let done = child.wait_with_output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert!(done.status.success(), "{out}\n{err}");
    let said = out.lines().find(|l| l.starts_with("info string") && l.contains("gpu engine could not start"));
    assert!(said.is_some_and(|l| l.contains("thinking on the CPU")), "no info string for the GPU:\n{out}\nstderr:\n{err}");
    let ready = out.lines().position(|l| l == "readyok").unwrap();
    let at = out.lines().position(|l| l.contains("gpu engine could not start")).unwrap();
    assert!(at < ready, "said before readyok, where the GUI set the engine:\n{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ") && l != "bestmove 0000"), "{out}");
}
