//! Issue 58: one way from a name to a player. The same names go to the five front doors — the
//! command line (`flychess play`), the UCI engine (`setoption name Player`), the window's board
//! (a new game against the name), its `--watch` opponent and the Python package's `Player`
//! (issue 70) — and each takes or refuses the same ones, an unknown name with the same words (the
//! resolver's, listing the names there are).
//! The one difference is the window's board by design: it shows a brain's think, so a rung
//! (random, greedy, Stockfish) is refused there, saying where it plays.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// What a door made of a name: taken, or refused with these words.
#[derive(Debug)]
enum Door {
    Took,
    Refused(String),
}

fn cli(data: &Path, name: &str) -> Door {
    let out = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(data)
        .args(["play", "--white", name, "--black", "random", "--dry-run", "--json"])
        .output()
        .expect("the binary runs");
    if out.status.success() { Door::Took } else { Door::Refused(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

fn uci(data: &Path, name: &str) -> Door {
    let (_, said, whole) = session(data, format!("uci\nsetoption name Player value {name}\nisready\nquit\n").as_bytes());
    // The GUI's line keeps to the reason's start; stderr has all of it.
    match said.lines().find(|l| l.starts_with("info string") && l.contains("cannot play")) {
        Some(line) => Door::Refused(format!("{line}\n{}", whole.lines().find(|l| l.contains("cannot play")).unwrap_or_default())),
        None => Door::Took,
    }
}

fn window(h: &mut egui_kittest::Harness<'static, App>, name: &str) -> Door {
    app_mut(h).new_game(flychess_lab::game::Game::default(), shakmaty::Color::White, Some(name.to_string()));
    h.step();
    wait(h, "the player to be seated", |a| !a.lab.play().preparing_fly());
    let play = app(h).lab.play();
    match &play.fly {
        // A plain fly name that cannot play here gives this brain's fly, said in the status.
        Some(_) if play.status().contains("plays instead") => Door::Refused(play.status().to_string()),
        Some(_) => Door::Took,
        None => Door::Refused(play.status().to_string()),
    }
}

fn watch(h: &egui_kittest::Harness<'static, App>, data: &Path, name: &str) -> Door {
    let ready = app(h).ready().expect("the brain is loaded").clone();
    match flychess_lab::opponent::Opponent::start(name, data, ready, || {}) {
        Ok(_) => Door::Took,
        Err(e) => Door::Refused(e),
    }
}

/// The fifth door: the Python package's `Player(name, brain=…)` (`pip install ./python`, which
/// `.ci/run` does before the tests), every name in one Python process on one loaded brain. None,
/// said, where the package is not installed, which CI (FLYCHESS_CI) never allows.
fn python(data: &Path, names: &[&str]) -> Option<Vec<Door>> {
    const SEAT_EACH: &str = r#"
import json, sys
try:
    import flychess
except ImportError:
    print(json.dumps("no package")); sys.exit(0)
brain = flychess.Brain.load(data=sys.argv[1])
said = []
for name in sys.argv[2:]:
    try:
        flychess.Player(name, brain=brain)
        said.append(None)
    except Exception as e:
        said.append(f"{type(e).__name__}: {e.args[0] if e.args else e}")
print(json.dumps(said))
"#;
    let out = Command::new(common::python()).arg("-c").arg(SEAT_EACH).arg(data).args(names).output().expect("python runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    if said == "no package" {
        assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs the Python package (pip install ./python) before the tests");
        eprintln!("skipped the Python door: the flychess package is not installed (pip install ./python)");
        return None;
    }
    let said = said.as_array().expect("one answer a name");
    assert_eq!(said.len(), names.len());
    Some(said.iter().map(|s| s.as_str().map_or(Door::Took, |e| Door::Refused(e.to_string()))).collect())
}

#[test]
fn every_front_door_takes_and_refuses_the_same_names() {
    let data = data();
    let mut h = harness(&data);
    // The resolver's own words for an unknown name, which every door must pass on.
    let unknown = match flychess_arena::players::named(
        "nobody-at-all",
        &flychess_arena::players::Lookup::in_folder(&data, &flychess_charles::player::Runs),
    ) {
        Ok(_) => panic!("nobody-at-all was found"),
        Err(e) => e.to_string(),
    };
    assert!(
        unknown.contains("no player named \"nobody-at-all\"") && unknown.contains("flywire") && unknown.contains("+search"),
        "{unknown}"
    );
    // Habituation's tuning for the fly (as `flychess habituation-tune` keeps it).
    let fly = flychess_fly::fly::Fly::load(&flychess_fly::fly::find("flywire", &data).unwrap()).unwrap();
    let tuned = serde_json::json!({ fly.player_id(None): {"chosen": {"decay": 0.8, "weight": 1.0}} });
    std::fs::write(data.join("habituation.json"), tuned.to_string()).unwrap();
    let took = |d: &Door| matches!(d, Door::Took);
    let refused_with = |d: &Door, words: &str| matches!(d, Door::Refused(e) if e.contains(words));
    let names = [
        "flywire",
        "flywire+search8",
        "flywire+imagination",
        "flywire+habituation",
        "flywire+imagination+habituation:2",
        "flywire+habituation:-2",
        "flywire+imagination:-1",
        "flywire+imagination+imagination",
        "nobody-at-all",
        "flywire+nonsense",
        "stockfish:2",
        "random",
    ];
    let mut python = python(&data, &names).map(Vec::into_iter);
    for name in names {
        let mut doors = vec![
            ("command line", cli(&data, name)),
            ("UCI", uci(&data, name)),
            ("window", window(&mut h, name)),
            ("--watch", watch(&h, &data, name)),
        ];
        doors.extend(python.as_mut().map(|p| ("Python", p.next().expect("an answer a name"))));
        let said = format!("{name}: {doors:#?}");
        for (door, d) in &doors {
            match name {
                "flywire" | "flywire+search8" | "flywire+imagination" | "flywire+habituation" | "flywire+imagination+habituation:2" => {
                    assert!(took(d), "{door} {said}")
                }
                // A bad switch value is refused, naming it.
                "flywire+habituation:-2" => assert!(refused_with(d, "+habituation:-2"), "{door} {said}"),
                "flywire+imagination:-1" => assert!(refused_with(d, "+imagination:-1"), "{door} {said}"),
                "flywire+imagination+imagination" => assert!(refused_with(d, "given twice"), "{door} {said}"),
                "nobody-at-all" => assert!(refused_with(d, &unknown), "{door} {said}"),
                "flywire+nonsense" => assert!(refused_with(d, "+nonsense is no switch or aid"), "{door} {said}"),
                "stockfish:2" => assert!(refused_with(d, "stockfish:P takes a share P of random moves from 0 to 1"), "{door} {said}"),
                // A rung has no think for the board to show; every other door seats it.
                "random" if *door == "window" => assert!(refused_with(d, "--watch random"), "{door} {said}"),
                "random" => assert!(took(d), "{door} {said}"),
                _ => unreachable!(),
            }
        }
    }
    // The window seats the switch it was asked for (not the plain fly under the name).
    assert!(matches!(window(&mut h, "flywire+habituation"), Door::Took));
    let seated = app(&h).lab.play().fly.clone().expect("a fly is seated");
    assert!(
        matches!(seated.entrant, flychess_arena::players::Entrant::Fly { habituation: Some(ref hb), .. } if hb.decay == 0.8 && hb.weight == 1.0),
        "{:?}",
        seated.entrant
    );
}
