//! ARCHITECTURE.md is the map of the source tree (issue 58): every module of every crate has its
//! line there, and every module it names exists. A module added, moved or removed without its
//! line fails here, so the map cannot drift from the tree again. Every path and Rust path that
//! ARCHITECTURE.md, CONTRIBUTING.md and docs/design.md name, in backticks, links or prose, exists
//! too (issue 70), so a file moved or a module renamed fails here with each stale name's page and
//! line. The house's rules that a grep can hold are held here as well: every module opens with its
//! `//!` paragraph, no view names a simulator crate, and no view switches off the clippy lints that
//! keep files and threads out of it.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::{Path, PathBuf};

/// The crates' source folders the map covers.
const ROOTS: [&str; 10] = [
    "sim/brain/src",
    "sim/fly/src",
    "sim/charles/src",
    "sim/arena/src",
    "sim/learning/src",
    "render/src",
    "app/lab/src",
    "app/window/src",
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

/// The house's size rules (issue 70), beside clippy's own check of them: every crate root turns
/// on `clippy::too_many_lines` and each clippy.toml keeps the threshold at 120 lines; no file of
/// the command line is over 1,000 lines; the workspace allows `clippy::too_many_arguments` at most
/// five times (a long argument list becomes a struct of what belongs together).
#[test]
fn functions_files_and_argument_lists_keep_their_sizes() {
    let crate_roots: Vec<String> =
        ROOTS.iter().flat_map(|r| ["lib.rs", "main.rs"].map(|f| format!("{r}/{f}"))).filter(|f| repo().join(f).exists()).collect();
    assert!(crate_roots.len() >= ROOTS.len(), "{crate_roots:?}");
    let texts: Vec<(String, String)> =
        crate_roots.iter().map(|f| (f.clone(), std::fs::read_to_string(repo().join(f)).expect("readable"))).collect();
    let missing: Vec<&String> = texts.iter().filter(|(_, t)| !t.contains("#![warn(clippy::too_many_lines)]")).map(|(f, _)| f).collect();
    assert!(missing.is_empty(), "crate roots that do not turn on clippy::too_many_lines: {missing:?}");
    for config in ["clippy.toml", "app/clippy.toml", "app/lab/clippy.toml"] {
        let text = std::fs::read_to_string(repo().join(config)).expect("readable");
        assert!(text.contains("too-many-lines-threshold = 120"), "{config} does not keep functions to 120 lines");
    }
    let mut cli = Vec::new();
    rust_files(&repo().join("app/src/cli"), &mut cli);
    assert!(cli.len() > 20, "only {} command-line modules found", cli.len());
    let long: Vec<(String, usize)> = cli
        .into_iter()
        .map(|f| {
            let lines = std::fs::read_to_string(repo().join(&f)).expect("readable").lines().count();
            (f, lines)
        })
        .filter(|(_, n)| *n > 1000)
        .collect();
    assert!(long.is_empty(), "command-line files over 1,000 lines: {long:?}");
    let allowances: Vec<String> = all_modules()
        .into_iter()
        .filter(|f| std::fs::read_to_string(repo().join(f)).expect("readable").contains("allow(clippy::too_many_arguments)"))
        .collect();
    let count: usize = allowances
        .iter()
        .map(|f| std::fs::read_to_string(repo().join(f)).expect("readable").matches("allow(clippy::too_many_arguments)").count())
        .sum();
    assert!(count <= 5, "{count} allowances of clippy::too_many_arguments (at most 5): {allowances:?}");
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
    let views: Vec<String> = all_modules().into_iter().filter(|f| f.starts_with("app/window/src/ui/")).collect();
    assert!(views.len() > 10, "only {} views found", views.len());
    for f in &views {
        let text = std::fs::read_to_string(repo().join(f)).expect("readable");
        for crate_name in ["flychess_brain", "flychess_fly", "flychess_charles", "flychess_arena", "flychess_learning", "flychess_sim"] {
            assert!(!text.contains(crate_name), "{f} names {crate_name}: the views go through the lab");
        }
        for lint in ["disallowed_methods", "disallowed_types", "clippy::all", "clippy::restriction"] {
            assert!(!text.contains(lint), "{f} mentions {lint}: app/clippy.toml's rules must hold in every view");
        }
        // What clippy's list cannot see (a path it was never told, a `use` that renames): a view
        // names no file, thread or process API at all. `File::create`/`File::open` are std's; the
        // chess board's `File::G` is shakmaty's column.
        for disk in
            ["std::fs", "fs::", "std::thread", "std::process", "write_atomically", "OpenOptions", "File::create", "File::open", "tempfile"]
        {
            assert!(!text.contains(disk), "{f} names {disk}: a view reaches no disk, thread or process; a lab job does");
        }
    }
    let rules = std::fs::read_to_string(repo().join("app/clippy.toml")).expect("app/clippy.toml");
    for path in [
        "std::fs::write",
        "std::fs::read",
        "std::thread::spawn",
        "std::thread::Builder::spawn",
        "std::process::Command::new",
        "flychess_brain::files::write_atomically",
        "flychess_lab::lab::jobs::aside",
    ] {
        assert!(rules.contains(&format!("\"{path}\"")), "app/clippy.toml no longer forbids {path}");
    }
}

/// The pages that name the tree's paths and modules (issue 70): each name in them must exist.
const PAGES: [&str; 3] = ["ARCHITECTURE.md", "CONTRIBUTING.md", "docs/design.md"];

/// The repository's top-level folders: a name that starts with one of them is a path of the
/// repository, written from its root.
const TOP: [&str; 11] = ["app", "sim", "render", "shaders", "assets", "models", "installer", "docs", "tools", "python", ".ci"];

/// Endings that make a name a file of the repository, written from its root, even outside those
/// folders (`README.md`, `Cargo.toml`) and even when the page forgot the folders before it.
const ENDINGS: [&str; 6] = [".rs", ".md", ".toml", ".wgsl", ".py", ".sh"];

/// The workspace's library crates by the name Rust code calls them, and their sources.
const CRATES: [(&str, &str); 9] = [
    ("flychess_brain", "sim/brain/src"),
    ("flychess_fly", "sim/fly/src"),
    ("flychess_charles", "sim/charles/src"),
    ("flychess_arena", "sim/arena/src"),
    ("flychess_learning", "sim/learning/src"),
    ("flychess_render", "render/src"),
    ("flychess_lab", "app/lab/src"),
    ("flychess_window", "app/window/src"),
    ("flychess", "app/src"),
];

/// One module of the workspace: its crate, its path below the crate's root and its source.
struct Module {
    krate: &'static str,
    path: Vec<String>,
    text: String,
}

/// Every module of the library crates, and the names of the crates the workspace depends on
/// (Cargo.lock, and the toolchain's own), which a page may name without their being ours.
struct Tree {
    modules: Vec<Module>,
    external: Vec<String>,
}

impl Tree {
    fn read() -> Tree {
        let mut modules = Vec::new();
        for (krate, root) in CRATES {
            let mut files = Vec::new();
            rust_files(&repo().join(root), &mut files);
            for file in files {
                let below = file.strip_prefix(root).expect("under its root").trim_start_matches('/').trim_end_matches(".rs");
                let mut path: Vec<String> = below.split('/').map(str::to_string).collect();
                if path.last().is_some_and(|last| last == "mod" || last == "lib") {
                    path.pop();
                }
                if path == ["main"] {
                    continue;
                }
                let text = std::fs::read_to_string(repo().join(&file)).expect("readable");
                modules.push(Module { krate, path, text });
            }
        }
        let lock = std::fs::read_to_string(repo().join("Cargo.lock")).expect("Cargo.lock");
        let mut external: Vec<String> = lock
            .lines()
            .filter_map(|l| l.strip_prefix("name = \""))
            .map(|n| n.trim_end_matches('"').replace('-', "_"))
            .chain(["std", "core", "alloc", "proc_macro", "clippy", "rustdoc"].map(str::to_string))
            .collect();
        external.retain(|n| !CRATES.iter().any(|(k, _)| k == n));
        Tree { modules, external }
    }
}

/// Whether `word` stands in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word)
        .any(|(i, _)| !text[..i].chars().next_back().is_some_and(ident) && !text[i + word.len()..].chars().next().is_some_and(ident))
}

/// Whether a module declares `item` or re-exports it, following its glob re-exports of our crates.
fn declares(tree: &Tree, module: &Module, item: &str, depth: usize) -> bool {
    let kinds = ["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union", "macro_rules!"];
    if kinds.iter().any(|kind| has_word(&module.text, &format!("{kind} {item}"))) {
        return true;
    }
    let exports = module.text.split("pub use ").skip(1).map(|rest| rest.split(';').next().unwrap_or(""));
    for export in exports {
        if has_word(export, item) {
            return true;
        }
        if let Some(glob) = export.strip_suffix("::*")
            && depth < 4
        {
            let segments: Vec<&str> = glob.split("::").collect();
            let owner = tree.modules.iter().find(|m| {
                (m.krate == segments[0] && m.path == segments[1..])
                    || (segments[0] == "crate" && m.krate == module.krate && m.path == segments[1..])
            });
            if owner.is_some_and(|owner| declares(tree, owner, item, depth + 1)) {
                return true;
            }
        }
    }
    // A `#[macro_export]` macro stands at its crate's root whichever module defines it.
    module.path.is_empty() && tree.modules.iter().any(|m| m.krate == module.krate && has_word(&m.text, &format!("macro_rules! {item}")))
}

/// Why a Rust path a page names does not exist (`None`: it does, or it is not ours to check).
///
/// `flychess_fly::readout::choose` is looked up from its crate's root; a path without its crate
/// (`players::named`, `brain::cpu`) from any module of any crate whose path ends with its leading
/// modules. The first name after the modules must be declared or re-exported there; any name after
/// that (a method, a variant) must appear in that crate. A path led by a type (`Lab::command`)
/// names no module, and one led by a crate we depend on (`std::fs::write`) is not ours.
fn rust_path_missing(tree: &Tree, name: &str) -> Option<String> {
    let segments: Vec<&str> = name.trim_end_matches("::*").split("::").collect();
    if segments[0].starts_with(|c: char| c.is_ascii_uppercase()) {
        return type_path_missing(tree, &segments);
    }
    let (anchored, rest) = match CRATES.iter().find(|(k, _)| *k == segments[0]) {
        Some((krate, _)) => (Some(*krate), &segments[1..]),
        None if ["crate", "self", "super"].contains(&segments[0]) => (None, &segments[1..]),
        None => (None, &segments[..]),
    };
    // The longest run of leading names that is a module (`named` of them), and the modules it may be.
    let mut found: Vec<&Module> = Vec::new();
    let mut named = 0;
    for k in (0..=rest.len()).rev() {
        let lead = &rest[..k];
        found = tree
            .modules
            .iter()
            .filter(|m| match anchored {
                Some(krate) => m.krate == krate && m.path == lead,
                None => k > 0 && m.path.len() >= k && m.path[m.path.len() - k..] == *lead,
            })
            .collect();
        if !found.is_empty() {
            named = k;
            break;
        }
    }
    if found.is_empty() {
        if anchored.is_none() && tree.external.iter().any(|e| e == segments[0]) {
            return None;
        }
        return Some(format!("no crate or module `{}`", segments[0]));
    }
    let (item, members) = rest[named..].split_first()?;
    let owners: Vec<&&Module> = found.iter().filter(|m| declares(tree, m, item, 0)).collect();
    if owners.is_empty() {
        let modules: Vec<String> = found.iter().map(|m| format!("{}::{}", m.krate, m.path.join("::"))).collect();
        return Some(format!("`{item}` is not declared in {}", modules.join(" or ")));
    }
    for member in members {
        let known = owners.iter().any(|o| tree.modules.iter().any(|m| m.krate == o.krate && has_word(&m.text, member)));
        if !known {
            return Some(format!("no `{member}` in the crate of `{item}`"));
        }
    }
    None
}

/// Why a path led by a type (`Lab::command`, `players::Entrant::Aided` past its module) does not
/// exist: when one of our crates declares the type, each name after it must appear in that crate.
/// A type none of them declares (`Path::exists`, burn's `Module::valid`) is not ours to check.
fn type_path_missing(tree: &Tree, segments: &[&str]) -> Option<String> {
    let (ty, members) = segments.split_first()?;
    let kinds = ["struct", "enum", "trait", "type", "union"];
    let owners: Vec<&str> =
        tree.modules.iter().filter(|m| kinds.iter().any(|kind| has_word(&m.text, &format!("{kind} {ty}")))).map(|m| m.krate).collect();
    if owners.is_empty() {
        return None;
    }
    let member = members.iter().find(|member| !tree.modules.iter().any(|m| owners.contains(&m.krate) && has_word(&m.text, member)))?;
    Some(format!("no `{member}` in the crate of `{ty}`"))
}

/// Why a file or folder a page names does not exist (`None`: it does, or it is not a name of
/// the repository: a URL, the data folder's `DATA/…`, `~/…`, `$VAR/…`, the project's shared folder
/// beside the checkout `../shared/…`, a word with a slash such as `cpu/gpu`). A link's target is
/// read from its page's folder, as Markdown reads it; every other name from the repository's root.
fn repo_path_missing(page: &str, name: &str, link: bool) -> Option<String> {
    if name.contains("://") {
        return None;
    }
    let first = name.split('/').next().unwrap_or("");
    let ends_as_file = ENDINGS.iter().any(|e| name.ends_with(e) && name.len() > e.len());
    let outside = first == ".." || first.starts_with(['~', '$']) || !first.chars().any(|c| c.is_ascii_lowercase());
    let path = if link {
        Path::new(page).parent().unwrap_or(Path::new("")).join(name)
    } else if (TOP.contains(&first) && name.contains('/')) || (ends_as_file && !outside) {
        PathBuf::from(name)
    } else {
        return None;
    };
    (!matches_in_repo(&path)).then(|| "no such file or folder".to_string())
}

/// Whether a path exists under the repository, a `*` in a name standing for any characters.
fn matches_in_repo(path: &Path) -> bool {
    let mut here = vec![repo()];
    for part in path.components() {
        let part = part.as_os_str().to_string_lossy();
        if part == ".." {
            here.iter_mut().for_each(|p| {
                p.pop();
            });
            continue;
        }
        let Some((head, tail)) = part.split_once('*') else {
            here = here.into_iter().map(|p| p.join(&*part)).filter(|p| p.exists()).collect();
            continue;
        };
        here = here
            .into_iter()
            .filter_map(|p| std::fs::read_dir(&p).ok())
            .flat_map(|entries| entries.flatten().map(|e| e.path()))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(head) && n.to_string_lossy().ends_with(tail)))
            .collect();
    }
    !here.is_empty()
}

/// A name in a page: its line, the name, and whether it is a link's target.
type Name = (usize, String, bool);

/// The names in a page that may be paths or Rust paths: the page cut at every character that
/// cannot stand in either (spaces, backticks, brackets, commas, bars…), a sentence's last full
/// stop or colon taken off, `./` taken off the front, a file's `::item` and a link's `#part` taken
/// off the end.
fn names_in(text: &str) -> Vec<Name> {
    let inside = |c: char| c.is_alphanumeric() || "_-./:*~$#".contains(c);
    let mut names = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let mut start = 0;
        for piece in line.split_inclusive(|c: char| !inside(c)) {
            let word = piece.trim_end_matches(|c: char| !inside(c));
            let link = line[..start].ends_with("](");
            start += piece.len();
            let mut word = word.trim_end_matches(['.', ':', '-']).trim_start_matches("./");
            if link {
                word = word.split('#').next().unwrap_or("");
            }
            if let Some((head, _)) = word.split_once("::")
                && (head.contains('/') || ENDINGS.iter().any(|e| head.ends_with(e)))
            {
                word = head;
            }
            if word.contains('/') || word.contains("::") || ENDINGS.iter().any(|e| word.ends_with(e)) {
                names.push((number + 1, word.to_string(), link));
            }
        }
    }
    names
}

/// Every name of `text` (the page `page`) that does not exist, as `page:line: name (why)`.
fn missing_names(tree: &Tree, page: &str, text: &str) -> Vec<String> {
    let rust_path =
        |w: &str| w.trim_end_matches("::*").split("::").all(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'));
    names_in(text)
        .into_iter()
        .filter_map(|(line, name, link)| {
            let why = if name.contains("::") && !name.contains('/') {
                if !rust_path(&name) {
                    return None;
                }
                rust_path_missing(tree, &name)
            } else {
                repo_path_missing(page, &name, link)
            };
            why.map(|why| format!("{page}:{line}: `{name}` ({why})"))
        })
        .collect()
}

#[test]
fn every_path_and_module_the_map_and_the_guides_name_exists() {
    let tree = Tree::read();
    assert!(tree.modules.len() > 100, "only {} modules found", tree.modules.len());
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in PAGES {
        let text = std::fs::read_to_string(repo().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        checked += names_in(&text).len();
        missing.extend(missing_names(&tree, page, &text));
    }
    assert!(checked > 300, "only {checked} names read from {PAGES:?}");
    assert!(missing.is_empty(), "{} names in {PAGES:?} that do not exist:\n{}", missing.len(), missing.join("\n"));
}

#[test]
fn the_name_check_sees_stale_paths_and_modules_and_leaves_the_world_outside_alone() {
    let tree = Tree::read();
    let page = "The brain (`sim/connectome/mod.rs`, sim/readout) thinks; `app/thinker` plays,\n\
        [the map](../ARCHITECTURE.md) and [gone](../GONE.md); `simulator.rs::install`, `ui/play.rs`,\n\
        `sim::readout::policy`, `flychess_fly::readout::nonesuch`, `flychess_fly::readout::choose`,\n\
        `players::named`, `brain::cpu::NeededRows`, `flychess_brain::layer_error!`, `bptt::nonesuch`,\n\
        `std::fs::write`, `Lab::command`, `Lab::nonesuch`, `Module::valid`, docs/design.md, `models/*.fly`, sim/brain/data/, .ci/run.\n\
        Outside: DATA/flies/NAME.fly, ~/.local/share/flychess, $FLYCHESS_DATA/x.md, https://example.org/a/b.md, cpu/gpu,\n\
        ../shared/data, [a section](#the-map) and [results](results.md#ratings).\n";
    let missing = missing_names(&tree, "docs/design.md", page);
    let names: Vec<&str> = missing.iter().map(|m| m.split('`').nth(1).expect("a name in backticks")).collect();
    assert_eq!(
        names,
        [
            "sim/connectome/mod.rs",
            "sim/readout",
            "app/thinker",
            "../GONE.md",
            "simulator.rs",
            "ui/play.rs",
            "sim::readout::policy",
            "flychess_fly::readout::nonesuch",
            "bptt::nonesuch",
            "Lab::nonesuch",
        ],
        "{missing:#?}"
    );
    assert!(missing[0].starts_with("docs/design.md:1: "), "{}", missing[0]);
}

/// The crates `krate` depends on to build and run (its `[dependencies]`, for every target, not
/// its dev- or build-dependencies), and through the workspace's own crates those of theirs: the
/// normal edges of `cargo tree -p krate -e normal` as far as the workspace's manifests say.
fn dependency_tree(krate: &str) -> std::collections::BTreeSet<String> {
    let root = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    // members = ["app", "app/lab", …]: each member's folder by its package's name.
    let members = root.lines().find(|l| l.starts_with("members = [")).expect("the workspace's members");
    let folders: Vec<&str> = members.split('"').skip(1).step_by(2).collect();
    let folder_of = |name: &str| -> Option<&str> {
        folders.iter().copied().find(|f| {
            let manifest = std::fs::read_to_string(repo().join(f).join("Cargo.toml")).expect("a member's Cargo.toml");
            manifest.lines().any(|l| l == format!("name = \"{name}\""))
        })
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![krate.to_string()];
    while let Some(name) = todo.pop() {
        let Some(folder) = folder_of(&name) else { continue };
        let manifest = std::fs::read_to_string(repo().join(folder).join("Cargo.toml")).expect("a member's Cargo.toml");
        let mut normal = false;
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                normal = line == "[dependencies]" || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            } else if normal
                && let Some(dep) = line.split(['=', '.', ' ']).next().filter(|d| !d.is_empty() && !d.starts_with('#'))
                && seen.insert(dep.to_string())
            {
                todo.push(dep.to_string());
            }
        }
    }
    seen
}

/// The lab is the window's door only (issue 70): the command line's own crates (clap for its
/// arguments, indicatif for its progress bars, tempfile for its scratch files) are nowhere in the
/// lab's dependency tree nor in the window's (`flychess-window`, issue 69), and no
/// lab module builds a dataset: none makes a `Dataset` of rows or labels positions with
/// Stockfish's fresh MultiPV search (`analyse_fresh`). The dataset builders live in the simulator
/// crate whose data they make (`flychess_learning::datasets`), and the progress the lab reports
/// is drawn by the door that asked (indicatif's bars in the command line, egui's in the window).
#[test]
fn the_lab_is_the_windows_door_only_with_no_terminal_crate_and_no_dataset_builder() {
    let lab = dependency_tree("flychess-lab");
    assert!(lab.contains("flychess-learning") && lab.contains("burn") && lab.contains("shakmaty"), "the tree was not followed: {lab:?}");
    let app = dependency_tree("flychess");
    assert!(app.contains("clap") && app.contains("indicatif"), "the check sees the command line's crates: {app:?}");
    let window = dependency_tree("flychess-window");
    assert!(window.contains("flychess-lab") && window.contains("eframe"), "the tree was not followed: {window:?}");
    for terminal in ["clap", "indicatif", "tempfile"] {
        assert!(!lab.contains(terminal), "flychess-lab depends on {terminal}, a crate of the command line's");
        assert!(!window.contains(terminal), "flychess-window depends on {terminal}, a crate of the command line's");
    }
    let mut lab_modules = Vec::new();
    rust_files(&repo().join("app/lab/src"), &mut lab_modules);
    assert!(lab_modules.len() > 20, "only {} lab modules found", lab_modules.len());
    for f in &lab_modules {
        let text = std::fs::read_to_string(repo().join(f)).expect("readable");
        for builder in ["Dataset { meta", "analyse_fresh("] {
            assert!(!text.contains(builder), "{f} builds a dataset ({builder}): the dataset builders live in flychess_learning::datasets");
        }
    }
}
