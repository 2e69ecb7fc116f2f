//! The Train tab's dopamine runs: a dopamine fly learns by the three-factor rule (tutor lessons,
//! `sim::bio::run`, the same run as `flychess bio train`) on its own thread; the tab shows its
//! progress, stops it (the fly's file is its checkpoint: start again with the same name to go on),
//! and draws every dopamine fly's curve of pairs right on VAL pairs against lessons, with the
//! ceiling a logistic regression on the same Kenyon cells reaches (`flychess bio eval` measures
//! it once per brain) as a dashed line.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Legend, Line, LineStyle, Plot};

use flychess_lab::lab::jobs::train_dopamine::{Constants, CurvePoint, DopamineCurve, DopamineScan, Msg};
use flychess_lab::lab::jobs::{Scan, Talk};

use crate::ui::train::RUN_COLOURS;
use flychess_lab::lab::ReadyBrain;

/// A dopamine run in progress (or just ended).
pub struct DopamineJob {
    pub name: String,
    pub stop: Arc<AtomicBool>,
    pub talk: Talk<Msg, String>,
    pub stage: String,
    pub done: usize,
    pub target: usize,
    pub points: Vec<CurvePoint>,
}

impl DopamineJob {
    pub fn running(&self) -> bool {
        self.talk.running()
    }
}

pub struct DopamineRuns {
    pub name: String,
    pub lessons: usize,
    pub pass_share: f32,
    pub job: Option<DopamineJob>,
    /// The dopamine flies' curves, the logistic ceiling on the Kenyon cells (value, low, high,
    /// and on how many pairs) and whether the form's name is a readout fly's, read aside (`Scan`).
    pub read: Scan<DopamineScan>,
}

impl Default for DopamineRuns {
    fn default() -> Self {
        DopamineRuns {
            name: "mydopaminefly".into(),
            lessons: 8_192,
            pass_share: Constants::default().pass_share,
            job: None,
            read: Scan::new("dopamine runs scan", DopamineScan::default()),
        }
    }
}

impl DopamineRuns {
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(DopamineJob::running)
    }

    /// Starts a run on its own thread (one at a time).
    pub fn start(&mut self, ctx: &egui::Context, ready: Arc<ReadyBrain>, data: PathBuf) {
        if self.running() {
            return;
        }
        let name = self.name.trim().to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let constants = Constants { pass_share: self.pass_share, ..Constants::default() };
        let talk = flychess_lab::lab::jobs::train_dopamine::start(
            crate::ui::wake(ctx),
            ready,
            data,
            flychess_lab::lab::jobs::train_dopamine::Ask { name, lessons: self.lessons, constants, stop: stop.clone() },
        );
        self.job = Some(DopamineJob {
            name: self.name.trim().to_string(),
            stop,
            talk,
            stage: "starting".into(),
            done: 0,
            target: self.lessons,
            points: Vec::new(),
        });
        self.read.refresh();
    }

    /// Drains the run's messages; true when a run just ended with a fly saved.
    pub fn poll(&mut self) -> bool {
        let Some(job) = &mut self.job else { return false };
        let DopamineJob { talk, stage, done, target, points, .. } = job;
        let ended = talk.poll(|m| match m {
            Msg::Stage(s) => *stage = s,
            Msg::Lessons(d, t) => {
                (*done, *target) = (d, t);
                *stage = format!("{d} of {t} lessons");
            }
            Msg::Point(p) => points.push(p),
        });
        if ended {
            self.read.refresh();
        }
        ended && talk.outcome().is_some_and(|r| r.is_ok())
    }

    /// The dopamine flies' curves, as last read.
    pub fn curves(&self) -> &[DopamineCurve] {
        &self.read.curves
    }

    /// Keeps the dopamine flies' curves and the ceiling fresh, read aside (about once a second).
    fn rescan(&mut self, ctx: &egui::Context, ready: &Arc<ReadyBrain>, data: &Path) {
        let every = if self.running() { 0.5 } else { 2.0 };
        let constants = Constants { pass_share: self.pass_share, ..Constants::default() };
        self.read.keep_fresh(&crate::ui::wake(ctx), ctx.input(|i| i.time), every, || {
            let (ready, data) = (ready.clone(), data.to_path_buf());
            let name = self.name.trim().to_string();
            move || Ok(flychess_lab::lab::jobs::train_dopamine::scan(&ready, &data, &constants, &name))
        });
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path) {
        self.rescan(ui.ctx(), ready, data);
        ui.label("The dopamine fly learns the way a real fly does: only the synapses from the Kenyon cells onto the MBONs change, when a Kenyon cell was active, dopamine arrived (sugar after Stockfish's move, a shock after another move) and that dopamine neuron reaches the synapse's compartment. No backprop.");
        let running = self.running();
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("dopamine-form").num_columns(2).show(ui, |ui| {
                ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(160.0));
                ui.end_row();
                ui.label("Lessons");
                ui.add(egui::DragValue::new(&mut self.lessons).range(64..=1_000_000).speed(64.0))
                    .on_hover_text("In all, counting those a fly of this name already had: the run goes on from its file");
                ui.end_row();
                ui.label("Kenyon cells that pass");
                let mut percent = self.pass_share * 100.0;
                ui.add(egui::DragValue::new(&mut percent).range(1.0..=20.0).speed(0.1).suffix(" %"))
                    .on_hover_text("The APL neuron keeps about 5 % of Kenyon cells active in a real fly");
                self.pass_share = percent / 100.0;
                ui.end_row();
            });
            // Looked up aside with the scan: until the name as typed has been looked up, no start.
            let looked_up = self.read.name_taken.as_ref().filter(|(n, _)| n == self.name.trim()).map(|(_, taken)| *taken);
            if looked_up.is_none() {
                self.read.refresh();
                ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
            }
            if looked_up == Some(true) {
                ui.colored_label(Color32::LIGHT_RED, "A readout fly has this name: choose another.");
            }
            if ui.add_enabled(looked_up == Some(false) && !self.name.trim().is_empty(), egui::Button::new("Start lessons")).clicked() {
                self.start(ui.ctx(), ready.clone(), data.to_path_buf());
            }
        });
        if let Some(job) = &self.job {
            ui.separator();
            ui.label(RichText::new(format!("Dopamine run {}", job.name)).strong());
            match job.talk.outcome() {
                None => {
                    let fraction = if job.target > 0 { job.done as f32 / job.target as f32 } else { 0.0 };
                    ui.add(egui::ProgressBar::new(fraction).text(&job.stage).animate(true));
                    if let Some(p) = job.points.last() {
                        ui.small(format!(
                            "VAL pairs right {:.1} % [{:.1}, {:.1}] after {} lessons",
                            100.0 * p.pairs_right,
                            100.0 * p.low,
                            100.0 * p.high,
                            p.lessons
                        ));
                    }
                    if ui.button("Stop").clicked() {
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
        ui.label(RichText::new("Pairs right on VAL pairs (Stockfish's move against another), dotted: 95 % interval").strong());
        match self.read.ceiling {
            Some((v, lo, hi, n)) => ui.small(format!("Dashed: the ceiling, a logistic regression on every Kenyon cell: {:.1} % [{:.1}, {:.1}] of {n} HOLD pairs.", 100.0 * v, 100.0 * lo, 100.0 * hi)),
            None => ui.small("The ceiling (a logistic regression on the Kenyon cells) is not measured for this brain yet: `flychess bio eval` measures it once."),
        };
        if self.curves().is_empty() {
            ui.weak("No dopamine flies of this brain yet.");
        }
        Plot::new("dopamine-curve")
            .height((ui.available_height() - 20.0).clamp(160.0, 380.0))
            .legend(Legend::default())
            .x_axis_label("lessons")
            .y_axis_label("%")
            .show(ui, |plot| {
                for (k, c) in self.curves().iter().enumerate() {
                    let colour = RUN_COLOURS[k % RUN_COLOURS.len()];
                    let points: Vec<[f64; 2]> = c.points.iter().map(|p| [p.lessons as f64, 100.0 * p.pairs_right]).collect();
                    plot.line(Line::new(c.name.clone(), points).color(colour));
                    // Its 95 % interval at every point, dotted, under the same name in the legend.
                    for bound in [|p: &CurvePoint| p.low, |p: &CurvePoint| p.high] {
                        let edge: Vec<[f64; 2]> = c.points.iter().map(|p| [p.lessons as f64, 100.0 * bound(p)]).collect();
                        plot.line(Line::new(c.name.clone(), edge).color(colour).style(LineStyle::dotted_dense()).width(0.5));
                    }
                }
                plot.hline(HLine::new("coin flip", 50.0).color(Color32::GRAY).style(LineStyle::dotted_loose()));
                if let Some((v, ..)) = self.read.ceiling {
                    plot.hline(
                        HLine::new("ceiling (logistic on Kenyon cells)", 100.0 * v)
                            .color(Color32::from_rgb(120, 200, 120))
                            .style(LineStyle::dashed_loose()),
                    );
                }
            });
    }
}
