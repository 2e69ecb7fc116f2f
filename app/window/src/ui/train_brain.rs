//! The Train tab's brain runs: the brain itself learns as well as the readout (backprop through
//! time over the last steps, on the leash the form sets: window, calm homeostasis, Adam or SGD,
//! how far a synapse may move, the step sizes), the same run as `flychess train --brain`
//! (`sim::bptt::run`), on a thread of its own, followed by its readout-only control on the same
//! positions. The tab pauses, resumes and stops it (its checkpoint keeps it: start again with the
//! same name and settings to go on), and draws every brain run's VAL loss and top-1 beside its
//! control's, read from the runs' curve files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, LineStyle, Plot};

use flychess_lab::lab::jobs::train_brain::{BrainCurves, BrainOptimizer, Leash, Msg, Point};

use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::jobs::{Scan, Talk};

/// A brain run in progress (or just ended).
pub struct BrainJob {
    pub name: String,
    pub stop: Arc<AtomicBool>,
    pub pause: Arc<AtomicBool>,
    pub talk: Talk<Msg, String>,
    pub stage: String,
    pub done: usize,
    pub target: usize,
}

impl BrainJob {
    pub fn running(&self) -> bool {
        self.talk.running()
    }
}

pub struct BrainRuns {
    pub name: String,
    pub positions: usize,
    pub leash: Leash,
    pub job: Option<BrainJob>,
    /// Every brain run's curves, read aside (`Scan`).
    pub curves: Scan<Vec<BrainCurves>>,
}

impl Default for BrainRuns {
    fn default() -> Self {
        BrainRuns {
            name: "mybrainfly".into(),
            positions: 4_096,
            leash: Leash {
                window: 6,
                calm_unreached: true,
                brain_optimizer: BrainOptimizer::Sgd,
                max_change: Some(0.2),
                lr_synapses: 0.1,
                lr_neurons: 0.1,
                lr_readout: 3e-4,
            },
            job: None,
            curves: Scan::new("brain runs scan", Vec::new()),
        }
    }
}

impl BrainRuns {
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(BrainJob::running)
    }

    /// Starts a run on its own thread (one at a time).
    pub fn start(&mut self, ctx: &egui::Context, ready: Arc<ReadyBrain>, data: PathBuf) {
        if self.running() {
            return;
        }
        let name = self.name.trim().to_string();
        let (stop, pause) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let ask = flychess_lab::lab::jobs::train_brain::Ask {
            name: name.clone(),
            positions: self.positions,
            leash: self.leash.clone(),
            stop: stop.clone(),
            pause: pause.clone(),
        };
        let talk = flychess_lab::lab::jobs::train_brain::start(crate::ui::wake(ctx), ready, data, ask);
        self.job = Some(BrainJob { name, stop, pause, talk, stage: "starting".into(), done: 0, target: 2 * self.positions });
        self.curves.refresh();
    }

    /// Drains the run's messages.
    pub fn poll(&mut self) {
        let Some(job) = &mut self.job else { return };
        let BrainJob { talk, stage, done, target, .. } = job;
        if talk.poll(|m| match m {
            Msg::Stage(s) => *stage = s,
            Msg::Positions(d, t) => (*done, *target) = (d, t),
        }) {
            self.curves.refresh();
        }
    }

    /// Keeps every brain run's curves fresh, read aside (about once a second while one runs).
    fn rescan(&mut self, ctx: &egui::Context, data: &Path) {
        let every = if self.running() { 1.0 } else { 3.0 };
        self.curves.keep_fresh(&crate::ui::wake(ctx), ctx.input(|i| i.time), every, || {
            let data = data.to_path_buf();
            move || Ok(flychess_lab::lab::jobs::train_brain::read_curves(&data))
        });
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path) {
        self.poll();
        self.rescan(ui.ctx(), data);
        ui.label("The brain learns too: backprop through time over the last steps moves each connection's strength (its sign and wiring stay) and each neuron's gain and bias, on a leash, from the brain's own fly. Then the same positions train the readout alone, the control it is drawn beside.");
        let running = self.running();
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("brain-form").num_columns(2).show(ui, |ui| {
                let l = &mut self.leash;
                ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(160.0));
                ui.end_row();
                ui.label("Positions");
                ui.add(egui::DragValue::new(&mut self.positions).range(32..=10_000_000).speed(64.0))
                    .on_hover_text("TRAIN positions streamed, for the brain run and again for its control");
                ui.end_row();
                ui.label("Window");
                ui.add(egui::Slider::new(&mut l.window, 1..=12).text("steps back from 12"));
                ui.end_row();
                ui.label("Homeostasis");
                ui.checkbox(&mut l.calm_unreached, "calm unreached")
                    .on_hover_text("σ = 1 for a neuron whose input never moved at that step (gain 1 instead of 25)");
                ui.end_row();
                ui.label("Brain steps");
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut l.brain_optimizer, BrainOptimizer::Sgd, "SGD")
                        .on_hover_text("Momentum 0.9: each synapse moves by its own gradient");
                    ui.selectable_value(&mut l.brain_optimizer, BrainOptimizer::Adam, "Adam");
                });
                ui.end_row();
                ui.label("Leash");
                let mut leashed = l.max_change.is_some();
                ui.horizontal(|ui| {
                    ui.checkbox(&mut leashed, "each synapse within");
                    let mut share = l.max_change.unwrap_or(0.2) * 100.0;
                    ui.add_enabled(leashed, egui::DragValue::new(&mut share).range(1.0..=100.0).suffix(" %"));
                    ui.label("of its measured strength");
                    l.max_change = leashed.then_some(share / 100.0);
                });
                ui.end_row();
                ui.label("Step sizes");
                ui.horizontal(|ui| {
                    ui.label("synapses");
                    ui.add(egui::DragValue::new(&mut l.lr_synapses).range(0.0..=10.0).speed(1e-4));
                    ui.label("neurons");
                    ui.add(egui::DragValue::new(&mut l.lr_neurons).range(0.0..=10.0).speed(1e-4));
                    ui.label("readout");
                    ui.add(egui::DragValue::new(&mut l.lr_readout).range(0.0..=1.0).speed(1e-5));
                });
                ui.end_row();
            });
            let ok = !self.name.trim().is_empty() && self.leash.brain_learns();
            if !self.leash.brain_learns() {
                ui.colored_label(Color32::LIGHT_RED, "Both brain step sizes are 0: that is the readout-only run.");
            }
            if ui.add_enabled(ok, egui::Button::new("Train the brain")).clicked() {
                self.start(ui.ctx(), ready.clone(), data.to_path_buf());
            }
        });
        if let Some(job) = &self.job {
            ui.separator();
            ui.label(RichText::new(format!("Brain run {}", job.name)).strong());
            match job.talk.outcome() {
                None => {
                    let fraction = if job.target > 0 { job.done as f32 / job.target as f32 } else { 0.0 };
                    let paused = job.pause.load(Ordering::Relaxed);
                    ui.add(
                        egui::ProgressBar::new(fraction)
                            .text(if paused { format!("{} (paused)", job.stage) } else { job.stage.clone() })
                            .animate(!paused),
                    );
                    ui.horizontal(|ui| {
                        if ui.button(if paused { "Resume" } else { "Pause" }).clicked() {
                            job.pause.store(!paused, Ordering::Relaxed);
                        }
                        if ui.button("Stop").clicked() {
                            job.stop.store(true, Ordering::Relaxed);
                            job.pause.store(false, Ordering::Relaxed);
                        }
                    });
                }
                Some(outcome) => crate::ui::train::show_outcome(ui, outcome),
            }
        }
        ui.separator();
        self.plot(ui);
    }

    fn plot(&self, ui: &mut egui::Ui) {
        if self.curves.is_empty() {
            ui.weak("No brain runs yet.");
            return;
        }
        let height = ((ui.available_height() - 60.0) / 2.0).clamp(130.0, 260.0);
        for (title, id, value) in [
            (
                "VAL loss (lower is better); dashed: the readout-only control on the same positions",
                "brain-val-loss",
                (|p: &Point| p.val.loss) as fn(&Point) -> f64,
            ),
            ("VAL top-1 (%)", "brain-val-top1", |p: &Point| 100.0 * p.val.top1),
        ] {
            ui.label(RichText::new(title).strong());
            Plot::new(id).height(height).legend(Legend::default()).x_axis_label("positions").show(ui, |plot| {
                for (k, c) in self.curves.iter().enumerate() {
                    let colour = crate::ui::train::RUN_COLOURS[k % crate::ui::train::RUN_COLOURS.len()];
                    plot.line(
                        Line::new(
                            format!("{} (brain)", c.name),
                            c.brain.iter().map(|p| [p.positions as f64, value(p)]).collect::<Vec<_>>(),
                        )
                        .color(colour),
                    );
                    if !c.readout_only.is_empty() {
                        plot.line(
                            Line::new(
                                format!("{} (readout only)", c.name),
                                c.readout_only.iter().map(|p| [p.positions as f64, value(p)]).collect::<Vec<_>>(),
                            )
                            .color(colour)
                            .style(LineStyle::dashed_loose()),
                        );
                    }
                }
            });
        }
    }
}
