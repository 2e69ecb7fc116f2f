//! Labelled positions: the project's own dataset format and the import of the shared JSONL. A row
//! is a position (FEN), where it came from (game, ply), its number of legal moves and Stockfish's
//! best moves with their scores (centipawns or mate) and win/draw/loss, best first. Rows are kept
//! in their shuffled order: HOLD is the first 4,096, VAL the next 2,048, TRAIN the rest; HOLD and
//! VAL are never trained on.
//!
//! File layout: `FLYDATA1`, u32 format version, u32 header length, header (JSON: source, labeller,
//! counts, splits), then the rows zstd-compressed, then sha256 of everything before it. Rows:
//! u8 FEN length, FEN, u32 game, u16 ply, u8 legal, u8 k, then per move u8 from, u8 to, u8 promotion
//! (0 none, 1 q, 2 r, 3 b, 4 n), u8 kind (0 cp, 1 mate), i32 value, 3 × u16 wdl (0xFFFF: none).

use std::io::BufRead;
use std::path::Path;

use crate::error::{Error, Result};
use crate::grading::Score;
use flychess_brain::container;
use serde::{Deserialize, Serialize};

pub const HOLD: usize = 4_096;
pub const VAL: usize = 2_048;
const MAGIC: &[u8; 8] = b"FLYDATA1";
const FORMAT_VERSION: u32 = 1;

/// A move as from/to squares (a1 = 0 … h8 = 63) and a promotion (0 none, 1 q, 2 r, 3 b, 4 n).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MoveCode {
    pub from: u8,
    pub to: u8,
    pub promotion: u8,
}

impl MoveCode {
    pub fn parse_uci(uci: &str) -> Option<MoveCode> {
        let b = uci.as_bytes();
        let square = |f: u8, r: u8| -> Option<u8> {
            ((b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r)).then(|| (r - b'1') * 8 + (f - b'a'))
        };
        let promotion = match b.get(4) {
            None => 0,
            Some(b'q') => 1,
            Some(b'r') => 2,
            Some(b'b') => 3,
            Some(b'n') => 4,
            Some(_) => return None,
        };
        if !(4..=5).contains(&b.len()) {
            return None;
        }
        Some(MoveCode { from: square(b[0], b[1])?, to: square(b[2], b[3])?, promotion })
    }

    pub fn uci(self) -> String {
        let sq = |s: u8| format!("{}{}", (b'a' + s % 8) as char, (b'1' + s / 8) as char);
        let promo = ["", "q", "r", "b", "n"][self.promotion.min(4) as usize];
        format!("{}{}{promo}", sq(self.from), sq(self.to))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveLabel {
    pub mv: MoveCode,
    pub score: Score,
    pub wdl: Option<[u16; 3]>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub fen: String,
    pub game: u32,
    pub ply: u16,
    pub legal: u8,
    /// Stockfish's best moves, best first (at most 8).
    pub moves: Vec<MoveLabel>,
}

/// What a dataset's rows are labelled with (the header says; files without the field are
/// Stockfish's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Labels {
    /// Stockfish's best moves with their scores and win/draw/loss, best first.
    #[default]
    Stockfish,
    /// The move a master played, alone, its score the game's result from the mover's side (a won
    /// game as mate in 1, a drawn one as 0 cp, a lost one as being mated; see `master_label`) and
    /// its `wdl` the same result exactly (1000/0/0, 0/1000/0, 0/0/1000). Read by the same fit as
    /// Stockfish's rows: the target is the move played, the value the result (±0.95 after the
    /// clip, 0 for a draw).
    MasterMove,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub source: String,
    pub labeller: String,
    pub rows: usize,
    pub hold: usize,
    pub val: usize,
    #[serde(default)]
    pub labels: Labels,
}

/// A game's result from the mover's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Result3 {
    Won,
    Drawn,
    Lost,
}

/// The one label of a master-move row (see `Labels::MasterMove`).
pub fn master_label(played: MoveCode, result: Result3) -> MoveLabel {
    let (score, wdl) = match result {
        Result3::Won => (Score::Mate(1), [1000, 0, 0]),
        Result3::Drawn => (Score::Cp(0), [0, 1000, 0]),
        Result3::Lost => (Score::Mate(-1), [0, 0, 1000]),
    };
    MoveLabel { mv: played, score, wdl: Some(wdl) }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub meta: Meta,
    pub rows: Vec<Row>,
}

/// The fewest bytes a row takes (an empty FEN's length byte, game, ply, legal count, label count)
/// and the most (a 255-byte FEN and 255 labelled moves of 14 bytes).
const SMALLEST_ROW: u64 = 1 + 4 + 2 + 1 + 1;
const LARGEST_ROW: u64 = 1 + 255 + 4 + 2 + 1 + 1 + 255 * 14;

impl Dataset {
    pub fn hold(&self) -> &[Row] {
        &self.rows[..self.meta.hold.min(self.rows.len())]
    }
    pub fn val(&self) -> &[Row] {
        let a = self.meta.hold.min(self.rows.len());
        &self.rows[a..(a + self.meta.val).min(self.rows.len())]
    }
    pub fn train(&self) -> &[Row] {
        &self.rows[(self.meta.hold + self.meta.val).min(self.rows.len())..]
    }

    /// Reads the shared JSONL (one object per line: fen, game, ply, legal, moves[uci, cp, mate,
    /// wdl]), in file order. A bad line is an error naming its line number.
    pub fn from_jsonl(reader: impl BufRead, source: &str, labeller: &str) -> Result<Dataset> {
        #[derive(Deserialize)]
        struct JMove {
            uci: String,
            cp: Option<i32>,
            mate: Option<i32>,
            wdl: Option<[u16; 3]>,
        }
        #[derive(Deserialize)]
        struct JRow {
            fen: String,
            game: u32,
            ply: u16,
            legal: u8,
            moves: Vec<JMove>,
        }
        let mut rows = Vec::new();
        for (n, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| Error::Invalid(format!("line {}: {e}", n + 1)))?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |what: String| Error::Invalid(format!("line {}: {what}", n + 1));
            let j: JRow = serde_json::from_str(&line).map_err(|e| bad(e.to_string()))?;
            flychess_brain::chess::position_from_fen(&j.fen).map_err(|e| bad(e.to_string()))?;
            if j.fen.len() > 255 {
                return Err(bad("FEN longer than 255 characters".into()));
            }
            let mut moves = Vec::new();
            for m in j.moves {
                let mv = MoveCode::parse_uci(&m.uci).ok_or_else(|| bad(format!("not a UCI move: {:?}", m.uci)))?;
                let score = match (m.cp, m.mate) {
                    (_, Some(k)) => Score::Mate(k),
                    (Some(cp), None) => Score::Cp(cp),
                    (None, None) => return Err(bad(format!("move {} has neither cp nor mate", m.uci))),
                };
                moves.push(MoveLabel { mv, score, wdl: m.wdl });
            }
            if moves.is_empty() || moves.len() > 255 {
                return Err(bad(format!("{} labelled moves", moves.len())));
            }
            rows.push(Row { fen: j.fen, game: j.game, ply: j.ply, legal: j.legal, moves });
        }
        Ok(Dataset {
            meta: Meta {
                source: source.into(),
                labeller: labeller.into(),
                rows: rows.len(),
                hold: HOLD,
                val: VAL,
                labels: Labels::Stockfish,
            },
            rows,
        })
    }

    /// The rows' content as one hash (sha256, hex): FENs, games, plies and every label, in
    /// order, with the HOLD and VAL sizes. What a DN cache and a fly's figures are keyed by: the
    /// same positions relabelled, or split otherwise, hash differently under the same name.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut d = Sha256::new();
        d.update((self.meta.hold as u64).to_le_bytes());
        d.update((self.meta.val as u64).to_le_bytes());
        // A master-move dataset says so in its hash (a Stockfish one hashes as it always has).
        if self.meta.labels != Labels::Stockfish {
            d.update(b"master move");
        }
        d.update(self.encode_rows());
        flychess_brain::files::hex(&d.finalize())
    }

    /// The rows as the file stores them (before compression).
    fn encode_rows(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for r in &self.rows {
            body.push(r.fen.len() as u8);
            body.extend_from_slice(r.fen.as_bytes());
            body.extend_from_slice(&r.game.to_le_bytes());
            body.extend_from_slice(&r.ply.to_le_bytes());
            body.push(r.legal);
            body.push(r.moves.len() as u8);
            for m in &r.moves {
                body.extend_from_slice(&[m.mv.from, m.mv.to, m.mv.promotion]);
                let (kind, value) = match m.score {
                    Score::Cp(v) => (0u8, v),
                    Score::Mate(v) => (1u8, v),
                };
                body.push(kind);
                body.extend_from_slice(&value.to_le_bytes());
                for x in m.wdl.unwrap_or([u16::MAX; 3]) {
                    body.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        body
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let body = self.encode_rows();
        // The highest level for the small shipped files; a quicker one where it would take minutes.
        let level = if self.rows.len() > 200_000 { 9 } else { 19 };
        let packed = pack(&body, level).map_err(|e| Error::io(path, e))?;
        Ok(container::write(path, MAGIC, FORMAT_VERSION, &Meta { rows: self.rows.len(), ..self.meta.clone() }, &packed)?)
    }

    pub fn load(path: &Path) -> Result<Dataset> {
        let (meta, packed): (Meta, Vec<u8>) = container::read(path, MAGIC, FORMAT_VERSION, "dataset")?;
        let bad = |what: &str| Error::table(path, what.to_string());
        // The header's row count is the file's word, not a fact: the rows may take at most what
        // that many of the largest rows take (and no more than a zstd ratio far above the real
        // one allows), and the row list grows only as rows are read.
        let limit = (meta.rows as u64).saturating_mul(LARGEST_ROW).min(packed.len() as u64 * 256 + (1 << 20));
        let body = unpack_at_most(path, &packed, limit, "rows")?
            .ok_or_else(|| Error::table(path, format!("the rows unpack to more than {} rows can hold: damaged", meta.rows)))?;
        let mut rows = Vec::with_capacity(meta.rows.min(body.len() / SMALLEST_ROW as usize));
        let mut rest = &body[..];
        for _ in 0..meta.rows {
            rows.push(read_row(&mut rest).map_err(|e| bad(&e))?);
        }
        Ok(Dataset { meta, rows })
    }
}

/// A zstd-packed body of the file at `path` unpacked, but never past `limit` bytes: None when it
/// would unpack to more (a damaged body is refused, not unpacked into whatever it claims). `what`
/// names the body in errors.
pub fn unpack_at_most(path: &Path, packed: &[u8], limit: u64, what: &str) -> Result<Option<Vec<u8>>> {
    let mut body = Vec::new();
    let decoder = unpacker(packed).map_err(|e| Error::io(path, e))?;
    std::io::Read::read_to_end(&mut std::io::Read::take(decoder, limit + 1), &mut body)
        .map_err(|e| Error::table(path, format!("damaged {what}: {e}")))?;
    Ok((body.len() as u64 <= limit).then_some(body))
}

/// Packs a dataset's rows (zstd at `level`). zstd is the `native` feature's: a page, without it,
/// neither writes nor reads a dataset, and says so.
#[cfg(feature = "native")]
fn pack(body: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    zstd::encode_all(body, level)
}

/// The rows of a packed body as they unpack (zstd).
#[cfg(feature = "native")]
fn unpacker<'a>(packed: impl BufRead + Send + 'a) -> std::io::Result<impl std::io::Read + Send + 'a> {
    zstd::stream::read::Decoder::with_buffer(packed)
}

#[cfg(not(feature = "native"))]
fn pack(_: &[u8], _: i32) -> std::io::Result<Vec<u8>> {
    Err(no_zstd())
}

#[cfg(not(feature = "native"))]
fn unpacker<'a>(_: impl BufRead + Send + 'a) -> std::io::Result<std::io::Empty> {
    Err(no_zstd())
}

#[cfg(not(feature = "native"))]
fn no_zstd() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::Unsupported, "datasets are zstd-packed, which only the desktop program reads and writes")
}

/// Reads one row as `encode_rows` wrote it; the error says what is wrong ("rows end early" when
/// the bytes stop inside a row).
fn read_row(r: &mut impl std::io::Read) -> std::result::Result<Row, String> {
    let mut take = |n: usize| -> std::result::Result<Vec<u8>, String> {
        let mut b = vec![0u8; n];
        r.read_exact(&mut b).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof { "rows end early".to_string() } else { format!("damaged rows: {e}") }
        })?;
        Ok(b)
    };
    let fen_len = take(1)?[0] as usize;
    let fen = String::from_utf8(take(fen_len)?).map_err(|_| "a FEN is not text".to_string())?;
    let game = u32::from_le_bytes(take(4)?.try_into().expect("4"));
    let ply = u16::from_le_bytes(take(2)?.try_into().expect("2"));
    let legal = take(1)?[0];
    let k = take(1)?[0] as usize;
    let mut moves = Vec::with_capacity(k);
    for _ in 0..k {
        let m = take(14)?;
        let (mv, kind) = (MoveCode { from: m[0], to: m[1], promotion: m[2] }, m[3]);
        let value = i32::from_le_bytes(m[4..8].try_into().expect("4"));
        let wdl = [8, 10, 12].map(|i| u16::from_le_bytes([m[i], m[i + 1]]));
        moves.push(MoveLabel {
            mv,
            score: if kind == 1 { Score::Mate(value) } else { Score::Cp(value) },
            wdl: (wdl != [u16::MAX; 3]).then_some(wdl),
        });
    }
    Ok(Row { fen, game, ply, legal, moves })
}

/// A dataset's rows read one at a time off its file (the whole file's checksum is checked first,
/// by a streamed pass): memory stays one row whatever the size of the dataset.
pub struct RowStream {
    path: std::path::PathBuf,
    pub meta: Meta,
    rows: Box<dyn std::io::Read + Send>,
    left: usize,
}

use std::io::Read as _;

impl Dataset {
    /// Opens `path` for `RowStream`.
    pub fn stream(path: &Path) -> Result<RowStream> {
        let (meta, offset, end) = container::check_streamed::<Meta>(path, MAGIC, FORMAT_VERSION, "dataset")?;
        use std::io::{Read, Seek};
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        f.seek(std::io::SeekFrom::Start(offset)).map_err(|e| Error::io(path, e))?;
        let packed = std::io::BufReader::new(f.take(end - offset));
        let decoder = unpacker(packed).map_err(|e| Error::io(path, e))?;
        // As in `load`: the rows unpack to at most what the header's count of rows can hold.
        let limit = (meta.rows as u64).saturating_mul(LARGEST_ROW).min((end - offset).saturating_mul(256) + (1 << 20));
        Ok(RowStream { path: path.to_path_buf(), left: meta.rows, meta, rows: Box::new(std::io::BufReader::new(decoder.take(limit))) })
    }
}

impl RowStream {
    /// The dataset's content hash (as `Dataset::content_hash`) read off the file without holding
    /// it: the rows' bytes as stored, hashed as they unpack. Consumes the stream.
    pub fn content_hash(mut self) -> Result<String> {
        use sha2::{Digest, Sha256};
        let mut d = Sha256::new();
        d.update((self.meta.hold as u64).to_le_bytes());
        d.update((self.meta.val as u64).to_le_bytes());
        if self.meta.labels != Labels::Stockfish {
            d.update(b"master move");
        }
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = self.rows.read(&mut buf).map_err(|e| Error::table(&self.path, format!("damaged rows: {e}")))?;
            if n == 0 {
                break;
            }
            d.update(&buf[..n]);
        }
        Ok(flychess_brain::files::hex(&d.finalize()))
    }
}

impl Iterator for RowStream {
    type Item = Result<Row>;
    fn next(&mut self) -> Option<Result<Row>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(read_row(&mut self.rows).map_err(|e| {
            self.left = 0;
            Error::table(&self.path, e)
        }))
    }
}

/// The human test shipped with the project: 4,096 positions (HOLD) and 2,048 (VAL), one from
/// each of 6,144 master games no shipped row came from, labelled with the master's move and the
/// result (`flychess data games --positions 0 --out sim/brain/data/human-test.flyd`).
#[cfg(feature = "native")]
pub fn human_test_path() -> std::path::PathBuf {
    flychess_brain::shipped::dir().join("human-test.flyd")
}

/// The labelled positions shipped with the project (from ../shared/data, converted and committed;
/// embedded in the binary and written out by `shipped`).
#[cfg(feature = "native")]
pub fn shipped_path() -> std::path::PathBuf {
    flychess_brain::shipped::dir().join("positions.flyd")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"i": 0, "fen": "rnbqkb1r/ppp2ppp/4pn2/8/2BP4/4PN2/PP3PPP/RNBQK2R b KQkq - 0 5", "game": 2568, "ply": 9, "legal": 34, "depth": 10, "moves": [{"uci": "c7c5", "cp": -44, "mate": null, "wdl": [1, 933, 66]}, {"uci": "a7a6", "cp": null, "mate": 3, "wdl": null}]}"#;

    #[test]
    fn the_shipped_flies_and_positions_load() {
        let root = tempfile::tempdir().unwrap();
        let dir = flychess_brain::shipped::materialise(root.path()).unwrap();
        assert!(crate::fly::Fly::load(&dir.join("flies/backprop.fly")).is_ok());
        assert!(Dataset::load(&dir.join("positions.flyd")).unwrap().rows.len() > 4_096 + 2_048);
    }

    #[test]
    fn uci_codes_round_trip() {
        for m in ["e2e4", "a7a8q", "h2h1n", "e1g1"] {
            assert_eq!(MoveCode::parse_uci(m).unwrap().uci(), m);
        }
        assert_eq!(MoveCode::parse_uci("a1h8").unwrap(), MoveCode { from: 0, to: 63, promotion: 0 });
        for bad in ["", "e2", "e2e9", "i2e4", "e7e8k", "e2e4qq"] {
            assert!(MoveCode::parse_uci(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn jsonl_imports_and_the_file_round_trips() {
        let d = Dataset::from_jsonl(LINE.as_bytes(), "test", "sf").unwrap();
        assert_eq!(d.rows.len(), 1);
        assert_eq!(d.rows[0].moves[1].score, Score::Mate(3));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.flyd");
        d.save(&p).unwrap();
        assert_eq!(Dataset::load(&p).unwrap(), d);
        let mut bytes = std::fs::read(&p).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        std::fs::write(&p, bytes).unwrap();
        assert!(Dataset::load(&p).unwrap_err().to_string().contains("damaged"));
    }

    #[test]
    fn a_header_that_overstates_or_understates_its_rows_is_refused_without_the_memory_it_asks_for() {
        let d = Dataset::from_jsonl(LINE.as_bytes(), "test", "sf").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.flyd");
        let packed = zstd::encode_all(&d.encode_rows()[..], 3).unwrap();
        // A header claiming rows by the quintillion over one row's bytes: no allocation that size.
        let huge = Meta { rows: usize::MAX / 8, ..d.meta.clone() };
        container::write(&p, MAGIC, FORMAT_VERSION, &huge, &packed).unwrap();
        assert!(Dataset::load(&p).unwrap_err().to_string().contains("rows end early"));
        // A small frame that unpacks to 64 MiB under a one-row header: refused before it is all read.
        let bomb = zstd::encode_all(&vec![0u8; 64 << 20][..], 19).unwrap();
        assert!(bomb.len() < 1 << 16);
        container::write(&p, MAGIC, FORMAT_VERSION, &Meta { rows: 1, ..d.meta.clone() }, &bomb).unwrap();
        let e = Dataset::load(&p).unwrap_err().to_string();
        assert!(e.contains("more than 1 rows can hold") && e.contains("x.flyd"), "{e}");
    }

    #[test]
    fn a_streamed_read_gives_the_rows_and_hash_of_a_whole_read_and_refuses_a_damaged_file() {
        let dir = tempfile::tempdir().unwrap();
        let shipped = flychess_brain::shipped::materialise(dir.path()).unwrap();
        for name in ["positions.flyd", "human-test.flyd"] {
            let path = shipped.join(name);
            let whole = Dataset::load(&path).unwrap();
            let rows: Vec<Row> = Dataset::stream(&path).unwrap().collect::<Result<_>>().unwrap();
            assert_eq!(rows, whole.rows, "{name}");
            assert_eq!(Dataset::stream(&path).unwrap().content_hash().unwrap(), whole.content_hash(), "{name}");
        }
        let human = Dataset::load(&shipped.join("human-test.flyd")).unwrap();
        assert_eq!(human.meta.labels, Labels::MasterMove);
        assert_ne!(
            human.content_hash(),
            Dataset { meta: Meta { labels: Labels::Stockfish, ..human.meta.clone() }, ..human.clone() }.content_hash()
        );
        let p = dir.path().join("x.flyd");
        let mut bytes = std::fs::read(shipped.join("human-test.flyd")).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 4;
        std::fs::write(&p, &bytes).unwrap();
        let e = Dataset::stream(&p).err().expect("a damaged file is refused").to_string();
        assert!(e.contains("damaged") && e.contains("x.flyd"), "{e}");
        std::fs::write(&p, &bytes[..n / 2]).unwrap();
        assert!(Dataset::stream(&p).is_err(), "a truncated file is refused");
    }

    #[test]
    fn a_malformed_row_names_its_line() {
        let bad_fen = LINE.replace("rnbqkb1r/", "rnbqkb1rr/");
        let text = format!("{LINE}\n{bad_fen}\n");
        let e = Dataset::from_jsonl(text.as_bytes(), "t", "s").unwrap_err().to_string();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = Dataset::from_jsonl("{not json".as_bytes(), "t", "s").unwrap_err().to_string();
        assert!(e.starts_with("line 1:"), "{e}");
        let bad_move = LINE.replace("c7c5", "c7c9");
        assert!(Dataset::from_jsonl(bad_move.as_bytes(), "t", "s").unwrap_err().to_string().contains("not a UCI move"));
    }
}
