//! ARCHITECTURE.md is the map of the source tree (issue 58): every module of every crate has its
//! line there, and every module it names exists. A module added, moved or removed without its
//! line fails here, so the map cannot drift from the tree again.

use std::path::{Path, PathBuf};

/// The crates' source folders the map covers.
const ROOTS: [&str; 5] = ["sim/brain/src", "sim/src", "render/src", "app/src", "python/src"];

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
fn named_modules(text: &str) -> Vec<String> {
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
    let named = named_modules(&map);
    let missing: Vec<&String> = files.iter().filter(|f| !named.contains(f)).collect();
    assert!(missing.is_empty(), "modules without their line in ARCHITECTURE.md: {missing:?}");
    let stale: Vec<&String> = named.iter().filter(|n| n.contains('/') && !repo().join(n).exists()).collect();
    assert!(stale.is_empty(), "ARCHITECTURE.md names modules that do not exist: {stale:?}");
}

#[test]
fn the_check_sees_a_missing_line_and_a_stale_name() {
    let text = "- `sim/src/players.rs` — who plays.\n- `sim/src/gone.rs` — was here.\n";
    let named = named_modules(text);
    assert_eq!(named, vec!["sim/src/players.rs", "sim/src/gone.rs"]);
    assert!(!repo().join("sim/src/gone.rs").exists());
    assert!(!named.contains(&"sim/src/ladder.rs".to_string()));
}
