//! A figure of one think made without a window: the 12 steps at once as one picture and the
//! replay as a GIF, drawn offscreen by `flychess_render` on any wgpu device from the think's rates,
//! the cloud's geometry and the view's look (camera, colours). The Brain tab's panes and exports
//! and `flychess figure` make them the same way.

use std::sync::Arc;

use flychess_render::camera::OrbitCamera;
use flychess_render::cloud::{ColourMode, ViewSettings};

/// How a figure's frames look: the view's camera and colours at the time it was asked for.
#[derive(Clone)]
pub struct FigureLook {
    pub camera: OrbitCamera,
    pub mode: ColourMode,
    pub white_background: bool,
}

impl FigureLook {
    pub fn view(&self, size: [u32; 2]) -> ViewSettings {
        let scale = (size[0] as f32 / 1200.0).max(1.0);
        ViewSettings {
            view_proj: self.camera.view_projection(size[0] as f32 / size[1].max(1) as f32),
            viewport_px: [size[0] as f32, size[1] as f32],
            point_px: [1.2 * scale, 3.2 * scale],
            ghost: 0.08,
            rate_scale: 1.0,
            mode: self.mode,
            white_background: self.white_background,
        }
    }

    pub fn background(&self) -> [f64; 4] {
        if self.white_background { [1.0, 1.0, 1.0, 1.0] } else { [0.03, 0.03, 0.055, 1.0] }
    }
}

/// Everything a figure job takes with it to its thread (cheap to clone: handles and shared buffers).
#[derive(Clone)]
pub struct FigureJob {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub geometry: Arc<flychess_render::cloud::CloudGeometry>,
    pub marks: Arc<Vec<f32>>,
    pub rates: Arc<Vec<f32>>,
    pub look: FigureLook,
    pub title: String,
    pub captions: Vec<String>,
}

/// What a figure job makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureKind {
    /// The grid at this size (the pane's picture, or the PNG).
    Grid([u32; 2]),
    /// The replay as a GIF of this frame size.
    Gif([u32; 2]),
}

impl FigureJob {
    /// Renders the figure: RGBA for a grid, the file's bytes for a GIF.
    pub fn render(&self, kind: FigureKind) -> anyhow::Result<(Option<image::RgbaImage>, Vec<u8>)> {
        use flychess_render::cloud::{CloudRenderer, OFFSCREEN_FORMAT};
        use flychess_render::figure::{Frames, replay_gif, step_grid};
        let mut cloud = CloudRenderer::new(&self.device, OFFSCREEN_FORMAT, &self.geometry);
        cloud.upload_rates(&self.queue, &self.rates);
        cloud.set_marks(&self.queue, &self.marks);
        let view = |size: [u32; 2]| self.look.view(size);
        let frames = Frames { device: &self.device, queue: &self.queue, cloud: &cloud, view: &view, background: self.look.background() };
        match kind {
            FigureKind::Grid(size) => {
                Ok((Some(step_grid(&frames, size, &self.title, &self.captions).map_err(|e| anyhow::anyhow!(e))?), Vec::new()))
            }
            FigureKind::Gif(size) => Ok((None, replay_gif(&frames, size, &self.captions, 450).map_err(|e| anyhow::anyhow!(e))?)),
        }
    }
}

/// The PNG bytes of an image.
pub fn png_bytes(img: &image::RgbaImage) -> anyhow::Result<Vec<u8>> {
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png)?;
    Ok(png.into_inner())
}
