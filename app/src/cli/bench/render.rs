//! `flychess bench --render`: the brain view's frame time, the full point cloud at 1280×800 drawn
//! offscreen by the app's own renderer on the best adapter (a GPU, else lavapipe) with one real
//! think's rates, each frame waited to completion.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};

use flychess_brain::brain::{cpu, gpu as gpu_engine};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::chess::planes;
use flychess_render::camera::OrbitCamera;
use flychess_render::cloud::{CloudGeometry, CloudRenderer, ColourMode, OFFSCREEN_FORMAT, Offscreen, Rates, ViewSettings};

use super::BenchArgs;
use crate::cli::options::ready;

/// `flychess bench --render`: frame time of the full point cloud at 1280×800, drawn offscreen by
/// the app's own renderer on the best adapter (a GPU, else lavapipe), with one real think's rates.
pub fn run(args: &BenchArgs, data: &Path) -> Result<()> {
    let spec = args.which.spec(data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    let rates = cpu::think(&brain, &[planes(&shakmaty::Chess::default())]);
    let regions: Vec<u8> = loaded.connectome.neurons.region.iter().map(|r| *r as u8).collect();
    let geometry = CloudGeometry::new(&loaded.connectome.neurons.soma_um, &regions);
    let drawn = geometry.placed().count();
    let d = gpu_engine::headless_device().map_err(|e| anyhow!("no wgpu adapter to render with: {e}"))?;
    let size = [1280u32, 800u32];
    let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &geometry);
    cloud.upload_rates(&d.queue, &rates.data);
    let camera = OrbitCamera::framing(&geometry.placed().collect::<Vec<_>>());
    let view = ViewSettings {
        view_proj: camera.view_projection(size[0] as f32 / size[1] as f32),
        viewport_px: [size[0] as f32, size[1] as f32],
        point_px: [1.2, 3.2],
        ghost: 0.08,
        rate_scale: 1.0,
        mode: ColourMode::Activity,
        white_background: false,
    };
    let target = Offscreen::new(&d.device, size);
    let frame = |step: usize| -> Result<()> {
        target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, step, [0.03, 0.03, 0.055, 1.0]);
        d.device.poll(wgpu_types_poll()).map(|_| ()).map_err(|e| anyhow!("GPU wait failed: {e}"))
    };
    frame(11)?;
    frame(11)?;
    // As many frames as fit in about 3 s (at least 5, at most 240), each waited to completion.
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (times.len() < 240 && start.elapsed().as_secs_f64() < 3.0) {
        let t = Instant::now();
        frame(times.len() % 12)?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let report = serde_json::json!({
        "adapter": d.adapter_name,
        "width": size[0],
        "height": size[1],
        "neurons_drawn": drawn,
        "frames": times.len(),
        "ms_per_frame_mean": mean,
        "ms_per_frame_median": times[times.len() / 2],
        "ms_per_frame_min": times[0],
        "frames_per_second": 1000.0 / mean,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} neurons at {}x{} on {}: {:.2} ms per frame (median {:.2}, min {:.2}, {} frames) = {:.0} frames/s",
            drawn,
            size[0],
            size[1],
            d.adapter_name,
            mean,
            times[times.len() / 2],
            times[0],
            times.len(),
            1000.0 / mean
        );
    }
    Ok(())
}

fn wgpu_types_poll() -> flychess_render::wgpu::PollType {
    flychess_render::wgpu::PollType::Wait { submission_index: None, timeout: None }
}
