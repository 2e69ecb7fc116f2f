//! The chess board widget, as Lichess and chess.com users expect it: cburnett pieces drawn at the
//! square's exact pixel size, drag-and-drop and click-click, dots on reachable squares and rings
//! on captures, the last move and a king in check highlighted, a promotion picker, premoves while
//! the opponent thinks (red; right-click cancels), right-click marks and right-drag arrows,
//! coordinates, and pieces that slide between any two positions (a move, a takeback and stepping
//! back through the game are the same animation). It owns no game: it shows a position and
//! reports the move the user made.

use std::collections::HashSet;

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, Vec2};
use shakmaty::{Bitboard, Board, Chess, Color, File, Move, Piece, Position, Rank, Role, Square};

use crate::pieces::PieceTextures;

/// Light and dark square colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BoardTheme {
    Brown,
    Blue,
    Green,
    Night,
}

impl BoardTheme {
    pub const ALL: [BoardTheme; 4] = [BoardTheme::Brown, BoardTheme::Blue, BoardTheme::Green, BoardTheme::Night];
    pub fn name(self) -> &'static str {
        match self {
            BoardTheme::Brown => "Brown",
            BoardTheme::Blue => "Blue",
            BoardTheme::Green => "Green",
            BoardTheme::Night => "Night (for the dark UI)",
        }
    }
    pub fn colours(self) -> (Color32, Color32) {
        match self {
            BoardTheme::Brown => (Color32::from_rgb(240, 217, 181), Color32::from_rgb(181, 136, 99)),
            BoardTheme::Blue => (Color32::from_rgb(222, 227, 230), Color32::from_rgb(140, 162, 173)),
            BoardTheme::Green => (Color32::from_rgb(238, 238, 210), Color32::from_rgb(118, 150, 86)),
            BoardTheme::Night => (Color32::from_rgb(140, 146, 158), Color32::from_rgb(80, 86, 100)),
        }
    }
}

/// An arrow drawn on the board (the user's, the hint, the fly's idea).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrow {
    pub from: Square,
    pub to: Square,
    pub colour: Color32,
}

/// A square tinted and labelled by a view (what the fly looks at, what its eye sees).
#[derive(Clone, Debug, PartialEq)]
pub struct SquareMark {
    pub square: Square,
    pub fill: Color32,
    pub text: String,
}

/// What the board shows this frame.
pub struct BoardView<'a> {
    pub position: &'a Chess,
    /// White or Black at the bottom.
    pub orientation: Color,
    /// The colour the user moves (None: nobody moves, e.g. looking back at an earlier move).
    pub user: Option<Color>,
    /// The last move of the shown position, highlighted.
    pub last_move: Option<Move>,
    pub theme: BoardTheme,
    /// Extra arrows (the hint).
    pub arrows: Vec<Arrow>,
    /// Slide pieces between positions.
    pub animate: bool,
    /// Squares tinted and labelled by a view.
    pub overlays: Vec<SquareMark>,
}

/// What the user did on the board.
#[derive(Clone, Debug, PartialEq)]
pub enum BoardAction {
    /// A legal move on the user's turn.
    Move(Move),
    /// A premove was set (played later if still legal).
    Premoved,
    /// A move that is not legal was tried.
    Illegal,
}

/// A move wished for while the opponent thinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Premove {
    pub from: Square,
    pub to: Square,
    pub promotion: Option<Role>,
}

impl Premove {
    /// The legal move this premove stands for in `pos`, if there is one (promotion to a queen
    /// unless chosen).
    pub fn legal_in(&self, pos: &Chess) -> Option<Move> {
        pos.legal_moves().into_iter().find(|m| {
            let (from, to) = move_squares(m);
            from == self.from && to == self.to && m.promotion().is_none_or(|r| r == self.promotion.unwrap_or(Role::Queen))
        })
    }
}

struct Animation {
    from: Board,
    started: f64,
}

/// Everything the board remembers between frames.
pub struct BoardState {
    pub selected: Option<Square>,
    pressed: Option<Square>,
    right_pressed: Option<Square>,
    /// Where a promotion is being chosen: (from, to).
    pub promotion: Option<(Square, Square)>,
    pub premove: Option<Premove>,
    pub marks: HashSet<Square>,
    pub arrows: Vec<(Square, Square)>,
    shown: Option<Board>,
    animation: Option<Animation>,
    /// The last move came from a drag: the piece is already where it was dropped.
    dropped: bool,
    /// The board's rect and orientation as last drawn (for tests and keyboard play).
    pub rect: Rect,
    pub orientation: Option<Color>,
    pub textures: PieceTextures,
}

impl Default for BoardState {
    fn default() -> Self {
        BoardState {
            selected: None,
            pressed: None,
            right_pressed: None,
            promotion: None,
            premove: None,
            marks: HashSet::new(),
            arrows: Vec::new(),
            shown: None,
            animation: None,
            dropped: false,
            rect: Rect::NOTHING,
            orientation: None,
            textures: PieceTextures::default(),
        }
    }
}

pub const ANIMATION_SECONDS: f64 = 0.18;

/// Squares of a move as the user sees them: castling is the king's two-square step.
pub fn move_squares(m: &Move) -> (Square, Square) {
    match *m {
        Move::Castle { king, rook } => {
            let file = if rook.file() > king.file() { File::G } else { File::C };
            (king, Square::from_coords(file, king.rank()))
        }
        _ => (m.from().expect("chess moves have a from-square"), m.to()),
    }
}

impl BoardState {
    /// The centre of `sq` on screen as last drawn.
    pub fn square_center(&self, sq: Square) -> Pos2 {
        self.square_rect(sq, self.orientation.unwrap_or(Color::White)).center()
    }

    fn square_size(&self) -> f32 {
        self.rect.width() / 8.0
    }

    fn square_rect(&self, sq: Square, orientation: Color) -> Rect {
        let s = self.square_size();
        let (col, row) = match orientation {
            Color::White => (u32::from(sq.file()), 7 - u32::from(sq.rank())),
            Color::Black => (7 - u32::from(sq.file()), u32::from(sq.rank())),
        };
        Rect::from_min_size(self.rect.min + Vec2::new(col as f32 * s, row as f32 * s), Vec2::splat(s))
    }

    fn square_at(&self, p: Pos2, orientation: Color) -> Option<Square> {
        if !self.rect.contains(p) {
            return None;
        }
        let s = self.square_size();
        let col = (((p.x - self.rect.min.x) / s) as u32).min(7);
        let row = (((p.y - self.rect.min.y) / s) as u32).min(7);
        let (file, rank) = match orientation {
            Color::White => (col, 7 - row),
            Color::Black => (7 - col, row),
        };
        Some(Square::from_coords(File::new(file), Rank::new(rank)))
    }

    /// Squares of the promotion picker: the to-square and the three behind it, Q N R B.
    fn picker(&self, to: Square, colour: Color) -> [(Square, Role); 4] {
        let step: i32 = if colour == Color::White { -1 } else { 1 };
        let rank = |k: i32| Rank::new((i32::from(to.rank()) + step * k) as u32);
        [Role::Queen, Role::Knight, Role::Rook, Role::Bishop]
            .into_iter()
            .enumerate()
            .map(|(k, role)| (Square::from_coords(to.file(), rank(k as i32)), role))
            .collect::<Vec<_>>()
            .try_into()
            .expect("four pieces")
    }

    /// Tries the user's move from → to; a premove when it is not the user's turn.
    fn attempt(&mut self, view: &BoardView, from: Square, to: Square) -> Option<BoardAction> {
        let user = view.user?;
        let pos = view.position;
        self.selected = None;
        if pos.turn() != user {
            if pos.board().color_at(from) == Some(user) && from != to {
                self.premove = Some(Premove { from, to, promotion: None });
                return Some(BoardAction::Premoved);
            }
            return None;
        }
        let candidates: Vec<Move> = pos.legal_moves().into_iter().filter(|m| move_squares(m) == (from, to)).collect();
        match candidates.len() {
            0 => Some(BoardAction::Illegal),
            1 => Some(BoardAction::Move(candidates[0])),
            _ => {
                self.promotion = Some((from, to));
                None
            }
        }
    }

    /// Draws the board in `ui` (a square as large as fits) and handles the pointer.
    pub fn show(&mut self, ui: &mut egui::Ui, view: &BoardView) -> Option<BoardAction> {
        let ppp = ui.ctx().pixels_per_point();
        let avail = ui.available_size();
        // Whole physical pixels per square keep the pieces crisp.
        let square_px = ((avail.x.min(avail.y) * ppp / 8.0).floor()).max(8.0);
        let side = square_px * 8.0 / ppp;
        let (rect, response) = ui.allocate_exact_size(Vec2::splat(side), Sense::click_and_drag());
        let rect = Rect::from_min_size(Pos2::new((rect.min.x * ppp).round() / ppp, (rect.min.y * ppp).round() / ppp), rect.size());
        self.rect = rect;
        let orientation = view.orientation;
        self.orientation = Some(orientation);
        // Presses count only when the board itself is under the pointer: a window over it (new
        // game, the report) takes its own clicks.
        let action = self.handle_pointer(ui, view, orientation, response.contains_pointer());
        self.track_animation(ui, view);
        self.paint(ui, view, orientation, square_px as u32);
        action
    }

    fn handle_pointer(&mut self, ui: &egui::Ui, view: &BoardView, orientation: Color, on_board: bool) -> Option<BoardAction> {
        let (primary_pressed, primary_released, secondary_pressed, secondary_released, pos) = ui.input(|i| {
            (
                i.pointer.primary_pressed() && on_board,
                i.pointer.primary_released(),
                i.pointer.secondary_pressed() && on_board,
                i.pointer.secondary_released(),
                i.pointer.interact_pos().or(i.pointer.latest_pos()),
            )
        });
        // A release off the board only ends what a press on it began.
        let primary_released = primary_released && (on_board || self.pressed.is_some());
        let square = pos.and_then(|p| self.square_at(p, orientation));
        let mut action = None;
        // The promotion picker takes the next click.
        if let Some((from, to)) = self.promotion {
            if primary_released {
                self.promotion = None;
                let colour = view.position.turn();
                if let Some((_, role)) = self.picker(to, colour).into_iter().find(|(s, _)| Some(*s) == square) {
                    action = view
                        .position
                        .legal_moves()
                        .into_iter()
                        .find(|m| move_squares(m) == (from, to) && m.promotion() == Some(role))
                        .map(BoardAction::Move);
                }
            }
            return action;
        }
        if primary_pressed {
            self.pressed = square;
            if square.is_some() {
                self.marks.clear();
                self.arrows.clear();
            }
            if let (Some(sq), Some(user)) = (square, view.user) {
                let own = view.position.board().color_at(sq) == Some(user);
                match self.selected {
                    Some(sel) if sel != sq && !own => {
                        // Click-click: the second click is the destination.
                        self.pressed = None;
                        action = self.attempt(view, sel, sq);
                    }
                    _ if own => self.selected = Some(sq),
                    _ => self.selected = None,
                }
            }
        }
        if primary_released
            && let (Some(from), Some(to)) = (self.pressed.take(), square)
            && from != to
            && view.position.board().color_at(from) == view.user
        {
            action = self.attempt(view, from, to);
            if matches!(action, Some(BoardAction::Move(_))) {
                self.dropped = true;
            }
        }
        if secondary_pressed {
            self.right_pressed = square;
        }
        if secondary_released {
            if self.premove.take().is_some() || self.selected.take().is_some() {
                self.right_pressed = None;
            } else if let (Some(from), Some(to)) = (self.right_pressed.take(), square) {
                if from == to {
                    if !self.marks.remove(&to) {
                        self.marks.insert(to);
                    }
                } else if let Some(i) = self.arrows.iter().position(|&a| a == (from, to)) {
                    self.arrows.remove(i);
                } else {
                    self.arrows.push((from, to));
                }
            }
        }
        action
    }

    fn track_animation(&mut self, ui: &egui::Ui, view: &BoardView) {
        let board = view.position.board().clone();
        let now = ui.input(|i| i.time);
        if self.shown.as_ref() != Some(&board) {
            if let Some(old) = self.shown.take() {
                if view.animate && !self.dropped {
                    self.animation = Some(Animation { from: old, started: now });
                } else {
                    self.animation = None;
                }
            }
            self.dropped = false;
            self.shown = Some(board);
            self.selected = None;
        }
        if let Some(a) = &self.animation {
            if now - a.started >= ANIMATION_SECONDS {
                self.animation = None;
            } else {
                ui.ctx().request_repaint();
            }
        }
    }

    /// The pieces as last drawn.
    pub fn shown_board(&self) -> Option<&Board> {
        self.shown.as_ref()
    }

    /// Whether pieces are sliding right now.
    pub fn animating(&self) -> bool {
        self.animation.is_some()
    }

    fn paint(&mut self, ui: &egui::Ui, view: &BoardView, orientation: Color, square_px: u32) {
        let painter = ui.painter_at(self.rect);
        self.paint_squares(&painter, view, orientation);
        self.paint_coordinates(&painter, view, orientation);
        let dragging = self.paint_pieces(ui, &painter, view, orientation, square_px);
        self.paint_targets(&painter, view, orientation, dragging);
        self.paint_labels_and_arrows(&painter, view, orientation);
        self.paint_dragged_and_picker(ui, &painter, view, (orientation, square_px), dragging);
    }

    /// The squares, tinted for the last move, the selection, a premove, the user's marks, the
    /// views' overlays, and a king in check.
    fn paint_squares(&self, painter: &egui::Painter, view: &BoardView, orientation: Color) {
        let (light, dark) = view.theme.colours();
        let s = self.square_size();
        let pos = view.position;
        for sq in Square::ALL {
            let r = self.square_rect(sq, orientation);
            painter.rect_filled(r, 0.0, if sq.is_light() { light } else { dark });
        }
        let tint = |painter: &egui::Painter, sq: Square, c: Color32| painter.rect_filled(self.square_rect(sq, orientation), 0.0, c);
        if let Some(m) = view.last_move {
            let (f, t) = move_squares(&m);
            tint(painter, f, Color32::from_rgba_unmultiplied(155, 199, 0, 105));
            tint(painter, t, Color32::from_rgba_unmultiplied(155, 199, 0, 105));
        }
        if let Some(sel) = self.selected {
            tint(painter, sel, Color32::from_rgba_unmultiplied(20, 85, 30, 128));
        }
        if let Some(p) = self.premove {
            tint(painter, p.from, Color32::from_rgba_unmultiplied(200, 30, 30, 110));
            tint(painter, p.to, Color32::from_rgba_unmultiplied(200, 30, 30, 110));
        }
        for &m in &self.marks {
            tint(painter, m, Color32::from_rgba_unmultiplied(235, 97, 80, 150));
        }
        for o in &view.overlays {
            tint(painter, o.square, o.fill);
        }
        if pos.is_check()
            && let Some(k) = pos.board().king_of(pos.turn())
        {
            let r = self.square_rect(k, orientation);
            for (i, a) in [(0.5, 230u8), (0.38, 160), (0.26, 90)] {
                painter.circle_filled(r.center(), s * i, Color32::from_rgba_unmultiplied(255, 0, 0, a / 2));
            }
        }
    }

    /// The files and ranks inside the edge squares, in the other square colour.
    fn paint_coordinates(&self, painter: &egui::Painter, view: &BoardView, orientation: Color) {
        let (light, dark) = view.theme.colours();
        let s = self.square_size();
        let font = egui::FontId::proportional((s * 0.18).max(8.0));
        for k in 0..8u32 {
            let file = if orientation == Color::White { File::new(k) } else { File::new(7 - k) };
            let bottom_rank = if orientation == Color::White { Rank::First } else { Rank::Eighth };
            let sq = Square::from_coords(file, bottom_rank);
            let r = self.square_rect(sq, orientation);
            let c = if sq.is_light() { dark } else { light };
            painter.text(
                r.right_bottom() + Vec2::new(-s * 0.06, -s * 0.02),
                egui::Align2::RIGHT_BOTTOM,
                file.char().to_string(),
                font.clone(),
                c,
            );
            let rank = if orientation == Color::White { Rank::new(7 - k) } else { Rank::new(k) };
            let left_file = if orientation == Color::White { File::A } else { File::H };
            let sq = Square::from_coords(left_file, rank);
            let r = self.square_rect(sq, orientation);
            let c = if sq.is_light() { dark } else { light };
            painter.text(r.left_top() + Vec2::new(s * 0.05, s * 0.03), egui::Align2::LEFT_TOP, rank.char().to_string(), font.clone(), c);
        }
    }

    /// The pieces, sliding from where they were; returns the square of the piece being dragged
    /// (drawn under the pointer, not here).
    fn paint_pieces(
        &mut self,
        ui: &egui::Ui,
        painter: &egui::Painter,
        view: &BoardView,
        orientation: Color,
        square_px: u32,
    ) -> Option<Square> {
        let pos = view.position;
        let ctx = ui.ctx().clone();
        let pointer = ui.input(|i| i.pointer.latest_pos());
        let dragging = self.pressed.filter(|&sq| {
            view.user.is_some()
                && pos.board().color_at(sq) == view.user
                && pointer.is_some_and(|p| self.square_at(p, orientation) != Some(sq) || ui.input(|i| i.pointer.is_decidedly_dragging()))
        });
        let now = ui.input(|i| i.time);
        let slides =
            self.animation.as_ref().map(|a| (slides(&a.from, pos.board()), ((now - a.started) / ANIMATION_SECONDS).clamp(0.0, 1.0) as f32));
        for (sq, piece) in pos.board().clone() {
            if Some(sq) == dragging {
                continue;
            }
            let mut r = self.square_rect(sq, orientation);
            if let Some((moves, t)) = &slides
                && let Some(&(_, from)) = moves.iter().find(|(to, _)| *to == sq)
            {
                let start = self.square_rect(from, orientation).min;
                let ease = 1.0 - (1.0 - t) * (1.0 - t);
                r = Rect::from_min_size(start + (r.min - start) * ease, r.size());
            }
            self.draw_piece(&ctx, painter, piece, r, square_px);
        }
        dragging
    }

    /// The squares the selected (or dragged) piece can reach.
    fn paint_targets(&self, painter: &egui::Painter, view: &BoardView, orientation: Color, dragging: Option<Square>) {
        let s = self.square_size();
        let pos = view.position;
        if let (Some(sel), Some(user)) = (self.selected.or(dragging), view.user)
            && pos.turn() == user
        {
            for m in pos.legal_moves() {
                let (f, t) = move_squares(&m);
                if f != sel {
                    continue;
                }
                let c = self.square_rect(t, orientation).center();
                let shade = Color32::from_rgba_unmultiplied(20, 85, 30, 110);
                if pos.board().piece_at(t).is_some() || m.is_en_passant() {
                    painter.circle_stroke(c, s * 0.44, Stroke::new(s * 0.08, shade));
                } else {
                    painter.circle_filled(c, s * 0.16, shade);
                }
            }
        }
    }

    /// The views' labels over the pieces (each square's top right corner), then the user's and
    /// the views' arrows.
    fn paint_labels_and_arrows(&self, painter: &egui::Painter, view: &BoardView, orientation: Color) {
        let s = self.square_size();
        let label_font = egui::FontId::proportional((s * 0.2).max(9.0));
        for o in view.overlays.iter().filter(|o| !o.text.is_empty()) {
            let r = self.square_rect(o.square, orientation);
            let galley = painter.layout_no_wrap(o.text.clone(), label_font.clone(), Color32::WHITE);
            let at = r.right_top() + Vec2::new(-galley.size().x - s * 0.04, s * 0.03);
            painter.rect_filled(Rect::from_min_size(at, galley.size()).expand(1.5), 3.0, Color32::from_black_alpha(170));
            painter.galley(at, galley, Color32::WHITE);
        }
        let user_arrows =
            self.arrows.iter().map(|&(from, to)| Arrow { from, to, colour: Color32::from_rgba_unmultiplied(21, 120, 27, 170) });
        for a in user_arrows.chain(view.arrows.iter().copied()) {
            let from = self.square_rect(a.from, orientation).center();
            let to = self.square_rect(a.to, orientation).center();
            draw_arrow(painter, from, to, s, a.colour);
        }
    }

    /// The dragged piece under the pointer, and the promotion picker over a dimmed board.
    fn paint_dragged_and_picker(
        &mut self,
        ui: &egui::Ui,
        painter: &egui::Painter,
        view: &BoardView,
        (orientation, square_px): (Color, u32),
        dragging: Option<Square>,
    ) {
        let s = self.square_size();
        let pos = view.position;
        let ctx = ui.ctx().clone();
        let pointer = ui.input(|i| i.pointer.latest_pos());
        if let (Some(sq), Some(p)) = (dragging, pointer)
            && let Some(piece) = pos.board().piece_at(sq)
        {
            let r = Rect::from_center_size(p, Vec2::splat(s));
            let painter = ui.ctx().layer_painter(egui::LayerId::new(egui::Order::Tooltip, egui::Id::unique("dragged-piece")));
            self.draw_piece(&ctx, &painter, piece, r, square_px);
            ui.ctx().request_repaint();
        }
        if let Some((_, to)) = self.promotion {
            let colour = pos.turn();
            painter.rect_filled(self.rect, 0.0, Color32::from_black_alpha(120));
            for (sq, role) in self.picker(to, colour) {
                let r = self.square_rect(sq, orientation);
                painter.circle_filled(r.center(), s * 0.48, Color32::from_gray(230));
                self.draw_piece(&ctx, painter, Piece { color: colour, role }, r.shrink(s * 0.06), square_px);
            }
        }
    }

    fn draw_piece(&mut self, ctx: &egui::Context, painter: &egui::Painter, piece: Piece, r: Rect, square_px: u32) {
        if let Some(tex) = self.textures.get(ctx, piece, square_px) {
            painter.image(tex, r, Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)), Color32::WHITE);
        }
    }
}

/// For each square of `to` whose piece was not there in `from`: where it slides from (the
/// nearest square of `from` holding the same piece that `to` no longer has there).
fn slides(from: &Board, to: &Board) -> Vec<(Square, Square)> {
    let mut out = Vec::new();
    let mut used = Bitboard::EMPTY;
    for (sq, piece) in to.clone() {
        if from.piece_at(sq) == Some(piece) {
            continue;
        }
        let candidates = from.by_piece(piece) & !to.by_piece(piece) & !used;
        if let Some(src) = candidates.into_iter().min_by_key(|&c| c.distance(sq)) {
            used.add(src);
            out.push((sq, src));
        }
    }
    out
}

fn draw_arrow(painter: &egui::Painter, from: Pos2, to: Pos2, s: f32, colour: Color32) {
    let dir = (to - from).normalized();
    let head = s * 0.38;
    let tip = to - dir * s * 0.1;
    let base = tip - dir * head;
    painter.line_segment([from + dir * s * 0.2, base], Stroke::new(s * 0.16, colour));
    let normal = Vec2::new(-dir.y, dir.x) * head * 0.6;
    painter.add(egui::Shape::convex_polygon(vec![tip, base + normal, base - normal], colour, Stroke::NONE));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slides_match_moved_pieces_including_castling_and_takebacks() {
        let start = Chess::default();
        let mut after = start.clone();
        let m = shakmaty::uci::UciMove::from_ascii(b"e2e4").unwrap().to_move(&after).unwrap();
        after.play_unchecked(m);
        assert_eq!(slides(start.board(), after.board()), vec![(Square::E4, Square::E2)]);
        // Stepping back is the same animation the other way.
        assert_eq!(slides(after.board(), start.board()), vec![(Square::E2, Square::E4)]);
        let castle: Chess = flychess_lab::lab::position_from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let mut done = castle.clone();
        let m = castle.legal_moves().into_iter().find(|m| matches!(m, Move::Castle { rook, .. } if *rook == Square::H1)).unwrap();
        assert_eq!(move_squares(&m), (Square::E1, Square::G1));
        done.play_unchecked(m);
        let mut got = slides(castle.board(), done.board());
        got.sort();
        assert_eq!(got, vec![(Square::F1, Square::H1), (Square::G1, Square::E1)]);
    }

    #[test]
    fn a_premove_is_legal_only_when_the_position_allows_it() {
        let pos = Chess::default();
        let p = Premove { from: Square::E2, to: Square::E4, promotion: None };
        assert!(p.legal_in(&pos).is_some());
        let p = Premove { from: Square::E2, to: Square::E5, promotion: None };
        assert!(p.legal_in(&pos).is_none());
    }
}
