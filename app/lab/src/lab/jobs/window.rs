//! The window's own heavy work, done aside so that no frame waits for it and no view touches the
//! disk or starts a thread: the cloud of a brain that became ready (its geometry, and its
//! renderer's pipelines on the window's device), the outgoing index the first neuron click needs,
//! a 3840 × 2160 image of the cloud, the screenshot `--screenshot` asked for, and a text (a CSV)
//! written to a file. Each answer arrives on an `Aside`; every file is written atomically. The
//! 4K image and the text files are the `native` feature's (a page writes no files).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::anyhow;
use flychess_brain::brain::{Brain, Outgoing};
use flychess_brain::files::write_atomically;
use flychess_render::cloud::{CloudGeometry, CloudRenderer};
#[cfg(feature = "native")]
use flychess_render::cloud::{OFFSCREEN_FORMAT, Offscreen, Rates, ViewSettings};

use super::{Aside, aside};
use crate::lab::{ReadyBrain, Wake};

/// A brain's cloud, made aside: its geometry (every positioned neuron, coloured by region) and,
/// when the window draws with wgpu, the renderer made on its device.
pub struct MadeCloud {
    pub geometry: Arc<CloudGeometry>,
    pub renderer: Option<CloudRenderer>,
}

/// Makes the cloud of `ready`'s brain: its geometry, and a renderer for `target` (the window's
/// device and the format it draws in) when there is one.
pub fn cloud(wake: Wake, ready: Arc<ReadyBrain>, target: Option<(wgpu::Device, wgpu::TextureFormat)>) -> Aside<MadeCloud> {
    aside(wake, "brain-view", move || {
        let neurons = &ready.connectome.neurons;
        let regions: Vec<u8> = neurons.region.iter().map(|r| *r as u8).collect();
        let geometry = Arc::new(CloudGeometry::new(&neurons.soma_um, &regions));
        let renderer = target.map(|(device, format)| CloudRenderer::new(&device, format, &geometry));
        Ok(MadeCloud { geometry, renderer })
    })
}

/// Builds `brain`'s outgoing index (every neuron's downstream partners), so that the first
/// neuron click does not build it on the UI thread. Nothing is woken: the click that wants it
/// waits for it.
pub fn outgoing_index(brain: Arc<Brain>) -> Aside<Arc<Outgoing>> {
    aside(Arc::new(|| {}), "outgoing-index", move || Ok(brain.outgoing()))
}

#[cfg(feature = "native")]
/// What a still image of the cloud needs: the window's device, the cloud's geometry, marks and
/// (when a think is shown) its rates, the view, the step, the background and the size.
pub struct CloudImage {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub geometry: Arc<CloudGeometry>,
    pub marks: Arc<Vec<f32>>,
    pub rates: Option<Arc<Vec<f32>>>,
    pub view: ViewSettings,
    pub step: usize,
    pub background: [f64; 4],
    pub size: [u32; 2],
}

#[cfg(feature = "native")]
/// Renders `image` offscreen and writes it to `path` as PNG (a 4K render and its encoding take
/// seconds on a software GPU). Nothing is woken: the view polls the answer while it runs.
pub fn cloud_png(image: CloudImage, path: PathBuf) -> Aside<String> {
    aside(Arc::new(|| {}), "brain-export", move || {
        let CloudImage { device, queue, geometry, marks, rates, view, step, background, size } = image;
        let mut cloud = CloudRenderer::new(&device, OFFSCREEN_FORMAT, &geometry);
        if let Some(r) = &rates {
            cloud.upload_rates(&queue, r);
        }
        cloud.set_marks(&queue, &marks);
        let target = Offscreen::new(&device, size);
        target.render(&device, &queue, &cloud, &view, Rates::Uploaded, step, background);
        let pixels = target.read(&device, &queue).map_err(|e| anyhow!(e))?;
        let img = image::RgbaImage::from_raw(size[0], size[1], pixels).ok_or_else(|| anyhow!("bad image size"))?;
        let mut png = std::io::Cursor::new(Vec::new());
        img.write_to(&mut png, image::ImageFormat::Png)?;
        write_atomically(&path, &png.into_inner())?;
        Ok(format!("Saved {}", path.display()))
    })
}

#[cfg(feature = "native")]
/// Writes `text` to `path` (a CSV the user asked for); the answer says where it went.
pub fn save_text(wake: Wake, text: String, path: PathBuf) -> Aside<String> {
    aside(wake, "save-text", move || {
        write_atomically(&path, text.as_bytes())?;
        Ok(format!("Saved {}", path.display()))
    })
}

/// Encodes the window's pixels (`size` wide and high, RGBA) in the format `path`'s extension
/// names and writes them there: the screenshot `--screenshot` asked for.
pub fn screenshot(wake: Wake, size: [usize; 2], rgba: Vec<u8>, path: PathBuf) -> Aside<()> {
    aside(wake, "screenshot", move || {
        let img = image::RgbaImage::from_raw(size[0] as u32, size[1] as u32, rgba)
            .ok_or_else(|| anyhow!("the screenshot had an unexpected size"))?;
        let mut bytes = std::io::Cursor::new(Vec::new());
        img.write_to(&mut bytes, image::ImageFormat::from_path(&path)?)?;
        Ok(write_atomically(&path, &bytes.into_inner())?)
    })
}
