//! Opening names from the Lichess chess-openings table (CC0, `assets/openings.tsv`, embedded in
//! the binary). A game is named by the longest named line it follows move by move from the
//! initial position; a position lookup (Zobrist key of the position a move leads to) only marks
//! which moves are book moves, so transpositions are marked but never rename the game.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use flychess_fly::readout::position_key;

const TABLE: &str = include_str!("../../../assets/openings.tsv");

pub struct Opening {
    pub eco: String,
    pub name: String,
    pub uci: Vec<String>,
}

pub struct Openings {
    lines: Vec<Opening>,
    /// Lines by their move sequence joined with spaces.
    by_moves: HashMap<String, usize>,
    /// Keys of every position a named line reaches.
    book: HashSet<u64>,
}

impl Openings {
    /// Parses a table (`eco<TAB>name<TAB>uci moves` per line, `#` comments); lines whose moves
    /// are not legal are skipped with a warning.
    pub fn parse(text: &str) -> Openings {
        let mut lines = Vec::new();
        let mut by_moves = HashMap::new();
        let mut book = HashSet::new();
        for row in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
            let mut cols = row.split('\t');
            let (Some(eco), Some(name), Some(moves)) = (cols.next(), cols.next(), cols.next()) else {
                tracing::warn!("opening table: skipping {row:?}");
                continue;
            };
            let uci: Vec<String> = moves.split_whitespace().map(str::to_owned).collect();
            let mut pos = Chess::default();
            let mut ok = true;
            for u in &uci {
                match u.parse::<UciMove>().ok().and_then(|m| m.to_move(&pos).ok()) {
                    Some(m) => pos.play_unchecked(m),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok {
                tracing::warn!("opening table: {name} has an illegal move");
                continue;
            }
            book.insert(position_key(&pos));
            by_moves.insert(uci.join(" "), lines.len());
            lines.push(Opening { eco: eco.into(), name: name.into(), uci });
        }
        Openings { lines, by_moves, book }
    }

    /// The embedded table, parsed once.
    pub fn shipped() -> &'static Openings {
        static SHIPPED: OnceLock<Openings> = OnceLock::new();
        SHIPPED.get_or_init(|| Openings::parse(TABLE))
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The longest named line that `moves` (UCI, from the initial position) follows move by move.
    pub fn name(&self, moves: &[String]) -> Option<&Opening> {
        (1..=moves.len()).rev().find_map(|n| self.by_moves.get(&moves[..n].join(" ")).map(|&i| &self.lines[i]))
    }

    /// Whether `pos` is a position of some named line (the move leading to it is a book move).
    pub fn is_book(&self, pos: &Chess) -> bool {
        self.book.contains(&position_key(pos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_longest_followed_line_names_the_game() {
        let o = Openings::shipped();
        assert!(o.len() > 3000, "{}", o.len());
        assert_eq!(o.name(&moves("e2e4 c7c5")).unwrap().name, "Sicilian Defense");
        assert_eq!(o.name(&moves("e2e4 c7c5")).unwrap().eco, "B20");
        // A move out of book keeps the last name.
        let longer = o.name(&moves("e2e4 c7c5 g1f3 d7d6 a2a3 a7a6 h2h3")).unwrap();
        assert!(longer.name.starts_with("Sicilian Defense"), "{}", longer.name);
        assert!(o.name(&moves("a2a3 h7h6 h2h3")).is_none_or(|l| l.uci.len() <= 2));
        assert!(o.name(&[]).is_none());
    }

    #[test]
    fn transpositions_are_book_moves_but_do_not_rename() {
        let o = Openings::parse("A00\tStart A\te2e4 e7e5 g1f3\nA01\tStart B\tg1f3 e7e5\n");
        let mut pos = Chess::default();
        // 1. Nf3 e5 2. e4 reaches "Start A"'s position by another order.
        for u in ["g1f3", "e7e5", "e2e4"] {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        assert!(o.is_book(&pos));
        assert_eq!(o.name(&moves("g1f3 e7e5 e2e4")).unwrap().name, "Start B");
        assert_eq!(Openings::parse("bad row\nA00\tX\te2e5\n").len(), 0);
    }
}
