//! Fly Chess brain renderer: the point cloud of every neuron with a cell body, drawn by our own
//! WGSL (`shaders/brain_cloud.wgsl`) through wgpu — the pipeline, the offscreen target for tests
//! and benchmarks, and CPU picking (`cloud`); the paint callback that puts it inside egui on
//! eframe's device (`egui_view`); figures of several frames, the 12 steps at once and the
//! replay as a GIF (`figure`); and the orbit camera (`camera`).
#![warn(clippy::too_many_lines)]

pub mod camera;
pub mod cloud;
#[cfg(feature = "egui")]
pub mod egui_view;
pub mod figure;

/// The wgpu this crate draws with (the app's device and the simulator's buffers are of this version).
pub use wgpu;
