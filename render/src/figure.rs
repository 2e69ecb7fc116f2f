//! Figures made of several frames of the cloud: the 12 steps of a think at once (a 4 × 3 grid of
//! small clouds under a title, each captioned) as one image, and the replay as an animated GIF.
//! Every frame is drawn offscreen by the cloud's own pipeline; the captions are rasterised with
//! ab_glyph from the font egui draws the window with, dark on a white background and light on
//! the dark one.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use image::{Rgba, RgbaImage};

use crate::cloud::{CloudRenderer, Offscreen, Rates, ViewSettings};

/// What every frame of a figure shares: the cloud with the think's rates uploaded, how a frame of
/// a given pixel size is viewed, and the background.
pub struct Frames<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub cloud: &'a CloudRenderer,
    pub view: &'a dyn Fn([u32; 2]) -> ViewSettings,
    /// RGBA in 0..1.
    pub background: [f64; 4],
}

impl Frames<'_> {
    fn frame(&self, size: [u32; 2], step: usize) -> Result<RgbaImage, String> {
        let target = Offscreen::new(self.device, size);
        target.render(self.device, self.queue, self.cloud, &(self.view)(size), Rates::Uploaded, step, self.background);
        let pixels = target.read(self.device, self.queue)?;
        RgbaImage::from_raw(size[0], size[1], pixels).ok_or_else(|| "the frame had an unexpected size".to_string())
    }

    fn ink(&self) -> Rgba<u8> {
        if self.background[0] > 0.5 { Rgba([25, 25, 30, 255]) } else { Rgba([235, 235, 240, 255]) }
    }

    fn paper(&self) -> Rgba<u8> {
        let c = |v: f64| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
        Rgba([c(self.background[0]), c(self.background[1]), c(self.background[2]), 255])
    }
}

/// Writes `text` into `img` with its top left at (x, y), `px` pixels tall, cut at `max_width`
/// (an ellipsis where it would run over).
pub fn draw_text(img: &mut RgbaImage, text: &str, x: f32, y: f32, px: f32, max_width: f32, colour: Rgba<u8>) {
    let font = FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT).expect("egui's font parses");
    let scaled = font.as_scaled(PxScale::from(px));
    let ellipsis_width = scaled.h_advance(font.glyph_id('…'));
    let mut pen = x;
    let baseline = y + scaled.ascent();
    let mut previous = None;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let id = font.glyph_id(c);
        if let Some(p) = previous {
            pen += scaled.kern(p, id);
        }
        let advance = scaled.h_advance(id);
        let last = i + 1 == chars.len();
        let (id, advance) =
            if !last && pen + advance + ellipsis_width > x + max_width { (font.glyph_id('…'), ellipsis_width) } else { (id, advance) };
        if pen + advance > x + max_width + 0.5 {
            break;
        }
        let glyph = id.with_scale_and_position(PxScale::from(px), ab_glyph::point(pen, baseline));
        if let Some(outline) = font.outline_glyph(glyph) {
            let bounds = outline.px_bounds();
            outline.draw(|gx, gy, coverage| {
                let (px_x, px_y) = (bounds.min.x as i64 + gx as i64, bounds.min.y as i64 + gy as i64);
                if px_x < 0 || px_y < 0 || px_x >= img.width() as i64 || px_y >= img.height() as i64 {
                    return;
                }
                let under = img.get_pixel_mut(px_x as u32, px_y as u32);
                for k in 0..3 {
                    under.0[k] = (under.0[k] as f32 * (1.0 - coverage) + colour.0[k] as f32 * coverage).round() as u8;
                }
            });
        }
        pen += advance;
        previous = Some(id);
        if id == font.glyph_id('…') && !last {
            break;
        }
    }
}

/// The 12 steps at once: `size` pixels, `title` across the top, a 4 × 3 grid of the cloud at
/// steps 1–12 with `captions[step]` under each.
pub fn step_grid(frames: &Frames, size: [u32; 2], title: &str, captions: &[String]) -> Result<RgbaImage, String> {
    let [w, h] = size;
    let title_h = (h as f32 * 0.06).round() as u32;
    let (cols, rows) = (4u32, 3u32);
    let tile_w = w / cols;
    let tile_h = (h - title_h) / rows;
    let caption_h = (tile_h as f32 * 0.13).round() as u32;
    let mut img = RgbaImage::from_pixel(w, h, frames.paper());
    draw_text(&mut img, title, tile_w as f32 * 0.03, title_h as f32 * 0.2, title_h as f32 * 0.6, w as f32 * 0.97, frames.ink());
    for step in 0..(cols * rows) as usize {
        let (c, r) = (step as u32 % cols, step as u32 / cols);
        let frame = frames.frame([tile_w, tile_h - caption_h], step)?;
        let (x0, y0) = (c * tile_w, title_h + r * tile_h);
        image::imageops::overlay(&mut img, &frame, x0 as i64, y0 as i64);
        let caption = captions.get(step).map(String::as_str).unwrap_or("");
        draw_text(
            &mut img,
            caption,
            x0 as f32 + tile_w as f32 * 0.03,
            (y0 + tile_h - caption_h) as f32 + caption_h as f32 * 0.15,
            caption_h as f32 * 0.55,
            tile_w as f32 * 0.94,
            frames.ink(),
        );
    }
    Ok(img)
}

/// The replay as an animated GIF (looping): one frame per step of `size` pixels, its caption
/// along the bottom, `frame_ms` each (the last held three times as long).
pub fn replay_gif(frames: &Frames, size: [u32; 2], captions: &[String], frame_ms: u32) -> Result<Vec<u8>, String> {
    use image::codecs::gif::{GifEncoder, Repeat};
    use image::{Delay, Frame};
    let caption_h = (size[1] as f32 * 0.1).round() as u32;
    let mut out = Vec::new();
    {
        let mut encoder = GifEncoder::new_with_speed(&mut out, 10);
        encoder.set_repeat(Repeat::Infinite).map_err(|e| e.to_string())?;
        for step in 0..captions.len().max(1) {
            let mut img = RgbaImage::from_pixel(size[0], size[1], frames.paper());
            let cloud = frames.frame([size[0], size[1] - caption_h], step)?;
            image::imageops::overlay(&mut img, &cloud, 0, 0);
            draw_text(
                &mut img,
                &captions[step.min(captions.len().saturating_sub(1))],
                size[0] as f32 * 0.02,
                (size[1] - caption_h) as f32 + caption_h as f32 * 0.2,
                caption_h as f32 * 0.5,
                size[0] as f32 * 0.96,
                frames.ink(),
            );
            let ms = if step + 1 == captions.len() { frame_ms * 3 } else { frame_ms };
            encoder.encode_frame(Frame::from_parts(img, 0, 0, Delay::from_numer_denom_ms(ms, 1))).map_err(|e| e.to_string())?;
        }
    }
    Ok(out)
}
