//! Who teaches a fit at scale (issue 55): the master who played the game's move, Stockfish's own
//! best move (the labels `flychess data label --dataset NAME` writes for a games dataset's TRAIN
//! rows), or both with a stated weight each. This module owns reading those engine labels (joined
//! to their dataset by its content hash and row number, refused when they belong to other rows),
//! the `Teacher` weights and their words, and the target of one row under a teacher: the policy
//! target is the weighted blend of the sources' moves; the value target is Stockfish's score
//! where the row has one, else the game's result (as a master-move row always had).

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::train::Target;
use flychess_fly::data::{MoveCode, MoveLabel, Row};
use flychess_fly::grading::Score;

/// The weight of each source in a streamed row's policy target. A weight of 0 leaves the source
/// out; an engine weight needs engine labels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Teacher {
    pub master: f64,
    pub engine: f64,
}

impl Default for Teacher {
    /// The master's move alone (every fly before issue 55).
    fn default() -> Teacher {
        Teacher { master: 1.0, engine: 0.0 }
    }
}

impl Teacher {
    /// `master`, `engine`, or weights `master=1,engine=3` (either order, either may be left out:
    /// it is then 0).
    pub fn parse(text: &str) -> Result<Teacher> {
        let bad = |why: &str| Error::Invalid(format!("teacher {text:?}: {why} (say master, engine, or master=W,engine=W)"));
        match text.trim() {
            "master" => return Ok(Teacher { master: 1.0, engine: 0.0 }),
            "engine" | "stockfish" => return Ok(Teacher { master: 0.0, engine: 1.0 }),
            _ => {}
        }
        let mut t = Teacher { master: 0.0, engine: 0.0 };
        for part in text.split(',') {
            let (name, weight) = part.split_once('=').ok_or_else(|| bad("no weight"))?;
            let weight: f64 = weight.trim().parse().map_err(|_| bad("a weight is no number"))?;
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(bad("a weight below 0"));
            }
            match name.trim() {
                "master" => t.master = weight,
                "engine" | "stockfish" => t.engine = weight,
                _ => return Err(bad("an unknown source")),
            }
        }
        if t.master + t.engine <= 0.0 {
            return Err(bad("every weight is 0"));
        }
        Ok(t)
    }

    /// Whether the master's move is left out (then only rows with an engine label are used).
    pub fn engine_only(&self) -> bool {
        self.master <= 0.0
    }

    /// In words, for a fly's description and `eval --json`'s `teacher`.
    pub fn describe(&self) -> String {
        match (self.master > 0.0, self.engine > 0.0) {
            (true, false) => "master's move".into(),
            (false, true) => "Stockfish's move".into(),
            _ => {
                let total = self.master + self.engine;
                format!("master's move {:.0} %, Stockfish's move {:.0} %", 100.0 * self.master / total, 100.0 * self.engine / total)
            }
        }
    }
}

/// Stockfish's best move for one dataset row, with the game and ply the line named (checked
/// against the row when joined).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EngineLabel {
    pub mv: MoveCode,
    pub score: Score,
    pub game: u32,
    pub ply: u16,
}

/// The engine labels of a dataset's rows `first_row..first_row + labels.len()`, in order.
#[derive(Clone, Debug)]
pub struct EngineLabels {
    pub path: PathBuf,
    pub dataset_sha256: String,
    pub first_row: usize,
    pub depth: u32,
    pub labels: Vec<EngineLabel>,
}

/// The sidecar `data label --dataset` writes (`labels.json`); other fields are ignored.
#[derive(Deserialize)]
struct Sidecar {
    dataset_sha256: String,
    first_row: usize,
    depth: u32,
}

/// One line of a dataset's labels (the compact form: the row, not the FEN).
#[derive(Deserialize)]
struct Line {
    i: usize,
    game: u32,
    ply: u16,
    moves: Vec<LineMove>,
}

#[derive(Deserialize)]
struct LineMove {
    uci: String,
    cp: Option<i32>,
    mate: Option<i32>,
}

impl EngineLabels {
    /// Reads `dir/labels.json` and the whole lines of `dir/labels.jsonl` (a running job's last,
    /// unfinished line is left out), at most `most` of them. Refused, naming the file, when the
    /// labels belong to a dataset of another content hash, when a line names a row out of order,
    /// or when a line is damaged before the end.
    pub fn read(dir: &Path, dataset_sha256: &str, most: usize) -> Result<EngineLabels> {
        let sidecar_path = dir.join("labels.json");
        let mut bytes = Vec::new();
        std::fs::File::open(&sidecar_path)
            .and_then(|f| f.take(1 << 20).read_to_end(&mut bytes))
            .map_err(|e| Error::io(&sidecar_path, e))?;
        let sidecar: Sidecar =
            serde_json::from_slice(&bytes).map_err(|e| Error::table(&sidecar_path, format!("not a dataset's labels sidecar: {e}")))?;
        if sidecar.dataset_sha256 != dataset_sha256 {
            return Err(Error::table(
                &sidecar_path,
                format!(
                    "these labels are of the dataset {}…, not of the one the fit reads ({}…)",
                    &sidecar.dataset_sha256.get(..12).unwrap_or(&sidecar.dataset_sha256),
                    dataset_sha256.get(..12).unwrap_or(dataset_sha256)
                ),
            ));
        }
        let path = dir.join("labels.jsonl");
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let mut reader = std::io::BufReader::new(file);
        let mut labels = Vec::new();
        let mut buf = Vec::new();
        while labels.len() < most {
            buf.clear();
            // A line is at most a few hundred bytes; a longer one is damage, not a label.
            let n = (&mut reader).take(64 * 1024).read_until(b'\n', &mut buf).map_err(|e| Error::io(&path, e))?;
            if n == 0 || buf.last() != Some(&b'\n') {
                break;
            }
            let k = labels.len();
            let bad = |why: String| Error::table(&path, format!("line {}: {why}", k + 1));
            let line: Line = match serde_json::from_slice(&buf) {
                Ok(l) => l,
                Err(e) => {
                    // Only the last line may be cut short (by a kill).
                    let mut rest = Vec::new();
                    let more = (&mut reader).take(1).read_to_end(&mut rest).map_err(|e| Error::io(&path, e))?;
                    if more == 0 {
                        break;
                    }
                    return Err(bad(format!("{e}")));
                }
            };
            if line.i != sidecar.first_row + k {
                return Err(bad(format!("names row {}, where row {} was next", line.i, sidecar.first_row + k)));
            }
            let best = line.moves.first().ok_or_else(|| bad("no move".into()))?;
            let mv = MoveCode::parse_uci(&best.uci).ok_or_else(|| bad(format!("{:?} is no move", best.uci)))?;
            let score = match (best.cp, best.mate) {
                (_, Some(m)) => Score::Mate(m),
                (Some(cp), None) => Score::Cp(cp),
                (None, None) => return Err(bad("no score".into())),
            };
            labels.push(EngineLabel { mv, score, game: line.game, ply: line.ply });
        }
        Ok(EngineLabels { path, dataset_sha256: sidecar.dataset_sha256, first_row: sidecar.first_row, depth: sidecar.depth, labels })
    }

    /// The label of dataset row `row`, if it has one.
    pub fn get(&self, row: usize) -> Option<&EngineLabel> {
        row.checked_sub(self.first_row).and_then(|k| self.labels.get(k))
    }

    /// The first row after the labelled ones.
    pub fn end(&self) -> usize {
        self.first_row + self.labels.len()
    }
}

/// The target of dataset row `index` (`row`, a master-move row) under `teacher`: the policy
/// target blends the master's move and Stockfish's by their weights (a source the row lacks is
/// left out), the value is Stockfish's score where there is one, else the game's result. Returns
/// the target and which sources taught it.
pub fn target(row: &Row, label: Option<&EngineLabel>, teacher: &Teacher) -> Result<(Target, Taught)> {
    let engine = match label {
        Some(l) => {
            if (l.game, l.ply) != (row.game, row.ply) {
                return Err(Error::Invalid(format!(
                    "an engine label for game {} ply {} was joined to a row of game {} ply {}",
                    l.game, l.ply, row.game, row.ply
                )));
            }
            let labelled = Row { moves: vec![MoveLabel { mv: l.mv, score: l.score, wdl: None }], ..row.clone() };
            Some(Target::of(&labelled)?)
        }
        None => None,
    };
    let master = if teacher.master > 0.0 || engine.is_none() { Some(Target::of(row)?) } else { None };
    Ok(match (master, engine) {
        (Some(m), None) => (m, Taught { master: true, engine: false }),
        (None, Some(e)) => (e, Taught { master: false, engine: true }),
        (Some(m), Some(mut e)) => {
            let taught = Taught { master: teacher.master > 0.0, engine: teacher.engine > 0.0 };
            let total = (teacher.master + teacher.engine) as f32;
            for (s, ms) in e.share.iter_mut().zip(&m.share) {
                *s = (teacher.engine as f32 * *s + teacher.master as f32 * ms) / total;
            }
            (e, taught)
        }
        (None, None) => unreachable!("a row without an engine label takes the master's move"),
    })
}

/// Which sources taught a row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Taught {
    pub master: bool,
    pub engine: bool,
}

/// Positions taught by each source, by name, as `eval --json`'s `positions_by_teacher` says.
pub type ByTeacher = BTreeMap<String, usize>;

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::data::{Result3, master_label};

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn row() -> Row {
        Row {
            fen: START.into(),
            game: 7,
            ply: 0,
            legal: 20,
            moves: vec![master_label(MoveCode::parse_uci("d2d4").unwrap(), Result3::Lost)],
        }
    }

    fn e4(cp: i32) -> EngineLabel {
        EngineLabel { mv: MoveCode::parse_uci("e2e4").unwrap(), score: Score::Cp(cp), game: 7, ply: 0 }
    }

    fn share_of(t: &Target, uci: &str) -> f32 {
        let m = MoveCode::parse_uci(uci).unwrap();
        let i = t.legal.iter().position(|&(f, to, _)| (f as u8, to as u8) == (m.from, m.to)).unwrap();
        t.share[i]
    }

    #[test]
    fn the_teachers_weights_split_the_policy_and_the_engine_gives_the_value() {
        let both = Teacher::parse("master=1,engine=3").unwrap();
        let (t, taught) = target(&row(), Some(&e4(50)), &both).unwrap();
        assert_eq!(taught, Taught { master: true, engine: true });
        assert!((share_of(&t, "e2e4") - 0.75).abs() < 1e-6 && (share_of(&t, "d2d4") - 0.25).abs() < 1e-6);
        // The value is Stockfish's +50 cp (a little above even), not the lost game's -1.
        assert!(t.value > 0.0 && t.value < 0.3, "{}", t.value);
        let (m, taught) = target(&row(), Some(&e4(50)), &Teacher::parse("master").unwrap()).unwrap();
        assert_eq!(taught, Taught { master: true, engine: false });
        assert_eq!((share_of(&m, "d2d4"), share_of(&m, "e2e4")), (1.0, 0.0));
        assert!(m.value > 0.0, "the engine's score still teaches the value: {}", m.value);
        let (e, _) = target(&row(), Some(&e4(50)), &Teacher::parse("engine").unwrap()).unwrap();
        assert_eq!(share_of(&e, "e2e4"), 1.0);
        // Without a label: the master's move and the game's result.
        let (m, taught) = target(&row(), None, &both).unwrap();
        assert_eq!(
            (taught, share_of(&m, "d2d4"), m.value),
            (Taught { master: true, engine: false }, 1.0, Target::of(&row()).unwrap().value)
        );
        assert!(m.value < -0.9, "a lost game: {}", m.value);
        // A label of another game's position is refused.
        let mut other = e4(50);
        other.game = 8;
        assert!(target(&row(), Some(&other), &both).is_err());
    }

    #[test]
    fn teachers_are_parsed_and_bad_weights_refused() {
        assert_eq!(Teacher::parse("engine").unwrap(), Teacher { master: 0.0, engine: 1.0 });
        assert_eq!(Teacher::parse("engine=2, master=1").unwrap(), Teacher { master: 1.0, engine: 2.0 });
        for bad in ["", "teacher", "master=-1", "master=0,engine=0", "engine=x", "mom=1"] {
            assert!(Teacher::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Teacher::parse("master=1,engine=1").unwrap().describe(), "master's move 50 %, Stockfish's move 50 %");
    }

    #[test]
    fn labels_are_read_in_row_order_and_refused_for_another_dataset_or_rows_out_of_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("labels.json"), r#"{"dataset_sha256":"abc","first_row":10,"depth":10,"multipv":1}"#).unwrap();
        let line = |i: usize, mv: &str, score: &str| {
            format!(
                "{{\"depth\":10,\"game\":{i},\"i\":{i},\"legal\":20,\"moves\":[{{{score},\"uci\":\"{mv}\",\"wdl\":[1,2,3]}}],\"ply\":3}}\n"
            )
        };
        let good = line(10, "e2e4", "\"cp\":31,\"mate\":null") + &line(11, "g1f3", "\"cp\":null,\"mate\":-4");
        // A killed job's last line, cut short, is left out.
        std::fs::write(dir.path().join("labels.jsonl"), good.clone() + "{\"depth\":10,\"ga").unwrap();
        let l = EngineLabels::read(dir.path(), "abc", usize::MAX).unwrap();
        assert_eq!((l.first_row, l.end(), l.depth), (10, 12, 10));
        assert_eq!(l.get(11).map(|x| x.score), Some(Score::Mate(-4)));
        assert!(l.get(9).is_none() && l.get(12).is_none());
        assert_eq!(EngineLabels::read(dir.path(), "abc", 1).unwrap().labels.len(), 1, "at most what is asked");
        let e = EngineLabels::read(dir.path(), "abd", usize::MAX).unwrap_err().to_string();
        assert!(e.contains("labels.json") && e.contains("abc"), "{e}");
        std::fs::write(
            dir.path().join("labels.jsonl"),
            line(10, "e2e4", "\"cp\":1,\"mate\":null") + &line(12, "e2e4", "\"cp\":1,\"mate\":null"),
        )
        .unwrap();
        let e = EngineLabels::read(dir.path(), "abc", usize::MAX).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("row 12"), "{e}");
        // Damage before the end is an error, not a shorter file.
        std::fs::write(dir.path().join("labels.jsonl"), "garbage\n".to_string() + &good).unwrap();
        assert!(EngineLabels::read(dir.path(), "abc", usize::MAX).unwrap_err().to_string().contains("line 1"));
    }
}
