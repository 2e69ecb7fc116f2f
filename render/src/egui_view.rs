//! The cloud inside egui: an `egui_wgpu` paint callback that draws the brain view on eframe's own
//! device, in the UI's render pass. The renderer lives in egui_wgpu's callback resources
//! (installed once per brain); each frame's callback carries the camera and step, and — only when
//! they change — a think's rates to upload (CPU engine) or the simulator's rates buffer to bind
//! (GPU engine on the same device: no copy), and the selection marks.

use std::sync::Arc;

use egui_wgpu::{CallbackResources, CallbackTrait, RenderState, ScreenDescriptor};

use crate::cloud::{CloudGeometry, CloudRenderer, Rates, ViewSettings};

/// What the installed renderer holds besides the pipeline.
pub struct Installed {
    pub renderer: CloudRenderer,
    uploaded: u64,
    marked: u64,
    external: Option<wgpu::Buffer>,
}

/// Puts a renderer for `geometry` on eframe's device (replacing one for another brain).
pub fn install(render_state: &RenderState, geometry: &CloudGeometry) {
    install_prepared(render_state, prepare(render_state, geometry));
}

/// A renderer for `geometry` on eframe's device, made on any thread (its pipelines compiled and
/// positions uploaded there, so the UI thread never waits on it).
pub fn prepare(render_state: &RenderState, geometry: &CloudGeometry) -> CloudRenderer {
    CloudRenderer::new(&render_state.device, render_state.target_format, geometry)
}

/// Puts a renderer made by `prepare` in place (replacing one for another brain).
pub fn install_prepared(render_state: &RenderState, renderer: CloudRenderer) {
    render_state.renderer.write().callback_resources.insert(Installed { renderer, uploaded: 0, marked: 0, external: None });
}

/// Where this frame's rates come from.
#[derive(Clone)]
pub enum FrameRates {
    /// A think's rates from the CPU engine (`steps × neurons`), uploaded once per `id`.
    Upload { id: u64, rates: Arc<Vec<f32>> },
    /// The GPU engine's rates buffer on this very device (batch 1).
    Buffer(wgpu::Buffer),
    /// Nothing thought yet: silent neurons (the ghost outline only).
    Silent,
}

pub struct CloudCallback {
    pub view: ViewSettings,
    pub step: usize,
    pub rates: FrameRates,
    /// Marks (0 none, 1 partner, 2 selected) with a version; uploaded when the version changes.
    pub marks: Option<(u64, Arc<Vec<f32>>)>,
}

impl CallbackTrait for CloudCallback {
    fn prepare(
        &self,
        _device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(installed) = resources.get_mut::<Installed>() else { return Vec::new() };
        installed.renderer.prepare(queue, &self.view);
        match &self.rates {
            FrameRates::Upload { id, rates } if *id != installed.uploaded => {
                installed.renderer.upload_rates(queue, rates);
                installed.uploaded = *id;
                installed.external = None;
            }
            FrameRates::Buffer(b) => installed.external = Some(b.clone()),
            FrameRates::Silent if installed.uploaded != 0 => {
                installed.renderer.upload_rates(queue, &[]);
                installed.uploaded = 0;
                installed.external = None;
            }
            _ => {}
        }
        if let Some((version, marks)) = &self.marks
            && *version != installed.marked
        {
            installed.renderer.set_marks(queue, marks);
            installed.marked = *version;
        }
        Vec::new()
    }

    fn paint(&self, _info: egui::PaintCallbackInfo, pass: &mut wgpu::RenderPass<'static>, resources: &CallbackResources) {
        let Some(installed) = resources.get::<Installed>() else { return };
        match (&self.rates, &installed.external) {
            (FrameRates::Buffer(_), Some(buffer)) => {
                installed.renderer.draw(pass, Rates::Buffer { buffer, batch: 1, position: 0 }, self.step)
            }
            _ => installed.renderer.draw(pass, Rates::Uploaded, self.step),
        }
    }
}

/// The paint callback for `rect`.
pub fn callback(rect: egui::Rect, cb: CloudCallback) -> egui::PaintCallback {
    egui_wgpu::Callback::new_paint_callback(rect, cb)
}
