//! The time `go` gives and what a think costs: `go`'s tokens (`parse_go`), the clock turned into a
//! budget for the side to move (`Clock::budget`), and the cost of thinking 1, a search's batch and
//! a look-ahead's boards on this machine, corrected by each think (`Costs`).

use std::time::Duration;

use shakmaty::Color;
use shakmaty::uci::UciMove;

use flychess_arena::search::LEAF_BATCH;

use super::shorten;

/// What a think of the brain costs on this machine: measured when a player is made ready
/// (`warm_up`: one board, a search's batch, a look-ahead's boards) and corrected by each think
/// since (`load`: how much slower the machine is now than when measured).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Costs {
    /// Milliseconds to think 1, `LEAF_BATCH` and `WIDE` boards at once.
    pub(super) one: f64,
    pub(super) batch: f64,
    pub(super) wide: f64,
    pub(super) load: f64,
}

/// The boards of the widest think measured (about a look-ahead's: the board and its moves').
pub(super) const WIDE: usize = 24;

impl Costs {
    /// The time a think of `boards` boards at once takes now: linear between the sizes measured
    /// (beyond the widest, on its slope).
    pub(super) fn think(&self, boards: usize) -> Duration {
        let n = boards.max(1) as f64;
        let (b, w) = (LEAF_BATCH as f64, WIDE as f64);
        let ms = if n <= b {
            self.one + (self.batch - self.one) * (n - 1.0) / (b - 1.0)
        } else {
            self.batch + (self.wide - self.batch).max(0.0) * (n - b) / (w - b)
        };
        Duration::from_secs_f64(ms.max(0.0) * self.load / 1000.0)
    }

    /// A think that was estimated at `expected` (at the load of the measurement) took `took`:
    /// a slower machine is believed at once, a faster one a quarter at a time.
    pub(super) fn observe(&mut self, expected: Duration, took: Duration) {
        let base = expected.as_secs_f64() / self.load;
        if base <= 0.0 {
            return;
        }
        let ratio = took.as_secs_f64() / base;
        self.load = if ratio > self.load { ratio } else { 0.75 * self.load + 0.25 * ratio }.clamp(0.5, 50.0);
    }
}

/// What `go` asked for.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Go {
    /// Hold `bestmove` until `stop` (or `ponderhit`).
    pub(super) hold: bool,
    /// `go infinite`: no time limit at all.
    pub(super) infinite: bool,
    /// Restrict the choice to these moves (`searchmoves`).
    pub(super) searchmoves: Vec<String>,
    pub(super) clock: Clock,
    /// `depth` and `mate`: no player here searches by depth (said in an `info string`).
    pub(super) depth: Option<u64>,
    pub(super) mate: Option<u64>,
    /// `nodes`: a search player's most simulations.
    pub(super) nodes: Option<u64>,
}

/// The time `go` gives, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Clock {
    pub(super) movetime: Option<u64>,
    pub(super) wtime: Option<u64>,
    pub(super) btime: Option<u64>,
    pub(super) winc: Option<u64>,
    pub(super) binc: Option<u64>,
    pub(super) movestogo: Option<u64>,
}

/// The longest an analysis window waits for an `info` line while the engine thinks or holds
/// its answer (`go infinite`); a heartbeat `info time T nodes N` fills the silence.
pub(super) const HEARTBEAT: Duration = Duration::from_millis(800);

/// How long a slice of a search with no deadline runs before its lines are printed.
pub(super) const SLICE: Duration = Duration::from_millis(500);

/// Kept back from every budget for what follows the search (the lines' values, the answer, the
/// pipe to the GUI), in milliseconds.
pub(super) const MARGIN_MS: u64 = 40;
/// Moves still to play when the GUI does not say (`movestogo`).
pub(super) const MOVES_TO_GO: u64 = 30;

impl Clock {
    /// How long a search may run for the side to move: `movetime` less a margin (at least half of
    /// it); else its clock shared over the moves to go, with most of its increment, never more
    /// than a quarter of what is left; None when no time was given (`go infinite`, `go nodes N`).
    pub(super) fn budget(&self, turn: Color) -> Option<Duration> {
        if let Some(m) = self.movetime {
            return Some(Duration::from_millis(m.saturating_sub(MARGIN_MS).max(m / 2)));
        }
        let (time, inc) = match turn {
            Color::White => (self.wtime?, self.winc.unwrap_or(0)),
            Color::Black => (self.btime?, self.binc.unwrap_or(0)),
        };
        let share = time / self.movestogo.unwrap_or(MOVES_TO_GO).max(1) + inc * 3 / 4;
        Some(Duration::from_millis(share.min(time / 4).saturating_sub(MARGIN_MS).max(time.min(10) / 2)))
    }
}

/// `go`'s tokens: `infinite` and `ponder` hold the answer, `searchmoves` restricts it, the
/// limits (`wtime btime winc binc movestogo movetime depth nodes mate`) are kept for the budget.
/// A limit without a number (or a negative one: a GUI's clock gone below zero counts as 0), or a
/// token nobody knows, is said on stderr and passed over.
pub(super) fn parse_go(words: &[&str]) -> Go {
    let mut go = Go::default();
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "infinite" => (go.hold, go.infinite) = (true, true),
            "ponder" => go.hold = true,
            "searchmoves" => {
                while let Some(m) = words.get(i + 1).filter(|w| w.parse::<UciMove>().is_ok()) {
                    go.searchmoves.push(m.to_string());
                    i += 1;
                }
            }
            limit @ ("wtime" | "btime" | "winc" | "binc" | "movestogo" | "movetime" | "depth" | "nodes" | "mate") => {
                match words.get(i + 1).and_then(|v| v.parse::<i64>().ok()) {
                    None => eprintln!("uci: go {limit} without a number"),
                    Some(v) => {
                        i += 1;
                        let v = Some(v.max(0) as u64);
                        match limit {
                            "wtime" => go.clock.wtime = v,
                            "btime" => go.clock.btime = v,
                            "winc" => go.clock.winc = v,
                            "binc" => go.clock.binc = v,
                            "movestogo" => go.clock.movestogo = v,
                            "movetime" => go.clock.movetime = v,
                            "depth" => go.depth = v,
                            "nodes" => go.nodes = v,
                            _ => go.mate = v,
                        }
                    }
                }
            }
            other => eprintln!("uci: go: unknown token {}", shorten(other)),
        }
        i += 1;
    }
    go
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_reads_every_limit_and_holds_for_infinite_and_ponder() {
        let go = parse_go(&["wtime", "1000", "btime", "900", "winc", "10", "binc", "20", "movestogo", "20", "nodes", "64", "depth", "3"]);
        assert_eq!(
            go.clock,
            Clock { wtime: Some(1000), btime: Some(900), winc: Some(10), binc: Some(20), movestogo: Some(20), movetime: None }
        );
        assert_eq!((go.nodes, go.depth, go.hold), (Some(64), Some(3), false));
        assert!(parse_go(&["infinite"]).hold && parse_go(&["infinite"]).infinite);
        assert!(parse_go(&["ponder", "wtime", "5"]).hold && !parse_go(&["ponder"]).infinite);
        let go = parse_go(&["searchmoves", "e2e4", "d2d4", "movetime", "50"]);
        assert_eq!((go.searchmoves.as_slice(), go.clock.movetime), (&["e2e4".to_string(), "d2d4".to_string()][..], Some(50)));
        // A limit without its number, or a token nobody knows, is passed over; a clock below 0 is 0.
        assert_eq!(parse_go(&["depth", "x", "bogus"]), Go::default());
        assert_eq!(parse_go(&["wtime", "-30"]).clock.wtime, Some(0));
    }

    #[test]
    fn the_clock_becomes_a_budget_that_leaves_time_on_it() {
        let ms = |c: Clock, turn| c.budget(turn).map(|d| d.as_millis() as u64);
        // movetime: less the margin, never under half.
        assert_eq!(ms(Clock { movetime: Some(200), ..Default::default() }, Color::White), Some(160));
        assert_eq!(ms(Clock { movetime: Some(50), ..Default::default() }, Color::Black), Some(25));
        // The side to move's clock over 30 moves with three quarters of its increment.
        let c = Clock { wtime: Some(10_000), btime: Some(3_000), winc: Some(100), binc: Some(0), ..Default::default() };
        assert_eq!(ms(c, Color::White), Some(10_000 / 30 + 75 - MARGIN_MS));
        assert_eq!(ms(c, Color::Black), Some(3_000 / 30 - MARGIN_MS));
        // Never more than a quarter of what is left, however large the increment.
        let c = Clock { wtime: Some(400), winc: Some(5_000), ..Default::default() };
        assert_eq!(ms(c, Color::White), Some(100 - MARGIN_MS));
        // A flag about to fall still gets a sliver; no time given, no deadline.
        assert_eq!(ms(Clock { btime: Some(8), ..Default::default() }, Color::Black), Some(4));
        assert_eq!(ms(Clock::default(), Color::White), None);
        assert_eq!(ms(Clock { btime: Some(1000), ..Default::default() }, Color::White), None);
    }

    #[test]
    fn a_think_costs_more_with_more_boards_and_a_busier_machine_is_believed_at_once() {
        let mut c = Costs { one: 10.0, batch: 24.0, wide: 56.0, load: 1.0 };
        let ms = |c: &Costs, n| c.think(n).as_millis();
        assert_eq!((ms(&c, 0), ms(&c, 1), ms(&c, LEAF_BATCH), ms(&c, WIDE)), (10, 10, 24, 56));
        assert_eq!(ms(&c, 5), 18);
        // Beyond the widest measured, on its slope.
        assert_eq!(ms(&c, WIDE + 16), 88);
        // A think three times slower than expected: every estimate three times longer, at once.
        c.observe(c.think(1), Duration::from_millis(30));
        assert_eq!(ms(&c, 1), 30);
        // Faster again: a quarter of the way back each time.
        c.observe(c.think(1), Duration::from_millis(10));
        assert_eq!(ms(&c, 1), 25);
    }
}
