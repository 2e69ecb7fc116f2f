//! The desktop window (eframe): the left bar (Play, Brain, Train, Flies, About), the start-up path
//! (the brain is loaded — or generated, built and calibrated on first run — off the UI thread with
//! a progress bar; its provenance is always on screen), the settings kept across restarts (eframe
//! storage: theme, board colours, sound, Stockfish path, larger UI, the current game), the
//! background workers (the fly's thinker, Stockfish's grader, the `--watch` opponent, the
//! speaker; a dead thinker is replaced), other brains being prepared while the current one plays
//! on, frame times, `--screenshot` and `--watch`. Each tab lives in its own module (`play`,
//! `brain_view`, `train`, `flies`, `about`); this one wires them together.

pub mod board;
pub mod brain_view;
mod about;
mod flies;
pub mod play;
pub mod train;
pub mod train_brain;
pub mod train_charles;
pub mod train_dopamine;
pub mod blame;
pub mod lesson;
pub mod figures;
pub mod learn;
pub mod doing;
pub mod loses;
pub mod classroom;
pub mod looks;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread;

use anyhow::{anyhow, Result};
use eframe::egui::{self, Color32, RichText};
use shakmaty::Color;

use flychess_sim::brain::Brain;
use flychess_sim::connectome::release;
use flychess_sim::connectome::{Connectome, Info};
use flychess_sim::store::{self, BrainSpec, Tables};

use crate::game::Game;
use crate::grader::{Grader, GraderEvent};
use crate::sound::Speaker;
use crate::thinker::Thinker;
use board::BoardTheme;
use brain_view::BrainView;
use play::{PlayContext, PlayTab};

/// The fly the app plays by default (shipped in models/).
/// The default brain's shipped fly (FlyWire v783); any brain falls back to its own fly.
pub const DEFAULT_FLY: &str = "flywire";

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Tab {
    Play,
    Brain,
    Train,
    Flies,
    About,
}

impl Tab {
    pub fn parse(s: &str) -> Result<Tab> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "play" => Tab::Play,
            "brain" => Tab::Brain,
            "train" => Tab::Train,
            "flies" => Tab::Flies,
            "about" => Tab::About,
            _ => return Err(anyhow!("unknown tab {s:?}: play, brain, train, flies or about")),
        })
    }
}

/// A view the window opens on (`--view`): screenshots of each view, and a classroom that starts
/// in presenter mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The Play board shows what the fly looks at (each piece's weight in its choice).
    LooksAt,
    /// The Play board shows how many photoreceptors each square lights.
    Eye,
    /// The Play panel lists every legal move.
    AllMoves,
    /// The Brain tab's 12 steps at once.
    Steps,
    /// The Brain tab's eye pane.
    BrainEye,
    /// The Brain tab's region signal chart.
    Chart,
    /// The Brain tab's linear probes.
    Probes,
    /// The Train tab's "watching it learn".
    Learn,
    /// The Flies tab's "how it's doing".
    Doing,
    /// The Flies tab's "how it loses" (a kept profile).
    Loses,
    /// The presenter mode.
    Classroom,
}

impl View {
    pub const NAMES: [(&'static str, View); 11] = [
        ("looks-at", View::LooksAt),
        ("eye", View::Eye),
        ("all-moves", View::AllMoves),
        ("steps", View::Steps),
        ("brain-eye", View::BrainEye),
        ("chart", View::Chart),
        ("probes", View::Probes),
        ("learn", View::Learn),
        ("doing", View::Doing),
        ("loses", View::Loses),
        ("classroom", View::Classroom),
    ];

    pub fn parse(s: &str) -> Result<View> {
        View::NAMES.iter().find(|(n, _)| *n == s).map(|(_, v)| *v).ok_or_else(|| anyhow!("unknown view {s:?}: {}", View::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
    }

    pub fn tab(self) -> Tab {
        match self {
            View::LooksAt | View::Eye | View::AllMoves => Tab::Play,
            View::Steps | View::BrainEye | View::Chart | View::Probes | View::Classroom => Tab::Brain,
            View::Learn => Tab::Train,
            View::Doing | View::Loses => Tab::Flies,
        }
    }
}

/// What is kept across restarts.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    pub dark: bool,
    pub board_theme: BoardTheme,
    pub muted: bool,
    pub stockfish: String,
    pub larger_ui: bool,
    pub animate: bool,
    pub replay: bool,
    pub imagination: bool,
    pub fly: String,
    pub user_white: bool,
    /// The game in progress, as PGN.
    pub game_pgn: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            dark: true,
            board_theme: BoardTheme::Brown,
            muted: false,
            stockfish: String::new(),
            larger_ui: false,
            animate: true,
            replay: true,
            imagination: false,
            fly: DEFAULT_FLY.into(),
            user_white: true,
            game_pgn: String::new(),
        }
    }
}

/// How the window is started (the command line's choices).
#[derive(Clone, Debug, Default)]
pub struct Launch {
    pub data: PathBuf,
    pub screenshot: Option<PathBuf>,
    /// Moves to play at start (UCI or SAN, space-separated).
    pub moves: Vec<String>,
    pub tab: Option<Tab>,
    /// `--view`: the view to open on.
    pub view: Option<View>,
    /// `--window-size`: the window's size in points (default 1280 × 800).
    pub window_size: Option<[f32; 2]>,
    /// No sound, no saved settings, no animation waits (tests and screenshots).
    pub quiet: bool,
    /// `--watch OPPONENT [--plies N]`: the fly plays OPPONENT move after move.
    pub watch: Option<Watch>,
    /// Set by the window when what it was asked to do failed (a `--watch` opponent that cannot
    /// play): `run` returns it as an error after the window closes, so the exit status says so.
    pub failed: Arc<std::sync::Mutex<Option<String>>>,
}

/// A game the window plays by itself: the fly (White) against `opponent` (random, greedy,
/// stockfish, stockfish:P or a fly's name) until the game ends or `plies` moves are played.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    pub opponent: String,
    pub plies: Option<usize>,
}

/// Where the answer of a job run aside arrives (an error as text).
pub type Aside<T> = std::sync::mpsc::Receiver<Result<T, String>>;

/// Runs `work` on a thread of its own named `name` and hands back where its answer (an error as
/// text) arrives; the window is woken to show it. For the panels' one-off jobs.
pub fn work_aside<T: Send + 'static>(ctx: &egui::Context, name: &str, work: impl FnOnce() -> anyhow::Result<T> + Send + 'static) -> Aside<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let waker = ctx.clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(work().map_err(|e| format!("{e:#}")));
            waker.request_repaint();
        })
        .expect("a thread can be started");
    rx
}

/// A loaded, calibrated brain.
pub struct ReadyBrain {
    /// What it was built from (controls are built from the same tables).
    pub spec: BrainSpec,
    pub connectome: Arc<Connectome>,
    pub brain: Arc<Brain>,
    pub checksum: String,
    pub info: Info,
    /// The dopamine fly's models of this brain, by constants (`dopamine_model`).
    dopamine_models: std::sync::Mutex<Vec<(flychess_sim::bio::Constants, Arc<flychess_sim::bio::BioBrain>)>>,
}

impl ReadyBrain {
    /// The dopamine fly's model of this brain for `constants`, made once (the mushroom body split
    /// off, its homeostasis read back or measured) and shared by the Play tab, the lesson comic,
    /// the `--watch` opponent and the Train tab's runs. Called from worker threads only: making it
    /// takes seconds, and a second caller for the same model waits for the first.
    pub fn dopamine_model(&self, data: &std::path::Path, constants: flychess_sim::bio::Constants, progress: &(dyn Fn(usize) + Sync)) -> flychess_sim::Result<Arc<flychess_sim::bio::BioBrain>> {
        let mut made = self.dopamine_models.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, b)) = made.iter().find(|(c, _)| *c == constants) {
            return Ok(b.clone());
        }
        let b = Arc::new(flychess_sim::bio::prepare(&self.connectome, &self.checksum, &self.brain, &self.spec.brain_path(data), constants, progress)?);
        made.push((constants, b.clone()));
        Ok(b)
    }
}

enum Report {
    Progress { stage: String, fraction: f64 },
    Ready(Box<ReadyBrain>),
    Failed(String),
}

pub enum BrainState {
    Loading { stage: String, fraction: f64 },
    Ready(Arc<ReadyBrain>),
    Failed(String),
}

pub struct FlyChessApp {
    pub launch: Launch,
    pub adapter: String,
    pub brain: BrainState,
    reports: Receiver<Report>,
    sender: Sender<Report>,
    download: Option<(String, f64)>,
    /// Another brain being built while the current one plays on: (stage, fraction).
    pub brain_job: Option<(String, f64)>,
    /// Why the last download or build of another brain failed (the current brain plays on).
    pub brain_job_error: Option<String>,
    shot: Option<Shot>,
    /// `--watch`: the opponent playing the user's side, and the move asked of it (id, ply).
    opponent: Option<crate::opponent::Opponent>,
    opponent_asked: Option<(u64, usize)>,
    /// Why the `--watch` opponent could not start (then the window stops asking it).
    pub opponent_failed: Option<String>,
    /// What the window says about its workers (a thinker that died and was replaced).
    pub workers_status: String,
    fly_cards: Option<flies::FlyCards>,
    /// How long frames took, by what ran meanwhile.
    pub frames: FrameLog,
    pub tab: Tab,
    pub settings: Settings,
    pub play: PlayTab,
    pub thinker: Option<Thinker>,
    pub grader: Option<Grader>,
    pub grader_status: String,
    speaker: Speaker,
    pub flies: Vec<String>,
    /// The flies of the loaded brain (what the new-game picker offers).
    pub playable: Vec<String>,
    /// The finished Charles runs by player name (read when the flies are).
    pub charles: Vec<String>,
    playable_for: Option<(Vec<String>, String)>,
    pub ratings: HashMap<String, String>,
    moves_applied: bool,
    /// eframe's wgpu device and queue (None in tests without a renderer).
    pub render_state: Option<eframe::egui_wgpu::RenderState>,
    pub brain_view: Option<BrainView>,
    /// Which engine the fly thinks with, in words.
    pub engine: String,
    pub train: train::TrainTab,
    /// Fly management in the Flies tab: (fly asked to delete, rename field).
    pub delete_asked: Option<String>,
    pub rename: Option<(String, String)>,
    pub flies_status: String,
    /// The Stockfish path being typed in the settings.
    pub stockfish_edit: String,
    /// What the fly looks at and what its eye sees (the Play board's overlays, the Brain tab).
    pub looks: looks::Looks,
    /// The Flies tab's "how it's doing".
    pub doing: doing::DoingPanel,
    /// The Flies tab's "how it loses".
    pub loses: loses::LosesPanel,
    view_applied: bool,
}

/// The slowest frame (the UI thread's time in `show`, ms) seen during each kind of work.
#[derive(Default, Debug)]
pub struct FrameLog {
    pub worst: std::collections::BTreeMap<&'static str, f64>,
    pub frames: usize,
}

impl FrameLog {
    pub fn record(&mut self, activity: &'static str, ms: f64) {
        self.frames += 1;
        let worst = self.worst.entry(activity).or_insert(0.0);
        if ms > *worst {
            *worst = ms;
            if ms > 50.0 && self.frames > 3 {
                tracing::info!("slowest frame so far during {activity}: {ms:.1} ms");
            }
        }
    }

    /// "slowest frames: a think 12.3 ms, idle 8.1 ms (240 frames)".
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.worst.iter().map(|(k, v)| format!("{k} {v:.1} ms")).collect();
        format!("slowest frames: {} ({} frames)", parts.join(", "), self.frames)
    }
}

struct Shot {
    path: PathBuf,
    arrived: Option<Receiver<Arc<egui::ColorImage>>>,
    /// Frames to wait once everything is settled (textures uploaded, layout stable).
    settle: u32,
}

/// Loads (or builds and calibrates) `spec` on a worker thread, reporting to `tx`.
fn start_brain_job(spec: BrainSpec, data: PathBuf, tx: Sender<Report>, ctx: egui::Context) {
    thread::spawn(move || {
        let progress = std::sync::Mutex::new({
            let tx = tx.clone();
            let ctx = ctx.clone();
            move |stage: &str, fraction: f64| {
                let _ = tx.send(Report::Progress { stage: stage.to_string(), fraction });
                ctx.request_repaint();
            }
        });
        let report = match store::ready_brain(&spec, &data, Default::default(), &|s, f| {
            if let Ok(p) = progress.lock() {
                p(s, f)
            }
        }) {
            Ok((loaded, brain)) => Report::Ready(Box::new(ReadyBrain {
                spec: spec.clone(),
                info: loaded.connectome.info(),
                connectome: Arc::new(loaded.connectome),
                brain: Arc::new(brain),
                checksum: loaded.checksum,
                dopamine_models: Default::default(),
            })),
            Err(e) => Report::Failed(e.to_string()),
        };
        let _ = tx.send(report);
        ctx.request_repaint();
    });
}

/// `--watch`: starts the opponent once the brain is ready, asks it for a move whenever it is its
/// turn (the fly's think and replay finished, the board still), and plays its answer.
fn watch_step(watch: &Watch, ready: &Arc<ReadyBrain>, opponent: &mut Option<crate::opponent::Opponent>, asked: &mut Option<(u64, usize)>, play: &mut PlayTab, cx: &mut PlayContext, ctx: &egui::Context) -> Result<(), String> {
    if opponent.is_none() {
        let waker = ctx.clone();
        let started = crate::opponent::Opponent::start(&watch.opponent, cx.data, ready.clone(), move || waker.request_repaint());
        *opponent = Some(started.map_err(|e| format!("--watch {}: {e}", watch.opponent))?);
    }
    let Some(o) = opponent.as_ref() else { return Ok(()) };
    let plies = play.game.plies();
    if asked.is_some_and(|(_, p)| p != plies) {
        // Taken back or a new game: that answer is no longer wanted.
        *asked = None;
    }
    while let Ok((id, answer)) = o.answers.try_recv() {
        if *asked != Some((id, plies)) {
            continue;
        }
        *asked = None;
        match answer {
            Ok(m) => {
                play.play_move(m, cx);
            }
            Err(e) => play.status = format!("{} could not move: {e}", o.name),
        }
    }
    let limit = watch.plies.is_some_and(|n| play.game.plies() >= n);
    let opponents_turn = !play.game.is_over() && play.game.turn() == play.user && !limit;
    if opponents_turn && asked.is_none() && play.thinking.is_none() && !play.replaying() && !play.board.animating() {
        let id = play.game_id * 1_000_000 + play.game.plies() as u64;
        *asked = Some((id, play.game.plies()));
        o.ask(id, play.game.current().clone(), play.game.keys().to_vec());
    }
    Ok(())
}

pub use flies::{list_flies, read_ratings, rename_fly};

impl FlyChessApp {
    /// The app on `ctx`; `storage` gives the saved settings (None: defaults).
    pub fn new(ctx: &egui::Context, adapter: String, launch: Launch, storage: Option<&dyn eframe::Storage>, render_state: Option<eframe::egui_wgpu::RenderState>) -> Self {
        let (sender, reports) = channel();
        start_brain_job(BrainSpec::default(), launch.data.clone(), sender.clone(), ctx.clone());
        let mut settings: Settings = if launch.quiet { None } else { storage.and_then(|s| eframe::get_value(s, eframe::APP_KEY)) }.unwrap_or_default();
        if launch.quiet {
            settings.animate = !launch.moves.is_empty() || launch.screenshot.is_some();
            settings.muted = true;
        }
        let speaker = if launch.quiet { Speaker::silent() } else { Speaker::new(settings.muted) };
        let user = if settings.user_white { Color::White } else { Color::Black };
        let mut play = PlayTab::new(settings.fly.clone(), user);
        play.imagination = settings.imagination;
        play.replay = settings.replay;
        if !settings.game_pgn.is_empty() && launch.moves.is_empty() {
            match Game::from_pgn(&settings.game_pgn) {
                Ok(g) => play.start_game(g, user),
                Err(e) => tracing::warn!("the saved game could not be restored: {e}"),
            }
        }
        let flies = list_flies(&launch.data);
        let ratings = read_ratings(&launch.data);
        let tab = launch.tab.or(launch.view.map(View::tab)).unwrap_or(Tab::Play);
        // eframe restores the window size it remembered; one asked for on the command line wins.
        if let Some([w, h]) = launch.window_size {
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(egui::vec2(w, h)));
        }
        let stockfish_edit = settings.stockfish.clone();
        let mut app = FlyChessApp {
            adapter,
            brain: BrainState::Loading { stage: "starting".into(), fraction: 0.0 },
            reports,
            sender,
            download: None,
            brain_job: None,
            brain_job_error: None,
            opponent: None,
            opponent_asked: None,
            opponent_failed: None,
            workers_status: String::new(),
            fly_cards: None,
            frames: FrameLog::default(),
            shot: launch.screenshot.clone().map(|path| Shot { path, arrived: None, settle: 0 }),
            tab,
            settings,
            play,
            thinker: None,
            grader: None,
            grader_status: String::new(),
            speaker,
            flies,
            playable: Vec::new(),
            charles: charles_players(&launch.data),
            playable_for: None,
            ratings,
            moves_applied: false,
            render_state,
            brain_view: None,
            engine: String::new(),
            train: train::TrainTab::default(),
            delete_asked: None,
            rename: None,
            flies_status: String::new(),
            stockfish_edit,
            looks: Default::default(),
            doing: Default::default(),
            loses: Default::default(),
            view_applied: false,
            launch,
        };
        app.apply_visuals(ctx);
        app.start_grader(ctx);
        app
    }

    fn apply_visuals(&self, ctx: &egui::Context) {
        ctx.set_theme(if self.settings.dark { egui::Theme::Dark } else { egui::Theme::Light });
        ctx.set_zoom_factor(if self.settings.larger_ui { 1.35 } else { 1.0 });
    }

    /// The GPU engine on the window's own device when that is a real GPU (or when
    /// FLYCHESS_ENGINE=gpu asks for it); None: the CPU engine (software adapters, no wgpu,
    /// FLYCHESS_ENGINE=cpu, or a device too small for the brain). Said once in the log and shown
    /// in About.
    fn simulator_engine(&mut self, ready: &ReadyBrain) -> Option<flychess_sim::brain::gpu::GpuEngine> {
        let forced = std::env::var("FLYCHESS_ENGINE").ok();
        let cpu_threads = format!("CPU engine ({} threads)", rayon::current_num_threads());
        let Some(rs) = &self.render_state else {
            self.engine = format!("{cpu_threads}: no wgpu device");
            tracing::info!("simulator: {}", self.engine);
            return None;
        };
        let software = rs.adapter.get_info().device_type == eframe::wgpu::DeviceType::Cpu;
        let want = match forced.as_deref() {
            Some("gpu") => true,
            Some("cpu") => false,
            _ => !software,
        };
        if !want {
            self.engine = if software { format!("{cpu_threads}: faster than the software GPU here") } else { format!("{cpu_threads}: asked by FLYCHESS_ENGINE") };
            tracing::info!("simulator: {}", self.engine);
            return None;
        }
        match flychess_sim::brain::gpu::GpuEngine::new(rs.device.clone(), rs.queue.clone(), &ready.brain) {
            Ok(g) => {
                self.engine = "GPU engine on the window's device (the view draws its rates buffer directly)".into();
                tracing::info!("simulator: {}", self.engine);
                Some(g)
            }
            Err(e) => {
                self.engine = format!("{cpu_threads}: the GPU engine could not start ({e})");
                tracing::warn!("simulator: {}", self.engine);
                None
            }
        }
    }

    /// Loads (or builds) `spec` in the background. The current brain and its game stay until the
    /// new one is ready; if it fails, they stay and the failure is said.
    pub fn switch_brain(&mut self, spec: BrainSpec, ctx: &egui::Context) {
        if self.ready().is_some() {
            self.brain_job = Some(("starting".into(), 0.0));
            self.brain_job_error = None;
        } else {
            self.brain = BrainState::Loading { stage: "starting".into(), fraction: 0.0 };
        }
        start_brain_job(spec, self.launch.data.clone(), self.sender.clone(), ctx.clone());
    }

    fn start_thinker(&mut self, ctx: &egui::Context, ready: &Arc<ReadyBrain>) {
        let waker = ctx.clone();
        let gpu = self.simulator_engine(ready);
        self.thinker = Some(Thinker::start(ready.brain.clone(), Arc::new(ready.connectome.groups.descending.clone()), gpu, move || waker.request_repaint()));
    }

    fn start_grader(&mut self, ctx: &egui::Context) {
        let setting = Some(PathBuf::from(self.settings.stockfish.trim())).filter(|p| !p.as_os_str().is_empty());
        let waker = ctx.clone();
        self.grader = None;
        self.grader_status = "Starting Stockfish…".into();
        self.grader = Some(Grader::start(setting, move || waker.request_repaint()));
    }

    pub fn ready(&self) -> Option<&Arc<ReadyBrain>> {
        match &self.brain {
            BrainState::Ready(b) => Some(b),
            _ => None,
        }
    }

    fn start_download(&mut self, ctx: &egui::Context) {
        let data = self.launch.data.clone();
        let dir = store::malecns_dir(&data);
        let (tx, ctx) = (self.sender.clone(), ctx.clone());
        self.download = Some(("starting".into(), 0.0));
        thread::spawn(move || {
            let progress = |file: &str, done: u64, total: Option<u64>| {
                let fraction = total.map(|t| done as f64 / t.max(1) as f64).unwrap_or(0.0);
                let _ = tx.send(Report::Progress { stage: format!("downloading {file}"), fraction });
                ctx.request_repaint();
            };
            if let Err(e) = store::download_malecns(&dir, release::BASE_URL, 8, &progress) {
                let _ = tx.send(Report::Failed(format!("{e}")));
                ctx.request_repaint();
                return;
            }
            start_brain_job(BrainSpec { tables: Tables::Release { dir }, control: Default::default() }, data, tx, ctx);
        });
    }

    fn poll_workers(&mut self, ctx: &egui::Context) -> (Vec<crate::grader::PositionGrade>, Vec<(String, String)>) {
        while let Ok(r) = self.reports.try_recv() {
            let playing = self.ready().is_some();
            match r {
                Report::Progress { stage, fraction } => {
                    if stage.starts_with("downloading") {
                        self.download = Some((stage, fraction));
                    } else if playing {
                        // Another brain is being built: the current one plays on meanwhile.
                        self.brain_job = Some((stage, fraction));
                    } else {
                        self.brain = BrainState::Loading { stage, fraction };
                    }
                }
                Report::Ready(ready) => {
                    self.download = None;
                    self.brain_job = None;
                    self.brain_job_error = None;
                    let ready: Arc<ReadyBrain> = Arc::from(ready);
                    self.start_thinker(ctx, &ready);
                    self.play.load_fly(&self.launch.data, &ready.checksum, Some(&ready));
                    let mut view = BrainView::new(&ready.connectome, self.render_state.is_some());
                    // The first neuron click needs every neuron's outputs: indexed aside now.
                    view.prefetch_outgoing(ready.brain.clone());
                    if let Some(rs) = &self.render_state {
                        flychess_render::egui_view::install(rs, &view.geometry);
                    }
                    self.brain_view = Some(view);
                    self.opponent = None;
                    self.brain = BrainState::Ready(ready);
                }
                Report::Failed(e) => {
                    self.download = None;
                    self.brain_job = None;
                    if playing {
                        // The game and the brain it is played on stay; the failure is said.
                        self.brain_job_error = Some(e);
                    } else {
                        self.brain = BrainState::Failed(e);
                    }
                }
            }
        }
        // A thinker that died is replaced, and the fly's move in hand is asked again.
        if self.thinker.as_ref().is_some_and(|t| !t.alive())
            && let Some(ready) = self.ready().cloned()
        {
            tracing::warn!("the fly's thinker stopped; starting a new one");
            self.workers_status = "The fly's thinker stopped unexpectedly; a new one was started.".into();
            self.start_thinker(ctx, &ready);
            self.play.forget_requests();
        }
        let mut grades = Vec::new();
        let mut hints = Vec::new();
        if let Some(g) = &self.grader {
            while let Ok(e) = g.events.try_recv() {
                match e {
                    GraderEvent::Ready { path } => self.grader_status = format!("Grades: Stockfish ({}) at depth {}.", path.display(), crate::grader::GRADE_DEPTH),
                    GraderEvent::Graded(p) => grades.push(p),
                    GraderEvent::Hint { fen, best } => hints.push((fen, best)),
                    GraderEvent::Unavailable(msg) => self.grader_status = format!("No grades: {msg}"),
                }
            }
        }
        (grades, hints)
    }

    /// `--moves`: played once the brain and the fly are ready.
    fn apply_launch_moves(&mut self) {
        if self.moves_applied || self.ready().is_none() {
            return;
        }
        self.moves_applied = true;
        if self.launch.moves.is_empty() && self.launch.watch.is_none() {
            return;
        }
        if let Some(w) = &self.launch.watch {
            self.play.stop_at = w.plies;
            self.play.opponent_name = Some(format!("{} (watching)", w.opponent));
            if self.launch.moves.is_empty() {
                // The fly opens; the opponent plays the user's side.
                self.play.start_game(Game::default(), Color::Black);
                return;
            }
        }
        let mut game = Game::default();
        for m in &self.launch.moves {
            if let Err(e) = game.play_text(m) {
                self.play.status = format!("--moves stopped at {m}: {e}");
                break;
            }
        }
        // The user plays the side that just moved, so the fly thinks next.
        let user = if game.plies() == 0 { Color::White } else { !game.turn() };
        self.play.start_game(game, user);
    }

    /// Keeps the picker's list to the flies of the loaded brain (a fly of a control brain cannot
    /// play on this one); recomputed when the fly list or the brain changes.
    /// `--view`: sets the views' state once the brain view exists.
    fn apply_launch_view(&mut self) {
        let Some(view) = self.launch.view else { return };
        if self.view_applied || self.brain_view.is_none() {
            return;
        }
        self.view_applied = true;
        use figures::Pane;
        let pane = |app: &mut FlyChessApp, pane: Pane| {
            if let Some(v) = &mut app.brain_view {
                v.figures.pane = pane;
            }
        };
        match view {
            View::LooksAt => self.looks.overlay = looks::Overlay::LooksAt,
            View::Eye => self.looks.overlay = looks::Overlay::Eye,
            View::AllMoves => self.play.all_moves = true,
            View::Steps => pane(self, Pane::Steps),
            View::BrainEye => pane(self, Pane::Eye),
            View::Chart => pane(self, Pane::Chart),
            View::Probes => {
                pane(self, Pane::Probes);
                if let Some(v) = &mut self.brain_view {
                    // Check: the probe where the brain's regions come closest to the board itself.
                    v.figures.probe_choice = 1;
                }
            }
            View::Doing => self.doing.ask(&self.play.fly_name.clone()),
            View::Loses => self.loses.ask(&self.play.fly_name.clone(), &self.launch.data.clone()),
            View::Classroom => {
                if let Some(v) = &mut self.brain_view {
                    // Opened on the first step, in the window as it is (no full screen for a picture).
                    v.classroom = true;
                    v.presenter.slide = 6;
                }
            }
            View::Learn => {}
        }
    }

    /// True when the view opened with `--view` shows what it is for (a screenshot waits for it).
    fn view_settled(&self) -> bool {
        let thought = self.play.shown_thought();
        match self.launch.view {
            None => true,
            Some(View::LooksAt) => thought.is_some_and(|t| self.looks.explanation(t.id).is_some()),
            Some(View::Steps | View::Chart | View::Probes) => self.brain_view.as_ref().is_some_and(|v| v.figures.settled(thought)),
            Some(View::Learn) => self.train.learn.settled(),
            Some(View::Doing) => self.doing.settled(),
            Some(View::Loses) => self.loses.settled(&self.launch.data),
            Some(_) => true,
        }
    }

    /// The aids a trained fly is offered with in the picker (`sim::search::Aid::parse`).
    fn refresh_playable(&mut self) {
        let Some(checksum) = self.ready().map(|r| r.checksum.clone()) else { return };
        // Charles plays on any brain: every finished run, by its player name.
        let key = (self.flies.iter().chain(&self.charles).cloned().collect(), checksum.clone());
        if self.playable_for.as_ref() == Some(&key) {
            return;
        }
        self.playable = self
            .flies
            .iter()
            .filter(|name| {
                let Ok(p) = flychess_sim::fly::find(name, &self.launch.data) else { return false };
                if flychess_sim::bio::file::is_dopamine_fly(&p) {
                    return flychess_sim::bio::file::DopamineFly::load(&p).is_ok_and(|f| f.meta.brain_checksum == checksum);
                }
                flychess_sim::fly::Fly::load(&p).is_ok_and(|f| f.meta.brain_checksum == checksum)
            })
            .cloned()
            .collect();
        // Each trained fly with Philidor's aids too, labelled as such in the picker.
        let aided: Vec<String> = self
            .playable
            .iter()
            .filter(|name| flychess_sim::fly::find(name, &self.launch.data).and_then(|p| flychess_sim::fly::Fly::load(&p)).is_ok_and(|f| f.meta.kind == "trained"))
            .flat_map(|name| AIDED_SUFFIXES.iter().map(move |s| format!("{name}+{s}")))
            .collect();
        self.playable.extend(self.charles.iter().cloned());
        self.playable.extend(aided);
        self.playable_for = Some(key);
    }

    /// The whole window for one frame, timed: the slowest frame seen during each kind of
    /// background work is kept in `frames` (and logged when a new slowest one passes 50 ms).
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let started = std::time::Instant::now();
        self.show_frame(ui);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let picked = self.brain_view.as_mut().is_some_and(|v| std::mem::take(&mut v.picked));
        let activity = if picked {
            "a neuron click"
        } else if self.brain_view.as_ref().is_some_and(|v| v.exporting()) {
            "an export"
        } else if self.train.job.as_ref().is_some_and(|j| j.running()) || self.train.dopamine.running() || self.train.brain_runs.running() {
            "a training run"
        } else if self.play.thinking.is_some() || self.play.replaying() {
            "a think"
        } else {
            "idle"
        };
        self.frames.record(activity, ms);
    }

    /// The whole window for one frame.
    fn show_frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        let (grades, hints) = self.poll_workers(&ctx);
        // A finished run's fly joins the list, then the picker, in the same frame.
        if self.train.poll() {
            self.flies = list_flies(&self.launch.data);
            self.charles = charles_players(&self.launch.data);
        }
        self.refresh_playable();
        self.apply_launch_moves();
        self.apply_launch_view();
        self.take_screenshot(&ctx);
        egui::Panel::left("tabs").exact_size(104.0).resizable(false).show(ui, |ui| {
            ui.add_space(8.0);
            ui.heading("Fly Chess");
            ui.add_space(8.0);
            for (tab, label) in [(Tab::Play, "Play"), (Tab::Brain, "Brain"), (Tab::Train, "Train"), (Tab::Flies, "Flies"), (Tab::About, "About")] {
                ui.selectable_value(&mut self.tab, tab, RichText::new(label).size(16.0));
            }
            ui.with_layout(egui::Layout::bottom_up(egui::Align::Min), |ui| {
                self.provenance_badge(ui);
            });
        });
        // The game goes on whichever tab is shown (the fly moves, grades arrive); one context per
        // frame serves the update and the Play tab.
        let ready = self.ready().cloned();
        let mut cx = PlayContext {
            thinker: self.thinker.as_ref(),
            grader: self.grader.as_ref(),
            grader_status: &self.grader_status,
            speaker: &mut self.speaker,
            theme: self.settings.board_theme,
            flies: &self.playable,
            ready: ready.as_ref(),
            ratings: &self.ratings,
            data: &self.launch.data,
            brain_checksum: ready.as_ref().map(|r| r.checksum.as_str()),
            animate: self.settings.animate,
            looks: &mut self.looks,
        };
        self.play.update(&ctx, &mut cx, grades, hints);
        if std::mem::take(&mut self.play.wants_training) {
            // Train on the brain in use (the Train tab's own default), under a name of its own.
            self.tab = Tab::Train;
        }
        if let (Some(watch), Some(r)) = (&self.launch.watch, &ready)
            && self.opponent_failed.is_none()
            && let Err(e) = watch_step(watch, r, &mut self.opponent, &mut self.opponent_asked, &mut self.play, &mut cx, &ctx)
        {
            tracing::error!("{e}");
            self.play.status = e.clone();
            if let Ok(mut f) = self.launch.failed.lock() {
                *f = Some(e.clone());
            }
            self.opponent_failed = Some(e);
        }
        if ready.is_none() {
            egui::CentralPanel::default().show(ui, |ui| self.start_screen(ui));
            return;
        }
        match self.tab {
            Tab::Play => {
                let view = &mut self.brain_view;
                let mut card = |ui: &mut egui::Ui, play: &PlayTab| {
                    if let (Some(r), Some(v)) = (&ready, view.as_mut()) {
                        let now = ui.input(|i| i.time);
                        v.card(ui, play.shown_thought(), play.replay_progress(now), &r.connectome, &r.brain);
                    }
                };
                self.play.show(ui, &mut cx, &mut card);
            }
            Tab::Brain => {
                if let (Some(r), Some(v)) = (self.ready().cloned(), self.brain_view.as_mut()) {
                    let now = ui.input(|i| i.time);
                    // The error going back labels its position with the Stockfish the settings name.
                    v.blame.stockfish = Some(PathBuf::from(self.settings.stockfish.trim())).filter(|p| !p.as_os_str().is_empty());
                    v.full(ui, self.play.shown_thought(), self.play.replay_progress(now), &r, &self.launch.data, self.render_state.as_ref(), &mut self.looks, self.play.fly.as_ref());
                }
            }
            Tab::Train => {
                let ready = self.ready().cloned();
                let data = self.launch.data.clone();
                let board_fen = self.play.game.fen(self.play.shown_ply());
                egui::CentralPanel::default().show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        if let Some(r) = &ready {
                            self.train.show(ui, r, &data, &board_fen);
                        }
                    });
                });
            }
            Tab::Flies => {
                egui::CentralPanel::default().show(ui, |ui| self.flies_tab(ui));
            }
            Tab::About => {
                egui::CentralPanel::default().show(ui, |ui| self.about_tab(ui));
            }
        }
    }

    fn provenance_badge(&self, ui: &mut egui::Ui) {
        // Bottom-up: what the workers said, another brain on its way, then the brain in use.
        if !self.workers_status.is_empty() {
            ui.label(RichText::new(&self.workers_status).small().color(Color32::from_rgb(230, 170, 60)));
        }
        if let Some((stage, _)) = &self.brain_job {
            ui.label(RichText::new(format!("another brain: {stage}")).small()).on_hover_text("Being prepared; the game goes on with this brain until it is ready.");
        }
        if let Some(r) = self.ready() {
            let (text, colour) = if r.info.synthetic {
                ("synthetic stand-in", Color32::from_rgb(230, 170, 60))
            } else {
                (r.info.source.split(',').next().unwrap_or(&r.info.source), Color32::from_rgb(90, 200, 120))
            };
            ui.label(RichText::new(text).small().color(colour)).on_hover_text(&r.info.source);
        }
    }

    fn start_screen(&mut self, ui: &mut egui::Ui) {
        ui.heading("Fly Chess");
        ui.label("A whole fruit-fly nervous system learns and plays chess.");
        ui.separator();
        match &self.brain {
            BrainState::Loading { stage, fraction } => {
                ui.label(format!("Preparing the brain: {stage}"));
                ui.add(egui::ProgressBar::new(*fraction as f32).show_percentage().animate(true));
                ui.small("The first start generates the synthetic stand-in connectome, builds its brain file and measures its homeostasis; later starts load it in about a second.");
            }
            BrainState::Failed(e) => {
                ui.colored_label(Color32::LIGHT_RED, format!("The brain could not be prepared: {e}"));
            }
            BrainState::Ready(_) => {}
        }
        ui.small(format!("Graphics: {}", self.adapter));
    }

    /// `--screenshot`: once the brain is ready, the moves played and the fly's answer (if any)
    /// shown, a PNG of the window is saved and the window closes.
    fn take_screenshot(&mut self, ctx: &egui::Context) {
        let settled = match &self.brain {
            BrainState::Loading { .. } => false,
            BrainState::Failed(_) => true,
            BrainState::Ready(_) if self.tab == Tab::Brain => {
                // The brain tab is shot mid-think: the fly's last think, paused at step 6 of 12.
                let thought = self.play.shown_thought().is_some() && self.play.thinking.is_none() && !self.play.replaying();
                if thought && self.shot.is_some()
                    && let Some(v) = &mut self.brain_view
                {
                    v.playing = false;
                    v.step = 5;
                }
                self.moves_applied && (thought || self.launch.moves.is_empty())
            }
            BrainState::Ready(_) => {
                let fly_done = self.play.fly.is_none() || !self.play.fly_to_move();
                // Watching: the game is over, or has its plies.
                let watched = match &self.launch.watch {
                    Some(w) => self.play.game.is_over() || w.plies.is_some_and(|n| self.play.game.plies() >= n) || self.play.fly.is_none() || self.opponent_failed.is_some(),
                    None => true,
                };
                self.moves_applied && fly_done && watched && self.opponent_asked.is_none() && self.play.thinking.is_none() && !self.play.replaying() && !self.play.board.animating()
            }
        };
        let settled = settled && self.view_settled();
        let Some(shot) = &mut self.shot else { return };
        ctx.request_repaint();
        if !settled {
            return;
        }
        if shot.settle < 3 {
            shot.settle += 1;
            return;
        }
        let Some(arrived) = &shot.arrived else {
            let (tx, rx) = channel();
            let waker = ctx.clone();
            ctx.request_screenshot(move |image| {
                let _ = tx.send(image);
                waker.request_repaint();
            });
            shot.arrived = Some(rx);
            return;
        };
        if let Ok(image) = arrived.try_recv() {
            let [w, h] = image.size;
            let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
            match image::RgbaImage::from_raw(w as u32, h as u32, bytes).map(|img| img.save(&shot.path)) {
                Some(Ok(())) => tracing::info!("saved {}", shot.path.display()),
                Some(Err(e)) => tracing::error!("could not save {}: {e}", shot.path.display()),
                None => tracing::error!("the screenshot had an unexpected size"),
            }
            eprintln!("{}", self.frames.summary());
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    /// What eframe stores across restarts.
    pub fn settings_to_save(&mut self) -> Settings {
        self.settings.fly = self.play.fly_name.clone();
        self.settings.user_white = self.play.user == Color::White;
        self.settings.imagination = self.play.imagination;
        self.settings.replay = self.play.replay;
        self.settings.game_pgn = if self.play.game.is_over() { String::new() } else { self.play.pgn() };
        self.settings.clone()
    }
}

impl eframe::App for FlyChessApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if !self.launch.quiet {
            let s = self.settings_to_save();
            eframe::set_value(storage, eframe::APP_KEY, &s);
        }
    }
}


/// eframe's device, asked for everything the adapter offers: the simulator's rates buffer (12
/// steps × 163,803 neurons × the batch) outgrows the default 128 MiB binding, and burn needs the
/// adapter's features — except MAPPABLE_PRIMARY_BUFFERS, which would slow every buffer down.
fn wgpu_options() -> eframe::egui_wgpu::WgpuConfiguration {
    use eframe::egui_wgpu::{WgpuConfiguration, WgpuSetup, WgpuSetupCreateNew};
    use eframe::wgpu;
    let mut setup = WgpuSetupCreateNew::without_display_handle();
    setup.device_descriptor = Arc::new(|adapter: &wgpu::Adapter| wgpu::DeviceDescriptor {
        label: Some("flychess"),
        required_features: adapter.features() - wgpu::Features::MAPPABLE_PRIMARY_BUFFERS,
        required_limits: adapter.limits(),
        ..Default::default()
    });
    WgpuConfiguration { wgpu_setup: WgpuSetup::CreateNew(setup), ..Default::default() }
}

/// What to do when no window could be opened.
pub const NO_WINDOW_HELP: &str = "Fly Chess draws with wgpu (Vulkan, Metal, DirectX 12, or OpenGL as a fallback). \
On Linux install the Vulkan loader and Mesa drivers (Debian/Ubuntu: `sudo apt-get install libvulkan1 mesa-vulkan-drivers`), \
or force a backend with the environment variable WGPU_BACKEND=vulkan|gl|dx12|metal. \
Everything but the window also works from the command line: `flychess --help`.";

/// Opens the window and runs until it closes.
pub fn run(launch: Launch) -> Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size(launch.window_size.unwrap_or([1280.0, 800.0]))
            .with_min_inner_size([640.0, 480.0])
            .with_title("Fly Chess")
            .with_icon(app_icon()),
        wgpu_options: wgpu_options(),
        // A size asked for on the command line is not remembered for the next start.
        persist_window: launch.window_size.is_none(),
        ..Default::default()
    };
    let failed = launch.failed.clone();
    // A failure deep in the window system can panic instead of returning an error: either way the
    // user gets the same readable message (stderr, and a message box where the desktop has one).
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eframe::run_native(
        "Fly Chess",
        options,
        Box::new(move |cc| {
            let adapter = match &cc.wgpu_render_state {
                Some(rs) => {
                    let info = rs.adapter.get_info();
                    let kind = if info.device_type == eframe::wgpu::DeviceType::Cpu { "software renderer" } else { "GPU" };
                    format!("{} ({kind}, {:?})", info.name, info.backend)
                }
                None => "no wgpu adapter".into(),
            };
            tracing::info!("drawing with {adapter}");
            if let Some(rs) = &cc.wgpu_render_state {
                install_device_error_handler(&rs.device, cc.egui_ctx.clone());
            }
            Ok(Box::new(FlyChessApp::new(&cc.egui_ctx, adapter, launch, cc.storage, cc.wgpu_render_state.clone())))
        }),
    )));
    let failure = match opened {
        Ok(Ok(())) => {
            return match failed.lock().ok().and_then(|mut f| f.take()) {
                Some(e) => Err(anyhow!(e)),
                None => Ok(()),
            };
        }
        Ok(Err(e)) => e.to_string(),
        Err(panic) => panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "the window system failed".into()),
    };
    let text = format!("Fly Chess could not open a window: {failure}\n\n{NO_WINDOW_HELP}");
    // Best effort: where no dialog can be shown either, stderr still has it.
    let _ = std::panic::catch_unwind(|| {
        rfd::MessageDialog::new().set_level(rfd::MessageLevel::Error).set_title("Fly Chess").set_description(&text).show();
    });
    Err(anyhow!(text))
}

/// The aids offered with each trained fly in the New game picker: a judge and a 64-simulation
/// search over its own top five moves.
pub const AIDED_SUFFIXES: [&str; 2] = ["judge", "search64"];

/// The finished Charles runs there are, by the names they play under (`charles`, `charles:RUN`).
pub fn charles_players(data: &std::path::Path) -> Vec<String> {
    flychess_sim::charles::player::list(data).iter().map(|run| flychess_sim::charles::player::player_name(run)).collect()
}

/// wgpu hands every error no error scope caught to this handler. One of them is not a bug but a
/// race the window cannot avoid: the thinker submits work on the window's device from its own
/// thread, and a resize that lands meanwhile fails to reconfigure the surface ("failed to wait for
/// GPU to come idle"). The surface keeps its old configuration, which stays valid, and the next
/// frame that finds it out of date configures it again; so that error is logged and a frame is
/// asked for. Every other error stays fatal, as wgpu's default handler makes it.
pub fn install_device_error_handler(device: &eframe::wgpu::Device, ctx: egui::Context) {
    device.on_uncaptured_error(std::sync::Arc::new(move |error: eframe::wgpu::Error| on_device_error(error, &ctx)));
}

/// What the window does with an uncaught wgpu error (see `install_device_error_handler`).
pub fn on_device_error(error: eframe::wgpu::Error, ctx: &egui::Context) {
    if is_surface_busy(&error) {
        tracing::warn!("the window's surface was not resized while the GPU engine was submitting; it is on a later frame");
        ctx.request_repaint();
        return;
    }
    panic!("wgpu error: {error}");
}

/// Whether `error` is the surface's reconfiguration losing the race with another thread's
/// submission (wgpu-core's `ConfigureSurfaceError::GpuWaitTimeout` inside `Surface::configure`).
pub fn is_surface_busy(error: &eframe::wgpu::Error) -> bool {
    use eframe::wgpu::wgc;
    let eframe::wgpu::Error::Validation { source, .. } = error else { return false };
    let Some(context) = source.downcast_ref::<wgc::error::ContextError>() else { return false };
    context.fn_ident == "Surface::configure" && matches!(context.source.downcast_ref::<wgc::present::ConfigureSurfaceError>(), Some(wgc::present::ConfigureSurfaceError::GpuWaitTimeout))
}

/// The window icon: the white knight, rasterised from the piece set.
fn app_icon() -> egui::IconData {
    let piece = shakmaty::Piece { color: Color::White, role: shakmaty::Role::Knight };
    match crate::pieces::rasterise(piece, 64) {
        Ok(img) => egui::IconData { rgba: img.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect(), width: 64, height: 64 },
        Err(_) => egui::IconData::default(),
    }
}
