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
use flychess_fly::data::{MoveCode, MoveLabel, Row};
use flychess_fly::grading::Score;
use flychess_fly::scoring::Target;

/// The weight of each source in a streamed row's policy target. A weight of 0 leaves the source
/// out; an engine weight needs engine labels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Teacher {
    pub master: f64,
    pub engine: f64,
    /// The engine's source is Stockfish's whole opinion (every legal move's win %, the seed's
    /// share with τ = 2.5; labels of `data label --every-move`) rather than its best move alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_move: bool,
}

impl Default for Teacher {
    /// The master's move alone (every fly before issue 55).
    fn default() -> Teacher {
        Teacher { master: 1.0, engine: 0.0, every_move: false }
    }
}

impl Teacher {
    /// `master`, `engine` (Stockfish's best move), `every-move` (Stockfish's every legal move), or
    /// weights `master=1,engine=3` / `master=1,every-move=3` (any order, either may be left out:
    /// it is then 0). The engine's best move and its every move are one source read two ways, so
    /// one teacher names one of them.
    pub fn parse(text: &str) -> Result<Teacher> {
        let bad = |why: &str| {
            Error::Invalid(format!(
                "teacher {text:?}: {why} (say master, engine, every-move, or master=W,engine=W or master=W,every-move=W)"
            ))
        };
        match text.trim() {
            "master" => return Ok(Teacher { master: 1.0, engine: 0.0, every_move: false }),
            "engine" | "stockfish" => return Ok(Teacher { master: 0.0, engine: 1.0, every_move: false }),
            "every-move" => return Ok(Teacher { master: 0.0, engine: 1.0, every_move: true }),
            _ => {}
        }
        let mut t = Teacher { master: 0.0, engine: 0.0, every_move: false };
        let mut engine_named = None;
        for part in text.split(',') {
            let (name, weight) = part.split_once('=').ok_or_else(|| bad("no weight"))?;
            let weight: f64 = weight.trim().parse().map_err(|_| bad("a weight is no number"))?;
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(bad("a weight below 0"));
            }
            match name.trim() {
                "master" => t.master = weight,
                engine @ ("engine" | "stockfish" | "every-move") => {
                    let every = engine == "every-move";
                    if engine_named.is_some_and(|e| e != every) {
                        return Err(bad("Stockfish's best move and its every move both named"));
                    }
                    engine_named = Some(every);
                    t.engine = weight;
                    t.every_move = every;
                }
                _ => return Err(bad("an unknown source")),
            }
        }
        if t.master + t.engine <= 0.0 {
            return Err(bad("every weight is 0"));
        }
        Ok(t)
    }

    /// The name of the engine's source in `positions_by_teacher`.
    pub fn engine_source(&self) -> &'static str {
        if self.every_move { "stockfish_every_move" } else { "stockfish" }
    }

    /// Whether the master's move is left out (then only rows with an engine label are used).
    pub fn engine_only(&self) -> bool {
        self.master <= 0.0
    }

    /// In words, for a fly's description and `eval --json`'s `teacher`.
    pub fn describe(&self) -> String {
        let engine = if self.every_move { "Stockfish's every move" } else { "Stockfish's move" };
        match (self.master > 0.0, self.engine > 0.0) {
            (true, false) => "master's move".into(),
            (false, true) => engine.into(),
            _ => {
                let total = self.master + self.engine;
                format!("master's move {:.0} %, {engine} {:.0} %", 100.0 * self.master / total, 100.0 * self.engine / total)
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
    /// Every legal move's score of each label, where the labels are `data label --every-move`'s.
    pub every: Option<EveryMove>,
}

/// Every labelled move of each label, flat: label `k`'s moves are `moves[starts[k]..starts[k + 1]]`,
/// Stockfish's best first (the MultiPV order).
#[derive(Clone, Debug, Default)]
pub struct EveryMove {
    pub starts: Vec<u32>,
    pub moves: Vec<(MoveCode, Score)>,
}

impl EveryMove {
    fn of(&self, k: usize) -> Option<&[(MoveCode, Score)]> {
        let (a, b) = (*self.starts.get(k)? as usize, *self.starts.get(k + 1)? as usize);
        self.moves.get(a..b)
    }
}

/// The sidecar `data label --dataset` writes (`labels.json`); other fields are ignored.
#[derive(Deserialize)]
struct Sidecar {
    dataset_sha256: String,
    first_row: usize,
    depth: u32,
    #[serde(default)]
    every_move: bool,
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
        let mut every = sidecar.every_move.then(|| EveryMove { starts: vec![0], moves: Vec::new() });
        let mut buf = Vec::new();
        while labels.len() < most {
            buf.clear();
            // A line is at most a few kilobytes (every move of a position with 218); a longer one
            // is damage, not a label.
            let n = (&mut reader).take(LINE_LIMIT as u64 + 1).read_until(b'\n', &mut buf).map_err(|e| Error::io(&path, e))?;
            if n == 0 {
                break;
            }
            if buf.last() != Some(&b'\n') {
                if n > LINE_LIMIT {
                    return Err(Error::table(&path, format!("line {}: longer than {LINE_LIMIT} bytes", labels.len() + 1)));
                }
                // The last line, cut short by a kill: left out.
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
            let scored = |m: &LineMove| -> Result<(MoveCode, Score)> {
                let mv = MoveCode::parse_uci(&m.uci).ok_or_else(|| bad(format!("{:?} is no move", m.uci)))?;
                let score = match (m.cp, m.mate) {
                    (_, Some(m)) => Score::Mate(m),
                    (Some(cp), None) => Score::Cp(cp),
                    (None, None) => return Err(bad(format!("{} has no score", m.uci))),
                };
                Ok((mv, score))
            };
            let (mv, score) = scored(line.moves.first().ok_or_else(|| bad("no move".into()))?)?;
            if let Some(every) = &mut every {
                for m in &line.moves {
                    every.moves.push(scored(m)?);
                }
                every.starts.push(every.moves.len() as u32);
            }
            labels.push(EngineLabel { mv, score, game: line.game, ply: line.ply });
        }
        Ok(EngineLabels { path, dataset_sha256: sidecar.dataset_sha256, first_row: sidecar.first_row, depth: sidecar.depth, labels, every })
    }

    /// The label of dataset row `row`, if it has one.
    pub fn get(&self, row: usize) -> Option<&EngineLabel> {
        row.checked_sub(self.first_row).and_then(|k| self.labels.get(k))
    }

    /// Every labelled move of dataset row `row` (best first), where the labels score every move.
    pub fn every_move(&self, row: usize) -> Option<&[(MoveCode, Score)]> {
        let k = row.checked_sub(self.first_row)?;
        self.every.as_ref()?.of(k)
    }

    /// The row's label as `target` takes it.
    pub fn label(&self, row: usize) -> Option<Label<'_>> {
        Some(Label { best: self.get(row)?, every: self.every_move(row) })
    }

    /// The first row after the labelled ones.
    pub fn end(&self) -> usize {
        self.first_row + self.labels.len()
    }
}

/// The sha256 (hex) of the first `rows` lines of the labels file at `path`, or None when it has
/// fewer whole lines: what a run's labels are keyed by, so that a run resumes on the very lines
/// it started with however far the labelling job has gone on since.
pub fn lines_sha256(path: &Path, rows: usize) -> Result<Option<String>> {
    use sha2::Digest;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut hash = sha2::Sha256::new();
    let mut buf = Vec::new();
    for _ in 0..rows {
        buf.clear();
        let n = (&mut reader).take(LINE_LIMIT as u64 + 1).read_until(b'\n', &mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 || buf.last() != Some(&b'\n') {
            return Ok(None);
        }
        hash.update(&buf);
    }
    Ok(Some(flychess_brain::files::hex(&hash.finalize())))
}

/// A longer line of a labels file is damage: every move of the position with the most legal
/// moves (218) takes about 6 kB.
pub const LINE_LIMIT: usize = 64 * 1024;

/// One row's engine label as a target reads it: the best move, and every scored move where the
/// labels have them.
#[derive(Clone, Copy, Debug)]
pub struct Label<'a> {
    pub best: &'a EngineLabel,
    pub every: Option<&'a [(MoveCode, Score)]>,
}

/// The target of dataset row `index` (`row`, a master-move row) under `teacher`: the policy
/// target blends the master's move and Stockfish's by their weights (a source the row lacks is
/// left out); Stockfish's is its best move alone, or under an every-move teacher every labelled
/// move's share exp((win − best win) / τ) (the seed's whole opinion). The value is Stockfish's
/// best score where there is one, else the game's result. Returns the target and which sources
/// taught it.
pub fn target(row: &Row, label: Option<Label<'_>>, teacher: &Teacher) -> Result<(Target, Taught)> {
    let engine = match label {
        Some(Label { best: l, every }) => {
            if (l.game, l.ply) != (row.game, row.ply) {
                return Err(Error::Invalid(format!(
                    "an engine label for game {} ply {} was joined to a row of game {} ply {}",
                    l.game, l.ply, row.game, row.ply
                )));
            }
            let moves = match (teacher.every_move, every) {
                (true, Some(all)) => all.iter().map(|&(mv, score)| MoveLabel { mv, score, wdl: None }).collect(),
                (true, None) => {
                    return Err(Error::Invalid(format!(
                        "the every-move teacher met a row (game {} ply {}) whose label has Stockfish's best move alone",
                        row.game, row.ply
                    )));
                }
                (false, _) => vec![MoveLabel { mv: l.mv, score: l.score, wdl: None }],
            };
            let labelled = Row { moves, ..row.clone() };
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

    fn best(l: &EngineLabel) -> Option<Label<'_>> {
        Some(Label { best: l, every: None })
    }

    fn share_of(t: &Target, uci: &str) -> f32 {
        let m = MoveCode::parse_uci(uci).unwrap();
        let i = t.legal.iter().position(|&(f, to, _)| (f as u8, to as u8) == (m.from, m.to)).unwrap();
        t.share[i]
    }

    #[test]
    fn the_teachers_weights_split_the_policy_and_the_engine_gives_the_value() {
        let both = Teacher::parse("master=1,engine=3").unwrap();
        let (t, taught) = target(&row(), best(&e4(50)), &both).unwrap();
        assert_eq!(taught, Taught { master: true, engine: true });
        assert!((share_of(&t, "e2e4") - 0.75).abs() < 1e-6 && (share_of(&t, "d2d4") - 0.25).abs() < 1e-6);
        // The value is Stockfish's +50 cp (a little above even), not the lost game's -1.
        assert!(t.value > 0.0 && t.value < 0.3, "{}", t.value);
        let (m, taught) = target(&row(), best(&e4(50)), &Teacher::parse("master").unwrap()).unwrap();
        assert_eq!(taught, Taught { master: true, engine: false });
        assert_eq!((share_of(&m, "d2d4"), share_of(&m, "e2e4")), (1.0, 0.0));
        assert!(m.value > 0.0, "the engine's score still teaches the value: {}", m.value);
        let (e, _) = target(&row(), best(&e4(50)), &Teacher::parse("engine").unwrap()).unwrap();
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
        assert!(target(&row(), best(&other), &both).is_err());
    }

    #[test]
    fn teachers_are_parsed_and_bad_weights_refused() {
        assert_eq!(Teacher::parse("engine").unwrap(), Teacher { master: 0.0, engine: 1.0, every_move: false });
        assert_eq!(Teacher::parse("engine=2, master=1").unwrap(), Teacher { master: 1.0, engine: 2.0, every_move: false });
        assert_eq!(Teacher::parse("every-move").unwrap(), Teacher { master: 0.0, engine: 1.0, every_move: true });
        assert_eq!(Teacher::parse("master=1,every-move=3").unwrap(), Teacher { master: 1.0, engine: 3.0, every_move: true });
        for bad in ["", "teacher", "master=-1", "master=0,engine=0", "engine=x", "mom=1", "engine=1,every-move=1"] {
            assert!(Teacher::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Teacher::parse("master=1,engine=1").unwrap().describe(), "master's move 50 %, Stockfish's move 50 %");
        assert_eq!(Teacher::parse("every-move").unwrap().engine_source(), "stockfish_every_move");
        // A fly's meta of before the every-move teacher reads back as Stockfish's best move.
        let old: Teacher = serde_json::from_str(r#"{"master":0.0,"engine":1.0}"#).unwrap();
        assert_eq!(old, Teacher::parse("engine").unwrap());
    }

    /// The every-move teacher gives each labelled move the seed's share exp((win − best)/τ), not
    /// the best move alone; a label of one move is refused for it.
    #[test]
    fn the_every_move_teacher_shares_by_win_percent_over_every_labelled_move() {
        use flychess_fly::grading::win_percent;
        use flychess_fly::scoring::TAU;
        let every = [
            (MoveCode::parse_uci("e2e4").unwrap(), Score::Cp(40)),
            (MoveCode::parse_uci("d2d4").unwrap(), Score::Cp(30)),
            (MoveCode::parse_uci("g2g4").unwrap(), Score::Cp(-120)),
        ];
        let label = e4(40);
        let (t, taught) =
            target(&row(), Some(Label { best: &label, every: Some(&every) }), &Teacher::parse("every-move").unwrap()).unwrap();
        assert_eq!(taught, Taught { master: false, engine: true });
        let raw: Vec<f64> = every.iter().map(|(_, s)| ((win_percent(s.as_cp()) - win_percent(40.0)) / TAU).exp()).collect();
        let total: f64 = raw.iter().sum();
        for (uci, want) in ["e2e4", "d2d4", "g2g4"].iter().zip(raw.iter().map(|r| r / total)) {
            assert!((share_of(&t, uci) as f64 - want).abs() < 1e-6, "{uci}: {} vs {want}", share_of(&t, uci));
        }
        assert!(share_of(&t, "d2d4") > 0.3, "a move 10 cp worse keeps a large share: {}", share_of(&t, "d2d4"));
        assert_eq!(share_of(&t, "a2a3"), 0.0, "an unlabelled move gets nothing");
        assert!((t.value - (2.0 * win_percent(40.0) / 100.0 - 1.0) as f32).abs() < 1e-6, "the best move's win % is the value");
        // The best-move teacher on the same label: e4 alone.
        let (b, _) = target(&row(), Some(Label { best: &label, every: Some(&every) }), &Teacher::parse("engine").unwrap()).unwrap();
        assert_eq!(share_of(&b, "e2e4"), 1.0);
        // The every-move teacher on a label of one move is refused, not taught one move.
        assert!(target(&row(), best(&label), &Teacher::parse("every-move").unwrap()).is_err());
    }

    #[test]
    fn every_move_labels_keep_each_rows_moves_and_an_overlong_line_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("labels.json"),
            r#"{"dataset_sha256":"abc","first_row":4,"depth":4,"multipv":256,"every_move":true}"#,
        )
        .unwrap();
        let lines = concat!(
            r#"{"depth":4,"game":1,"i":4,"legal":20,"moves":[{"cp":35,"uci":"e2e4"},{"cp":20,"uci":"d2d4"},{"mate":-3,"uci":"f2f3"}],"ply":0}"#,
            "
",
            r#"{"depth":4,"game":2,"i":5,"legal":20,"moves":[{"cp":10,"uci":"g1f3"}],"ply":0}"#,
            "
"
        );
        std::fs::write(dir.path().join("labels.jsonl"), lines).unwrap();
        let l = EngineLabels::read(dir.path(), "abc", usize::MAX).unwrap();
        let first = l.every_move(4).unwrap();
        assert_eq!(first.len(), 3);
        assert_eq!(first[2], (MoveCode::parse_uci("f2f3").unwrap(), Score::Mate(-3)));
        assert_eq!(l.every_move(5).unwrap().len(), 1);
        assert!(l.every_move(6).is_none() && l.every_move(3).is_none());
        assert_eq!(l.get(4).map(|b| b.mv), Some(MoveCode::parse_uci("e2e4").unwrap()));
        // A line longer than any label (no newline in 64 KiB) is an error naming it, not the end.
        let long = format!(
            "{}{}
",
            &lines[..lines.find('\n').unwrap() + 1],
            "x".repeat(LINE_LIMIT + 10)
        );
        std::fs::write(dir.path().join("labels.jsonl"), long).unwrap();
        let e = EngineLabels::read(dir.path(), "abc", usize::MAX).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("longer than"), "{e}");
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
