//! "How it's doing" in the Flies tab (seed "Which piece it moves"): a fly's HOLD positions broken
//! down by the piece Stockfish's best move moves (a confusion table of pieces, rows adding up to
//! 100 %) and by game phase, every rate with its 95 % interval (`sim::breakdown`, the
//! same figures `flychess doing` prints). The brain's HOLD readings come from the DN-rate cache
//! (filled on first use, with a progress bar); each press of the button works it out again from
//! the fly's file as it is then (a fly retrained under the same name is never shown stale).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use eframe::egui::{self, Color32, RichText};
use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::jobs::Aside;
use flychess_lab::lab::jobs::doing::{Breakdown, PIECES};

#[derive(Default)]
pub struct DoingPanel {
    /// The fly asked about.
    pub fly: Option<String>,
    /// (fly name, its content id, the breakdown).
    shown: Option<(String, String, Arc<Breakdown>)>,
    job: Option<(String, Aside<(String, Breakdown)>)>,
    /// Share of the HOLD cache filled, ×1000.
    progress: Arc<AtomicU32>,
    pub status: String,
}

impl DoingPanel {
    /// Asks about fly `name` (worked out again from its file).
    pub fn ask(&mut self, name: &str) {
        self.fly = Some(name.to_string());
        self.shown = None;
        self.status.clear();
    }

    pub fn settled(&self) -> bool {
        self.shown.as_ref().is_some_and(|(n, _, _)| Some(n) == self.fly.as_ref())
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path) {
        ui.heading("How it's doing");
        let Some(name) = self.fly.clone() else {
            ui.weak(
                "Press \"How it's doing\" on a fly of the loaded brain: its HOLD positions by the piece Stockfish moves and by game phase.",
            );
            return;
        };
        if let Some((n, rx)) = &self.job
            && let Ok(answer) = rx.try_recv()
        {
            match answer {
                Ok((id, b)) => self.shown = Some((n.clone(), id, Arc::new(b))),
                Err(e) => self.status = format!("{n}: {e}"),
            }
            self.job = None;
        }
        let current = self.shown.as_ref().filter(|(n, _, _)| *n == name).map(|(_, _, b)| b.clone());
        let Some(b) = current else {
            if self.job.is_none() && self.status.is_empty() {
                let (r, data, n, progress) = (ready.clone(), data.to_path_buf(), name.clone(), self.progress.clone());
                progress.store(0, Ordering::Relaxed);
                self.job = Some((name.clone(), flychess_lab::lab::jobs::doing::start(crate::ui::wake(ui.ctx()), r, data, n, progress)));
            }
            if self.job.is_some() {
                let f = self.progress.load(Ordering::Relaxed) as f32 / 1000.0;
                ui.add(
                    egui::ProgressBar::new(f).text(format!("{name}: the brain reads the HOLD positions (once per brain)")).animate(true),
                );
                ui.ctx().request_repaint_after(std::time::Duration::from_millis(200));
            }
            if !self.status.is_empty() {
                ui.colored_label(Color32::LIGHT_RED, &self.status);
            }
            return;
        };
        ui.label(RichText::new(format!(
            "Fly {name} on {} HOLD positions: Stockfish's best move {} of the time, the same piece as Stockfish {}.",
            b.positions,
            b.top1.percent(),
            b.same_piece.percent()
        )));
        ui.columns(2, |cols| {
            let ui = &mut cols[0];
            ui.label(RichText::new("Which piece it moves (row: Stockfish's piece; column: the fly's; % of the row)").small());
            egui::Grid::new("confusion").num_columns(7).striped(true).show(ui, |ui| {
                ui.label("");
                for p in PIECES {
                    ui.label(RichText::new(p).small().strong());
                }
                ui.end_row();
                for (k, row) in b.confusion.iter().enumerate() {
                    let total: usize = row.iter().sum();
                    ui.label(RichText::new(format!("{} ({total})", PIECES[k])).small().strong());
                    for (j, &n) in row.iter().enumerate() {
                        let share = n as f32 / total.max(1) as f32;
                        let (rect, response) = ui.allocate_exact_size(egui::vec2(52.0, 20.0), egui::Sense::hover());
                        let tone = if j == k {
                            Color32::from_rgba_unmultiplied(60, 170, 90, (share * 230.0) as u8 + 20)
                        } else {
                            Color32::from_rgba_unmultiplied(200, 90, 60, (share * 230.0) as u8 + 10)
                        };
                        ui.painter().rect_filled(rect, 2.0, tone);
                        ui.painter().text(
                            rect.center(),
                            egui::Align2::CENTER_CENTER,
                            format!("{:.0}%", 100.0 * share),
                            egui::FontId::proportional(11.0),
                            ui.visuals().strong_text_color(),
                        );
                        response.on_hover_text(format!("{n} positions where Stockfish moves a {} and the fly a {}", PIECES[k], PIECES[j]));
                    }
                    ui.end_row();
                }
            });
            let ui = &mut cols[1];
            egui::Grid::new("by-piece").num_columns(4).striped(true).show(ui, |ui| {
                for h in ["Stockfish moves a", "positions", "top-1 [95%]", "same piece [95%]"] {
                    ui.label(RichText::new(h).small().strong());
                }
                ui.end_row();
                for r in &b.by_piece {
                    ui.label(&r.piece);
                    ui.label(r.positions.to_string());
                    ui.label(r.top1.percent());
                    ui.label(r.same_piece.percent());
                    ui.end_row();
                }
            });
            ui.add_space(8.0);
            egui::Grid::new("by-phase").num_columns(4).striped(true).show(ui, |ui| {
                for h in ["phase", "positions", "top-1 [95%]", "good move [95%]"] {
                    ui.label(RichText::new(h).small().strong());
                }
                ui.end_row();
                for r in &b.by_phase {
                    ui.label(&r.phase);
                    ui.label(r.positions.to_string());
                    ui.label(r.top1.percent());
                    ui.label(r.good.percent());
                    ui.end_row();
                }
            });
            ui.small("Endgame: pieces other than pawns and kings worth 26 or less (62 at the start); opening: up to move 12.");
        });
    }
}
