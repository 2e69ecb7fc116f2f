//! `flychess data games`: training positions from real games, with free labels. Every position of
//! a game, before each move, is a row labelled with the move the master played and the game's
//! result from the mover's side (`data::Labels::MasterMove`).
//!
//! What stays out, so that held-out figures stay held out:
//! - every game a HOLD or VAL row of the shipped dataset came from (its `game` field is the game's
//!   1-based number in the PGN; applied only when the PGN is the one the shipped rows came from,
//!   recognised by the sha256 of its text), and every position equal to a HOLD or VAL position
//!   (same placement, side to move, castling, en passant), from any game;
//! - the **human test**: 4,096 games that no shipped row came from, one position each (at a
//!   seeded random ply), become the new dataset's HOLD; 2,048 more the same way its VAL (to choose
//!   the mix of labels on). No other position of those games is trained on, nor any position equal
//!   to one of theirs. The same seed gives the same human test whatever else is asked.
//! - games without a result (`*`) and games whose moves do not parse are skipped and counted.
//!
//! TRAIN is every remaining position, or a seeded sample of N of them; its rows are ordered by a
//! seeded hash of (game, ply), which shuffles them and makes the sample the same whichever way the
//! work is split. Positions that recur (the opening moves) are kept as often as they were played:
//! the master's choices there are the distribution to learn.
//!
//! The PGN is streamed twice (plain or zstd-compressed, never loaded whole): pass 1 finds what is
//! held out and how far the sample reaches, pass 2 writes the rows. Pass 2 keeps each block of
//! 8,192 games as a part file beside the output, and the plan of pass 1 with them; a killed run
//! resumes from the last whole block. The output is written atomically at the end and the parts
//! removed.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Outcome, Position};

use flychess_fly::data::{Dataset, Labels, Meta, MoveCode, Result3, Row, master_label};
use flychess_fly::readout::position_key;

use super::during;
use crate::{Error, Result};

/// Games in the human test (the new dataset's HOLD) and in its VAL, one position each.
pub const HUMAN_TEST_GAMES: usize = 4_096;
pub const HUMAN_VAL_GAMES: usize = 2_048;
/// Games per part file of pass 2.
const BLOCK_GAMES: u32 = 8_192;
/// The sha256 of `book_1.02.pgn` (uncompressed): the games the shipped rows were sampled from.
pub const BOOK_SHA256: &str = "33f5d31528f3c93c18adffa7a222b9b9d6097c2ae231147de2048acff5e06583";
/// Bumped when the rules above change (part files of another version are not reused).
const RULES: u32 = 1;

/// One game as read: its positions from the start (with the ply before each), the moves played
/// (as far as they parse) and its result.
pub struct PlayedGame {
    pub positions: Vec<(Chess, u16)>,
    pub moves: Vec<Move>,
    /// A move did not parse (the positions and moves stop before it).
    pub broken: bool,
    pub outcome: Option<KnownOutcome>,
}

/// The pgn-reader visitor of `PlayedGame`s (also `stockfish_labels::sample`'s).
pub struct GameVisitor;

impl pgn_reader::Visitor for GameVisitor {
    type Tags = Option<Chess>;
    type Movetext = PlayedGame;
    type Output = PlayedGame;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(None)
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: pgn_reader::RawTag<'_>) -> ControlFlow<Self::Output> {
        if name.eq_ignore_ascii_case(b"FEN") {
            *tags = value.decode_utf8().ok().and_then(|f| f.parse::<Fen>().ok()).and_then(|f| f.into_position(CastlingMode::Standard).ok());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Continue(PlayedGame {
            positions: vec![(tags.unwrap_or_default(), 0)],
            moves: Vec::new(),
            broken: false,
            outcome: None,
        })
    }

    fn san(&mut self, g: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if g.broken {
            return ControlFlow::Continue(());
        }
        let (last, ply) = g.positions.last().expect("a start").clone();
        match (san_plus.san.to_move(&last), ply.checked_add(1)) {
            (Ok(mv), Some(next_ply)) => {
                let mut next = last;
                next.play_unchecked(mv);
                g.positions.push((next, next_ply));
                g.moves.push(mv);
            }
            _ => g.broken = true,
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _g: &mut Self::Movetext) -> ControlFlow<Self::Output, pgn_reader::Skip> {
        ControlFlow::Continue(pgn_reader::Skip(true))
    }

    fn outcome(&mut self, g: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        if let Outcome::Known(k) = outcome {
            g.outcome = Some(k);
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, g: Self::Movetext) -> Self::Output {
        g
    }
}

/// Counts the bytes read through it (the compressed bytes, for the progress bar) and hashes them.
struct Counted<R> {
    inner: R,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Hashes the text as it is read (to recognise the book).
struct Hashed<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

type Progress<'a> = &'a (dyn Fn(&str, u64, u64) + Sync);

/// The PGN's text as a stream (zstd when the name ends in .zst), with a counter of the file's
/// bytes read and the file's size.
fn open(pgn: &Path) -> Result<(Box<dyn Read>, std::sync::Arc<std::sync::atomic::AtomicU64>, u64)> {
    let file = std::fs::File::open(pgn).map_err(during(format!("opening {}", pgn.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = BufReader::new(Counted { inner: file, read: read.clone() });
    let text: Box<dyn Read> = if pgn.extension().is_some_and(|e| e == "zst") {
        Box::new(zstd::stream::read::Decoder::with_buffer(counted).map_err(during(format!("{}: not zstd", pgn.display())))?)
    } else {
        Box::new(counted)
    };
    Ok((text, read, size))
}

/// The games of `pgn` numbered in `wanted` (1-based, as a row's `game`), read in one pass that
/// stops once all are found. A number past the file's end is simply missing from the answer.
pub fn games_numbered(pgn: &Path, wanted: &std::collections::BTreeSet<u32>) -> Result<std::collections::BTreeMap<u32, PlayedGame>> {
    let (text, _, _) = open(pgn)?;
    let mut reader = pgn_reader::Reader::new(BufReader::new(text));
    let mut found = std::collections::BTreeMap::new();
    let mut number = 0u32;
    let last = wanted.last().copied().unwrap_or(0);
    while number < last {
        let Some(game) = reader.read_game(&mut GameVisitor).map_err(|e| Error::io(pgn, e))? else { break };
        number += 1;
        if wanted.contains(&number) {
            found.insert(number, game);
        }
    }
    Ok(found)
}

/// A seeded 64-bit hash of a few numbers (splitmix64 over each in turn).
fn mix(seed: u64, parts: &[u64]) -> u64 {
    let mut h = seed ^ 0x6A09_E667_F3BC_C908;
    for &p in parts {
        h = h.wrapping_add(p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D1_049B_B133_111E);
        h = z ^ (z >> 31);
    }
    h
}

const HUMAN: u64 = 1;
const PICK: u64 = 2;

/// The rank of a training position in the shuffled order.
fn train_rank(seed: u64, game: u32, ply: u16) -> u64 {
    mix(seed, &[game as u64, ply as u64])
}

/// What `positions_from_games` did, for the user and the note.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GamesReport {
    pub games: u32,
    pub broken_games: u32,
    pub unfinished_games: u32,
    /// Games a shipped HOLD or VAL row came from (left out whole).
    pub held_out_games: u32,
    /// Whether the PGN is the book the shipped rows came from (its games left out by number).
    pub same_games_as_shipped: bool,
    /// Shipped rows found at their game and ply in this PGN, and not (all must be found in the
    /// book, or the run stops).
    pub shipped_rows_found: usize,
    pub shipped_rows_not_found: usize,
    pub human_test_positions: usize,
    pub human_val_positions: usize,
    /// Positions of the remaining games (before the sample).
    pub train_candidates: usize,
    /// Of those, left out for equalling a HOLD/VAL or human-test position.
    pub equal_to_held_out: usize,
    pub train_positions: usize,
}

/// The options that decide the rows (and key the part files).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GamesOptions {
    /// A seeded sample of this many TRAIN positions (None: all of them).
    pub positions: Option<usize>,
    pub seed: u64,
    /// Games in the human test and in its VAL (`HUMAN_TEST_GAMES`, `HUMAN_VAL_GAMES`).
    pub human_games: usize,
    pub val_games: usize,
}

impl GamesOptions {
    pub fn new(positions: Option<usize>, seed: u64) -> GamesOptions {
        GamesOptions { positions, seed, human_games: HUMAN_TEST_GAMES, val_games: HUMAN_VAL_GAMES }
    }
}

/// What pass 1 decided; kept beside the parts so that pass 2 resumes with it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Plan {
    key: String,
    /// Game → ply of its one position, for the human test and its VAL.
    human: Vec<(u32, u16)>,
    val: Vec<(u32, u16)>,
    /// TRAIN positions ranked at or below this are kept.
    threshold: u64,
    /// Games left out whole (the shipped HOLD/VAL games when the PGN is the book).
    held_games: Vec<u32>,
    /// Keys of every held-out position (shipped HOLD/VAL and the human test's).
    held_keys: Vec<u64>,
    report: GamesReport,
}

/// Where the parts of a run writing `out` live.
pub fn parts_dir(out: &Path) -> PathBuf {
    let mut name = out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".parts");
    out.with_file_name(name)
}

/// Makes the dataset (see the module header) from `pgn` into `out`, the shipped dataset's HOLD and
/// VAL held out. `progress(pass, bytes read, file size)`.
pub fn positions_from_games(pgn: &Path, shipped: &Dataset, options: &GamesOptions, out: &Path, progress: Progress) -> Result<GamesReport> {
    positions_from_games_of(pgn, BOOK_SHA256, shipped, options, out, progress)
}

/// `positions_from_games` where `book` is the sha256 of the PGN text the shipped rows' game
/// numbers refer to.
fn positions_from_games_of(
    pgn: &Path,
    book: &str,
    shipped: &Dataset,
    options: &GamesOptions,
    out: &Path,
    progress: Progress,
) -> Result<GamesReport> {
    let pgn_bytes = std::fs::metadata(pgn).map_err(during(format!("opening {}", pgn.display())))?.len();
    let key = {
        let mut d = Sha256::new();
        d.update(serde_json::to_vec(&(RULES, options, shipped.content_hash(), pgn_bytes)).expect("plain data"));
        flychess_brain::files::hex(&d.finalize())[..16].to_string()
    };
    let parts = parts_dir(out);
    let plan_path = parts.join("plan.json");
    let plan = match std::fs::read(&plan_path).ok().and_then(|b| serde_json::from_slice::<Plan>(&b).ok()) {
        Some(p) if p.key == key => p,
        _ => {
            if parts.exists() {
                std::fs::remove_dir_all(&parts).map_err(during(format!("clearing {}", parts.display())))?;
            }
            let plan = plan(pgn, book, shipped, options, key, progress)?;
            flychess_brain::files::write_atomically(&plan_path, &serde_json::to_vec(&plan).expect("plain data"))?;
            plan
        }
    };
    write_parts(pgn, &plan, options, &parts, progress)?;
    let dataset = merge(&plan, options, &parts, pgn)?;
    dataset.save(out)?;
    std::fs::remove_dir_all(&parts).map_err(during(format!("removing {}", parts.display())))?;
    Ok(plan.report)
}

/// Reads every game of `pgn` in turn: `each(number, game)`. A read error (not a bad move: those
/// make a broken game) names the file.
fn each_game(pgn: &Path, pass: &str, progress: Progress, mut each: impl FnMut(u32, PlayedGame) -> Result<()>) -> Result<String> {
    let (text, read, size) = open(pgn)?;
    let hashed = Hashed { inner: text, hash: Sha256::new() };
    let mut reader = pgn_reader::Reader::new(hashed);
    let mut game = 0u32;
    loop {
        let next = reader.read_game(&mut GameVisitor).map_err(during(format!("{}: after game {game}", pgn.display())))?;
        let Some(g) = next else { break };
        game = game.checked_add(1).ok_or_else(|| Error::Invalid(format!("{}: more games than fit a u32", pgn.display())))?;
        each(game, g)?;
        if game.is_multiple_of(1024) {
            progress(pass, read.load(std::sync::atomic::Ordering::Relaxed), size);
        }
    }
    progress(pass, size, size);
    // The reader may stop before the end of its buffer: hash what is left.
    let mut hashed = reader.into_inner();
    std::io::copy(&mut hashed, &mut std::io::sink()).map_err(during(format!("reading {}", pgn.display())))?;
    Ok(flychess_brain::files::hex(&hashed.hash.finalize()))
}

/// Whether a game gives rows at all (a result, every move parsed, at least one move).
fn usable(g: &PlayedGame) -> bool {
    g.outcome.is_some() && !g.broken && !g.moves.is_empty()
}

/// Pass 1: the held-out games and positions, the human test, the sample's threshold.
fn plan(pgn: &Path, book: &str, shipped: &Dataset, options: &GamesOptions, key: String, progress: Progress) -> Result<Plan> {
    let held_rows = &shipped.rows[..(shipped.meta.hold + shipped.meta.val).min(shipped.rows.len())];
    let shipped_held_games: HashSet<u32> = held_rows.iter().map(|r| r.game).collect();
    let shipped_games: HashSet<u32> = shipped.rows.iter().map(|r| r.game).collect();
    let mut held_keys: HashSet<u64> = HashSet::new();
    for r in held_rows {
        held_keys.insert(position_key(&flychess_brain::chess::position_from_fen(&r.fen)?));
    }
    // Where each shipped row says it stands (game → ply, key), to check the numbering.
    let mut shipped_at: HashMap<u32, Vec<(u16, u64)>> = HashMap::new();
    for r in &shipped.rows {
        shipped_at.entry(r.game).or_default().push((r.ply, position_key(&flychess_brain::chess::position_from_fen(&r.fen)?)));
    }
    let mut report = GamesReport::default();
    // Every candidate TRAIN position (its rank and key) and where each game's run starts.
    let mut ranks: Vec<(u64, u64)> = Vec::new();
    let mut runs: Vec<(u32, usize)> = Vec::new();
    // Games no shipped row came from: (hash, game, picked ply, picked key).
    let mut fresh: Vec<(u64, u32, u16, u64)> = Vec::new();
    let sha = each_game(pgn, "pass 1 of 2: what is held out", progress, |game, g| {
        report.games = game;
        for &(ply, k) in shipped_at.get(&game).map(Vec::as_slice).unwrap_or_default() {
            let here = g.positions.iter().find(|p| p.1 == ply).map(|p| position_key(&p.0));
            if here == Some(k) {
                report.shipped_rows_found += 1;
            } else {
                report.shipped_rows_not_found += 1;
            }
        }
        if g.broken {
            report.broken_games += 1;
            return Ok(());
        }
        if !usable(&g) {
            report.unfinished_games += 1;
            return Ok(());
        }
        if shipped_held_games.contains(&game) {
            report.held_out_games += 1;
            return Ok(());
        }
        runs.push((game, ranks.len()));
        let mut open: Vec<(u16, u64)> = Vec::new();
        for (pos, ply) in &g.positions[..g.moves.len()] {
            let k = position_key(pos);
            ranks.push((train_rank(options.seed, game, *ply), k));
            if !held_keys.contains(&k) {
                open.push((*ply, k));
            }
        }
        if !shipped_games.contains(&game) && !open.is_empty() {
            let (ply, k) = open[(mix(options.seed, &[PICK, game as u64]) % open.len() as u64) as usize];
            fresh.push((mix(options.seed, &[HUMAN, game as u64]), game, ply, k));
        }
        Ok(())
    })?;
    report.same_games_as_shipped = sha == book;
    if report.same_games_as_shipped && report.shipped_rows_not_found > 0 {
        return Err(Error::Invalid(format!(
            "{}: {} of the shipped rows are not where their game and ply say in this book: the games are numbered otherwise, and \
             held-out games cannot be left out by number",
            pgn.display(),
            report.shipped_rows_not_found
        )));
    }
    if !report.same_games_as_shipped {
        // Game numbers of another PGN say nothing about the shipped rows: only equal positions
        // are left out, and every game may serve the human test.
        report.held_out_games = 0;
    }
    fresh.sort_unstable();
    let (nh, nv) = (options.human_games, options.val_games);
    if fresh.len() < nh + nv {
        return Err(Error::Invalid(format!(
            "{}: {} games no shipped row came from; the human test and its VAL need {}",
            pgn.display(),
            fresh.len(),
            nh + nv
        )));
    }
    let human: Vec<(u32, u16)> = fresh[..nh].iter().map(|f| (f.1, f.2)).collect();
    let val: Vec<(u32, u16)> = fresh[nh..nh + nv].iter().map(|f| (f.1, f.2)).collect();
    for f in &fresh[..nh + nv] {
        held_keys.insert(f.3);
    }
    let mut held_games: HashSet<u32> = human.iter().chain(&val).map(|h| h.0).collect();
    if report.same_games_as_shipped {
        held_games.extend(&shipped_held_games);
    }
    // The candidates: every position of the other games not equal to a held-out one.
    let mut kept: Vec<u64> = Vec::new();
    for (i, &(game, start)) in runs.iter().enumerate() {
        if held_games.contains(&game) {
            continue;
        }
        let end = runs.get(i + 1).map_or(ranks.len(), |r| r.1);
        for &(rank, k) in &ranks[start..end] {
            report.train_candidates += 1;
            if held_keys.contains(&k) {
                report.equal_to_held_out += 1;
            } else {
                kept.push(rank);
            }
        }
    }
    drop(ranks);
    let threshold = match options.positions {
        Some(0) => 0,
        Some(n) if n < kept.len() => *kept.select_nth_unstable(n - 1).1,
        _ => u64::MAX,
    };
    report.train_positions = match options.positions {
        Some(0) => 0,
        Some(n) => n.min(kept.len()),
        None => kept.len(),
    };
    report.human_test_positions = human.len();
    report.human_val_positions = val.len();
    let mut held_games: Vec<u32> = held_games.into_iter().collect();
    held_games.sort_unstable();
    let mut held_keys: Vec<u64> = held_keys.into_iter().collect();
    held_keys.sort_unstable();
    Ok(Plan { key, human, val, threshold, held_games, held_keys, report })
}

/// The rows one game gives under the plan.
fn rows_of(
    game: u32,
    g: &PlayedGame,
    plan: &Plan,
    chosen: &HashMap<u32, u16>,
    held_games: &HashSet<u32>,
    held_keys: &HashSet<u64>,
    seed: u64,
) -> Vec<Row> {
    let outcome = g.outcome.expect("usable games only");
    let row = |i: usize| -> Row {
        let (pos, ply) = &g.positions[i];
        let mover: Color = pos.turn();
        let result = match outcome {
            KnownOutcome::Draw => Result3::Drawn,
            KnownOutcome::Decisive { winner } if winner == mover => Result3::Won,
            KnownOutcome::Decisive { .. } => Result3::Lost,
        };
        let played = MoveCode::parse_uci(&flychess_brain::chess::uci(&g.moves[i])).expect("a legal move's UCI");
        Row {
            fen: Fen::from_position(pos, EnPassantMode::Legal).to_string(),
            game,
            ply: *ply,
            legal: pos.legal_moves().len().min(255) as u8,
            moves: vec![master_label(played, result)],
        }
    };
    if let Some(&ply) = chosen.get(&game) {
        return g.positions[..g.moves.len()].iter().position(|p| p.1 == ply).map(row).into_iter().collect();
    }
    if held_games.contains(&game) {
        return Vec::new();
    }
    (0..g.moves.len())
        .filter(|&i| {
            let (pos, ply) = &g.positions[i];
            train_rank(seed, game, *ply) <= plan.threshold && !held_keys.contains(&position_key(pos))
        })
        .map(row)
        .collect()
}

fn part_path(parts: &Path, block: u32) -> PathBuf {
    parts.join(format!("block-{block:05}.flyd"))
}

/// Pass 2: each block of games not yet written becomes a part file.
fn write_parts(pgn: &Path, plan: &Plan, options: &GamesOptions, parts: &Path, progress: Progress) -> Result<()> {
    let chosen: HashMap<u32, u16> = plan.human.iter().chain(&plan.val).copied().collect();
    let held_games: HashSet<u32> = plan.held_games.iter().copied().collect();
    let held_keys: HashSet<u64> = plan.held_keys.iter().copied().collect();
    let mut block_rows: Vec<Row> = Vec::new();
    let done = |block: u32| part_path(parts, block).exists();
    let save = |block: u32, rows: Vec<Row>| -> Result<()> {
        let meta = Meta {
            source: format!("block {block} of {}", pgn.display()),
            labeller: String::new(),
            rows: rows.len(),
            hold: 0,
            val: 0,
            labels: Labels::MasterMove,
        };
        Dataset { meta, rows }.save(&part_path(parts, block))?;
        Ok(())
    };
    let mut last_block = 0;
    each_game(pgn, "pass 2 of 2: the rows", progress, |game, g| {
        let block = (game - 1) / BLOCK_GAMES;
        if block != last_block {
            if !done(last_block) {
                save(last_block, std::mem::take(&mut block_rows))?;
            }
            block_rows.clear();
            last_block = block;
        }
        if !done(block) && usable(&g) {
            block_rows.extend(rows_of(game, &g, plan, &chosen, &held_games, &held_keys, options.seed));
        }
        Ok(())
    })?;
    if !done(last_block) {
        save(last_block, block_rows)?;
    }
    Ok(())
}

/// Joins the parts: the human test (HOLD), its VAL, then TRAIN in rank order.
fn merge(plan: &Plan, options: &GamesOptions, parts: &Path, pgn: &Path) -> Result<Dataset> {
    let human_at: HashMap<u32, usize> = plan.human.iter().enumerate().map(|(i, h)| (h.0, i)).collect();
    let val_at: HashMap<u32, usize> = plan.val.iter().enumerate().map(|(i, h)| (h.0, i)).collect();
    let mut human: Vec<Option<Row>> = vec![None; plan.human.len()];
    let mut val: Vec<Option<Row>> = vec![None; plan.val.len()];
    let mut train: Vec<(u64, Row)> = Vec::with_capacity(plan.report.train_positions);
    let blocks = plan.report.games.div_ceil(BLOCK_GAMES).max(1);
    for block in 0..blocks {
        let path = part_path(parts, block);
        let part = Dataset::load(&path).map_err(during(format!("reading part {}", path.display())))?;
        for r in part.rows {
            if let Some(&i) = human_at.get(&r.game) {
                human[i] = Some(r);
            } else if let Some(&i) = val_at.get(&r.game) {
                val[i] = Some(r);
            } else {
                train.push((train_rank(options.seed, r.game, r.ply), r));
            }
        }
    }
    train.sort_unstable_by_key(|t| (t.0, t.1.game, t.1.ply));
    let missing = human.iter().chain(&val).filter(|r| r.is_none()).count();
    if missing > 0 {
        return Err(Error::Invalid(format!(
            "{}: {missing} held-out positions were not found on the second pass (was the file changed?)",
            pgn.display()
        )));
    }
    let (hold, valn) = (human.len(), val.len());
    let rows: Vec<Row> = human.into_iter().chain(val).flatten().chain(train.into_iter().map(|t| t.1)).collect();
    let name = pgn.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let meta = Meta {
        source: format!(
            "{name}: every position before a move{}, seed {}; HOLD: the human test ({hold} games no shipped row came from, one position each), VAL {valn} more",
            options.positions.map(|n| format!(" (a sample of {n})")).unwrap_or_default(),
            options.seed
        ),
        labeller: "the move the master played and the game's result (mover's side)".into(),
        rows: rows.len(),
        hold,
        val: valn,
        labels: Labels::MasterMove,
    };
    Ok(Dataset { meta, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::grading::Score;

    /// Five openings played out a little, a result each, numbered games; game 13 has an illegal
    /// move and game 14 no result.
    fn pgn_text() -> String {
        let lines = [
            ("e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6", "1-0"),
            ("d4 d5 c4 e6 Nc3 Nf6 Bg5 Be7", "1/2-1/2"),
            ("e4 c5 Nf3 d6 d4 cxd4 Nxd4 Nf6", "0-1"),
            ("c4 e5 Nc3 Nf6 g3 d5 cxd5 Nxd5", "1-0"),
            ("Nf3 d5 g3 Nf6 Bg2 e6 O-O Be7", "0-1"),
        ];
        let mut out = String::new();
        for g in 1..=40u32 {
            let (moves, result) = lines[(g as usize * 7) % lines.len()];
            // Each game its own tail so positions differ across games too.
            let tail = ["h3", "a3", "h4", "b4", "b3", "g4"][(g as usize) % 6];
            let moves = if g == 13 { format!("{moves} Ke5") } else { format!("{moves} {tail}") };
            let result = if g == 14 { "*" } else { result };
            out.push_str(&format!("[Event \"t\"]\n[Result \"{result}\"]\n\n{}{result}\n\n", numbered(&moves)));
        }
        out
    }

    fn numbered(moves: &str) -> String {
        moves
            .split_whitespace()
            .enumerate()
            .map(|(i, m)| if i % 2 == 0 { format!("{}. {m} ", i / 2 + 1) } else { format!("{m} ") })
            .collect()
    }

    fn fen_at(text: &str, game: u32, ply: u16) -> String {
        let mut reader = pgn_reader::Reader::new(text.as_bytes());
        let mut n = 0;
        while let Some(g) = reader.read_game(&mut GameVisitor).unwrap() {
            n += 1;
            if n == game {
                let pos = &g.positions.iter().find(|p| p.1 == ply).unwrap().0;
                return Fen::from_position(pos, EnPassantMode::Legal).to_string();
            }
        }
        panic!("no game {game}")
    }

    /// A shipped dataset whose HOLD/VAL rows came from games 3, 5 and 7, TRAIN from game 9.
    fn shipped(text: &str) -> Dataset {
        let row = |game, ply| Row { fen: fen_at(text, game, ply), game, ply, legal: 20, moves: vec![] };
        let rows = vec![row(3, 2), row(5, 4), row(7, 1), row(9, 3)];
        Dataset { meta: Meta { source: "t".into(), labeller: "t".into(), rows: 4, hold: 2, val: 1, labels: Labels::Stockfish }, rows }
    }

    fn key_of(fen: &str) -> u64 {
        position_key(&flychess_brain::chess::position_from_fen(fen).unwrap())
    }

    fn run(dir: &Path, text: &str, positions: Option<usize>, out: &str) -> (GamesReport, Dataset) {
        let pgn = dir.join("games.pgn");
        std::fs::write(&pgn, text).unwrap();
        let sha = flychess_brain::files::hex(&Sha256::digest(text.as_bytes()));
        let options = GamesOptions { positions, seed: 7, human_games: 3, val_games: 2 };
        let out = dir.join(out);
        let report = positions_from_games_of(&pgn, &sha, &shipped(text), &options, &out, &|_, _, _| {}).unwrap();
        (report, Dataset::load(&out).unwrap())
    }

    #[test]
    fn held_out_games_and_positions_stay_out_and_the_human_test_is_its_own() {
        let text = pgn_text();
        let dir = tempfile::tempdir().unwrap();
        let (report, d) = run(dir.path(), &text, Some(60), "a.flyd");
        assert_eq!((report.games, report.broken_games, report.unfinished_games, report.held_out_games), (40, 1, 1, 3));
        assert!(report.same_games_as_shipped);
        assert_eq!(report.shipped_rows_found, 4);
        assert_eq!((d.meta.hold, d.meta.val, d.meta.labels), (3, 2, Labels::MasterMove));
        assert_eq!(d.train().len(), 60);
        let ours = shipped(&text);
        let mut held_keys: HashSet<u64> = ours.rows[..3].iter().map(|r| key_of(&r.fen)).collect();
        let human_games: HashSet<u32> = d.rows[..5].iter().map(|r| r.game).collect();
        assert_eq!(human_games.len(), 5, "one position a game");
        held_keys.extend(d.rows[..5].iter().map(|r| key_of(&r.fen)));
        for r in &d.rows[..5] {
            assert!(![3, 5, 7, 9, 13, 14].contains(&r.game), "the human test comes from games no shipped row came from: {}", r.game);
        }
        for r in d.train() {
            assert!(![3, 5, 7, 13, 14].contains(&r.game), "a held-out, broken or unfinished game gave a row: {}", r.game);
            assert!(!human_games.contains(&r.game), "a human-test game gave a TRAIN row");
            assert!(!held_keys.contains(&key_of(&r.fen)), "a TRAIN position equals a held-out one");
        }
        // The label is the move played, its result from the mover's side.
        for r in &d.rows {
            let pos = flychess_brain::chess::position_from_fen(&r.fen).unwrap();
            let m = &r.moves[0];
            assert!(pos.legal_moves().iter().any(|l| flychess_brain::chess::uci(l) == m.mv.uci()));
            let line = pgn_text_result(&text, r.game);
            let white = pos.turn() == Color::White;
            let want = match (line, white) {
                ("1/2-1/2", _) => (Score::Cp(0), [0, 1000, 0]),
                ("1-0", true) | ("0-1", false) => (Score::Mate(1), [1000, 0, 0]),
                _ => (Score::Mate(-1), [0, 0, 1000]),
            };
            assert_eq!((m.score, m.wdl), (want.0, Some(want.1)), "game {} ply {}", r.game, r.ply);
        }
        // A smaller sample: the same human test and a subset of the same TRAIN rows, in order.
        let (_, small) = run(dir.path(), &text, Some(20), "b.flyd");
        assert_eq!(small.rows[..5], d.rows[..5]);
        assert_eq!(small.train()[..], d.train()[..20]);
        // Another PGN (its text differs): game numbers say nothing, only equal positions stay out.
        let other = format!("{text}\n");
        let pgn = dir.path().join("other.pgn");
        std::fs::write(&pgn, &other).unwrap();
        let options = GamesOptions { positions: None, seed: 7, human_games: 3, val_games: 2 };
        let r = positions_from_games_of(&pgn, "not this", &shipped(&text), &options, &dir.path().join("c.flyd"), &|_, _, _| {}).unwrap();
        assert!(!r.same_games_as_shipped && r.held_out_games == 0);
    }

    fn pgn_text_result(text: &str, game: u32) -> &'static str {
        let block = text.split("[Event").nth(game as usize).unwrap();
        ["1-0", "0-1", "1/2-1/2", "*"].into_iter().find(|r| block.contains(&format!("[Result \"{r}\"]"))).unwrap()
    }

    #[test]
    fn a_killed_run_resumes_from_its_parts_and_gives_the_same_file() {
        let text = pgn_text();
        let dir = tempfile::tempdir().unwrap();
        let (_, whole) = run(dir.path(), &text, Some(30), "whole.flyd");
        // A run killed after pass 2 wrote its part: the plan and the part are there, no output.
        let pgn = dir.path().join("games.pgn");
        let sha = flychess_brain::files::hex(&Sha256::digest(text.as_bytes()));
        let options = GamesOptions { positions: Some(30), seed: 7, human_games: 3, val_games: 2 };
        let out = dir.path().join("resumed.flyd");
        let parts = parts_dir(&out);
        let key = {
            let mut d = Sha256::new();
            d.update(serde_json::to_vec(&(RULES, &options, shipped(&text).content_hash(), text.len() as u64)).unwrap());
            flychess_brain::files::hex(&d.finalize())[..16].to_string()
        };
        let p = plan(&pgn, &sha, &shipped(&text), &options, key, &|_, _, _| {}).unwrap();
        flychess_brain::files::write_atomically(&parts.join("plan.json"), &serde_json::to_vec(&p).unwrap()).unwrap();
        write_parts(&pgn, &p, &options, &parts, &|_, _, _| {}).unwrap();
        let part = part_path(&parts, 0);
        let before = std::fs::metadata(&part).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let passes = std::sync::Mutex::new(Vec::new());
        positions_from_games_of(&pgn, &sha, &shipped(&text), &options, &out, &|pass, _, _| passes.lock().unwrap().push(pass.to_string()))
            .unwrap();
        assert!(passes.lock().unwrap().iter().all(|p| !p.starts_with("pass 1")), "the plan was made again");
        assert_eq!(Dataset::load(&out).unwrap(), whole);
        assert!(!parts.exists(), "the parts are removed once the file is written");
        let _ = before;
        // A plan of other options is not used: the run starts over and is right.
        let stale = Plan { key: "other".into(), threshold: 0, ..p };
        flychess_brain::files::write_atomically(&parts.join("plan.json"), &serde_json::to_vec(&stale).unwrap()).unwrap();
        std::fs::remove_file(&out).unwrap();
        positions_from_games_of(&pgn, &sha, &shipped(&text), &options, &out, &|_, _, _| {}).unwrap();
        assert_eq!(Dataset::load(&out).unwrap(), whole);
    }

    #[test]
    fn the_book_gives_the_shipped_human_test_and_finds_every_shipped_row() {
        let book = book();
        let dir = tempfile::tempdir().unwrap();
        let ours = Dataset::load(&flychess_fly::data::shipped_path()).unwrap();
        let out = dir.path().join("human.flyd");
        let report = positions_from_games(&book, &ours, &GamesOptions::new(Some(0), 1), &out, &|_, _, _| {}).unwrap();
        assert!(report.same_games_as_shipped);
        assert_eq!((report.shipped_rows_found, report.shipped_rows_not_found), (ours.rows.len(), 0));
        let made = Dataset::load(&out).unwrap();
        let ship = Dataset::load(&flychess_fly::data::human_test_path()).unwrap();
        assert_eq!(made.content_hash(), ship.content_hash(), "the shipped human test is what the book gives");
        assert_eq!(
            (ship.meta.hold, ship.meta.val, ship.rows.len()),
            (HUMAN_TEST_GAMES, HUMAN_VAL_GAMES, HUMAN_TEST_GAMES + HUMAN_VAL_GAMES)
        );
    }

    pub fn book() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sim/brain/data/games/book_1.02.pgn.zst")
    }
}
