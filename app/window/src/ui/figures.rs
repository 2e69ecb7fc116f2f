//! The Brain tab's other panes besides the cloud (issue 19): the 12 steps at once (a grid of
//! small clouds, rendered offscreen by `flychess_render::figure` and shown as a picture, exported
//! as a 4K PNG, white background optional, and the replay as an animated GIF); the eye (how the
//! shown board lands on the photoreceptors, square by square); the region signal chart (how much
//! the board moved each region at each step in this think, and the spread across 48 positions
//! that `flychess brain signal` prints); and the linear probes (what each region's rates know
//! about the board, `flychess probe`, kept by content key and worked out here when missing).
//! Heavy work runs on threads of its own; this module only shows what has arrived.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::ui::brain_view::ThinkSummary;
use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};
pub use flychess_lab::figure_job::{FigureJob, FigureKind, FigureLook, png_bytes};
use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::export_path;
use flychess_lab::lab::jobs::Aside;
use flychess_lab::lab::jobs::figures::{ProbeOptions, ProbeReport};
use flychess_lab::lab::{Region, STEPS};
use flychess_lab::thinker::Thought;
use flychess_render::cloud::REGION_PALETTE;

/// What the Brain tab's centre shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pane {
    #[default]
    Cloud,
    Steps,
    Eye,
    Chart,
    Probes,
}

impl Pane {
    pub const ALL: [(Pane, &'static str); 5] = [
        (Pane::Cloud, "Cloud"),
        (Pane::Steps, "12 steps"),
        (Pane::Eye, "The eye"),
        (Pane::Chart, "Signal chart"),
        (Pane::Probes, "Probes"),
    ];
}

/// The state of the panes.
#[derive(Default)]
pub struct Figures {
    pub pane: Pane,
    /// The grid shown: (think id, white background, picture).
    grid: Option<(u64, bool, egui::TextureHandle)>,
    grid_job: Option<((u64, bool), Aside<image::RgbaImage>)>,
    export_job: Option<Aside<String>>,
    pub status: String,
    /// The chart shows the spread across the 48 shipped positions instead of this think.
    pub across: bool,
    across_signal: Option<(String, Arc<Vec<[f64; STEPS]>>)>,
    across_job: Option<Aside<(String, Vec<[f64; STEPS]>)>>,
    probes: Option<Arc<ProbeReport>>,
    probes_checked: Option<String>,
    probe_job: Option<Aside<ProbeReport>>,
    /// The probe job only looks for a kept report.
    looking_for_kept: bool,
    probe_done: Arc<AtomicUsize>,
    probe_stop: Arc<AtomicBool>,
    pub probe_choice: usize,
}

/// What a pane draws from: the think shown and its summary, the brain, the data folder.
pub struct PaneInput<'a> {
    pub thought: Option<&'a Thought>,
    pub summary: Option<&'a ThinkSummary>,
    pub ready: &'a Arc<ReadyBrain>,
    pub data: &'a Path,
}

impl Figures {
    /// True while any of the panes' jobs runs.
    pub fn busy(&self) -> bool {
        self.grid_job.is_some() || self.export_job.is_some() || self.across_job.is_some() || self.probe_job.is_some()
    }

    /// True when the pane shows its figure for `thought` (what a screenshot waits for).
    pub fn settled(&self, thought: Option<&Thought>) -> bool {
        match self.pane {
            Pane::Steps => thought.is_some_and(|t| self.grid.as_ref().is_some_and(|(id, _, _)| *id == t.id)),
            Pane::Probes => self.probes.is_some(),
            Pane::Chart => !self.across || self.across_signal.is_some(),
            _ => true,
        }
    }

    fn poll(&mut self, ctx: &egui::Context) {
        if let Some((key, rx)) = &self.grid_job {
            match rx.try_recv() {
                Ok(Ok(img)) => {
                    let size = [img.width() as usize, img.height() as usize];
                    let colour = egui::ColorImage::from_rgba_unmultiplied(size, img.as_raw());
                    let texture = ctx.load_texture("twelve-steps", colour, egui::TextureOptions::LINEAR);
                    self.grid = Some((key.0, key.1, texture));
                    self.grid_job = None;
                }
                Ok(Err(e)) => {
                    self.status = format!("The 12 steps could not be drawn: {e}");
                    self.grid_job = None;
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => self.grid_job = None,
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
            }
        }
        if let Some(rx) = &self.export_job
            && let Ok(answer) = rx.try_recv()
        {
            self.status = answer.unwrap_or_else(|e| e);
            self.export_job = None;
        }
        if let Some(rx) = &self.across_job
            && let Ok(answer) = rx.try_recv()
        {
            match answer {
                Ok((c, s)) => self.across_signal = Some((c, Arc::new(s))),
                Err(e) => self.status = format!("The signal across positions could not be measured: {e}"),
            }
            self.across_job = None;
        }
        if let Some(rx) = &self.probe_job
            && let Ok(answer) = rx.try_recv()
        {
            match answer {
                Ok(r) => self.probes = Some(Arc::new(r)),
                Err(_) if self.looking_for_kept => {}
                Err(e) => self.status = format!("The probes stopped: {e}"),
            }
            self.probe_job = None;
            self.looking_for_kept = false;
        }
    }

    /// The pane chosen (not the cloud, which the Brain tab draws itself).
    pub fn show(&mut self, ui: &mut egui::Ui, on: PaneInput<'_>, job: Option<FigureJob>, big: f32) {
        let PaneInput { thought, summary, ready, data } = on;
        self.poll(ui.ctx());
        if self.busy() {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(150));
        }
        match self.pane {
            Pane::Cloud => {}
            Pane::Steps => self.steps(ui, thought, data, job, big),
            Pane::Eye => eye_pane(ui, thought, ready, big),
            Pane::Chart => self.chart(ui, summary, ready, big),
            Pane::Probes => self.probes(ui, ready, data, big),
        }
        if !self.status.is_empty() {
            ui.small(&self.status);
        }
    }

    fn steps(&mut self, ui: &mut egui::Ui, thought: Option<&Thought>, data: &Path, job: Option<FigureJob>, big: f32) {
        let Some(t) = thought else {
            ui.label(RichText::new("Play a move: the fly's next think is drawn here, all 12 steps at once.").size(big));
            return;
        };
        let white = job.as_ref().is_some_and(|j| j.look.white_background);
        let key = (t.id, white);
        let shown = self.grid.as_ref().filter(|(id, w, _)| (*id, *w) == key).map(|(_, _, tex)| tex.clone());
        ui.horizontal(|ui| {
            let idle = self.export_job.is_none();
            let usable = job.is_some() && !t.rates.is_empty();
            if ui
                .add_enabled(idle && usable, egui::Button::new("Export PNG (3840 × 2160)"))
                .on_hover_text("The 12 steps at once, for slides (into the data folder's exports; White background in the side panel)")
                .clicked()
                && let Some(j) = &job
            {
                self.export(ui.ctx(), j, FigureKind::Grid([3840, 2160]), export_path(data, "brain-12-steps", "png"));
            }
            if ui
                .add_enabled(idle && usable, egui::Button::new("Export replay GIF"))
                .on_hover_text("The 12 steps as an animated GIF, 960 × 540, looping")
                .clicked()
                && let Some(j) = &job
            {
                self.export(ui.ctx(), j, FigureKind::Gif([960, 540]), export_path(data, "brain-replay", "gif"));
            }
            if !idle {
                ui.spinner();
            }
        });
        match (shown, &job) {
            (Some(tex), _) => {
                let avail = ui.available_size();
                let aspect = tex.size()[0] as f32 / tex.size()[1] as f32;
                let w = avail.x.min(avail.y * aspect);
                ui.add(egui::Image::new(&tex).fit_to_exact_size(egui::vec2(w, w / aspect)));
            }
            (None, Some(j)) if !t.rates.is_empty() => {
                if self.grid_job.as_ref().is_none_or(|(k, _)| *k != key) {
                    let job = j.clone();
                    let rx = flychess_lab::lab::jobs::figures::twelve_steps(crate::ui::wake(ui.ctx()), job);
                    self.grid_job = Some((key, rx));
                }
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Drawing the 12 steps…");
                });
            }
            (None, Some(_)) => {
                ui.label("Thinking this position again (its rates were let go to save memory)…");
            }
            (None, None) => {
                ui.label("No wgpu device to draw with.");
            }
        }
    }

    fn export(&mut self, ctx: &egui::Context, j: &FigureJob, kind: FigureKind, path: std::path::PathBuf) {
        let job = j.clone();
        self.status = format!("Exporting {}…", path.display());
        let rx = flychess_lab::lab::jobs::figures::export(crate::ui::wake(ctx), job, kind, path);
        self.export_job = Some(rx);
    }

    fn chart(&mut self, ui: &mut egui::Ui, summary: Option<&ThinkSummary>, ready: &Arc<ReadyBrain>, big: f32) {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.across, false, "This think: |rate − empty board|");
            ui.selectable_value(&mut self.across, true, "Across 48 positions: spread of rates").on_hover_text(
                "What `flychess brain signal` prints: each neuron's spread of rates across 48 real positions, averaged over its region",
            );
        });
        let (title, values): (&str, Vec<(Region, Vec<f64>)>) = if self.across {
            if self.across_signal.as_ref().is_none_or(|(c, _)| *c != ready.checksum) && self.across_job.is_none() {
                let r = ready.clone();
                self.across_signal = None;
                self.across_job = Some(flychess_lab::lab::jobs::figures::signal(crate::ui::wake(ui.ctx()), r));
            }
            match &self.across_signal {
                Some((_, s)) => {
                    ("spread of rates across 48 positions", Region::ALL.into_iter().map(|r| (r, s[r as usize].to_vec())).collect())
                }
                None => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("Thinking 48 positions…");
                    });
                    return;
                }
            }
        } else {
            match summary {
                Some(s) if !s.moved.is_empty() => (
                    "mean |rate − empty-board rate|",
                    Region::ALL.into_iter().map(|r| (r, s.moved.iter().map(|m| m[r as usize] as f64).collect())).collect(),
                ),
                _ => {
                    ui.label(RichText::new("Play a move: the chart follows the fly's think.").size(big));
                    return;
                }
            }
        };
        let present: Vec<(Region, Vec<f64>)> = values.into_iter().filter(|(_, v)| v.iter().any(|x| *x > 0.0)).collect();
        Plot::new(("region-signal", self.across))
            .legend(Legend::default().position(egui_plot::Corner::LeftTop))
            .x_axis_label("step")
            .y_axis_label(title)
            .include_x(1.0)
            .include_x(STEPS as f64)
            .include_y(0.0)
            .allow_scroll(false)
            .show(ui, |plot| {
                for (r, v) in &present {
                    let c = REGION_PALETTE[*r as usize];
                    let points: PlotPoints = v.iter().enumerate().map(|(t, y)| [t as f64 + 1.0, *y]).collect();
                    plot.line(Line::new(r.name(), points).color(Color32::from_rgb(c[0], c[1], c[2])).width(2.0));
                }
            });
    }

    fn probes(&mut self, ui: &mut egui::Ui, ready: &Arc<ReadyBrain>, data: &Path, big: f32) {
        let options = ProbeOptions::default();
        if self.probes.as_ref().is_none_or(|p| p.brain_checksum != ready.checksum) && self.probe_job.is_none() {
            // Look for a kept report once per brain, off the UI thread (the dataset is read to key it).
            if self.probes_checked.as_deref() != Some(ready.checksum.as_str()) {
                self.probes_checked = Some(ready.checksum.clone());
                let (r, d) = (ready.clone(), data.to_path_buf());
                self.probe_job = Some(flychess_lab::lab::jobs::figures::kept_probes(crate::ui::wake(ui.ctx()), r, d));
                self.looking_for_kept = true;
            }
        }
        let Some(report) = self.probes.clone().filter(|p| p.brain_checksum == ready.checksum) else {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(200));
            ui.label(RichText::new("What each region's rates know about the board: linear probes for material, check, a hanging piece and a piece on e4, fitted on TRAIN positions and scored on HOLD.").size(big));
            match &self.probe_job {
                Some(_) if self.looking_for_kept => {
                    ui.spinner();
                }
                Some(_) => {
                    let done = self.probe_done.load(Ordering::Relaxed);
                    let total = options.train + options.val + options.hold;
                    ui.add(
                        egui::ProgressBar::new(done as f32 / total as f32)
                            .text(format!("{done} of {total} positions thought"))
                            .animate(true),
                    );
                    if ui.button("Stop").clicked() {
                        self.probe_stop.store(true, Ordering::Relaxed);
                    }
                }
                None => {
                    if ui
                        .button(format!("Run the probes ({} positions, about a minute)", options.train + options.val + options.hold))
                        .clicked()
                    {
                        let (r, data, done, stop) = (ready.clone(), data.to_path_buf(), self.probe_done.clone(), self.probe_stop.clone());
                        done.store(0, Ordering::Relaxed);
                        stop.store(false, Ordering::Relaxed);
                        self.probe_job =
                            Some(flychess_lab::lab::jobs::figures::probes(crate::ui::wake(ui.ctx()), r, data, options, done, stop));
                    }
                }
            }
            return;
        };
        ui.horizontal_wrapped(|ui| {
            for (k, p) in report.probes.iter().enumerate() {
                ui.selectable_value(&mut self.probe_choice, k, &p.name);
            }
        });
        let p = self.probe_choice.min(report.probes.len() - 1);
        let info = &report.probes[p];
        let unit = if info.score == flychess_lab::lab::jobs::figures::ProbeScore::R2 { "R² on HOLD" } else { "ROC AUC on HOLD" };
        let board = &report.board[p];
        let mut text = format!(
            "{} HOLD positions ({} TRAIN, strength chosen on {} VAL), up to {} neurons per region. The board's own 768 planes: {:.3} [{:.3}, {:.3}]; chance {}.",
            report.options.hold,
            report.options.train,
            report.options.val,
            report.options.per_region,
            board.hold.value,
            board.hold.low,
            board.hold.high,
            info.chance
        );
        if let Some((region, step, c)) = report.best(p) {
            text.push_str(&format!(
                " Best on VAL: {region} at step {step}, {:.3} [{:.3}, {:.3}] on HOLD.",
                c.hold.value, c.hold.low, c.hold.high
            ));
        }
        ui.label(RichText::new(text).size(big * 0.85));
        Plot::new(("probe-chart", p))
            .legend(Legend::default().position(egui_plot::Corner::RightBottom))
            .x_axis_label("step")
            .y_axis_label(unit)
            .include_x(1.0)
            .include_x(STEPS as f64)
            .include_y(info.chance)
            .include_y(1.0)
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.line(
                    Line::new("the board's planes", PlotPoints::from(vec![[1.0, board.hold.value], [STEPS as f64, board.hold.value]]))
                        .color(Color32::GRAY)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
                plot.line(
                    Line::new("chance", PlotPoints::from(vec![[1.0, info.chance], [STEPS as f64, info.chance]]))
                        .color(Color32::DARK_GRAY)
                        .style(egui_plot::LineStyle::dotted_dense()),
                );
                for region in &report.regions {
                    let r = Region::ALL.into_iter().find(|r| r.name() == region.region);
                    let c = r.map(|r| REGION_PALETTE[r as usize]).unwrap_or([200, 200, 200]);
                    let points: PlotPoints = region.cells[p].iter().enumerate().map(|(t, c)| [t as f64 + 1.0, c.hold.value]).collect();
                    plot.line(Line::new(&region.region, points).color(Color32::from_rgb(c[0], c[1], c[2])).width(1.8));
                }
            });
    }
}

/// How the shown think's board lands on the photoreceptors: an 8 × 8 board of squares, each with
/// the number of its cells this board lights, coloured by the share lit, its roles on hover.
fn eye_pane(ui: &mut egui::Ui, thought: Option<&Thought>, ready: &Arc<ReadyBrain>, big: f32) {
    let position = thought.map(|t| t.position.clone()).unwrap_or_default();
    let sight = crate::ui::looks::Looks::sight(ready, &position);
    let lit: u32 = sight.iter().map(|s| s.total_firing()).sum();
    let placed: u32 = sight.iter().map(|s| s.total()).sum();
    ui.label(RichText::new(format!(
        "The eye before step 1{}: {lit} of the {placed} placed photoreceptors get input from this board (R1–R6 report one piece type each, R7 the mover's pieces, R8 the opponent's). Hover a square for its cells.",
        if thought.is_some() { " for the shown think" } else { " (the start position)" }
    ))
    .size(big * 0.85));
    let avail = ui.available_size();
    let side = avail.x.min(avail.y).max(120.0);
    let (rect, _) = ui.allocate_exact_size(egui::vec2(side, side), egui::Sense::hover());
    let s = side / 8.0;
    let painter = ui.painter_at(rect);
    let font = egui::FontId::proportional((s * 0.2).max(9.0));
    for q in &sight {
        let (file, rank) = (q.square % 8, q.square / 8);
        let r = egui::Rect::from_min_size(rect.min + egui::vec2(file as f32 * s, (7 - rank) as f32 * s), egui::vec2(s, s));
        let share = q.total_firing() as f32 / q.total().max(1) as f32;
        let base = if (file + rank) % 2 == 1 { Color32::from_gray(70) } else { Color32::from_gray(50) };
        painter.rect_filled(r.shrink(1.0), 2.0, base);
        painter.rect_filled(r.shrink(1.0), 2.0, Color32::from_rgba_unmultiplied(255, 200, 40, (share.sqrt() * 200.0) as u8));
        if let Some(piece) = shakmaty::Position::board(&position).piece_at(shakmaty::Square::new(u32::from(q.square))) {
            painter.text(
                r.center() - egui::vec2(0.0, s * 0.08),
                egui::Align2::CENTER_CENTER,
                piece.char().to_string(),
                egui::FontId::monospace(s * 0.38),
                Color32::WHITE,
            );
        }
        painter.text(
            r.center_bottom() - egui::vec2(0.0, s * 0.06),
            egui::Align2::CENTER_BOTTOM,
            format!("{}/{}", q.total_firing(), q.total()),
            font.clone(),
            Color32::from_gray(235),
        );
        let response = ui.interact(r, ui.scope_id().with(("eye-square", q.square)), egui::Sense::hover());
        response.on_hover_text(format!("{}\n{}", shakmaty::Square::new(u32::from(q.square)), crate::ui::looks::sight_text(q)));
    }
}
