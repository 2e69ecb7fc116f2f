//! The Play tab: a view over the game in play (`lab::Match`) on the board widget, with a
//! player bar above and below, the brain card, and the right panel — what the fly says after its
//! move, the moves it considered and the moves it expects from you (each with Stockfish's accuracy
//! and verdict once graded), the opening name, the move list, both players' accuracy, and the
//! game's buttons (resign, takeback, hint, new game, flip, back/forward, PGN save/load/copy, FEN
//! copy). It keeps only what a view keeps (the board's orientation and drag state, the dialogs,
//! the typed move); every change to the game goes to the lab as a `Command`.

use std::collections::HashMap;

use eframe::egui::{self, Color32, RichText};
use shakmaty::san::San;
use shakmaty::{Color, Move, Position};

use flychess_lab::lab::Verdict;

use crate::ui::board::{Arrow, BoardAction, BoardState, BoardTheme, BoardView};
use flychess_lab::game::{Game, parse_move};
use flychess_lab::lab::{CANDIDATES, Command, Lab, Match};
use flychess_lab::openings::Openings;
use flychess_lab::sound::Sound;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RightTab {
    Considered,
    Expects,
}

pub struct PlayTab {
    pub orientation: Color,
    pub board: BoardState,
    pub blur: bool,
    pub right_tab: RightTab,
    resign_asked: bool,
    pub typed: String,
    pub pgn_path: String,
    pub new_game: Option<NewGame>,
    pub report_open: bool,
    /// The user asked to train a fly for this brain (the window opens the Train tab).
    pub wants_training: bool,
    /// The candidate move under the pointer (its arrow is drawn on the board).
    pub hovered: Option<Move>,
    /// List every legal move, not only the top CANDIDATES.
    pub all_moves: bool,
}

/// The new-game dialog's choices.
#[derive(Clone, Debug)]
pub struct NewGame {
    pub fly: String,
    /// None: random.
    pub colour: Option<Color>,
}

/// What the tab needs from the window each frame: the lab (the game, the players, the workers)
/// and the view settings.
pub struct PlayContext<'a> {
    pub lab: &'a mut Lab,
    pub theme: BoardTheme,
    pub animate: bool,
    /// What the fly looks at and what its eye sees (shared with the Brain tab).
    pub looks: &'a mut crate::ui::looks::Looks,
}

impl PlayTab {
    pub fn new(user: Color) -> PlayTab {
        PlayTab {
            orientation: user,
            board: BoardState::default(),
            blur: false,
            right_tab: RightTab::Considered,
            resign_asked: false,
            typed: String::new(),
            pgn_path: String::new(),
            new_game: None,
            report_open: false,
            wants_training: false,
            hovered: None,
            all_moves: false,
        }
    }

    /// A new game began: the board turns to the user and the last game's dialogs go.
    pub fn game_started(&mut self, user: Color) {
        self.orientation = user;
        self.board.premove = None;
        self.board.promotion = None;
        self.resign_asked = false;
        self.report_open = false;
    }

    /// Plays the premove once it is the user's turn again (dropped, and said, when not legal).
    pub fn play_premove(&mut self, cx: &mut PlayContext) {
        let game = &cx.lab.play();
        if game.fly_to_move() || game.game.is_over() {
            return;
        }
        let Some(pre) = self.board.premove.take() else { return };
        match pre.legal_in(game.game.current()) {
            Some(m) => {
                cx.lab.command(Command::Play(m));
            }
            None => {
                cx.lab.command(Command::Say("Premove dropped: no longer legal.".into()));
            }
        }
    }

    pub fn keyboard(&mut self, ctx: &egui::Context, cx: &mut PlayContext) {
        let typing = ctx.memory(|m| m.focused().is_some());
        if typing {
            return;
        }
        let (left, right, up, down, flip) = ctx.input(|i| {
            (
                i.key_pressed(egui::Key::ArrowLeft),
                i.key_pressed(egui::Key::ArrowRight),
                i.key_pressed(egui::Key::ArrowUp),
                i.key_pressed(egui::Key::ArrowDown),
                i.key_pressed(egui::Key::F),
            )
        });
        let plies = cx.lab.play().game.plies();
        let shown = cx.lab.play().shown_ply();
        if left && shown > 0 {
            cx.lab.command(Command::Show(Some(shown - 1)));
        }
        if right {
            cx.lab.command(Command::Show(if shown + 1 >= plies { None } else { Some(shown + 1) }));
        }
        if up {
            cx.lab.command(Command::Show(Some(0)));
        }
        if down {
            cx.lab.command(Command::Show(None));
        }
        if flip {
            self.orientation = !self.orientation;
        }
    }

    /// The tab's whole UI.
    pub fn show(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext, brain_card: &mut dyn FnMut(&mut egui::Ui, &Match)) {
        self.keyboard(ui.ctx(), cx);
        egui::Panel::right("play-right").default_size(380.0).min_size(280.0).resizable(true).show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                self.right_panel(ui, cx);
                ui.separator();
                brain_card(ui, cx.lab.play());
            });
        });
        egui::CentralPanel::default().show(ui, |ui| {
            let top = !self.orientation;
            self.player_bar(ui, top, cx);
            let bar_height = 30.0;
            let avail = ui.available_size() - egui::vec2(0.0, bar_height + 8.0);
            let ply = cx.lab.play().shown_ply();
            // What the fly looks at is drawn on the position it thought in (the board is then
            // only looked at: turn the view off to play on).
            let looking = (cx.looks.overlay == crate::ui::looks::Overlay::LooksAt)
                .then(|| cx.lab.play().shown_thought().map(|t| (t.position.clone(), t.chosen)))
                .flatten();
            let live = cx.lab.play().cursor().is_none() && looking.is_none();
            let position = looking.as_ref().map(|(p, _)| p.clone()).unwrap_or_else(|| cx.lab.play().game.position(ply).clone());
            let mut arrows = Vec::new();
            if let (true, Some((fen, m))) = (live, &cx.lab.play().hint)
                && *fen == cx.lab.play().game.fen(ply)
            {
                let (from, to) = crate::ui::board::move_squares(m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(0, 48, 136, 170) });
            }
            if let Some((_, m)) = &looking {
                let (from, to) = crate::ui::board::move_squares(m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(21, 120, 27, 190) });
            }
            if let Some(m) = self.hovered {
                let (from, to) = crate::ui::board::move_squares(&m);
                arrows.push(Arrow { from, to, colour: Color32::from_rgba_unmultiplied(230, 120, 20, 190) });
            }
            let overlays = self.overlays(ui.ctx(), cx, &position);
            let view = BoardView {
                position: &position,
                orientation: self.orientation,
                user: (live && !cx.lab.play().game.is_over() && cx.lab.play().fly.is_some()).then_some(cx.lab.play().user),
                last_move: if looking.is_some() { None } else { ply.checked_sub(1).map(|p| cx.lab.play().game.moves()[p]) },
                theme: cx.theme,
                arrows,
                animate: cx.animate,
                overlays,
            };
            let value = cx.lab.play().shown_thought().map(|t| if t.position.turn() == Color::White { t.value } else { -t.value });
            let action = ui
                .allocate_ui(avail.max(egui::vec2(64.0, 64.0)), |ui| {
                    ui.horizontal_centered(|ui| {
                        let side = (ui.available_width() - 30.0).min(ui.available_height()).max(64.0);
                        self.evaluation_bar(ui, value, side);
                        ui.allocate_ui(egui::vec2(side, side), |ui| ui.centered_and_justified(|ui| self.board.show(ui, &view)).inner).inner
                    })
                    .inner
                })
                .inner;
            match action {
                Some(BoardAction::Move(m)) => {
                    cx.lab.command(Command::Play(m));
                }
                Some(BoardAction::Illegal) => {
                    cx.lab.command(Command::Sound(Sound::Illegal));
                }
                Some(BoardAction::Premoved) | None => {}
            }
            self.player_bar(ui, !top, cx);
        });
        self.new_game_window(ui.ctx(), cx);
        self.report_window(ui.ctx(), cx);
    }

    /// The fly's value of the shown think as a bar beside the board (White's share from the
    /// bottom when White is at the bottom) and a number, from White's side.
    fn evaluation_bar(&self, ui: &mut egui::Ui, value: Option<f32>, height: f32) {
        let (rect, response) = ui.allocate_exact_size(egui::vec2(22.0, height), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 2.0, Color32::from_gray(40));
        let v = value.unwrap_or(0.0).clamp(-1.0, 1.0);
        let white = rect.height() * (1.0 + v) / 2.0;
        let white_rect = if self.orientation == Color::White {
            egui::Rect::from_min_max(egui::pos2(rect.min.x, rect.max.y - white), rect.max)
        } else {
            egui::Rect::from_min_max(rect.min, egui::pos2(rect.max.x, rect.min.y + white))
        };
        painter.rect_filled(white_rect, 2.0, Color32::from_gray(235));
        if let Some(v) = value {
            let text = format!("{v:+.2}");
            let at = if (v >= 0.0) == (self.orientation == Color::White) {
                rect.center_bottom() - egui::vec2(0.0, 4.0)
            } else {
                rect.center_top() + egui::vec2(0.0, 4.0)
            };
            let anchor = if at.y > rect.center().y { egui::Align2::CENTER_BOTTOM } else { egui::Align2::CENTER_TOP };
            let colour = if v >= 0.0 { Color32::from_gray(30) } else { Color32::from_gray(220) };
            painter.text(at, anchor, text, egui::FontId::proportional(9.5), colour);
        }
        response.on_hover_text(match value {
            Some(v) => format!("The fly's value of the position it moved in, from White's side: {v:+.2} (−1 lost, +1 won)."),
            None => "The fly's value appears once it has thought.".into(),
        });
    }

    /// The squares' marks for the board overlay chosen (what the fly looks at, its eye).
    fn overlays(&mut self, ctx: &egui::Context, cx: &mut PlayContext, position: &shakmaty::Chess) -> Vec<crate::ui::board::SquareMark> {
        use crate::ui::looks::{Looks, Overlay};
        cx.looks.poll();
        let Some(ready) = cx.lab.ready() else { return Vec::new() };
        match cx.looks.overlay {
            Overlay::Nothing => Vec::new(),
            Overlay::Eye => Looks::eye_marks(&Looks::sight(ready, position)),
            Overlay::LooksAt => {
                // The lesion of the shown think, drawn on the position it thought in.
                let Some(t) = cx.lab.play().shown_thought().filter(|t| t.position == *position) else { return Vec::new() };
                match cx.looks.explanation(t.id) {
                    Some(e) => Looks::explain_marks(&e),
                    None => {
                        let t = t.clone();
                        cx.looks.request(ctx, &t, cx.lab.play().fly.as_ref(), ready);
                        Vec::new()
                    }
                }
            }
        }
    }

    fn player_bar(&self, ui: &mut egui::Ui, colour: Color, cx: &PlayContext) {
        ui.horizontal(|ui| {
            let (dot, _) = ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
            let fill = if colour == Color::White { Color32::from_gray(240) } else { Color32::from_gray(20) };
            ui.painter().circle(dot.center(), 6.0, fill, egui::Stroke::new(1.0, Color32::GRAY));
            if colour == cx.lab.play().user {
                ui.label(RichText::new(cx.lab.play().opponent_name.as_deref().unwrap_or("You")).strong());
            } else {
                let elo = cx.lab.ratings().get(&cx.lab.play().fly_name).cloned().unwrap_or_else(|| "unrated".into());
                ui.label(RichText::new(format!("Fly {}", cx.lab.play().fly_name)).strong());
                ui.label(RichText::new(elo).weak());
                if let Some((_, since)) = cx.lab.play().thinking {
                    let secs = ui.input(|i| i.time) - since;
                    ui.spinner();
                    ui.label(format!("thinking… {secs:.1} s"));
                    ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
                } else if cx.lab.play().replaying() {
                    ui.label("replaying its 12 steps…");
                }
            }
            if let Some((acc, n)) = cx.lab.play().accuracy(colour) {
                ui.label(format!("accuracy {acc:.0}% ({n} {} graded)", if n == 1 { "move" } else { "moves" }));
            }
        });
    }

    fn right_panel(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        ui.heading("Game");
        if let Some(end) = cx.lab.play().game.ending() {
            ui.label(RichText::new(format!("{} — {}", end.result, end.reason)).strong().color(Color32::from_rgb(230, 170, 60)));
        } else if cx.lab.play().fly.is_none() {
            ui.label("No fly to play on this brain: pick one in New game, or train one.");
            if ui.button("Train a fly for this brain…").clicked() {
                self.wants_training = true;
            }
        }
        let uci_moves = cx.lab.play().game.uci();
        if cx.lab.play().game.starts_from_initial_position()
            && let Some(o) = Openings::shipped().name(&uci_moves)
        {
            ui.label(RichText::new(format!("{} {}", o.eco, o.name)).italics());
        }
        self.fly_says(ui, cx);
        ui.horizontal(|ui| {
            ui.toggle_value(&mut self.blur, "Blur").on_hover_text("Hide the fly's probabilities and grades");
            let mut imagination = cx.lab.play().imagination();
            if ui
                .checkbox(&mut imagination, "Imagination")
                .on_hover_text("The fly also looks at the board after each of its own moves (never your replies)")
                .changed()
            {
                cx.lab.command(Command::Imagination(imagination));
            }
        });
        ui.horizontal(|ui| {
            use crate::ui::looks::Overlay;
            ui.label("Board:");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::Nothing, "pieces");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::LooksAt, "what it looks at")
                .on_hover_text("Each piece taken off the board in turn: how many points of its chosen move's probability go missing without it (red) or come (blue). Shown on the position it thought in.");
            ui.selectable_value(&mut cx.looks.overlay, Overlay::Eye, "its eye")
                .on_hover_text("How many of each square's photoreceptors this board lights, before step 1");
        });
        if cx.looks.overlay == crate::ui::looks::Overlay::LooksAt {
            match cx.lab.play().shown_thought() {
                Some(t) => match cx.looks.explanation(t.id) {
                    Some(e) => {
                        let top = e.pieces.iter().min_by(|a, b| a.change.total_cmp(&b.change));
                        let mut text = format!("It plays {} ({:.1} %).", e.chosen_san, 100.0 * e.probability);
                        if let Some(p) = top {
                            text.push_str(&format!(
                                " Without the {} on {} it would give it {:+.1} points.",
                                p.piece,
                                p.square,
                                100.0 * p.change
                            ));
                        }
                        ui.small(text);
                        egui::CollapsingHeader::new("Each piece taken away").id_salt("looks-at-pieces").show(ui, |ui| {
                            let mut order: Vec<&flychess_lab::lab::jobs::explain::PieceEffect> = e.pieces.iter().collect();
                            order.sort_by(|a, b| a.change.total_cmp(&b.change));
                            egui::Grid::new("looks-at-grid").num_columns(4).striped(true).show(ui, |ui| {
                                for h in ["piece", "square", "its move", "descending neurons"] {
                                    ui.small(RichText::new(h).strong());
                                }
                                ui.end_row();
                                for p in order {
                                    ui.small(&p.piece);
                                    ui.small(&p.square);
                                    ui.small(format!("{:+.2} points", 100.0 * p.change));
                                    ui.small(format!("{:.4} (largest {:.3})", p.descending_change, p.descending_largest))
                                        .on_hover_text("Mean |change| of the descending neurons' read rates without this piece, and the largest change of one of them");
                                    ui.end_row();
                                }
                            });
                        });
                    }
                    None if cx.looks.busy() => {
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.small("taking each piece away in turn…");
                        });
                    }
                    None => {
                        ui.small(&cx.looks.status);
                    }
                },
                None => {
                    ui.weak("Once the fly has thought, each piece's weight in its choice shows on the board.");
                }
            }
        }
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.right_tab, RightTab::Considered, "Fly considered");
            ui.selectable_value(&mut self.right_tab, RightTab::Expects, "Fly expects");
        });
        self.candidate_list(ui, cx);
        ui.label(RichText::new(cx.lab.grader_status()).small().weak());
        ui.separator();
        self.move_list(ui, cx);
        ui.separator();
        self.buttons(ui, cx);
    }

    fn fly_says(&self, ui: &mut egui::Ui, cx: &PlayContext) {
        let Some(ply) = cx.lab.play().shown_key() else { return };
        let t = &cx.lab.play().thoughts[&ply];
        let Some(m) = cx.lab.play().game.moves().get(ply) else { return };
        let san = San::from_move(cx.lab.play().game.position(ply), *m).to_string();
        let p = t.policy.moves.iter().position(|x| x == m).map(|i| t.policy.probability[i]).unwrap_or(0.0);
        let feeling = match t.value {
            v if v > 0.5 => "I think I'm winning.",
            v if v > 0.15 => "I think I'm a bit better.",
            v if v > -0.15 => "I think it's about even.",
            v if v > -0.5 => "I think you're a bit better.",
            _ => "I think you're winning.",
        };
        let prob = if self.blur { String::new() } else { format!(" I gave it {:.0}%.", 100.0 * p) };
        let mut text = format!("“{san}.{prob} {feeling}”");
        if let Some(fav) = t.skipped_favourite {
            let fav_san = San::from_move(cx.lab.play().game.position(ply), fav).to_string();
            text.push_str(&format!(" (My favourite was {fav_san}, but it would repeat an earlier position.)"));
        }
        if let Some(grade) = cx.lab.play().grade_of(ply, m).filter(|_| !self.blur) {
            text.push_str(&format!(" Stockfish: {} ({:.0}%).", grade.verdict.name(), grade.accuracy));
        }
        ui.label(RichText::new(text).size(15.0));
        ui.small(format!("{:.0} ms for 12 steps of {} neurons and the readout", t.think_ms, t.neurons));
    }

    fn candidate_list(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        self.hovered = None;
        let plies = cx.lab.play().game.plies();
        // Considered: the fly's move in (or last before) the position shown. Expects: its forecast
        // for the user's move after it.
        let fly_ply = cx.lab.play().shown_key();
        let ply = match self.right_tab {
            RightTab::Considered => fly_ply,
            RightTab::Expects => fly_ply.map(|p| p + 1),
        };
        let Some(ply) = ply else {
            ui.weak("The fly has not moved yet.");
            return;
        };
        let list = cx.lab.play().candidates(ply);
        if list.is_empty() {
            ui.weak("Nothing yet.");
            return;
        }
        let pos = cx.lab.play().game.position(ply).clone();
        // Expectations are graded only once the user has moved.
        let graded = ply < plies;
        let played = cx.lab.play().game.moves().get(ply).copied();
        let shown = if self.all_moves { list.len() } else { CANDIDATES.min(list.len()) };
        let mut hovered = None;
        egui::Grid::new(("candidates", ply)).num_columns(4).striped(true).show(ui, |ui| {
            for (m, p) in list.iter().take(shown) {
                let san = San::from_move(&pos, *m).to_string();
                let label = if Some(*m) == played { RichText::new(format!("» {san}")).strong() } else { RichText::new(san) };
                let mut over = ui.add(egui::Label::new(label).sense(egui::Sense::hover())).hovered();
                if self.blur {
                    ui.label("•••");
                } else {
                    over |= ui.add(egui::ProgressBar::new(*p).desired_width(90.0).text(format!("{:.1}%", 100.0 * p))).hovered();
                }
                if over {
                    hovered = Some(*m);
                }
                match (graded && !self.blur).then(|| cx.lab.play().grade_of(ply, m)).flatten() {
                    Some(g) => {
                        ui.label(format!("{:.0}%", g.accuracy));
                        ui.label(RichText::new(g.verdict.name()).color(verdict_colour(g.verdict)));
                    }
                    None => {
                        ui.label("");
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
        self.hovered = hovered;
        if list.len() > CANDIDATES {
            let text = if self.all_moves { format!("Top {CANDIDATES} only") } else { format!("All {} legal moves", list.len()) };
            if ui
                .small_button(text)
                .on_hover_text("The fly gives every legal move a probability; the list shows the top ones unless asked")
                .clicked()
            {
                self.all_moves = !self.all_moves;
            }
        }
    }

    fn move_list(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        let book = Openings::shipped();
        let first_black = cx.lab.play().game.position(0).turn() == Color::Black;
        let start_number = cx.lab.play().game.position(0).fullmoves().get() as usize;
        let shown = cx.lab.play().shown_ply();
        egui::ScrollArea::vertical().id_salt("moves").max_height(220.0).stick_to_bottom(true).show(ui, |ui| {
            egui::Grid::new("move-list").num_columns(3).show(ui, |ui| {
                let plies = cx.lab.play().game.plies();
                let mut ply = 0;
                let mut row = 0;
                while ply < plies {
                    ui.label(format!("{}.", start_number + row));
                    for col in 0..2 {
                        if (row == 0 && col == 0 && first_black) || ply >= plies {
                            ui.label(if ply >= plies { "" } else { "…" });
                            continue;
                        }
                        let m = cx.lab.play().game.moves()[ply];
                        let mut text = cx.lab.play().game.san()[ply].clone();
                        if cx.lab.play().game.starts_from_initial_position() && book.is_book(cx.lab.play().game.position(ply + 1)) {
                            text.push_str(" ·");
                        }
                        let mut rich = RichText::new(text);
                        if !self.blur
                            && let Some(g) = cx.lab.play().grade_of(ply, &m)
                            && g.verdict != Verdict::Best
                            && g.verdict != Verdict::Good
                        {
                            rich = rich.color(verdict_colour(g.verdict));
                        }
                        if ui.selectable_label(shown == ply + 1, rich).clicked() {
                            cx.lab.command(Command::Show(if ply + 1 == plies { None } else { Some(ply + 1) }));
                        }
                        ply += 1;
                    }
                    row += 1;
                    ui.end_row();
                }
            });
        });
    }

    fn buttons(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("«").on_hover_text("Start (Up arrow)").clicked() {
                cx.lab.command(Command::Show(Some(0)));
            }
            if ui.button("‹").on_hover_text("Back (Left arrow)").clicked() {
                cx.lab.command(Command::Show(Some(cx.lab.play().shown_ply().saturating_sub(1))));
            }
            if ui.button("›").on_hover_text("Forward (Right arrow)").clicked() {
                let next = cx.lab.play().shown_ply() + 1;
                cx.lab.command(Command::Show(if next >= cx.lab.play().game.plies() { None } else { Some(next) }));
            }
            if ui.button("»").on_hover_text("Now (Down arrow)").clicked() {
                cx.lab.command(Command::Show(None));
            }
            if ui.button("Flip").on_hover_text("F").clicked() {
                self.orientation = !self.orientation;
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui.button("Take back").clicked() {
                cx.lab.command(Command::TakeBack);
            }
            let hint_enabled = cx.lab.grader().is_some() && !cx.lab.play().game.is_over() && !cx.lab.play().fly_to_move();
            if ui.add_enabled(hint_enabled, egui::Button::new("Hint")).on_hover_text("Stockfish's best move as an arrow").clicked() {
                cx.lab.command(Command::Hint);
            }
            let resign = if self.resign_asked { "Really resign?" } else { "Resign" };
            if ui.add_enabled(!cx.lab.play().game.is_over(), egui::Button::new(resign)).clicked() {
                if self.resign_asked {
                    let user = cx.lab.play().user;
                    cx.lab.command(Command::Resign(user));
                    self.resign_asked = false;
                } else {
                    self.resign_asked = true;
                }
            }
            if ui.button("New game").clicked() {
                self.new_game = Some(NewGame { fly: cx.lab.play().fly_name.clone(), colour: Some(cx.lab.play().user) });
            }
            if ui.add_enabled(cx.lab.play().game.plies() > 0, egui::Button::new("Report")).clicked() {
                self.report_open = true;
            }
        });
        ui.horizontal(|ui| {
            ui.label("Move:");
            let r = ui.add(egui::TextEdit::singleline(&mut self.typed).hint_text("e4, Nf3, e2e4").desired_width(90.0));
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let text = std::mem::take(&mut self.typed);
                if cx.lab.play().game.turn() == cx.lab.play().user && cx.lab.play().cursor().is_none() {
                    match parse_move(cx.lab.play().game.current(), &text) {
                        Ok(m) => {
                            cx.lab.command(Command::Play(m));
                        }
                        Err(e) => {
                            cx.lab.command(Command::Say(e.to_string()));
                        }
                    }
                } else {
                    cx.lab.command(Command::Say("It is not your turn.".into()));
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui.button("Copy FEN").clicked() {
                ui.ctx().copy_text(cx.lab.play().game.fen(cx.lab.play().shown_ply()));
                cx.lab.command(Command::Say("FEN copied.".into()));
            }
            if ui.button("Copy PGN").clicked() {
                ui.ctx().copy_text(cx.lab.play().pgn());
                cx.lab.command(Command::Say("PGN copied.".into()));
            }
        });
        #[cfg(feature = "native")]
        self.pgn_files(ui, cx);
        #[cfg(not(feature = "native"))]
        ui.weak("PGN files need the desktop program (flychess): copy the PGN instead.");
        if !cx.lab.play().status().is_empty() {
            ui.label(RichText::new(cx.lab.play().status()).small());
        }
    }

    /// A PGN file to save the game to or load one from (the desktop program's: a page has no files).
    #[cfg(feature = "native")]
    fn pgn_files(&mut self, ui: &mut egui::Ui, cx: &mut PlayContext) {
        ui.horizontal(|ui| {
            ui.label("PGN file:");
            ui.add(egui::TextEdit::singleline(&mut self.pgn_path).desired_width(140.0).hint_text("path/to/game.pgn"));
            if ui.button("…").on_hover_text("Choose a file").clicked() {
                match rfd::FileDialog::new().add_filter("PGN", &["pgn"]).set_file_name("game.pgn").save_file() {
                    Some(p) => self.pgn_path = p.display().to_string(),
                    None => {
                        cx.lab.command(Command::Say("No file chosen (or no file dialog on this desktop): type a path instead.".into()));
                    }
                }
            }
        });
        ui.horizontal(|ui| {
            if ui.add_enabled(!self.pgn_path.is_empty(), egui::Button::new("Save PGN")).clicked() {
                cx.lab.command(Command::SavePgn(std::path::PathBuf::from(&self.pgn_path)));
            }
            if ui.add_enabled(!self.pgn_path.is_empty(), egui::Button::new("Load PGN")).clicked() {
                cx.lab.command(Command::LoadPgn(std::path::PathBuf::from(&self.pgn_path)));
            }
        });
    }

    fn new_game_window(&mut self, ctx: &egui::Context, cx: &mut PlayContext) {
        let Some(mut ng) = self.new_game.take() else { return };
        let mut open = true;
        let mut start = false;
        // Centred over the board: a dialog about the game sits on the game.
        egui::Window::new("New game")
            .open(&mut open)
            .collapsible(false)
            .pivot(egui::Align2::CENTER_CENTER)
            .default_pos(self.board.rect.center())
            .show(ctx, |ui| {
                ui.label("Opponent:");
                // The opponents scroll within half the window's height, so a long roster (a
                // researcher's many Charles runs and flies) never pushes Start off the screen.
                let most = (ctx.content_rect().height() * 0.5).max(120.0);
                egui::ScrollArea::vertical().id_salt("opponents").max_height(most).show(ui, |ui| {
                    for name in cx.lab.playable() {
                        let elo = cx.lab.ratings().get(name).cloned().unwrap_or_else(|| "unrated".into());
                        let label = flychess_lab::lab::opponent_label(name, &elo);
                        ui.radio_value(&mut ng.fly, name.clone(), label);
                    }
                });
                ui.label("You play:");
                ui.horizontal(|ui| {
                    ui.radio_value(&mut ng.colour, Some(Color::White), "White");
                    ui.radio_value(&mut ng.colour, Some(Color::Black), "Black");
                    ui.radio_value(&mut ng.colour, None, "Random");
                });
                start = ui.button("Start").clicked();
            });
        if start {
            let colour = ng.colour.unwrap_or(if ctx.input(|i| i.time).fract() < 0.5 { Color::White } else { Color::Black });
            cx.lab.command(Command::NewGame { game: Game::default(), user: colour, fly: Some(ng.fly.clone()) });
            self.game_started(colour);
        } else if open {
            self.new_game = Some(ng);
        }
    }

    fn report_window(&mut self, ctx: &egui::Context, cx: &mut PlayContext) {
        if !self.report_open {
            return;
        }
        let mut open = true;
        let mut jump = None;
        egui::Window::new("Game report").open(&mut open).default_width(420.0).show(ctx, |ui| {
            if let Some(end) = cx.lab.play().game.ending() {
                ui.strong(format!("{} — {}", end.result, end.reason));
            }
            for colour in [Color::White, Color::Black] {
                let who = if colour == cx.lab.play().user { "You".to_string() } else { format!("Fly {}", cx.lab.play().fly_name) };
                let mut counts: HashMap<&str, usize> = HashMap::new();
                for (ply, m) in cx.lab.play().game.moves().iter().enumerate() {
                    if cx.lab.play().game.position(ply).turn() == colour
                        && let Some(g) = cx.lab.play().grade_of(ply, m)
                    {
                        *counts.entry(g.verdict.name()).or_default() += 1;
                    }
                }
                let acc = cx.lab.play().accuracy(colour).map(|(a, _)| format!("{a:.0}%")).unwrap_or_else(|| "not graded".into());
                let list: Vec<String> = ["best", "good", "inaccuracy", "mistake", "blunder"]
                    .iter()
                    .map(|v| format!("{} {v}", counts.get(v).copied().unwrap_or(0)))
                    .collect();
                ui.label(format!(
                    "{who} ({}): accuracy {acc}; {}",
                    if colour == Color::White { "White" } else { "Black" },
                    list.join(", ")
                ));
            }
            let curve = cx.lab.play().evaluation_curve();
            let points: Vec<[f64; 2]> = curve.iter().map(|&(p, w)| [p as f64, w]).collect();
            let plot = egui_plot::Plot::new("evaluation").height(160.0).include_y(0.0).include_y(100.0).allow_scroll(false);
            let response = plot.show(ui, |plot_ui| {
                plot_ui.line(egui_plot::Line::new("White's win chance (%)", points.clone()));
                plot_ui.points(egui_plot::Points::new("moves", points.clone()).radius(3.0));
                if plot_ui.response().clicked() { plot_ui.pointer_coordinate().map(|c| c.x.round().max(0.0) as usize) } else { None }
            });
            jump = response.inner;
            ui.small("Click the graph to jump to that move. Grades: Stockfish at depth 12.");
        });
        if let Some(ply) = jump {
            let ply = ply.min(cx.lab.play().game.plies());
            cx.lab.command(Command::Show(if ply == cx.lab.play().game.plies() { None } else { Some(ply) }));
        }
        self.report_open = open;
    }
}

pub fn verdict_colour(v: Verdict) -> Color32 {
    match v {
        Verdict::Best => Color32::from_rgb(90, 200, 120),
        Verdict::Good => Color32::from_rgb(150, 190, 150),
        Verdict::Inaccuracy => Color32::from_rgb(230, 200, 60),
        Verdict::Mistake => Color32::from_rgb(230, 140, 40),
        Verdict::Blunder => Color32::from_rgb(230, 70, 60),
    }
}
