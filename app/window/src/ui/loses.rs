//! "How it loses" in the Flies tab (Philidor's lesson, `sim::profile`): a fly's games against the
//! ladder's rungs, every move scored by Stockfish, the centipawns it loses a move by game phase and
//! outcome, and how each lost game went (one fatal blunder, a clear mistake, a slow decline). The
//! figures are the ones `flychess profile` prints: the same job (`profiling::run`) runs here on a
//! thread with a progress bar, and a report either has made is kept in DATA/profiles/ under the
//! fly's content id, so a fly retrained under the same name is never shown another's profile.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use eframe::egui::{self, Color32, RichText};

use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::jobs::Aside;
use flychess_lab::profiling;

/// Games and depth the window measures with unless changed (`flychess profile`'s defaults).
pub const GAMES: usize = 40;
pub const DEPTH: u32 = 10;

pub struct LosesPanel {
    /// The fly asked about: (name, content id).
    pub fly: Option<(String, String)>,
    /// Games to analyse and Stockfish's depth for the next measurement.
    pub games: usize,
    pub depth: u32,
    job: Option<Aside<serde_json::Value>>,
    /// Stage (0 playing, 1 analysing), done and total of the running job.
    progress: Arc<[AtomicU32; 3]>,
    pub status: String,
    /// The kept reports of the fly asked about, by its content id: read when it is asked about and
    /// when a measurement ends, not every frame.
    kept: Option<(String, Vec<serde_json::Value>)>,
}

impl Default for LosesPanel {
    fn default() -> Self {
        LosesPanel { fly: None, games: GAMES, depth: DEPTH, job: None, progress: Default::default(), status: String::new(), kept: None }
    }
}

impl LosesPanel {
    /// A measurement is running.
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// Asks about fly `name` of `data` (its kept profile shown, if any).
    pub fn ask(&mut self, name: &str, data: &Path) {
        self.status.clear();
        self.fly = match flychess_lab::lab::flies::player_id(name, data) {
            Ok(id) => {
                self.kept = Some((id.clone(), profiling::kept(data, &id)));
                Some((name.to_string(), id))
            }
            Err(e) => {
                self.status = format!("{name}: {e}");
                None
            }
        };
    }

    /// A kept profile of the fly asked about is there to show.
    pub fn settled(&self) -> bool {
        match (&self.fly, &self.kept) {
            (Some((_, id)), Some((k, reports))) => k == id && !reports.is_empty(),
            _ => false,
        }
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path, stockfish: Option<PathBuf>) {
        ui.heading("How it loses");
        let Some((name, id)) = self.fly.clone() else {
            ui.weak("Press \"How it loses\" on a fly of the loaded brain: its games against the ladder's rungs, every move scored by Stockfish.");
            if !self.status.is_empty() {
                ui.colored_label(Color32::LIGHT_RED, &self.status);
            }
            return;
        };
        if let Some(rx) = &self.job
            && let Ok(answer) = rx.try_recv()
        {
            if let Err(e) = answer {
                self.status = format!("{name}: {e}");
            }
            self.job = None;
            self.kept = None;
        }
        if self.kept.as_ref().is_none_or(|(k, _)| *k != id) {
            self.kept = Some((id.clone(), profiling::kept(data, &id)));
        }
        let kept = self.kept.as_ref().map(|(_, reports)| reports.clone()).unwrap_or_default();
        if self.job.is_some() {
            let [stage, done, total] = &*self.progress;
            let (done, total) = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed).max(1));
            let what = if stage.load(Ordering::Relaxed) == 0 {
                "playing its ladder games (kept for `flychess rate`)"
            } else {
                "Stockfish scores every move"
            };
            ui.add(egui::ProgressBar::new(done as f32 / total as f32).text(format!("{name}: {what} — {done}/{total} games")).animate(true));
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(250));
        } else {
            ui.horizontal(|ui| {
                if ui.button(format!("Measure {name} over {} games (Stockfish depth {})", self.games, self.depth)).clicked() {
                    self.start(ui.ctx(), ready, data, &name, stockfish);
                }
                ui.add(egui::DragValue::new(&mut self.games).range(2..=400).suffix(" games"));
                ui.add(egui::DragValue::new(&mut self.depth).range(1..=20).prefix("depth "));
            });
        }
        if !self.status.is_empty() {
            ui.colored_label(Color32::LIGHT_RED, &self.status);
        }
        match kept.first() {
            Some(report) => profile_view(ui, &name, report),
            None if self.job.is_none() => {
                ui.weak(format!("No profile of {name} yet (`flychess profile --player {name}` makes the same one)."));
            }
            None => {}
        }
    }

    fn start(&mut self, ctx: &egui::Context, ready: &Arc<ReadyBrain>, data: &Path, name: &str, stockfish: Option<PathBuf>) {
        let stockfish = match flychess_lab::lab::find_stockfish(stockfish.as_deref()) {
            Ok(p) => p,
            Err(e) => {
                self.status = format!("The profile needs Stockfish: {e}");
                return;
            }
        };
        let (ready, data, name, progress, games, depth) =
            (ready.clone(), data.to_path_buf(), name.to_string(), self.progress.clone(), self.games, self.depth);
        for a in progress.iter() {
            a.store(0, Ordering::Relaxed);
        }
        self.status.clear();
        self.job = Some(flychess_lab::lab::jobs::profile::start(
            crate::ui::wake(ctx),
            ready,
            data,
            flychess_lab::lab::jobs::profile::Ask { fly: name, stockfish, games, depth },
            progress,
        ));
    }
}

/// A kept profile report, as tables.
fn profile_view(ui: &mut egui::Ui, name: &str, report: &serde_json::Value) {
    let p = &report["profile"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let cp = |e: &serde_json::Value| e["value"].as_f64().filter(|v| v.is_finite()).map_or("—".to_string(), |v| format!("{v:.0}"));
    let share = |e: &serde_json::Value| match (e["value"].as_f64(), e["low"].as_f64(), e["high"].as_f64()) {
        (Some(v), Some(l), Some(h)) if v.is_finite() => format!("{:.0} % [{:.0}, {:.0}]", 100.0 * v, 100.0 * l, 100.0 * h),
        _ => "—".into(),
    };
    ui.label(RichText::new(format!(
        "{name} over {} games against the ladder's rungs (+{} ={} −{}), {} of its moves scored by Stockfish at depth {}: {} cp lost a move [{}, {}].",
        n(&p["games"]),
        n(&p["won"]),
        n(&p["drawn"]),
        n(&p["lost"]),
        n(&p["moves"]),
        n(&report["depth"]),
        cp(&p["mean_loss"]),
        p["mean_loss"]["low"].as_f64().map_or("—".into(), |v| format!("{v:.0}")),
        p["mean_loss"]["high"].as_f64().map_or("—".into(), |v| format!("{v:.0}")),
    )));
    ui.columns(2, |cols| {
        let ui = &mut cols[0];
        egui::Grid::new("loses-phases").num_columns(7).striped(true).show(ui, |ui| {
            for h in ["phase", "moves", "cp lost: all", "won", "drawn", "lost", "> 400 cp per 100"] {
                ui.label(RichText::new(h).small().strong());
            }
            ui.end_row();
            let blunders = p["blunders_per_100_moves"].as_array().cloned().unwrap_or_default();
            for (k, row) in p["phases"].as_array().into_iter().flatten().enumerate() {
                ui.label(row["phase"].as_str().unwrap_or(""));
                ui.label(n(&row["moves"]).to_string());
                for key in ["all", "won", "drawn", "lost"] {
                    ui.label(cp(&row[key])).on_hover_text(format!(
                        "95 %: [{}, {}]",
                        row[key]["low"].as_f64().map_or("—".into(), |v| format!("{v:.0}")),
                        row[key]["high"].as_f64().map_or("—".into(), |v| format!("{v:.0}"))
                    ));
                }
                ui.label(blunders.get(k).and_then(|b| b[1].as_f64()).map_or("—".into(), |b| format!("{b:.1}")));
                ui.end_row();
            }
        });
        ui.small("Per-move intervals on hover; a game's moves are not independent, so read them as rough.");
        let ui = &mut cols[1];
        ui.label(RichText::new(format!("How its {} losses went", n(&p["lost"]))).strong());
        let shapes = p["loss_shapes"].as_array().cloned().unwrap_or_default();
        let most = shapes.iter().map(|s| n(&s[1])).max().unwrap_or(0).max(1);
        for s in &shapes {
            ui.horizontal(|ui| {
                ui.label(RichText::new(format!("{:18}", s[0].as_str().unwrap_or(""))).monospace());
                let (rect, _) = ui.allocate_exact_size(egui::vec2(160.0 * n(&s[1]) as f32 / most as f32 + 2.0, 14.0), egui::Sense::hover());
                ui.painter().rect_filled(rect, 2.0, Color32::from_rgb(200, 90, 60));
                ui.label(n(&s[1]).to_string());
            });
        }
        ui.label(format!("Decided by one blunder (> 400 cp): {}", share(&p["losses_by_one_blunder"])));
        ui.label(format!("Games with such a move, every outcome: {}", share(&p["games_with_a_blunder"]))).on_hover_text(
            "What \"decided by one blunder\" is to be read against: a share near it means blunders are everywhere, not only in losses.",
        );
    });
}
