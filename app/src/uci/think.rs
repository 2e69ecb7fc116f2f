//! One `go`: the think in the current position within its budget (a look-ahead or a search left
//! out when the clock cannot hold it, said in an `info string`), a search with no deadline in
//! slices, and the `info` lines of each MultiPV line (score, WDL, nodes, the move's probability).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use shakmaty::{Chess, Move, Position};

use flychess_arena::players::{Considered, Entrant};
use flychess_arena::search::{Budget, LEAF_BATCH};
use flychess_brain::brain::simulator::EngineChoice;
use flychess_brain::chess::uci;

use super::Session;
use super::clock::{Clock, Go, SLICE};
use super::wire::{Out, write_line};

impl Session {
    /// Says `words` once a session for `key` (an option or limit the player in force does not use).
    pub(super) fn say_once(&mut self, out: &Out, key: &str, words: &str) -> Result<()> {
        if self.said.insert(format!("{}\u{0}{key}", self.seat.as_ref().map_or("", |s| s.name.as_str()))) {
            write_line(out, &format!("info string {}", words.replace(['\n', '\r'], " ")))?;
        }
        Ok(())
    }

    /// Thinks in the current position within `go`'s budget (cut short by `stop`): the info lines,
    /// and the move (None: no legal move; `0000` when the player cannot think, with the reason).
    /// A think the budget cannot hold is not started, weighed against what thinks cost here
    /// (`Costs`): a fly's look-ahead (imagination) gives way to the fly's own answer, a search to
    /// its base player's favourite when not even its first batch of leaves fits, each said in an
    /// `info string`. A search with no deadline (`go infinite`, `go nodes N`, a bare `go`) thinks
    /// in slices of `SLICE`, its lines printed after each.
    pub(super) fn go(&mut self, go: &Go, started: Instant, stop: Arc<AtomicBool>, out: &Out) -> Result<Option<String>> {
        if self.position.legal_moves().is_empty() {
            write_line(out, "info string the game is over: no legal move")?;
            return Ok(None);
        }
        let Some(name) = self.seated_for_go(out)? else { return Ok(Some("0000".into())) };
        let deadline = if go.infinite { None } else { go.clock.budget(self.position.turn()).map(|b| started + b) };
        let plan = self.plan(go, deadline);
        let thought = match self.think(go, &plan, started, stop, out) {
            Ok(t) => t,
            Err(e) => {
                write_line(out, &format!("info string no move: the player could not think ({e:#})").replace(['\n', '\r'], " "))?;
                return Ok(Some("0000".into()));
            }
        };
        self.explain(go, &name, &thought, started, out)?;
        // After the lines: the last `info string` before `bestmove`, what python-chess keeps.
        if let Some(words) = plan.left_out {
            write_line(out, &format!("info string {words}"))?;
        }
        let Thought { seen, moves, .. } = thought;
        let chosen = if go.searchmoves.is_empty() || go.searchmoves.contains(&uci(&seen.chosen)) {
            seen.chosen
        } else {
            moves.first().copied().unwrap_or(seen.chosen)
        };
        Ok(Some(uci(&chosen)))
    }

    /// Seats the player for `go` and makes it ready on this move's clock if a client never sent
    /// `isready`, saying what stands in (an engine that could not start) and what the player
    /// does not use; returns its name, or None (said) when it cannot play.
    fn seated_for_go(&mut self, out: &Out) -> Result<Option<String>> {
        if let Err(e) = self.seat() {
            write_line(out, &format!("info string no move: the player cannot play ({e:#})").replace(['\n', '\r'], " "))?;
            return Ok(None);
        }
        let uses_brain = self.prepare();
        // A client that never sent `isready`: the player is made ready on this move's clock.
        let warmed = uses_brain.as_ref().map_err(|e| anyhow!("{e:#}")).and_then(|_| self.warm_up());
        for notice in std::mem::take(&mut self.notices) {
            write_line(out, &format!("info string {}", notice.replace(['\n', '\r'], " ")))?;
        }
        let uses_brain = uses_brain?;
        if let Err(e) = warmed {
            write_line(out, &format!("info string the player could not be made ready ({e:#})").replace(['\n', '\r'], " "))?;
        }
        self.gos += 1;
        let name = self.seat.as_ref().map(|s| s.name.clone()).unwrap_or_default();
        if self.imagination_ignored {
            self.say_once(out, "imagination", &format!("Imagination is for a plain readout fly; {name} plays without it"))?;
        }
        if !uses_brain && self.engine != EngineChoice::Auto {
            self.say_once(out, "engine", &format!("Engine: {name} does not think with the brain's engine"))?;
        }
        Ok(Some(name))
    }

    /// What this move thinks, weighed against what thinks cost here (`Costs`) and the time
    /// left before `deadline`: a fly's look-ahead gives way to its own answer, a search to its
    /// base player's favourite, when the clock cannot hold it.
    fn plan(&self, go: &Go, deadline: Option<Instant>) -> Plan {
        let seat = self.seat.as_ref().expect("seated before the plan");
        let legal = self.position.legal_moves().len();
        let mut plan = Plan {
            deadline,
            plain: false,
            simulations: go.nodes.map(|n| n.min(usize::MAX as u64) as usize),
            expected: None,
            left_out: None,
        };
        let Some(costs) = self.costs else { return plan };
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let fits = |cost: Duration| left.is_none_or(|l| cost <= l);
        let plain = costs.think(1);
        if seat.plain.is_some() {
            let look = costs.think(1 + legal);
            if fits(look) {
                plan.expected = Some(look);
            } else {
                plan.plain = true;
                plan.expected = Some(plain);
                plan.left_out = Some(format!(
                    "imagination left out of this move: looking at the {legal} boards after its moves takes about {} ms here, \
                     more than the {} ms the clock gives it; the fly's own answer",
                    look.as_millis(),
                    left.unwrap_or_default().as_millis()
                ));
            }
        } else if seat.searches() {
            let first = plain + costs.think(LEAF_BATCH);
            if !fits(first) {
                plan.simulations = Some(0);
                plan.expected = Some(plain);
                plan.left_out = Some(format!(
                    "search left out of this move: its root and a first batch of {LEAF_BATCH} leaves take about {} ms here, \
                     more than the {} ms the clock gives it; the favourite of the player it aids",
                    first.as_millis(),
                    left.unwrap_or_default().as_millis()
                ));
            }
        } else if matches!(seat.seated.entrant, Entrant::Fly { glances: None, .. }) {
            plan.expected = Some(plain);
        }
        plan
    }

    /// The think itself, on the session's thread pool and engine: once, or for a search with no
    /// deadline in slices of `SLICE`, its lines printed after each, until `stop` or the search
    /// ends. What it took corrects `Costs`.
    fn think(&mut self, go: &Go, plan: &Plan, started: Instant, stop: Arc<AtomicBool>, out: &Out) -> Result<Thought> {
        let seat = self.seat.as_ref().expect("seated before the think");
        let seated = match (&seat.plain, plan.plain) {
            (Some(plain), true) => plain,
            _ => &seat.seated,
        }
        .on(self.simulator.as_ref().map(|(_, s)| s.clone()));
        let sliced = seat.searches() && plan.deadline.is_none();
        let stockfish = flychess_fly::stockfish::find_stockfish(None).ok();
        let (position, earlier, multipv, gos, show_wdl) =
            (&self.position, &self.keys[..self.keys.len() - 1], self.multipv, self.gos, self.show_wdl);
        let pool = &self.pool.as_ref().expect("made above").1;
        let (costs, deadline, simulations) = (self.costs, plan.deadline, plan.simulations);
        let (thought, took) = pool.install(|| -> Result<(Thought, Duration)> {
            let mut player = seated.player(20_000, gos, &stockfish)?;
            let searches = player.searches();
            // Boards thought by the slices so far, and the last slice's answer.
            let (mut thought, mut last) = (0, None);
            loop {
                let slice_started = Instant::now();
                let until = if sliced { Some(slice_started + SLICE) } else { deadline };
                player.set_budget(Budget { deadline: until, stop: Some(stop.clone()), simulations });
                let seen = player.consider(position, earlier)?;
                let took = slice_started.elapsed();
                let stopped = stop.load(Ordering::Relaxed);
                // A slice walks the tree of the last one again (its boards kept, so no think) before
                // it thinks a new board: one that thought none has nothing the last had not, and
                // one that was not stopped has finished the search.
                if seen.thinks == 0
                    && let Some(last) = last
                {
                    return Ok((last, took));
                }
                thought += seen.thinks;
                let lines = lines_of(&seen, multipv, &go.searchmoves);
                let moves: Vec<Move> = lines.iter().map(|&i| seen.moves.get(i).copied().unwrap_or(seen.chosen)).collect();
                // Each line's value is the board after its move, thought unless the clock has no
                // time left for it: then the first line's score is the position's own value.
                let in_time = costs.is_none_or(|c| deadline.is_none_or(|d| Instant::now() + c.think(moves.len()) <= d));
                let values = if in_time { player.values_after(position, &moves)? } else { None };
                let root_value = if values.is_none() && !in_time { seen.value } else { None };
                // Boards that went through the brain: to choose, then to value each line's move.
                let nodes = thought + values.as_ref().map_or(0, |_| moves.len());
                let t = Thought { seen, lines, moves, values, root_value, nodes, searches, printed: sliced };
                if !sliced {
                    return Ok((t, took));
                }
                t.print(out, position, show_wdl, started.elapsed().as_millis())?;
                if stopped {
                    return Ok((t, took));
                }
                last = Some(t);
            }
        })?;
        if let (Some(costs), Some(expected)) = (self.costs.as_mut(), plan.expected) {
            costs.observe(expected, took);
        }
        Ok(thought)
    }

    /// After a think: what the player does not use of `go` (the clock, depth), said once, and
    /// its lines when a sliced search has not printed them already.
    fn explain(&mut self, go: &Go, name: &str, thought: &Thought, started: Instant, out: &Out) -> Result<()> {
        let ms = started.elapsed().as_millis();
        let clock_matters = thought.searches || self.seat.as_ref().is_some_and(|s| s.plain.is_some());
        if !clock_matters && (go.clock != Clock::default() || go.nodes.is_some()) {
            self.say_once(out, "clock", &format!("{name} thinks once ({ms} ms here): the clock and nodes do not change its move"))?;
        }
        if go.depth.is_some() || go.mate.is_some() {
            self.say_once(
                out,
                "depth",
                "depth and mate are ignored: no player here searches by depth (nodes caps a search's simulations)",
            )?;
        }
        if thought.values.is_none() && thought.root_value.is_none() && thought.seen.value.is_none() {
            self.say_once(out, "value", &format!("{name} has no value head: scores are 0"))?;
        }
        if thought.seen.moves.is_empty() && self.multipv > 1 {
            self.say_once(out, "multipv", &format!("MultiPV: {name} has no policy, so one line"))?;
        }
        if !thought.printed {
            thought.print(out, &self.position, self.show_wdl, ms)?;
        }
        Ok(())
    }
}

/// What a move's think will be: its deadline, whether a fly with imagination plays as its plain
/// self, a search's most simulations, the think's expected cost (to correct `Costs` by), and what
/// was left out for the clock, in words.
struct Plan {
    deadline: Option<Instant>,
    plain: bool,
    simulations: Option<usize>,
    expected: Option<Duration>,
    left_out: Option<String>,
}

/// One think's answer: what the player saw, the lines shown (indices into `seen.moves`), their
/// moves and values (or, when the clock left no time to value them, the position's own value for
/// the first line), the boards thought, whether the player searches, and whether its lines were
/// printed already (a sliced search prints them after each slice).
pub(super) struct Thought {
    pub(super) seen: Considered,
    pub(super) lines: Vec<usize>,
    pub(super) moves: Vec<Move>,
    pub(super) values: Option<Vec<f32>>,
    pub(super) root_value: Option<f32>,
    pub(super) nodes: usize,
    pub(super) searches: bool,
    pub(super) printed: bool,
}

impl Thought {
    /// The `info` lines, one for each MultiPV line, `ms` after `go`, and each move's probability.
    pub(super) fn print(&self, out: &Out, position: &Chess, show_wdl: bool, ms: u128) -> Result<()> {
        let nodes = self.nodes;
        for (k, (&i, m)) in self.lines.iter().zip(&self.moves).enumerate() {
            let value = match (&self.values, self.root_value) {
                (Some(v), _) => Some(v[k]),
                (None, Some(v)) if k == 0 => Some(v),
                _ => None,
            };
            let mates = {
                let mut after = position.clone();
                after.play_unchecked(*m);
                after.is_checkmate()
            };
            let score = match (mates, value) {
                (true, _) => " score mate 1".to_string(),
                (false, Some(v)) => format!(" score cp {}", centipawns(v)),
                // Not valued for want of time: no score rather than a made-up one.
                (false, None) if self.root_value.is_some() => String::new(),
                (false, None) => " score cp 0".to_string(),
            };
            let wdl = match (show_wdl, value) {
                (true, Some(v)) => {
                    let (w, d, l) = wdl(if mates { 1.0 } else { v });
                    format!(" wdl {w} {d} {l}")
                }
                _ => String::new(),
            };
            write_line(out, &format!("info depth 1 seldepth 1 multipv {}{score}{wdl} nodes {nodes} time {ms} pv {}", k + 1, uci(m)))?;
            if let Some(p) = self.seen.probability.get(i) {
                write_line(out, &format!("info string multipv {} {} probability {:.4}", k + 1, uci(m), p))?;
            }
        }
        out.nodes.store(nodes as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// The lines to show, as indices into `seen.moves`: the move played first, then the most
/// probable others, `multipv` in all (only those in `searchmoves` when it names any). A player
/// without a policy shows its move alone (index past the end: the move played).
pub(super) fn lines_of(seen: &Considered, multipv: usize, searchmoves: &[String]) -> Vec<usize> {
    if seen.moves.is_empty() {
        return vec![usize::MAX];
    }
    let allowed = |i: usize| searchmoves.is_empty() || searchmoves.contains(&uci(&seen.moves[i]));
    let mut order: Vec<usize> = (0..seen.moves.len()).filter(|&i| allowed(i)).collect();
    order.sort_by(|&a, &b| seen.probability[b].total_cmp(&seen.probability[a]).then(a.cmp(&b)));
    if let Some(c) = seen.moves.iter().position(|&m| m == seen.chosen).filter(|&c| allowed(c)) {
        order.retain(|&i| i != c);
        order.insert(0, c);
    }
    if order.is_empty() {
        order.push(seen.moves.iter().position(|&m| m == seen.chosen).unwrap_or(0));
    }
    order.truncate(multipv.max(1));
    order
}

/// A value in [−1, 1] for the side to move (its expected score (1 + v)/2) as centipawns on the
/// logistic scale where 400 cp is 10:1 odds, within ±2,000.
pub(super) fn centipawns(v: f32) -> i32 {
    let p = ((1.0 + v as f64) / 2.0).clamp(1e-6, 1.0 - 1e-6);
    (400.0 * (p / (1.0 - p)).log10()).clamp(-2000.0, 2000.0).round() as i32
}

/// A value in [−1, 1] (the expectation of win − loss) as per-mille win, draw, loss: the fewest
/// draws that value allows.
pub(super) fn wdl(v: f32) -> (u32, u32, u32) {
    let v = v.clamp(-1.0, 1.0) as f64;
    let w = (1000.0 * v.max(0.0)).round() as u32;
    let l = (1000.0 * (-v).max(0.0)).round() as u32;
    (w, 1000 - w - l, l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_centipawns_and_wdl_on_one_scale() {
        assert_eq!(centipawns(0.0), 0);
        assert!(centipawns(0.5) > 0 && centipawns(-0.5) == -centipawns(0.5));
        assert_eq!(centipawns(1.0), 2000);
        assert_eq!(wdl(0.25), (250, 750, 0));
        assert_eq!(wdl(-1.0), (0, 0, 1000));
    }
}
