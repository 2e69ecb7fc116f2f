//! ARCHITECTURE.md is the map of the source tree (issue 58): every module of every crate has its
//! line there, and every module it names exists. A module added, moved or removed without its
//! line fails here, so the map cannot drift from the tree again. The house's rules that a grep can
//! hold are held here too: every module opens with its `//!` paragraph, no view names a simulator
//! crate, and no view switches off the clippy lints that keep files and threads out of it.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};

/// The crates' source folders the map covers.
const ROOTS: [&str; 9] = [
    "sim/brain/src",
    "sim/fly/src",
    "sim/charles/src",
    "sim/arena/src",
    "sim/learning/src",
    "render/src",
    "app/lab/src",
    "app/src",
    "python/src",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(repo()).expect("under the repository").to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The backticked paths ending in `.rs` in a Markdown text.
fn backticked_modules(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).filter(|s| s.ends_with(".rs") && !s.contains(' ')).map(str::to_string).collect()
}

#[test]
fn every_module_has_its_line_in_architecture_md_and_every_line_names_a_module_that_exists() {
    let map = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = Vec::new();
    for root in ROOTS {
        rust_files(&repo().join(root), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "only {} modules found", files.len());
    let named = backticked_modules(&map);
    let missing: Vec<&String> = files.iter().filter(|f| !named.contains(f)).collect();
    assert!(missing.is_empty(), "modules without their line in ARCHITECTURE.md: {missing:?}");
    let stale: Vec<&String> = named.iter().filter(|n| n.contains('/') && !repo().join(n).exists()).collect();
    assert!(stale.is_empty(), "ARCHITECTURE.md names modules that do not exist: {stale:?}");
}

#[test]
fn the_check_sees_a_missing_line_and_a_stale_name() {
    let text = "- `sim/arena/src/players.rs` — who plays.\n- `sim/arena/src/gone.rs` — was here.\n";
    let named = backticked_modules(text);
    assert_eq!(named, vec!["sim/arena/src/players.rs", "sim/arena/src/gone.rs"]);
    assert!(!repo().join("sim/arena/src/gone.rs").exists());
    assert!(!named.contains(&"sim/arena/src/ladder.rs".to_string()));
}

fn all_modules() -> Vec<String> {
    let mut files = Vec::new();
    for root in ROOTS {
        rust_files(&repo().join(root), &mut files);
    }
    files.sort();
    files
}

/// The first line of a module that is not blank and not an attribute.
fn opening(text: &str) -> &str {
    text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("#!")).unwrap_or("")
}

#[test]
fn every_module_opens_with_a_paragraph_saying_what_it_owns() {
    let files = all_modules();
    let without: Vec<&String> =
        files.iter().filter(|f| !opening(&std::fs::read_to_string(repo().join(f)).expect("readable")).starts_with("//!")).collect();
    assert!(without.is_empty(), "modules that do not open with a //! paragraph: {without:?}");
    assert!(!opening("use std::fs;\n//! too late\n").starts_with("//!"), "the check sees a missing paragraph");
}

#[test]
fn the_views_name_no_simulator_crate_and_keep_clippys_file_and_thread_lints_on() {
    let views: Vec<String> = all_modules().into_iter().filter(|f| f.starts_with("app/src/ui/")).collect();
    assert!(views.len() > 10, "only {} views found", views.len());
    for f in &views {
        let text = std::fs::read_to_string(repo().join(f)).expect("readable");
        for crate_name in ["flychess_brain", "flychess_fly", "flychess_charles", "flychess_arena", "flychess_learning", "flychess_sim"] {
            assert!(!text.contains(crate_name), "{f} names {crate_name}: the views go through the lab");
        }
        for lint in ["disallowed_methods", "disallowed_types", "clippy::all", "clippy::restriction"] {
            assert!(!text.contains(lint), "{f} mentions {lint}: app/clippy.toml's rules must hold in every view");
        }
    }
    let rules = std::fs::read_to_string(repo().join("app/clippy.toml")).expect("app/clippy.toml");
    for path in ["std::fs::write", "std::fs::read", "std::thread::spawn", "std::thread::Builder::spawn", "std::process::Command::new"] {
        assert!(rules.contains(&format!("\"{path}\"")), "app/clippy.toml no longer forbids {path}");
    }
}
