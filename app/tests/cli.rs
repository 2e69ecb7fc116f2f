//! The `flychess brain …` commands as a user runs them: the real binary, real files on disk.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;
use common::{SMALL_BRAIN_TRAINING, stockfish_or_skip};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

fn flychess(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flychess")).arg("--data").arg(data).args(args).output().expect("the binary runs")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn generated_tables_build_through_the_release_path_and_stay_labelled_as_the_stand_in() {
    let t = tempfile::tempdir().unwrap();
    let tables = t.path().join("tables");
    let out = flychess(t.path(), &["brain", "generate", "--out", tables.to_str().unwrap(), "--seed", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let info = json(&flychess(t.path(), &["brain", "info", "--json", "--brain", "malecns", "--tables", tables.to_str().unwrap()]));
    assert_eq!(info["source"], "synthetic stand-in (seed 3)");
    assert_eq!(info["neurons"], 163_803);
    assert_eq!(info["descending"], 1_314);
    assert_eq!(info["eye_to_descending_shortest_path"], 2);
    assert!(info["load_seconds"].as_f64().unwrap() > 0.0);
    assert!(info["generate_and_build_seconds"].as_f64().is_some(), "built on this call");
    // Second call: loaded from the file, not rebuilt.
    let again = json(&flychess(t.path(), &["brain", "info", "--json", "--brain", "malecns", "--tables", tables.to_str().unwrap()]));
    assert!(again["generate_and_build_seconds"].is_null());
    assert_eq!(again["checksum"], info["checksum"]);
    // Moved elsewhere, the same tables are the same brain: loaded, not rebuilt, same id.
    let moved = t.path().join("moved");
    std::fs::rename(&tables, &moved).unwrap();
    let after_move = json(&flychess(t.path(), &["brain", "info", "--json", "--brain", "malecns", "--tables", moved.to_str().unwrap()]));
    assert_eq!(after_move["checksum"], info["checksum"], "moving the tables keeps the brain");
    assert!(after_move["generate_and_build_seconds"].is_null(), "and does not rebuild it");
    std::fs::rename(&moved, &tables).unwrap();

    let shuffled = json(&flychess(
        t.path(),
        &["brain", "info", "--json", "--shuffle-wiring", "9", "--brain", "malecns", "--tables", tables.to_str().unwrap()],
    ));
    assert_eq!(shuffled["source"], "synthetic stand-in (seed 3), shuffled wiring (seed 9)");
    assert_ne!(shuffled["checksum"], info["checksum"]);
    let lesioned = json(&flychess(
        t.path(),
        &["brain", "info", "--json", "--lesion", "optic-lobe", "--brain", "malecns", "--tables", tables.to_str().unwrap()],
    ));
    assert_eq!(lesioned["source"], "synthetic stand-in (seed 3), lesion: optic lobe");
    assert!(lesioned["connections"].as_u64() < info["connections"].as_u64());
}

#[test]
fn an_unknown_region_is_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let out = flychess(t.path(), &["brain", "info", "--lesion", "legs"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown region \"legs\"") && err.contains("optic lobe"), "{err}");
}

#[test]
fn missing_release_tables_say_how_to_get_them() {
    let t = tempfile::tempdir().unwrap();
    let out = flychess(t.path(), &["brain", "info", "--tables", t.path().join("nothing").to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("brain download"), "{err}");
}

#[test]
fn a_download_with_no_server_fails_cleanly() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("release");
    let out =
        flychess(t.path(), &["brain", "download", "--base-url", "http://127.0.0.1:9/", "--attempts", "1", "--dir", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("body-annotations-male-cns-v1.0-minconf-0.5.feather") && err.contains("run the command again"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.iter().all(|n| n.to_string_lossy().ends_with(".part")), "nothing but partial files: {left:?}");
}

#[test]
fn a_real_window_opens_and_can_be_screenshotted() {
    let xvfb = Command::new("sh").args(["-c", "command -v xvfb-run"]).output().map(|o| o.status.success()).unwrap_or(false);
    if !xvfb {
        assert!(std::env::var("FLYCHESS_CI").is_err(), "CI installs xvfb: it must be here");
        eprintln!("skipping: no xvfb-run on this machine");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let png = t.path().join("window.png");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1400x900x24"])
        .arg(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(t.path().join("data"))
        .arg("--screenshot")
        .arg(&png)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let img = image::open(&png).expect("a PNG was written").to_rgba8();
    assert_eq!((img.width(), img.height()), (1280, 800), "the default window size");
    // Not a blank frame: the brain summary was drawn (text pixels differ from the background).
    let background = *img.get_pixel(img.width() - 1, img.height() - 1);
    let drawn = img.pixels().filter(|p| **p != background).count();
    assert!(drawn > 5_000, "only {drawn} pixels differ from the background");
}

#[test]
fn a_newborn_fly_analyses_and_plays_through_the_real_commands() {
    let t = tempfile::tempdir().unwrap();
    let out = flychess(t.path(), &["train", "--newborn", "--name", "nb"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let a = json(&flychess(t.path(), &["analyse", "--fly", "nb", "--fen", start, "--json"]));
    let moves = a["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 20, "every legal move, nothing else");
    let total: f64 = moves.iter().map(|m| m["probability"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-4);
    assert!(moves.iter().any(|m| m["uci"] == a["chosen"]));
    assert!(moves.iter().any(|m| m["san"] == "e4"));
    let p = json(&flychess(t.path(), &["play", "--white", "nb", "--black", "random", "--games", "2", "--json"]));
    assert_eq!(p["wins"].as_u64().unwrap() + p["draws"].as_u64().unwrap() + p["losses"].as_u64().unwrap(), 2);
    for r in p["records"].as_array().unwrap() {
        let ending = r["termination"].as_str().unwrap();
        assert!(
            ["checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule", "move cap"].contains(&ending),
            "{ending}"
        );
    }
    // A file of positions streams through in batches, one JSON line per position as it goes; a
    // bad line is reported with its number and the rest go on.
    let fens = t.path().join("positions.txt");
    let mut text = String::new();
    for k in 0..70 {
        if k == 40 {
            text.push_str("this is not a position\n\n");
        }
        if k == 60 {
            // A line of 2 MB: read past, reported with its first characters only.
            text.push_str(&"rnbqkbnr".repeat(250_000));
            text.push('\n');
        }
        text.push_str(if k % 2 == 0 { start } else { "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2" });
        text.push('\n');
    }
    std::fs::write(&fens, text).unwrap();
    let streamed = flychess(t.path(), &["analyse", "--fly", "nb", "--fens", fens.to_str().unwrap(), "--json"]);
    assert!(!streamed.status.success(), "a bad line makes the exit status say so");
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&streamed.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    assert_eq!(lines.len(), 72, "70 positions and the two bad lines");
    let bad_line = lines.iter().find(|v| v.get("error").is_some()).expect("the bad line is reported");
    assert_eq!(bad_line["line"], 41);
    assert!(String::from_utf8_lossy(&streamed.stderr).contains("line 41"));
    let long = lines.iter().find(|v| v["line"] == 63).expect("the long line is reported");
    assert!(long["error"].as_str().unwrap().contains("2000000 bytes long"), "{}", long["error"]);
    assert!(long["fen"].as_str().unwrap().chars().count() <= 41, "the error quotes a short prefix, not the line");
    assert!(streamed.stdout.len() < 200_000 && streamed.stderr.len() < 10_000, "nothing echoes the 2 MB line");
    assert_eq!(
        lines.iter().filter(|v| v["moves"].as_array().is_some_and(|m| m.len() == 20)).count(),
        35,
        "every start position, before and after the bad line"
    );
    assert_eq!(lines.last().unwrap()["line"], 73);
    // In the file's order, the bad lines in their places among the results (issue 71: the errors
    // of a batch came out before the results of the lines above them).
    let numbers: Vec<u64> = lines.iter().map(|v| v["line"].as_u64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    // A mated position is said to be mate, not only "over".
    let mate = flychess(t.path(), &["analyse", "--fly", "nb", "--fen", "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"]);
    assert!(!mate.status.success() && String::from_utf8_lossy(&mate.stderr).contains("checkmate: White is mated"));
    // The same positions one at a time give the same probabilities as in the batch.
    assert_eq!(lines[0]["moves"], a["moves"]);
    // With imagination: the move it plays and the value seen after each move.
    let im = json(&flychess(t.path(), &["analyse", "--fly", "nb", "--fen", start, "--json", "--imagination", "2"]));
    assert_eq!(im["imagination"]["weight"], 2.0);
    assert!(im["moves"].as_array().unwrap().iter().all(|m| m["value_after"].as_f64().is_some_and(|v| (-1.0..=1.0).contains(&v))));
    assert!(im["moves"].as_array().unwrap().iter().any(|m| m["uci"] == im["imagination"]["chosen"]));
    let bad = flychess(t.path(), &["analyse", "--fly", "nb", "--fen", "not a fen"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("bad FEN"));
    let missing = flychess(t.path(), &["analyse", "--fly", "nobody", "--fen", start]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no fly named \"nobody\""));
    // Renamed, it is the same fly under its new name (the same probabilities, the same player);
    // a name that cannot be read back as a player's, or a fly that is not there, is refused.
    assert!(flychess(t.path(), &["rename", "nb", "nb-renamed"]).status.success());
    let renamed = json(&flychess(t.path(), &["analyse", "--fly", "nb-renamed", "--fen", start, "--json"]));
    assert_eq!(renamed["moves"], a["moves"]);
    assert!(!t.path().join("flies/nb.fly").exists(), "the old name is gone");
    let plus = flychess(t.path(), &["rename", "nb-renamed", "nb+imagination"]);
    assert!(!plus.status.success() && String::from_utf8_lossy(&plus.stderr).contains("cannot name a fly"));
    // A shipped fly's name is not taken, and a name is never a path (issue 71).
    let hijack = flychess(t.path(), &["rename", "nb-renamed", "flywire"]);
    assert!(!hijack.status.success() && String::from_utf8_lossy(&hijack.stderr).contains("shipped"));
    std::fs::copy(t.path().join("flies/nb-renamed.fly"), t.path().join("outside.fly")).unwrap();
    let path = flychess(t.path(), &["analyse", "--fly", "../outside", "--fen", start]);
    assert!(!path.status.success() && String::from_utf8_lossy(&path.stderr).contains("not a fly's name"));
    let gone = flychess(t.path(), &["rename", "nb", "other"]);
    assert!(!gone.status.success() && String::from_utf8_lossy(&gone.stderr).contains("no fly named \"nb\""));
    assert!(t.path().join("flies/nb-renamed.fly").exists(), "a refused rename loses nothing");
}

#[test]
fn a_duel_reports_its_elo_difference_with_an_interval_and_can_stop_early() {
    let t = tempfile::tempdir().unwrap();
    let d = json(&flychess(t.path(), &["duel", "greedy", "random", "--games", "8", "--json"]));
    assert_eq!(d["games"], 8);
    assert_eq!(d["pairs"], 4);
    assert_eq!(d["wins"].as_u64().unwrap() + d["draws"].as_u64().unwrap() + d["losses"].as_u64().unwrap(), 8);
    assert_eq!(d["pentanomial"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum::<u64>(), 4);
    let (lo, hi) = (d["elo_interval"][0].as_f64().unwrap(), d["elo_interval"][1].as_f64().unwrap());
    assert!(lo <= d["elo"].as_f64().unwrap() && d["elo"].as_f64().unwrap() <= hi);
    // Resumed: asked again, nothing is played again and the figures are the same.
    let again = json(&flychess(t.path(), &["duel", "greedy", "random", "--games", "8", "--json"]));
    assert_eq!(again["pentanomial"], d["pentanomial"]);
    // A sequential test plays rounds of pairs and says where it stands.
    let s = json(&flychess(t.path(), &["duel", "greedy", "random", "--games", "40", "--sprt", "--elo0", "0", "--elo1", "100", "--json"]));
    let state = &s["sprt"]["state"];
    assert!(["H0", "H1", "continue"].contains(&state["verdict"].as_str().unwrap()));
    assert!(s["games"].as_u64().unwrap() <= 40 && s["games"].as_u64().unwrap().is_multiple_of(2));
    if state["verdict"] == "continue" {
        assert_eq!(s["games"], 40, "a test that has not decided plays every game allowed");
    }
    let same = flychess(t.path(), &["duel", "greedy", "greedy", "--games", "2"]);
    assert!(!same.status.success() && String::from_utf8_lossy(&same.stderr).contains("same player"));
}

#[test]
fn watching_an_opponent_that_does_not_exist_fails_before_the_window_opens() {
    let t = tempfile::tempdir().unwrap();
    let out = flychess(t.path(), &["--watch", "nobody", "--plies", "4"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--watch nobody") && err.contains("no player named \"nobody\""), "{err}");
}

#[test]
fn ratings_follow_what_a_fly_is_not_its_name() {
    use flychess_fly::fly::{Fly, shipped_dir};
    let t = tempfile::tempdir().unwrap();
    let mut fly = Fly::load(&shipped_dir().join("newborn.fly")).unwrap();
    fly.meta.name = "mine".into();
    std::fs::create_dir_all(t.path().join("flies")).unwrap();
    fly.save(&t.path().join("flies").join("mine.fly")).unwrap();
    let report =
        serde_json::json!({"ratings": [{"name": "mine", "id": fly.player_id(None), "elo": 1234.4, "low": 1200.0, "high": 1260.0}]});
    std::fs::write(t.path().join("ratings.json"), report.to_string()).unwrap();
    assert_eq!(flychess_lab::lab::flies::read_ratings(t.path()).get("mine").map(String::as_str), Some("1234 [1200, 1260]"));
    // Retrained under the same name: the old fly's rating is not its.
    fly.readout.bias[0] += 1.0;
    fly.save(&t.path().join("flies").join("mine.fly")).unwrap();
    assert_eq!(flychess_lab::lab::flies::read_ratings(t.path()).get("mine"), None);
}

#[test]
fn positions_sampled_from_a_pgn_are_labelled_resumed_and_imported() {
    if !stockfish_or_skip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let pgn = t.path().join("games.pgn");
    // Six short games; the last two are the same game (its positions are only taken once).
    let games = [
        "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 *",
        "1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 5. e3 O-O *",
        "1. c4 e5 2. Nc3 Nf6 3. g3 d5 4. cxd5 Nxd5 5. Bg2 Nb6 *",
        "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 *",
        "1. f3 e5 2. g4 Qh4# 0-1",
        "1. f3 e5 2. g4 Qh4# 0-1",
    ];
    let text: String = games.iter().enumerate().map(|(i, g)| format!("[Event \"g{i}\"]\n[Result \"*\"]\n\n{g}\n\n")).collect();
    std::fs::write(&pgn, text).unwrap();
    let out = t.path().join("labelled");
    let run = |positions: &str| {
        flychess(
            t.path(),
            &[
                "data",
                "label",
                "--pgn",
                pgn.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--positions",
                positions,
                "--depth",
                "4",
                "--workers",
                "2",
            ],
        )
    };
    let first = run("3");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let labels = out.join("labels.jsonl");
    let three = std::fs::read_to_string(&labels).unwrap();
    assert_eq!(three.lines().count(), 3);
    // A torn line (a kill mid-write) is cut off and the run continues after the clean prefix.
    std::fs::OpenOptions::new().append(true).open(&labels).unwrap().write_all(b"{\"i\": 3, \"fen\": \"rnb").unwrap();
    let second = run("100");
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let all = std::fs::read_to_string(&labels).unwrap();
    assert!(all.starts_with(&three), "the first lines are kept as they were");
    let rows: Vec<serde_json::Value> = all.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fens: std::collections::HashSet<&str> = rows.iter().map(|r| r["fen"].as_str().unwrap()).collect();
    assert_eq!(fens.len(), rows.len(), "no position twice");
    assert!(rows.iter().enumerate().all(|(k, r)| r["i"] == k), "in sample order");
    assert!(rows.iter().all(|r| r["moves"].as_array().unwrap().len() == (r["legal"].as_u64().unwrap() as usize).min(8)));
    assert!(rows.iter().all(|r| r["depth"] == 4));
    // The same labelling in three shards, one engine each, merged: the same bytes (each position
    // searched by an engine that has forgotten the others, so a label depends on its position only).
    let sharded = t.path().join("sharded");
    let shard = |extra: &[&str]| {
        let args =
            [
                &[
                    "data",
                    "label",
                    "--pgn",
                    pgn.to_str().unwrap(),
                    "--out",
                    sharded.to_str().unwrap(),
                    "--positions",
                    "100",
                    "--depth",
                    "4",
                ][..],
                &["--workers", "1"],
                extra,
            ]
            .concat();
        let out = flychess(t.path(), &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    for i in ["3/3", "1/3", "2/3"] {
        shard(&["--shard", i]);
    }
    shard(&["--merge-shards", "3"]);
    assert_eq!(std::fs::read_to_string(sharded.join("labels.jsonl")).unwrap(), all, "the merged labels differ from one run's");
    let flyd = t.path().join("new.flyd");
    let import = flychess(t.path(), &["data", "import", "--jsonl", labels.to_str().unwrap(), "--out", flyd.to_str().unwrap()]);
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    let info = json(&flychess(t.path(), &["data", "info", flyd.to_str().unwrap(), "--json"]));
    assert_eq!(info["positions"].as_u64().unwrap() as usize, rows.len());
}

#[test]
fn brain_info_on_the_default_brain_is_flywire_with_its_eye_recovered_from_the_wiring() {
    let t = tempfile::tempdir().unwrap();
    let info = json(&flychess(t.path(), &["brain", "info", "--json"]));
    assert!(info["source"].as_str().unwrap().starts_with("FlyWire v783, within hemispheres"), "{info}");
    assert_eq!(info["neurons"], 133_436);
    assert_eq!(info["connections"], 2_309_630);
    assert!(info["retinotopy_ratio"].as_f64().unwrap() >= 3.0, "{info}");
    assert!(info["min_typed_cells_per_square"].as_u64().unwrap() >= 8);
    assert!(info["positions"].as_str().unwrap().contains("layout from wiring"));
    // Is the eye right? The recovered right eye against the real column map: most columns paired
    // by their Mi1, and far closer to their real places than a shuffled pairing.
    let eye = &info["eye_map_vs_columns"];
    assert!(eye["columns_compared"].as_u64().unwrap() >= 700, "{eye}");
    let (median, chance) = (eye["median_error_columns"].as_f64().unwrap(), eye["shuffled_median_error_columns"].as_f64().unwrap());
    assert!(median < 0.5 * chance, "{eye}");
    assert!(eye["neighbours_kept"].as_f64().unwrap() > 2.0 * eye["shuffled_neighbours_kept"].as_f64().unwrap(), "{eye}");
    // The stand-in stays one flag away (its eye is annotated, not recovered: nothing to compare).
    let standin = json(&flychess(t.path(), &["brain", "info", "--json", "--brain", "standin", "--seed", "3"]));
    assert_eq!(standin["source"], "synthetic stand-in (seed 3)");
    assert!(standin["eye_map_vs_columns"].is_null());
}

#[test]
fn a_dopamine_fly_trains_resumes_is_measured_and_plays() {
    let t = tempfile::tempdir().unwrap();
    let train =
        |lessons: &str| flychess(t.path(), &["bio", "train", "--name", "dop", "--lessons", lessons, "--every", "64", "--monitor", "32"]);
    let first = train("128");
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    // Asked for more under the same name, it goes on from its own file.
    let more = train("192");
    assert!(
        more.status.success() && String::from_utf8_lossy(&more.stderr).contains("resuming dop at 128"),
        "{}",
        String::from_utf8_lossy(&more.stderr)
    );
    let e = json(&flychess(t.path(), &["bio", "eval", "--fly", "dop", "--pairs", "48", "--ceiling-pairs", "96", "--top1", "6", "--json"]));
    assert_eq!((e["lessons"].as_u64(), e["pairs"].as_u64()), (Some(192), Some(48)));
    for key in
        ["pairs_right_before", "pairs_right_after", "logistic_ceiling_kc", "logistic_ceiling_dn", "harder_pairs_right_after", "top1_after"]
    {
        let (v, lo, hi) = (e[key]["value"].as_f64().unwrap(), e[key]["low"].as_f64().unwrap(), e[key]["high"].as_f64().unwrap());
        assert!((0.0..=1.0).contains(&v) && lo <= v && v <= hi, "{key}: {}", e[key]);
    }
    assert_eq!(e["flips"], 0, "the same pairs scored again in another order and batch agree");
    assert_ne!(e["pairs_right_before"], serde_json::Value::Null);
    assert!(e["plastic_synapses"].as_u64().unwrap() > 1_000 && e["kenyon_cells_passing"].as_u64().unwrap() > 100);
    // Its speed on the CPU model (the GPU engine's side is checked on lavapipe in sim/arena/tests/bio.rs).
    let s = json(&flychess(t.path(), &["bio", "speed", "--fly", "dop", "--lessons", "4", "--repeat", "1", "--engine", "cpu", "--json"]));
    assert_eq!((s["fly"].as_str(), s["lessons"].as_u64()), (Some("dop"), Some(4)));
    assert!(
        s["cpu"]["figures"]["lessons_per_second"].as_f64().unwrap() > 0.0 && s["cpu"]["figures"]["move_seconds"].as_f64().unwrap() > 0.0
    );
    assert!(s["gpu"].is_null() && s["gpu_note"].as_str().is_some_and(|n| n.contains("CPU engine")), "{s}");
    // Without --fly: the shipped dopamine fly of the default brain.
    let shipped = json(&flychess(t.path(), &["bio", "eval", "--pairs", "16", "--ceiling-pairs", "32", "--top1", "2", "--json"]));
    assert_eq!((shipped["fly"].as_str(), shipped["lessons"].as_u64()), (Some("flywire-dopamine"), Some(32_000)));
    // It plays: a duel against the random mover, by its name.
    let d = json(&flychess(t.path(), &["duel", "dop", "random", "--games", "2", "--json"]));
    assert_eq!(d["games"], 2);
    // A readout fly is not a dopamine fly, and its name is not free for one.
    assert!(flychess(t.path(), &["train", "--newborn", "--name", "nb"]).status.success());
    let wrong = flychess(t.path(), &["bio", "eval", "--fly", "nb", "--pairs", "8"]);
    assert!(!wrong.status.success() && String::from_utf8_lossy(&wrong.stderr).contains("not a dopamine fly"));
    let taken = flychess(t.path(), &["bio", "train", "--name", "nb", "--lessons", "64"]);
    assert!(!taken.status.success() && String::from_utf8_lossy(&taken.stderr).contains("another kind"));
}

#[test]
fn the_brain_learns_on_a_leash_beside_a_readout_only_control_and_its_gradient_is_checked() {
    let t = tempfile::tempdir().unwrap();
    let g = json(&flychess(t.path(), &["gradcheck", "--json"]));
    assert_eq!(g["passed"], true);
    let kinds: Vec<&str> = g["finite_differences"].as_array().unwrap().iter().map(|k| k["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.len(), 5, "{kinds:?}");
    for k in g["finite_differences"].as_array().unwrap() {
        assert!(k["max_relative_error"].as_f64().unwrap() <= 1e-3, "{k}");
    }
    let args = [&["train", "--brain", "--val-every", "32", "--name", "leashed", "--json"][..], &SMALL_BRAIN_TRAINING[..]].concat();
    let r = json(&flychess(t.path(), &args));
    assert_eq!(r["runs"]["start"]["fly"], "flywire", "from the brain's own readout-only fly");
    for run in ["brain", "readout_only"] {
        let x = &r["runs"][run];
        assert_eq!((x["val"]["positions"].as_u64(), x["hold"]["positions"].as_u64()), (Some(32), Some(48)), "{run}");
        assert_eq!(x["curve"].as_array().unwrap().len(), 3, "{run}: VAL at 0, 32 and 64");
        let top1 = &x["hold"]["top1"];
        assert!(
            top1["low"].as_f64().unwrap() <= top1["value"].as_f64().unwrap()
                && top1["value"].as_f64().unwrap() <= top1["high"].as_f64().unwrap()
        );
    }
    assert!(r["runs"]["brain"]["connections_changed"].as_u64().unwrap() > 1_000, "the brain learned");
    assert!(r["runs"]["brain"]["largest_strength_change"].as_f64().unwrap() <= 0.2 + 1e-4, "within its leash");
    assert_eq!(r["runs"]["readout_only"]["connections_changed"], 0);
    assert!(r["runs"]["brain_minus_readout_only"]["top1"]["value"].is_number());
    assert!(r["training_over_forward"].as_f64().unwrap() > 0.0);
    // Asked again, both runs resume from their finished checkpoints: the same figures.
    let again = json(&flychess(t.path(), &args));
    assert_eq!(again["runs"]["brain"]["hold"], r["runs"]["brain"]["hold"]);
    // The error going back for a labelled position: blame at every step, growing on its way back.
    let fen = flychess_fly::data::Dataset::load(&flychess_fly::data::shipped_path()).unwrap().rows[4096].fen.clone();
    let b = json(&flychess(t.path(), &["blame", "--fen", &fen, "--json"]));
    let steps = b["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12);
    assert_eq!(steps[11]["regions"][0][0], "descending", "at step 12 only the descending neurons are blamed");
    assert!(steps[0]["largest"].as_f64().unwrap() > steps[11]["largest"].as_f64().unwrap());
    // `--brain` without a value means nothing to other commands.
    let bad = flychess(t.path(), &["brain", "info", "--brain"]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("--brain needs a value"));
}

#[test]
fn what_the_fly_looks_at_and_what_its_regions_know_come_out_as_json() {
    let t = tempfile::tempdir().unwrap();
    // What it looks at: a figure for every piece of the Italian-style position (32 pieces).
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let e = json(&flychess(t.path(), &["explain", "--fen", fen, "--json"]));
    let pieces = e["pieces"].as_array().unwrap();
    let board: std::collections::BTreeMap<String, char> = {
        let pos: shakmaty::Chess = fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
        shakmaty::Position::board(&pos).clone().into_iter().map(|(sq, p)| (sq.to_string(), p.char())).collect()
    };
    assert_eq!(pieces.len(), board.len(), "one figure per piece");
    let p0 = e["probability"].as_f64().unwrap();
    let mut moved = 0;
    for p in pieces {
        let sq = p["square"].as_str().unwrap();
        assert_eq!(board[sq].to_string(), p["letter"].as_str().unwrap(), "{p}");
        let without = p["probability_without"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&without));
        assert!((p["change"].as_f64().unwrap() - (without - p0)).abs() < 1e-5, "{p}");
        if p["descending_change"].as_f64().unwrap() > 0.0 {
            moved += 1;
        }
    }
    assert_eq!(moved, pieces.len(), "taking any piece away changes what the descending neurons read");
    assert!(flychess(t.path(), &["explain", "--fen", "not a fen"]).status.code() == Some(1));
    // Its eye: exactly the occupied squares light photoreceptors, each of its own cells only.
    let eye = json(&flychess(t.path(), &["eye", "--fen", fen, "--json"]));
    let squares = eye["squares"].as_array().unwrap();
    assert_eq!(squares.len(), 64);
    for s in squares {
        let lit = s["lit"].as_u64().unwrap();
        assert_eq!(lit > 0, board.contains_key(s["square"].as_str().unwrap()), "{s}");
        assert!(lit <= s["cells"].as_u64().unwrap());
    }

    // The 12 steps at once and the replay, drawn without a window.
    let (png, gif) = (t.path().join("steps.png"), t.path().join("replay.gif"));
    let out = flychess(t.path(), &["figure", "--fen", fen, "--png", png.to_str().unwrap(), "--gif", gif.to_str().unwrap()]);
    // The figure is drawn by wgpu offscreen: it needs an adapter (lavapipe will do), which CI has.
    let no_adapter = String::from_utf8_lossy(&out.stderr).contains("no GPU adapter");
    if no_adapter && std::env::var_os("FLYCHESS_CI").is_none() {
        eprintln!("the figure skipped: no graphics adapter (apt-get install libvulkan1 mesa-vulkan-drivers)");
    } else {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let img = image::open(&png).unwrap();
        assert_eq!((img.width(), img.height()), (3840, 2160));
        use image::AnimationDecoder;
        assert_eq!(
            image::codecs::gif::GifDecoder::new(std::io::BufReader::new(std::fs::File::open(&gif).unwrap())).unwrap().into_frames().count(),
            12
        );
    }

    // The probes, small: per region and step on HOLD, beside the board's planes.
    let r = json(&flychess(t.path(), &["probe", "--train", "512", "--val", "32", "--hold", "64", "--neurons", "16", "--json"]));
    let probes = r["probes"].as_array().unwrap();
    assert!(probes.len() >= 3);
    let regions = r["regions"].as_array().unwrap();
    assert!(regions.len() >= 10, "{}", regions.len());
    for region in regions {
        let cells = region["cells"].as_array().unwrap();
        assert_eq!(cells.len(), probes.len());
        assert!(cells.iter().all(|c| c.as_array().unwrap().len() == 12));
        // Step 1: only the photoreceptors have seen the board; every other region is the same on
        // every board, and a probe of it is at chance exactly (AUC 0.5), or no better than the
        // mean (R² at most 0: it predicts TRAIN's mean).
        if region["region"] != "photoreceptors" {
            for (p, c) in cells.iter().enumerate() {
                let first = c[0]["hold"]["value"].as_f64().unwrap();
                match probes[p]["score"].as_str().unwrap() {
                    "Auc" => assert_eq!(first, 0.5, "{} {p}", region["region"]),
                    _ => assert!(first <= 1e-9, "{} {p}: {first}", region["region"]),
                }
            }
        }
    }
    // A piece on e4 is one of the board's planes: a linear probe of them reads it perfectly.
    assert_eq!(r["board"][3]["hold"]["value"].as_f64().unwrap(), 1.0);
    // The report is kept under its content key and read back, not worked out again.
    let key = r["key"].as_str().unwrap();
    assert!(t.path().join("probes").join(format!("{key}.json")).exists());
    let again = flychess(t.path(), &["probe", "--train", "512", "--val", "32", "--hold", "64", "--neurons", "16"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("kept from an earlier run"));
}

#[test]
fn a_profile_says_how_a_player_loses_move_by_move() {
    if !stockfish_or_skip() {
        return;
    }
    // The shared default brain (built once for the window tests); the greedy mover's ladder games.
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
    let p = json(&flychess(&data, &["profile", "--player", "greedy", "--games", "4", "--depth", "4", "--json"]));
    let profile = &p["profile"];
    assert_eq!(profile["games"], 4);
    assert_eq!(profile["won"].as_u64().unwrap() + profile["drawn"].as_u64().unwrap() + profile["lost"].as_u64().unwrap(), 4);
    let phases = profile["phases"].as_array().unwrap();
    assert_eq!(phases.iter().map(|r| r["phase"].as_str().unwrap()).collect::<Vec<_>>(), ["opening", "middlegame", "endgame"]);
    let moves: u64 = phases.iter().map(|r| r["moves"].as_u64().unwrap()).sum();
    assert_eq!(moves, profile["moves"].as_u64().unwrap());
    assert!(moves >= 4, "greedy moved in every game");
    assert!(profile["mean_loss"]["value"].as_f64().is_some_and(|v| (0.0..=2000.0).contains(&v)));
    let shapes: u64 = profile["loss_shapes"].as_array().unwrap().iter().map(|s| s[1].as_u64().unwrap()).sum();
    assert_eq!(shapes, profile["lost"].as_u64().unwrap(), "every lost game has one shape");
    // Asked again: the games are kept (nothing played again) and the numbers are the same.
    let again = json(&flychess(&data, &["profile", "--player", "greedy", "--games", "4", "--depth", "4", "--json"]));
    assert_eq!(again["profile"]["mean_loss"], profile["mean_loss"]);
    let unknown = flychess(&data, &["profile", "--player", "nobody"]);
    assert!(!unknown.status.success() && String::from_utf8_lossy(&unknown.stderr).contains("no player named \"nobody\""));
}

#[test]
fn a_search_and_a_judge_play_as_labelled_players_and_the_ceiling_bounds_every_selector() {
    if !stockfish_or_skip() {
        return;
    }
    // The shared default brain and its shipped fly.
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
    let d = json(&flychess(&data, &["duel", "flywire+search8", "flywire", "--games", "2", "--json"]));
    assert_eq!(d["first"], "flywire + search 8");
    assert!(d["first_id"].as_str().unwrap().contains("+search8-k5"), "{}", d["first_id"]);
    assert_eq!(d["games"], 2);
    let (elo, low, high) = (d["elo"].as_f64().unwrap(), d["elo_interval"][0].as_f64().unwrap(), d["elo_interval"][1].as_f64().unwrap());
    assert!(low <= elo && elo <= high, "{elo} in [{low}, {high}]");
    // The selection ceiling on four HOLD middlegames: no selector loses less than the best of the five.
    let c = json(&flychess(&data, &["ceiling", "--positions", "4", "--simulations", "8", "--depth", "6", "--json"]));
    let rows = c["ceiling"]["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["selector"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    assert!(names[1].starts_with("judge (w ") && names[2] == "search 8" && names[5] == "Stockfish d12 among its top 5", "{names:?}");
    let loss = |r: &serde_json::Value| r["mean_loss_cp"]["value"].as_f64().unwrap();
    let ceiling = loss(&rows[6]);
    for r in rows {
        assert_eq!(r["positions"], 4);
        assert!(loss(r) >= ceiling - 1e-9 && loss(r) >= 0.0, "{} loses {} below the ceiling {ceiling}", r["selector"], loss(r));
    }
    // The judge's weight was chosen on VAL and kept under the fly's id.
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(data.join("judge.json")).unwrap()).unwrap();
    let chosen = c["judge_weight"].as_f64().unwrap();
    assert!(kept.as_object().unwrap().values().any(|t| t["chosen"].as_f64() == Some(chosen) && t["positions"] == 256));
    // Names that mean nothing, or an aid a player cannot take, say so.
    let bad = flychess(&data, &["duel", "flywire+searchlots", "flywire"]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("+search64"));
    let no_value = flychess(&data, &["duel", "charles+judge", "flywire"]);
    assert!(!no_value.status.success() && String::from_utf8_lossy(&no_value.stderr).contains("no value head"));
}

/// Twelve finished games of 20 plies in `dir/games.pgn`: two make the human test, two its VAL,
/// eight TRAIN (with `data games --human-games 2 --val-games 2`).
fn twelve_games(dir: &std::path::Path) -> std::path::PathBuf {
    let openings = [
        "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7",
        "d4 d5 c4 e6 Nc3 Nf6 Bg5 Be7 e3 O-O Nf3 h6 Bh4 b6 cxd5 Nxd5 Bxe7 Qxe7 Nxd5 exd5",
        "c4 e5 Nc3 Nf6 g3 d5 cxd5 Nxd5 Bg2 Nb6 Nf3 Nc6 O-O Be7 d3 O-O a3 Be6 b4 f6",
        "e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6 Nc3 a6 Be3 e5 Nb3 Be6 f3 Be7 Qd2 O-O O-O-O Nbd7",
    ];
    let mut pgn = String::new();
    for g in 0..12 {
        let moves: Vec<&str> = openings[g % 4].split(' ').collect();
        let numbered: String = moves.chunks(2).enumerate().map(|(i, m)| format!("{}. {} ", i + 1, m.join(" "))).collect();
        let result = ["1-0", "0-1", "1/2-1/2"][g % 3];
        pgn.push_str(&format!("[Event \"g{g}\"]\n[Result \"{result}\"]\n\n{numbered}{result}\n\n"));
    }
    let pgn_path = dir.join("games.pgn");
    std::fs::write(&pgn_path, pgn).unwrap();
    pgn_path
}

#[test]
fn master_games_are_cached_fitted_at_scale_and_drawn_as_a_learning_curve() {
    let t = tempfile::tempdir().unwrap();
    let brain = ["--brain", "standin", "--seed", "3"];
    let with_brain = |args: &[&str]| flychess(t.path(), &[args, &brain[..]].concat());
    let pgn_path = twelve_games(t.path());
    let d = json(&flychess(
        t.path(),
        &["data", "games", pgn_path.to_str().unwrap(), "--out", "g", "--human-games", "2", "--val-games", "2", "--json"],
    ));
    assert_eq!((d["human_test_positions"].as_u64(), d["human_val_positions"].as_u64()), (Some(2), Some(2)), "{d}");
    let train = d["train_positions"].as_u64().unwrap() as usize;
    assert!(train >= 64, "{d}");
    // The games' DN cache, filled only part of the way: 4 held-out rows and 32 TRAIN rows.
    let cached = with_brain(&["cache", "--dataset", "g", "--positions", "36"]);
    assert!(cached.status.success(), "{}", String::from_utf8_lossy(&cached.stderr));
    // The curve: 64 shipped Stockfish rows, then 32 games rows more; the point that needs 64
    // games rows is listed, not fitted (its rows are not cached).
    let png = t.path().join("curve.png");
    let curve_args = [
        "curve",
        "--games",
        "g",
        "--shipped-positions",
        "64",
        "--points",
        "64,96,128",
        "--passes",
        "3",
        "--json",
        "--png",
        png.to_str().unwrap(),
    ];
    let c = json(&with_brain(&curve_args));
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{c}");
    assert_eq!(c["not_cached"], serde_json::json!([128]));
    assert_eq!((points[0]["games_positions"].as_u64(), points[1]["games_positions"].as_u64()), (Some(0), Some(32)));
    for p in points {
        for f in ["top1", "good", "loss", "human_top1"] {
            let (v, i) = (p[f].as_f64().unwrap(), p[format!("{f}_interval")].as_array().unwrap().clone());
            assert!(i[0].as_f64().unwrap() <= v && v <= i[1].as_f64().unwrap(), "{f}: {p}");
        }
        assert!(p["passes"].as_u64().unwrap() >= 1);
    }
    let slope = &c["loss"];
    assert!(slope["interval"][0].as_f64().unwrap() <= slope["per_doubling"].as_f64().unwrap(), "{c}");
    assert_eq!(c["seed_loss_per_doubling"], -0.026);
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (1400, 580));
    // The Train tab's copy, and a second run reads the fitted points back instead of fitting again.
    assert!(t.path().join("learning-curve.json").exists());
    let again = json(&with_brain(&curve_args));
    assert_eq!(again["points"], c["points"], "the same runs, read back");
    // The second point's fly learnt from both kinds of rows.
    let fly =
        std::fs::read_dir(t.path().join("flies")).unwrap().flatten().any(|e| e.file_name().to_string_lossy().starts_with("curve-96-"));
    assert!(fly);
}

/// The stand-in brain the teachers' flies are fitted on.
const STANDIN_BRAIN: [&str; 4] = ["--brain", "standin", "--seed", "3"];

/// Twelve games made into the dataset `g`, cached for the stand-in brain, with its first 32 rows
/// labelled by Stockfish's one move: where issue 55's and 68's teachers are tried.
struct TeacherRig {
    dir: tempfile::TempDir,
    labels: std::path::PathBuf,
}

impl TeacherRig {
    fn new() -> TeacherRig {
        let dir = tempfile::tempdir().unwrap();
        let pgn_path = twelve_games(dir.path());
        let d = json(&flychess(
            dir.path(),
            &["data", "games", pgn_path.to_str().unwrap(), "--out", "g", "--human-games", "2", "--val-games", "2", "--json"],
        ));
        assert!(d["train_positions"].as_u64().unwrap() >= 32, "{d}");
        let cached = flychess(dir.path(), &[&["cache", "--dataset", "g", "--positions", "36"][..], &STANDIN_BRAIN[..]].concat());
        assert!(cached.status.success(), "{}", String::from_utf8_lossy(&cached.stderr));
        let labels = dir.path().join("labels");
        let l = flychess(
            dir.path(),
            &[
                "data",
                "label",
                "--dataset",
                "g",
                "--out",
                labels.to_str().unwrap(),
                "--depth",
                "4",
                "--multipv",
                "1",
                "--positions",
                "32",
                "--workers",
                "1",
            ],
        );
        assert!(l.status.success(), "{}", String::from_utf8_lossy(&l.stderr));
        TeacherRig { dir, labels }
    }

    fn with_brain(&self, args: &[&str]) -> Output {
        flychess(self.dir.path(), &[args, &STANDIN_BRAIN[..]].concat())
    }

    /// `train` of a fly of `name` on the 32 games rows (the shipped rows cut to 6,208), two passes.
    fn train(&self, name: &str, more: &[&str]) -> Output {
        let args = [
            &["train", "--name", name, "--positions", "6208", "--games", "g", "--games-positions", "32", "--passes", "2", "--json"][..],
            more,
        ]
        .concat();
        self.with_brain(&args)
    }

    /// The master and Stockfish together, then Stockfish alone on 16 labelled rows; `train` and
    /// `eval` say who taught how many. Returns the run of both and the folder of 16 labels.
    fn teachers_counted(&self) -> (serde_json::Value, std::path::PathBuf) {
        let both = json(&self.train("both", &["--engine-labels", self.labels.to_str().unwrap(), "--teacher", "master=1,engine=1"]));
        assert_eq!(both["positions_by_teacher"], serde_json::json!({"master": 32, "stockfish": 32, "stockfish_multipv": 64}), "{both}");
        assert_eq!(both["positions_trained"], 96);
        assert!(both["teacher"].as_str().unwrap().starts_with("master's move 50 %, Stockfish's move 50 % on 32 rows of g"), "{both}");
        // Stockfish alone, with 16 lines of labels: only the 16 labelled rows are taught.
        let half = self.dir.path().join("half");
        std::fs::create_dir_all(&half).unwrap();
        std::fs::copy(self.labels.join("labels.json"), half.join("labels.json")).unwrap();
        let lines = std::fs::read_to_string(self.labels.join("labels.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 32);
        std::fs::write(half.join("labels.jsonl"), lines.lines().take(16).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        let engine = json(&self.train("engine", &["--engine-labels", half.to_str().unwrap()]));
        assert_eq!(engine["positions_by_teacher"], serde_json::json!({"stockfish": 16, "stockfish_multipv": 64}), "{engine}");
        assert_eq!(engine["positions_trained"], 80);
        // eval says the same, read off the fly.
        let e = json(&self.with_brain(&["eval", "--fly", "engine", "--positions", "6208", "--no-controls", "--json"]));
        assert_eq!((&e["teacher"], &e["positions_by_teacher"]), (&engine["teacher"], &engine["positions_by_teacher"]), "{e}");
        (both, half)
    }

    /// The three controls of `eval --controls-at-scale both`, fitted on exactly that run's rows
    /// and teachers, each beside the fly with its paired difference, read back when finished.
    fn controls_at_scale(&self, both: &serde_json::Value) {
        // The three controls on exactly the rows and teachers of the "both" run, each beside the fly
        // with its paired difference; a second eval reads the finished controls back.
        let scale = |only: &[&str]| {
            let args = [
                &[
                    "eval",
                    "--fly",
                    "both",
                    "--positions",
                    "6208",
                    "--no-controls",
                    "--human-positions",
                    "64",
                    "--controls-at-scale",
                    "both",
                    "--json",
                ][..],
                only,
            ]
            .concat();
            self.with_brain(&args)
        };
        let at_scale = || scale(&[]);
        let first = json(&at_scale());
        let players = first["controls_at_scale"]["players"].as_array().unwrap();
        let names: Vec<&str> = players.iter().map(|p| p["player"].as_str().unwrap()).collect();
        assert_eq!(names, ["board-linear at scale", "blind at scale", "shuffled wiring at scale"], "{first}");
        for p in players {
            assert_eq!(p["positions_trained"], both["positions_trained"], "{p}");
            let d = &p["fly_minus_this_top1"];
            let (low, value, high) = (d["low"].as_f64().unwrap(), d["value"].as_f64().unwrap(), d["high"].as_f64().unwrap());
            assert!(low <= value && value <= high, "{p}");
            assert_eq!(p["human"]["player"], p["player"]);
            assert!(first["players"].as_array().unwrap().iter().any(|q| q["player"] == p["player"]), "in the HOLD table too: {first}");
        }
        let again = at_scale();
        let said = String::from_utf8_lossy(&again.stderr);
        assert_eq!(said.matches("is fitted already").count(), 3, "{said}");
        assert_eq!(json(&again)["controls_at_scale"], first["controls_at_scale"]);
        // One of them on its own (read back), and a control that does not exist is named.
        let blind = json(&scale(&["--scale-controls", "blind"]))["controls_at_scale"]["players"].clone();
        assert_eq!(blind, serde_json::json!([first["controls_at_scale"]["players"][1]]));
        let wrong = scale(&["--scale-controls", "wiring"]);
        let err = String::from_utf8_lossy(&wrong.stderr);
        assert!(!wrong.status.success() && err.contains("--scale-controls wiring") && err.contains("shuffled-wiring"), "{err}");
        // Another shuffle: its own brain, run and row, named by its seed, beside seed 1 read back; a
        // seed on anything else, or not a whole number from 1, is refused with the name given.
        let two = json(&scale(&["--scale-controls", "shuffled-wiring:2,shuffled-wiring"]))["controls_at_scale"]["players"].clone();
        assert_eq!(two[0]["player"], "shuffled wiring (seed 2) at scale", "{two}");
        assert_ne!(two[0]["run"], first["controls_at_scale"]["players"][2]["run"], "a run of its own");
        assert_eq!(two[1], first["controls_at_scale"]["players"][2], "seed 1 is the shuffle every report had");
        for bad in ["shuffled-wiring:0", "blind:2", "shuffled-wiring:x"] {
            let out = scale(&["--scale-controls", bad]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success() && err.contains(bad) && err.contains("seed"), "{bad}: {err}");
        }
        // Issue 68 (6): a fly the run did not fit is refused, naming both (the controls would stand
        // beside a fly fitted on other rows).
        let other = self.with_brain(&[
            "eval",
            "--fly",
            "engine",
            "--positions",
            "6208",
            "--no-controls",
            "--human-positions",
            "64",
            "--controls-at-scale",
            "both",
        ]);
        let err = String::from_utf8_lossy(&other.stderr);
        assert!(!other.status.success() && err.contains("\"engine\" was not fitted by run both"), "{err}");
        // A run that is not there is named, with where runs are.
        let missing = self.with_brain(&["eval", "--fly", "both", "--positions", "6208", "--no-controls", "--controls-at-scale", "nothing"]);
        let err = String::from_utf8_lossy(&missing.stderr);
        assert!(!missing.status.success() && err.contains("nothing") && err.contains("DATA/runs"), "{err}");
    }

    /// The curve's second series, the games rows taught by Stockfish's move.
    fn curve_engine_series(&self, half: &Path) {
        // The curve's second series, the games rows taught by Stockfish's move: the point of the
        // shipped rows alone is the master series' own fly; a point whose rows are not all labelled
        // yet is listed, not fitted.
        let curve = |labels: &std::path::Path| {
            json(&self.with_brain(&[
                "curve",
                "--games",
                "g",
                "--shipped-positions",
                "64",
                "--points",
                "64,96",
                "--passes",
                "2",
                "--engine-labels",
                labels.to_str().unwrap(),
                "--json",
            ]))
        };
        let c = curve(&self.labels);
        let (m, s) = (c["points"].as_array().unwrap(), c["engine"]["points"].as_array().unwrap());
        assert_eq!((m.len(), s.len()), (2, 2), "{c}");
        assert_eq!(s[0]["fly"], m[0]["fly"], "the shipped rows alone: one fly for both teachers");
        assert_ne!(s[1]["fly"], m[1]["fly"], "96 positions: a fly of each teacher");
        assert_eq!(s[1]["positions"], 96);
        let c = curve(half);
        assert_eq!(c["engine"]["not_labelled"], serde_json::json!([96]), "{c}");
        assert_eq!(c["engine"]["points"].as_array().unwrap().len(), 1, "{c}");
    }

    /// The master alone; labels of another dataset, and Stockfish without labels, refused.
    fn other_teachers(&self, half: &Path) {
        // The master alone is what a run without labels always was.
        let master = json(&self.train("master", &[]));
        assert_eq!(master["positions_by_teacher"], serde_json::json!({"master": 32, "stockfish_multipv": 64}), "{master}");
        // Labels of another dataset (another content hash) are refused, naming their sidecar.
        let sidecar = std::fs::read_to_string(half.join("labels.json")).unwrap();
        let sha = serde_json::from_str::<serde_json::Value>(&sidecar).unwrap()["dataset_sha256"].as_str().unwrap().to_string();
        std::fs::write(half.join("labels.json"), sidecar.replace(&sha, &"0".repeat(64))).unwrap();
        let other = self.train("other", &["--engine-labels", half.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&other.stderr);
        assert!(!other.status.success() && err.contains("labels.json") && err.contains("not of the one the fit reads"), "{err}");
        // Stockfish as a teacher without labels is refused in words.
        let none = self.train("none", &["--teacher", "engine"]);
        assert!(!none.status.success() && String::from_utf8_lossy(&none.stderr).contains("--engine-labels"));
    }

    /// Issue 68: every legal move labelled, taught, and refused on labels of one move.
    fn every_move_teacher(&self) {
        // Issue 68: Stockfish's whole opinion. Every legal move of 24 rows labelled at depth 2; each
        // line holds as many moves as the row has legal moves, and the sidecar says so.
        let every = self.dir.path().join("every");
        let e = flychess(
            self.dir.path(),
            &[
                "data",
                "label",
                "--dataset",
                "g",
                "--out",
                every.to_str().unwrap(),
                "--depth",
                "2",
                "--every-move",
                "--positions",
                "24",
                "--workers",
                "1",
            ],
        );
        assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
        let sidecar: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(every.join("labels.json")).unwrap()).unwrap();
        assert_eq!(sidecar["every_move"], true, "{sidecar}");
        let lines = std::fs::read_to_string(every.join("labels.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), 24);
        // More rows asked for: the 24 are kept and the labelling goes on after them (nothing set aside).
        let more = |positions: &str| {
            let args =
                ["data", "label", "--dataset", "g", "--out", every.to_str().unwrap(), "--depth", "2", "--every-move", "--workers", "1"];
            let out = flychess(self.dir.path(), &[&args[..], &["--positions", positions]].concat());
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        };
        more("28");
        let grown = std::fs::read_to_string(every.join("labels.jsonl")).unwrap();
        assert!(grown.starts_with(&lines) && grown.lines().count() == 28, "{} lines", grown.lines().count());
        assert!(!every.join("labels.jsonl.stale-1").exists(), "nothing set aside");
        // Back to the 24 rows the teacher below reads.
        std::fs::write(every.join("labels.jsonl"), &lines).unwrap();
        std::fs::write(every.join("labels.json"), serde_json::to_vec_pretty(&sidecar).unwrap()).unwrap();
        for l in lines.lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["moves"].as_array().unwrap().len() as u64, v["legal"].as_u64().unwrap(), "every legal move: {l}");
        }
        let whole = json(&self.train("every", &["--engine-labels", every.to_str().unwrap(), "--teacher", "every-move"]));
        assert_eq!(whole["positions_by_teacher"], serde_json::json!({"stockfish_every_move": 24, "stockfish_multipv": 64}), "{whole}");
        assert!(whole["teacher"].as_str().unwrap().starts_with("Stockfish's every move on 24 rows of g"), "{whole}");
        // The every-move teacher on labels of one move is refused, naming the folder.
        let one = self.train("one", &["--engine-labels", self.labels.to_str().unwrap(), "--teacher", "every-move"]);
        let err = String::from_utf8_lossy(&one.stderr);
        assert!(!one.status.success() && err.contains("--every-move") && err.contains("labels"), "{err}");
        // A curriculum dataset without its share is refused, not ignored.
        let ignored = self.train("ignored", &["--curriculum-dataset", "somewhere.flyd"]);
        let err = String::from_utf8_lossy(&ignored.stderr);
        assert!(!ignored.status.success() && err.contains("--curriculum SHARE"), "{err}");
    }

    /// Issue 68 (6): runs and controls are keyed by the content they read. A killed run whose
    /// games dataset was replaced under the same name is refused, saying which file changed
    /// (before, it resumed on the new rows); the controls at scale of a run whose rows changed are
    /// refused (before, they were fitted on rows the fly never saw).
    fn changed_rows_refused(&self) {
        let datasets = self.dir.path().join("datasets");
        std::fs::copy(datasets.join("g.flyd"), datasets.join("moved.flyd")).unwrap();
        let train = || {
            self.with_brain(&[
                "train",
                "--name",
                "moved",
                "--positions",
                "6208",
                "--games",
                "moved",
                "--games-positions",
                "32",
                "--passes",
                "2",
                "--json",
            ])
        };
        let first = train();
        assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
        // Another dataset's bytes under the same name (the same games, one more held out).
        let pgn = twelve_games(self.dir.path());
        let other = flychess(
            self.dir.path(),
            &["data", "games", pgn.to_str().unwrap(), "--out", "other", "--human-games", "3", "--val-games", "2"],
        );
        assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
        std::fs::copy(datasets.join("other.flyd"), datasets.join("moved.flyd")).unwrap();
        // The controls at scale refuse a run whose rows changed.
        let controls = self.with_brain(&[
            "eval",
            "--fly",
            "moved",
            "--positions",
            "6208",
            "--no-controls",
            "--human-positions",
            "64",
            "--controls-at-scale",
            "moved",
            "--scale-controls",
            "blind",
        ]);
        let err = String::from_utf8_lossy(&controls.stderr);
        assert!(!controls.status.success() && err.contains("the games file changed"), "{err}");
        // The run, as if killed before it finished, asked again: refused, not resumed on other rows.
        let info = self.dir.path().join("runs/moved/run.json");
        let text = std::fs::read_to_string(&info).unwrap();
        assert!(text.contains("\"reads\""), "a run records what it reads: {text}");
        std::fs::write(&info, text.replace("\"finished\": true", "\"finished\": false")).unwrap();
        let again = train();
        let err = String::from_utf8_lossy(&again.stderr);
        assert!(!again.status.success() && err.contains("cannot resume") && err.contains("the games file changed"), "{err}");
    }
}

/// Issue 55's teacher: the games rows taught by Stockfish's own moves (labelled by `data label
/// --dataset`), by the master's, or both with weights; the fly and `eval --json` say who taught
/// how many positions; labels of another dataset are refused, naming their file. And the three
/// controls of `eval --controls-at-scale RUN`, fitted on exactly a run's rows and teachers.
#[test]
fn stockfish_teaches_the_games_rows_and_the_fly_says_who_taught_how_many() {
    if !stockfish_or_skip() {
        return;
    }
    let rig = TeacherRig::new();
    let (both, half) = rig.teachers_counted();
    rig.controls_at_scale(&both);
    rig.curve_engine_series(&half);
    rig.other_teachers(&half);
    rig.every_move_teacher();
    rig.changed_rows_refused();
}

/// Issue 59's smaller defects, each said in words instead of a panic, a silent stand-in or a
/// number in the wrong place: `eval --positions` below HOLD + VAL is refused before anything is
/// cached; `duel --games 0` plays nothing; `analyse --fens` on a folder names it; `train --json`
/// prints JSON with the positions and the peak memory under their own names; a Stockfish that
/// answers an illegal move ends the game as an error (never a random move stored as its own).
#[test]
fn the_small_defects_are_said_in_words_and_a_stockfish_that_answers_no_legal_move_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let e = flychess(t.path(), &["eval", "--positions", "100", "--no-controls"]);
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(!e.status.success() && err.contains("give more than 6144") && !err.contains("panicked"), "{err}");
    assert!(!t.path().join("cache").exists(), "refused before anything was cached");

    let d = flychess(t.path(), &["duel", "random", "greedy", "--games", "0"]);
    let err = String::from_utf8_lossy(&d.stderr);
    assert!(!d.status.success() && err.contains("nothing to play"), "{err}");
    // `play` and `rate` the same (issue 71: `play --games 0` exited 0 having played nothing);
    // `play --dry-run` seats the players and plays nothing, saying so.
    for args in [&["play", "--white", "random", "--black", "greedy", "--games", "0"][..], &["rate", "--games", "0"][..]] {
        let p = flychess(t.path(), args);
        let err = String::from_utf8_lossy(&p.stderr);
        assert!(!p.status.success() && err.contains("nothing to play"), "{args:?}: {err}");
    }
    // eval --curriculum naming a file that is not there is refused before anything is measured.
    let missing = flychess(t.path(), &["eval", "--fly", "flywire", "--curriculum", "/nonexistent/curriculum.flyd"]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(!missing.status.success() && err.contains("no such file") && err.contains("/nonexistent/curriculum.flyd"), "{err}");
    let seated = json(&flychess(t.path(), &["play", "--white", "random", "--black", "greedy", "--dry-run", "--json"]));
    assert_eq!((&seated["seated"], &seated["games"]), (&serde_json::json!(true), &serde_json::json!(0)), "{seated}");

    let folder = t.path().join("a folder of fens");
    std::fs::create_dir_all(&folder).unwrap();
    let a = flychess(t.path(), &["analyse", "--fly", "flywire", "--fens", folder.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&a.stderr);
    assert!(!a.status.success() && err.contains("a folder of fens") && err.contains("not a file"), "{err}");

    // A fake Stockfish that answers every search with a move that is not legal.
    let fake = t.path().join("fake-stockfish");
    std::fs::write(
        &fake,
        "#!/bin/sh\nwhile read line; do case \"$line\" in uci) echo 'id name Fake'; echo uciok;; isready) echo readyok;; \
         go*) echo 'bestmove a1a1';; quit) exit 0;; esac; done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .env("FLYCHESS_STOCKFISH", &fake)
        .arg("--data")
        .arg(t.path())
        .args(["duel", "stockfish", "random", "--games", "2", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&s.stderr);
    assert!(!s.status.success() && err.contains("answered a1a1") && err.contains("not a legal move"), "{err}");

    // train --json: a readout fitted on the stand-in over 64 TRAIN rows, one pass.
    let brain = ["--brain", "standin", "--seed", "3"];
    let cached = flychess(t.path(), &[&["cache", "--positions", "6208"][..], &brain[..]].concat());
    assert!(cached.status.success(), "{}", String::from_utf8_lossy(&cached.stderr));
    let j =
        json(&flychess(t.path(), &[&["train", "--name", "j", "--positions", "6208", "--passes", "1", "--json"][..], &brain[..]].concat()));
    assert_eq!(j["positions_trained"].as_u64(), Some(64), "{j}");
    assert!(j["hold"]["top1"].as_f64().is_some() && j["saved"].as_str().unwrap().ends_with("j.fly"), "{j}");
    assert!(j.get("peak_memory_mb").is_some(), "{j}");
}

/// Issue 56's curriculum of finishing: planned (the games' human test held out, basic won
/// endgames, stalemate lessons), labelled by Stockfish (resumed after a torn line; three shards
/// merged into the same bytes), built into a dataset of won positions with the held-out ones
/// first, mixed into a fit (`train --curriculum`, counted in `positions_by_teacher`) and measured
/// by `eval` on the held-out won positions (`fastest_win`, `stalemated`, by kind).
#[test]
fn the_curriculum_is_labelled_resumed_sharded_built_trained_on_and_measured() {
    if !stockfish_or_skip() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let brain = ["--brain", "standin", "--seed", "3"];
    let with_brain = |args: &[&str]| flychess(t.path(), &[args, &brain[..]].concat());
    let pgn_path = twelve_games(t.path());
    let d = json(&flychess(
        t.path(),
        &["data", "games", pgn_path.to_str().unwrap(), "--out", "g", "--human-games", "2", "--val-games", "2", "--json"],
    ));
    assert!(d["train_positions"].as_u64().unwrap() >= 32, "{d}");
    let curriculum = |out: &Path, extra: &[&str]| {
        let args = [
            &[
                "data",
                "curriculum",
                "--games",
                "g",
                "--out",
                out.to_str().unwrap(),
                "--endgames",
                "4",
                "--stalemates",
                "3",
                "--depth",
                "6",
                "--seed",
                "2",
            ][..],
            extra,
        ]
        .concat();
        flychess(t.path(), &args)
    };
    let dir = t.path().join("curriculum");
    let first = curriculum(&dir, &["--positions", "10", "--workers", "2", "--json"]);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let labels = dir.join("labels.jsonl");
    let ten = std::fs::read_to_string(&labels).unwrap();
    assert_eq!(ten.lines().count(), 10);
    let planned: Vec<serde_json::Value> =
        std::fs::read_to_string(dir.join("positions.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // 2 human-test positions, 4 of each of the six endgames, 3 stalemate lessons.
    assert_eq!(planned.len(), 2 + 24 + 3, "{planned:?}");
    assert!(planned.iter().filter(|p| p["origin"] == "human test").all(|p| p["held"] == true));
    // A torn line is cut off and the run goes on to the end.
    std::fs::OpenOptions::new().append(true).open(&labels).unwrap().write_all(b"{\"i\": 10, \"fen\": \"8/8").unwrap();
    let built = json(&curriculum(&dir, &["--workers", "2", "--json"]));
    let all = std::fs::read_to_string(&labels).unwrap();
    assert!(all.starts_with(&ten) && all.lines().count() == planned.len(), "{built}");
    assert_eq!(built["labelled"], planned.len());
    let (won, held, train) = (built["won"].as_u64().unwrap(), built["held_out"].as_u64().unwrap(), built["train"].as_u64().unwrap());
    assert_eq!(won, held + train);
    assert!(train >= 10 && won <= planned.len() as u64, "{built}");
    assert!(built["by_kind"].as_object().unwrap().keys().any(|k| k.starts_with("KQ")), "{built}");
    // Three shards and their merge: the same labels, byte for byte.
    let sharded = t.path().join("sharded");
    for s in ["2/3", "3/3", "1/3"] {
        let o = curriculum(&sharded, &["--workers", "1", "--shard", s]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let merged = curriculum(&sharded, &["--merge-shards", "3"]);
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    assert_eq!(std::fs::read_to_string(sharded.join("labels.jsonl")).unwrap(), all);
    // A fit with the curriculum as a fifth of every batch; eval on its held-out won positions.
    let flyd = dir.join("curriculum.flyd");
    let cached = with_brain(&["cache", "--positions", "6208"]);
    assert!(cached.status.success(), "{}", String::from_utf8_lossy(&cached.stderr));
    let fit = json(&with_brain(&[
        "train",
        "--name",
        "finisher",
        "--positions",
        "6208",
        "--passes",
        "2",
        "--curriculum",
        "0.2",
        "--curriculum-dataset",
        flyd.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(fit["positions_by_teacher"]["curriculum"].as_u64(), Some(train), "{fit}");
    assert_eq!(fit["positions_trained"].as_u64(), Some(64 + train), "{fit}");
    let e = json(&with_brain(&[
        "eval",
        "--fly",
        "finisher",
        "--positions",
        "6208",
        "--no-controls",
        "--json",
        "--curriculum",
        flyd.to_str().unwrap(),
    ]));
    assert_eq!(e["won_positions"].as_u64(), Some(held), "{e}");
    assert_eq!(e["fastest_win_from"], "the curriculum's held-out won positions");
    if held > 0 {
        let (v, i) = (e["fastest_win"].as_f64().unwrap(), &e["fastest_win_interval"]);
        assert!(i[0].as_f64().unwrap() <= v && v <= i[1].as_f64().unwrap(), "{e}");
        let kinds: u64 = e["finishing_by_kind"].as_object().unwrap().values().map(|k| k["positions"].as_u64().unwrap()).sum();
        assert_eq!(kinds, held);
    }
    // A share out of range is refused in words.
    let bad = with_brain(&["train", "--name", "bad", "--positions", "6208", "--curriculum", "1.5"]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("--curriculum 1.5"));
}
