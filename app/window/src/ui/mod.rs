//! The desktop window (eframe), a view over the lab (`flychess_lab::lab`, which owns the brain, the
//! workers, the flies and the game): the left bar (Play, Brain, Train, Flies, About), the start
//! screen while the first brain loads (its provenance is always on screen afterwards), the
//! settings kept across restarts (eframe storage: theme, board colours, sound, Stockfish path,
//! larger UI, the current game), the lab's notices taken each frame (a new brain's view, a
//! finished game's report), frame times by activity, `--screenshot`, `--moves`, `--view` and
//! `--watch`. Each tab lives in its own module (`play`, `brain_view`, `train`, `flies`, `about`)
//! and changes the lab only through `Lab::command`; this one wires them together. Without the
//! `native` feature (a page) the Train and Flies tabs say that they need the desktop program, and
//! no view opens a file dialog.

mod about;
#[cfg(feature = "native")]
pub mod blame;
pub mod board;
pub mod brain_view;
pub mod classroom;
#[cfg(feature = "native")]
pub mod doing;
#[cfg(feature = "native")]
pub mod figures;
#[cfg(feature = "native")]
mod flies;
#[cfg(feature = "native")]
pub mod learn;
#[cfg(feature = "native")]
pub mod lesson;
pub mod looks;
#[cfg(feature = "native")]
pub mod loses;
pub mod play;
#[cfg(feature = "native")]
pub mod train;
#[cfg(feature = "native")]
pub mod train_brain;
#[cfg(feature = "native")]
pub mod train_charles;
#[cfg(feature = "native")]
pub mod train_dopamine;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use anyhow::{Result, anyhow};
use eframe::egui::{self, Color32, RichText};
use shakmaty::Color;

use flychess_lab::lab::BrainSpec;
use flychess_lab::lab::Info;

use board::BoardTheme;
use brain_view::BrainView;
use flychess_lab::game::Game;
use flychess_lab::lab::{BrainState, Command, DEFAULT_FLY, Gpu, Lab, LabOptions, Notice, ReadyBrain, Watch};
use play::{PlayContext, PlayTab};

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
        View::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, v)| *v)
            .ok_or_else(|| anyhow!("unknown view {s:?}: {}", View::NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
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
    /// The brain and flies a page fetched (the desktop program reads them from `data`).
    #[cfg(not(feature = "native"))]
    pub source: flychess_lab::lab::Fetched,
}

pub use flychess_lab::lab::jobs::Aside;

/// What the lab's threads call when they have news: a repaint of this window.
pub fn wake(ctx: &egui::Context) -> flychess_lab::lab::Wake {
    let ctx = ctx.clone();
    std::sync::Arc::new(move || ctx.request_repaint())
}

/// The window: the lab below (domain state and background jobs) and the views over it. Only what
/// the views themselves need lives here: the tab shown, the settings, each tab's view state, the
/// screenshot and the frame log.
pub struct FlyChessApp {
    pub launch: Launch,
    pub adapter: String,
    /// Everything that is not drawing: the brain, the workers, the flies, the game.
    /// eframe's wgpu state (None without a renderer): the brain view draws with it; the lab gets
    /// only its device (`Gpu`).
    render_state: Option<eframe::egui_wgpu::RenderState>,
    pub lab: Lab,
    shot: Option<Shot>,
    #[cfg(feature = "native")]
    fly_cards: Option<flychess_lab::lab::flies::FlyCards>,
    /// How long frames took, by what ran meanwhile.
    pub frames: FrameLog,
    pub tab: Tab,
    pub settings: Settings,
    /// The Play tab's view state (the board, the panels); the game itself is `lab.play()`.
    pub play: PlayTab,
    moves_applied: bool,
    pub brain_view: Option<BrainView>,
    /// A new brain's view being made aside (its geometry, and its renderer on the window's device).
    view_job: Option<Aside<flychess_lab::lab::jobs::window::MadeCloud>>,
    /// A brain's view was put in place this frame (for the frame log).
    view_arrived: bool,
    #[cfg(feature = "native")]
    pub train: train::TrainTab,
    /// Fly management in the Flies tab: (fly asked to delete, rename field).
    #[cfg(feature = "native")]
    pub delete_asked: Option<String>,
    #[cfg(feature = "native")]
    pub rename: Option<(String, String)>,
    #[cfg(feature = "native")]
    pub flies_status: String,
    /// The Stockfish path being typed in the settings.
    pub stockfish_edit: String,
    /// What the fly looks at and what its eye sees (the Play board's overlays, the Brain tab).
    pub looks: looks::Looks,
    /// The Flies tab's "how it's doing".
    #[cfg(feature = "native")]
    pub doing: doing::DoingPanel,
    /// The Flies tab's "how it loses".
    #[cfg(feature = "native")]
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
    /// The picture being written (by the lab, off the UI thread); the window closes once it is.
    saving: Option<Aside<()>>,
    /// Frames to wait once everything is settled (textures uploaded, layout stable).
    settle: u32,
}

impl FlyChessApp {
    /// The app on `ctx`; `storage` gives the saved settings (None: defaults).
    pub fn new(
        ctx: &egui::Context,
        adapter: String,
        launch: Launch,
        storage: Option<&dyn eframe::Storage>,
        render_state: Option<eframe::egui_wgpu::RenderState>,
    ) -> Self {
        let mut settings: Settings =
            if launch.quiet { None } else { storage.and_then(|s| eframe::get_value(s, eframe::APP_KEY)) }.unwrap_or_default();
        if launch.quiet {
            settings.animate = !launch.moves.is_empty() || launch.screenshot.is_some();
            settings.muted = true;
        }
        let user = if settings.user_white { Color::White } else { Color::Black };
        let waker = ctx.clone();
        let mut lab = Lab::new(
            LabOptions {
                data: launch.data.clone(),
                gpu: render_state.as_ref().map(|rs| Gpu {
                    adapter: rs.adapter.clone(),
                    device: rs.device.clone(),
                    queue: rs.queue.clone(),
                }),
                silent: launch.quiet,
                muted: settings.muted,
                stockfish: settings.stockfish.clone(),
                fly: settings.fly.clone(),
                user,
                #[cfg(not(feature = "native"))]
                source: launch.source.clone(),
            },
            Arc::new(move || waker.request_repaint()),
        );
        lab.command(Command::Imagination(settings.imagination));
        lab.command(Command::Replay(settings.replay));
        let mut play = PlayTab::new(user);
        if !settings.game_pgn.is_empty() && launch.moves.is_empty() {
            match Game::from_pgn(&settings.game_pgn) {
                Ok(g) => {
                    lab.command(Command::NewGame { game: g, user, fly: None });
                    play.game_started(user);
                }
                Err(e) => tracing::warn!("the saved game could not be restored: {e}"),
            }
        }
        let tab = launch.tab.or(launch.view.map(View::tab)).unwrap_or(Tab::Play);
        // eframe restores the window size it remembered; one asked for on the command line wins.
        if let Some([w, h]) = launch.window_size {
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(egui::vec2(w, h)));
        }
        let stockfish_edit = settings.stockfish.clone();
        let app = FlyChessApp {
            adapter,
            render_state,
            lab,
            #[cfg(feature = "native")]
            fly_cards: None,
            frames: FrameLog::default(),
            shot: launch.screenshot.clone().map(|path| Shot { path, arrived: None, saving: None, settle: 0 }),
            tab,
            settings,
            play,
            moves_applied: false,
            brain_view: None,
            view_job: None,
            view_arrived: false,
            #[cfg(feature = "native")]
            train: train::TrainTab::default(),
            #[cfg(feature = "native")]
            delete_asked: None,
            #[cfg(feature = "native")]
            rename: None,
            #[cfg(feature = "native")]
            flies_status: String::new(),
            stockfish_edit,
            looks: Default::default(),
            #[cfg(feature = "native")]
            doing: Default::default(),
            #[cfg(feature = "native")]
            loses: Default::default(),
            view_applied: false,
            launch,
        };
        app.apply_visuals(ctx);
        app
    }

    fn apply_visuals(&self, ctx: &egui::Context) {
        ctx.set_theme(if self.settings.dark { egui::Theme::Dark } else { egui::Theme::Light });
        ctx.set_zoom_factor(if self.settings.larger_ui { 1.35 } else { 1.0 });
    }

    /// Loads (or builds) `spec` in the background (`Command::SwitchBrain`).
    pub fn switch_brain(&mut self, spec: BrainSpec) {
        self.lab.command(Command::SwitchBrain(spec));
    }

    pub fn ready(&self) -> Option<&Arc<ReadyBrain>> {
        self.lab.ready()
    }

    /// What the lab said this frame, as the views take it: a brain that became ready gets its
    /// brain view, made aside (its geometry, its renderer's pipelines and positions on the
    /// window's device) and put in place when done, then its outgoing index is built aside for
    /// the first neuron click; a game that ended opens its report.
    fn take_notices(&mut self, ctx: &egui::Context, notices: Vec<Notice>) {
        for notice in notices {
            match notice {
                Notice::BrainReady => {
                    let Some(ready) = self.lab.ready().cloned() else { continue };
                    let target = self.render_state.as_ref().map(|rs| (rs.device.clone(), rs.target_format));
                    self.view_job = Some(flychess_lab::lab::jobs::window::cloud(wake(ctx), ready, target));
                }
                Notice::GameOver(_) => self.play.report_open = true,
                Notice::GameLoaded(user) => self.play.game_started(user),
                Notice::BrainFailed(_) | Notice::WorkerReplaced(_) => {}
            }
        }
        let Some(job) = &self.view_job else { return };
        match job.try_recv() {
            Ok(Ok(made)) => {
                self.view_job = None;
                let Some(ready) = self.lab.ready().cloned() else { return };
                if let (Some(rs), Some(renderer)) = (&self.render_state, made.renderer) {
                    flychess_render::egui_view::install_prepared(rs, renderer);
                }
                let mut view = BrainView::new(&ready.connectome, made.geometry, self.render_state.is_some());
                view.prefetch_outgoing(ready.brain.clone());
                self.brain_view = Some(view);
                self.view_arrived = true;
            }
            Ok(Err(e)) => {
                self.view_job = None;
                tracing::error!("the brain view could not be made: {e}");
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => self.view_job = None,
        }
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
        if let Some(w) = self.launch.watch.clone() {
            self.lab.command(Command::Watch(w));
            if self.launch.moves.is_empty() {
                // The fly opens; the opponent plays the user's side.
                self.new_game(Game::default(), Color::Black, None);
                return;
            }
        }
        let mut game = Game::default();
        let mut stopped = None;
        for m in &self.launch.moves {
            if let Err(e) = game.play_text(m) {
                stopped = Some(format!("--moves stopped at {m}: {e}"));
                break;
            }
        }
        // The user plays the side that just moved, so the fly thinks next.
        let user = if game.plies() == 0 { Color::White } else { !game.turn() };
        self.new_game(game, user, None);
        if let Some(why) = stopped {
            self.lab.command(Command::Say(why));
        }
    }

    /// Starts `game` against `fly` (None: the same player) with the user playing `user`: the lab
    /// starts it, the Play tab turns its board to the user and forgets the last game's dialogs.
    pub fn new_game(&mut self, game: Game, user: Color, fly: Option<String>) {
        self.lab.command(Command::NewGame { game, user, fly });
        self.play.game_started(user);
    }

    /// `--view`: sets the views' state once the brain view exists.
    fn apply_launch_view(&mut self) {
        let Some(view) = self.launch.view else { return };
        if self.view_applied || self.brain_view.is_none() {
            return;
        }
        self.view_applied = true;
        match view {
            View::LooksAt => self.looks.overlay = looks::Overlay::LooksAt,
            View::Eye => self.looks.overlay = looks::Overlay::Eye,
            View::AllMoves => self.play.all_moves = true,
            View::Classroom => {
                if let Some(v) = &mut self.brain_view {
                    // Opened on the first step, in the window as it is (no full screen for a picture).
                    v.classroom = true;
                    v.presenter.slide = 6;
                }
            }
            #[cfg(feature = "native")]
            other => self.apply_desktop_view(other),
            // A page has no figures, training or flies' panels: the tab says so.
            #[cfg(not(feature = "native"))]
            _ => {}
        }
    }

    /// `--view` for the views only the desktop program has (the figures, Train and Flies panels).
    #[cfg(feature = "native")]
    fn apply_desktop_view(&mut self, view: View) {
        use figures::Pane;
        let pane = |app: &mut FlyChessApp, pane: Pane| {
            if let Some(v) = &mut app.brain_view {
                v.figures.pane = pane;
            }
        };
        match view {
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
            View::Doing => self.doing.ask(&self.lab.play().fly_name.clone()),
            View::Loses => self.loses.ask(&self.lab.play().fly_name.clone(), &self.launch.data.clone()),
            View::Learn | View::LooksAt | View::Eye | View::AllMoves | View::Classroom => {}
        }
    }

    /// True when the view opened with `--view` shows what it is for (a screenshot waits for it).
    fn view_settled(&self) -> bool {
        let thought = self.lab.play().shown_thought();
        match self.launch.view {
            None => true,
            Some(View::LooksAt) => thought.is_some_and(|t| self.looks.explanation(t.id).is_some()),
            #[cfg(feature = "native")]
            Some(View::Steps | View::Chart | View::Probes) => self.brain_view.as_ref().is_some_and(|v| v.figures.settled(thought)),
            #[cfg(feature = "native")]
            Some(View::Learn) => self.train.learn.settled(),
            #[cfg(feature = "native")]
            Some(View::Doing) => self.doing.settled(),
            #[cfg(feature = "native")]
            Some(View::Loses) => self.loses.settled(),
            Some(_) => true,
        }
    }

    /// The whole window for one frame, timed: the slowest frame seen during each kind of
    /// background work is kept in `frames` (and logged when a new slowest one passes 50 ms).
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let started = web_time::Instant::now();
        self.show_frame(ui);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let picked = self.brain_view.as_mut().is_some_and(|v| std::mem::take(&mut v.picked));
        let activity = if std::mem::take(&mut self.view_arrived) {
            "a brain's view arriving"
        } else if picked {
            "a neuron click"
        } else if self.brain_view.as_ref().is_some_and(|v| v.exporting()) {
            "an export"
        } else if self.training() {
            "a training run"
        } else if self.lab.play().thinking.is_some() || self.lab.play().replaying() {
            "a think"
        } else {
            "idle"
        };
        self.frames.record(activity, ms);
    }

    /// Whether a training run is under way (only the desktop program trains).
    fn training(&self) -> bool {
        #[cfg(feature = "native")]
        {
            self.train.job.as_ref().is_some_and(|j| j.running()) || self.train.dopamine.running() || self.train.brain_runs.running()
        }
        #[cfg(not(feature = "native"))]
        {
            false
        }
    }

    /// The whole window for one frame.
    fn show_frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        // The lab moves on whichever tab is shown (the fly moves, grades arrive, brains load).
        let now = ctx.input(|i| i.time);
        let (notices, wake) = self.lab.poll(now, self.settings.animate, !self.play.board.animating());
        if let Some(seconds) = wake {
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(seconds));
        }
        self.take_notices(&ctx, notices);
        if let Some(e) = &self.lab.opponent_failed()
            && let Ok(mut f) = self.launch.failed.lock()
            && f.is_none()
        {
            // The exit status says so once the window closes.
            *f = Some(e.clone());
        }
        // A finished run's fly joins the list, then the picker, in the same frame.
        #[cfg(feature = "native")]
        if self.train.poll() {
            self.lab.command(Command::ReadFlies);
        }
        self.apply_launch_moves();
        self.apply_launch_view();
        self.take_screenshot(&ctx);
        egui::Panel::left("tabs").exact_size(104.0).resizable(false).show(ui, |ui| {
            ui.add_space(8.0);
            ui.heading("Fly Chess");
            ui.add_space(8.0);
            for (tab, label) in
                [(Tab::Play, "Play"), (Tab::Brain, "Brain"), (Tab::Train, "Train"), (Tab::Flies, "Flies"), (Tab::About, "About")]
            {
                ui.selectable_value(&mut self.tab, tab, RichText::new(label).size(16.0));
            }
            ui.with_layout(egui::Layout::bottom_up(egui::Align::Min), |ui| {
                self.provenance_badge(ui);
            });
        });
        let ready = self.ready().cloned();
        let mut cx =
            PlayContext { lab: &mut self.lab, theme: self.settings.board_theme, animate: self.settings.animate, looks: &mut self.looks };
        // A premove is played as soon as it is the user's turn again.
        self.play.play_premove(&mut cx);
        if std::mem::take(&mut self.play.wants_training) {
            // Train on the brain in use (the Train tab's own default), under a name of its own.
            self.tab = Tab::Train;
        }
        if ready.is_none() {
            egui::CentralPanel::default().show(ui, |ui| self.start_screen(ui));
            return;
        }
        match self.tab {
            Tab::Play => {
                let view = &mut self.brain_view;
                let mut card = |ui: &mut egui::Ui, game: &flychess_lab::lab::Match| {
                    if let (Some(r), Some(v)) = (&ready, view.as_mut()) {
                        let now = ui.input(|i| i.time);
                        v.card(ui, game.shown_thought(), game.replay_progress(now), &r.connectome, &r.brain);
                    }
                };
                self.play.show(ui, &mut cx, &mut card);
            }
            Tab::Brain => {
                // Two glances: which of the think's two looks the tab shows.
                if let Some(second) = self.lab.play().first_glance().and_then(|t| t.second_glance.as_deref()) {
                    let (square, gain, let_go) = (second.square, second.gain, second.thought.rates.is_empty());
                    let mut showing = self.lab.play().showing_second_glance();
                    let before = showing;
                    ui.horizontal(|ui| {
                        ui.label("Two glances:");
                        ui.radio_value(&mut showing, false, "first look");
                        let words = format!("second look, the piece on {square} seen with {gain}× the drive");
                        ui.radio_value(&mut showing, true, if let_go { format!("{words} (its rates were let go)") } else { words });
                    });
                    if showing != before {
                        self.lab.command(flychess_lab::lab::Command::SecondGlance(showing));
                    }
                }
                if let (Some(r), Some(v)) = (self.ready().cloned(), self.brain_view.as_mut()) {
                    let now = ui.input(|i| i.time);
                    // The error going back labels its position with the Stockfish the settings name.
                    #[cfg(feature = "native")]
                    {
                        v.blame.stockfish = Some(PathBuf::from(self.settings.stockfish.trim())).filter(|p| !p.as_os_str().is_empty());
                    }
                    let game = &self.lab.play();
                    let tab = crate::ui::brain_view::BrainTabInput {
                        thought: game.shown_thought(),
                        replay: game.replay_progress(now),
                        ready: &r,
                        data: &self.launch.data,
                        render_state: self.render_state.as_ref(),
                        fly: game.fly.as_ref(),
                    };
                    v.full(ui, tab, &mut self.looks);
                }
            }
            #[cfg(not(feature = "native"))]
            Tab::Train | Tab::Flies => {
                egui::CentralPanel::default().show(ui, |ui| {
                    ui.label(RichText::new(NEEDS_DESKTOP_TAB).size(16.0));
                });
            }
            #[cfg(feature = "native")]
            Tab::Train => {
                let ready = self.ready().cloned();
                let data = self.launch.data.clone();
                let board_fen = self.lab.play().game.fen(self.lab.play().shown_ply());
                egui::CentralPanel::default().show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        if let Some(r) = &ready {
                            self.train.show(ui, r, &data, &board_fen);
                        }
                    });
                });
            }
            #[cfg(feature = "native")]
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
        if !self.lab.workers_status().is_empty() {
            ui.label(RichText::new(self.lab.workers_status()).small().color(Color32::from_rgb(230, 170, 60)));
        }
        if let Some((stage, _)) = &self.lab.brain_job() {
            ui.label(RichText::new(format!("another brain: {stage}")).small())
                .on_hover_text("Being prepared; the game goes on with this brain until it is ready.");
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
        match &self.lab.brain() {
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
        let game = &self.lab.play();
        let settled = match &self.lab.brain() {
            BrainState::Loading { .. } => false,
            BrainState::Failed(_) => true,
            BrainState::Ready(_) if self.tab == Tab::Brain => {
                // The brain tab is shot mid-think: the fly's last think, paused at step 6 of 12.
                let thought = game.shown_thought().is_some() && game.thinking.is_none() && !game.replaying();
                if thought
                    && self.shot.is_some()
                    && let Some(v) = &mut self.brain_view
                {
                    v.playing = false;
                    v.step = 5;
                }
                self.moves_applied && (thought || self.launch.moves.is_empty())
            }
            BrainState::Ready(_) => {
                let fly_done = (game.fly.is_none() && !game.preparing_fly()) || !game.fly_to_move();
                // Watching: the game is over, or has its plies.
                let watched = self.lab.watch_done();
                self.moves_applied
                    && fly_done
                    && watched
                    && self.lab.opponent_asked().is_none()
                    && game.thinking.is_none()
                    && !game.replaying()
                    && !self.play.board.animating()
            }
        };
        // The brain's view is made aside: a picture waits for it.
        let settled = settled && self.view_settled() && (self.brain_view.is_some() || !matches!(self.lab.brain(), BrainState::Ready(_)));
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
        if let Some(saving) = &shot.saving {
            match saving.try_recv() {
                Ok(Ok(())) => tracing::info!("saved {}", shot.path.display()),
                Ok(Err(e)) => tracing::error!("could not save {}: {e}", shot.path.display()),
                Err(std::sync::mpsc::TryRecvError::Empty) => return,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => tracing::error!("the screenshot's writer stopped"),
            }
            eprintln!("{}", self.frames.summary());
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if let Ok(image) = arrived.try_recv() {
            let [w, h] = image.size;
            let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
            shot.saving = Some(flychess_lab::lab::jobs::window::screenshot(wake(ctx), [w, h], bytes, shot.path.clone()));
        }
    }

    /// What eframe stores across restarts.
    pub fn settings_to_save(&mut self) -> Settings {
        let game = &self.lab.play();
        self.settings.fly = game.fly_name.clone();
        self.settings.user_white = game.user == Color::White;
        self.settings.imagination = game.imagination();
        self.settings.replay = game.replay();
        self.settings.game_pgn = if game.game.is_over() { String::new() } else { game.pgn() };
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
pub fn wgpu_options() -> eframe::egui_wgpu::WgpuConfiguration {
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

/// What the Train and Flies tabs say in a page (built without `native`).
pub const NEEDS_DESKTOP_TAB: &str =
    "Training flies and managing them on disk needs the desktop program (flychess): it runs where a page cannot (threads, files, burn).";

/// What to do when no window could be opened.
pub const NO_WINDOW_HELP: &str = "Fly Chess draws with wgpu (Vulkan, Metal, DirectX 12, or OpenGL as a fallback). \
On Linux install the Vulkan loader and Mesa drivers (Debian/Ubuntu: `sudo apt-get install libvulkan1 mesa-vulkan-drivers`), \
or force a backend with the environment variable WGPU_BACKEND=vulkan|gl|dx12|metal. \
Everything but the window also works from the command line: `flychess --help`.";

/// Opens the window and runs until it closes (the desktop program's: a page starts the window
/// from its own crate).
#[cfg(feature = "native")]
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
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        eframe::run_native(
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
        )
    }));
    let failure = match opened {
        Ok(Ok(())) => {
            return match failed.lock().ok().and_then(|mut f| f.take()) {
                Some(e) => Err(anyhow!(e)),
                None => Ok(()),
            };
        }
        Ok(Err(e)) => e.to_string(),
        Err(panic) => panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the window system failed".into()),
    };
    let text = format!("Fly Chess could not open a window: {failure}\n\n{NO_WINDOW_HELP}");
    // Best effort: where no dialog can be shown either, stderr still has it.
    let _ = std::panic::catch_unwind(|| {
        rfd::MessageDialog::new().set_level(rfd::MessageLevel::Error).set_title("Fly Chess").set_description(&text).show();
    });
    Err(anyhow!(text))
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
    context.fn_ident == "Surface::configure"
        && matches!(
            context.source.downcast_ref::<wgc::present::ConfigureSurfaceError>(),
            Some(wgc::present::ConfigureSurfaceError::GpuWaitTimeout)
        )
}

/// The window icon: the white knight, rasterised from the piece set.
#[cfg(feature = "native")]
fn app_icon() -> egui::IconData {
    let piece = shakmaty::Piece { color: Color::White, role: shakmaty::Role::Knight };
    match crate::pieces::rasterise(piece, 64) {
        Ok(img) => egui::IconData { rgba: img.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect(), width: 64, height: 64 },
        Err(_) => egui::IconData::default(),
    }
}
