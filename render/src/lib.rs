//! Fly Chess brain renderer. This crate will own the point-cloud pipelines (WGSL in `shaders/`),
//! picking and the egui paint callback; today it owns the orbit camera that frames a brain's
//! cell-body cloud (`camera`).

pub mod camera;
