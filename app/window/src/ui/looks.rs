//! What the fly looks at, shared by the Play tab's board, the Brain tab and the classroom: the
//! board lesion of a think (`sim::explain`, each piece taken away in turn, worked out on
//! a thread of its own and kept for the last few thinks by their id) and how the shown board
//! lands on the photoreceptors (`sim::eye::sight`, cheap enough for the UI thread). It
//! also turns both into marks the board widget draws on its squares.

use std::collections::VecDeque;
use std::sync::Arc;

use eframe::egui::{self, Color32};
use shakmaty::{Chess, Square};

use crate::ui::board::SquareMark;
use flychess_lab::lab::ReadyBrain;
use flychess_lab::lab::jobs::Aside;
use flychess_lab::lab::jobs::explain::{Explanation, SquareSight};
use flychess_lab::thinker::{Seated, Thought};

/// How many thinks keep their board lesion.
const KEEP: usize = 8;

/// What the Play tab's board shows on its squares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlay {
    #[default]
    Nothing,
    /// The board lesion of the shown think: how much each piece matters to the chosen move.
    LooksAt,
    /// How many of each square's photoreceptors the shown board lights.
    Eye,
}

#[derive(Default)]
pub struct Looks {
    pub overlay: Overlay,
    /// Lesions done, newest last: (think id, explanation).
    done: VecDeque<(u64, Arc<Explanation>)>,
    job: Option<(u64, Aside<Explanation>)>,
    pub status: String,
}

/// The colour of a probability change: red where the move needed the piece, blue where it did
/// better without it; alpha grows with |change| / `scale`.
pub fn change_colour(change: f32, scale: f32) -> Color32 {
    let a = ((change.abs() / scale.max(1e-6)).sqrt().min(1.0) * 190.0) as u8;
    if change < 0.0 { Color32::from_rgba_unmultiplied(215, 40, 40, a) } else { Color32::from_rgba_unmultiplied(40, 90, 225, a) }
}

impl Looks {
    /// The lesion of think `id`, when done.
    pub fn explanation(&self, id: u64) -> Option<Arc<Explanation>> {
        self.done.iter().find(|(k, _)| *k == id).map(|(_, e)| e.clone())
    }

    /// True while a lesion is being worked out.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Takes in a finished lesion.
    pub fn poll(&mut self) {
        let Some((id, rx)) = &self.job else { return };
        match rx.try_recv() {
            Ok(Ok(e)) => {
                let id = *id;
                self.done.push_back((id, Arc::new(e)));
                while self.done.len() > KEEP {
                    self.done.pop_front();
                }
                self.status.clear();
                self.job = None;
            }
            Ok(Err(e)) => {
                self.status = format!("What it looks at could not be worked out: {e}");
                self.job = None;
            }
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                self.status = "What it looks at stopped without an answer.".into();
                self.job = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
        }
    }

    /// Starts the lesion of `thought` (by `fly`, a readout fly) unless it is done or under way.
    pub fn request(&mut self, ctx: &egui::Context, thought: &Thought, fly: Option<&Seated>, ready: &Arc<ReadyBrain>) {
        if self.explanation(thought.id).is_some() || self.job.as_ref().is_some_and(|(id, _)| *id == thought.id) {
            return;
        }
        let Some(readout) = fly.and_then(|f| f.readout()).cloned() else {
            self.status = "The dopamine fly has no readout to take pieces away from: what it looks at is for readout flies.".into();
            return;
        };
        let rx = flychess_lab::lab::jobs::explain::start(crate::ui::wake(ctx), ready.clone(), readout, thought.position.clone());
        self.job = Some((thought.id, rx));
    }

    /// Marks for the board: each piece's change of the chosen move's probability, in points.
    pub fn explain_marks(e: &Explanation) -> Vec<SquareMark> {
        let scale = e.pieces.iter().map(|p| p.change.abs()).fold(1e-6, f32::max);
        e.pieces
            .iter()
            .map(|p| SquareMark {
                square: Square::new(u32::from(p.index)),
                fill: change_colour(p.change, scale),
                text: format!("{:+.1}", 100.0 * p.change),
            })
            .collect()
    }

    /// Marks for the board: how many of each square's photoreceptors this board lights.
    pub fn eye_marks(sight: &[SquareSight]) -> Vec<SquareMark> {
        sight
            .iter()
            .map(|s| {
                let lit = s.total_firing();
                let share = lit as f32 / s.total().max(1) as f32;
                let fill = Color32::from_rgba_unmultiplied(255, 200, 40, (share.sqrt() * 170.0) as u8);
                SquareMark { square: Square::new(u32::from(s.square)), fill, text: format!("{lit}/{}", s.total()) }
            })
            .collect()
    }

    /// What the eye sees of `position` on `ready`'s brain.
    pub fn sight(ready: &ReadyBrain, position: &Chess) -> Vec<SquareSight> {
        flychess_lab::lab::jobs::explain::sight(ready, position)
    }
}

/// The roles of a square's photoreceptors in words, for hover text.
pub fn sight_text(s: &SquareSight) -> String {
    const ROLES: [&str; 8] =
        ["R1-R6 pawn", "R1-R6 knight", "R1-R6 bishop", "R1-R6 rook", "R1-R6 queen", "R1-R6 king", "R7 own piece", "R8 opponent's piece"];
    let mut lines = vec![format!("{} of {} photoreceptors get input from this board", s.total_firing(), s.total())];
    for (k, name) in ROLES.iter().enumerate() {
        if s.cells[k] > 0 {
            lines.push(format!("{name}: {} cells, {} lit", s.cells[k], s.firing[k]));
        }
    }
    lines.join("\n")
}
