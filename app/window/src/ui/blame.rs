//! The Brain tab's "error going back" (seed "Watching the error go back"): for the shown think's
//! position, Stockfish labels it (its 8 best moves at depth 12, or the dataset's labels where the
//! position is one of them), and the same hand-written backward pass brain training uses
//! (`sim::bptt::blame`, all 12 steps) gives d loss / d rate of every neuron after every step for
//! the brain's own fly. The cloud then shows it with a diverging map — red where more activity
//! would lower the loss, blue where less would — each step scaled to its own largest value,
//! playing from step 12 back to step 1; a chart shows how much blame each region carries per
//! step (on a log scale: it grows about tenfold a step on its way back). The work runs on a
//! thread of its own; the brain's backward-pass tables (`bptt::Base`) are made once per brain.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};

use flychess_lab::lab::jobs::blame::{KeptBase, ShownBlame};
use flychess_lab::lab::{ReadyBrain, Region};
use flychess_render::cloud::REGION_PALETTE;

#[derive(Default)]
pub struct BlamePanel {
    job: Option<Receiver<Result<ShownBlame, String>>>,
    pub shown: Option<ShownBlame>,
    /// The cloud shows the blame instead of the rates.
    pub showing: bool,
    pub status: String,
    /// Stockfish as the settings name it (None: searched beside the program, on PATH and in the usual install folders).
    pub stockfish: Option<PathBuf>,
    /// The brain's tables for the backward pass, by brain checksum.
    base: KeptBase,
}

impl BlamePanel {
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// The blame to draw for the think `of`, when it is shown.
    pub fn drawn_for(&self, of: u64) -> Option<&ShownBlame> {
        self.shown.as_ref().filter(|s| self.showing && s.of == of)
    }

    fn poll(&mut self) {
        let Some(rx) = &self.job else { return };
        if let Ok(r) = rx.try_recv() {
            self.job = None;
            match r {
                Ok(s) => {
                    self.status.clear();
                    self.shown = Some(s);
                    self.showing = true;
                }
                Err(e) => self.status = format!("The error could not be sent back: {e}"),
            }
        }
    }

    /// Starts working out the blame of `fen` (the think `of`).
    pub fn start(&mut self, ctx: &egui::Context, ready: Arc<ReadyBrain>, data: PathBuf, fen: String, of: u64) {
        let (base, stockfish) = (self.base.clone(), self.stockfish.clone());
        self.job = Some(flychess_lab::lab::jobs::blame::start(crate::ui::wake(ctx), ready, data, fen, of, base, stockfish));
        self.status = "Labelling the position with Stockfish and sending the error back through the 12 steps…".into();
    }

    pub fn show(&mut self, ui: &mut egui::Ui, thought: Option<&flychess_lab::thinker::Thought>, ready: &Arc<ReadyBrain>, data: &Path) {
        self.poll();
        ui.label(RichText::new("The error going back").strong()).on_hover_text(
            "d loss / d rate of every neuron at every step for this position: what backprop through time would tell each neuron",
        );
        ui.horizontal(|ui| {
            let clicked = ui.add_enabled(thought.is_some() && !self.busy(), egui::Button::new("Send the error back")).clicked();
            if clicked && let Some(t) = thought {
                use shakmaty::EnPassantMode;
                let fen = shakmaty::fen::Fen::from_position(&t.position, EnPassantMode::Legal).to_string();
                self.start(ui.ctx(), ready.clone(), data.to_path_buf(), fen, t.id);
            }
            if self.busy() {
                ui.spinner();
            }
            if let Some(s) = &self.shown
                && thought.is_some_and(|t| t.id == s.of)
            {
                ui.checkbox(&mut self.showing, "Show it in the cloud");
            }
        });
        if !self.status.is_empty() {
            ui.small(&self.status);
        }
        let Some(s) = self.shown.as_ref().filter(|s| thought.is_some_and(|t| t.id == s.of)) else { return };
        ui.small(format!(
            "Fly {}: loss {:.3} against Stockfish's shares. Red: more activity here would lower the loss; blue: less. Each step is scaled to its own 99th percentile ({:.1e} at step 12, {:.1e} at step 1); the largest values are {:.1e} and {:.1e}.",
            s.fly, s.blame.loss, s.blame.scale(11), s.blame.scale(0), s.blame.largest[11], s.blame.largest[0]
        ));
        // The six regions with the most blame over the 12 steps (the chart stays readable).
        let mut present: Vec<Region> =
            Region::ALL.into_iter().filter(|r| (0..12).any(|t| s.blame.region_mean[t][*r as usize] > 0.0)).collect();
        let total = |r: &Region| (0..12).map(|t| s.blame.region_mean[t][*r as usize].max(1e-30).log10()).sum::<f64>();
        present.sort_by(|a, b| total(b).total_cmp(&total(a)));
        present.truncate(6);
        Plot::new("blame-by-region")
            .height(170.0)
            .legend(Legend::default().position(egui_plot::Corner::LeftBottom))
            .x_axis_label("step")
            .y_axis_label("log10 mean |d loss / d rate|")
            .allow_scroll(false)
            .show(ui, |plot| {
                for r in present.iter().copied() {
                    let points: PlotPoints = (0..12)
                        .filter(|&t| s.blame.region_mean[t][r as usize] > 0.0)
                        .map(|t| [t as f64 + 1.0, s.blame.region_mean[t][r as usize].log10()])
                        .collect();
                    let c = REGION_PALETTE[r as usize];
                    plot.line(Line::new(r.name(), points).color(Color32::from_rgb(c[0], c[1], c[2])));
                }
            });
    }
}
