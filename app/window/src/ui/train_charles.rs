//! The Train tab's Charles runs: Charles (a transformer that never was a fly, `sim::charles`)
//! trains on the flies' positions and labels on its own thread — the same run as `flychess charles
//! train`, checkpointed atomically into `DATA/charles/NAME/`, so Stop and Start with the same name
//! and settings go on from the last checkpoint. The tab shows the run's progress and draws every
//! run's curves from its record: training loss and VAL loss against positions seen, and VAL top-1
//! beside them. Charles needs no brain: it trains and plays whichever brain is loaded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, LineStyle, Plot};

use crate::ui::train::RUN_COLOURS;
use flychess_lab::lab::jobs::train_charles::{CharlesConfig, CharlesCurve, Msg, Point, State, TrainOptions};
use flychess_lab::lab::jobs::{Scan, Talk};

/// A Charles run in progress (or just ended).
pub struct CharlesJob {
    pub name: String,
    pub stop: Arc<AtomicBool>,
    pub talk: Talk<Msg, String>,
    pub step: usize,
    pub steps: usize,
    pub last: Option<Point>,
}

impl CharlesJob {
    pub fn running(&self) -> bool {
        self.talk.running()
    }
}

/// What the Charles tab reads aside: every run's curve, and the record of an earlier run under
/// the name the form had when it was read (an error naming the file when it cannot be read).
pub struct CharlesScan {
    pub curves: Vec<CharlesCurve>,
    pub name: String,
    pub earlier: Result<Option<State>, String>,
}

pub struct CharlesRuns {
    pub name: String,
    pub seed_size: bool,
    pub positions: usize,
    pub epochs: usize,
    pub batch: usize,
    pub learning_rate: f64,
    pub val_every: usize,
    /// VAL positions measured at each checkpoint.
    pub val: usize,
    pub job: Option<CharlesJob>,
    /// Every run's curve and the record of an earlier run under the form's name, read aside
    /// (`Scan`) about once a second, and again when the name changes.
    pub read: Scan<CharlesScan>,
}

impl Default for CharlesRuns {
    fn default() -> Self {
        let d = TrainOptions::default();
        CharlesRuns {
            name: "mycharles".into(),
            seed_size: false,
            positions: d.positions,
            epochs: d.epochs,
            batch: d.batch,
            learning_rate: d.learning_rate,
            val_every: d.val_every,
            val: d.val,
            job: None,
            read: Scan::new("charles runs scan", CharlesScan { curves: Vec::new(), name: String::new(), earlier: Ok(None) }),
        }
    }
}

impl CharlesRuns {
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(CharlesJob::running)
    }

    /// The options the form describes.
    pub fn options(&self) -> TrainOptions {
        TrainOptions {
            config: if self.seed_size { CharlesConfig::seed() } else { CharlesConfig::small() },
            positions: self.positions,
            epochs: self.epochs.max(1),
            batch: self.batch.max(1),
            learning_rate: self.learning_rate,
            val_every: self.val_every.max(1),
            val: self.val.max(1),
            ..Default::default()
        }
    }

    /// Starts a run on its own thread (one at a time).
    pub fn start(&mut self, ctx: &egui::Context, data: PathBuf) {
        if self.running() {
            return;
        }
        let name = self.name.trim().to_string();
        let options = self.options();
        let stop = Arc::new(AtomicBool::new(false));
        let steps = options.steps();
        let talk = flychess_lab::lab::jobs::train_charles::start(crate::ui::wake(ctx), data, name, options, stop.clone());
        self.job = Some(CharlesJob { name: self.name.trim().to_string(), stop, talk, step: 0, steps, last: None });
        self.read.refresh();
    }

    /// Drains the run's messages; true when a run just finished (a new Charles can play).
    pub fn poll(&mut self) -> bool {
        let Some(job) = &mut self.job else { return false };
        let CharlesJob { talk, step, last, .. } = job;
        let mut moved = false;
        let ended = talk.poll(|m| match m {
            Msg::Point(p, s) => {
                (*step, *last, moved) = (s, Some(p), true);
            }
        });
        if ended || moved {
            self.read.refresh();
        }
        ended && talk.outcome().is_some_and(|r| r.is_ok())
    }

    /// Keeps every run's curve and the earlier record under the form's name fresh, read aside
    /// (about once a second, twice while one runs, and at once when the name changes).
    fn rescan(&mut self, ctx: &egui::Context, data: &Path) {
        let name = self.name.trim().to_string();
        if self.read.name != name {
            self.read.refresh();
        }
        let every = if self.running() { 0.5 } else { 2.0 };
        self.read.keep_fresh(&crate::ui::wake(ctx), ctx.input(|i| i.time), every, || {
            let data = data.to_path_buf();
            move || {
                let curves = flychess_lab::lab::jobs::train_charles::read_curves(&data);
                let earlier = flychess_lab::lab::jobs::train_charles::earlier_run(&data, &name);
                Ok(CharlesScan { curves, name, earlier })
            }
        });
    }

    pub fn show(&mut self, ui: &mut egui::Ui, data: &Path) {
        self.rescan(ui.ctx(), data);
        ui.label("Charles is not a fly: a transformer built for chess (a board encoder and a move decider that scores each legal move by how it changes the board), trained on the same positions and labels as the flies. It is the comparison the fly is measured against, and a player you can pick.");
        let running = self.running();
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("charles-form").num_columns(2).show(ui, |ui| {
                ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(160.0));
                ui.end_row();
                ui.label("Size");
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.seed_size, false, "small (215 k parameters)")
                        .on_hover_text("d 64, 2 + 2 layers, 4 heads: trains on a 2-core CPU in about an hour");
                    ui.selectable_value(&mut self.seed_size, true, "the seed's (32.5 M)")
                        .on_hover_text("d 384, 6 + 12 layers, 6 heads: needs a GPU");
                });
                ui.end_row();
                ui.label("Positions");
                ui.add(egui::DragValue::new(&mut self.positions).range(64..=75_000).speed(100.0))
                    .on_hover_text("TRAIN positions (the first of TRAIN)");
                ui.end_row();
                ui.label("Epochs");
                ui.add(egui::DragValue::new(&mut self.epochs).range(1..=50));
                ui.end_row();
                ui.label("Batch");
                ui.add(egui::DragValue::new(&mut self.batch).range(1..=512));
                ui.end_row();
                ui.label("Learning rate");
                ui.add(egui::DragValue::new(&mut self.learning_rate).range(1e-5..=1e-1).speed(1e-4));
                ui.end_row();
                ui.label("Checkpoint every");
                ui.add(egui::DragValue::new(&mut self.val_every).range(1..=10_000).suffix(" steps"))
                    .on_hover_text("VAL is measured and the run written at each checkpoint");
                ui.end_row();
                ui.label("VAL positions");
                ui.add(egui::DragValue::new(&mut self.val).range(1..=2_048))
                    .on_hover_text("Measured at each checkpoint (the first of VAL)");
                ui.end_row();
            });
            let name = self.name.trim().to_string();
            let valid = flychess_lab::lab::check_name(&name).is_ok();
            // The record read under this name (none yet while a read for a new name runs: Start
            // waits for it, so a damaged run is never started over on top of).
            let checked = self.read.name == name;
            let (earlier, damaged) = match checked.then(|| self.read.earlier.clone()) {
                Some(Ok(e)) => (e, None),
                Some(Err(e)) => (None, Some(e)),
                None => (None, None),
            };
            match &earlier {
                _ if damaged.is_some() => ui.colored_label(
                    Color32::LIGHT_RED,
                    format!("A run of this name is there but cannot be read ({}): choose another name.", damaged.as_deref().unwrap_or("")),
                ),
                Some(s) if s.options == self.options() && s.finished => {
                    ui.small("A finished run of this name and settings: Start shows it again.")
                }
                Some(s) if s.options == self.options() => ui.small(format!("Goes on from step {} of {}.", s.step, s.options.steps())),
                Some(_) => ui.colored_label(
                    Color32::LIGHT_RED,
                    "A run of this name has other settings: choose another name (or the same settings to go on).",
                ),
                None if !checked => ui.small("Looking for an earlier run of this name…"),
                None => ui.small(format!("{} steps of {} positions.", self.options().steps(), self.batch)),
            };
            let clash = !checked || damaged.is_some() || earlier.as_ref().is_some_and(|s| s.options != self.options());
            if ui.add_enabled(valid && !clash, egui::Button::new("Start training Charles")).clicked() {
                self.start(ui.ctx(), data.to_path_buf());
            }
        });
        if let Some(job) = &self.job {
            ui.separator();
            ui.label(RichText::new(format!("Charles run {}", job.name)).strong());
            match job.talk.outcome() {
                None => {
                    let fraction = if job.steps > 0 { job.step as f32 / job.steps as f32 } else { 0.0 };
                    let text = match &job.last {
                        Some(p) => {
                            format!("step {} of {}: VAL loss {:.3}, top-1 {:.1} %", job.step, job.steps, p.val_loss, 100.0 * p.val_top1)
                        }
                        None => format!("training towards the first checkpoint ({} steps in all)", job.steps),
                    };
                    ui.add(egui::ProgressBar::new(fraction).text(text).animate(true));
                    if ui.button("Stop").on_hover_text("Ends after the step in hand and writes a checkpoint").clicked() {
                        job.stop.store(true, Ordering::Relaxed);
                    }
                }
                Some(outcome) => crate::ui::train::show_outcome(ui, outcome),
            }
        }
        ui.separator();
        self.plot(ui);
    }

    fn plot(&self, ui: &mut egui::Ui) {
        if self.read.curves.is_empty() {
            ui.weak("No Charles runs yet.");
            return;
        }

        let height = ((ui.available_height() - 60.0) / 2.0).clamp(120.0, 280.0);
        ui.label(RichText::new("Loss against positions seen: solid VAL, dotted training (the mean since the checkpoint before)").strong());
        Plot::new("charles-loss").height(height).legend(Legend::default()).x_axis_label("positions").y_axis_label("cross-entropy").show(
            ui,
            |plot| {
                for (k, c) in self.read.curves.iter().enumerate() {
                    let colour = RUN_COLOURS[k % RUN_COLOURS.len()];
                    let val: Vec<[f64; 2]> = c.points.iter().map(|p| [p.positions as f64, p.val_loss]).collect();
                    let train: Vec<[f64; 2]> = c.points.iter().map(|p| [p.positions as f64, p.train_loss]).collect();
                    plot.line(Line::new(c.label(), val).color(colour));
                    plot.line(Line::new(c.label(), train).color(colour).style(LineStyle::dotted_dense()));
                }
            },
        );
        ui.label(RichText::new("VAL top-1 (Stockfish's best move ranked first)").strong());
        Plot::new("charles-top1").height(height).legend(Legend::default()).x_axis_label("positions").y_axis_label("%").show(ui, |plot| {
            for (k, c) in self.read.curves.iter().enumerate() {
                let colour = RUN_COLOURS[k % RUN_COLOURS.len()];
                let top: Vec<[f64; 2]> = c.points.iter().map(|p| [p.positions as f64, 100.0 * p.val_top1]).collect();
                plot.line(Line::new(c.label(), top).color(colour));
            }
        });
    }
}
