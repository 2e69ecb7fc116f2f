//! Every reader of a user's file or stream fed damaged input (issue 39): real files of each kind
//! (a shipped fly, a readout fit's and a brain training run's checkpoints, Charles's weights, the
//! dopamine fly, a dataset, a FlyWire table, the column map, ladder games,
//! ratings, a DN cache and its sidecar, a Charles run's state, Stockfish's `info` lines, a UCI
//! session, FENs and PGN) cut short, bit-flipped, overwritten with extreme lengths, spliced, or
//! replaced by random bytes, and for the checksummed containers also damaged inside a valid
//! checksum (so the reader gets past it). Every case must end in the reader's answer or an error
//! that names the file, never a panic, and no single allocation may exceed `ALLOCATION_BOUND`
//! (this binary counts every allocation's size).
//!
//! `FLYCHESS_FUZZ_CASES=10000 cargo test --release -p flychess --test fuzz -- --nocapture` runs
//! the measured count per reader and prints the table; CI runs `CI_CASES`.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The largest single allocation any reader may make on these inputs (all under 1 MB).
const ALLOCATION_BOUND: usize = 64 << 20;
/// Cases per reader when FLYCHESS_FUZZ_CASES is not set.
const CI_CASES: usize = 150;

struct Counting;

/// The largest single allocation made while a case ran, on any thread: the reader's own, the
/// rayon threads it hands work to, the threads it starts (this binary has one test, so nothing
/// else allocates meanwhile but the harness's idle threads).
static LARGEST: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

fn count(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A seeded source of choices (splitmix64).
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// One damaged copy of `base`.
fn mutate(base: &[u8], dice: &mut Dice) -> Vec<u8> {
    let mut b = base.to_vec();
    let len = b.len();
    match dice.below(7) {
        0 => (0..dice.below(2 * len + 64)).map(|_| dice.next() as u8).collect(),
        1 => {
            b.truncate(dice.below(len + 1));
            b
        }
        2 => {
            for _ in 0..1 + dice.below(8) {
                if len > 0 {
                    let at = dice.below(len);
                    b[at] ^= 1 << dice.below(8);
                }
            }
            b
        }
        3 => {
            // A length or count field overwritten with an extreme value (or one just past the
            // allocation bound, which a reader's own sanity limit may still let through).
            let width = if dice.below(2) == 0 { 4 } else { 8 };
            if len >= width {
                let at = dice.below(len - width + 1);
                let past_bound = (ALLOCATION_BOUND + dice.below(ALLOCATION_BOUND)) as u64;
                let value: u64 = [u64::MAX, u32::MAX as u64, 0, 1 << 31, dice.next(), past_bound][dice.below(6)];
                b[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
            }
            b
        }
        4 => {
            let (at, n) = (dice.below(len + 1), dice.below(64));
            b.drain(at..(at + n).min(len));
            b
        }
        5 => {
            let (at, n) = (dice.below(len + 1), dice.below(64));
            let chunk: Vec<u8> = b[at..(at + n).min(len)].to_vec();
            let to = dice.below(len + 1);
            b.splice(to..to, chunk);
            b
        }
        _ => {
            let at = dice.below(len + 1);
            let noise: Vec<u8> = (0..1 + dice.below(32)).map(|_| dice.next() as u8).collect();
            b.splice(at..at, noise);
            b
        }
    }
}

/// A container file (magic, version, header length, header, body, sha256) damaged inside and
/// sealed again with a valid checksum, so the reader gets past the checksum.
fn resealed(base: &[u8], dice: &mut Dice) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let content = &base[..base.len().saturating_sub(32)];
    let mut inner = mutate(content, dice);
    // Mostly keep the magic and version, so the header and body are what is read.
    if inner.len() >= 12 && dice.below(4) != 0 {
        inner[..12].copy_from_slice(&content[..12]);
    }
    let digest = Sha256::digest(&inner);
    inner.extend_from_slice(&digest);
    inner
}

/// A brain file damaged inside and sealed again: its checksum follows the arrays and a build note
/// follows the checksum (`u32` length, JSON), so both are found from the end and put back.
fn resealed_brain(base: &[u8], dice: &mut Dice) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let note = (0..base.len().min(4096))
        .find(|&n| base.len() >= n + 36 && u32::from_le_bytes(base[base.len() - n - 4..base.len() - n].try_into().unwrap()) as usize == n)
        .expect("a brain file ends with its build note");
    let content_end = base.len() - note - 36;
    let mut out = mutate(&base[..content_end], dice);
    if out.len() >= 16 && dice.below(4) != 0 {
        out[..16].copy_from_slice(&base[..16]);
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out.extend_from_slice(&base[content_end + 32..]);
    out
}

/// The neurons `keep` (sorted) of `c` and the connections among them: a small brain file of real
/// wiring (the whole stand-in's is 81 MB).
fn some_neurons(c: &flychess_brain::connectome::Connectome, keep: &[usize]) -> flychess_brain::connectome::Connectome {
    use flychess_brain::connectome::{Csr, Groups, Neurons};
    let mut new_index = vec![u32::MAX; c.neurons.len()];
    for (k, &i) in keep.iter().enumerate() {
        new_index[i] = k as u32;
    }
    let (mut inputs, mut row_start) = (Csr::default(), vec![0u32]);
    for &j in keep {
        for e in c.inputs.row(j).filter(|&e| new_index[c.inputs.pre[e] as usize] != u32::MAX) {
            inputs.pre.push(new_index[c.inputs.pre[e] as usize]);
            inputs.synapses.push(c.inputs.synapses[e]);
            inputs.strength.push(c.inputs.strength[e]);
        }
        row_start.push(inputs.pre.len() as u32);
    }
    inputs.row_start = row_start;
    let within = |v: &[u32]| v.iter().map(|&i| new_index[i as usize]).filter(|&i| i != u32::MAX).collect::<Vec<u32>>();
    fn pick<T: Clone>(v: &[T], keep: &[usize]) -> Vec<T> {
        keep.iter().map(|&i| v[i].clone()).collect()
    }
    let m = &c.neurons;
    let mbon: Vec<(u32, i8)> =
        c.groups.mbon.iter().zip(&c.groups.mbon_valence).map(|(&i, &v)| (new_index[i as usize], v)).filter(|p| p.0 != u32::MAX).collect();
    let mut eye = c.eye.clone();
    eye.cells = c
        .eye
        .cells
        .iter()
        .filter(|e| new_index[e.neuron as usize] != u32::MAX)
        .map(|e| flychess_brain::eye::EyeCell { neuron: new_index[e.neuron as usize], ..*e })
        .collect();
    flychess_brain::connectome::Connectome {
        provenance: c.provenance.clone(),
        neurons: Neurons {
            body_id: pick(&m.body_id, keep),
            cell_type: pick(&m.cell_type, keep),
            class: pick(&m.class, keep),
            superclass: pick(&m.superclass, keep),
            names: m.names.clone(),
            side: pick(&m.side, keep),
            region: pick(&m.region, keep),
            soma_um: pick(&m.soma_um, keep),
            transmitter: pick(&m.transmitter, keep),
            sign: pick(&m.sign, keep),
        },
        inputs,
        eye,
        groups: Groups {
            descending: within(&c.groups.descending),
            kenyon: within(&c.groups.kenyon),
            mbon: mbon.iter().map(|p| p.0).collect(),
            mbon_valence: mbon.iter().map(|p| p.1).collect(),
            pam: within(&c.groups.pam),
            ppl1: within(&c.groups.ppl1),
        },
        build_seconds: c.build_seconds,
    }
}

/// A dataset whose rows are damaged before compression (header and checksum valid).
fn damaged_rows(base: &[u8], dice: &mut Dice) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let len = u32::from_le_bytes(base[12..16].try_into().unwrap()) as usize;
    let (head, body) = (&base[..16 + len], &base[16 + len..base.len() - 32]);
    let rows = zstd::decode_all(body).unwrap();
    let packed = zstd::encode_all(&mutate(&rows, dice)[..], 1).unwrap();
    let mut out = head.to_vec();
    out.extend_from_slice(&packed);
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

#[derive(Default)]
struct Tally {
    cases: usize,
    accepted: usize,
    refused: usize,
    panics: usize,
    unnamed: usize,
    largest: usize,
    first_panic: Option<String>,
    first_unnamed: Option<String>,
    /// The input of the largest allocation.
    largest_input: Vec<u8>,
}

/// How damaged copies of a reader's input are made.
#[derive(Clone, Copy)]
enum Damage {
    Bytes,
    Container,
    DatasetRows,
    /// Damage kept mostly to a file's first bytes (a fixed header and the metadata after it,
    /// whose lengths are given): fields a random place in a large file would seldom hit.
    Heads([usize; 2]),
    BrainFile,
}

/// `base` with only its first `n` bytes damaged.
fn damaged_head(base: &[u8], n: usize, dice: &mut Dice) -> Vec<u8> {
    let mut out = mutate(&base[..n.min(base.len())], dice);
    out.extend_from_slice(&base[n.min(base.len())..]);
    out
}

/// A reader under test: the damaged bytes in, its answer or its error message out.
type ReadFn<'a> = Box<dyn Fn(&[u8]) -> Result<(), String> + 'a>;

struct Reader<'a> {
    name: &'static str,
    bases: Vec<Vec<u8>>,
    damage: Damage,
    /// Where the damaged bytes are written before the reader reads them (None: the reader takes the bytes).
    file: Option<PathBuf>,
    read: ReadFn<'a>,
}

fn run(reader: &Reader, cases: usize, seed: u64) -> Tally {
    let mut tally = Tally::default();
    let mut dice = Dice(seed);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for case in 0..cases {
        let base = &reader.bases[case % reader.bases.len()];
        let bytes = match reader.damage {
            Damage::Container if dice.below(2) == 0 => resealed(base, &mut dice),
            Damage::DatasetRows if dice.below(3) == 0 => damaged_rows(base, &mut dice),
            Damage::DatasetRows if dice.below(2) == 0 => resealed(base, &mut dice),
            Damage::BrainFile if dice.below(3) == 0 => resealed_brain(base, &mut dice),
            Damage::BrainFile if dice.below(2) == 0 => damaged_head(base, 16, &mut dice),
            Damage::Heads(heads) if dice.below(3) != 0 => {
                let n = heads[dice.below(2)];
                damaged_head(base, n, &mut dice)
            }
            _ => mutate(base, &mut dice),
        };
        if let Some(path) = &reader.file {
            std::fs::write(path, &bytes).unwrap();
        }
        LARGEST.store(0, Ordering::SeqCst);
        COUNTING.store(true, Ordering::SeqCst);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (reader.read)(&bytes)));
        COUNTING.store(false, Ordering::SeqCst);
        let largest = LARGEST.load(Ordering::SeqCst);
        if largest > tally.largest {
            tally.largest = largest;
            tally.largest_input = bytes.clone();
        }
        tally.cases += 1;
        match outcome {
            Ok(Ok(())) => tally.accepted += 1,
            Ok(Err(message)) => {
                tally.refused += 1;
                // A part's sidecar is named by its part (`x.part-1-of-1.dn` for `x.part-1-of-1.json`).
                let named = reader.file.as_ref().is_none_or(|p| {
                    let stem = p.file_stem().unwrap().to_string_lossy();
                    message.contains(&*p.file_name().unwrap().to_string_lossy()) || (stem.contains(".part-") && message.contains(&*stem))
                });
                // A reader with no file must quote its input instead (it marks a refusal that does not).
                let named = named && !message.starts_with("UNQUOTED: ");
                if !named {
                    tally.unnamed += 1;
                    tally.first_unnamed.get_or_insert(message);
                }
            }
            Err(panic) => {
                tally.panics += 1;
                let what = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
                tally.first_panic.get_or_insert(format!("case {case}: {}", what.unwrap_or_default()));
            }
        }
    }
    std::panic::set_hook(quiet);
    tally
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn flychess(data: &Path, args: &[&str]) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flychess")).arg("--data").arg(data).args(args).output().unwrap();
    assert!(out.status.success(), "flychess {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_reader_refuses_damaged_input_by_name_without_panicking_or_allocating_beyond_the_bound() {
    use flychess_fly::cache::{Cache, CacheMeta, Reading};
    use flychess_fly::data::Dataset;
    let cases: usize = std::env::var("FLYCHESS_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_CASES);
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let at = |name: &str| dir.join(name);
    let s = |e: &dyn std::fmt::Display| e.to_string();

    // Real inputs of each kind.
    let fly = std::fs::read(repo("models/flywire.fly")).unwrap();
    let dopamine = std::fs::read(repo("models/flywire-dopamine.fly")).unwrap();
    let ratings = std::fs::read(repo("models/ratings.json")).unwrap();
    let mut small = Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
    small.rows.truncate(48);
    small.save(&at("small.flyd")).unwrap();
    let dataset = std::fs::read(at("small.flyd")).unwrap();
    let fens: Vec<Vec<u8>> = small.rows.iter().take(16).map(|r| r.fen.clone().into_bytes()).collect();
    let table = std::fs::read(repo("sim/brain/data/flywire783-hemispheres/consolidated_cell_types.feather")).unwrap();
    let columns = {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(repo("sim/brain/data/flywire783-columns/column_assignment.csv.gz")).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        text.lines().take(400).collect::<Vec<_>>().join("\n").into_bytes()
    };
    // Games played by the program itself, and a PGN it wrote.
    let games_data = at("games-data");
    flychess(&games_data, &["duel", "random", "greedy", "--games", "2"]);
    let games_file = std::fs::read_dir(games_data.join("ladder"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let games = std::fs::read(&games_file).unwrap();
    let rows = flychess_arena::ladder::read_games(&games_file).unwrap();
    let pgns: Vec<Vec<u8>> = rows.iter().map(|r| r.pgn.clone().into_bytes()).collect();
    // A DN cache of three positions (its rates are bytes; any bytes are rates) and its sidecar.
    let meta = CacheMeta::of("0123456789abcdef", "h", "small", 48, "c0ffee", 20);
    let cache_path = at("cache/x.dn");
    Cache::open(&cache_path, meta.clone()).unwrap();
    std::fs::write(&cache_path, (0..120u8).collect::<Vec<u8>>()).unwrap();
    let sidecar = std::fs::read(cache_path.with_extension("json")).unwrap();
    let part_meta = meta.part("1/1".parse().unwrap(), 3);
    let part_path = at("cache/x.part-1-of-1.dn");
    std::fs::write(&part_path, (0..120u8).collect::<Vec<u8>>()).unwrap();
    let part_sidecar = serde_json::to_vec_pretty(&part_meta).unwrap();
    // A readout fit's checkpoint after a real Adam step (the best fly and the fit's state).
    let checkpoint = {
        use flychess_fly::scoring::{FitState, Metrics, Target};
        use flychess_learning::burn_fit::{BurnFit, FitOn};
        let readout = flychess_fly::readout::Readout::newborn(8, vec![11], 1);
        let targets: Vec<Target> = small.rows.iter().take(4).map(|r| Target::of(r).unwrap()).collect();
        let mut fit = BurnFit::on(&readout, FitOn::Cpu).unwrap();
        fit.step(vec![0.5; 4 * 8], &targets.iter().collect::<Vec<_>>(), 1e-3).unwrap();
        let fly = flychess_fly::fly::Fly {
            meta: flychess_fly::fly::Fly::load(&repo("models/flywire.fly")).unwrap().meta,
            readout: fit.readout(&readout).unwrap(),
        };
        let state =
            FitState { passes: 3, learning_rate: 1e-3, misses: 1, best_val: Metrics::default(), adam: Some(fit.adam_state().unwrap()) };
        flychess_fly::fly::Checkpoint { fly, state }.save(&at("base.fit")).unwrap();
        std::fs::read(at("base.fit")).unwrap()
    };
    // A brain training run's checkpoint (both optimisers Adam: every array written), on a small
    // brain, and the brain and readout a resumed run checks it against.
    let (brain_base, brain_readout, brain_checkpoint) = {
        use flychess_learning::bptt::run::{BrainOptimizer, Leash, RunOptions};
        let s = flychess_learning::bptt::check::small_brain(11);
        let mut brain = s.brain.clone();
        let base = flychess_learning::bptt::Base::of(&brain);
        let leash = Leash {
            window: 6,
            calm_unreached: false,
            brain_optimizer: BrainOptimizer::Adam,
            max_change: Some(0.2),
            lr_synapses: 0.05,
            lr_neurons: 0.05,
            lr_readout: 1e-2,
        };
        let options = RunOptions { leash, positions: 16, batch: 8, val_every: 8, val: 8, seed: 5 };
        let setup = s.run_setup(&base, &mut brain, &small.rows[..32], &small.rows[32..]);
        let stop = std::sync::atomic::AtomicBool::new(false);
        flychess_learning::bptt::run::run(setup, &options, &at("brain-run"), &stop, &|_, _, _| {}).unwrap();
        (base, s.readout, std::fs::read(at("brain-run.ckpt")).unwrap())
    };
    // Charles's weights as the shipped run keeps them: a record without their checksum (written
    // before checkpoints named their weights), so the weights' reader itself sees the damage.
    let charles_weights = flychess_charles::run::RunFiles::of(dir, "fuzz-weights");
    std::fs::create_dir_all(&charles_weights.dir).unwrap();
    std::fs::copy(repo("models/charles/state.json"), charles_weights.state()).unwrap();
    let weights = std::fs::read(repo("models/charles/model.bpk")).unwrap();
    let weights_metadata = u32::from_le_bytes(weights[6..10].try_into().unwrap()) as usize;
    let device = flychess_learning::burn_device::FitOn::Cpu.device().unwrap();
    // A brain file of real wiring (the stand-in's first neurons, with eye cells, descending
    // neurons and the mushroom body's groups among them) and its homeostasis, as a start reads
    // them: the header first (is it this build's brain?), then the whole file, then the brain.
    let standin = flychess_brain::store::ensure(&flychess_brain::store::BrainSpec::standin(), &at("brain-data"), &|_, _| {}).unwrap();
    let keep: Vec<usize> = {
        // Some of every group, eye cells, and the neurons those send to and hear from.
        let (c, g) = (&standin.connectome, &standin.connectome.groups);
        let mut seeds: Vec<usize> = [&g.descending, &g.kenyon, &g.mbon, &g.pam, &g.ppl1]
            .iter()
            .flat_map(|v| v.iter().take(6).map(|&i| i as usize))
            .chain(c.eye.cells.iter().take(48).map(|e| e.neuron as usize))
            .collect();
        let heard: Vec<usize> = seeds.iter().flat_map(|&j| c.inputs.row(j).take(8).map(|e| c.inputs.pre[e] as usize)).collect();
        seeds.extend(heard);
        seeds.sort_unstable();
        seeds.dedup();
        seeds
    };
    let small_connectome = some_neurons(&standin.connectome, &keep);
    flychess_brain::connectome::brain_file::save(&small_connectome, &at("base.brain")).unwrap();
    let brain_bytes = std::fs::read(at("base.brain")).unwrap();
    let small_brain = flychess_brain::brain::Brain::new(&small_connectome);
    let homeostasis_options = flychess_brain::calibrate::CalibrationOptions::default();
    flychess_brain::calibrate::save(small_brain.homeostasis(), &at("base.homeostasis"), "small", homeostasis_options).unwrap();
    let homeostasis = std::fs::read(at("base.homeostasis")).unwrap();
    // A Charles run's state (what a resumed run reads first).
    let charles = flychess_charles::run::RunFiles::of(dir, "fuzz");
    std::fs::create_dir_all(charles.state().parent().unwrap()).unwrap();
    let state = std::fs::read(repo("models/charles/state.json")).unwrap();
    // Stockfish's replies, as Stockfish 15.1 prints them.
    let info: Vec<Vec<u8>> = [
        "info depth 10 seldepth 13 multipv 1 score cp -309 wdl 0 0 1000 nodes 83569 nps 733061 hashfull 18 tbhits 0 time 114 pv c6e5 d4e5 f6d7",
        "info depth 22 seldepth 30 multipv 3 score mate -4 wdl 0 0 1000 nodes 1234567 nps 900000 time 1371 pv e1g1 e8g8",
        "info depth 5 currmove e2e4 currmovenumber 1",
        "info depth 12 seldepth 16 multipv 2 score cp 31 upperbound wdl 55 900 45 nodes 200000 pv g1f3",
    ]
    .iter()
    .map(|l| l.as_bytes().to_vec())
    .collect();
    // A UCI session as a GUI sends it, without what loads a brain (`uci`, `isready`, `go`, the
    // `Player` option): the brain's own arrays are not sized by the input.
    let uci_sessions: Vec<Vec<u8>> = [
        "uci\nsetoption name MultiPV value 3\nsetoption name Threads value 1\nucinewgame\nposition startpos moves e2e4 e7e5 g1f3\nstop\nquit\n",
        "uci\nposition fen rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 moves g1f3 b8c6\nsetoption name Imagination value 4\nquit\n",
    ]
    .iter()
    .map(|l| l.as_bytes().to_vec())
    .collect();
    let uci_data = at("uci-data");
    // Sessions that think: the stand-in brain loaded once (its shipped fly, `backprop`, plays by
    // default) and handed to every case, `go` under every kind of limit, a search player, a
    // held think stopped, options set between thinks.
    let thinking_sessions: Vec<Vec<u8>> = [
        "uci\nisready\nposition startpos moves e2e4\ngo movetime 30\nsetoption name MultiPV value 3\ngo nodes 4\nquit\n",
        "uci\nsetoption name Player value backprop+search8\nisready\nposition startpos\ngo wtime 900 btime 900 winc 10 binc 10 movestogo 5\n\
         go depth 2\ngo infinite\nisready\nstop\nsetoption name UCI_ShowWDL value true\ngo movetime 20 searchmoves e2e4 d2d4\nquit\n",
        "uci\nsetoption name Imagination value 1\nposition fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\ngo\nposition startpos moves d2d4\n\
         go ponder movetime 10\nponderhit\nsetoption name Player value greedy\ngo mate 2\nquit\n",
    ]
    .iter()
    .map(|l| l.as_bytes().to_vec())
    .collect();
    let (standin_loaded, standin_brain) = flychess_brain::store::ready_brain(
        &flychess_brain::store::BrainSpec::standin(),
        &at("brain-data"),
        flychess_brain::calibrate::CalibrationOptions::default(),
        &|_, _| {},
    )
    .unwrap();
    let standin_cpu = std::sync::Arc::new(
        flychess_brain::brain::simulator::Simulator::choose(flychess_brain::brain::simulator::EngineChoice::Cpu, &standin_brain).unwrap(),
    );
    let standin_ready = (std::sync::Arc::new(standin_loaded), std::sync::Arc::new(standin_brain), standin_cpu);

    let readers: Vec<Reader> = vec![
        Reader {
            name: "FEN",
            bases: fens,
            damage: Damage::Bytes,
            file: None,
            read: Box::new(|b| flychess_brain::chess::position_from_fen(&String::from_utf8_lossy(b)).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "PGN (the window's import)",
            bases: pgns.clone(),
            damage: Damage::Bytes,
            file: Some(at("import.pgn")),
            read: Box::new(|_| flychess_lab::lab::read_pgn(&at("import.pgn")).map(|_| ()).map_err(|e| format!("{e:#}"))),
        },
        Reader {
            name: "PGN (a game's text)",
            bases: pgns,
            damage: Damage::Bytes,
            file: None,
            read: Box::new(|b| flychess_lab::game::Game::from_pgn(&String::from_utf8_lossy(b)).map(|_| ()).map_err(|e| format!("{e:#}"))),
        },
        Reader {
            name: "fly (.fly)",
            bases: vec![fly],
            damage: Damage::Container,
            file: Some(at("x.fly")),
            read: Box::new(|_| flychess_fly::fly::Fly::load(&at("x.fly")).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "fit checkpoint (.fit)",
            bases: vec![checkpoint],
            damage: Damage::Container,
            file: Some(at("x.fit")),
            read: Box::new(|_| {
                // As a resumed fit reads it: the container, then Adam's state into burn's optimiser.
                let c = flychess_fly::fly::Checkpoint::load(&at("x.fit")).map_err(|e| s(&e))?;
                flychess_learning::burn_fit::BurnFit::resume(
                    &c.fly.readout,
                    flychess_learning::burn_device::FitOn::Cpu,
                    c.state.adam.as_deref(),
                )
                .map(|_| ())
                .map_err(|e| format!("{}: {e}", at("x.fit").display()))
            }),
        },
        Reader {
            name: "brain training checkpoint (.ckpt)",
            bases: vec![brain_checkpoint],
            damage: Damage::Container,
            file: Some(at("b.ckpt")),
            read: Box::new(|_| {
                flychess_learning::bptt::run::read_checkpoint(&at("b.ckpt"), &brain_base, &brain_readout).map(|_| ()).map_err(|e| s(&e))
            }),
        },
        Reader {
            name: "Charles's weights (model.bpk)",
            bases: vec![weights],
            // burnpack: magic, version and the metadata's length (10 bytes), then the metadata.
            damage: Damage::Heads([10, 10 + weights_metadata]),
            file: Some(charles_weights.model()),
            read: Box::new(|_| flychess_charles::run::load(&charles_weights, &device).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "brain file (.brain)",
            bases: vec![brain_bytes],
            damage: Damage::BrainFile,
            file: Some(at("b.brain")),
            read: Box::new(|_| {
                use flychess_brain::connectome::brain_file;
                let path = at("b.brain");
                brain_file::read_header(&path).map_err(|e| s(&e))?;
                let loaded = brain_file::load(&path).map_err(|e| s(&e))?;
                // As the readout and the dopamine fly use it: the descending neurons read, the
                // mushroom body taken out (a brain without one is no damage).
                let c = &loaded.connectome;
                let brain = flychess_brain::brain::Brain::new(c);
                c.info();
                let boards = [flychess_brain::chess::planes(&shakmaty::Chess::default())];
                flychess_brain::brain::simulator::Simulator::Cpu
                    .read(&brain, &boards, &c.groups.descending, &[8, 11])
                    .map_err(|e| s(&e))?;
                let _ = flychess_arena::bio::BioBrain::split(c, &brain, "small", flychess_arena::bio::Constants::default());
                Ok(())
            }),
        },
        Reader {
            name: "homeostasis (.homeostasis)",
            bases: vec![homeostasis],
            damage: Damage::Container,
            file: Some(at("b.homeostasis")),
            read: Box::new(|_| {
                // A stored homeostasis that is not this brain's is measured again (None), never used;
                // a damaged one is refused naming the file (and measured again by `load`).
                let h = flychess_brain::calibrate::read(&at("b.homeostasis"), "small", small_brain.neurons, homeostasis_options)
                    .map_err(|e| s(&e))?;
                if let Some(h) = h {
                    let mut brain = small_brain.clone();
                    brain.set_homeostasis(h);
                    flychess_brain::brain::cpu::think(&brain, &[flychess_brain::chess::planes(&shakmaty::Chess::default())]);
                }
                Ok(())
            }),
        },
        Reader {
            name: "dopamine fly (.fly)",
            bases: vec![dopamine],
            damage: Damage::Container,
            file: Some(at("d.fly")),
            read: Box::new(|_| flychess_arena::bio::file::DopamineFly::load(&at("d.fly")).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "dataset (.flyd), loaded",
            bases: vec![dataset.clone()],
            damage: Damage::DatasetRows,
            file: Some(at("d1.flyd")),
            read: Box::new(|_| Dataset::load(&at("d1.flyd")).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "dataset (.flyd), streamed",
            bases: vec![dataset],
            damage: Damage::DatasetRows,
            file: Some(at("d2.flyd")),
            read: Box::new(|_| {
                let stream = Dataset::stream(&at("d2.flyd")).map_err(|e| s(&e))?;
                stream.content_hash().map_err(|e| s(&e))?;
                for row in Dataset::stream(&at("d2.flyd")).map_err(|e| s(&e))? {
                    row.map_err(|e| s(&e))?;
                }
                Ok(())
            }),
        },
        Reader {
            name: "FlyWire table (feather)",
            bases: vec![table],
            damage: Damage::Bytes,
            file: Some(at("cell_types.feather")),
            read: Box::new(|_| {
                let path = at("cell_types.feather");
                let mut table =
                    flychess_brain::connectome::feather::Table::open(&path, &["root_id", "primary_type"], &[]).map_err(|e| s(&e))?;
                while let Some(batch) = table.next_batch().map_err(|e| s(&e))? {
                    batch.ints("root_id").map_err(|e| s(&e))?;
                    batch.strings("primary_type").map_err(|e| s(&e))?;
                }
                Ok(())
            }),
        },
        Reader {
            name: "column map (CSV)",
            bases: vec![columns],
            damage: Damage::Bytes,
            file: Some(at("columns.csv")),
            read: Box::new(|_| flychess_brain::connectome::column_map::ColumnMap::read(&at("columns.csv")).map(|_| ())),
        },
        Reader {
            name: "ladder games (.jsonl)",
            bases: vec![games],
            damage: Damage::Bytes,
            file: Some(at("games.jsonl")),
            read: Box::new(|_| flychess_arena::ladder::read_games(&at("games.jsonl")).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "ratings (ratings.json)",
            bases: vec![ratings],
            damage: Damage::Bytes,
            file: Some(at("ratings.json")),
            read: Box::new(|_| {
                // What the Flies tab reads (it warns once and shows the shipped ladder instead).
                flychess_lab::lab::flies::read_ratings_file(&at("ratings.json")).map(|_| ()).map_err(|e| format!("{e:#}"))
            }),
        },
        Reader {
            name: "DN cache (.dn)",
            bases: vec![(0..120u8).collect()],
            damage: Damage::Bytes,
            file: Some(cache_path.clone()),
            read: Box::new(|_| {
                let c = Cache::open(&cache_path, meta.clone()).map_err(|e| s(&e))?;
                c.read(0..c.positions, Reading::Step12).map(|_| ()).map_err(|e| s(&e))
            }),
        },
        Reader {
            name: "DN cache sidecar (.json)",
            bases: vec![sidecar],
            damage: Damage::Bytes,
            file: Some(cache_path.with_extension("json")),
            read: Box::new(|_| {
                let c = Cache::open(&cache_path, meta.clone()).map_err(|e| s(&e))?;
                c.read(0..c.positions, Reading::Mean9To12).map(|_| ()).map_err(|e| s(&e))
            }),
        },
        Reader {
            name: "cache part's sidecar (merge)",
            bases: vec![part_sidecar],
            damage: Damage::Bytes,
            file: Some(part_path.with_extension("json")),
            read: Box::new(|_| Cache::merge(std::slice::from_ref(&part_path)).map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "Charles run state (state.json)",
            bases: vec![state],
            damage: Damage::Bytes,
            file: Some(charles.state()),
            read: Box::new(|_| charles.record().map(|_| ()).map_err(|e| s(&e))),
        },
        Reader {
            name: "Stockfish info line",
            bases: info,
            damage: Damage::Bytes,
            file: None,
            read: Box::new(|b| {
                // A refusal must quote the line (there is no file to name).
                let line = String::from_utf8_lossy(b);
                match flychess_fly::stockfish::read_info(&line) {
                    Err(e) if !e.contains(&format!("{:?}", line.chars().take(80).collect::<String>())) => Err(format!("UNQUOTED: {e}")),
                    other => other.map(|_| ()),
                }
            }),
        },
        Reader {
            name: "UCI input (no brain loaded)",
            bases: uci_sessions,
            damage: Damage::Bytes,
            file: None,
            read: Box::new(|b| {
                let loads_brain = |l: &str| {
                    let words: Vec<&str> = l.split_whitespace().collect();
                    matches!(words.first(), Some(&"uci" | &"go" | &"isready"))
                        || (words.first() == Some(&"setoption") && words.iter().any(|w| w.eq_ignore_ascii_case("player")))
                };
                let text: String = String::from_utf8_lossy(b).lines().filter(|l| !loads_brain(l)).map(|l| format!("{l}\n")).collect();
                let start = flychess::uci::Start {
                    data: uci_data.clone(),
                    spec: flychess_brain::store::BrainSpec::standin(),
                    player: None,
                    engine: flychess_brain::brain::simulator::EngineChoice::Cpu,
                };
                let mut out = Vec::new();
                flychess::uci::serve(start, std::io::Cursor::new(text.into_bytes()), &mut out).map_err(|e| format!("{e:#}"))
            }),
        },
        Reader {
            name: "UCI input (a brain loaded, go)",
            bases: thinking_sessions,
            damage: Damage::Bytes,
            file: None,
            read: Box::new(|b| {
                let start = flychess::uci::Start {
                    data: at("brain-data"),
                    spec: flychess_brain::store::BrainSpec::standin(),
                    player: None,
                    engine: flychess_brain::brain::simulator::EngineChoice::Cpu,
                };
                let mut out = Vec::new();
                let loaded = Some(flychess::uci::LoadedBrain {
                    loaded: standin_ready.0.clone(),
                    brain: standin_ready.1.clone(),
                    cpu_engine: Some(standin_ready.2.clone()),
                });
                flychess::uci::serve_loaded(start, loaded, std::io::Cursor::new(b.to_vec()), &mut out).map_err(|e| format!("{e:#}"))?;
                // Every `bestmove` is a move or says there is none: never a panic's silence.
                let text = String::from_utf8_lossy(&out);
                match text.lines().filter_map(|l| l.strip_prefix("bestmove ")).find(|m| m.is_empty()) {
                    Some(_) => Err("an empty bestmove".into()),
                    None => Ok(()),
                }
            }),
        },
    ];

    let mut table = format!(
        "{:<32} {:>7} {:>9} {:>8} {:>7} {:>9} {:>13} {:>8}\n",
        "reader", "cases", "accepted", "refused", "panics", "unnamed", "largest alloc", "seconds"
    );
    let mut failures = Vec::new();
    for (k, reader) in readers.iter().enumerate() {
        let started = std::time::Instant::now();
        let tally = run(reader, cases, 0xF1C5 + k as u64);
        let seconds = started.elapsed().as_secs_f64();
        table.push_str(&format!(
            "{:<32} {:>7} {:>9} {:>8} {:>7} {:>9} {:>10.1} MB {:>8.1}\n",
            reader.name,
            tally.cases,
            tally.accepted,
            tally.refused,
            tally.panics,
            tally.unnamed,
            tally.largest as f64 / (1 << 20) as f64,
            seconds
        ));
        if let Some(p) = &tally.first_panic {
            failures.push(format!("{}: panicked ({} cases), first: {p}", reader.name, tally.panics));
        }
        if let Some(m) = &tally.first_unnamed {
            failures.push(format!("{}: {} errors do not name the file, first: {m}", reader.name, tally.unnamed));
        }
        if tally.largest > ALLOCATION_BOUND {
            let input = String::from_utf8_lossy(&tally.largest_input[..tally.largest_input.len().min(400)]).into_owned();
            failures.push(format!("{}: an allocation of {} bytes (bound {ALLOCATION_BOUND}) on {input:?}", reader.name, tally.largest));
        }
    }
    println!("{table}");
    std::io::stdout().flush().unwrap();
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}
