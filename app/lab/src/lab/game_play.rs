//! A game in play, below the Play tab: the moves, who plays which side, the fly (any player:
//! a readout fly, a dopamine fly, Charles, a fly with one of Philidor's aids) and its loading off
//! the UI thread, the thinks asked of the thinker and their answers (each think kept by the ply it
//! moved at, full rates only for the newest few and the one shown; older ones recalled when
//! shown), the think being replayed before its move, the move cursor, and Stockfish's grades and
//! hint. It never draws: the Play tab, the brain card and the Brain tab are views over it, and
//! every change comes through `Lab::command` or the lab's per-frame `update`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use shakmaty::{Color, Move, Position};

use flychess_fly::fly::Fly;
use flychess_fly::readout::Policy;

use crate::game::{Game, parse_move};
use crate::grader::{GradeJob, Grader, MoveGrade, PositionGrade};
use crate::lab::ReadyBrain;
use crate::sound::{Sound, Speaker};
use crate::thinker::{Seated, ThinkRequest, Thinker, Thought};
use flychess_brain::chess::uci;

/// How many of the newest thinks keep their full rates (besides the one shown).
pub const KEEP_RATES: usize = 4;

/// How many of the fly's moves are listed and graded.
pub const CANDIDATES: usize = 8;

/// Seconds the brain card replays a think before the move is played (12 steps).
pub const REPLAY_SECONDS: f64 = 1.3;

/// A finished think waiting for its replay to end before the move is played.
struct Pending {
    thought: Thought,
    play_at: f64,
}

/// What a game needs from the lab's workers while it moves on.
pub struct Workers<'a> {
    pub thinker: Option<&'a Thinker>,
    pub grader: Option<&'a Grader>,
    pub speaker: &'a mut Speaker,
    pub data: &'a Path,
    /// The loaded brain (a dopamine fly's model is made from it).
    pub ready: Option<&'a Arc<ReadyBrain>>,
}

pub struct Match {
    pub game: Game,
    /// Changes with every new or loaded game (stale answers are ignored).
    pub game_id: u64,
    pub user: Color,
    pub fly_name: String,
    pub fly: Option<Seated>,
    /// The playing readout fly's imagination weight (None for other players).
    imagination_weight: Option<f32>,
    /// What the status says when imagination is switched on for a fly whose weight is not tuned.
    pub(in crate::lab) imagination_note: Option<String>,
    /// The fly being made ready off the UI thread (`load_fly`).
    fly_job: Option<std::sync::mpsc::Receiver<Loading>>,
    /// None: following the game; Some(ply): looking at the position after `ply` moves.
    pub(in crate::lab) cursor: Option<usize>,
    /// The think in flight: (request id, when it started).
    pub thinking: Option<(u64, f64)>,
    next_request: u64,
    pending: Option<Pending>,
    /// The fly's thoughts by the ply it moved at. Only the newest KEEP_RATES and the one shown
    /// keep their rates (6 MB each on FlyWire); the others' are let go and recalled when shown.
    pub thoughts: HashMap<usize, Thought>,
    /// The recall in flight: (request id, the ply of the think it restores).
    recalling: Option<(u64, usize)>,
    /// Stockfish's grades by ply, with the FEN they belong to.
    pub grades: HashMap<usize, PositionGrade>,
    requested: HashMap<usize, String>,
    pub hint: Option<(String, Move)>,
    pub(in crate::lab) imagination: bool,
    /// The Brain tab shows a two-glances think's second look instead of its first.
    pub(in crate::lab) second_glance: bool,
    /// Replay the fly's 12 steps before its move is played.
    pub(in crate::lab) replay: bool,
    /// What the game last said (a fly that cannot play, a dropped premove, a bad move typed).
    pub(in crate::lab) status: String,
    /// The fly stops moving once the game has this many plies (`--watch --plies N`).
    pub stop_at: Option<usize>,
    /// Who plays the user's side when the window plays by itself (`--watch`).
    pub opponent_name: Option<String>,
    /// The flies a page fetched, by name (seated from memory: a page has no flies on disk).
    #[cfg(not(feature = "native"))]
    pub(in crate::lab) fetched: Vec<(String, Arc<Vec<u8>>)>,
}

impl Match {
    pub fn new(fly_name: String, user: Color) -> Match {
        Match {
            game: Game::default(),
            game_id: 1,
            user,
            fly_name,
            fly: None,
            imagination_weight: None,
            imagination_note: None,
            fly_job: None,
            cursor: None,
            thinking: None,
            next_request: 1,
            pending: None,
            thoughts: HashMap::new(),
            recalling: None,
            grades: HashMap::new(),
            requested: HashMap::new(),
            hint: None,
            imagination: false,
            second_glance: false,
            replay: true,
            status: String::new(),
            stop_at: None,
            opponent_name: None,
            #[cfg(not(feature = "native"))]
            fetched: Vec::new(),
        }
    }

    /// Loads the fly by name for the brain with `checksum`, on a thread (its file read and checked,
    /// a dopamine fly's model of the brain made, a judge's weight read back or chosen on VAL,
    /// Charles's weights loaded); it plays once ready. When the fly is missing or belongs to
    /// another brain, the brain's own trained fly (the shipped one first) plays instead and the
    /// status says so. A brain with no trained fly yet says how to train one.
    pub fn load_fly(&mut self, data: &std::path::Path, checksum: &str, ready: Option<&Arc<ReadyBrain>>) {
        let (tx, rx) = std::sync::mpsc::channel();
        let (name, checksum, ready, data) = (self.fly_name.clone(), checksum.to_string(), ready.cloned(), data.to_path_buf());
        let unstarted = tx.clone();
        #[cfg(not(feature = "native"))]
        let fetched = self.fetched.clone();
        let loading = super::jobs::runner::spawn("fly-loading", move || {
            let say = |status: String| {
                let _ = tx.send(Loading::Saying(status));
            };
            #[cfg(feature = "native")]
            let seated = seat(&name, &checksum, ready, &data, &say);
            #[cfg(not(feature = "native"))]
            let seated = seat_fetched(&name, &checksum, ready, &fetched, &data, &say);
            let _ = tx.send(Loading::Done(seated));
        });
        if let Err(e) = loading {
            let _ = unstarted.send(Loading::Done(Err(e)));
        }
        self.fly = None;
        self.fly_job = Some(rx);
    }

    /// Takes the fly that became ready; true while one is still being prepared.
    fn poll_fly_job(&mut self) -> bool {
        let Some(rx) = &self.fly_job else { return false };
        let answer = loop {
            match rx.try_recv() {
                Ok(Loading::Saying(status)) => self.status = status,
                Ok(Loading::Done(done)) => break Ok(done),
                Err(e) => break Err(e),
            }
        };
        match answer {
            Ok(Ok(ready)) => {
                let Seat { player, name, status, imagination_weight, imagination_note } = ready;
                self.imagination_weight = imagination_weight;
                self.imagination_note = imagination_note;
                self.fly_name = name;
                if let Some(status) = status {
                    self.status = status;
                }
                self.fly = Some(player);
                self.fly_job = None;
                false
            }
            Ok(Err(e)) => {
                self.status = e;
                self.fly = None;
                self.fly_job = None;
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => true,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.status = format!("{} could not be prepared.", self.fly_name);
                self.fly_job = None;
                false
            }
        }
    }

    /// A fly is being made ready.
    pub fn preparing_fly(&self) -> bool {
        self.fly_job.is_some()
    }

    pub fn start_game(&mut self, game: Game, user: Color) {
        self.game = game;
        self.game_id += 1;
        self.user = user;
        self.cursor = None;
        self.thinking = None;
        self.pending = None;
        self.thoughts.clear();
        self.recalling = None;
        self.grades.clear();
        self.requested.clear();
        self.hint = None;
        self.status.clear();
    }

    /// The ply shown on the board.
    /// None: following the game; Some(ply): the position after `ply` moves is shown.
    pub fn cursor(&self) -> Option<usize> {
        self.cursor
    }

    /// What the game last said.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// Whether the fly looks at the board after each of its own moves.
    /// Whether the Brain tab shows the second of two glances (where the think has one).
    pub fn showing_second_glance(&self) -> bool {
        self.second_glance
    }

    pub fn imagination(&self) -> bool {
        self.imagination
    }

    /// Whether the fly's 12 steps are replayed before its move is played.
    pub fn replay(&self) -> bool {
        self.replay
    }

    /// Shows the position after `ply` moves (None, or the last ply: follows the game).
    pub(in crate::lab) fn show(&mut self, ply: Option<usize>) {
        self.cursor = ply.filter(|&p| p < self.game.plies());
    }

    pub(in crate::lab) fn say(&mut self, words: String) {
        self.status = words;
    }

    pub fn shown_ply(&self) -> usize {
        self.cursor.unwrap_or(self.game.plies()).min(self.game.plies())
    }

    pub fn fly_to_move(&self) -> bool {
        !self.game.is_over() && self.game.turn() != self.user && self.stop_at.is_none_or(|n| self.game.plies() < n)
    }

    /// Every think the game holds: the one being replayed and the ones kept by ply.
    fn every_think_mut(&mut self) -> impl Iterator<Item = &mut Thought> {
        self.pending.iter_mut().map(|p| &mut p.thought).chain(self.thoughts.values_mut())
    }

    /// The requests in flight are dropped (their thinker is gone): the fly's move and any recall
    /// are asked again of the next one.
    pub fn forget_requests(&mut self) {
        self.thinking = None;
        self.recalling = None;
        // A copy that was to follow from the dead thinker is recalled from the new one.
        for t in self.every_think_mut() {
            t.rates_follow = false;
        }
    }

    /// Takes back to the user's last turn (one move if the fly has not answered yet, else two).
    pub fn take_back(&mut self, speaker: &mut Speaker) {
        let n = if self.game.turn() == self.user { 2 } else { 1 };
        let n = if self.game.plies() < n { self.game.plies() } else { n };
        if n == 0 && !self.game.is_over() {
            return;
        }
        self.game.take_back(n);
        self.thinking = None;
        self.pending = None;
        self.cursor = None;
        self.hint = None;
        let plies = self.game.plies();
        self.thoughts.retain(|&k, _| k < plies);
        speaker.play(Sound::TakeBack);
    }

    /// Plays `m` for whoever is to move; sounds, premove and grading follow.
    pub fn play_move(&mut self, m: Move, w: &mut Workers) -> bool {
        let ply = self.game.plies();
        match self.game.play(m) {
            Ok(san) => {
                w.speaker.play(if self.game.is_over() { Sound::GameEnd } else { Sound::of_move(&san) });
                self.hint = None;
                self.request_grade(ply, w.grader);
                true
            }
            Err(e) => {
                self.status = e.to_string();
                w.speaker.play(Sound::Illegal);
                false
            }
        }
    }

    /// `colour` resigns.
    pub fn resign(&mut self, colour: Color, speaker: &mut Speaker) {
        if !self.game.is_over() {
            self.game.resign(colour);
            speaker.play(Sound::GameEnd);
        }
    }

    /// Asks a new grader for every grade the game still lacks (the one they were asked of died
    /// or was replaced before answering).
    pub fn regrade(&mut self, grader: Option<&Grader>) {
        self.requested.retain(|ply, _| self.grades.contains_key(ply));
        for ply in 0..self.game.plies() {
            self.request_grade(ply, grader);
        }
    }

    /// Asks Stockfish for its best move in the current position.
    pub fn ask_hint(&self, grader: Option<&Grader>) {
        if let Some(g) = grader
            && !self.game.is_over()
        {
            g.hint(self.game.fen(self.game.plies()));
        }
    }

    /// Asks Stockfish to grade the position before move `ply`: the best move, the played move,
    /// and the fly's candidates (its choices if it moved, its expectations if the user did).
    fn request_grade(&mut self, ply: usize, grader: Option<&Grader>) {
        let Some(grader) = grader else { return };
        let fen = self.game.fen(ply);
        if self.requested.get(&ply) == Some(&fen) {
            return;
        }
        let mut moves: Vec<String> = self.candidates(ply).iter().take(CANDIDATES).map(|(m, _)| uci(m)).collect();
        if let Some(m) = self.game.moves().get(ply) {
            moves.push(uci(m));
        }
        self.requested.insert(ply, fen.clone());
        grader.grade(GradeJob { game: self.game_id, ply, fen, moves });
    }

    /// The fly's moves for the position before `ply` with their probabilities, most likely first:
    /// what it considered (its own move) or what it expected (the user's move).
    pub fn candidates(&self, ply: usize) -> Vec<(Move, f32)> {
        let policy: Option<&Policy> = match self.thoughts.get(&ply) {
            Some(t) => Some(&t.policy),
            None => ply.checked_sub(1).and_then(|p| self.thoughts.get(&p)).and_then(|t| t.expects.as_ref()),
        };
        let Some(p) = policy else { return Vec::new() };
        let mut v: Vec<(Move, f32)> = p.moves.iter().copied().zip(p.probability.iter().copied()).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// The grade of a move at `ply`, if Stockfish has it and the position is still that one.
    pub fn grade_of(&self, ply: usize, m: &Move) -> Option<MoveGrade> {
        let g = self.grades.get(&ply)?;
        if self.requested.get(&ply) != Some(&self.game.fen(ply)) {
            return None;
        }
        g.grade(&uci(m))
    }

    /// Mean accuracy of `colour`'s graded moves.
    pub fn accuracy(&self, colour: Color) -> Option<(f64, usize)> {
        let values: Vec<f64> = self
            .game
            .moves()
            .iter()
            .enumerate()
            .filter(|(ply, _)| self.game.position(*ply).turn() == colour)
            .filter_map(|(ply, m)| self.grade_of(ply, m).map(|g| g.accuracy))
            .collect();
        (!values.is_empty()).then(|| (values.iter().sum::<f64>() / values.len() as f64, values.len()))
    }

    /// Per frame (`now` in seconds, the window's clock): answers from the thinker and grader, the
    /// fly's turn. Returns how long until it needs another look (a replay ending, a fly being
    /// prepared), if it does.
    pub fn update(
        &mut self,
        now: f64,
        animate: bool,
        w: &mut Workers,
        grades: Vec<PositionGrade>,
        hints: Vec<(String, String)>,
    ) -> Option<f64> {
        let mut wake: Option<f64> = None;
        for g in grades {
            if g.game == self.game_id {
                self.grades.insert(g.ply, g);
            }
        }
        for (fen, best) in hints {
            if fen == self.game.fen(self.game.plies())
                && let Ok(m) = parse_move(self.game.current(), &best)
            {
                self.hint = Some((fen, m));
            }
        }
        if let Some(thinker) = w.thinker {
            while let Ok(t) = thinker.answers.try_recv() {
                if t.follow_up {
                    // A GPU think's CPU copy for the panels, wherever that think is now.
                    let waiting = self.every_think_mut().find(|o| o.id == t.id && o.rates_follow);
                    if let Some(o) = waiting {
                        o.rates = t.rates;
                        o.rates_follow = false;
                    }
                    continue;
                }
                if let Some((id, ply)) = self.recalling
                    && id == t.id
                {
                    self.recalling = None;
                    if let Some(old) = self.thoughts.get_mut(&ply)
                        && old.position == t.position
                    {
                        old.rates = t.rates;
                    }
                    continue;
                }
                if self.thinking.map(|(id, _)| id) == Some(t.id) {
                    self.thinking = None;
                    let delay = if self.replay && animate { REPLAY_SECONDS } else { 0.0 };
                    self.pending = Some(Pending { thought: t, play_at: now + delay });
                }
            }
        }
        if let Some(p) = &self.pending {
            if now >= p.play_at {
                let p = self.pending.take().expect("checked");
                let ply = self.game.plies();
                if self.game.current() == &p.thought.position {
                    let chosen = p.thought.chosen;
                    // The GPU engine's one rates buffer now holds this think: the others show
                    // their own copies.
                    for t in self.thoughts.values_mut() {
                        t.gpu_rates = None;
                    }
                    self.thoughts.insert(ply, p.thought);
                    self.play_move(chosen, w);
                }
            } else {
                wake = Some((p.play_at - now).max(0.01));
            }
        }
        if self.poll_fly_job() {
            wake = Some(wake.map_or(0.1, |s| s.min(0.1)));
        }
        if self.fly_to_move()
            && self.thinking.is_none()
            && self.pending.is_none()
            && let (Some(thinker), Some(fly)) = (w.thinker, &self.fly)
        {
            let id = self.next_request;
            self.next_request += 1;
            self.thinking = Some((id, now));
            thinker.ask(ThinkRequest {
                id,
                fly: fly.clone(),
                position: self.game.current().clone(),
                earlier: self.game.keys().to_vec(),
                // The weight `flychess imagine-tune` chose on VAL for this fly (1 until tuned).
                // A dopamine fly looks one move ahead by design: it has no imagination switch.
                imagination: self.imagination_weight.filter(|_| self.imagination && fly.aid().is_none()),
                history: if fly.remembers_the_game() { self.game.positions().to_vec() } else { Vec::new() },
                recall: false,
            });
        }
        self.keep_rates_bounded(w.thinker);
        wake
    }

    /// The ply of the think that belongs to the position shown: the fly's think in that position
    /// if it moved there, else the think behind the last fly move before it.
    pub fn shown_key(&self) -> Option<usize> {
        let shown = self.shown_ply();
        self.thoughts.keys().copied().filter(|&k| k <= shown).max()
    }

    /// The think the brain card, the sentence, the region bars, the inspector and the export
    /// show: the one being replayed when following the game, else the one of the position on the
    /// board (`shown_key`). None after a new game: the brain is silent.
    pub fn shown_thought(&self) -> Option<&Thought> {
        let first = self.first_glance();
        match first.and_then(|t| t.second_glance.as_deref()) {
            Some(second) if self.second_glance => Some(&second.thought),
            _ => first,
        }
    }

    /// The shown think itself: with two glances, its first look (`shown_thought` follows the
    /// Brain tab's choice of glance).
    pub fn first_glance(&self) -> Option<&Thought> {
        if self.cursor.is_none()
            && let Some(p) = &self.pending
        {
            return Some(&p.thought);
        }
        self.shown_key().and_then(|k| self.thoughts.get(&k))
    }

    /// Keeps full rates for the newest KEEP_RATES thinks and the one shown, lets the others' go,
    /// and asks the thinker to recall the shown one's when they were let go.
    fn keep_rates_bounded(&mut self, thinker: Option<&Thinker>) {
        // FLYCHESS_KEEP_ALL_RATES=1 keeps every think's rates (how the window worked before; for
        // measuring what the bound saves).
        static KEEP_ALL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if *KEEP_ALL.get_or_init(|| std::env::var_os("FLYCHESS_KEEP_ALL_RATES").is_some()) {
            return;
        }
        let shown = self.shown_key();
        let mut keys: Vec<usize> = self.thoughts.keys().copied().collect();
        keys.sort_unstable_by(|a, b| b.cmp(a));
        for &k in keys.iter().skip(KEEP_RATES) {
            if Some(k) != shown && self.recalling.map(|(_, p)| p) != Some(k) {
                let t = self.thoughts.get_mut(&k).expect("listed");
                if !t.rates.is_empty() {
                    t.rates = Arc::new(Vec::new());
                    t.gpu_rates = None;
                }
                // A second glance's rates are let go for good (only the first look is recalled).
                if let Some(second) = t.second_glance.as_mut() {
                    second.thought.rates = Arc::new(Vec::new());
                }
            }
        }
        let (Some(k), Some(thinker), Some(fly)) = (shown, thinker, &self.fly) else { return };
        let t = &self.thoughts[&k];
        if t.rates.is_empty() && !t.rates_follow && self.recalling.is_none() {
            let id = self.next_request;
            self.next_request += 1;
            self.recalling = Some((id, k));
            thinker.ask(ThinkRequest {
                id,
                fly: fly.clone(),
                position: t.position.clone(),
                earlier: Vec::new(),
                imagination: None,
                history: Vec::new(),
                recall: true,
            });
        }
    }

    /// Whether a finished think is being replayed before its move is played.
    pub fn replaying(&self) -> bool {
        self.pending.is_some()
    }

    /// Seconds into the replay of the pending think (None: no replay running).
    pub fn replay_progress(&self, now: f64) -> Option<f64> {
        self.pending.as_ref().map(|p| ((now - (p.play_at - REPLAY_SECONDS)) / REPLAY_SECONDS).clamp(0.0, 1.0))
    }

    pub fn pgn(&self) -> String {
        let fly = format!("Fly {}", self.fly_name);
        let (white, black) = if self.user == Color::White { ("You", fly.as_str()) } else { (fly.as_str(), "You") };
        self.game.pgn(white, black, &flychess_fly::fly::today())
    }

    /// White's win chance after each ply from Stockfish's grades (None where not graded yet).
    pub fn evaluation_curve(&self) -> Vec<(usize, f64)> {
        (0..=self.game.plies())
            .filter_map(|ply| {
                let g = self.grades.get(&ply)?;
                if self.requested.get(&ply) != Some(&self.game.fen(ply)) {
                    return None;
                }
                let pov = if self.game.position(ply).turn() == Color::White { g.best_score } else { g.best_score.flip() };
                Some((ply, pov.win_percent()))
            })
            .collect()
    }
}

/// What the thread making a fly ready sends: what it is doing, then the fly or why it cannot play.
enum Loading {
    Saying(String),
    Done(Result<Seat, String>),
}

/// A fly made ready to play: the player, its name (another when the one asked for could not
/// play on this brain), and what the status should say (None: nothing to say).
struct Seat {
    player: Seated,
    name: String,
    status: Option<String>,
    /// A readout fly's imagination weight (`flychess imagine-tune`'s, 1 until tuned), read here
    /// once rather than at every move.
    imagination_weight: Option<f32>,
    /// Said when imagination is switched on and its weight is not tuned.
    imagination_note: Option<String>,
}

/// Makes the player `name` ready on the brain with `checksum` (the loaded brain `ready`, when it
/// is that one). The name is seated as every front door seats it
/// (`flychess_arena::players::seat`); the board then seats what its thinker shows: a readout fly
/// (FLY+imagination: the fly, its imagination being the switch under the board), a fly with one
/// of Philidor's aids, a dopamine fly, Charles or charles:RUN. A plain fly name that cannot play
/// here (missing, damaged, of another brain) gives this brain's trained fly instead, said in the
/// status. The error is the status to show; `say` tells the status what takes time.
#[cfg(feature = "native")]
fn seat(name: &str, checksum: &str, ready: Option<Arc<ReadyBrain>>, data: &std::path::Path, say: &dyn Fn(String)) -> Result<Seat, String> {
    use flychess_arena::players::{Entrant, Lookup};
    let ready = ready.filter(|r| r.checksum == checksum);
    let cannot = |e: &dyn std::fmt::Display| format!("{name} cannot play: {e}");
    let progress = |what: &str, done: usize, _total: usize| {
        if done == 0 {
            let mut words = what.chars();
            say(words.next().map(|c| c.to_uppercase().chain(words).collect::<String>() + "…").unwrap_or_default());
        }
    };
    // A dopamine fly's mushroom body that cannot be made is said as such (its name is no mistake).
    let unmade = std::cell::RefCell::new(None);
    let mushroom_body = |constants| {
        say(format!("Preparing dopamine fly {name}'s mushroom body…"));
        let ready = ready.as_ref().ok_or_else(|| flychess_arena::Error::NeedsBrain(name.to_string()))?;
        ready.dopamine_model(data, constants, &|_| {}).inspect_err(|e| *unmade.borrow_mut() = Some(cannot(e)))
    };
    let at = Lookup { progress: &progress, ..Lookup::in_folder(data, &flychess_charles::player::Runs) }
        .of_brain(checksum, ready.as_ref().map(|r| r.venue(&mushroom_body)));
    let plain_fly_name = !name.contains('+') && !name.contains(':') && Entrant::rung(name).is_none() && name != "charles";
    let seated = match flychess_arena::players::seat(name, &at, None) {
        Ok(seated) => seated,
        Err(flychess_arena::Error::NeedsBrain(_)) => return Err(format!("{name} waits for its brain.")),
        Err(e) => {
            return match unmade.take() {
                Some(said) => Err(said),
                None if plain_fly_name => own_fly_instead(name, &at, data, &e),
                None => Err(cannot(&e)),
            };
        }
    };
    shown(name, seated, data).map_err(|e| cannot(&e))
}

/// Makes the fly `name` ready from the flies a page fetched (`fetched`: name and file bytes) on
/// the page's brain (`ready`, the one with `checksum`): a readout fly, seated from memory; a name
/// the page did not fetch gives its first fly instead, said in the status. A page has no dopamine
/// flies, Charles or aids (`NoNetworks`): those need the desktop program.
#[cfg(not(feature = "native"))]
fn seat_fetched(
    name: &str,
    checksum: &str,
    ready: Option<Arc<ReadyBrain>>,
    fetched: &[(String, Arc<Vec<u8>>)],
    data: &std::path::Path,
    say: &dyn Fn(String),
) -> Result<Seat, String> {
    use flychess_arena::players::{Entrant, Lookup, Seating};
    let Some(ready) = ready.filter(|r| r.checksum == checksum) else { return Err(format!("{name} waits for its brain.")) };
    let (own, bytes) = match fetched.iter().find(|(n, _)| n == name).or_else(|| fetched.first()) {
        Some(f) => f,
        None => return Err("No fly came with the page.".into()),
    };
    say(format!("Reading fly {own}…"));
    let fly = Fly::from_bytes(bytes, std::path::Path::new(own)).map_err(|e| format!("{own} cannot play: {e}"))?;
    if fly.meta.brain_checksum != checksum {
        return Err(format!("Fly {own} was trained on another brain ({})", fly.meta.brain));
    }
    let no_body = |_: flychess_arena::bio::Constants| -> flychess_arena::Result<Arc<flychess_arena::bio::BioBrain>> {
        Err(flychess_arena::Error::Invalid(format!("a dopamine fly: {}", crate::lab::NEEDS_DESKTOP)))
    };
    let at = Lookup::in_folder(data, &flychess_arena::network::NoNetworks).of_brain(checksum, Some(ready.venue(&no_body)));
    let entrant = Entrant::fly(&fly, None);
    let seated = Seating::new(&at).with_flies(&[(fly, vec![entrant.clone()])]).seated(entrant);
    let status = (own != name).then(|| format!("{name} did not come with the page; {own} plays instead."));
    let mut seat = shown(own, seated, data).map_err(|e| format!("{own} cannot play: {e}"))?;
    if status.is_some() {
        seat.status = status;
    }
    Ok(seat)
}

/// A plain fly name that could not be seated (`e`): this brain's trained fly plays instead on
/// the same brain, the status saying why; or, with none, how to train one.
#[cfg(feature = "native")]
fn own_fly_instead(
    name: &str,
    at: &flychess_arena::players::Lookup,
    data: &std::path::Path,
    e: &flychess_arena::Error,
) -> Result<Seat, String> {
    let checksum = at.checksum.unwrap_or_default();
    let why = match flychess_fly::fly::find(name, data).and_then(|p| Fly::load(&p)) {
        Ok(f) if f.meta.brain_checksum != checksum => format!("Fly {name} was trained on another brain ({})", f.meta.brain),
        _ => format!("Fly {name} could not be loaded ({e})"),
    };
    match flychess_fly::fly::trained_for(checksum, data).map(|(name, p)| (name, Fly::load(&p))) {
        Some((own, Ok(f))) => {
            let entrant = flychess_arena::players::Entrant::fly(&f, None);
            let seated = flychess_arena::players::Seating::new(at).with_flies(&[(f, vec![entrant.clone()])]).seated(entrant);
            Ok(readout_fly(own.clone(), seated, Some(format!("{why}; {own}, this brain's fly, plays instead.")), data))
        }
        _ => Err(format!("{why}, and this brain has no trained fly yet: train one in the Train tab.")),
    }
}

/// A readout fly seated to play as `seated` (plain, with habituation, or with two glances), shown
/// as `name` with `status`, its imagination weight read once.
fn readout_fly(name: String, seated: Seated, status: Option<String>, data: &std::path::Path) -> Seat {
    let fly = seated.readout().expect("a readout fly").clone();
    let tuned = flychess_arena::tuned::imagination_tuned(data, &fly);
    let imagination_weight = Some(tuned.unwrap_or(flychess_arena::tuned::UNTUNED_IMAGINATION));
    let imagination_note = tuned.is_none().then(|| flychess_arena::tuned::untuned_imagination_words(&fly.meta.name));
    Seat { player: seated, name, status, imagination_weight, imagination_note }
}

/// What the board shows of the player seated for `name`, with what the status says of it; the
/// error says why the board cannot show it (a rung or Stockfish picking has no think to show;
/// Charles with an aid is valued by a fly).
fn shown(name: &str, seated: Seated, data: &std::path::Path) -> Result<Seat, String> {
    use flychess_arena::players::Entrant;
    use flychess_arena::search::Aid;
    let other = |status: String, seated: Seated| Seat {
        player: seated,
        name: name.into(),
        status: Some(status),
        imagination_weight: None,
        imagination_note: None,
    };
    match &seated.entrant {
        Entrant::Charles { name: player, .. } => Ok(other(
            format!("{player} plays: a transformer trained on the flies' positions that never was a fly. The brain stays at rest while it thinks."),
            seated,
        )),
        Entrant::Aided { value: Some(_), .. } => Err(
            "the board shows a brain's think, and Charles with an aid is valued by a fly; play it with `flychess duel`, `rate` or the UCI engine".into(),
        ),
        Entrant::Aided { aid: Aid::Select { .. }, .. } => Err(
            "Stockfish picking among the fly's moves (+sfD) plays in `flychess duel`, `rate` and the UCI engine; the board's thinker has no Stockfish".into(),
        ),
        Entrant::Aided { aid, .. } => {
            let status = format!("{name} plays: the fly's brain thinks, a {} picks among its five most probable moves.", aid.label());
            Ok(other(status, seated))
        }
        Entrant::Fly { imagination: Some(_), habituation, name: fly, .. } => {
            let status = format!("{name}: here imagination is the switch under the board; tick it and {fly} looks one move ahead.");
            let shown = if habituation.is_some() { format!("{fly}+habituation") } else { fly.clone() };
            Ok(readout_fly(shown, seated.without_imagination().expect("a fly with imagination"), Some(status), data))
        }
        Entrant::Fly { glances: Some(g), .. } => {
            let status = format!(
                "{name} plays: the brain looks twice, the second time with {}× the drive on the piece it liked most; the Brain tab shows either look.",
                g.gain
            );
            Ok(readout_fly(name.into(), seated, Some(status), data))
        }
        Entrant::Fly { habituation: Some(h), .. } => {
            let status = format!(
                "{name} plays: habituation (decay {}, weight {}) lowers the moves whose boards look like those its side made this game.",
                h.decay, h.weight
            );
            Ok(readout_fly(name.into(), seated, Some(status), data))
        }
        Entrant::Fly { .. } => Ok(readout_fly(name.into(), seated, None, data)),
        Entrant::Dopamine { .. } => {
            Ok(other(format!("Dopamine fly {name} plays: it looks at the board after each of its moves and its MBONs vote."), seated))
        }
        _ => Err(format!("it has no brain for the board to show; play it against the fly with `flychess --watch {name}` or `flychess play`")),
    }
}
