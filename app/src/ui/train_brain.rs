//! The Train tab's brain runs: the brain itself learns as well as the readout (backprop through
//! time over the last steps, on the leash the form sets: window, calm homeostasis, Adam or SGD,
//! how far a synapse may move, the step sizes), the same run as `flychess train --brain`
//! (`sim::bptt::run`), on a thread of its own, followed by its readout-only control on the same
//! positions. The tab pauses, resumes and stops it (its checkpoint keeps it: start again with the
//! same name and settings to go on), and draws every brain run's VAL loss and top-1 beside its
//! control's, read from the runs' curve files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, LineStyle, Plot};

use flychess_sim::bptt::run::{self, BrainOptimizer, Leash, Point, RunOptions, Setup};
use flychess_sim::bptt::Base;

use crate::lab::ReadyBrain;

enum Msg {
    Stage(String),
    Positions(usize, usize),
    Finished(Result<String, String>),
}

/// A brain run in progress (or just ended).
pub struct BrainJob {
    pub name: String,
    pub stop: Arc<AtomicBool>,
    pub pause: Arc<AtomicBool>,
    rx: Receiver<Msg>,
    pub stage: String,
    pub done: usize,
    pub target: usize,
    pub outcome: Option<Result<String, String>>,
}

impl BrainJob {
    pub fn running(&self) -> bool {
        self.outcome.is_none()
    }
}

/// One run's curves: the brain's and its control's.
pub struct BrainCurves {
    pub name: String,
    pub brain: Vec<Point>,
    pub readout_only: Vec<Point>,
}

pub struct BrainRuns {
    pub name: String,
    pub positions: usize,
    pub leash: Leash,
    pub job: Option<BrainJob>,
    pub curves: Vec<BrainCurves>,
    last_scan: f64,
}

impl Default for BrainRuns {
    fn default() -> Self {
        BrainRuns {
            name: "mybrainfly".into(),
            positions: 4_096,
            leash: Leash { window: 6, calm_unreached: true, brain_optimizer: BrainOptimizer::Sgd, max_change: Some(0.2), lr_synapses: 0.1, lr_neurons: 0.1, lr_readout: 3e-4 },
            job: None,
            curves: Vec::new(),
            last_scan: f64::NEG_INFINITY,
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
        let (tx, rx) = channel();
        let (stop, pause) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (waker, halt, hold) = (ctx.clone(), stop.clone(), pause.clone());
        let (positions, leash) = (self.positions, self.leash.clone());
        let job_name = name.clone();
        std::thread::Builder::new()
            .name("brain training".into())
            .spawn(move || {
                let send = |m: Msg| {
                    let _ = tx.send(m);
                    waker.request_repaint();
                };
                let result = train(&ready, &data, &job_name, positions, &leash, &halt, &hold, &send);
                send(Msg::Finished(result.map_err(|e| format!("{e:#}"))));
            })
            .expect("a thread can be started");
        self.job = Some(BrainJob { name, stop, pause, rx, stage: "starting".into(), done: 0, target: 2 * self.positions, outcome: None });
        self.last_scan = f64::NEG_INFINITY;
    }

    /// Drains the run's messages.
    pub fn poll(&mut self) {
        let Some(job) = &mut self.job else { return };
        loop {
            match job.rx.try_recv() {
                Ok(Msg::Stage(s)) => job.stage = s,
                Ok(Msg::Positions(done, target)) => (job.done, job.target) = (done, target),
                Ok(Msg::Finished(r)) => {
                    job.outcome = Some(r);
                    self.last_scan = f64::NEG_INFINITY;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    if job.outcome.is_none() {
                        job.outcome = Some(Err("the training thread stopped unexpectedly; its checkpoint keeps it: start again with the same name to go on".into()));
                    }
                    break;
                }
            }
        }
    }

    /// Re-reads every brain run's curves (about once a second while one runs).
    fn rescan(&mut self, now: f64, data: &Path) {
        if now - self.last_scan < if self.running() { 1.0 } else { 3.0 } {
            return;
        }
        self.last_scan = now;
        let mut curves = Vec::new();
        if let Ok(entries) = std::fs::read_dir(data.join("runs")) {
            let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.join("brain.jsonl").exists()).collect();
            dirs.sort();
            for d in dirs {
                let name = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                curves.push(BrainCurves { name, brain: run::read_curve(&d.join("brain")), readout_only: run::read_curve(&d.join("readout-only")) });
            }
        }
        self.curves = curves;
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path) {
        self.poll();
        self.rescan(ui.input(|i| i.time), data);
        ui.label("The brain learns too: backprop through time over the last steps moves each connection's strength (its sign and wiring stay) and each neuron's gain and bias, on a leash, from the brain's own fly. Then the same positions train the readout alone, the control it is drawn beside.");
        let running = self.running();
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("brain-form").num_columns(2).show(ui, |ui| {
                let l = &mut self.leash;
                ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(160.0));
                ui.end_row();
                ui.label("Positions");
                ui.add(egui::DragValue::new(&mut self.positions).range(32..=10_000_000).speed(64.0)).on_hover_text("TRAIN positions streamed, for the brain run and again for its control");
                ui.end_row();
                ui.label("Window");
                ui.add(egui::Slider::new(&mut l.window, 1..=12).text("steps back from 12"));
                ui.end_row();
                ui.label("Homeostasis");
                ui.checkbox(&mut l.calm_unreached, "calm unreached").on_hover_text("σ = 1 for a neuron whose input never moved at that step (gain 1 instead of 25)");
                ui.end_row();
                ui.label("Brain steps");
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut l.brain_optimizer, BrainOptimizer::Sgd, "SGD").on_hover_text("Momentum 0.9: each synapse moves by its own gradient");
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
            match &job.outcome {
                None => {
                    let fraction = if job.target > 0 { job.done as f32 / job.target as f32 } else { 0.0 };
                    let paused = job.pause.load(Ordering::Relaxed);
                    ui.add(egui::ProgressBar::new(fraction).text(if paused { format!("{} (paused)", job.stage) } else { job.stage.clone() }).animate(!paused));
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
        for (title, id, value) in [("VAL loss (lower is better); dashed: the readout-only control on the same positions", "brain-val-loss", (|p: &Point| p.val.loss) as fn(&Point) -> f64), ("VAL top-1 (%)", "brain-val-top1", |p: &Point| 100.0 * p.val.top1)] {
            ui.label(RichText::new(title).strong());
            Plot::new(id).height(height).legend(Legend::default()).x_axis_label("positions").show(ui, |plot| {
                for (k, c) in self.curves.iter().enumerate() {
                    let colour = crate::ui::train::RUN_COLOURS[k % crate::ui::train::RUN_COLOURS.len()];
                    plot.line(Line::new(format!("{} (brain)", c.name), c.brain.iter().map(|p| [p.positions as f64, value(p)]).collect::<Vec<_>>()).color(colour));
                    if !c.readout_only.is_empty() {
                        plot.line(Line::new(format!("{} (readout only)", c.name), c.readout_only.iter().map(|p| [p.positions as f64, value(p)]).collect::<Vec<_>>()).color(colour).style(LineStyle::dashed_loose()));
                    }
                }
            });
        }
    }
}

/// The run's body: the brain (with the homeostasis the leash asks for) copied for this run, its
/// own fly as the start, the brain run and then its control.
#[allow(clippy::too_many_arguments)]
fn train(ready: &ReadyBrain, data: &Path, name: &str, positions: usize, leash: &Leash, stop: &AtomicBool, pause: &AtomicBool, send: &(dyn Fn(Msg) + Sync)) -> anyhow::Result<String> {
    flychess_sim::fly::check_name(name)?;
    let (start_name, path) = flychess_sim::fly::trained_for(&ready.checksum, data).ok_or_else(|| anyhow::anyhow!("this brain has no readout-only fly to start from: train one first (Readout)"))?;
    let start = flychess_sim::fly::Fly::load(&path)?;
    send(Msg::Stage("the brain and its homeostasis".into()));
    let mut brain = (*ready.brain).clone();
    if leash.calm_unreached {
        let options = flychess_sim::calibrate::CalibrationOptions { calm_unreached: true };
        let h = flychess_sim::calibrate::ensure(&brain, &ready.spec.brain_path(data), &ready.checksum, options, &|t| send(Msg::Stage(format!("measuring the calm homeostasis, step {t} of 12"))))?;
        brain.set_homeostasis(h);
    }
    let homeostasis = flychess_sim::calibrate::fingerprint(brain.homeostasis());
    send(Msg::Stage("the backward pass's tables".into()));
    let base = Base::of(&brain);
    let dataset = flychess_sim::data::Dataset::load(&flychess_sim::data::shipped_path())?;
    let (val, train) = (dataset.val(), dataset.train());
    let dir = data.join("runs").join(name);
    let descending = &ready.connectome.groups.descending;
    let options = RunOptions { leash: leash.clone(), positions, batch: 32, val_every: (positions / 8).max(32), val: 256, seed: 1 };
    let mut summary = Vec::new();
    for (k, (label, stem, o)) in [("brain", "brain", options.clone()), ("readout only", "readout-only", RunOptions { leash: leash.readout_only(), ..options.clone() })].into_iter().enumerate() {
        let setup = Setup { base: &base, brain: &mut brain, brain_checksum: &ready.checksum, homeostasis: &homeostasis, descending, start: (&start_name, &start.readout), train, val, gpu: None };
        let outcome = run::run(setup, &o, &dir.join(stem), stop, &|done, total, _| {
            send(Msg::Positions(k * total + done, 2 * total));
            send(Msg::Stage(format!("{label}: {done} of {total} positions")));
            while pause.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })?;
        if !outcome.finished {
            return Ok(format!("Stopped at {label}; its checkpoint keeps it: start again with the same name and settings to go on."));
        }
        if let Some(p) = outcome.curve.last() {
            summary.push(format!("{label}: VAL loss {:.4}, top-1 {:.1} %", p.val.loss, 100.0 * p.val.top1));
        }
    }
    Ok(format!("{name} after {positions} positions. {}.", summary.join("; ")))
}
