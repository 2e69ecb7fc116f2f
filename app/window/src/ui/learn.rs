//! "Watching it learn" (seed "Watching it learn"): a training run keeps a few snapshots of its
//! readout (`training::snapshots`); this panel of the Train tab shows what the fly answers to one
//! position at each of them, a slider going from the newborn readout to the finished fly. The
//! position is 1.e4 with the fly to move unless the user types another FEN or takes the Play
//! board's. The brain looks at the position once (on a thread); every snapshot then only reads
//! those descending neurons differently.

use std::path::Path;
use std::sync::Arc;

use eframe::egui::{self, RichText};

use crate::ui::Aside;
use flychess_lab::lab::ReadyBrain;
use flychess_lab::training::Answer;

/// After 1.e4, the fly (Black) to move.
pub const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

/// A run's name and a position: what the answers shown belong to.
type RunAndFen = (String, String);

pub struct LearnPanel {
    pub run: String,
    pub fen: String,
    /// Index into `answers`.
    pub shown: usize,
    answers: Option<(RunAndFen, Arc<Vec<Answer>>)>,
    job: Option<(RunAndFen, Aside<Vec<Answer>>)>,
    pub status: String,
}

impl Default for LearnPanel {
    fn default() -> Self {
        LearnPanel { run: String::new(), fen: AFTER_E4.into(), shown: usize::MAX, answers: None, job: None, status: String::new() }
    }
}

impl LearnPanel {
    pub fn settled(&self) -> bool {
        self.answers.is_some()
    }

    /// The panel; `runs` are the runs on disk (names), `board_fen` the Play board's position.
    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path, runs: &[String], board_fen: &str) {
        ui.heading("Watching it learn");
        let with: Vec<&String> = runs.iter().filter(|r| !flychess_lab::training::snapshots(data, r).is_empty()).collect();
        if with.is_empty() {
            ui.weak("A readout run keeps snapshots of the fly as it learns; start one above and watch its answer change here.");
            return;
        }
        if !with.iter().any(|r| **r == self.run) {
            self.run = with.last().map(|r| r.to_string()).unwrap_or_default();
        }
        ui.horizontal(|ui| {
            ui.label("Run");
            egui::ComboBox::from_id_salt("learn-run").selected_text(&self.run).show_ui(ui, |ui| {
                for r in &with {
                    ui.selectable_value(&mut self.run, r.to_string(), r.as_str());
                }
            });
            ui.label("Position");
            ui.add(egui::TextEdit::singleline(&mut self.fen).desired_width(300.0));
            if ui.small_button("1.e4").clicked() {
                self.fen = AFTER_E4.into();
            }
            if ui.small_button("the Play board").clicked() {
                self.fen = board_fen.to_string();
            }
        });
        let key = (self.run.clone(), self.fen.trim().to_string());
        if let Some((k, rx)) = &self.job
            && let Ok(answer) = rx.try_recv()
        {
            match answer {
                Ok(a) => {
                    self.answers = Some((k.clone(), Arc::new(a)));
                    self.status.clear();
                }
                Err(e) => self.status = e,
            }
            self.job = None;
        }
        let current = self.answers.as_ref().filter(|(k, _)| *k == key).map(|(_, a)| a.clone());
        if current.is_none() && self.job.as_ref().is_none_or(|(k, _)| *k != key) {
            let (r, data, (run, fen)) = (ready.clone(), data.to_path_buf(), key.clone());
            self.job = Some((key.clone(), flychess_lab::lab::jobs::train::answers(crate::ui::wake(ui.ctx()), r, data, run, fen)));
            self.status.clear();
        }
        if !self.status.is_empty() {
            ui.colored_label(egui::Color32::LIGHT_RED, &self.status);
        }
        let Some(answers) = current else {
            if self.job.is_some() {
                ui.spinner();
            }
            return;
        };
        let last = answers.len() - 1;
        if self.shown > last {
            self.shown = last;
        }
        let mut k = self.shown;
        let label = |k: usize| if answers[k].pass == 0 { "newborn".to_string() } else { format!("after pass {}", answers[k].pass) };
        let text = label(k);
        ui.add(egui::Slider::new(&mut k, 0..=last).show_value(false).text(text));
        self.shown = k;
        let a = &answers[k];
        let mut text = format!("The fly {}: value {:+.2}", label(k), a.value);
        if let Some((top1, loss)) = a.val {
            text.push_str(&format!("; on VAL top-1 {:.1} %, loss {loss:.3}", 100.0 * top1));
        }
        ui.label(RichText::new(text).strong());
        egui::Grid::new("learn-answer").num_columns(2).striped(true).show(ui, |ui| {
            for (san, p) in a.moves.iter().take(8) {
                ui.label(san);
                ui.add(egui::ProgressBar::new(*p).desired_width(220.0).text(format!("{:.1}%", 100.0 * p)));
                ui.end_row();
            }
        });
    }
}
