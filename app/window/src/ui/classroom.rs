//! The classroom's presenter mode: the shown think told as a sequence of slides in large type,
//! readable on a projector at 1280 × 720. First the board and what the eye sees of it, then each
//! of the 12 steps (the cloud at that step, what changed most since the step before and where, the
//! regions the board moves most), then what the fly looks at (each piece's weight in its choice)
//! and last its choice (the moves it considered, its value). Space or → goes on, ← goes back, A
//! turns advancing on its own on and off, Esc leaves. The slides are views over the think and the
//! Brain view's state; nothing is worked out here but the words.

use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use shakmaty::san::San;

use flychess_lab::lab::Region;
use flychess_lab::lab::STEPS;

use crate::ui::board::{Arrow, BoardState, BoardTheme, BoardView};
use crate::ui::brain_view::{BrainView, ThinkSummary};
use crate::ui::looks::Looks;
use flychess_lab::lab::ReadyBrain;
use flychess_lab::thinker::{Seated, Thought};

/// Slides: the board, 12 steps, what it looks at, its choice.
pub const SLIDES: usize = STEPS + 3;

pub struct Presenter {
    pub slide: usize,
    pub auto: bool,
    pub seconds: f32,
    last_turn: f64,
    board: BoardState,
}

impl Default for Presenter {
    fn default() -> Self {
        Presenter { slide: 0, auto: false, seconds: 5.0, last_turn: 0.0, board: BoardState::default() }
    }
}

/// What a slide is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slide {
    Board,
    Step(usize),
    LooksAt,
    Choice,
}

impl Slide {
    pub fn of(k: usize) -> Slide {
        match k {
            0 => Slide::Board,
            k if k <= STEPS => Slide::Step(k - 1),
            k if k == STEPS + 1 => Slide::LooksAt,
            _ => Slide::Choice,
        }
    }
}

const TITLE: f32 = 34.0;
const TEXT: f32 = 24.0;

impl BrainView {
    /// The presenter, filling the window. Returns false when the user left it.
    pub fn presenter(
        &mut self,
        ui: &mut egui::Ui,
        thought: Option<&Thought>,
        summary: Option<&ThinkSummary>,
        ready: &Arc<ReadyBrain>,
        looks: &mut Looks,
        fly: Option<&Seated>,
    ) -> bool {
        if self.presenter_keys(ui) {
            return false;
        }
        let slide = Slide::of(self.presenter.slide);
        let stay = self.presenter_toolbar(ui);
        let Some(t) = thought else {
            ui.add_space(40.0);
            ui.label(RichText::new("Play a move: the fly's think is told here, step by step.").size(TITLE));
            return stay;
        };
        match slide {
            Slide::Board => self.slide_board(ui, t, ready),
            Slide::Step(k) => self.slide_step(ui, t, summary, k),
            Slide::LooksAt => self.slide_looks_at(ui, t, ready, looks, fly),
            Slide::Choice => slide_choice(ui, t),
        }
        stay
    }

    /// The presenter's keys (Space or → next, ← back, A on its own, Esc leaves) and the slides
    /// turning on their own; returns whether the user left.
    fn presenter_keys(&mut self, ui: &egui::Ui) -> bool {
        let now = ui.input(|i| i.time);
        let (next, back, auto, leave) = ui.input(|i| {
            (
                i.key_pressed(egui::Key::Space) || i.key_pressed(egui::Key::ArrowRight),
                i.key_pressed(egui::Key::ArrowLeft),
                i.key_pressed(egui::Key::A),
                i.key_pressed(egui::Key::Escape),
            )
        });
        let p = &mut self.presenter;
        if next && p.slide + 1 < SLIDES {
            p.slide += 1;
            p.last_turn = now;
        }
        if back {
            p.slide = p.slide.saturating_sub(1);
            p.last_turn = now;
        }
        if auto {
            p.auto = !p.auto;
            p.last_turn = now;
        }
        if p.auto {
            if now - p.last_turn >= p.seconds as f64 {
                p.slide = (p.slide + 1) % SLIDES;
                p.last_turn = now;
            }
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(200));
        }
        leave
    }

    /// Leave, back, next, on its own and its seconds a slide; returns false when Leave was clicked.
    fn presenter_toolbar(&mut self, ui: &mut egui::Ui) -> bool {
        let mut stay = true;
        ui.horizontal(|ui| {
            if ui.button(RichText::new("Leave (Esc)").size(16.0)).clicked() {
                stay = false;
            }
            if ui.button(RichText::new("‹ Back").size(16.0)).clicked() {
                self.presenter.slide = self.presenter.slide.saturating_sub(1);
            }
            if ui.button(RichText::new("Next ›").size(16.0)).clicked() && self.presenter.slide + 1 < SLIDES {
                self.presenter.slide += 1;
            }
            ui.checkbox(&mut self.presenter.auto, RichText::new("On its own (A)").size(16.0));
            ui.add(egui::Slider::new(&mut self.presenter.seconds, 2.0..=15.0).suffix(" s").text("a slide"));
            ui.label(RichText::new(format!("{} / {SLIDES}", self.presenter.slide + 1)).size(16.0).weak());
        });
        stay
    }

    /// The first slide: the board as the fly's eye sees it.
    fn slide_board(&mut self, ui: &mut egui::Ui, t: &Thought, ready: &Arc<ReadyBrain>) {
        let mover = if shakmaty::Position::turn(&t.position) == shakmaty::Color::White { "White" } else { "Black" };
        let sight = Looks::sight(ready, &t.position);
        let lit: u32 = sight.iter().map(|s| s.total_firing()).sum();
        let placed: u32 = sight.iter().map(|s| s.total()).sum();
        ui.label(RichText::new(format!("The fly ({mover}) looks at the board")).size(TITLE).strong());
        ui.label(RichText::new(format!(
            "The board enters through its eye: {lit} of its {placed} photoreceptors get input. Each square has its own cells; some report one kind of piece, some any piece of the fly's, some any of yours."
        ))
        .size(TEXT));
        self.presenter_board(ui, t, Looks::eye_marks(&sight), None);
    }

    /// A step of the think: the cloud at step `k` and the regions the board moved most.
    fn slide_step(&mut self, ui: &mut egui::Ui, t: &Thought, summary: Option<&ThinkSummary>, k: usize) {
        ui.label(RichText::new(format!("Step {} of {STEPS}", k + 1)).size(TITLE).strong());
        if let Some(s) = summary {
            ui.label(RichText::new(s.sentence(k)).size(TEXT));
        }
        let avail = ui.available_size();
        ui.horizontal(|ui| {
            let w = (avail.x * 0.68).max(200.0);
            self.step = k;
            self.playing = false;
            self.cloud(ui, egui::vec2(w, (avail.y - 10.0).max(120.0)), Some(t), k, false);
            ui.vertical(|ui| {
                ui.label(RichText::new("Moved most by the board").size(TEXT * 0.8).strong());
                if let Some(s) = summary.filter(|s| k < s.moved.len()) {
                    let mut order: Vec<usize> = (0..Region::COUNT).filter(|&r| self.region_sizes[r] > 0).collect();
                    order.sort_by(|&a, &b| s.moved[k][b].total_cmp(&s.moved[k][a]));
                    let top = s.moved[k][order[0]].max(1e-6);
                    for &r in order.iter().take(6) {
                        ui.label(RichText::new(Region::ALL[r].name()).size(TEXT * 0.75));
                        ui.add(
                            egui::ProgressBar::new(s.moved[k][r] / top)
                                .desired_width(avail.x * 0.26)
                                .text(RichText::new(format!("{:.3}", s.moved[k][r])).size(14.0)),
                        );
                    }
                }
            });
        });
    }

    /// What the fly looks at: each piece taken away in turn, the squares it needs most.
    fn slide_looks_at(&mut self, ui: &mut egui::Ui, t: &Thought, ready: &Arc<ReadyBrain>, looks: &mut Looks, fly: Option<&Seated>) {
        ui.label(RichText::new("What it looks at").size(TITLE).strong());
        looks.poll();
        match looks.explanation(t.id) {
            Some(e) => {
                let mut order: Vec<&flychess_lab::lab::jobs::explain::PieceEffect> = e.pieces.iter().collect();
                order.sort_by(|a, b| a.change.total_cmp(&b.change));
                let needed: Vec<String> =
                    order.iter().take(2).map(|p| format!("the {} on {} ({:+.1})", p.piece, p.square, 100.0 * p.change)).collect();
                ui.label(RichText::new(format!(
                    "Take one piece away at a time and ask again: {} keeps or loses its {:.0} %. It needs {} most; red squares lose points, blue squares gain.",
                    e.chosen_san,
                    100.0 * e.probability,
                    needed.join(" and ")
                ))
                .size(TEXT));
                self.presenter_board(ui, t, Looks::explain_marks(&e), Some(t.chosen));
            }
            None => {
                looks.request(ui.ctx(), t, fly, ready);
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(
                        RichText::new(if looks.status.is_empty() { "Taking each piece away in turn…" } else { &looks.status }).size(TEXT),
                    );
                });
                ui.ctx().request_repaint_after(std::time::Duration::from_millis(200));
            }
        }
    }
}

/// The last slide: the move played, how the fly feels about the position, and its most probable
/// moves.
fn slide_choice(ui: &mut egui::Ui, t: &Thought) {
    let san = San::from_move(&t.position, t.chosen).to_string();
    ui.label(RichText::new(format!("It plays {san}")).size(TITLE).strong());
    let feeling = match t.value {
        v if v > 0.15 => "thinks it is better",
        v if v < -0.15 => "thinks it is worse",
        _ => "thinks it is about even",
    };
    ui.label(
        RichText::new(format!("Its descending neurons give every legal move a probability; it {feeling} ({:+.2} from its side).", t.value))
            .size(TEXT),
    );
    let mut order: Vec<usize> = (0..t.policy.moves.len()).collect();
    order.sort_by(|&a, &b| t.policy.probability[b].total_cmp(&t.policy.probability[a]));
    let w = ui.available_width() * 0.6;
    egui::Grid::new("presenter-choice").num_columns(2).spacing([24.0, 10.0]).show(ui, |ui| {
        for &i in order.iter().take(6) {
            ui.label(RichText::new(San::from_move(&t.position, t.policy.moves[i]).to_string()).size(TEXT).strong());
            ui.add(
                egui::ProgressBar::new(t.policy.probability[i])
                    .desired_width(w)
                    .desired_height(28.0)
                    .text(RichText::new(format!("{:.1} %", 100.0 * t.policy.probability[i])).size(18.0)),
            );
            ui.end_row();
        }
    });
}

impl BrainView {
    /// A board filling the slide's height, with marks and the chosen move's arrow.
    fn presenter_board(
        &mut self,
        ui: &mut egui::Ui,
        t: &Thought,
        overlays: Vec<crate::ui::board::SquareMark>,
        chosen: Option<shakmaty::Move>,
    ) {
        let arrows = chosen
            .map(|m| {
                let (from, to) = crate::ui::board::move_squares(&m);
                vec![Arrow { from, to, colour: Color32::from_rgba_unmultiplied(21, 120, 27, 190) }]
            })
            .unwrap_or_default();
        let view = BoardView {
            position: &t.position,
            orientation: shakmaty::Position::turn(&t.position),
            user: None,
            last_move: None,
            theme: BoardTheme::Brown,
            arrows,
            animate: false,
            overlays,
        };
        let side = ui.available_height().min(ui.available_width()).max(160.0);
        ui.allocate_ui(egui::vec2(side, side), |ui| {
            self.presenter.board.show(ui, &view);
        });
    }
}
