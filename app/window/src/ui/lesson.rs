//! The Brain tab's lesson comic: the position on the board as a dopamine-fly lesson, seen from
//! inside the mushroom body (`sim::bio::comic`). The board after Stockfish's move gets sugar, the
//! board after another legal move a shock; the panel shows how many Kenyon cells fire after each
//! and how many fire for both (why the dopamine fly learns so little), the MBONs' vote on each
//! board, the dose, and which MBONs' Kenyon-cell synapses the lesson weakens and by how much. The
//! dopamine fly is the brain's shipped one (else the user's, else the untrained mushroom body); the
//! work runs on a thread of its own, on the brain's one dopamine model (`ReadyBrain::dopamine_model`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, Plot};
use shakmaty::{Chess, Move};

use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::jobs::lesson::{LessonComic, ShownLesson};

#[derive(Default)]
pub struct LessonPanel {
    job: Option<Receiver<Result<ShownLesson, String>>>,
    pub shown: Option<ShownLesson>,
    pub status: String,
}

impl LessonPanel {
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    fn poll(&mut self) {
        let Some(rx) = &self.job else { return };
        if let Ok(r) = rx.try_recv() {
            self.job = None;
            match r {
                Ok(s) => {
                    self.status.clear();
                    self.shown = Some(s);
                }
                Err(e) => self.status = format!("The lesson could not be worked out: {e}"),
            }
        }
    }

    /// Starts working out the lesson of `position` (the think `of`).
    pub fn start(&mut self, ctx: &egui::Context, ready: Arc<ReadyBrain>, data: PathBuf, position: Chess, of: u64, fly_move: Move) {
        self.job = Some(flychess_lab::lab::jobs::lesson::start(crate::ui::wake(ctx), ready, data, position, of, fly_move));
        self.status = "Working out the lesson (the first time, the mushroom body is prepared: a few seconds)…".into();
    }

    pub fn show(&mut self, ui: &mut egui::Ui, thought: Option<&flychess_lab::thinker::Thought>, ready: &Arc<ReadyBrain>, data: &Path) {
        self.poll();
        ui.label(RichText::new("Dopamine lesson").strong())
            .on_hover_text("This position as a lesson for the dopamine fly: sugar after Stockfish's move, a shock after another");
        ui.horizontal(|ui| {
            let clicked = ui.add_enabled(thought.is_some() && !self.busy(), egui::Button::new("Show the lesson")).clicked();
            if clicked && let Some(t) = thought {
                self.start(ui.ctx(), ready.clone(), data.to_path_buf(), t.position.clone(), t.id, t.chosen);
            }
            if self.busy() {
                ui.spinner();
            }
        });
        if !self.status.is_empty() {
            ui.small(&self.status);
        }
        let Some(s) = self.shown.as_ref().filter(|s| thought.is_some_and(|t| t.id == s.of)) else { return };
        let c = &s.comic;
        ui.small(format!("{}: sugar after {} ({}), shock after {}.", s.fly, s.good, s.good_from, s.bad));
        let same = if c.fire_good.max(c.fire_bad) > 0 { 100.0 * c.fire_both as f64 / c.fire_good.max(c.fire_bad) as f64 } else { 0.0 };
        ui.label(format!(
            "Kenyon cells firing: {} after {}, {} after {}, {} for both ({same:.0} % the same; {} of {} pass the APL's cut).",
            c.fire_good, s.good, c.fire_bad, s.bad, c.fire_both, c.passing, c.kenyon_cells
        ));
        overlap_bar(ui, c);
        ui.small(format!(
            "The MBONs vote {:.3} for {} and {:.3} for {}; the dose (the chance it still prefers {}) is {:.2}.",
            c.vote_good, s.good, c.vote_bad, s.bad, s.bad, c.dose
        ));
        ui.small(format!("The Kenyon cells carry {:.0} % of the MBONs' input at step 12.", 100.0 * c.kenyon_share));
        let changed: Vec<_> = c.mbons.iter().filter(|m| m.change < 0.0).take(8).collect();
        if changed.is_empty() {
            ui.small("This lesson changes no synapse (no dose reached a compartment).");
            return;
        }
        ui.small("MBONs whose Kenyon-cell synapses this lesson weakens most (% of their strength):");
        let bars: Vec<Bar> = changed
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let color = if m.valence > 0.0 { Color32::from_rgb(90, 170, 230) } else { Color32::from_rgb(230, 120, 90) };
                Bar::new(i as f64, 100.0 * (m.change / m.strength.max(1e-12)) as f64)
                    .name(format!("MBON #{} ({})", m.index, if m.valence > 0.0 { "approach" } else { "avoid" }))
                    .fill(color)
            })
            .collect();
        Plot::new("lesson-mbons")
            .height(110.0)
            .show_axes([false, true])
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .show(ui, |plot| plot.bar_chart(BarChart::new("change", bars)));
        ui.small("Blue: approach MBONs (PPL1 reaches them: the shock). Orange: avoid MBONs (PAM: the sugar).");
    }
}

/// Three segments: cells only for the good board, both, only for the bad.
fn overlap_bar(ui: &mut egui::Ui, c: &LessonComic) {
    let (g, b, both) = (c.fire_good - c.fire_both.min(c.fire_good), c.fire_bad - c.fire_both.min(c.fire_bad), c.fire_both);
    let total = (g + b + both).max(1) as f32;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(ui.available_width().min(300.0), 14.0), egui::Sense::hover());
    let mut x = rect.left();
    for (n, color) in [(g, Color32::from_rgb(90, 200, 120)), (both, Color32::GRAY), (b, Color32::from_rgb(230, 90, 90))] {
        let w = rect.width() * n as f32 / total;
        ui.painter().rect_filled(egui::Rect::from_min_size(egui::pos2(x, rect.top()), egui::vec2(w, rect.height())), 0.0, color);
        x += w;
    }
}
