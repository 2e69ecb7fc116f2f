//! The Play tab: a game against a fly on the board widget, with a player bar above and below,
//! the brain card, and the right panel — what the fly says after its move, the moves it
//! considered and the moves it expects from you (each with Stockfish's accuracy and verdict once
//! graded), the opening name, the move list, both players' accuracy, and the game's buttons
//! (resign, takeback, hint, new game, flip, back/forward, PGN save/load/copy, FEN copy). The fly
//! thinks on the thinker thread and Stockfish grades on the grader thread; this tab only sends
//! requests and shows answers as they come.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use shakmaty::san::San;
use shakmaty::{CastlingMode, Color, Move, Position};

use flychess_sim::eval::Verdict;
use flychess_sim::fly::Fly;
use flychess_sim::readout::Policy;

use crate::game::{parse_move, Game};

/// How many of the newest thinks keep their full rates (besides the one shown).
pub const KEEP_RATES: usize = 4;
use crate::grader::{GradeJob, MoveGrade, PositionGrade};
use crate::openings::Openings;
use crate::sound::{Sound, Speaker};
use crate::thinker::{Mover, ThinkRequest, Thought, Thinker};
use crate::ui::board::{Arrow, BoardAction, BoardState, BoardTheme, BoardView};

/// How many of the fly's moves are listed and graded.
pub const CANDIDATES: usize = 8;

/// Seconds the brain card replays a think before the move is played (12 steps).
pub const REPLAY_SECONDS: f64 = 1.3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RightTab {
    Considered,
    Expects,
}

/// A finished think waiting for its replay to end before the move is played.
struct Pending {
    thought: Thought,
    play_at: f64,
}

pub struct PlayTab {
    pub game: Game,
    /// Changes with every new or loaded game (stale answers are ignored).
    pub game_id: u64,
    pub user: Color,
    pub orientation: Color,
    pub fly_name: String,
    pub fly: Option<Mover>,
    /// A dopamine fly being made ready (its model of the brain) off the UI thread.
    dopamine_job: Option<std::sync::mpsc::Receiver<Result<Mover, String>>>,
    /// None: following the game; Some(ply): looking at the position after `ply` moves.
    pub cursor: Option<usize>,
    pub board: BoardState,
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
    pub imagination: bool,
    pub blur: bool,
    pub right_tab: RightTab,
    resign_asked: bool,
    pub status: String,
    pub typed: String,
    pub pgn_path: String,
    pub new_game: Option<NewGame>,
    pub report_open: bool,
    pub replay: bool,
    /// The fly stops moving once the game has this many plies (`--watch --plies N`).
    pub stop_at: Option<usize>,
    /// Who plays the user's side when the window plays by itself (`--watch`).
    pub opponent_name: Option<String>,
    /// The user asked to train a fly for this brain (the window opens the Train tab).
    pub wants_training: bool,
    /// The candidate move under the pointer (its arrow is drawn on the board).
    pub hovered: Option<Move>,
    /// List every legal move, not only the top CANDIDATES.
    pub all_moves: bool,
}

/// The new-game dialog's choices.
#[derive(Clone, Debug)]
pub struct NewGame {
    pub fly: String,
    /// None: random.
    pub colour: Option<Color>,
}

/// What the tab needs from the app each frame.
pub struct PlayContext<'a> {
    pub thinker: Option<&'a Thinker>,
    pub grader: Option<&'a crate::grader::Grader>,
    pub grader_status: &'a str,
    pub speaker: &'a mut Speaker,
    pub theme: BoardTheme,
    pub flies: &'a [String],
    pub ratings: &'a HashMap<String, String>,
    pub data: &'a std::path::Path,
    pub brain_checksum: Option<&'a str>,
    /// The loaded brain (a dopamine fly's model is made from it).
    pub ready: Option<&'a Arc<crate::ui::ReadyBrain>>,
    pub animate: bool,
    /// What the fly looks at and what its eye sees (shared with the Brain tab).
    pub looks: &'a mut crate::ui::looks::Looks,
}

impl PlayTab {
    pub fn new(fly_name: String, user: Color) -> PlayTab {
        PlayTab {
            game: Game::default(),
            game_id: 1,
            user,
            orientation: user,
            fly_name,
            fly: None,
            dopamine_job: None,
            cursor: None,
            board: BoardState::default(),
            thinking: None,
            next_request: 1,
            pending: None,
            thoughts: HashMap::new(),
            recalling: None,
            grades: HashMap::new(),
            requested: HashMap::new(),
            hint: None,
            imagination: false,
            blur: false,
            right_tab: RightTab::Considered,
            resign_asked: false,
            status: String::new(),
            typed: String::new(),
            pgn_path: String::new(),
            new_game: None,
            report_open: false,
            replay: true,
            stop_at: None,
            opponent_name: None,
            wants_training: false,
            hovered: None,
            all_moves: false,
        }
    }

    /// Loads the fly by name for the brain with `checksum`; when that fly is missing or belongs
    /// to another brain, the brain's own trained fly (the shipped one first) plays instead and
    /// the status says so. A brain with no trained fly yet says how to train one.
    pub fn load_fly(&mut self, data: &std::path::Path, checksum: &str, ready: Option<&Arc<crate::ui::ReadyBrain>>) {
        self.dopamine_job = None;
        if let Some(run) = flychess_sim::charles::player::run_name(&self.fly_name) {
            self.load_charles(run.to_string(), data.to_path_buf());
            return;
        }
        if let Some((base, suffix)) = self.fly_name.clone().rsplit_once('+')
            && let Some(aid) = flychess_sim::search::Aid::parse(suffix)
        {
            match aid {
                Ok(aid) => self.load_aided(base, aid, checksum, ready, data),
                Err(e) => {
                    self.status = format!("{} cannot play: {e}", self.fly_name);
                    self.fly = None;
                }
            }
            return;
        }
        if let Ok(path) = flychess_sim::fly::find(&self.fly_name, data)
            && flychess_sim::bio::file::is_dopamine_fly(&path)
            && let Some(ready) = ready.filter(|r| r.checksum == checksum)
        {
            self.load_dopamine(path, ready.clone(), data.to_path_buf());
            return;
        }
        let named = flychess_sim::fly::find(&self.fly_name, data).and_then(|p| Fly::load(&p));
        if let Ok(f) = &named
            && f.meta.brain_checksum == checksum
        {
            self.fly = Some(Mover::Readout(Arc::new(f.clone())));
            return;
        }
        let why = match &named {
            Ok(f) => format!("Fly {} was trained on another brain ({})", self.fly_name, f.meta.brain),
            Err(e) => format!("Fly {} could not be loaded ({e})", self.fly_name),
        };
        match flychess_sim::fly::trained_for(checksum, data).map(|(name, p)| (name, Fly::load(&p))) {
            Some((name, Ok(f))) => {
                self.status = format!("{why}; {name}, this brain's fly, plays instead.");
                self.fly_name = name;
                self.fly = Some(Mover::Readout(Arc::new(f)));
            }
            _ => {
                self.status = format!("{why}, and this brain has no trained fly yet: train one in the Train tab.");
                self.fly = None;
            }
        }
    }

    /// A dopamine fly: its file read and its model of the brain made (the mushroom body split off,
    /// its homeostasis read back or measured once) on a thread; it plays once ready.
    fn load_dopamine(&mut self, path: std::path::PathBuf, ready: Arc<crate::ui::ReadyBrain>, data: std::path::PathBuf) {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let made = (|| -> flychess_sim::Result<Mover> {
                let f = flychess_sim::bio::file::DopamineFly::load(&path)?;
                let bio = ready.dopamine_model(&data, f.meta.constants, &|_| {})?;
                f.check(&bio)?;
                Ok(Mover::Dopamine(Arc::new(f), bio))
            })();
            let _ = tx.send(made.map_err(|e| e.to_string()));
        });
        self.fly = None;
        self.dopamine_job = Some(rx);
        self.status = format!("Preparing dopamine fly {}'s mushroom body…", self.fly_name);
    }

    /// A fly of this brain with one of Philidor's aids: a search plays at once; a judge's weight is
    /// read back or chosen on VAL on a thread (seconds) and it plays once ready.
    fn load_aided(&mut self, base: &str, aid: flychess_sim::search::Aid, checksum: &str, ready: Option<&Arc<crate::ui::ReadyBrain>>, data: &std::path::Path) {
        let fly = match flychess_sim::fly::find(base, data).and_then(|p| Fly::load(&p)) {
            Ok(f) if f.meta.brain_checksum == checksum => Arc::new(f),
            Ok(f) => {
                self.status = format!("{} cannot play: fly {base} was trained on another brain ({})", self.fly_name, f.meta.brain);
                self.fly = None;
                return;
            }
            Err(e) => {
                self.status = format!("{} cannot play: {e}", self.fly_name);
                self.fly = None;
                return;
            }
        };
        let flychess_sim::search::Aid::Judge { .. } = aid else {
            self.status = format!("{} plays: the fly's brain thinks, a {} picks among its five most probable moves.", self.fly_name, aid.label());
            self.fly = Some(Mover::Aided(fly, aid));
            return;
        };
        let Some(ready) = ready.filter(|r| r.checksum == checksum).cloned() else {
            self.status = format!("{} waits for its brain.", self.fly_name);
            self.fly = None;
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let data = data.to_path_buf();
        std::thread::spawn(move || {
            let weight = crate::training::judge_weight(&data, &fly, &ready.brain, &ready.connectome.groups.descending);
            let _ = tx.send(weight.map(|weight| Mover::Aided(fly, flychess_sim::search::Aid::Judge { weight })).map_err(|e| e.to_string()));
        });
        self.fly = None;
        self.dopamine_job = Some(rx);
        self.status = format!("Choosing {}'s weight on VAL positions…", self.fly_name);
    }

    /// Charles: its weights loaded on a thread; it plays once ready. It needs no brain.
    fn load_charles(&mut self, run: String, data: std::path::PathBuf) {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let made = flychess_sim::charles::player::Trained::load(&run, &data).map(|c| Mover::Charles(Arc::new(c)));
            let _ = tx.send(made.map_err(|e| e.to_string()));
        });
        self.fly = None;
        self.dopamine_job = Some(rx);
        self.status = format!("Loading {}…", self.fly_name);
    }

    /// Takes a dopamine fly or Charles that became ready; true while one is still being prepared.
    fn poll_dopamine(&mut self) -> bool {
        let Some(rx) = &self.dopamine_job else { return false };
        match rx.try_recv() {
            Ok(Ok(m @ Mover::Aided(..))) => {
                self.status = format!("{} plays: the fly's brain thinks, a {} picks among its five most probable moves.", self.fly_name, aid_label(&m));
                self.fly = Some(m);
                self.dopamine_job = None;
                false
            }
            Ok(Ok(m)) if !m.has_brain() => {
                self.status = format!("{} plays: a transformer trained on the flies' positions that never was a fly. The brain stays at rest while it thinks.", m.name());
                self.fly = Some(m);
                self.dopamine_job = None;
                false
            }
            Ok(Ok(m)) => {
                self.status = format!("Dopamine fly {} plays: it looks at the board after each of its moves and its MBONs vote.", m.name());
                self.fly = Some(m);
                self.dopamine_job = None;
                false
            }
            Ok(Err(e)) => {
                self.status = format!("{} cannot play: {e}", self.fly_name);
                self.dopamine_job = None;
                false
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => true,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.status = format!("{} could not be prepared.", self.fly_name);
                self.dopamine_job = None;
                false
            }
        }
    }

    /// A dopamine fly is being prepared.
    pub fn preparing_fly(&self) -> bool {
        self.dopamine_job.is_some()
    }

    pub fn start_game(&mut self, game: Game, user: Color) {
        self.game = game;
        self.game_id += 1;
        self.user = user;
        self.orientation = user;
        self.cursor = None;
        self.thinking = None;
        self.pending = None;
        self.thoughts.clear();
        self.recalling = None;
        self.grades.clear();
        self.requested.clear();
        self.hint = None;
        self.board.premove = None;
        self.board.promotion = None;
        self.resign_asked = false;
        self.report_open = false;
        self.status.clear();
    }

    /// The ply shown on the board.
    pub fn shown_ply(&self) -> usize {
        self.cursor.unwrap_or(self.game.plies()).min(self.game.plies())
    }

    pub fn fly_to_move(&self) -> bool {
        !self.game.is_over() && self.game.turn() != self.user && self.stop_at.is_none_or(|n| self.game.plies() < n)
    }

    /// The requests in flight are dropped (their thinker is gone): the fly's move and any recall
    /// are asked again of the next one.
    pub fn forget_requests(&mut self) {
        self.thinking = None;
        self.recalling = None;
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
        self.board.premove = None;
        self.resign_asked = false;
        let plies = self.game.plies();
        self.thoughts.retain(|&k, _| k < plies);
        speaker.play(Sound::TakeBack);
    }

    /// Plays `m` for whoever is to move; sounds, premove and grading follow.
    pub fn play_move(&mut self, m: Move, cx: &mut PlayContext) -> bool {
        let ply = self.game.plies();
        match self.game.play(m) {
            Ok(san) => {
                cx.speaker.play(if self.game.is_over() { Sound::GameEnd } else { Sound::of_move(&san) });
                self.hint = None;
                self.request_grade(ply, cx);
                if self.game.is_over() {
                    self.report_open = true;
                }
                true
            }
            Err(e) => {
                self.status = e.to_string();
                cx.speaker.play(Sound::Illegal);
                false
            }
        }
    }

    /// Asks Stockfish to grade the position before move `ply`: the best move, the played move,
    /// and the fly's candidates (its choices if it moved, its expectations if the user did).
    fn request_grade(&mut self, ply: usize, cx: &PlayContext) {
        let Some(grader) = cx.grader else { return };
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

    /// Per frame: answers from the thinker and grader, the fly's turn, the premove.
    pub fn update(&mut self, ctx: &egui::Context, cx: &mut PlayContext, grades: Vec<PositionGrade>, hints: Vec<(String, String)>) {
        let now = ctx.input(|i| i.time);
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
        if let Some(thinker) = cx.thinker {
            while let Ok(t) = thinker.answers.try_recv() {
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
                    let delay = if self.replay && cx.animate { REPLAY_SECONDS } else { 0.0 };
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
                    self.play_move(chosen, cx);
                }
            } else {
                ctx.request_repaint_after(std::time::Duration::from_secs_f64((p.play_at - now).max(0.01)));
            }
        }
        if self.poll_dopamine() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
        if self.fly_to_move() && self.thinking.is_none() && self.pending.is_none()
            && let (Some(thinker), Some(fly)) = (cx.thinker, &self.fly)
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
                imagination: fly.readout().filter(|_| self.imagination && !matches!(fly, Mover::Aided(..))).map(|f| crate::training::tuned_imagination(cx.data, f)),
                recall: false,
            });
        }
        self.keep_rates_bounded(cx.thinker);
        if !self.fly_to_move() && !self.game.is_over()
            && let Some(pre) = self.board.premove.take()
        {
            match pre.legal_in(self.game.current()) {
                Some(m) => {
                    self.play_move(m, cx);
                }
                None => self.status = "Premove dropped: no longer legal.".into(),
            }
        }
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
            }
        }
        let (Some(k), Some(thinker), Some(fly)) = (shown, thinker, &self.fly) else { return };
        let t = &self.thoughts[&k];
        if t.rates.is_empty() && self.recalling.is_none() {
            let id = self.next_request;
            self.next_request += 1;
            self.recalling = Some((id, k));
            thinker.ask(ThinkRequest { id, fly: fly.clone(), position: t.position.clone(), earlier: Vec::new(), imagination: None, recall: true });
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

    pub fn keyboard(&mut self, ctx: &egui::Context) {
        let typing = ctx.memory(|m| m.focused().is_some());
        if typing {
            return;
        }
        let (left, right, up, down, flip) = ctx.input(|i| {
            (
                i.key_pressed(egui::Key::ArrowLeft),
                i.key_pressed(egui::Key::ArrowRight),
                i.key_pressed(egui::Key::ArrowUp),
                i.key_pressed(egui::Key::ArrowDown),
                i.key_pressed(egui::Key::F),
            )
        });
        let plies = self.game.plies();
        let shown = self.shown_ply();
        if left && shown > 0 {
            self.cursor = Some(shown - 1);
        }
        if right {
            self.cursor = if shown + 1 >= plies { None } else { Some(shown + 1) };
        }
        if up {
            self.cursor = Some(0);
        }
        if down {
            self.cursor = None;
        }
        if flip {
            self.orientation = !self.orientation;
        }
    }

    /// The tab's whole UI.
    pub fn show(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext, brain_card: &mut dyn FnMut(&mut egui::Ui, &PlayTab)) {
        self.keyboard(ui.ctx());
        egui::Panel::right("play-right").default_size(380.0).min_size(280.0).resizable(true).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                self.right_panel(ui, cx);
                ui.separator();
                brain_card(ui, self);
            });
        });
        egui::CentralPanel::default().show(ui, |ui| {
            let top = !self.orientation;
            self.player_bar(ui, top, cx);
            let bar_height = 30.0;
            let avail = ui.available_size() - egui::vec2(0.0, bar_height + 8.0);
            let ply = self.shown_ply();
            // What the fly looks at is drawn on the position it thought in (the board is then
            // only looked at: turn the view off to play on).
            let looking = (cx.looks.overlay == crate::ui::looks::Overlay::LooksAt).then(|| self.shown_thought().map(|t| (t.position.clone(), t.chosen))).flatten();
            let live = self.cursor.is_none() && looking.is_none();
            let position = looking.as_ref().map(|(p, _)| p.clone()).unwrap_or_else(|| self.game.position(ply).clone());
            let mut arrows = Vec::new();
            if let (true, Some((fen, m))) = (live, &self.hint)
                && *fen == self.game.fen(ply)
            {
                let (from, to) = crate::ui::board::move_squares(m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(0, 48, 136, 170) });
            }
            if let Some((_, m)) = &looking {
                let (from, to) = crate::ui::board::move_squares(m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(21, 120, 27, 190) });
            }
            if let Some(m) = self.hovered {
                let (from, to) = crate::ui::board::move_squares(&m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(230, 120, 20, 190) });
            }
            let overlays = self.overlays(ui.ctx(), cx, &position);
            let view = BoardView {
                position: &position,
                orientation: self.orientation,
                user: (live && !self.game.is_over() && self.fly.is_some()).then_some(self.user),
                last_move: if looking.is_some() { None } else { ply.checked_sub(1).map(|p| self.game.moves()[p]) },
                theme: cx.theme,
                arrows,
                animate: cx.animate,
                overlays,
            };
            let value = self.shown_thought().map(|t| if t.position.turn() == Color::White { t.value } else { -t.value });
            let action = ui
                .allocate_ui(avail.max(egui::vec2(64.0, 64.0)), |ui| {
                    ui.horizontal_centered(|ui| {
                        let side = (ui.available_width() - 30.0).min(ui.available_height()).max(64.0);
                        self.evaluation_bar(ui, value, side);
                        ui.allocate_ui(egui::vec2(side, side), |ui| ui.centered_and_justified(|ui| self.board.show(ui, &view)).inner).inner
                    })
                    .inner
                })
                .inner;
            match action {
                Some(BoardAction::Move(m)) => {
                    self.play_move(m, cx);
                }
                Some(BoardAction::Illegal) => cx.speaker.play(Sound::Illegal),
                Some(BoardAction::Premoved) | None => {}
            }
            self.player_bar(ui, !top, cx);
        });
        self.new_game_window(ui.ctx(), cx);
        self.report_window(ui.ctx());
    }

    /// The fly's value of the shown think as a bar beside the board (White's share from the
    /// bottom when White is at the bottom) and a number, from White's side.
    fn evaluation_bar(&self, ui: &mut egui::Ui, value: Option<f32>, height: f32) {
        let (rect, response) = ui.allocate_exact_size(egui::vec2(22.0, height), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(40));
        let v = value.unwrap_or(0.0).clamp(-1.0, 1.0);
        let white = rect.height() * (1.0 + v) / 2.0;
        let white_rect = if self.orientation == Color::White {
            egui::Rect::from_min_max(egui::pos2(rect.min.x, rect.max.y - white), rect.max)
        } else {
            egui::Rect::from_min_max(rect.min, egui::pos2(rect.max.x, rect.min.y + white))
        };
        painter.rect_filled(white_rect, 2.0, Color32::from_gray(235));
        if let Some(v) = value {
            let text = format!("{v:+.2}");
            let at = if (v >= 0.0) == (self.orientation == Color::White) { rect.center_bottom() - egui::vec2(0.0, 4.0) } else { rect.center_top() + egui::vec2(0.0, 4.0) };
            let anchor = if at.y > rect.center().y { egui::Align2::CENTER_BOTTOM } else { egui::Align2::CENTER_TOP };
            let colour = if v >= 0.0 { Color32::from_gray(30) } else { Color32::from_gray(220) };
            painter.text(at, anchor, text, egui::FontId::proportional(9.5), colour);
        }
        response.on_hover_text(match value {
            Some(v) => format!("The fly's value of the position it moved in, from White's side: {v:+.2} (−1 lost, +1 won)."),
            None => "The fly's value appears once it has thought.".into(),
        });
    }

    /// The squares' marks for the board overlay chosen (what the fly looks at, its eye).
    fn overlays(&mut self, ctx: &egui::Context, cx: &mut PlayContext, position: &shakmaty::Chess) -> Vec<crate::ui::board::SquareMark> {
        use crate::ui::looks::{Looks, Overlay};
        cx.looks.poll();
        let Some(ready) = cx.ready else { return Vec::new() };
        match cx.looks.overlay {
            Overlay::Nothing => Vec::new(),
            Overlay::Eye => Looks::eye_marks(&Looks::sight(ready, position)),
            Overlay::LooksAt => {
                // The lesion of the shown think, drawn on the position it thought in.
                let Some(t) = self.shown_thought().filter(|t| t.position == *position) else { return Vec::new() };
                match cx.looks.explanation(t.id) {
                    Some(e) => Looks::explain_marks(&e),
                    None => {
                        let t = t.clone();
                        cx.looks.request(ctx, &t, self.fly.as_ref(), ready);
                        Vec::new()
                    }
                }
            }
        }
    }

    fn player_bar(&self, ui: &mut egui::Ui, colour: Color, cx: &PlayContext) {
        ui.horizontal(|ui| {
            let (dot, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
            let fill = if colour == Color::White { Color32::from_gray(240) } else { Color32::from_gray(20) };
            ui.painter().circle(dot.center(), 6.0, fill, egui::Stroke::new(1.0, Color32::GRAY));
            if colour == self.user {
                ui.label(RichText::new(self.opponent_name.as_deref().unwrap_or("You")).strong());
            } else {
                let elo = cx.ratings.get(&self.fly_name).cloned().unwrap_or_else(|| "unrated".into());
                ui.label(RichText::new(format!("Fly {}", self.fly_name)).strong());
                ui.label(RichText::new(elo).weak());
                if let Some((_, since)) = self.thinking {
                    let secs = ui.input(|i| i.time) - since;
                    ui.spinner();
                    ui.label(format!("thinking… {secs:.1} s"));
                    ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
                } else if self.pending.is_some() {
                    ui.label("replaying its 12 steps…");
                }
            }
            if let Some((acc, n)) = self.accuracy(colour) {
                ui.label(format!("accuracy {acc:.0}% ({n} {} graded)", if n == 1 { "move" } else { "moves" }));
            }
        });
    }

    fn right_panel(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        ui.heading("Game");
        if let Some(end) = self.game.ending() {
            ui.label(RichText::new(format!("{} — {}", end.result, end.reason)).strong().color(Color32::from_rgb(230, 170, 60)));
        } else if self.fly.is_none() {
            ui.label("No fly to play on this brain: pick one in New game, or train one.");
            if ui.button("Train a fly for this brain…").clicked() {
                self.wants_training = true;
            }
        }
        let uci_moves = self.game.uci();
        if self.game.starts_from_initial_position()
            && let Some(o) = Openings::shipped().name(&uci_moves)
        {
            ui.label(RichText::new(format!("{} {}", o.eco, o.name)).italics());
        }
        self.fly_says(ui);
        ui.horizontal(|ui| {
            ui.toggle_value(&mut self.blur, "Blur").on_hover_text("Hide the fly's probabilities and grades");
            ui.checkbox(&mut self.imagination, "Imagination")
                .on_hover_text("The fly also looks at the board after each of its own moves (never your replies)");
        });
        ui.horizontal(|ui| {
            use crate::ui::looks::Overlay;
            ui.label("Board:");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::Nothing, "pieces");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::LooksAt, "what it looks at")
                .on_hover_text("Each piece taken off the board in turn: how many points of its chosen move's probability go missing without it (red) or come (blue). Shown on the position it thought in.");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::Eye, "its eye")
                .on_hover_text("How many of each square's photoreceptors this board lights, before step 1");
        });
        if cx.looks.overlay == crate::ui::looks::Overlay::LooksAt {
            match self.shown_thought() {
                Some(t) => match cx.looks.explanation(t.id) {
                    Some(e) => {
                        let top = e.pieces.iter().min_by(|a, b| a.change.total_cmp(&b.change));
                        let mut text = format!("It plays {} ({:.1} %).", e.chosen_san, 100.0 * e.probability);
                        if let Some(p) = top {
                            text.push_str(&format!(" Without the {} on {} it would give it {:+.1} points.", p.piece, p.square, 100.0 * p.change));
                        }
                        ui.small(text);
                        egui::CollapsingHeader::new("Each piece taken away").id_salt("looks-at-pieces").show(ui, |ui| {
                            let mut order: Vec<&flychess_sim::explain::PieceEffect> = e.pieces.iter().collect();
                            order.sort_by(|a, b| a.change.total_cmp(&b.change));
                            egui::Grid::new("looks-at-grid").num_columns(4).striped(true).show(ui, |ui| {
                                for h in ["piece", "square", "its move", "descending neurons"] {
                                    ui.small(RichText::new(h).strong());
                                }
                                ui.end_row();
                                for p in order {
                                    ui.small(&p.piece);
                                    ui.small(&p.square);
                                    ui.small(format!("{:+.2} points", 100.0 * p.change));
                                    ui.small(format!("{:.4} (largest {:.3})", p.descending_change, p.descending_largest))
                                        .on_hover_text("Mean |change| of the descending neurons' read rates without this piece, and the largest change of one of them");
                                    ui.end_row();
                                }
                            });
                        });
                    }
                    None if cx.looks.busy() => {
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.small("taking each piece away in turn…");
                        });
                    }
                    None => {
                        ui.small(&cx.looks.status);
                    }
                },
                None => {
                    ui.weak("Once the fly has thought, each piece's weight in its choice shows on the board.");
                }
            }
        }
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.right_tab, RightTab::Considered, "Fly considered");
            ui.selectable_value(&mut self.right_tab, RightTab::Expects, "Fly expects");
        });
        self.candidate_list(ui);
        ui.label(RichText::new(cx.grader_status).small().weak());
        ui.separator();
        self.move_list(ui);
        ui.separator();
        self.buttons(ui, cx);
    }

    fn fly_says(&self, ui: &mut egui::Ui) {
        let Some(ply) = self.shown_key() else { return };
        let t = &self.thoughts[&ply];
        let Some(m) = self.game.moves().get(ply) else { return };
        let san = San::from_move(self.game.position(ply), *m).to_string();
        let p = t.policy.moves.iter().position(|x| x == m).map(|i| t.policy.probability[i]).unwrap_or(0.0);
        let feeling = match t.value {
            v if v > 0.5 => "I think I'm winning.",
            v if v > 0.15 => "I think I'm a bit better.",
            v if v > -0.15 => "I think it's about even.",
            v if v > -0.5 => "I think you're a bit better.",
            _ => "I think you're winning.",
        };
        let prob = if self.blur { String::new() } else { format!(" I gave it {:.0}%.", 100.0 * p) };
        let mut text = format!("“{san}.{prob} {feeling}”");
        if let Some(fav) = t.skipped_favourite {
            let fav_san = San::from_move(self.game.position(ply), fav).to_string();
            text.push_str(&format!(" (My favourite was {fav_san}, but it would repeat an earlier position.)"));
        }
        if let Some(grade) = self.grade_of(ply, m).filter(|_| !self.blur) {
            text.push_str(&format!(" Stockfish: {} ({:.0}%).", grade.verdict.name(), grade.accuracy));
        }
        ui.label(RichText::new(text).size(15.0));
        ui.small(format!("{:.0} ms for 12 steps of {} neurons and the readout", t.think_ms, t.neurons));
    }

    fn candidate_list(&mut self, ui: &mut egui::Ui) {
        self.hovered = None;
        let plies = self.game.plies();
        // Considered: the fly's move in (or last before) the position shown. Expects: its forecast
        // for the user's move after it.
        let fly_ply = self.shown_key();
        let ply = match self.right_tab {
            RightTab::Considered => fly_ply,
            RightTab::Expects => fly_ply.map(|p| p + 1),
        };
        let Some(ply) = ply else {
            ui.weak("The fly has not moved yet.");
            return;
        };
        let list = self.candidates(ply);
        if list.is_empty() {
            ui.weak("Nothing yet.");
            return;
        }
        let pos = self.game.position(ply).clone();
        // Expectations are graded only once the user has moved.
        let graded = ply < plies;
        let played = self.game.moves().get(ply).copied();
        let shown = if self.all_moves { list.len() } else { CANDIDATES.min(list.len()) };
        let mut hovered = None;
        egui::Grid::new(("candidates", ply)).num_columns(4).striped(true).show(ui, |ui| {
            for (m, p) in list.iter().take(shown) {
                let san = San::from_move(&pos, *m).to_string();
                let label = if Some(*m) == played { RichText::new(format!("» {san}")).strong() } else { RichText::new(san) };
                let mut over = ui.add(egui::Label::new(label).sense(egui::Sense::hover())).hovered();
                if self.blur {
                    ui.label("•••");
                } else {
                    over |= ui.add(egui::ProgressBar::new(*p).desired_width(90.0).text(format!("{:.1}%", 100.0 * p))).hovered();
                }
                if over {
                    hovered = Some(*m);
                }
                match (graded && !self.blur).then(|| self.grade_of(ply, m)).flatten() {
                    Some(g) => {
                        ui.label(format!("{:.0}%", g.accuracy));
                        ui.label(RichText::new(g.verdict.name()).color(verdict_colour(g.verdict)));
                    }
                    None => {
                        ui.label("");
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
        self.hovered = hovered;
        if list.len() > CANDIDATES {
            let text = if self.all_moves { format!("Top {CANDIDATES} only") } else { format!("All {} legal moves", list.len()) };
            if ui.small_button(text).on_hover_text("The fly gives every legal move a probability; the list shows the top ones unless asked").clicked() {
                self.all_moves = !self.all_moves;
            }
        }
    }

    fn move_list(&mut self, ui: &mut egui::Ui) {
        let book = Openings::shipped();
        let first_black = self.game.position(0).turn() == Color::Black;
        let start_number = self.game.position(0).fullmoves().get() as usize;
        let shown = self.shown_ply();
        egui::ScrollArea::vertical().id_salt("moves").max_height(220.0).stick_to_bottom(true).show(ui, |ui| {
            egui::Grid::new("move-list").num_columns(3).show(ui, |ui| {
                let plies = self.game.plies();
                let mut ply = 0;
                let mut row = 0;
                while ply < plies {
                    ui.label(format!("{}.", start_number + row));
                    for col in 0..2 {
                        if (row == 0 && col == 0 && first_black) || ply >= plies {
                            ui.label(if ply >= plies { "" } else { "…" });
                            continue;
                        }
                        let m = self.game.moves()[ply];
                        let mut text = self.game.san()[ply].clone();
                        if self.game.starts_from_initial_position() && book.is_book(self.game.position(ply + 1)) {
                            text.push_str(" ·");
                        }
                        let mut rich = RichText::new(text);
                        if !self.blur
                            && let Some(g) = self.grade_of(ply, &m)
                            && g.verdict != Verdict::Best && g.verdict != Verdict::Good
                        {
                            rich = rich.color(verdict_colour(g.verdict));
                        }
                        if ui.selectable_label(shown == ply + 1, rich).clicked() {
                            self.cursor = if ply + 1 == plies { None } else { Some(ply + 1) };
                        }
                        ply += 1;
                    }
                    row += 1;
                    ui.end_row();
                }
            });
        });
    }

    fn buttons(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("«").on_hover_text("Start (Up arrow)").clicked() {
                self.cursor = Some(0);
            }
            if ui.button("‹").on_hover_text("Back (Left arrow)").clicked() {
                self.cursor = Some(self.shown_ply().saturating_sub(1));
            }
            if ui.button("›").on_hover_text("Forward (Right arrow)").clicked() {
                let next = self.shown_ply() + 1;
                self.cursor = if next >= self.game.plies() { None } else { Some(next) };
            }
            if ui.button("»").on_hover_text("Now (Down arrow)").clicked() {
                self.cursor = None;
            }
            if ui.button("Flip").on_hover_text("F").clicked() {
                self.orientation = !self.orientation;
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui.button("Take back").clicked() {
                self.take_back(cx.speaker);
            }
            let hint_enabled = cx.grader.is_some() && !self.game.is_over() && !self.fly_to_move();
            if ui.add_enabled(hint_enabled, egui::Button::new("Hint")).on_hover_text("Stockfish's best move as an arrow").clicked()
                && let Some(g) = cx.grader
            {
                g.hint(self.game.fen(self.game.plies()));
            }
            let resign = if self.resign_asked { "Really resign?" } else { "Resign" };
            if ui.add_enabled(!self.game.is_over(), egui::Button::new(resign)).clicked() {
                if self.resign_asked {
                    self.game.resign(self.user);
                    self.resign_asked = false;
                    self.report_open = true;
                    cx.speaker.play(Sound::GameEnd);
                } else {
                    self.resign_asked = true;
                }
            }
            if ui.button("New game").clicked() {
                self.new_game = Some(NewGame { fly: self.fly_name.clone(), colour: Some(self.user) });
            }
            if ui.add_enabled(self.game.plies() > 0, egui::Button::new("Report")).clicked() {
                self.report_open = true;
            }
        });
        ui.horizontal(|ui| {
            ui.label("Move:");
            let r = ui.add(egui::TextEdit::singleline(&mut self.typed).hint_text("e4, Nf3, e2e4").desired_width(90.0));
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let text = std::mem::take(&mut self.typed);
                if self.game.turn() == self.user && self.cursor.is_none() {
                    match parse_move(self.game.current(), &text) {
                        Ok(m) => {
                            self.play_move(m, cx);
                        }
                        Err(e) => self.status = e.to_string(),
                    }
                } else {
                    self.status = "It is not your turn.".into();
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui.button("Copy FEN").clicked() {
                ui.ctx().copy_text(self.game.fen(self.shown_ply()));
                self.status = "FEN copied.".into();
            }
            if ui.button("Copy PGN").clicked() {
                ui.ctx().copy_text(self.pgn());
                self.status = "PGN copied.".into();
            }
        });
        ui.horizontal(|ui| {
            ui.label("PGN file:");
            ui.add(egui::TextEdit::singleline(&mut self.pgn_path).desired_width(140.0).hint_text("path/to/game.pgn"));
            if ui.button("…").on_hover_text("Choose a file").clicked() {
                match rfd::FileDialog::new().add_filter("PGN", &["pgn"]).set_file_name("game.pgn").save_file() {
                    Some(p) => self.pgn_path = p.display().to_string(),
                    None => self.status = "No file chosen (or no file dialog on this desktop): type a path instead.".into(),
                }
            }
        });
        ui.horizontal(|ui| {
            if ui.add_enabled(!self.pgn_path.is_empty(), egui::Button::new("Save PGN")).clicked() {
                self.status = match flychess_sim::connectome::brain_file::write_atomically(&PathBuf::from(&self.pgn_path), self.pgn().as_bytes()) {
                    Ok(()) => format!("Saved {}", self.pgn_path),
                    Err(e) => format!("Could not save {}: {e}", self.pgn_path),
                };
            }
            if ui.add_enabled(!self.pgn_path.is_empty(), egui::Button::new("Load PGN")).clicked() {
                match std::fs::read_to_string(&self.pgn_path).map_err(anyhow::Error::from).and_then(|t| Game::from_pgn(&t)) {
                    Ok(g) => {
                        let user = self.user;
                        self.start_game(g, user);
                        self.status = format!("Loaded {} ({} moves).", self.pgn_path, self.game.plies());
                    }
                    Err(e) => self.status = format!("Could not load {}: {e}", self.pgn_path),
                }
            }
        });
        if !self.status.is_empty() {
            ui.label(RichText::new(&self.status).small());
        }
    }

    pub fn pgn(&self) -> String {
        let fly = format!("Fly {}", self.fly_name);
        let (white, black) = if self.user == Color::White { ("You", fly.as_str()) } else { (fly.as_str(), "You") };
        self.game.pgn(white, black, &flychess_sim::fly::today())
    }

    fn new_game_window(&mut self, ctx: &egui::Context, cx: &mut PlayContext) {
        let Some(mut ng) = self.new_game.take() else { return };
        let mut open = true;
        let mut start = false;
        // Centred over the board: a dialog about the game sits on the game.
        egui::Window::new("New game").open(&mut open).collapsible(false).pivot(egui::Align2::CENTER_CENTER).default_pos(self.board.rect.center()).show(ctx, |ui| {
            ui.label("Opponent:");
            for name in cx.flies {
                let elo = cx.ratings.get(name).cloned().unwrap_or_else(|| "unrated".into());
                let label = if flychess_sim::charles::player::run_name(name).is_some() {
                    format!("Charles — a network that never was a fly ({name}, {elo})")
                } else if let Some((base, suffix)) = name.rsplit_once('+')
                    && let Some(Ok(aid)) = flychess_sim::search::Aid::parse(suffix)
                {
                    format!("{base} + {} — the fly's brain with a search's help, not its own play ({elo})", aid.label())
                } else {
                    format!("{name} ({elo})")
                };
                ui.radio_value(&mut ng.fly, name.clone(), label);
            }
            ui.label("You play:");
            ui.horizontal(|ui| {
                ui.radio_value(&mut ng.colour, Some(Color::White), "White");
                ui.radio_value(&mut ng.colour, Some(Color::Black), "Black");
                ui.radio_value(&mut ng.colour, None, "Random");
            });
            start = ui.button("Start").clicked();
        });
        if start {
            let colour = ng.colour.unwrap_or(if ctx.input(|i| i.time).fract() < 0.5 { Color::White } else { Color::Black });
            self.fly_name = ng.fly.clone();
            if let Some(c) = cx.brain_checksum {
                self.load_fly(cx.data, c, cx.ready);
            }
            self.start_game(Game::default(), colour);
        } else if open {
            self.new_game = Some(ng);
        }
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

    fn report_window(&mut self, ctx: &egui::Context) {
        if !self.report_open {
            return;
        }
        let mut open = true;
        let mut jump = None;
        egui::Window::new("Game report").open(&mut open).default_width(420.0).show(ctx, |ui| {
            if let Some(end) = self.game.ending() {
                ui.strong(format!("{} — {}", end.result, end.reason));
            }
            for colour in [Color::White, Color::Black] {
                let who = if colour == self.user { "You".to_string() } else { format!("Fly {}", self.fly_name) };
                let mut counts: HashMap<&str, usize> = HashMap::new();
                for (ply, m) in self.game.moves().iter().enumerate() {
                    if self.game.position(ply).turn() == colour
                        && let Some(g) = self.grade_of(ply, m)
                    {
                        *counts.entry(g.verdict.name()).or_default() += 1;
                    }
                }
                let acc = self.accuracy(colour).map(|(a, _)| format!("{a:.0}%")).unwrap_or_else(|| "not graded".into());
                let list: Vec<String> = ["best", "good", "inaccuracy", "mistake", "blunder"]
                    .iter()
                    .map(|v| format!("{} {v}", counts.get(v).copied().unwrap_or(0)))
                    .collect();
                ui.label(format!("{who} ({}): accuracy {acc}; {}", if colour == Color::White { "White" } else { "Black" }, list.join(", ")));
            }
            let curve = self.evaluation_curve();
            let points: Vec<[f64; 2]> = curve.iter().map(|&(p, w)| [p as f64, w]).collect();
            let plot = egui_plot::Plot::new("evaluation").height(160.0).include_y(0.0).include_y(100.0).allow_scroll(false);
            let response = plot.show(ui, |plot_ui| {
                plot_ui.line(egui_plot::Line::new("White's win chance (%)", points.clone()));
                plot_ui.points(egui_plot::Points::new("moves", points.clone()).radius(3.0));
                if plot_ui.response().clicked() {
                    plot_ui.pointer_coordinate().map(|c| c.x.round().max(0.0) as usize)
                } else {
                    None
                }
            });
            jump = response.inner;
            ui.small("Click the graph to jump to that move. Grades: Stockfish at depth 12.");
        });
        if let Some(ply) = jump {
            let ply = ply.min(self.game.plies());
            self.cursor = if ply == self.game.plies() { None } else { Some(ply) };
        }
        self.report_open = open;
    }
}

fn uci(m: &Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

pub fn verdict_colour(v: Verdict) -> Color32 {
    match v {
        Verdict::Best => Color32::from_rgb(90, 200, 120),
        Verdict::Good => Color32::from_rgb(150, 190, 150),
        Verdict::Inaccuracy => Color32::from_rgb(230, 200, 60),
        Verdict::Mistake => Color32::from_rgb(230, 140, 40),
        Verdict::Blunder => Color32::from_rgb(230, 70, 60),
    }
}


/// "judge" or "search 64": what helps an aided fly.
fn aid_label(m: &Mover) -> String {
    match m {
        Mover::Aided(_, aid) => aid.label(),
        _ => String::new(),
    }
}
