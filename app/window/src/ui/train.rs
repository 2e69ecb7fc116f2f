//! The Train tab: start a training run (the fast way) on the loaded brain or a lab control brain,
//! watch it live — one curve per metric per run (VAL loss, top-1, good-move rate, step size) with
//! egui_plot, several runs overlaid, the blind baseline as a dashed line — pause, resume or stop
//! it, with progress and an honest time estimate. The run lives on its own thread (switching tabs
//! does not touch it; a killed run resumes from its checkpoint). Runs started from the command
//! line appear the same way: the tab draws every DATA/runs/*/metrics.jsonl. Finished runs are
//! flies (DATA/flies/NAME.fly) and show up in the Flies tab and the new-game picker.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Legend, Line, LineStyle, Plot};

use flychess_lab::lab::jobs::Scan;
pub use flychess_lab::lab::jobs::train::{BrainChoice, lab_controls};
use flychess_lab::lab::jobs::train::{FitOn, FitOptions, HOLD, LearningCurve, Metrics, PassRecord, Reading, Run, VAL, read_learning_curve};

use flychess_lab::lab::ReadyBrain;
use flychess_lab::training::{self, Controls, RunCurves, TrainEvent, TrainJob, human};

pub struct RunningJob {
    pub name: String,
    pub controls: Arc<Controls>,
    pub talk: Run,
    pub stage: String,
    pub fraction: f64,
    pub passes: Vec<PassRecord>,
    pub max_passes: usize,
}

impl RunningJob {
    pub fn running(&self) -> bool {
        self.talk.running()
    }
}

pub struct TrainTab {
    pub name: String,
    pub positions: usize,
    pub reading: Reading,
    pub max_passes: usize,
    /// Where the fit runs (burn on the CPU or a GPU).
    pub fit_on: FitOn,
    /// Share of TRAIN made of finishing lessons (0: none).
    pub lessons: f64,
    pub brain: BrainChoice,
    pub job: Option<RunningJob>,
    /// Every run's curves (DATA/runs), read aside (`Scan`).
    pub runs: Scan<Vec<RunCurves>>,
    pub hidden: HashSet<String>,
    /// Which kind of run the form starts: a readout fitted by backprop, or a dopamine fly.
    pub kind: RunKind,
    pub dopamine: crate::ui::train_dopamine::DopamineRuns,
    /// Brain runs (the brain learns too, `ui::train_brain`).
    pub brain_runs: crate::ui::train_brain::BrainRuns,
    /// Charles runs (a transformer that never was a fly, `ui::train_charles`).
    pub charles: crate::ui::train_charles::CharlesRuns,
    /// Watching it learn: the runs' snapshots answering one position.
    pub learn: crate::ui::learn::LearnPanel,
    /// The learning curve `flychess curve` keeps (DATA/learning-curve.json), read aside with the runs.
    pub learning_curve: Scan<Option<LearningCurve>>,
}

/// The colours the Train tab's plots give their runs, in turn.
pub const RUN_COLOURS: [Color32; 6] = [
    Color32::from_rgb(230, 110, 90),
    Color32::from_rgb(90, 170, 230),
    Color32::from_rgb(120, 200, 120),
    Color32::from_rgb(220, 180, 80),
    Color32::from_rgb(190, 120, 220),
    Color32::from_rgb(200, 200, 200),
];

/// How a finished run ended, in green, or in red with why it failed.
pub fn show_outcome(ui: &mut egui::Ui, outcome: &Result<String, String>) {
    match outcome {
        Ok(text) => ui.colored_label(Color32::from_rgb(90, 200, 120), text),
        Err(e) => ui.colored_label(Color32::LIGHT_RED, format!("The run failed: {e}")),
    };
}

/// The ways a fly learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    Readout,
    Dopamine,
    /// The brain learns too (backprop through time on a leash).
    Brain,
    /// Not a fly: Charles, the transformer the flies are compared with.
    Charles,
}

impl Default for TrainTab {
    fn default() -> Self {
        TrainTab {
            name: "myfly".into(),
            positions: 20_000,
            reading: Reading::Mean9To12,
            max_passes: 60,
            fit_on: FitOn::Auto,
            lessons: 0.0,
            brain: BrainChoice::Loaded,
            job: None,
            runs: Scan::new("runs scan", Vec::new()),
            hidden: HashSet::new(),
            kind: RunKind::Readout,
            dopamine: Default::default(),
            brain_runs: Default::default(),
            charles: Default::default(),
            learn: Default::default(),
            learning_curve: Scan::new("learning curve scan", None),
        }
    }
}

impl TrainTab {
    /// Starts a run on its own thread (one at a time). `kind` labels the fly (e.g. a control).
    pub fn start(&mut self, ctx: &egui::Context, ready: Arc<ReadyBrain>, data: PathBuf, kind: Option<String>) {
        if self.job.as_ref().is_some_and(RunningJob::running) {
            return;
        }
        let job = TrainJob {
            name: self.name.trim().to_string(),
            positions: self.positions,
            reading: self.reading,
            options: FitOptions { max_passes: self.max_passes, on: self.fit_on, ..FitOptions::default() },
            lessons: self.lessons,
            games: None,
            curriculum: None,
            from: None,
        };
        let controls = Arc::new(Controls::default());
        let talk =
            flychess_lab::lab::jobs::train::start(crate::ui::wake(ctx), ready, data, self.brain.clone(), job, controls.clone(), kind);
        self.job = Some(RunningJob {
            name: self.name.trim().to_string(),
            controls,
            talk,
            stage: "starting".into(),
            fraction: 0.0,
            passes: Vec::new(),
            max_passes: self.max_passes,
        });
        self.runs.refresh();
    }

    /// Drains the job's messages; true when a run just finished (the fly list changed).
    pub fn poll(&mut self) -> bool {
        let mut finished = self.dopamine.poll();
        finished |= self.charles.poll();
        if let Some(job) = &mut self.job {
            let RunningJob { talk, stage, fraction, passes, .. } = job;
            let ended = talk.poll(|e| match e {
                TrainEvent::Stage { text, fraction: f } => (*stage, *fraction) = (text, f),
                TrainEvent::Resumed { passes, why } => *stage = format!("resumed after pass {passes}, on {why}"),
                TrainEvent::Pass(p) => {
                    *stage = format!("pass {}", p.pass);
                    passes.push(p);
                }
                TrainEvent::Done { hold, .. } => {
                    *stage = format!("done: HOLD top-1 {:.1}%, good {:.1}%", 100.0 * hold.top1, 100.0 * hold.good);
                }
                TrainEvent::Stopped => *stage = "stopped (start it again with the same name to resume)".into(),
            });
            if ended {
                finished |= talk.outcome().is_some_and(|r| r.as_ref().is_ok_and(|f| f.is_some()));
                self.runs.refresh();
            }
        }
        finished
    }

    /// Keeps DATA/runs and the learning curve fresh, read aside (about once a second while the
    /// tab is shown, twice while a run runs).
    pub fn rescan(&mut self, ctx: &egui::Context, data: &Path) {
        let running = self.job.as_ref().is_some_and(RunningJob::running);
        let (wake, now, every) = (crate::ui::wake(ctx), ctx.input(|i| i.time), if running { 0.5 } else { 1.0 });
        self.runs.keep_fresh(&wake, now, every, || {
            let data = data.to_path_buf();
            move || Ok(training::read_runs(&data))
        });
        self.learning_curve.keep_fresh(&wake, now, every, || {
            let data = data.to_path_buf();
            move || Ok(read_learning_curve(&data))
        });
    }

    pub fn show(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path, board_fen: &str) {
        self.rescan(ui.ctx(), data);
        ui.ctx().request_repaint_after(std::time::Duration::from_secs(1));
        ui.heading("Train a fly");
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.kind, RunKind::Readout, "Readout (backprop)")
                .on_hover_text("Fit the readout of the descending neurons by gradient descent: the strong way");
            ui.selectable_value(&mut self.kind, RunKind::Dopamine, "Dopamine (three-factor rule)")
                .on_hover_text("Only the mushroom body learns, the way a real fly does: no backprop");
            ui.selectable_value(&mut self.kind, RunKind::Brain, "Train the brain (backprop through time)")
                .on_hover_text("The brain's connections and neurons learn too, on a leash, beside a readout-only control");
            ui.selectable_value(&mut self.kind, RunKind::Charles, "Charles (not a fly)")
                .on_hover_text("A transformer built for chess, trained on the same positions: what the fly is compared with");
        });
        if self.kind == RunKind::Charles {
            self.charles.show(ui, data);
            return;
        }
        if self.kind == RunKind::Dopamine {
            self.dopamine.show(ui, ready, data);
            return;
        }
        if self.kind == RunKind::Brain {
            self.brain_runs.show(ui, ready, data);
            return;
        }
        let running = self.job.as_ref().is_some_and(RunningJob::running);
        ui.add_enabled_ui(!running, |ui| {
            egui::Grid::new("train-form").num_columns(2).show(ui, |ui| {
                ui.label("Name");
                ui.add(egui::TextEdit::singleline(&mut self.name).desired_width(160.0));
                ui.end_row();
                ui.label("Brain");
                egui::ComboBox::from_id_salt("train-brain").selected_text(self.brain.label()).show_ui(ui, |ui| {
                    for c in lab_controls().into_iter().map(|(_, c)| c) {
                        let label = c.label();
                        ui.selectable_value(&mut self.brain, c, label);
                    }
                });
                ui.end_row();
                ui.label("Positions");
                ui.add(egui::DragValue::new(&mut self.positions).range(HOLD + VAL + 64..=81_473).speed(100.0))
                    .on_hover_text(format!("HOLD ({HOLD}) and VAL ({VAL}) come first; the rest trains"));
                ui.end_row();
                ui.label("Read");
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.reading, Reading::Mean9To12, "mean of steps 9-12");
                    ui.selectable_value(&mut self.reading, Reading::Step12, "step 12");
                });
                ui.end_row();
                ui.label("At most");
                ui.add(egui::DragValue::new(&mut self.max_passes).range(1..=60).suffix(" passes"));
                ui.end_row();
                ui.label("Fit on");
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut self.fit_on, FitOn::Auto, "auto").on_hover_text("A GPU when there is one, else the CPU");
                    ui.selectable_value(&mut self.fit_on, FitOn::Cpu, "CPU");
                    ui.selectable_value(&mut self.fit_on, FitOn::Gpu, "GPU")
                        .on_hover_text("The best adapter there is, even a software one");
                });
                ui.end_row();
                ui.label("Finishing lessons");
                let mut percent = self.lessons * 100.0;
                ui.add(egui::DragValue::new(&mut percent).range(0.0..=50.0).suffix(" % of TRAIN"))
                    .on_hover_text("Won positions relabelled by mate distance (`flychess lessons`), mixed into training");
                self.lessons = percent / 100.0;
                ui.end_row();
            });
            if ui.button("Start training").clicked() {
                let kind = match &self.brain {
                    BrainChoice::Loaded => None,
                    other => Some(format!("control: {}", other.label())),
                };
                self.start(ui.ctx(), ready.clone(), data.to_path_buf(), kind);
            }
        });
        self.job_panel(ui);
        ui.separator();
        let names: Vec<String> = self.runs.iter().map(|r| r.name.clone()).collect();
        self.learn.show(ui, ready, data, &names, board_fen);
        ui.separator();
        self.learning_curve(ui);
        self.curves(ui);
    }

    /// The learning curve of the fit at scale (`flychess curve`): HOLD loss with the seed's slope
    /// beside it, and top-1 on HOLD and on the human test, each point with its 95 % interval.
    fn learning_curve(&self, ui: &mut egui::Ui) {
        let Some(curve) = &*self.learning_curve else { return };
        egui::CollapsingHeader::new(RichText::new("Learning curve: more positions (flychess curve)").strong())
            .id_salt("learning-curve")
            .default_open(true)
            .show(ui, |ui| {
                let slope = curve
                    .loss
                    .map(|s| {
                        format!(
                            "HOLD loss per doubling {:+.4} [{:+.4}, {:+.4}]; the seed's {:+.3}",
                            s.per_doubling, s.interval[0], s.interval[1], curve.seed_loss_per_doubling
                        )
                    })
                    .unwrap_or_else(|| "one point so far: no slope yet".into());
                ui.label(format!(
                    "{} on {}, {:.0} % Stockfish rows a batch. {slope}.",
                    curve.brain,
                    curve.games,
                    100.0 * curve.stockfish_share
                ));
                if !curve.not_cached.is_empty() {
                    ui.weak(format!("Not fitted yet (games rows not cached): {:?}", curve.not_cached));
                }
                let x = |p: usize| (p.max(1) as f64).log2();
                let first = curve.points.first().map(|p| (x(p.positions), p.loss));
                let width = (ui.available_width() / 2.0 - 12.0).max(200.0);
                // A series and its 95 % intervals as vertical bars, in one colour under one name.
                let bars = |plot: &mut egui_plot::PlotUi, name: &str, colour: Color32, points: Vec<(f64, f64, f64, f64)>| {
                    plot.line(Line::new(name.to_string(), points.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>()).color(colour));
                    for (k, p) in points.iter().enumerate() {
                        plot.line(Line::new(name.to_string(), vec![[p.0, p.2], [p.0, p.3]]).color(colour).id((name, "interval", k)));
                    }
                };
                let axis = |mark: egui_plot::GridMark, _: &std::ops::RangeInclusive<f64>| {
                    let p = 2f64.powf(mark.value);
                    if p >= 1e6 { format!("{:.1}M", p / 1e6) } else { format!("{:.0}k", p / 1e3) }
                };
                ui.horizontal(|ui| {
                    Plot::new("curve-loss")
                        .width(width)
                        .height(220.0)
                        .legend(Legend::default())
                        .x_axis_label("positions trained on")
                        .x_axis_formatter(axis)
                        .y_axis_label("HOLD loss")
                        .show(ui, |plot| {
                            bars(
                                plot,
                                "HOLD loss",
                                RUN_COLOURS[1],
                                curve.points.iter().map(|p| (x(p.positions), p.loss, p.loss_interval[0], p.loss_interval[1])).collect(),
                            );
                            if let Some((x0, l0)) = first {
                                let seed: Vec<[f64; 2]> = curve
                                    .points
                                    .iter()
                                    .map(|p| [x(p.positions), l0 + curve.seed_loss_per_doubling * (x(p.positions) - x0)])
                                    .collect();
                                plot.line(Line::new("the seed's slope", seed).style(LineStyle::dashed_loose()));
                            }
                        });
                    Plot::new("curve-top1")
                        .width(width)
                        .height(220.0)
                        .legend(Legend::default())
                        .x_axis_label("positions trained on")
                        .x_axis_formatter(axis)
                        .y_axis_label("top-1 (%)")
                        .show(ui, |plot| {
                            let pct = |v: f64| 100.0 * v;
                            bars(
                                plot,
                                "HOLD top-1",
                                RUN_COLOURS[1],
                                curve
                                    .points
                                    .iter()
                                    .map(|p| (x(p.positions), pct(p.top1), pct(p.top1_interval[0]), pct(p.top1_interval[1])))
                                    .collect(),
                            );
                            bars(
                                plot,
                                "human test top-1",
                                RUN_COLOURS[3],
                                curve
                                    .points
                                    .iter()
                                    .map(|p| {
                                        (x(p.positions), pct(p.human_top1), pct(p.human_top1_interval[0]), pct(p.human_top1_interval[1]))
                                    })
                                    .collect(),
                            );
                            // The same points taught by Stockfish's move and by its every move.
                            for (series, name, colour) in [
                                (&curve.engine, "HOLD top-1, Stockfish's move", RUN_COLOURS[2]),
                                (&curve.every_move, "HOLD top-1, Stockfish's every move", RUN_COLOURS[4]),
                            ] {
                                if let Some(s) = series {
                                    let points = s.points.iter();
                                    bars(
                                        plot,
                                        name,
                                        colour,
                                        points
                                            .map(|p| (x(p.positions), pct(p.top1), pct(p.top1_interval[0]), pct(p.top1_interval[1])))
                                            .collect(),
                                    );
                                }
                            }
                        });
                });
            });
        ui.separator();
    }

    fn job_panel(&mut self, ui: &mut egui::Ui) {
        let Some(job) = &mut self.job else { return };
        ui.separator();
        ui.label(RichText::new(format!("Run {}", job.name)).strong());
        match job.talk.outcome() {
            None => {
                let passes = job.passes.len();
                let fraction = if passes > 0 { passes as f32 / job.max_passes as f32 } else { job.fraction as f32 };
                ui.add(egui::ProgressBar::new(fraction).text(&job.stage).animate(true));
                if passes > 0 {
                    let mean = job.passes.iter().map(|p| p.seconds).sum::<f64>() / passes as f64;
                    let misses = job.passes.iter().rev().take_while(|p| !p.improved).count();
                    let left_if_patient = (4usize.saturating_sub(misses)).max(1);
                    ui.small(format!(
                        "{:.1} s per pass; at most {} left ({} more passes), maybe {} if VAL stops improving",
                        mean,
                        human(mean * (job.max_passes - passes.min(job.max_passes)) as f64),
                        job.max_passes.saturating_sub(passes),
                        human(mean * left_if_patient as f64)
                    ));
                }
                ui.horizontal(|ui| {
                    let paused = job.controls.pause.load(Ordering::Relaxed);
                    if ui.button(if paused { "Resume" } else { "Pause" }).clicked() {
                        job.controls.pause.store(!paused, Ordering::Relaxed);
                    }
                    if ui.button("Stop").clicked() {
                        job.controls.stop.store(true, Ordering::Relaxed);
                    }
                });
            }
            Some(Ok(Some(fly))) => {
                ui.colored_label(Color32::from_rgb(90, 200, 120), format!("{} Saved as fly {fly}: pick it in New game.", job.stage));
            }
            Some(Ok(None)) => {
                ui.label(&job.stage);
            }
            Some(Err(e)) => {
                ui.colored_label(Color32::LIGHT_RED, format!("The run failed: {e}"));
            }
        }
    }

    fn curves(&mut self, ui: &mut egui::Ui) {
        if self.runs.is_empty() {
            ui.weak("No runs yet. Start one above, or run `flychess train --name NAME`: its curves appear here as it goes.");
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("Runs:");
            for r in self.runs.iter() {
                let mut shown = !self.hidden.contains(&r.name);
                let label = format!("{} ({} passes)", r.name, r.passes.len());
                if ui.checkbox(&mut shown, label).changed() {
                    if shown {
                        self.hidden.remove(&r.name);
                    } else {
                        self.hidden.insert(r.name.clone());
                    }
                }
            }
        });
        let shown: Vec<&RunCurves> = self.runs.iter().filter(|r| !self.hidden.contains(&r.name)).collect();
        type Metric = (&'static str, fn(&PassRecord) -> f64, Option<fn(&Metrics) -> f64>);
        let metrics: [Metric; 4] = [
            ("VAL loss", |p| p.val.loss, Some(|m| m.loss)),
            ("VAL top-1 (%)", |p| 100.0 * p.val.top1, Some(|m| 100.0 * m.top1)),
            ("VAL good-move rate (%)", |p| 100.0 * p.val.good, Some(|m| 100.0 * m.good)),
            ("step size", |p| p.learning_rate as f64, None),
        ];
        let width = (ui.available_width() / 2.0 - 12.0).max(200.0);
        let height = ((ui.available_height() - 40.0) / 2.0).clamp(140.0, 320.0);
        egui::Grid::new("curves").num_columns(2).show(ui, |ui| {
            for (k, (title, value, blind)) in metrics.iter().enumerate() {
                ui.vertical(|ui| {
                    ui.label(RichText::new(*title).strong());
                    Plot::new(("curve", k)).width(width).height(height).legend(Legend::default()).x_axis_label("pass").show(ui, |plot| {
                        for r in &shown {
                            let points: Vec<[f64; 2]> = r.passes.iter().map(|p| [p.pass as f64, value(p)]).collect();
                            plot.line(Line::new(r.name.clone(), points));
                            if let (Some(b), Some(info)) = (blind, r.info.as_ref().and_then(|i| i.blind)) {
                                plot.hline(HLine::new(format!("{} blind baseline", r.name), b(&info)).style(LineStyle::dashed_loose()));
                            }
                        }
                    });
                });
                if k % 2 == 1 {
                    ui.end_row();
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_training_thread_that_dies_is_reported_not_left_running() {
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let talk = Run::start(std::sync::Arc::new(|| {}), "dies", flychess_lab::lab::jobs::train::DIED, move |send| {
            send(TrainEvent::Stage { text: "pass 3".into(), fraction: 0.5 });
            let _ = wait.recv();
            panic!("a training thread dies");
        });
        let job = RunningJob {
            name: "f".into(),
            controls: Arc::new(Controls::default()),
            talk,
            stage: "starting".into(),
            fraction: 0.0,
            passes: Vec::new(),
            max_passes: 10,
        };
        let mut tab = TrainTab { job: Some(job), ..TrainTab::default() };
        let start = std::time::Instant::now();
        while tab.job.as_ref().unwrap().stage != "pass 3" && start.elapsed().as_secs() < 10 {
            assert!(!tab.poll());
        }
        assert!(tab.job.as_ref().unwrap().running(), "alive while its thread is");
        // The thread panics: it goes without its last word.
        go.send(()).unwrap();
        while tab.job.as_ref().unwrap().running() && start.elapsed().as_secs() < 10 {
            tab.poll();
        }
        let job = tab.job.as_ref().unwrap();
        assert!(!job.running());
        assert!(matches!(job.talk.outcome(), Some(Err(e)) if e.contains("stopped unexpectedly")), "{:?}", job.talk.outcome());
    }
}
