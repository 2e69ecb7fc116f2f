//! The fly as a UCI engine (`flychess uci`): the Universal Chess Interface on a pair of streams,
//! so any chess program (Cute Chess, Arena, En Croissant, Scid, lichess-bot, python-chess) can
//! load a fly, Charles or an aided player of this brain as an engine. A session answers `uci`
//! with its name, author and options (`Player`, `Imagination`, `Engine`, `MultiPV`, `Threads`,
//! `UCI_ShowWDL`), `isready` once its brain is ready, keeps the game from `position` (the keys of
//! every position in it, so the repetition rule sees the game's history), and for `go` thinks
//! once — a think takes milliseconds to a second, so every time limit is met — prints an `info`
//! line for each of its MultiPV most probable moves (the score from the value head of the board
//! after the move, the move's probability in an `info string`) and `bestmove`; `go infinite` and
//! `go ponder` hold `bestmove` until `stop` or `ponderhit`. Nothing a client sends can end it
//! but `quit` or the end of its input: an unknown command or token is said on stderr and
//! ignored, a malformed `position` or an illegal move in it is said in an `info string` and the
//! last good position kept, a line longer than `LINE_LIMIT` is refused unread.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, anyhow};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Move, Position};

use flychess_sim::brain::Brain;
use flychess_sim::brain::simulator::{self, EngineChoice, Simulator};
use flychess_sim::connectome::brain_file::Loaded;
use flychess_sim::players::{Entrant, Kit, Player};
use flychess_sim::readout::position_key;
use flychess_sim::store::BrainSpec;

/// The longest line read (a `position` with a whole game's moves is a few kilobytes).
pub const LINE_LIMIT: usize = 64 * 1024;

/// The most lines `MultiPV` may ask for.
const MOST_LINES: usize = 256;

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
    loaded: Loaded,
    brain: Arc<Brain>,
    /// Every player the `Player` option offers, the default first.
    players: Vec<String>,
}

/// The player in force, made ready for its name (rebuilt when the name or imagination changes).
struct Seat {
    name: String,
    imagination: f32,
    entrant: Entrant,
    kit: Kit,
}

/// What `go` asked for, as far as this engine uses it.
#[derive(Debug, Default, PartialEq)]
struct Go {
    /// Hold `bestmove` until `stop` (or `ponderhit`).
    hold: bool,
    /// Restrict the choice to these moves (`searchmoves`).
    searchmoves: Vec<String>,
}

/// A UCI session over `input` and `output`; returns when `quit` arrives or the input ends.
pub fn serve(start: Start, input: impl BufRead + Send + 'static, output: &mut dyn Write) -> Result<()> {
    let mut session = Session::new(start);
    let lines = read_lines(input);
    while let Ok(line) = lines.recv() {
        let text = match line {
            Line::Text(t) => t,
            Line::TooLong(n) => {
                session.say(output, &format!("a line of {n} bytes was refused unread (at most {LINE_LIMIT})"))?;
                continue;
            }
        };
        match session.command(&text, output)? {
            Next::Go(go) => {
                let best = session.go(&go, output)?;
                if go.hold {
                    // `go infinite` / `go ponder`: bestmove after `stop` or `ponderhit`.
                    loop {
                        match lines.recv() {
                            Ok(Line::Text(t)) if matches!(t.trim(), "stop" | "ponderhit") => break,
                            Ok(Line::Text(t)) if t.trim() == "quit" => return Ok(()),
                            Ok(Line::Text(t)) if t.trim() == "isready" => writeln!(output, "readyok")?,
                            Ok(Line::Text(t)) => eprintln!("uci: ignored while thinking: {}", shorten(&t)),
                            Ok(Line::TooLong(n)) => eprintln!("uci: a line of {n} bytes was refused unread"),
                            Err(_) => return Ok(()),
                        }
                        output.flush()?;
                    }
                }
                writeln!(output, "bestmove {}", best.as_deref().unwrap_or("(none)"))?;
            }
            Next::Quit => return Ok(()),
            Next::Read => {}
        }
        output.flush()?;
    }
    Ok(())
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
        }
    }

    fn say(&self, output: &mut dyn Write, words: &str) -> Result<()> {
        writeln!(output, "info string {}", words.replace(['\n', '\r'], " "))?;
        Ok(())
    }

    /// The brain, loaded the first time it is needed (`uci`, `isready`, `go`).
    fn ready(&mut self) -> Result<&Ready> {
        if self.ready.is_none() {
            let (loaded, brain) = flychess_sim::store::ready_brain(
                &self.start.spec,
                &self.start.data,
                flychess_sim::calibrate::CalibrationOptions::default(),
                &|_, _| {},
            )?;
            // What the window's New game offers: the brain's flies and dopamine flies, each trained
            // fly with Philidor's aids, every finished Charles run.
            let players = crate::lab::flies::read_lists(&self.start.data, Some(loaded.checksum.clone())).playable;
            self.ready = Some(Ready { loaded, brain: Arc::new(brain), players });
        }
        Ok(self.ready.as_ref().expect("made above"))
    }

    /// The player's name in force.
    fn player_name(&mut self) -> Result<String> {
        if let Some(p) = &self.player {
            return Ok(p.clone());
        }
        let checksum = self.ready()?.loaded.checksum.clone();
        flychess_sim::fly::trained_for(&checksum, &self.start.data)
            .map(|(name, _)| name)
            .ok_or_else(|| anyhow!("this brain has no trained fly yet: train one with `flychess train` or name a player"))
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
                crate::players::entrant_named(&name, &data, Some(&ready.loaded.checksum), Some((&ready.brain, &descending[..])))?;
            // The Imagination option: a readout fly playing its favourite looks one move ahead.
            let entrant = match (&entrant, &named) {
                (Entrant::Fly { imagination: None, sample: false, .. }, crate::players::Named::Fly(f)) if imagination > 0.0 => {
                    Entrant::fly(f, Some(imagination))
                }
                _ => entrant,
            };
            let (flies, dopamine, charles) = crate::players::kit_parts([(named, &entrant)]);
            let flies: Vec<_> = flies
                .into_iter()
                .map(|(f, mut plays_as)| {
                    plays_as.push(entrant.clone());
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
            self.seat = Some(Seat { name, imagination, entrant, kit });
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
                let name = match self.player_name() {
                    Ok(n) => n,
                    Err(e) => {
                        self.say(output, &format!("{e:#}"))?;
                        "no player".into()
                    }
                };
                writeln!(output, "id name Fly Chess ({name})")?;
                writeln!(output, "id author the Fly Chess authors (a fruit-fly brain, FlyWire v783 wiring)")?;
                let players = self.ready.as_ref().map(|r| r.players.clone()).unwrap_or_default();
                let mut combo = format!("option name Player type combo default {name}");
                for p in players.iter().chain(std::iter::once(&name)).collect::<std::collections::BTreeSet<_>>() {
                    combo.push_str(&format!(" var {p}"));
                }
                writeln!(output, "{combo}")?;
                writeln!(output, "option name Imagination type string default 0")?;
                writeln!(output, "option name Engine type combo default {} var auto var cpu var gpu", engine_name(self.engine))?;
                writeln!(output, "option name MultiPV type spin default 1 min 1 max {MOST_LINES}")?;
                writeln!(output, "option name Threads type spin default {} min 1 max 256", self.threads)?;
                writeln!(output, "option name UCI_ShowWDL type check default false")?;
                writeln!(output, "uciok")?;
            }
            "isready" => {
                if let Err(e) = self.seat() {
                    self.say(output, &format!("{e:#}"))?;
                }
                writeln!(output, "readyok")?;
            }
            "ucinewgame" => {
                self.set_position(Chess::default(), &[], output)?;
                self.gos = 0;
            }
            "position" => self.position(&rest, output)?,
            "setoption" => self.set_option(&rest, output)?,
            "go" => return Ok(Next::Go(parse_go(&rest))),
            "stop" | "ponderhit" => {}
            "quit" => return Ok(Next::Quit),
            "debug" | "register" => {}
            other => eprintln!("uci: unknown command {}", shorten(other)),
        }
        Ok(Next::Read)
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
        match name.to_ascii_lowercase().as_str() {
            "player" => {
                let before = self.player.replace(value.clone());
                if let Err(e) = self.seat() {
                    self.player = before;
                    self.say(output, &format!("{} cannot play ({e:#}); Player stays as it was", shorten(&value)))?;
                }
            }
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

    /// Thinks once in the current position: the info lines, and the move (None: no legal move).
    fn go(&mut self, go: &Go, output: &mut dyn Write) -> Result<Option<String>> {
        let started = Instant::now();
        if self.position.legal_moves().is_empty() {
            self.say(output, "the game is over: no legal move")?;
            return Ok(None);
        }
        if let Err(e) = self.seat() {
            self.say(output, &format!("{e:#}; playing the first legal move"))?;
            return Ok(Some(uci(&self.position.legal_moves()[0])));
        }
        if self.simulator.as_ref().is_none_or(|(c, _)| *c != self.engine) {
            let brain = self.ready()?.brain.clone();
            let sim = Simulator::choose(self.engine, &brain).or_else(|e| {
                eprintln!("uci: the {} engine could not start ({e}); thinking on the CPU", engine_name(self.engine));
                Simulator::choose(EngineChoice::Cpu, &brain)
            })?;
            self.simulator = Some((self.engine, Arc::new(sim)));
        }
        if self.pool.as_ref().is_none_or(|(n, _)| *n != self.threads) {
            self.pool = Some((self.threads, rayon::ThreadPoolBuilder::new().num_threads(self.threads).build()?));
        }
        self.gos += 1;
        let stockfish = flychess_sim::stockfish::find_stockfish(None).ok();
        let seat = self.seat.as_ref().expect("seated above");
        let brain = self.ready.as_ref().expect("ready above").brain.clone();
        let sim = self.simulator.as_ref().expect("made above").1.clone();
        let (position, earlier, multipv, gos) = (&self.position, &self.keys[..self.keys.len() - 1], self.multipv, self.gos);
        let pool = &self.pool.as_ref().expect("made above").1;
        let answer = pool.install(|| -> Result<_> {
            let _in_force = simulator::install(&brain, sim);
            let mut player = Player::new(&seat.entrant, Some(&seat.kit), 20_000, gos, &stockfish)?;
            let seen = player.consider(position, earlier)?;
            let lines = lines_of(&seen, multipv, &go.searchmoves);
            let moves: Vec<Move> = lines.iter().map(|&i| seen.moves.get(i).copied().unwrap_or(seen.chosen)).collect();
            let values = player.values_after(position, &moves)?;
            Ok((seen, lines, moves, values))
        });
        let (seen, lines, moves, values) = match answer {
            Ok(a) => a,
            Err(e) => {
                self.say(output, &format!("the player could not think ({e:#}); playing the first legal move"))?;
                return Ok(Some(uci(&self.position.legal_moves()[0])));
            }
        };
        let ms = started.elapsed().as_millis();
        if values.is_none() {
            self.say(output, "this player has no value head: scores are 0")?;
        }
        for (k, (&i, m)) in lines.iter().zip(&moves).enumerate() {
            let value = values.as_ref().map(|v| v[k]);
            let mates = {
                let mut after = self.position.clone();
                after.play_unchecked(*m);
                after.is_checkmate()
            };
            let score = match (mates, value) {
                (true, _) => "mate 1".to_string(),
                (false, Some(v)) => format!("cp {}", centipawns(v)),
                (false, None) => "cp 0".to_string(),
            };
            let wdl = match (self.show_wdl, value) {
                (true, Some(v)) => {
                    let (w, d, l) = wdl(if mates { 1.0 } else { v });
                    format!(" wdl {w} {d} {l}")
                }
                _ => String::new(),
            };
            writeln!(output, "info depth 1 seldepth 1 multipv {} score {score}{wdl} nodes 1 time {ms} pv {}", k + 1, uci(m))?;
            if let Some(p) = seen.probability.get(i) {
                writeln!(output, "info string multipv {} {} probability {:.4}", k + 1, uci(m), p)?;
            }
        }
        let chosen = if go.searchmoves.is_empty() || go.searchmoves.contains(&uci(&seen.chosen)) {
            seen.chosen
        } else {
            moves.first().copied().unwrap_or(seen.chosen)
        };
        Ok(Some(uci(&chosen)))
    }
}

/// The lines to show, as indices into `seen.moves`: the move played first, then the most
/// probable others, `multipv` in all (only those in `searchmoves` when it names any). A player
/// without a policy shows its move alone (index past the end: the move played).
fn lines_of(seen: &flychess_sim::players::Considered, multipv: usize, searchmoves: &[String]) -> Vec<usize> {
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

/// `go`'s tokens: `infinite` and `ponder` hold the answer, `searchmoves` restricts it; the
/// limits (`wtime btime winc binc movestogo movetime depth nodes mate`) are read and met by
/// thinking once. An unknown token is said on stderr.
fn parse_go(words: &[&str]) -> Go {
    let mut go = Go::default();
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "infinite" | "ponder" => go.hold = true,
            "searchmoves" => {
                while let Some(m) = words.get(i + 1).filter(|w| w.parse::<UciMove>().is_ok()) {
                    go.searchmoves.push(m.to_string());
                    i += 1;
                }
            }
            "wtime" | "btime" | "winc" | "binc" | "movestogo" | "movetime" | "depth" | "nodes" | "mate" => {
                if words.get(i + 1).is_none_or(|v| v.parse::<i64>().is_err()) {
                    eprintln!("uci: go {} without a number", words[i]);
                } else {
                    i += 1;
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

fn uci(m: &Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
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
        assert_eq!(parse_go(&["wtime", "1000", "btime", "900", "winc", "10", "binc", "10", "movestogo", "20"]), Go::default());
        assert!(parse_go(&["infinite"]).hold && parse_go(&["ponder", "wtime", "5"]).hold);
        assert_eq!(parse_go(&["searchmoves", "e2e4", "d2d4", "movetime", "50"]).searchmoves, ["e2e4", "d2d4"]);
        // A limit without its number, or a token nobody knows, is passed over.
        assert_eq!(parse_go(&["depth", "x", "bogus"]), Go::default());
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
