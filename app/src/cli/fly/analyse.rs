//! `flychess analyse`: a fly's view of positions, one FEN or a file of them streamed a batch at a
//! time: every legal move with its probability (UCI and SAN), the value and the choice, and with
//! `--imagination` the move one-move imagination plays with the value seen after each move; as
//! text or JSON (JSON lines for a file), a line that is no position reported in its place.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use shakmaty::Position;
use shakmaty::san::San;

use flychess_arena::play::think_and_look_ahead;
use flychess_brain::brain::Brain;
use flychess_brain::chess::{planes, position_from_fen};
use flychess_brain::files::{BoundedLines, Line, quote};
use flychess_fly::fly::{self, Fly};
use flychess_fly::readout::{Readout, choose, policy, think_features};

use crate::cli::options::WhichBrain;

// The arguments of `flychess analyse` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct AnalyseArgs {
    #[arg(long)]
    pub fly: String,
    #[arg(long)]
    pub fen: Option<String>,
    /// A file with one FEN per line, streamed in batches of 32: one JSON line per position
    /// as it goes with --json; a bad line is reported with its number and the rest go on.
    #[arg(long)]
    pub fens: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// Also the move one-move imagination plays, with weight W (default: the fly's tuned
    /// weight), and the value the fly sees after each move.
    #[arg(long, num_args = 0..=1, value_name = "W")]
    pub imagination: Option<Option<f32>>,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Where `analyse` reads its positions: one FEN, or a file of one FEN per line.
enum Positions {
    One(String),
    File(PathBuf),
}

impl TryFrom<&AnalyseArgs> for Positions {
    type Error = anyhow::Error;

    /// `--fen FEN` or `--fens FILE`, one of them.
    fn try_from(args: &AnalyseArgs) -> Result<Positions> {
        match (&args.fen, &args.fens) {
            (Some(f), None) => Ok(Positions::One(f.clone())),
            (None, Some(p)) => Ok(Positions::File(p.clone())),
            _ => Err(anyhow!("give one of --fen FEN or --fens FILE")),
        }
    }
}

/// Positions per think in `analyse`: memory stays this many boards' worth, whatever the file.
const ANALYSE_BATCH: usize = 32;
/// The longest line `analyse --fens` reads as a FEN (a FEN is under 100 characters).
const MAX_FEN_LINE: usize = 512;

/// The lines `analyse` reads, and whether they are one FEN given on the command line.
type Lines = (Box<dyn Iterator<Item = std::io::Result<Line>>>, bool);

/// Each line's position, or what is wrong with the line: answered in the file's order, an error
/// in its place among the results.
type Entry = (usize, String, std::result::Result<shakmaty::Chess, String>);

/// Runs `flychess analyse`: the fly's view of positions. A file is streamed ANALYSE_BATCH
/// positions at a time, one JSON value per position as it goes (JSON lines); a line that is not a
/// FEN is reported with its number and the rest go on.
pub fn run(args: &AnalyseArgs, data: &Path) -> Result<()> {
    let positions = Positions::try_from(args)?;
    let name = args.fly.as_str();
    let f = Fly::load(&fly::find(name, data)?)?;
    let (lines, single) = lines_of(positions)?;
    let spec = args.which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    let analyst = Analyst {
        brain: &brain,
        readout: &f.readout,
        descending: &loaded.connectome.groups.descending,
        weight: args.imagination.map(|w| w.unwrap_or_else(|| flychess_arena::tuned::imagination(data, &f))),
    };
    let answer = |v: serde_json::Value| emit(&v, args.json, single);
    let started = Instant::now();
    let (mut done, mut bad) = (0usize, 0usize);
    let mut batch: Vec<Entry> = Vec::with_capacity(ANALYSE_BATCH);
    for (i, line) in lines.enumerate() {
        let number = i + 1;
        let line = match line.with_context(|| format!("reading line {number}"))? {
            Line::Text(text) => text,
            Line::TooLong { start, bytes } => {
                bad += 1;
                let error = format!("{bytes} bytes long: not a FEN (a FEN line is at most {MAX_FEN_LINE} bytes)");
                batch.push((number, start, Err(error)));
                if batch.len() == ANALYSE_BATCH {
                    analyst.flush(&mut batch, &answer)?;
                }
                continue;
            }
        };
        let fen = line.trim();
        if fen.is_empty() || fen.starts_with('#') {
            continue;
        }
        match position_from_fen(fen) {
            Ok(pos) if !pos.legal_moves().is_empty() => {
                batch.push((number, fen.to_string(), Ok(pos)));
                done += 1;
            }
            Ok(pos) => {
                bad += 1;
                batch.push((number, fen.to_string(), Err(flychess_brain::chess::game_over_words(&pos))));
            }
            Err(e) => {
                bad += 1;
                batch.push((number, quote(fen, 100), Err(quote(&e.to_string(), 200))));
            }
        }
        if batch.len() == ANALYSE_BATCH {
            analyst.flush(&mut batch, &answer)?;
        }
    }
    analyst.flush(&mut batch, &answer)?;
    eprintln!(
        "{done} positions in {:.1} s ({ANALYSE_BATCH} at a time){}",
        started.elapsed().as_secs_f64(),
        if bad > 0 { format!("; {bad} lines could not be read (listed above)") } else { String::new() }
    );
    if bad > 0 {
        return Err(anyhow!("{bad} of {} lines were not positions in play", done + bad));
    }
    Ok(())
}

/// The input's lines, read before the brain loads: a missing file or a bad single FEN fails at
/// once. Lines are bounded (a FEN is under 100 characters): a longer one is read past, not held,
/// and reported with its first characters only.
fn lines_of(positions: Positions) -> Result<Lines> {
    match positions {
        Positions::One(fen) => {
            position_from_fen(&fen)?;
            Ok((Box::new(std::iter::once(Ok(Line::Text(fen)))), true))
        }
        Positions::File(path) => {
            // A folder opens on Linux and fails only when read ("Is a directory", no name).
            if path.is_dir() {
                return Err(anyhow!("{}: a folder, not a file of FENs (one a line)", path.display()));
            }
            let file = std::fs::File::open(&path).with_context(|| format!("{}", path.display()))?;
            Ok((Box::new(BoundedLines::new(std::io::BufReader::new(file), MAX_FEN_LINE)), false))
        }
    }
}

/// The fly thinking about positions: its brain, readout and descending neurons, and the
/// imagination weight when it looks one move ahead.
struct Analyst<'a> {
    brain: &'a Brain,
    readout: &'a Readout,
    descending: &'a [u32],
    weight: Option<f32>,
}

impl Analyst<'_> {
    /// One position's answer: its moves by probability, value and choice (and imagination's).
    fn describe(&self, line: usize, fen: &str, pos: &shakmaty::Chess, features: Option<&[f32]>) -> serde_json::Value {
        let uci = |m: &shakmaty::Move| flychess_brain::chess::uci(m);
        let (p, seen) = match (self.weight, features) {
            (None, Some(d)) => (policy(pos, &self.readout.heads(d)), None),
            _ => {
                let (p, seen) = think_and_look_ahead(self.brain, self.readout, self.descending, None, pos, &[]);
                (p, Some(seen))
            }
        };
        let mut order: Vec<usize> = (0..p.moves.len()).collect();
        order.sort_by(|&a, &b| p.probability[b].total_cmp(&p.probability[a]));
        let moves: Vec<serde_json::Value> = order
            .iter()
            .map(|&i| {
                let mut m = serde_json::json!({"uci": uci(&p.moves[i]), "san": San::from_move(pos, p.moves[i]).to_string(), "probability": p.probability[i]});
                if let Some(seen) = &seen {
                    m["value_after"] = serde_json::json!(seen.ours.get(i));
                }
                m
            })
            .collect();
        let chosen = choose(pos, &p, &[]).map(|(i, _)| uci(&p.moves[i]));
        let mut v = serde_json::json!({"line": line, "fen": fen, "value": p.value, "chosen": chosen, "moves": moves});
        if let (Some(w), Some(seen)) = (self.weight, &seen) {
            v["imagination"] = serde_json::json!({"weight": if w.is_infinite() { serde_json::json!("inf") } else { serde_json::json!(w) }, "chosen": uci(&p.moves[seen.pick(w)])});
        }
        v
    }

    /// Answers a batch in its order and empties it. Plain, the batch thinks as one; with
    /// imagination each position thinks with its boards after.
    fn flush(&self, batch: &mut Vec<Entry>, answer: &dyn Fn(serde_json::Value) -> Result<()>) -> Result<()> {
        let boards: Vec<_> = batch.iter().filter_map(|(_, _, p)| p.as_ref().ok().map(planes)).collect();
        let features = if self.weight.is_none() && !boards.is_empty() {
            think_features(self.brain, &boards, self.descending, &self.readout.read_steps)
        } else {
            Vec::new()
        };
        let mut k = 0;
        for (line, fen, pos) in batch.drain(..) {
            match pos {
                Ok(pos) => {
                    answer(self.describe(line, &fen, &pos, features.get(k).map(Vec::as_slice)))?;
                    k += 1;
                }
                Err(error) => {
                    eprintln!("line {line}: {error}");
                    answer(serde_json::json!({"line": line, "fen": fen, "error": error}))?;
                }
            }
        }
        Ok(())
    }
}

/// One answer on stdout: pretty JSON for a single FEN, a JSON line each for a file, or text (the
/// eight likeliest moves).
fn emit(v: &serde_json::Value, json: bool, single: bool) -> Result<()> {
    let mut o = std::io::stdout().lock();
    if json && single {
        writeln!(o, "{}", serde_json::to_string_pretty(v)?)?;
    } else if json {
        writeln!(o, "{}", serde_json::to_string(v)?)?;
    } else if let Some(e) = v["error"].as_str() {
        writeln!(o, "line {}: {e}", v["line"])?;
    } else {
        writeln!(
            o,
            "{}  value {:+.2}  plays {}",
            v["fen"].as_str().unwrap_or(""),
            v["value"].as_f64().unwrap_or(0.0),
            v["chosen"].as_str().unwrap_or("-")
        )?;
        if let Some(i) = v.get("imagination") {
            writeln!(o, "  with imagination (w = {}) plays {}", i["weight"], i["chosen"].as_str().unwrap_or("-"))?;
        }
        for m in v["moves"].as_array().into_iter().flatten().take(8) {
            writeln!(
                o,
                "  {:8} {:6} {:5.1}%",
                m["san"].as_str().unwrap_or(""),
                m["uci"].as_str().unwrap_or(""),
                100.0 * m["probability"].as_f64().unwrap_or(0.0)
            )?;
        }
    }
    Ok(())
}
