//! The cburnett piece set (GPL-2+, `assets/pieces/cburnett/*.svg`, embedded), rasterised with
//! resvg at the board's exact square size in physical pixels, so pieces stay crisp at any scale
//! and DPI; textures are remade only when that size changes.

use std::collections::HashMap;

use eframe::egui;
use shakmaty::{Color, Piece, Role};

fn svg(piece: Piece) -> &'static [u8] {
    use Color::*;
    use Role::*;
    match (piece.color, piece.role) {
        (White, Pawn) => include_bytes!("../../../assets/pieces/cburnett/wP.svg"),
        (White, Knight) => include_bytes!("../../../assets/pieces/cburnett/wN.svg"),
        (White, Bishop) => include_bytes!("../../../assets/pieces/cburnett/wB.svg"),
        (White, Rook) => include_bytes!("../../../assets/pieces/cburnett/wR.svg"),
        (White, Queen) => include_bytes!("../../../assets/pieces/cburnett/wQ.svg"),
        (White, King) => include_bytes!("../../../assets/pieces/cburnett/wK.svg"),
        (Black, Pawn) => include_bytes!("../../../assets/pieces/cburnett/bP.svg"),
        (Black, Knight) => include_bytes!("../../../assets/pieces/cburnett/bN.svg"),
        (Black, Bishop) => include_bytes!("../../../assets/pieces/cburnett/bB.svg"),
        (Black, Rook) => include_bytes!("../../../assets/pieces/cburnett/bR.svg"),
        (Black, Queen) => include_bytes!("../../../assets/pieces/cburnett/bQ.svg"),
        (Black, King) => include_bytes!("../../../assets/pieces/cburnett/bK.svg"),
    }
}

/// Rasterises one piece to a `px`×`px` image (premultiplied RGBA).
pub fn rasterise(piece: Piece, px: u32) -> Result<egui::ColorImage, String> {
    let px = px.clamp(8, 1024);
    let tree = resvg::usvg::Tree::from_data(svg(piece), &resvg::usvg::Options::default()).map_err(|e| e.to_string())?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(px, px).ok_or("empty pixmap")?;
    let size = tree.size();
    let scale = px as f32 / size.width().max(size.height());
    resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    Ok(egui::ColorImage::from_rgba_premultiplied([px as usize, px as usize], pixmap.data()))
}

#[derive(Default)]
pub struct PieceTextures {
    px: u32,
    textures: HashMap<(Color, Role), egui::TextureHandle>,
}

impl PieceTextures {
    /// The texture of `piece` for squares of `px` physical pixels.
    pub fn get(&mut self, ctx: &egui::Context, piece: Piece, px: u32) -> Option<egui::TextureId> {
        if px != self.px {
            self.textures.clear();
            self.px = px;
        }
        if let Some(t) = self.textures.get(&(piece.color, piece.role)) {
            return Some(t.id());
        }
        match rasterise(piece, px) {
            Ok(image) => {
                let name = format!("piece-{:?}-{:?}-{px}", piece.color, piece.role);
                let t = ctx.load_texture(name, image, egui::TextureOptions::LINEAR);
                let id = t.id();
                self.textures.insert((piece.color, piece.role), t);
                Some(id)
            }
            Err(e) => {
                tracing::error!("piece {piece:?}: {e}");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rasterise_with_their_colours_at_any_size() {
        for px in [16, 45, 130] {
            let white = rasterise(Piece { color: Color::White, role: Role::Queen }, px).unwrap();
            let black = rasterise(Piece { color: Color::Black, role: Role::Queen }, px).unwrap();
            assert_eq!(white.size, [px as usize, px as usize]);
            let brightness = |img: &egui::ColorImage| {
                let opaque: Vec<_> = img.pixels.iter().filter(|c| c.a() > 250).collect();
                assert!(opaque.len() > (px * px / 8) as usize, "a queen covers the square");
                opaque.iter().map(|c| c.r() as f64).sum::<f64>() / opaque.len() as f64
            };
            assert!(brightness(&white) > 2.0 * brightness(&black));
            // Corners are transparent.
            assert_eq!(white.pixels[0].a(), 0);
        }
    }
}
