//! The fly as a UCI engine (`flychess uci`): the Universal Chess Interface on a pair of streams,
//! so any chess program (Cute Chess, Arena, En Croissant, Scid, lichess-bot, python-chess) can
//! load a fly, Charles or an aided player of this brain as an engine. A session answers `uci`
//! with its name, author and options (`Player`, a combo of every name it offers; `Search`, a spin
//! of simulations of Philidor's search over the player; `Imagination`, `Engine`, `MultiPV`,
//! `Threads`, `UCI_ShowWDL`), `isready` (and `ucinewgame`) once its player is ready and its first
//! think made, keeps the game from `position` (the keys of every position in it, so the
//! repetition rule sees the game's history), and for `go` thinks on a thread of its own while the
//! input is still read: `stop`, `isready` and `quit` are answered at once, and an `info` line goes
//! out at least once a second. `go`'s clock (`movetime`, or `wtime btime winc binc movestogo`)
//! becomes a budget (`Clock::budget`), weighed against what a think of the brain costs here
//! (`Costs`, measured when the player is made ready): a think it cannot hold is not started (a
//! fly's look-ahead gives way to the fly's own answer, a search to its base's favourite, each
//! said), a search stops at it with the best move found so far, `nodes` caps its simulations,
//! `stop` cuts it short, and with no deadline it searches in slices, its lines printed after
//! each. A player that thinks once (a fly, Charles, a dopamine fly) answers in milliseconds and
//! says once that the clock cannot change its move. Each think prints an `info` line for each of
//! its MultiPV most probable moves (the real `nodes`: boards that went through the brain; `time`;
//! the score from the value head of the board after the move; the move's probability in an `info
//! string`) and `bestmove`; `go infinite` and `go ponder` hold `bestmove` until `stop` or
//! `ponderhit`. A player that cannot be made ready is refused when it is chosen, an engine that
//! cannot start is said in an `info string`, and a think that fails answers `bestmove 0000` with
//! the reason, never a move of someone else's. Nothing a client sends can end the session but
//! `quit` or the end of its input: an unknown command or token is said on stderr and ignored, a
//! malformed `position` or an illegal move in it is said in an `info string` and the last good
//! position kept, a line longer than `LINE_LIMIT` is refused unread.
// A front door, not a view: it runs the think on its own thread (app/clippy.toml forbids that to the ui only).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{HashSet, VecDeque};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use shakmaty::Chess;

use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::store::BrainSpec;
use flychess_fly::readout::position_key;

mod clock;
mod options;
mod seat;
mod think;
mod wire;

use clock::{Costs, Go, HEARTBEAT, parse_go};
use seat::{Ready, Seat};
use wire::{Line, NO_NODES, Out, read_lines, write_line};

/// The longest line read (a `position` with a whole game's moves is a few kilobytes).
pub const LINE_LIMIT: usize = 64 * 1024;

/// The most lines `MultiPV` may ask for.
const MOST_LINES: usize = 256;

/// The most simulations `Search` may ask for (what `+searchN` takes).
const MOST_SIMULATIONS: usize = 100_000;

/// The player `player` with Philidor's search of `search` simulations (0: `player` as it is);
/// a search already in the name (`+search`, `+searchN`) gives way to it.
fn with_search(player: &str, search: usize) -> String {
    if search == 0 {
        return player.to_string();
    }
    let base = match player.rsplit_once('+') {
        Some((base, aid)) if aid.strip_prefix("search").is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())) => base,
        _ => player,
    };
    format!("{base}+search{search}")
}

/// How the session starts: the data folder, the brain, the player (None: the brain's own fly).
pub struct Start {
    pub data: PathBuf,
    pub spec: BrainSpec,
    pub player: Option<String>,
    pub engine: EngineChoice,
}

/// A brain already loaded, and its CPU engine made, handed to `serve_loaded` (many sessions on one
/// brain without loading it each time: the fuzz test).
pub struct LoadedBrain {
    pub loaded: Arc<Loaded>,
    pub brain: Arc<Brain>,
    pub cpu_engine: Option<Arc<Simulator>>,
}

/// A UCI session over `input` and `output`; returns when `quit` arrives or the input ends.
pub fn serve(start: Start, input: impl BufRead + Send + 'static, output: &mut (dyn Write + Send)) -> Result<()> {
    serve_loaded(start, None, input, output)
}

/// `serve` on a brain already loaded (None: loaded from `start` when first needed).
pub fn serve_loaded(
    start: Start,
    brain: Option<LoadedBrain>,
    input: impl BufRead + Send + 'static,
    output: &mut (dyn Write + Send),
) -> Result<()> {
    let mut session = Session::new(start);
    if let Some(b) = brain {
        session.ready = Some(Ready::of(&session.start.spec, &session.start.data, b.loaded, b.brain));
        session.simulator = b.cpu_engine.map(|sim| (EngineChoice::Cpu, sim));
    }
    // A player named at start-up that cannot play is an error before anything is read (the
    // command exits 1): a GUI must not take another player's moves for its.
    if let Some(name) = session.player.clone() {
        session.seat().map_err(|e| anyhow!("{name} cannot play: {e:#}"))?;
    }
    let lines = read_lines(input);
    let out = Out::new(output);
    // Lines that came while a think ran (other than stop, ponderhit, isready and quit): read after.
    let mut waiting: VecDeque<Line> = VecDeque::new();
    loop {
        let line = match waiting.pop_front() {
            Some(l) => l,
            None => match lines.recv() {
                Ok(l) => l,
                Err(_) => return Ok(()),
            },
        };
        let text = match line {
            Line::Text(t) => t,
            Line::TooLong(n) => {
                write_line(&out, &format!("info string a line of {n} bytes was refused unread (at most {LINE_LIMIT})"))?;
                continue;
            }
        };
        let next = {
            let mut o = out.lock()?;
            let next = session.command(&text, &mut **o)?;
            o.flush()?;
            next
        };
        match next {
            Next::Go(go) => {
                let (best, quit) = think_while_reading(&mut session, &go, &lines, &out, &mut waiting)?;
                write_line(&out, &format!("bestmove {}", best.as_deref().unwrap_or("(none)")))?;
                if quit {
                    return Ok(());
                }
            }
            Next::Quit => return Ok(()),
            Next::Read => {}
        }
    }
}

/// Runs `go` on a thread of its own while the input is read: `stop` ends a search early,
/// `isready` is answered at once, `quit` (or the end of the input) stops the think and ends the
/// session once it has answered; `ponderhit` releases a held answer; anything else waits in
/// `waiting` for the think to end. Returns the move (None: no legal move) and whether to quit.
fn think_while_reading(
    session: &mut Session,
    go: &Go,
    lines: &crossbeam_channel::Receiver<Line>,
    out: &Out,
    waiting: &mut VecDeque<Line>,
) -> Result<(Option<String>, bool)> {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    out.nodes.store(NO_NODES, Ordering::Relaxed);
    std::thread::scope(|scope| -> Result<(Option<String>, bool)> {
        let (done_tx, done_rx) = crossbeam_channel::bounded::<()>(1);
        let think_stop = Arc::clone(&stop);
        let think = scope.spawn(move || {
            let answer = session.go(go, started, think_stop, out);
            let _ = done_tx.send(());
            answer
        });
        // An analysis window hears from a long think (a search, `go infinite`, an answer held
        // for `stop`) at least once a second: when no `info` line went out for `HEARTBEAT`, one
        // with the time and the nodes so far.
        let heartbeat = || -> Result<Duration> {
            let quiet = out.since_info().min(started.elapsed());
            if quiet < HEARTBEAT {
                return Ok(HEARTBEAT - quiet);
            }
            let nodes = match out.nodes.load(Ordering::Relaxed) {
                NO_NODES => String::new(),
                n => format!(" nodes {n}"),
            };
            write_line(out, &format!("info time {}{nodes}", started.elapsed().as_millis()))?;
            Ok(HEARTBEAT)
        };
        // `go infinite` and `go ponder` hold the answer until `stop` or `ponderhit`.
        let (mut done, mut released, mut quit, mut ended) = (false, !go.hold, false, false);
        // A line that came while thinking: `stop`, `ponderhit`, `isready` and `quit` act at once,
        // unless a line waits before it (lines are answered in the order they came); anything else
        // waits for the think to end. After `quit` nothing more is read.
        let take = |line: Line, waiting: &mut VecDeque<Line>, released: &mut bool, quit: &mut bool| -> Result<()> {
            if *quit {
                return Ok(());
            }
            let now = match &line {
                Line::Text(t) if waiting.is_empty() => t.trim().to_string(),
                _ => String::new(),
            };
            match now.as_str() {
                "stop" => {
                    stop.store(true, Ordering::Relaxed);
                    *released = true;
                }
                "ponderhit" => *released = true,
                "isready" => write_line(out, "readyok")?,
                "quit" => {
                    stop.store(true, Ordering::Relaxed);
                    (*released, *quit) = (true, true);
                }
                _ => waiting.push_back(line),
            }
            Ok(())
        };
        let end_of_input = |waiting: &VecDeque<Line>, released: &mut bool, quit: &mut bool| {
            // The input ended: nobody will send `stop`, nor wait long for an answer, so the think
            // stops now with its best move so far; the lines that waited are still answered (each
            // think among them stops at once too), and with none waiting the session ends.
            stop.store(true, Ordering::Relaxed);
            *released = true;
            *quit |= waiting.is_empty();
        };
        // Lines read before this think but not yet answered come first, in order.
        let mut earlier: VecDeque<Line> = std::mem::take(waiting);
        while let Some(line) = earlier.pop_front() {
            take(line, waiting, &mut released, &mut quit)?;
        }
        while !(done && released) {
            if ended {
                // No more input: wait for the think, which was told to stop.
                let _ = done_rx.recv();
                break;
            }
            let wait = heartbeat()?;
            let never = crossbeam_channel::never();
            let line = crossbeam_channel::select! {
                recv(if done { &never } else { &done_rx }) -> _ => {
                    done = true;
                    continue;
                }
                recv(lines) -> line => line,
                default(wait) => continue,
            };
            match line {
                Ok(line) => take(line, waiting, &mut released, &mut quit)?,
                Err(_) => {
                    ended = true;
                    end_of_input(waiting, &mut released, &mut quit);
                }
            }
        }
        let best = think.join().map_err(|_| anyhow!("the think panicked"))??;
        Ok((best, quit))
    })
}

enum Next {
    Read,
    Go(Go),
    Quit,
}

/// At most 80 characters of `text` (what an error quotes of a line).
fn shorten(text: &str) -> String {
    let mut s: String = text.chars().take(80).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

struct Session {
    start: Start,
    ready: Option<Ready>,
    seat: Option<Seat>,
    /// The `Player` option (None: the brain's own fly).
    player: Option<String>,
    imagination: f32,
    engine: EngineChoice,
    simulator: Option<(EngineChoice, Arc<Simulator>)>,
    multipv: usize,
    threads: usize,
    pool: Option<(usize, rayon::ThreadPool)>,
    show_wdl: bool,
    position: Chess,
    /// The keys of every position of the game so far, the current one last.
    keys: Vec<u64>,
    /// A game's dice: the n-th `go` of a session draws from seed n (sampling players).
    gos: u64,
    /// What was said once already about an option or limit this player does not use.
    said: HashSet<String>,
    /// The seated player was given an Imagination weight it has no use for.
    imagination_ignored: bool,
    /// The player whose first think was made at `isready` (`warm_up`).
    warmed: Option<String>,
    /// The `Search` option: Philidor's search of this many simulations over the player (0: as
    /// `Player` names it).
    search: usize,
    /// What a think of the brain costs here (None: not measured yet, or no brain to think).
    costs: Option<Costs>,
    /// What to say in an `info string` at the next chance (an engine that could not start).
    notices: Vec<String>,
}

impl Session {
    fn new(start: Start) -> Session {
        let position = Chess::default();
        Session {
            player: start.player.clone(),
            engine: start.engine,
            start,
            ready: None,
            seat: None,
            imagination: 0.0,
            simulator: None,
            multipv: 1,
            threads: rayon::current_num_threads(),
            pool: None,
            show_wdl: false,
            keys: vec![position_key(&position)],
            position,
            gos: 0,
            said: HashSet::new(),
            imagination_ignored: false,
            warmed: None,
            search: 0,
            costs: None,
            notices: Vec::new(),
        }
    }

    fn say(&self, output: &mut dyn Write, words: &str) -> Result<()> {
        writeln!(output, "info string {}", words.replace(['\n', '\r'], " "))?;
        Ok(())
    }

    /// The brain, loaded the first time it is needed (`uci`, `isready`, `go`).
    fn ready(&mut self) -> Result<&Ready> {
        if self.ready.is_none() {
            let (loaded, brain) = flychess_brain::store::ready_brain(
                &self.start.spec,
                &self.start.data,
                flychess_brain::calibrate::CalibrationOptions::default(),
                &|_, _| {},
            )?;
            // What the window's New game offers: the brain's flies and dopamine flies, each trained
            // fly with Philidor's aids, every finished Charles run.
            self.ready = Some(Ready::of(&self.start.spec, &self.start.data, Arc::new(loaded), Arc::new(brain)));
        }
        Ok(self.ready.as_ref().expect("made above"))
    }

    fn command(&mut self, text: &str, output: &mut dyn Write) -> Result<Next> {
        let mut words = text.split_whitespace();
        let Some(first) = words.next() else { return Ok(Next::Read) };
        let rest: Vec<&str> = words.collect();
        match first {
            "uci" => {
                if let Err(e) = self.ready() {
                    self.say(output, &format!("the brain could not be made ready: {e:#}"))?;
                }
                let option = match self.player_option() {
                    Ok(n) => n,
                    Err(e) => {
                        self.say(output, &format!("{e:#}"))?;
                        "no player".into()
                    }
                };
                writeln!(output, "id name Fly Chess ({})", with_search(&option, self.search))?;
                writeln!(output, "id author the Fly Chess authors (a fruit-fly brain, FlyWire v783 wiring)")?;
                let players = self.ready.as_ref().map(|r| r.players.clone()).unwrap_or_default();
                let mut combo = format!("option name Player type combo default {option}");
                for p in players.iter().chain(std::iter::once(&option)).collect::<std::collections::BTreeSet<_>>() {
                    combo.push_str(&format!(" var {p}"));
                }
                writeln!(output, "{combo}")?;
                writeln!(output, "option name Search type spin default {} min 0 max {MOST_SIMULATIONS}", self.search)?;
                writeln!(output, "option name Imagination type string default 0")?;
                writeln!(output, "option name Engine type combo default {} var auto var cpu var gpu", engine_name(self.engine))?;
                writeln!(output, "option name MultiPV type spin default 1 min 1 max {MOST_LINES}")?;
                writeln!(output, "option name Threads type spin default {} min 1 max 256", self.threads)?;
                writeln!(output, "option name UCI_ShowWDL type check default false")?;
                writeln!(output, "uciok")?;
            }
            "isready" => {
                self.make_ready(output)?;
                writeln!(output, "readyok")?;
            }
            "ucinewgame" => {
                self.set_position(Chess::default(), &[], output)?;
                self.gos = 0;
                // The game's first move spends its budget thinking, not making the player ready
                // (once the brain is loaded: `ucinewgame` alone does not load it).
                if self.ready.is_some() {
                    self.make_ready(output)?;
                }
            }
            "position" => self.position(&rest, output)?,
            "setoption" => self.set_option(&rest, output)?,
            "go" => return Ok(Next::Go(parse_go(&rest))),
            // Nothing is thinking (a think hears these itself).
            "stop" | "ponderhit" => {}
            "quit" => return Ok(Next::Quit),
            "debug" | "register" => {}
            other => eprintln!("uci: unknown command {}", shorten(other)),
        }
        Ok(Next::Read)
    }
}

fn engine_name(e: EngineChoice) -> &'static str {
    match e {
        EngineChoice::Auto => "auto",
        EngineChoice::Cpu => "cpu",
        EngineChoice::Gpu => "gpu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_goes_over_the_player_and_replaces_a_search_in_its_name() {
        assert_eq!(with_search("flywire", 0), "flywire");
        assert_eq!(with_search("flywire+search64", 0), "flywire+search64");
        assert_eq!(with_search("flywire", 100_000), "flywire+search100000");
        assert_eq!(with_search("flywire+search64", 500), "flywire+search500");
        assert_eq!(with_search("flywire+search", 8), "flywire+search8");
        // Any other aid stays, and the resolver refuses the two together.
        assert_eq!(with_search("flywire+judge", 8), "flywire+judge+search8");
        assert_eq!(with_search("charles:run+searchlight", 8), "charles:run+searchlight+search8");
    }
}
