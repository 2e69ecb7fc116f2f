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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move, Position};

use flychess_arena::players::{Considered, Entrant, Kit, Player};
use flychess_arena::search::{Aid, Budget, LEAF_BATCH};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{self, EngineChoice, Simulator};
use flychess_brain::chess::{planes, uci};
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::store::BrainSpec;
use flychess_fly::readout::{position_key, think_features};

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

/// One line of input, or why it could not be read.
enum Line {
    Text(String),
    TooLong(usize),
}

/// Reads `input` line by line on a thread of its own (so `stop` and `quit` arrive while the
/// engine waits), each line at most `LINE_LIMIT` bytes: a longer one is skipped to its end
/// without being kept. The channel closes at the end of the input or on a read error.
fn read_lines(input: impl BufRead + Send + 'static) -> crossbeam_channel::Receiver<Line> {
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("uci-input".into())
        .spawn(move || {
            let mut input = input;
            loop {
                let mut kept = Vec::new();
                let mut seen = 0usize;
                let ended = loop {
                    let buf = match input.fill_buf() {
                        Ok(b) => b,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break true,
                    };
                    if buf.is_empty() {
                        break true;
                    }
                    let (part, newline) = match buf.iter().position(|&b| b == b'\n') {
                        Some(i) => (&buf[..i], Some(i)),
                        None => (buf, None),
                    };
                    if seen + part.len() <= LINE_LIMIT {
                        kept.extend_from_slice(part);
                    }
                    seen += part.len();
                    let used = newline.map_or(buf.len(), |i| i + 1);
                    input.consume(used);
                    if newline.is_some() {
                        break false;
                    }
                };
                if seen > 0 || !ended {
                    let line = if seen > LINE_LIMIT {
                        Line::TooLong(seen)
                    } else {
                        Line::Text(String::from_utf8_lossy(&kept).trim_end_matches('\r').to_string())
                    };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
                if ended {
                    return;
                }
            }
        })
        .expect("a thread can be started");
    rx
}

/// The brain once loaded, with the players it can field.
struct Ready {
    loaded: Arc<Loaded>,
    brain: Arc<Brain>,
    /// Every player the `Player` option offers, the default first.
    players: Vec<String>,
}

impl Ready {
    /// What the window's New game offers (the brain's flies and dopamine flies, every finished
    /// Charles run, each trained fly with `+judge` and `+search64`), and besides: each trained
    /// fly with `+imagination`, with `+habituation` and `+glances` where they are tuned, with
    /// `+sf4` where Stockfish is installed, and the ladder's `random`, `greedy` and `stockfish`.
    fn of(data: &std::path::Path, loaded: Arc<Loaded>, brain: Arc<Brain>) -> Ready {
        let mut players = crate::lab::flies::read_lists(data, Some(loaded.checksum.clone())).playable;
        let stockfish = flychess_fly::stockfish::find_stockfish(None).is_ok();
        let trained: Vec<String> = players.iter().filter(|p| players.contains(&format!("{p}+search64"))).cloned().collect();
        for name in trained {
            players.push(format!("{name}+imagination"));
            if let Ok(fly) = flychess_fly::fly::find(&name, data).and_then(|p| flychess_fly::fly::Fly::load(&p)) {
                if flychess_arena::tuned::habituation(data, &fly).is_some() {
                    players.push(format!("{name}+habituation"));
                }
                if flychess_arena::tuned::glances(data, &fly).is_some() {
                    players.push(format!("{name}+glances"));
                }
            }
            if stockfish {
                players.push(format!("{name}+sf4"));
            }
        }
        players.extend(["random", "greedy"].map(String::from));
        if stockfish {
            players.push("stockfish".into());
        }
        Ready { loaded, brain, players }
    }
}

/// A brain already loaded, and its CPU engine made, handed to `serve_loaded` (many sessions on one
/// brain without loading it each time: the fuzz test).
pub struct LoadedBrain {
    pub loaded: Arc<Loaded>,
    pub brain: Arc<Brain>,
    pub cpu_engine: Option<Arc<Simulator>>,
}

/// The player in force, made ready for its name (rebuilt when the name or imagination changes).
struct Seat {
    name: String,
    imagination: f32,
    entrant: Entrant,
    kit: Kit,
    /// A fly with imagination: the same fly without it, what plays a move whose budget cannot
    /// hold the look-ahead (the kit holds it too).
    plain: Option<Entrant>,
}

impl Seat {
    /// Whether the player is Philidor's search (it stops at its budget).
    fn searches(&self) -> bool {
        matches!(self.entrant, Entrant::Aided { aid: Aid::Search { .. }, .. })
    }
}

/// What a think of the brain costs on this machine: measured when a player is made ready
/// (`warm_up`: one board, a search's batch, a look-ahead's boards) and corrected by each think
/// since (`load`: how much slower the machine is now than when measured).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Costs {
    /// Milliseconds to think 1, `LEAF_BATCH` and `WIDE` boards at once.
    one: f64,
    batch: f64,
    wide: f64,
    load: f64,
}

/// The boards of the widest think measured (about a look-ahead's: the board and its moves').
const WIDE: usize = 24;

impl Costs {
    /// The time a think of `boards` boards at once takes now: linear between the sizes measured
    /// (beyond the widest, on its slope).
    fn think(&self, boards: usize) -> Duration {
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
    fn observe(&mut self, expected: Duration, took: Duration) {
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
struct Go {
    /// Hold `bestmove` until `stop` (or `ponderhit`).
    hold: bool,
    /// `go infinite`: no time limit at all.
    infinite: bool,
    /// Restrict the choice to these moves (`searchmoves`).
    searchmoves: Vec<String>,
    clock: Clock,
    /// `depth` and `mate`: no player here searches by depth (said in an `info string`).
    depth: Option<u64>,
    mate: Option<u64>,
    /// `nodes`: a search player's most simulations.
    nodes: Option<u64>,
}

/// The time `go` gives, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Clock {
    movetime: Option<u64>,
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: Option<u64>,
    binc: Option<u64>,
    movestogo: Option<u64>,
}

/// The longest an analysis window waits for an `info` line while the engine thinks or holds
/// its answer (`go infinite`); a heartbeat `info time T nodes N` fills the silence.
const HEARTBEAT: Duration = Duration::from_millis(800);

/// How long a slice of a search with no deadline runs before its lines are printed.
const SLICE: Duration = Duration::from_millis(500);

/// Kept back from every budget for what follows the search (the lines' values, the answer, the
/// pipe to the GUI), in milliseconds.
const MARGIN_MS: u64 = 40;
/// Moves still to play when the GUI does not say (`movestogo`).
const MOVES_TO_GO: u64 = 30;

impl Clock {
    /// How long a search may run for the side to move: `movetime` less a margin (at least half of
    /// it); else its clock shared over the moves to go, with most of its increment, never more
    /// than a quarter of what is left; None when no time was given (`go infinite`, `go nodes N`).
    fn budget(&self, turn: Color) -> Option<Duration> {
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

/// The output, shared by the reader of the input (`readyok`, the heartbeat of a long think) and
/// the think (`info`), with when the last `info` line went out and the nodes it reported.
struct Out<'a> {
    writer: Mutex<&'a mut (dyn Write + Send)>,
    epoch: Instant,
    /// Milliseconds after `epoch` when the last `info` line was written.
    last_info_ms: AtomicU64,
    /// The nodes of the think in progress so far (`NO_NODES`: none reported yet).
    nodes: AtomicU64,
}

const NO_NODES: u64 = u64::MAX;

impl<'a> Out<'a> {
    fn new(writer: &'a mut (dyn Write + Send)) -> Out<'a> {
        Out { writer: Mutex::new(writer), epoch: Instant::now(), last_info_ms: AtomicU64::new(0), nodes: AtomicU64::new(NO_NODES) }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, &'a mut (dyn Write + Send)>> {
        self.writer.lock().map_err(|_| anyhow!("the output's lock was poisoned"))
    }

    /// How long ago the last `info` line went out.
    fn since_info(&self) -> Duration {
        self.epoch.elapsed().saturating_sub(Duration::from_millis(self.last_info_ms.load(Ordering::Relaxed)))
    }
}

fn write_line(out: &Out, line: &str) -> Result<()> {
    let mut o = out.lock()?;
    writeln!(o, "{line}")?;
    o.flush()?;
    if line.starts_with("info") {
        out.last_info_ms.store(out.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
    Ok(())
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
        session.ready = Some(Ready::of(&session.start.data, b.loaded, b.brain));
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
            self.ready = Some(Ready::of(&self.start.data, Arc::new(loaded), Arc::new(brain)));
        }
        Ok(self.ready.as_ref().expect("made above"))
    }

    /// The `Player` option's value in force (None set: the brain's own fly).
    fn player_option(&mut self) -> Result<String> {
        if let Some(p) = &self.player {
            return Ok(p.clone());
        }
        let checksum = self.ready()?.loaded.checksum.clone();
        flychess_fly::fly::trained_for(&checksum, &self.start.data)
            .map(|(name, _)| name)
            .ok_or_else(|| anyhow!("this brain has no trained fly yet: train one with `flychess train` or name a player"))
    }

    /// The player's name in force: `Player`, with `Search` when it is set.
    fn player_name(&mut self) -> Result<String> {
        Ok(with_search(&self.player_option()?, self.search))
    }

    /// The player in force, made ready (its files read, a dopamine fly's model made).
    fn seat(&mut self) -> Result<&Seat> {
        let name = self.player_name()?;
        let stale = self.seat.as_ref().is_none_or(|s| s.name != name || s.imagination != self.imagination);
        if stale {
            self.seat = None;
            let imagination = self.imagination;
            let data = self.start.data.clone();
            let spec = self.start.spec.clone();
            let ready = self.ready()?;
            let descending = ready.loaded.connectome.groups.descending.clone();
            let (entrant, named) =
                crate::players::player_on_terminal(&name, &data, Some(&ready.loaded.checksum), Some((&ready.brain, &descending[..])))?;
            // The Imagination option: a readout fly playing its favourite looks one move ahead.
            let entrant = match (&entrant, &named) {
                (Entrant::Fly { imagination: None, sample: false, .. }, flychess_arena::players::Named::Fly(f)) if imagination > 0.0 => {
                    Entrant::fly(f, Some(imagination))
                }
                _ => entrant,
            };
            let imagination_ignored = imagination > 0.0 && !matches!(entrant, Entrant::Fly { imagination: Some(_), .. });
            // A fly with imagination plays as the plain fly when a move's budget cannot hold
            // the look-ahead.
            let plain = match (&entrant, &named) {
                (Entrant::Fly { imagination: Some(_), sample: false, habituation, .. }, flychess_arena::players::Named::Fly(f)) => {
                    Some(Entrant::fly_with(f, None, *habituation))
                }
                _ => None,
            };
            let (flies, dopamine, charles) = flychess_arena::players::kit_parts([(named, &entrant)]);
            let flies: Vec<_> = flies
                .into_iter()
                .map(|(f, mut plays_as)| {
                    plays_as.push(entrant.clone());
                    plays_as.extend(plain.clone());
                    (f, plays_as)
                })
                .collect();
            let mut kit = Kit::new(ready.brain.clone(), descending).with_flies(&flies).with_charles(&charles);
            if !dopamine.is_empty() {
                let (kept, bio) = crate::players::dopamine_of_brain(&spec, &data, &ready.loaded, &ready.brain, Some(dopamine))?;
                if let Some(bio) = bio {
                    kit = kit.with_dopamine(bio, &kept)?;
                }
            }
            self.seat = Some(Seat { name, imagination, entrant, kit, plain });
            self.imagination_ignored = imagination_ignored;
        }
        Ok(self.seat.as_ref().expect("made above"))
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

    /// Seats the player, starts its engine and makes its first think (`warm_up`), saying on
    /// `output` what went wrong or what stands in (a GPU that could not start).
    fn make_ready(&mut self, output: &mut dyn Write) -> Result<()> {
        let made = self.seat().map(|_| ()).and_then(|_| self.prepare().map(|_| ())).and_then(|_| self.warm_up());
        for notice in std::mem::take(&mut self.notices) {
            self.say(output, &notice)?;
        }
        if let Err(e) = made {
            self.say(output, &format!("{e:#}"))?;
        }
        Ok(())
    }

    /// `position startpos|fen FEN [moves M…]`; a malformed one or an illegal move is said and
    /// the last good position kept.
    fn position(&mut self, words: &[&str], output: &mut dyn Write) -> Result<()> {
        let moves_at = words.iter().position(|w| *w == "moves").unwrap_or(words.len());
        let (setup, moves) = (&words[..moves_at], words.get(moves_at + 1..).unwrap_or(&[]));
        let start = match setup.first() {
            Some(&"startpos") if setup.len() == 1 => Chess::default(),
            Some(&"fen") if setup.len() > 1 => {
                let fen = setup[1..].join(" ");
                match fen
                    .parse::<Fen>()
                    .map_err(|e| e.to_string())
                    .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).map_err(|e| e.to_string()))
                {
                    Ok(p) => p,
                    Err(e) => return self.say(output, &format!("position refused, the last one kept: FEN {}: {e}", shorten(&fen))),
                }
            }
            _ => {
                return self.say(
                    output,
                    &format!("position refused, the last one kept: expected startpos or fen, got {}", shorten(&setup.join(" "))),
                );
            }
        };
        self.set_position(start, moves, output)
    }

    fn set_position(&mut self, start: Chess, moves: &[&str], output: &mut dyn Write) -> Result<()> {
        let mut pos = start;
        let mut keys = vec![position_key(&pos)];
        for (k, m) in moves.iter().enumerate() {
            let legal = m.parse::<UciMove>().ok().and_then(|u| u.to_move(&pos).ok());
            let Some(legal) = legal else {
                return self
                    .say(output, &format!("position refused, the last one kept: move {} ({}) is not legal here", k + 1, shorten(m)));
            };
            pos.play_unchecked(legal);
            keys.push(position_key(&pos));
        }
        self.position = pos;
        self.keys = keys;
        Ok(())
    }

    fn set_option(&mut self, words: &[&str], output: &mut dyn Write) -> Result<()> {
        // setoption name NAME [value VALUE]; names may hold spaces.
        let value_at = words.iter().position(|w| *w == "value");
        let name = words.get(1..value_at.unwrap_or(words.len())).unwrap_or(&[]).join(" ");
        let value = value_at.map(|i| words[i + 1..].join(" ")).unwrap_or_default();
        if words.first() != Some(&"name") || name.is_empty() {
            return self
                .say(output, &format!("setoption needs a name: setoption name NAME value VALUE (got {})", shorten(&words.join(" "))));
        }
        // A player that cannot play is refused where it is chosen: the option stays as it was.
        let refused = |session: &mut Session, output: &mut dyn Write, who: &str, e: anyhow::Error, option: &str| -> Result<()> {
            let kept = session.player_name().unwrap_or_default();
            // The whole reason goes to stderr; the GUI's line keeps to its start.
            eprintln!("{} cannot play: {e:#}", shorten(who));
            let whole = format!("{e:#}");
            let mut reason: String = whole.chars().take(240).collect();
            if reason.len() < whole.len() {
                reason.push('…');
            }
            session.say(output, &format!("{} cannot play ({reason}); {option} stays as it was (playing {kept})", shorten(who)))
        };
        match name.to_ascii_lowercase().as_str() {
            "player" => {
                let before = self.player.replace(value.clone());
                if let Err(e) = self.seat() {
                    self.player = before;
                    let e = if self.search > 0 { e.context(format!("Search is {}: 0 plays the player alone", self.search)) } else { e };
                    refused(self, output, &value, e, "Player")?;
                }
            }
            "search" => match value.trim().parse::<usize>() {
                Ok(n) if n <= MOST_SIMULATIONS => {
                    let before = std::mem::replace(&mut self.search, n);
                    // Checked now once the brain is loaded (else at `isready` or `go`).
                    if let Some(Err(e)) = self.ready.is_some().then(|| self.seat().map(|_| ())) {
                        self.search = before;
                        let who = self.player_option().map(|p| with_search(&p, n)).unwrap_or_default();
                        refused(self, output, &who, e, "Search")?;
                    }
                }
                _ => self.say(output, &format!("Search is 0 (off) to {MOST_SIMULATIONS} simulations, not {}", shorten(&value)))?,
            },
            "imagination" => match value.trim().parse::<f32>() {
                Ok(w) if w.is_finite() && w >= 0.0 => self.imagination = w,
                _ => self.say(output, &format!("Imagination takes a weight ≥ 0 (0: off), not {}", shorten(&value)))?,
            },
            "engine" => match value.trim() {
                "auto" => self.engine = EngineChoice::Auto,
                "cpu" => self.engine = EngineChoice::Cpu,
                "gpu" => self.engine = EngineChoice::Gpu,
                v => self.say(output, &format!("Engine is auto, cpu or gpu, not {}", shorten(v)))?,
            },
            "multipv" => match value.trim().parse::<usize>() {
                Ok(n) if (1..=MOST_LINES).contains(&n) => self.multipv = n,
                _ => self.say(output, &format!("MultiPV is 1 to {MOST_LINES}, not {}", shorten(&value)))?,
            },
            "threads" => match value.trim().parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => self.threads = n,
                _ => self.say(output, &format!("Threads is 1 to 256, not {}", shorten(&value)))?,
            },
            "uci_showwdl" => match value.trim() {
                "true" => self.show_wdl = true,
                "false" => self.show_wdl = false,
                v => self.say(output, &format!("UCI_ShowWDL is true or false, not {}", shorten(v)))?,
            },
            _ => eprintln!("uci: unknown option {}", shorten(&name)),
        }
        Ok(())
    }

    /// Makes the seated player's engine and thread pool ready (at `isready`, so the first `go`
    /// spends its budget thinking); returns whether the player thinks with the brain's engine.
    fn prepare(&mut self) -> Result<bool> {
        let uses_brain = self.seat.as_ref().is_some_and(|s| s.kit.fly(&s.entrant).is_some() || matches!(s.entrant, Entrant::Aided { .. }));
        if uses_brain && self.simulator.as_ref().is_none_or(|(c, _)| *c != self.engine) {
            let brain = self.ready()?.brain.clone();
            let sim = match Simulator::choose(self.engine, &brain) {
                Ok(sim) => sim,
                Err(e) => {
                    // Said in an `info string` too: a GUI shows those and hides stderr.
                    let words = format!("the {} engine could not start ({e}); thinking on the CPU", engine_name(self.engine));
                    eprintln!("uci: {words}");
                    self.notices.push(words);
                    Simulator::choose(EngineChoice::Cpu, &brain)?
                }
            };
            self.simulator = Some((self.engine, Arc::new(sim)));
            // Another engine thinks at another speed.
            self.costs = None;
            self.warmed = None;
        }
        if self.pool.as_ref().is_none_or(|(n, _)| *n != self.threads) {
            self.pool = Some((self.threads, rayon::ThreadPoolBuilder::new().num_threads(self.threads).build()?));
        }
        Ok(uses_brain)
    }

    /// One think of the start position by the seated player (a search stopped at once: its root
    /// alone), so that what a first think builds on the way (the rows its readout needs, the
    /// engine's buffers) is built before `readyok`, not on the first `go`'s clock.
    fn warm_up(&mut self) -> Result<()> {
        if self.warmed.as_deref() == Some(self.seat.as_ref().map_or("", |s| s.name.as_str())) {
            return Ok(());
        }
        let (Some(seat), Some(ready), Some(pool)) = (self.seat.as_ref(), self.ready.as_ref(), self.pool.as_ref()) else { return Ok(()) };
        let sim = self.simulator.as_ref().map(|(_, s)| s.clone());
        let brain = ready.brain.clone();
        let costs = pool.1.install(|| -> Result<Option<Costs>> {
            let _in_force = sim.map(|sim| simulator::install(&brain, sim));
            let mut player = Player::new(&seat.entrant, Some(&seat.kit), 20_000, 0, &None)?;
            if !seat.entrant.needs_stockfish() && seat.kit.brain().is_some() {
                player.set_budget(Budget { stop: Some(Arc::new(AtomicBool::new(true))), ..Default::default() });
                player.consider(&Chess::default(), &[])?;
            }
            // What a think of 1, a search's batch and a look-ahead's boards costs, on the engine
            // and threads this player thinks with: the budget of each move is weighed against it.
            let Some(fly) = seat.kit.fly(&seat.entrant) else { return Ok(None) };
            let start = Chess::default();
            let boards: Vec<_> = std::iter::once(start.clone())
                .chain(start.legal_moves().into_iter().map(|m| {
                    let mut after = start.clone();
                    after.play_unchecked(m);
                    after
                }))
                .map(|b| planes(&b))
                .cycle()
                .take(WIDE)
                .collect();
            let time = |n: usize| {
                let t = Instant::now();
                think_features(&brain, &boards[..n], seat.kit.descending(), &fly.readout.read_steps);
                t.elapsed().as_secs_f64() * 1000.0
            };
            // The think above paid for what a first think builds (a few hundred milliseconds):
            // these are timed warm. Only what the player can spend is measured: a batch for a
            // search, the widest for a look-ahead (in between, on the line from one board to the
            // widest; else as so many single boards, an overestimate).
            let one = time(1);
            let wide = seat.plain.is_some().then(|| time(WIDE));
            let batch = match (seat.searches(), wide) {
                (true, _) => time(LEAF_BATCH),
                (false, Some(w)) => one + (w - one) * (LEAF_BATCH - 1) as f64 / (WIDE - 1) as f64,
                (false, None) => one * LEAF_BATCH as f64,
            };
            let wide = wide.unwrap_or(batch * (WIDE / LEAF_BATCH) as f64);
            Ok(Some(Costs { one, batch, wide, load: 1.0 }))
        })?;
        self.costs = costs;
        self.warmed = Some(seat.name.clone());
        Ok(())
    }

    /// Says `words` once a session for `key` (an option or limit the player in force does not use).
    fn say_once(&mut self, out: &Out, key: &str, words: &str) -> Result<()> {
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
    fn go(&mut self, go: &Go, started: Instant, stop: Arc<AtomicBool>, out: &Out) -> Result<Option<String>> {
        if self.position.legal_moves().is_empty() {
            write_line(out, "info string the game is over: no legal move")?;
            return Ok(None);
        }
        if let Err(e) = self.seat() {
            write_line(out, &format!("info string no move: the player cannot play ({e:#})").replace(['\n', '\r'], " "))?;
            return Ok(Some("0000".into()));
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
        let deadline = if go.infinite { None } else { go.clock.budget(self.position.turn()).map(|b| started + b) };
        let seat = self.seat.as_ref().expect("seated above");
        // What is thought, and what it is expected to cost (to correct `Costs` by).
        let legal = self.position.legal_moves().len();
        let (mut entrant, mut simulations) = (&seat.entrant, go.nodes.map(|n| n.min(usize::MAX as u64) as usize));
        let (mut expected, mut left_out) = (None, None);
        if let Some(costs) = self.costs {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let fits = |cost: Duration| left.is_none_or(|l| cost <= l);
            let plain = costs.think(1);
            if let Some(without) = &seat.plain {
                let look = costs.think(1 + legal);
                if fits(look) {
                    expected = Some(look);
                } else {
                    entrant = without;
                    expected = Some(plain);
                    left_out = Some(format!(
                        "imagination left out of this move: looking at the {legal} boards after its moves takes about {} ms here, \
                         more than the {} ms the clock gives it; the fly's own answer",
                        look.as_millis(),
                        left.unwrap_or_default().as_millis()
                    ));
                }
            } else if seat.searches() {
                let first = plain + costs.think(LEAF_BATCH);
                if !fits(first) {
                    simulations = Some(0);
                    expected = Some(plain);
                    left_out = Some(format!(
                        "search left out of this move: its root and a first batch of {LEAF_BATCH} leaves take about {} ms here, \
                         more than the {} ms the clock gives it; the favourite of the player it aids",
                        first.as_millis(),
                        left.unwrap_or_default().as_millis()
                    ));
                }
            } else if matches!(seat.entrant, Entrant::Fly { glances: None, .. }) {
                expected = Some(plain);
            }
        }
        let sliced = seat.searches() && deadline.is_none();
        let stockfish = flychess_fly::stockfish::find_stockfish(None).ok();
        let brain = self.ready.as_ref().expect("ready above").brain.clone();
        let sim = self.simulator.as_ref().map(|(_, s)| s.clone());
        let (position, earlier, multipv, gos, show_wdl) =
            (&self.position, &self.keys[..self.keys.len() - 1], self.multipv, self.gos, self.show_wdl);
        let pool = &self.pool.as_ref().expect("made above").1;
        let costs = self.costs;
        let answer = pool.install(|| -> Result<(Thought, Duration)> {
            let _in_force = sim.map(|sim| simulator::install(&brain, sim));
            let mut player = Player::new(entrant, Some(&seat.kit), 20_000, gos, &stockfish)?;
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
        });
        let answer = answer.map(|(thought, took)| {
            if let (Some(costs), Some(expected)) = (self.costs.as_mut(), expected) {
                costs.observe(expected, took);
            }
            thought
        });
        let thought = match answer {
            Ok(a) => a,
            Err(e) => {
                write_line(out, &format!("info string no move: the player could not think ({e:#})").replace(['\n', '\r'], " "))?;
                return Ok(Some("0000".into()));
            }
        };
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
        if thought.seen.moves.is_empty() && multipv > 1 {
            self.say_once(out, "multipv", &format!("MultiPV: {name} has no policy, so one line"))?;
        }
        if !thought.printed {
            thought.print(out, &self.position, self.show_wdl, ms)?;
        }
        // After the lines: the last `info string` before `bestmove`, what python-chess keeps.
        if let Some(words) = left_out {
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
}

/// One think's answer: what the player saw, the lines shown (indices into `seen.moves`), their
/// moves and values (or, when the clock left no time to value them, the position's own value for
/// the first line), the boards thought, whether the player searches, and whether its lines were
/// printed already (a sliced search prints them after each slice).
struct Thought {
    seen: Considered,
    lines: Vec<usize>,
    moves: Vec<Move>,
    values: Option<Vec<f32>>,
    root_value: Option<f32>,
    nodes: usize,
    searches: bool,
    printed: bool,
}

impl Thought {
    /// The `info` lines, one for each MultiPV line, `ms` after `go`, and each move's probability.
    fn print(&self, out: &Out, position: &Chess, show_wdl: bool, ms: u128) -> Result<()> {
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
fn lines_of(seen: &Considered, multipv: usize, searchmoves: &[String]) -> Vec<usize> {
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

/// `go`'s tokens: `infinite` and `ponder` hold the answer, `searchmoves` restricts it, the
/// limits (`wtime btime winc binc movestogo movetime depth nodes mate`) are kept for the budget.
/// A limit without a number (or a negative one: a GUI's clock gone below zero counts as 0), or a
/// token nobody knows, is said on stderr and passed over.
fn parse_go(words: &[&str]) -> Go {
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

/// A value in [−1, 1] for the side to move (its expected score (1 + v)/2) as centipawns on the
/// logistic scale where 400 cp is 10:1 odds, within ±2,000.
fn centipawns(v: f32) -> i32 {
    let p = ((1.0 + v as f64) / 2.0).clamp(1e-6, 1.0 - 1e-6);
    (400.0 * (p / (1.0 - p)).log10()).clamp(-2000.0, 2000.0).round() as i32
}

/// A value in [−1, 1] (the expectation of win − loss) as per-mille win, draw, loss: the fewest
/// draws that value allows.
fn wdl(v: f32) -> (u32, u32, u32) {
    let v = v.clamp(-1.0, 1.0) as f64;
    let w = (1000.0 * v.max(0.0)).round() as u32;
    let l = (1000.0 * (-v).max(0.0)).round() as u32;
    (w, 1000 - w - l, l)
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

    #[test]
    fn values_become_centipawns_and_wdl_on_one_scale() {
        assert_eq!(centipawns(0.0), 0);
        assert!(centipawns(0.5) > 0 && centipawns(-0.5) == -centipawns(0.5));
        assert_eq!(centipawns(1.0), 2000);
        assert_eq!(wdl(0.25), (250, 750, 0));
        assert_eq!(wdl(-1.0), (0, 0, 1000));
    }

    #[test]
    fn a_line_longer_than_the_limit_is_refused_and_the_next_is_read() {
        let mut text = vec![b'x'; LINE_LIMIT + 10];
        text.extend_from_slice(b"\nisready\r\nquit");
        let lines = read_lines(std::io::Cursor::new(text));
        let got: Vec<String> = lines
            .iter()
            .map(|l| match l {
                Line::Text(t) => t,
                Line::TooLong(n) => format!("too long {n}"),
            })
            .collect();
        assert_eq!(got, [format!("too long {}", LINE_LIMIT + 10), "isready".into(), "quit".into()]);
    }
}
