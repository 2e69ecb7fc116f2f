//! The brain view: every neuron with a cell body as a point in 3D (drawn by `flychess_render` on
//! eframe's device), replaying the fly's last think step by step. It owns the camera (orbit,
//! pan, zoom, front/side/top), the colour mode and its legend, the per-region bars of how much the
//! board moved each region at the shown step, playback (pause, step, slider, speed), picking and
//! inspecting a neuron (identity, degrees, strongest partners to jump to, its 12-step rate plot),
//! finding neurons by type or class with an undoable selection and a partner-list CSV export,
//! a classroom mode with one computed sentence per step, and a high-resolution image export.
//! Shown full size in the Brain tab and as a card in the Play tab. The panes that need the
//! desktop program (control brains, the lesson, the error going back, the figures, every export
//! to a file) are the `native` feature's; a page says so where they would be.

use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use glam::Vec3;

use flychess_lab::lab::Connectome;
use flychess_lab::lab::Region;
#[cfg(feature = "native")]
use flychess_lab::lab::export_path;
use flychess_lab::lab::{Brain, Outgoing};
use flychess_render::camera::{OrbitCamera, Preset};
use flychess_render::cloud::{CloudGeometry, ColourMode, REGION_PALETTE, ViewSettings, activity_colour, pick};
use flychess_render::egui_view::{CloudCallback, FrameRates, callback};

use std::path::Path;

use flychess_lab::lab::ReadyBrain;
#[cfg(feature = "native")]
pub use flychess_lab::lab::jobs::control::ControlThink;
pub use flychess_lab::lab::think_summary::{ThinkSummary, region_means};
use flychess_lab::thinker::Thought;

pub use flychess_lab::lab::STEPS;

/// A neuron's partners, strongest first: (partner, signed weight).
pub struct Partners {
    pub inputs: Vec<(u32, f32)>,
    pub outputs: Vec<(u32, f32)>,
}

pub fn partners(brain: &Brain, outgoing: &Outgoing, neuron: u32) -> Partners {
    let j = neuron as usize;
    let mut inputs: Vec<(u32, f32)> = brain.row(j).map(|e| (brain.pre[e], brain.weight[e])).collect();
    let mut outputs: Vec<(u32, f32)> =
        outgoing.of_sender(j).iter().map(|&e| (outgoing.post[e as usize], brain.weight[e as usize])).collect();
    inputs.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    outputs.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    Partners { inputs, outputs }
}

pub struct BrainView {
    /// Neurons per region (the legend lists the regions this brain has).
    pub region_sizes: [usize; Region::COUNT],
    /// Where the points' positions come from ("layout from wiring" for FlyWire's bundle).
    pub positions: &'static str,
    pub geometry: Arc<CloudGeometry>,
    pub camera: OrbitCamera,
    pub mode: ColourMode,
    pub white_background: bool,
    /// Playback of the shown think when no replay drives it.
    pub playing: bool,
    pub speed: f32,
    pub step: usize,
    step_clock: f64,
    pub selected: Option<u32>,
    /// Neurons found by the search (the selection stepped through with N).
    pub selection: Vec<u32>,
    pub cursor: usize,
    history: Vec<(Option<u32>, Vec<u32>)>,
    pub search: String,
    partners: Option<(u32, Arc<Partners>)>,
    outgoing: Option<Arc<Outgoing>>,
    outgoing_job: Option<flychess_lab::lab::jobs::Aside<Arc<Outgoing>>>,
    /// A neuron was picked this frame (the window's frame log reads and clears it).
    pub picked: bool,
    marks: Arc<Vec<f32>>,
    marks_version: u64,
    marks_dirty: bool,
    /// The shown think's summary, by (think id, whether its rates were there).
    summary: Option<((u64, bool), Arc<ThinkSummary>)>,
    pub classroom: bool,
    pub status: String,
    /// Whether eframe's device has the renderer installed (false: no wgpu, a text view instead).
    pub gpu: bool,
    viewport: [f32; 2],
    /// Which lab control thinks again (index into `train::lab_controls()`, the loaded brain excluded).
    #[cfg(feature = "native")]
    pub control_choice: usize,
    #[cfg(feature = "native")]
    control_job: Option<flychess_lab::lab::jobs::Aside<ControlThink>>,
    /// The 4K export in flight: its answer (the status line).
    #[cfg(feature = "native")]
    export_job: Option<flychess_lab::lab::jobs::Aside<String>>,
    #[cfg(feature = "native")]
    pub control: Option<ControlThink>,
    #[cfg(feature = "native")]
    pub show_control: bool,
    /// A replay drove the step last frame.
    replaying: bool,
    /// The position as a dopamine-fly lesson (`ui::lesson`).
    #[cfg(feature = "native")]
    pub lesson: crate::ui::lesson::LessonPanel,
    /// The error going back for the shown position (`ui::blame`).
    #[cfg(feature = "native")]
    pub blame: crate::ui::blame::BlamePanel,
    /// The panes beside the cloud: the 12 steps at once, the eye, the signal chart, the probes.
    #[cfg(feature = "native")]
    pub figures: crate::ui::figures::Figures,
    /// The classroom's presenter (`classroom` on).
    pub presenter: crate::ui::classroom::Presenter,
}

/// What the Brain tab draws from: the think shown and how far its replay has run, the brain, the
/// data folder, the window's wgpu device, and the fly that thinks.
pub struct BrainTabInput<'a> {
    pub thought: Option<&'a Thought>,
    pub replay: Option<f64>,
    pub ready: &'a Arc<ReadyBrain>,
    pub data: &'a Path,
    pub render_state: Option<&'a eframe::egui_wgpu::RenderState>,
    pub fly: Option<&'a flychess_lab::thinker::Seated>,
}

impl BrainView {
    pub fn new(connectome: &Connectome, geometry: Arc<CloudGeometry>, gpu: bool) -> BrainView {
        let camera = OrbitCamera::framing(&geometry.placed().collect::<Vec<_>>());
        let n = geometry.neurons();
        let mut region_sizes = [0usize; Region::COUNT];
        for r in &connectome.neurons.region {
            region_sizes[*r as usize] += 1;
        }
        BrainView {
            region_sizes,
            positions: connectome.provenance.positions_label(),
            geometry,
            camera,
            mode: ColourMode::Activity,
            white_background: false,
            playing: false,
            speed: 1.0,
            step: STEPS - 1,
            step_clock: 0.0,
            selected: None,
            selection: Vec::new(),
            cursor: 0,
            history: Vec::new(),
            search: String::new(),
            partners: None,
            outgoing: None,
            outgoing_job: None,
            picked: false,
            marks: Arc::new(vec![0.0; n]),
            marks_version: 1,
            marks_dirty: false,
            summary: None,
            classroom: false,
            status: String::new(),
            gpu,
            viewport: [1.0, 1.0],
            #[cfg(feature = "native")]
            control_choice: 1,
            #[cfg(feature = "native")]
            control_job: None,
            #[cfg(feature = "native")]
            export_job: None,
            #[cfg(feature = "native")]
            control: None,
            #[cfg(feature = "native")]
            show_control: false,
            replaying: false,
            #[cfg(feature = "native")]
            lesson: Default::default(),
            #[cfg(feature = "native")]
            blame: Default::default(),
            #[cfg(feature = "native")]
            figures: Default::default(),
            presenter: Default::default(),
        }
    }

    fn summary(&mut self, t: &Thought, connectome: &Connectome) -> Arc<ThinkSummary> {
        // A think whose rates were let go (and are being recalled) is summarised again once back.
        let key = (t.id, !t.rates.is_empty());
        match &self.summary {
            Some((k, s)) if *k == key => s.clone(),
            _ => {
                let s = Arc::new(ThinkSummary::of(t, connectome));
                self.summary = Some((key, s.clone()));
                s
            }
        }
    }

    /// Selects `neuron` (None clears), remembering the previous selection for undo.
    pub fn select(&mut self, neuron: Option<u32>) {
        self.picked = true;
        self.history.push((self.selected, self.selection.clone()));
        self.selected = neuron;
        self.partners = None;
        self.marks_dirty = true;
    }

    pub fn undo(&mut self) {
        if let Some((sel, selection)) = self.history.pop() {
            self.selected = sel;
            self.selection = selection;
            self.partners = None;
            self.marks_dirty = true;
        }
    }

    /// Finds neurons whose type or class contains `query` (case-insensitive).
    pub fn find(&mut self, connectome: &Connectome, query: &str) {
        let q = query.trim().to_lowercase();
        self.history.push((self.selected, self.selection.clone()));
        self.selection = if q.is_empty() {
            Vec::new()
        } else {
            let n = &connectome.neurons;
            (0..n.len())
                .filter(|&i| n.type_name(i).to_lowercase().contains(&q) || n.class_name(i).to_lowercase().contains(&q))
                .map(|i| i as u32)
                .collect()
        };
        self.cursor = 0;
        self.selected = self.selection.first().copied();
        self.partners = None;
        self.marks_dirty = true;
        self.status = format!("{} neurons match {query:?}", self.selection.len());
    }

    /// The next neuron of the selection (the N key).
    pub fn next_in_selection(&mut self) {
        if !self.selection.is_empty() {
            self.cursor = (self.cursor + 1) % self.selection.len();
            let n = self.selection[self.cursor];
            self.select(Some(n));
            self.history.pop();
        }
    }

    /// Starts building the outgoing index on a thread of its own, so the first neuron click
    /// does not build it on the UI thread.
    pub fn prefetch_outgoing(&mut self, brain: Arc<Brain>) {
        // Nothing to repaint when it is done: the click that wants it waits for it.
        self.outgoing_job = Some(flychess_lab::lab::jobs::window::outgoing_index(brain));
    }

    /// The outgoing index of `brain`: the prefetched one (waited for if a click comes first),
    /// else built here.
    pub fn outgoing(&mut self, brain: &Brain) -> Arc<Outgoing> {
        if self.outgoing.is_none()
            && let Some(rx) = self.outgoing_job.take()
        {
            self.outgoing = rx.recv().ok().and_then(Result::ok);
        }
        self.outgoing.get_or_insert_with(|| brain.outgoing()).clone()
    }

    fn partners_of(&mut self, brain: &Brain, neuron: u32) -> Arc<Partners> {
        match &self.partners {
            Some((n, p)) if *n == neuron => p.clone(),
            _ => {
                let outgoing = self.outgoing(brain);
                let p = Arc::new(partners(brain, &outgoing, neuron));
                self.partners = Some((neuron, p.clone()));
                p
            }
        }
    }

    fn refresh_marks(&mut self, brain: &Brain) {
        if !self.marks_dirty {
            return;
        }
        self.marks_dirty = false;
        let mut marks = vec![0f32; self.geometry.neurons()];
        for &s in &self.selection {
            marks[s as usize] = 1.0;
        }
        if let Some(sel) = self.selected {
            let p = self.partners_of(brain, sel);
            for &(k, _) in p.inputs.iter().take(30).chain(p.outputs.iter().take(30)) {
                marks[k as usize] = 1.0;
            }
            marks[sel as usize] = 2.0;
        }
        self.marks = Arc::new(marks);
        self.marks_version += 1;
    }

    /// The step shown now: driven by the Play tab's replay if one runs, else by this view's own
    /// playback (looping through the 12 steps while Play is on) or its slider; idle otherwise.
    fn current_step(&mut self, now: f64, replay: Option<f64>) -> usize {
        if let Some(p) = replay {
            self.step = ((p * STEPS as f64).floor() as usize).min(STEPS - 1);
            self.replaying = true;
            return self.step;
        }
        if std::mem::take(&mut self.replaying) {
            // The replay is over: the move is played and the view rests on step 12.
            self.step = STEPS - 1;
        }
        if self.playing {
            let per_step = 1.3 / STEPS as f64 / self.speed.max(0.05) as f64;
            if now - self.step_clock >= per_step {
                // The error going back plays from step 12 down to step 1.
                self.step = if self.blame_showing() { (self.step + STEPS - 1) % STEPS } else { (self.step + 1) % STEPS };
                self.step_clock = now;
            }
        }
        self.step
    }

    /// The error going back is shown (it plays from step 12 down to step 1).
    fn blame_showing(&self) -> bool {
        #[cfg(feature = "native")]
        {
            self.blame.showing && self.blame.shown.is_some()
        }
        #[cfg(not(feature = "native"))]
        {
            false
        }
    }

    /// What the error going back says at `step` for the shown think (None: it is not shown).
    fn blame_line(&self, thought: Option<&Thought>, step: usize) -> Option<String> {
        #[cfg(feature = "native")]
        {
            let b = thought.and_then(|t| self.blame.drawn_for(t.id))?;
            let top = Region::ALL
                .into_iter()
                .max_by(|a, c| b.blame.region_mean[step][*a as usize].total_cmp(&b.blame.region_mean[step][*c as usize]))
                .expect("regions");
            Some(format!(
                "d loss / d rate after step {}: up to {:.1e}; most blame per neuron: {}.",
                step + 1,
                b.blame.largest[step],
                top.name()
            ))
        }
        #[cfg(not(feature = "native"))]
        {
            let _ = (thought, step);
            None
        }
    }

    /// The rates the cloud shows instead of the think's own, when the error going back (true) or
    /// a control brain's think of the same board (false) is shown: (think id, rates, blame).
    fn shown_instead(&self, thought: Option<&Thought>, card: bool) -> Option<(u64, Arc<Vec<f32>>, bool)> {
        #[cfg(feature = "native")]
        {
            let blame = thought.filter(|_| !card).and_then(|t| self.blame.drawn_for(t.id)).map(|b| (b.id, b.view.clone(), true));
            blame.or_else(|| {
                self.control
                    .as_ref()
                    .filter(|c| self.show_control && !card && thought.is_some_and(|t| t.id == c.of))
                    .map(|c| (c.id, c.rates.clone(), false))
            })
        }
        #[cfg(not(feature = "native"))]
        {
            let _ = (thought, card);
            None
        }
    }

    fn settings(&self, rect: egui::Rect, ppp: f32, card: bool) -> ViewSettings {
        let viewport = [rect.width() * ppp, rect.height() * ppp];
        let scale = if card { 0.7 } else { 1.0 } * ppp;
        ViewSettings {
            view_proj: self.camera.view_projection(viewport[0] / viewport[1].max(1.0)),
            viewport_px: viewport,
            point_px: [1.2 * scale, 3.2 * scale],
            ghost: 0.08,
            rate_scale: 1.0,
            mode: self.mode,
            white_background: self.white_background,
        }
    }

    /// The cloud in `rect` with mouse control; returns nothing, updates the selection on click.
    pub(crate) fn cloud(&mut self, ui: &mut egui::Ui, size: egui::Vec2, thought: Option<&Thought>, step: usize, card: bool) {
        let instead = self.shown_instead(thought, card);
        let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "brain view"));
        let bg = if self.white_background { Color32::WHITE } else { Color32::from_rgb(8, 8, 14) };
        ui.painter().rect_filled(rect, 4.0, bg);
        if response.dragged_by(egui::PointerButton::Primary) {
            let d = response.drag_delta();
            self.camera.orbit(-d.x * 0.01, d.y * 0.01);
        }
        if response.dragged_by(egui::PointerButton::Secondary) || response.dragged_by(egui::PointerButton::Middle) {
            let d = response.drag_delta();
            self.camera.pan(d.x / rect.height(), d.y / rect.height());
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom((-scroll * 0.002).exp());
            }
        }
        let ppp = ui.ctx().pixels_per_point();
        let mut view = self.settings(rect, ppp, card);
        if instead.as_ref().is_some_and(|(_, _, blame)| *blame) {
            view.mode = ColourMode::Blame;
        }
        self.viewport = view.viewport_px;
        if response.clicked()
            && let Some(p) = response.interact_pointer_pos()
        {
            let at = [(p.x - rect.min.x) * ppp, (p.y - rect.min.y) * ppp];
            let hit = pick(&self.geometry, view.view_proj, view.viewport_px, at, 6.0 * ppp);
            self.select(hit);
        }
        if !self.gpu {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "No wgpu device: the 3D view needs one.",
                egui::FontId::proportional(14.0),
                Color32::GRAY,
            );
            return;
        }
        let rates = match thought {
            _ if instead.is_some() => {
                let (id, rates, _) = instead.expect("checked");
                FrameRates::Upload { id, rates }
            }
            Some(Thought { gpu_rates: Some(buffer), .. }) => FrameRates::Buffer(buffer.clone()),
            // Rates let go and being recalled: silent for the frames until they are back.
            Some(t) if t.rates.is_empty() => FrameRates::Silent,
            Some(t) => FrameRates::Upload { id: t.id, rates: t.rates.clone() },
            None => FrameRates::Silent,
        };
        let cb = CloudCallback { view, step, rates, marks: Some((self.marks_version, self.marks.clone())) };
        ui.painter().add(callback(rect, cb));
    }

    /// The card in the Play tab: the cloud, the step, and the biggest regions.
    pub fn card(&mut self, ui: &mut egui::Ui, thought: Option<&Thought>, replay: Option<f64>, connectome: &Connectome, brain: &Brain) {
        let now = ui.input(|i| i.time);
        let step = self.current_step(now, replay);
        if replay.is_some() {
            ui.ctx().request_repaint();
        }
        self.refresh_marks(brain);
        ui.horizontal(|ui| {
            ui.label(RichText::new(format!("Brain: step {} of {STEPS}", step + 1)).strong());
            if thought.is_none() {
                ui.weak("(fills in when the fly thinks)");
            }
        });
        let w = ui.available_width().min(420.0);
        self.cloud(ui, egui::vec2(w, w * 0.62), thought, step, true);
        if let Some(t) = thought {
            let s = self.summary(t, connectome);
            ui.small(s.sentence(step));
        }
    }

    /// The Brain tab: the cloud full size with every control.
    pub fn full(&mut self, ui: &mut egui::Ui, tab: BrainTabInput<'_>, looks: &mut crate::ui::looks::Looks) {
        let BrainTabInput { thought, replay, ready, data, render_state, fly } = tab;
        let (connectome, brain) = (&*ready.connectome, &*ready.brain);
        #[cfg(feature = "native")]
        {
            self.poll_control(connectome);
            self.poll_export();
        }
        self.refresh_marks(brain);
        let summary = thought.map(|t| self.summary(t, connectome));
        if self.classroom {
            let mut stay = true;
            egui::CentralPanel::default().show(ui, |ui| stay = self.presenter(ui, thought, summary.as_deref(), ready, looks, fly));
            if !stay {
                self.set_classroom(ui.ctx(), false);
            }
            return;
        }
        let now = ui.input(|i| i.time);
        let step = self.current_step(now, replay);
        if replay.is_some() || (self.playing && thought.is_some()) {
            ui.ctx().request_repaint();
        }
        self.keys(ui);
        egui::Panel::right("brain-side").default_size(330.0).resizable(true).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                self.controls(ui, step, render_state, thought, data);
                ui.separator();
                #[cfg(feature = "native")]
                {
                    self.control_panel(ui, thought, ready, data, summary.as_deref(), step);
                    ui.separator();
                    self.lesson.show(ui, thought, ready, data);
                    ui.separator();
                    self.blame.show(ui, thought, ready, data);
                    ui.separator();
                }
                #[cfg(not(feature = "native"))]
                {
                    ui.weak("Control brains, the dopamine lesson and the error going back need the desktop program (flychess).");
                    ui.separator();
                }
                self.legend(ui, summary.as_deref(), step);
                ui.separator();
                self.find_panel(ui, connectome, brain, data);
                ui.separator();
                self.inspector(ui, thought, connectome, brain);
            });
        });
        egui::CentralPanel::default().show(ui, |ui| {
            let size = if self.classroom { 20.0 } else { 14.0 };
            #[cfg(feature = "native")]
            {
                ui.horizontal(|ui| {
                    for (pane, label) in crate::ui::figures::Pane::ALL {
                        ui.selectable_value(&mut self.figures.pane, pane, RichText::new(label).size(size));
                    }
                });
                if self.figures.pane != crate::ui::figures::Pane::Cloud {
                    let job = self.figure_job(thought, summary.as_deref(), render_state);
                    let on = crate::ui::figures::PaneInput { thought, summary: summary.as_deref(), ready, data };
                    self.figures.show(ui, on, job, size);
                    return;
                }
            }
            let blaming = self.shown_instead(thought, false).is_some_and(|(_, _, blame)| blame);
            ui.label(
                RichText::new(format!("Step {} of {STEPS}{}", step + 1, if blaming { ": the error going back" } else { "" }))
                    .size(size + 4.0)
                    .strong(),
            );
            if let Some(line) = self.blame_line(thought, step).filter(|_| blaming) {
                ui.label(RichText::new(line).size(size));
            } else if let Some(s) = &summary {
                ui.label(RichText::new(s.sentence(step)).size(size));
            } else {
                ui.label(RichText::new("Play a move: the fly's next think is replayed here, step by step.").size(size));
            }
            let avail = ui.available_size();
            self.cloud(ui, avail, thought, step, false);
        });
    }

    #[cfg(feature = "native")]
    /// What a figure of the shown think needs: the device, the cloud's geometry and marks, the
    /// think's rates, the view as it is now, a title and a caption per step.
    pub fn figure_job(
        &self,
        thought: Option<&Thought>,
        summary: Option<&ThinkSummary>,
        render_state: Option<&eframe::egui_wgpu::RenderState>,
    ) -> Option<crate::ui::figures::FigureJob> {
        let (rs, t) = (render_state?, thought?);
        let chosen = shakmaty::san::San::from_move(&t.position, t.chosen).to_string();
        let p = t.policy.moves.iter().position(|m| *m == t.chosen).map(|i| t.policy.probability[i]).unwrap_or(0.0);
        let mover = if shakmaty::Position::turn(&t.position) == shakmaty::Color::White { "White" } else { "Black" };
        Some(crate::ui::figures::FigureJob {
            device: rs.device.clone(),
            queue: rs.queue.clone(),
            geometry: self.geometry.clone(),
            marks: self.marks.clone(),
            rates: t.rates.clone(),
            look: crate::ui::figures::FigureLook {
                camera: self.camera,
                mode: if self.mode == ColourMode::Blame { ColourMode::Activity } else { self.mode },
                white_background: self.white_background,
            },
            title: format!("The fly's 12 steps ({mover} to move): it plays {chosen} ({:.0} %). {}", 100.0 * p, self.positions),
            captions: (0..STEPS).map(|k| summary.map(|s| s.caption(k)).unwrap_or_else(|| format!("Step {}", k + 1))).collect(),
        })
    }

    /// Enters or leaves the classroom's presenter (full screen, from its first slide).
    pub fn set_classroom(&mut self, ctx: &egui::Context, on: bool) {
        self.classroom = on;
        if on {
            self.presenter.slide = 0;
        }
        ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(on));
    }

    #[cfg(feature = "native")]
    fn poll_control(&mut self, connectome: &Connectome) {
        let Some(rx) = &self.control_job else { return };
        if let Ok(result) = rx.try_recv() {
            self.control_job = None;
            match result {
                Ok(mut c) => {
                    c.mean = region_means(&c.rates, connectome);
                    self.status = format!("{} thought the same board again.", c.label);
                    self.control = Some(c);
                    self.show_control = true;
                }
                Err(e) => self.status = format!("The control brain could not think: {e}"),
            }
        }
    }

    /// Lesion a region or shuffle the wiring, think again on the shown board, compare.
    #[cfg(feature = "native")]
    fn control_panel(
        &mut self,
        ui: &mut egui::Ui,
        thought: Option<&Thought>,
        ready: &Arc<ReadyBrain>,
        data: &Path,
        summary: Option<&ThinkSummary>,
        step: usize,
    ) {
        let controls: Vec<crate::ui::train::BrainChoice> = crate::ui::train::lab_controls().into_iter().skip(1).map(|(_, c)| c).collect();
        ui.label(RichText::new("Controls").strong());
        ui.horizontal(|ui| {
            let i = self.control_choice.min(controls.len() - 1);
            egui::ComboBox::from_id_salt("control-brain").selected_text(controls[i].label()).show_ui(ui, |ui| {
                for (k, c) in controls.iter().enumerate() {
                    ui.selectable_value(&mut self.control_choice, k, c.label());
                }
            });
            let busy = self.control_job.is_some();
            if ui
                .add_enabled(thought.is_some() && !busy, egui::Button::new("Think again"))
                .on_hover_text("The same board through the control brain (built and calibrated once, then kept)")
                .clicked()
                && let (Some(t), crate::ui::train::BrainChoice::Control(control)) = (thought, controls[i].clone())
            {
                let rx = flychess_lab::lab::jobs::control::think(
                    crate::ui::wake(ui.ctx()),
                    ready,
                    data.to_path_buf(),
                    control,
                    t.position.clone(),
                    t.id,
                    controls[i].label(),
                );
                self.control_job = Some(rx);
                self.status = "Building the control brain (first time: about a minute) and thinking…".into();
            }
            if busy {
                ui.spinner();
            }
        });
        let Some(c) = self.control.as_ref().filter(|c| thought.is_some_and(|t| t.id == c.of)) else { return };
        ui.checkbox(&mut self.show_control, format!("Show {}", c.label));
        if let Some(s) = summary.filter(|s| !s.mean.is_empty() && !c.mean.is_empty()) {
            let (intact, lesioned) = (&s.mean[step.min(s.mean.len() - 1)], &c.mean[step.min(c.mean.len() - 1)]);
            let mut diff: Vec<(usize, f32)> = (0..Region::COUNT).map(|k| (k, lesioned[k] - intact[k])).collect();
            diff.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            ui.small(format!("Biggest changes at step {} ({} minus the intact brain):", step + 1, c.label));
            for (k, d) in diff.iter().take(4) {
                ui.small(format!("  {}: {:+.3} mean rate", Region::ALL[*k].name(), d));
            }
        }
    }

    fn keys(&mut self, ui: &egui::Ui) {
        if ui.ctx().memory(|m| m.focused().is_some()) {
            return;
        }
        let (space, left, right, n, undo) = ui.input(|i| {
            (
                i.key_pressed(egui::Key::Space),
                i.key_pressed(egui::Key::ArrowLeft),
                i.key_pressed(egui::Key::ArrowRight),
                i.key_pressed(egui::Key::N),
                i.modifiers.command && i.key_pressed(egui::Key::Z),
            )
        });
        if space {
            self.playing = !self.playing;
        }
        if left {
            self.playing = false;
            self.step = self.step.saturating_sub(1);
        }
        if right {
            self.playing = false;
            self.step = (self.step + 1).min(STEPS - 1);
        }
        if n {
            self.next_in_selection();
        }
        if undo {
            self.undo();
        }
    }

    fn controls(
        &mut self,
        ui: &mut egui::Ui,
        step: usize,
        render_state: Option<&eframe::egui_wgpu::RenderState>,
        thought: Option<&Thought>,
        data: &Path,
    ) {
        ui.horizontal_wrapped(|ui| {
            if ui.button(if self.playing { "Pause" } else { "Play" }).on_hover_text("Space").clicked() {
                self.playing = !self.playing;
            }
            if ui.button("‹ Step").on_hover_text("Left arrow").clicked() {
                self.playing = false;
                self.step = step.saturating_sub(1);
            }
            if ui.button("Step ›").on_hover_text("Right arrow").clicked() {
                self.playing = false;
                self.step = (step + 1).min(STEPS - 1);
            }
        });
        let mut shown = self.step + 1;
        if ui.add(egui::Slider::new(&mut shown, 1..=STEPS).text("step")).changed() {
            self.playing = false;
            self.step = shown - 1;
        }
        ui.add(egui::Slider::new(&mut self.speed, 0.1..=4.0).logarithmic(true).text("speed"));
        ui.horizontal(|ui| {
            for (p, label) in [(Preset::Front, "Front"), (Preset::Side, "Side"), (Preset::Top, "Top")] {
                if ui.button(label).clicked() {
                    self.camera.preset(p);
                }
            }
            if ui.button("Reset").clicked() {
                self.camera = OrbitCamera::framing(&self.geometry.placed().collect::<Vec<_>>());
            }
        });
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.mode, ColourMode::Activity, "Activity");
            ui.selectable_value(&mut self.mode, ColourMode::Region, "Region");
            ui.checkbox(&mut self.white_background, "White background");
        });
        ui.horizontal(|ui| {
            let mut classroom = self.classroom;
            if ui.checkbox(&mut classroom, "Classroom").on_hover_text("Presenter mode: the think told slide by slide in large type, full screen (space or arrows to go on, A on its own, Esc to leave)").changed() {
                self.set_classroom(ui.ctx(), classroom);
            }
            #[cfg(not(feature = "native"))]
            let _ = (render_state, thought, step, data);
            #[cfg(feature = "native")]
            self.export_buttons(ui, step, render_state, thought, data);
        });
        ui.small("Drag: orbit. Right-drag: pan. Wheel: zoom. Click a neuron to inspect it.");
        ui.small(format!("Positions: {}.", self.positions));
        if !self.status.is_empty() {
            ui.small(&self.status);
        }
    }

    /// The image export's buttons: a PNG where the user chooses, or into the data folder.
    #[cfg(feature = "native")]
    fn export_buttons(
        &mut self,
        ui: &mut egui::Ui,
        step: usize,
        render_state: Option<&eframe::egui_wgpu::RenderState>,
        thought: Option<&Thought>,
        data: &Path,
    ) {
        let idle = !self.exporting();
        if ui.add_enabled(idle, egui::Button::new("Export image…")).on_hover_text("3840 × 2160 PNG for slides").clicked() {
            match (render_state, rfd::FileDialog::new().add_filter("PNG", &["png"]).set_file_name("brain.png").save_file()) {
                (Some(rs), Some(path)) => self.export_image(rs, thought, step, &path),
                (None, _) => self.status = "No wgpu device to render with.".into(),
                (_, None) => {
                    self.status =
                        "No file chosen (or no file dialog on this desktop): the \"into the data folder\" button saves without one.".into()
                }
            }
        }
        if ui.add_enabled(idle, egui::Button::new("PNG into the data folder").small()).clicked() {
            let path = export_path(data, "brain", "png");
            match render_state {
                Some(rs) => self.export_image(rs, thought, step, &path),
                None => self.status = "No wgpu device to render with.".into(),
            }
        }
        if !idle {
            ui.spinner();
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    /// Renders the view at 3840×2160 offscreen and saves it as PNG, on a thread of its own (a 4K
    /// render and PNG encoding take seconds on a software GPU): the answer arrives through
    /// `export_job`, polled each frame.
    #[cfg(feature = "native")]
    pub fn export_image(&mut self, rs: &eframe::egui_wgpu::RenderState, thought: Option<&Thought>, step: usize, path: &std::path::Path) {
        let size = [3840u32, 2160u32];
        let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0] as f32, size[1] as f32));
        let mut view = self.settings(rect, 1.0, false);
        view.point_px = [view.point_px[0] * 2.0, view.point_px[1] * 2.0];
        let bg = if self.white_background { [1.0, 1.0, 1.0, 1.0] } else { [0.03, 0.03, 0.055, 1.0] };
        let image = flychess_lab::lab::jobs::window::CloudImage {
            device: rs.device.clone(),
            queue: rs.queue.clone(),
            geometry: self.geometry.clone(),
            marks: self.marks.clone(),
            rates: thought.map(|t| t.rates.clone()),
            view,
            step,
            background: bg,
            size,
        };
        self.status = format!("Exporting {}…", path.display());
        // Polled every frame while it runs (`poll_export`): nothing else to wake.
        self.export_job = Some(flychess_lab::lab::jobs::window::cloud_png(image, path.to_path_buf()));
    }

    /// The export's answer, when it has come.
    #[cfg(feature = "native")]
    fn poll_export(&mut self) {
        let Some(rx) = &self.export_job else { return };
        match rx.try_recv() {
            Ok(answer) => {
                self.status = answer.unwrap_or_else(|e| format!("Could not export: {e}"));
                self.export_job = None;
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.status = "The export stopped without an answer.".into();
                self.export_job = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
        }
    }

    /// True while an export runs.
    pub fn exporting(&self) -> bool {
        #[cfg(feature = "native")]
        {
            self.export_job.is_some()
        }
        #[cfg(not(feature = "native"))]
        {
            false
        }
    }

    fn legend(&self, ui: &mut egui::Ui, summary: Option<&ThinkSummary>, step: usize) {
        match self.mode {
            ColourMode::Activity => {
                ui.label("Rate (inferno map):");
                let (rect, _) = ui.allocate_exact_size(egui::vec2(200.0, 12.0), egui::Sense::hover());
                for k in 0..50 {
                    let c = activity_colour(k as f32 / 49.0);
                    let x0 = rect.min.x + rect.width() * k as f32 / 50.0;
                    let r = egui::Rect::from_min_max(egui::pos2(x0, rect.min.y), egui::pos2(x0 + rect.width() / 50.0 + 0.5, rect.max.y));
                    ui.painter().rect_filled(r, 0.0, Color32::from_rgb((c[0] * 255.0) as u8, (c[1] * 255.0) as u8, (c[2] * 255.0) as u8));
                }
                ui.horizontal(|ui| {
                    ui.small("0");
                    ui.add_space(170.0);
                    ui.small("1");
                });
            }
            ColourMode::Region => {}
            ColourMode::Blame => {}
        }
        ui.label("How much the board moved each region (mean |rate − empty board|):");
        let top = summary.map(|s| s.moved.iter().flat_map(|a| a.iter()).copied().fold(1e-6f32, f32::max)).unwrap_or(1.0);
        // The regions this brain has, two to a row.
        let present: Vec<Region> = Region::ALL.into_iter().filter(|r| self.region_sizes[*r as usize] > 0).collect();
        egui::Grid::new("region-legend").num_columns(4).show(ui, |ui| {
            for (k, r) in present.iter().enumerate() {
                let c = REGION_PALETTE[*r as usize];
                ui.horizontal(|ui| {
                    let (sq, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                    ui.painter().rect_filled(sq, 2.0, Color32::from_rgb(c[0], c[1], c[2]));
                    ui.label(RichText::new(r.name()).small());
                })
                .response
                .on_hover_text(format!("{} neurons", self.region_sizes[*r as usize]));
                match summary {
                    Some(s) if !s.moved.is_empty() => {
                        let v = s.moved[step.min(s.moved.len() - 1)][*r as usize];
                        ui.add(
                            egui::ProgressBar::new(v / top)
                                .desired_width(60.0)
                                .desired_height(8.0)
                                .text(RichText::new(format!("{v:.3}")).small()),
                        );
                    }
                    _ => {
                        ui.label("");
                    }
                }
                if k % 2 == 1 {
                    ui.end_row();
                }
            }
        });
    }

    fn find_panel(&mut self, ui: &mut egui::Ui, connectome: &Connectome, brain: &Brain, data: &Path) {
        ui.label("Find neurons by type or class (e.g. KC, MBON, descending):");
        ui.horizontal(|ui| {
            let r = ui.add(egui::TextEdit::singleline(&mut self.search).desired_width(150.0));
            let go = ui.button("Find").clicked() || (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)));
            if go {
                let q = self.search.clone();
                self.find(connectome, &q);
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui.add_enabled(!self.selection.is_empty(), egui::Button::new("Next (N)")).clicked() {
                self.next_in_selection();
            }
            if ui.add_enabled(!self.history.is_empty(), egui::Button::new("Undo (Ctrl+Z)")).clicked() {
                self.undo();
            }
            #[cfg(not(feature = "native"))]
            {
                // A page writes no files: the list goes to the clipboard.
                let _ = data;
                let exportable = !self.selection.is_empty() || self.selected.is_some();
                if ui.add_enabled(exportable, egui::Button::new("Copy partners CSV")).clicked() {
                    let csv = self.partners_csv(connectome, brain);
                    ui.ctx().copy_text(csv);
                    self.status = "Partners CSV copied.".into();
                }
            }
            #[cfg(feature = "native")]
            self.partner_exports(ui, connectome, brain, data);
        });
        if !self.selection.is_empty() {
            ui.small(format!("{} selected; showing {} of them", self.selection.len(), self.cursor + 1));
        }
    }

    /// The partner list's exports: a CSV where the user chooses, or into the data folder.
    #[cfg(feature = "native")]
    fn partner_exports(&mut self, ui: &mut egui::Ui, connectome: &Connectome, brain: &Brain, data: &Path) {
        let exportable = !self.selection.is_empty() || self.selected.is_some();
        if ui.add_enabled(exportable, egui::Button::new("Export partners CSV…")).clicked() {
            match rfd::FileDialog::new().add_filter("CSV", &["csv"]).set_file_name("partners.csv").save_file() {
                Some(path) => self.save_partners(ui.ctx(), connectome, brain, path),
                None => {
                    self.status =
                        "No file chosen (or no file dialog on this desktop): the \"into the data folder\" button saves without one.".into()
                }
            }
        }
        if ui.add_enabled(exportable, egui::Button::new("CSV into the data folder").small()).clicked() {
            self.save_partners(ui.ctx(), connectome, brain, export_path(data, "partners", "csv"));
        }
    }

    /// Writes the partner list as CSV to `path` on a lab thread; the answer arrives through
    /// `export_job` (polled each frame) and is said in the status line.
    #[cfg(feature = "native")]
    fn save_partners(&mut self, ctx: &egui::Context, connectome: &Connectome, brain: &Brain, path: std::path::PathBuf) {
        let csv = self.partners_csv(connectome, brain);
        self.status = format!("Saving {}…", path.display());
        self.export_job = Some(flychess_lab::lab::jobs::window::save_text(crate::ui::wake(ctx), csv, path));
    }

    /// The partner list of the selection (or the selected neuron) as CSV.
    pub fn partners_csv(&mut self, connectome: &Connectome, brain: &Brain) -> String {
        let outgoing = self.outgoing(brain);
        let n = &connectome.neurons;
        let mut out = String::from("neuron_body_id,neuron_type,direction,partner_body_id,partner_type,partner_region,weight\n");
        let list: Vec<u32> = if self.selection.is_empty() { self.selected.into_iter().collect() } else { self.selection.clone() };
        for &k in &list {
            let p = partners(brain, &outgoing, k);
            for (dir, rows) in [("input", &p.inputs), ("output", &p.outputs)] {
                for &(q, w) in rows {
                    out.push_str(&format!(
                        "{},{},{dir},{},{},{},{w}\n",
                        n.body_id[k as usize],
                        csv_field(n.type_name(k as usize)),
                        n.body_id[q as usize],
                        csv_field(n.type_name(q as usize)),
                        n.region[q as usize].name()
                    ));
                }
            }
        }
        out
    }

    fn inspector(&mut self, ui: &mut egui::Ui, thought: Option<&Thought>, connectome: &Connectome, brain: &Brain) {
        let Some(sel) = self.selected else {
            ui.weak("Click a neuron to inspect it.");
            return;
        };
        let n = &connectome.neurons;
        let i = sel as usize;
        let p = self.partners_of(brain, sel);
        ui.heading(format!("Neuron {}", n.body_id[i]));
        egui::Grid::new("neuron").num_columns(2).striped(true).show(ui, |ui| {
            let mut row = |k: &str, v: String| {
                ui.label(k);
                ui.label(v);
                ui.end_row();
            };
            row("type", n.type_name(i).to_string());
            row("class", format!("{} / {}", n.class_name(i), n.superclass_name(i)));
            row("region", n.region[i].name().to_string());
            row("transmitter", n.transmitter[i].name().to_string());
            row("inputs / outputs", format!("{} / {}", p.inputs.len(), p.outputs.len()));
            let s = n.soma_um[i];
            row("cell body (µm)", format!("{:.0}, {:.0}, {:.0}", s[0], s[1], s[2]));
        });
        if let Some(t) = thought {
            let points: Vec<[f64; 2]> =
                (0..STEPS).map(|s| [(s + 1) as f64, t.rates.get(s * t.neurons + i).copied().unwrap_or(0.0) as f64]).collect();
            egui_plot::Plot::new(("rate", sel)).height(110.0).include_y(0.0).include_y(1.0).allow_scroll(false).allow_drag(false).show(
                ui,
                |plot| {
                    plot.line(egui_plot::Line::new("rate", points));
                },
            );
        }
        let mut jump = None;
        for (title, rows) in [("Strongest inputs", &p.inputs), ("Strongest outputs", &p.outputs)] {
            ui.label(RichText::new(title).strong());
            for &(q, w) in rows.iter().take(8) {
                let text = format!("{} {} ({:+.2})", n.body_id[q as usize], n.type_name(q as usize), w);
                if ui.link(text).clicked() {
                    jump = Some(q);
                }
            }
        }
        if let Some(q) = jump {
            self.select(Some(q));
            if let Some(pos) = self.geometry.positions.get(q as usize).filter(|p| p[0].is_finite()) {
                self.camera.target = Vec3::new(pos[0], pos[1], pos[2]);
            }
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}
