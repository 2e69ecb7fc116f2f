//! `flychess data label`: more labelled positions from real games. Positions are sampled from a
//! PGN file (one per game, sometimes two, at a uniformly random ply, seeded; finished positions and
//! positions already taken — same placement, side to move, castling, en passant — are skipped),
//! shuffled with the seed, and labelled by Stockfish (MultiPV 8 at a fixed depth, one thread per
//! engine, one engine per worker, its hash cleared before each position so a label depends on the
//! position alone) in the JSONL format `flychess data import` reads. Lines are written in sample
//! order, so a killed run leaves a clean prefix and resumes after it. A shard (`--shard I/N`)
//! labels its range of the samples into `labels.part-I-of-N.jsonl` beside a sidecar of what it
//! belongs to; `merge` joins the parts into the `labels.jsonl` one run writes.
//!
//! The other source of positions is a dataset (`data label --dataset games-1200k`): its TRAIN rows
//! in the dataset's own (shuffled) order, so any prefix of the labels is a fair sample of them.
//! Such lines name their row (`i`) instead of repeating its FEN (the dataset holds it), which keeps
//! a million labels small enough to carry between machines; the run's sidecar names the dataset by
//! content, so labels are never joined to another dataset's rows.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};

use serde::{Deserialize, Serialize};

use flychess_fly::grading::Score;
use flychess_fly::readout::position_key;
use flychess_fly::shard::PartFile;
use flychess_fly::stats::Dice;
use flychess_fly::stockfish::{EngineOptions, Limit, Supervised};

use crate::{Error, Result};

/// A position picked from a game.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub fen: String,
    /// 1-based number of the game in the file.
    pub game: u32,
    /// Half-moves played before the position.
    pub ply: u16,
    pub legal: u8,
}

/// Samples positions from every game of `pgn` (see the module header), then shuffles them.
pub fn sample(pgn: &Path, seed: u64) -> Result<Vec<Sample>> {
    let file = std::fs::File::open(pgn).map_err(|e| Error::io(pgn, e))?;
    let mut reader = pgn_reader::Reader::new(BufReader::new(file));
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut game = 0u32;
    while let Some(positions) = reader.read_game(&mut super::game_positions::GameVisitor).map_err(|e| Error::io(pgn, e))? {
        game += 1;
        let mut dice = Dice::new(seed ^ (game as u64).wrapping_mul(0x9E37_79B9));
        let takes = if dice.chance(0.2) { 2 } else { 1 };
        for _ in 0..takes {
            let (pos, ply) = &positions.positions[dice.below(positions.positions.len())];
            let legal = pos.legal_moves().len();
            if legal == 0 || !seen.insert(position_key(pos)) {
                continue;
            }
            let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
            out.push(Sample { fen, game, ply: *ply, legal: legal.min(255) as u8 });
        }
    }
    // Shuffle (Fisher–Yates with the seed) so that the first rows make fair HOLD and VAL splits.
    let mut dice = Dice::new(seed.wrapping_add(0x5EED));
    for i in (1..out.len()).rev() {
        out.swap(i, dice.below(i + 1));
    }
    Ok(out)
}

/// The TRAIN rows of a dataset as samples, in the dataset's order (row numbers from `hold + val`).
pub fn dataset_samples(dataset: &flychess_fly::data::Dataset) -> Vec<Sample> {
    dataset.train().iter().map(|r| Sample { fen: r.fen.clone(), game: r.game, ply: r.ply, legal: r.legal }).collect()
}

/// MultiPV asked for when every legal move is labelled: more than any position's legal moves
/// (218 at most), so each position's count of legal moves is what Stockfish is asked for.
pub const EVERY_MOVE: usize = 256;

/// One labelled line, as `data import` reads it (`compact`: without the FEN, for a dataset's rows,
/// `i` then being the row's number in the dataset). Every legal move's line (`every_move`) keeps
/// each move's score alone (`cp` or `mate`, no `wdl`), which is all its win % needs and a third
/// of the bytes for a million positions kept in the repository.
pub fn line(i: usize, s: &Sample, depth: u32, lines: &[flychess_fly::stockfish::Line], compact: bool, every_move: bool) -> String {
    let moves: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| match (l.score, every_move) {
            (Score::Cp(c), true) => serde_json::json!({"uci": l.uci, "cp": c}),
            (Score::Mate(m), true) => serde_json::json!({"uci": l.uci, "mate": m}),
            (Score::Cp(c), false) => serde_json::json!({"uci": l.uci, "cp": c, "mate": null, "wdl": l.wdl}),
            (Score::Mate(m), false) => serde_json::json!({"uci": l.uci, "cp": null, "mate": m, "wdl": l.wdl}),
        })
        .collect();
    if compact {
        return serde_json::json!({"i": i, "game": s.game, "ply": s.ply, "legal": s.legal, "depth": depth, "moves": moves}).to_string();
    }
    serde_json::json!({"i": i, "fen": s.fen, "game": s.game, "ply": s.ply, "legal": s.legal, "depth": depth, "moves": moves}).to_string()
}

pub struct LabelOptions {
    /// The number of the first sample given (a shard's start), for each line's `i`.
    pub first_index: usize,
    pub depth: u32,
    pub multipv: usize,
    pub workers: usize,
    pub positions: usize,
    pub seed: u64,
    pub stockfish: PathBuf,
    /// Lines without the FEN (a dataset's rows: `i` is the row's number).
    pub compact: bool,
    /// Every legal move scored (MultiPV `EVERY_MOVE`), each line keeping the scores alone.
    pub every_move: bool,
}

/// The whole JSON lines of a labels file a job may still be writing, read as a stream: every
/// line up to the last that parses. Only the last line may be torn (a kill or a running job); a
/// damaged line before it is an error naming the file and the line, never a shorter file.
/// (the lines when `keep`, else none; how many; the bytes they take.)
pub fn whole_lines(path: &Path, keep: bool) -> Result<(Vec<String>, usize, u64)> {
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(|e| Error::io(path, e))?);
    let (mut kept, mut count, mut bytes) = (Vec::new(), 0usize, 0u64);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok((kept, count, bytes));
        }
        let whole = buf.last() == Some(&b'\n');
        let parsed = std::str::from_utf8(&buf).ok().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok());
        match parsed {
            Some(l) if whole => {
                if keep {
                    kept.push(l.trim_end_matches(['\n', '\r']).to_string());
                }
                count += 1;
                bytes += n as u64;
            }
            // The last line, torn: left out (it is labelled again).
            _ if reader.fill_buf().map_err(|e| Error::io(path, e))?.is_empty() => return Ok((kept, count, bytes)),
            _ => {
                return Err(Error::Invalid(format!(
                    "{} line {}: damaged (not a whole JSON line) before the end of the file; nothing was changed",
                    path.display(),
                    count + 1
                )));
            }
        }
    }
}

/// Labels the first `options.positions` samples into `out` (appending after the lines already
/// there), calling `progress(done, total)` after each line.
pub fn label(samples: &[Sample], out: &Path, options: &LabelOptions, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<usize> {
    let done = if out.exists() {
        // Keep the whole lines; a torn last line from a kill is cut off (damage before it is an
        // error, the file left as it was).
        let (_, good, bytes) = whole_lines(out, false)?;
        if std::fs::metadata(out).map_err(|e| Error::io(out, e))?.len() != bytes {
            std::fs::OpenOptions::new().write(true).open(out).and_then(|f| f.set_len(bytes)).map_err(|e| Error::io(out, e))?;
        }
        good
    } else {
        0
    };
    let total = options.positions.min(samples.len());
    if done >= total {
        return Ok(done);
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let file = Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(out).map_err(|e| Error::io(out, e))?);
    // Results wait here until every earlier line is written: the file stays in sample order.
    let pending: Mutex<(usize, BTreeMap<usize, String>)> = Mutex::new((done, BTreeMap::new()));
    let next = Mutex::new(done);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..options.workers.max(1) {
            s.spawn(|| {
                let mut engine =
                    Supervised::new(options.stockfish.clone(), EngineOptions { threads: 1, hash_mb: 32, ..Default::default() });
                loop {
                    let i = {
                        let mut n = next.lock().expect("lock");
                        if *n >= total || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                            break;
                        }
                        *n += 1;
                        *n - 1
                    };
                    let sample = &samples[i];
                    let want = options.multipv.min(sample.legal as usize).max(1);
                    let text =
                        match engine.analyse_fresh(&sample.fen, Limit::Depth(options.depth), want, std::time::Duration::from_secs(120)) {
                            Ok(lines) if !lines.is_empty() => {
                                line(options.first_index + i, sample, options.depth, &lines, options.compact, options.every_move)
                            }
                            Ok(_) => {
                                *failure.lock().expect("lock") = Some(Error::Invalid(format!("no analysis for {}", sample.fen)));
                                break;
                            }
                            Err(e) => {
                                *failure.lock().expect("lock") = Some(e.into());
                                break;
                            }
                        };
                    let mut guard = pending.lock().expect("lock");
                    let (written, waiting) = &mut *guard;
                    waiting.insert(i, text);
                    let mut f = file.lock().expect("lock");
                    while let Some(t) = waiting.remove(written) {
                        if let Err(e) = writeln!(f, "{t}").and_then(|_| f.flush()) {
                            *failure.lock().expect("lock") = Some(Error::io(out, e));
                            return;
                        }
                        *written += 1;
                        progress(*written, total);
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok(pending.into_inner().map(|p| p.0).unwrap_or(done))
}

/// What a labelling run's lines depend on: the games (by content), the sample's seed, the search.
/// A shard's part carries it in its sidecar so parts of different runs are never joined.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelKey {
    pub pgn_sha256: String,
    pub seed: u64,
    pub depth: u32,
    pub multipv: usize,
}

/// What a dataset's engine labels depend on: the dataset (by content), the first row labelled,
/// the search. Kept in the sidecar of every labels file of such a run, sharded or not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetLabelKey {
    pub dataset_sha256: String,
    pub first_row: usize,
    pub depth: u32,
    pub multipv: usize,
    /// Every legal move labelled (`--every-move`; absent in the sidecars of one-line runs).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_move: bool,
}

/// The complete lines of a labels file, and the bytes they take (`whole_lines`).
fn complete_lines(path: &Path) -> Result<(usize, u64)> {
    whole_lines(path, false).map(|(_, lines, bytes)| (lines, bytes))
}

/// Joins the shards' part files into the `labels.jsonl` beside them: the bytes one unsharded run
/// writes. Refused, naming the file, when a part is missing, unfinished or of another run.
/// Returns the whole file, its lines and bytes.
pub fn merge(parts: &[PathBuf]) -> Result<(PathBuf, usize, u64)> {
    merge_keyed::<LabelKey>(parts)
}

/// The parts of `whole` cut `count` ways that are there, joined (`merge_keyed`); refused, saying
/// how to make them, when there is none. `job` names the command that makes them.
pub fn merge_shards<K: Serialize + serde::de::DeserializeOwned + PartialEq>(
    whole: &Path,
    count: usize,
    job: &str,
) -> Result<(PathBuf, usize, u64)> {
    let parts: Vec<PathBuf> =
        flychess_fly::shard::Shard::all(count).map(|s| flychess_fly::shard::part_path(whole, s)).filter(|p| p.exists()).collect();
    if parts.is_empty() {
        return Err(Error::Invalid(format!("no part of {} cut {count} ways (run `{job} --shard I/{count}` first)", whole.display())));
    }
    merge_keyed::<K>(&parts)
}

/// `merge` for parts whose sidecars carry the key `K` (a PGN's labels, a curriculum's).
pub fn merge_keyed<K: Serialize + serde::de::DeserializeOwned + PartialEq>(parts: &[PathBuf]) -> Result<(PathBuf, usize, u64)> {
    let mut found = Vec::new();
    let mut bytes_of = std::collections::HashMap::new();
    for path in parts {
        let (key, part) = flychess_fly::shard::read_sidecar::<K>(path, "a labels part")?;
        let (records, bytes) = complete_lines(path)?;
        bytes_of.insert(path.clone(), bytes);
        found.push(PartFile { path: path.clone(), key, part, records });
    }
    let parts = flychess_fly::shard::check_parts(found, "positions")?;
    let whole = flychess_fly::shard::whole_file(&parts[0].path)?;
    let pieces: Vec<(PathBuf, u64)> = parts.iter().map(|p| (p.path.clone(), bytes_of[&p.path])).collect();
    let bytes = flychess_fly::shard::concatenate(&pieces, &whole)?;
    Ok((whole, parts[0].part.total, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A torn last line is left out (a kill, a running job); a damaged line before the end is an
    /// error naming the line, and a resumed labelling refuses it with the file unchanged (issue
    /// 71: damage shortened the data instead of failing).
    #[test]
    fn only_the_last_line_may_be_torn_and_damage_before_it_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("labels.jsonl");
        std::fs::write(&path, "{\"i\":0}\n{\"i\":1}\n{\"i\":2").unwrap();
        let (lines, count, bytes) = whole_lines(&path, true).unwrap();
        assert_eq!((lines, count, bytes), (vec!["{\"i\":0}".to_string(), "{\"i\":1}".to_string()], 2, 16));
        let damaged = "{\"i\":0}\ngarbage\n{\"i\":2}\n";
        std::fs::write(&path, damaged).unwrap();
        let e = whole_lines(&path, false).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("labels.jsonl"), "{e}");
        let options = LabelOptions {
            first_index: 0,
            depth: 1,
            multipv: 1,
            workers: 1,
            positions: 5,
            seed: 0,
            stockfish: "/nonexistent/stockfish".into(),
            compact: true,
            every_move: false,
        };
        assert!(label(&[], &path, &options, &|_, _| {}).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged, "nothing lost");
        // A torn tail is cut off on resume (nothing left to label here: the samples are empty).
        std::fs::write(&path, "{\"i\":0}\n{\"i\":1").unwrap();
        assert_eq!(label(&[], &path, &options, &|_, _| {}).unwrap(), 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"i\":0}\n");
    }
}
