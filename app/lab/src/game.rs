//! One game of chess as the app keeps it: the start position, every move played, the position
//! after each, their SAN, and how the game ended (by the rules — checkmate, stalemate,
//! insufficient material, a real threefold repetition, the fifty-move rule — or by resignation).
//! It also reads and writes PGN (pgn-reader for reading, so a saved game reads back to the same
//! moves) and answers the questions the Play tab asks: whose turn, what was the last move, which
//! positions came before (for the fly's repetition avoidance).

use std::ops::ControlFlow;

use anyhow::{Result, anyhow};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Position};

use flychess_arena::play::rules_ending;
use flychess_fly::readout::position_key;

/// How the game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// "1-0", "0-1" or "1/2-1/2".
    pub result: String,
    /// "checkmate", "stalemate", "threefold repetition", "White resigned", …
    pub reason: String,
}

#[derive(Clone, Debug)]
pub struct Game {
    /// Positions: `positions[0]` is the start, `positions[i + 1]` follows `moves[i]`.
    positions: Vec<Chess>,
    moves: Vec<Move>,
    san: Vec<String>,
    keys: Vec<u64>,
    /// A FEN when the game did not start from the initial position.
    start_fen: Option<String>,
    resigned: Option<Color>,
    /// PGN tags kept from a loaded game (White, Black, Event, …).
    pub tags: Vec<(String, String)>,
}

impl Default for Game {
    fn default() -> Self {
        Game::from_position(Chess::default(), None)
    }
}

impl Game {
    pub fn from_position(start: Chess, start_fen: Option<String>) -> Game {
        let key = position_key(&start);
        Game { positions: vec![start], moves: Vec::new(), san: Vec::new(), keys: vec![key], start_fen, resigned: None, tags: Vec::new() }
    }

    pub fn from_fen(fen: &str) -> Result<Game> {
        let pos = flychess_brain::chess::position_from_fen(fen).map_err(|e| anyhow!("{e}"))?;
        let standard = Fen::from_position(&Chess::default(), EnPassantMode::Legal).to_string();
        let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        let start_fen = (fen != standard).then_some(fen);
        Ok(Game::from_position(pos, start_fen))
    }

    /// The position after the last move.
    pub fn current(&self) -> &Chess {
        self.positions.last().expect("a game has a start position")
    }

    /// The position after `ply` moves (0: the start).
    pub fn position(&self, ply: usize) -> &Chess {
        &self.positions[ply.min(self.moves.len())]
    }

    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    pub fn san(&self) -> &[String] {
        &self.san
    }

    pub fn uci(&self) -> Vec<String> {
        self.moves.iter().map(flychess_brain::chess::uci).collect()
    }

    /// Keys of every position so far (the last is the current one), for repetition checks.
    /// The game's positions from its start to the current one.
    pub fn positions(&self) -> &[Chess] {
        &self.positions
    }

    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    pub fn turn(&self) -> Color {
        self.current().turn()
    }

    pub fn starts_from_initial_position(&self) -> bool {
        self.start_fen.is_none()
    }

    pub fn ending(&self) -> Option<Ending> {
        if let Some(loser) = self.resigned {
            let result = if loser == Color::White { "0-1" } else { "1-0" };
            let who = if loser == Color::White { "White" } else { "Black" };
            return Some(Ending { result: result.into(), reason: format!("{who} resigned") });
        }
        rules_ending(self.current(), &self.keys).map(|e| Ending { result: e.result.into(), reason: e.reason.into() })
    }

    pub fn is_over(&self) -> bool {
        self.ending().is_some()
    }

    /// Plays `m` if the game goes on and the move is legal; the SAN played is returned.
    pub fn play(&mut self, m: Move) -> Result<String> {
        if let Some(end) = self.ending() {
            return Err(anyhow!("the game is over ({})", end.reason));
        }
        let mut pos = self.current().clone();
        if !pos.is_legal(m) {
            return Err(anyhow!("{} is not legal here", flychess_brain::chess::uci(&m)));
        }
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
        self.keys.push(position_key(&pos));
        self.positions.push(pos);
        self.moves.push(m);
        self.san.push(san.clone());
        Ok(san)
    }

    /// Plays a move given in UCI (e2e4, e7e8q) or SAN (Nf3, exd5, O-O).
    pub fn play_text(&mut self, text: &str) -> Result<String> {
        let m = parse_move(self.current(), text)?;
        self.play(m)
    }

    /// Takes back the last `n` moves (fewer if the game is shorter); undoes a resignation too.
    pub fn take_back(&mut self, n: usize) -> usize {
        self.resigned = None;
        let n = n.min(self.moves.len());
        for _ in 0..n {
            self.moves.pop();
            self.san.pop();
            self.positions.pop();
            self.keys.pop();
        }
        n
    }

    pub fn resign(&mut self, who: Color) {
        if !self.is_over() {
            self.resigned = Some(who);
        }
    }

    pub fn fen(&self, ply: usize) -> String {
        Fen::from_position(self.position(ply), EnPassantMode::Legal).to_string()
    }

    /// The game as PGN text with the seven-tag roster (plus FEN/SetUp when needed and the
    /// termination).
    pub fn pgn(&self, white: &str, black: &str, date: &str) -> String {
        let result = self.ending().map(|e| e.result).unwrap_or_else(|| "*".into());
        let mut tags: Vec<(String, String)> = vec![
            ("Event".into(), "Fly Chess game".into()),
            ("Site".into(), "Fly Chess".into()),
            ("Date".into(), date.replace('-', ".")),
            ("Round".into(), "-".into()),
            ("White".into(), white.into()),
            ("Black".into(), black.into()),
            ("Result".into(), result.clone()),
        ];
        if let Some(fen) = &self.start_fen {
            tags.push(("SetUp".into(), "1".into()));
            tags.push(("FEN".into(), fen.clone()));
        }
        if let Some(end) = self.ending() {
            tags.push(("Termination".into(), end.reason));
        }
        let mut out = String::new();
        for (k, v) in tags {
            out.push_str(&format!("[{k} \"{}\"]\n", v.replace('\\', "\\\\").replace('"', "\\\"")));
        }
        out.push('\n');
        let first = self.positions[0].fullmoves().get() as usize;
        let black_first = self.positions[0].turn() == Color::Black;
        let mut line = String::new();
        for (i, san) in self.san.iter().enumerate() {
            let ply = i + usize::from(black_first);
            let number = first + ply / 2;
            if ply % 2 == 0 {
                line.push_str(&format!("{number}. "));
            } else if i == 0 {
                line.push_str(&format!("{number}... "));
            }
            line.push_str(san);
            line.push(' ');
        }
        line.push_str(&result);
        // Wrap at 80 columns as PGN export format asks.
        let mut width = 0;
        for word in line.split(' ') {
            if width > 0 && width + 1 + word.len() > 79 {
                out.push('\n');
                width = 0;
            } else if width > 0 {
                out.push(' ');
                width += 1;
            }
            out.push_str(word);
            width += word.len();
        }
        out.push('\n');
        out
    }

    /// Reads the first game of a PGN text (tags, FEN set-ups, SAN moves; comments and variations
    /// are skipped). Any illegal or unreadable move is an error naming it.
    pub fn from_pgn(text: &str) -> Result<Game> {
        let mut reader = pgn_reader::Reader::new(std::io::Cursor::new(text.as_bytes()));
        let mut visitor = PgnGame;
        match reader.read_game(&mut visitor) {
            Ok(Some(Ok(game))) => Ok(game),
            Ok(Some(Err(e))) => Err(e),
            Ok(None) => Err(anyhow!("no game found in the PGN")),
            Err(e) => Err(anyhow!("the PGN could not be read: {e}")),
        }
    }
}

/// A move typed or given as text: UCI first, then SAN.
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move> {
    let text = text.trim();
    if let Ok(uci) = text.parse::<UciMove>()
        && let Ok(m) = uci.to_move(pos)
    {
        return Ok(m);
    }
    let san: San = text.trim_end_matches(['+', '#', '!', '?']).parse().map_err(|_| anyhow!("{text:?} is neither a UCI nor a SAN move"))?;
    san.to_move(pos).map_err(|_| anyhow!("{text} is not a legal move here"))
}

/// pgn-reader visitor building a [`Game`].
struct PgnGame;

struct Building {
    tags: Vec<(String, String)>,
    game: Option<Game>,
    error: Option<anyhow::Error>,
}

impl pgn_reader::Visitor for PgnGame {
    type Tags = Vec<(String, String)>;
    type Movetext = Building;
    type Output = Result<Game>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: pgn_reader::RawTag<'_>) -> ControlFlow<Self::Output> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let fen = tags.iter().find(|(k, _)| k.eq_ignore_ascii_case("FEN")).map(|(_, v)| v.clone());
        let game = match fen {
            Some(f) => match f.parse::<Fen>().map_err(|e| anyhow!("bad FEN tag {f:?}: {e}")).and_then(|fen| {
                Chess::from_setup(fen.into_setup(), CastlingMode::Standard).map_err(|e| anyhow!("impossible FEN tag {f:?}: {e}"))
            }) {
                Ok(pos) => Ok(Game::from_position(pos, Some(f))),
                Err(e) => Err(e),
            },
            None => Ok(Game::default()),
        };
        let (game, error) = match game {
            Ok(mut g) => {
                g.tags = tags.clone();
                (Some(g), None)
            }
            Err(e) => (None, Some(e)),
        };
        ControlFlow::Continue(Building { tags, game, error })
    }

    fn san(&mut self, b: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if let Some(game) = &mut b.game {
            match san_plus.san.to_move(game.current()) {
                Ok(m) => {
                    if let Err(e) = game.play(m) {
                        b.error = Some(anyhow!("move {} ({san_plus}): {e}", game.plies() + 1));
                        b.game = None;
                    }
                }
                Err(_) => {
                    b.error = Some(anyhow!("move {} ({san_plus}) is not legal", game.plies() + 1));
                    b.game = None;
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _b: &mut Self::Movetext) -> ControlFlow<Self::Output, pgn_reader::Skip> {
        ControlFlow::Continue(pgn_reader::Skip(true))
    }

    fn end_game(&mut self, b: Self::Movetext) -> Self::Output {
        let _ = &b.tags;
        match (b.game, b.error) {
            (_, Some(e)) => Err(e),
            (Some(g), None) => Ok(g),
            (None, None) => Err(anyhow!("the game could not be built")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threefold_is_called_on_the_third_occurrence_only() {
        let mut g = Game::default();
        for m in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"] {
            g.play_text(m).unwrap();
            assert!(g.ending().is_none(), "after {m}");
        }
        // The start position now occurs for the third time.
        g.play_text("Ng8").unwrap();
        assert_eq!(g.ending().unwrap().reason, "threefold repetition");
        assert!(g.play_text("Nf3").is_err(), "no move after the end");
        g.take_back(1);
        assert!(g.ending().is_none());
    }

    #[test]
    fn pgn_round_trip_with_a_fen_start_and_black_to_move() {
        let mut g = Game::from_fen("4k3/P7/8/8/8/8/8/4K3 b - - 0 40").unwrap();
        for m in ["Kd7", "a8=Q", "Kc7", "Qa5+"] {
            g.play_text(m).unwrap();
        }
        let text = g.pgn("Me \"the human\"", "fly", "2026-11-30");
        assert!(text.contains("40... Kd7 41. a8=Q"), "{text}");
        let back = Game::from_pgn(&text).unwrap();
        assert_eq!(back.san(), g.san());
        assert_eq!(back.tags.iter().find(|(k, _)| k == "White").unwrap().1, "Me \"the human\"");
    }

    #[test]
    fn bad_pgn_and_moves_are_errors_not_panics() {
        assert!(Game::from_pgn("1. e4 e5 2. Ke3 Nc6 *").is_err());
        assert!(Game::from_pgn("[FEN \"not a fen\"]\n\n1. e4 *").is_err());
        assert!(Game::from_pgn("").is_err());
        let mut g = Game::default();
        assert!(g.play_text("e5").is_err());
        assert!(g.play_text("zz99").is_err());
        assert_eq!(g.play_text("e2e4").unwrap(), "e4");
        assert_eq!(g.play_text("e5").unwrap(), "e5");
    }

    #[test]
    fn resignation_ends_and_a_takeback_undoes_it() {
        let mut g = Game::default();
        g.play_text("e4").unwrap();
        g.resign(Color::Black);
        assert_eq!(g.ending().unwrap().result, "1-0");
        g.take_back(0);
        assert!(g.ending().is_none());
    }
}
