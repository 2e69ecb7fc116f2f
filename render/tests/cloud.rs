//! The point cloud on a real wgpu device (Mesa lavapipe without a GPU): what lands on which pixel,
//! picking with the same projection, every WGSL file validated by naga, and the simulator's rates
//! buffer bound as it is — the same picture as the CPU upload, with a buffer that cannot be mapped.

use flychess_brain::brain::Brain;
use flychess_brain::brain::gpu::{Device, GpuEngine, headless_device};
use flychess_render::camera::OrbitCamera;
use flychess_render::cloud::{CloudGeometry, CloudRenderer, ColourMode, OFFSCREEN_FORMAT, Offscreen, Rates, ViewSettings, pick, project};

const SIZE: [u32; 2] = [96, 64];

fn device() -> Option<Device> {
    match headless_device() {
        Ok(d) => Some(d),
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("CI has lavapipe: {e}"),
        Err(e) => {
            eprintln!("skipping: {e}");
            None
        }
    }
}

/// Three neurons: one lit at the left, one silent at the right, one without a cell body.
fn geometry() -> CloudGeometry {
    CloudGeometry::new(&[[-40.0, 0.0, 0.0], [40.0, 0.0, 0.0], [f32::NAN, f32::NAN, f32::NAN]], &[4, 5, 6])
}

fn settings(cam: &OrbitCamera, mode: ColourMode) -> ViewSettings {
    ViewSettings {
        view_proj: cam.view_projection(SIZE[0] as f32 / SIZE[1] as f32),
        viewport_px: [SIZE[0] as f32, SIZE[1] as f32],
        point_px: [2.0, 5.0],
        ghost: 0.0,
        rate_scale: 1.0,
        mode,
        white_background: false,
    }
}

fn camera(g: &CloudGeometry) -> OrbitCamera {
    OrbitCamera::framing(&g.placed().collect::<Vec<_>>())
}

fn pixel(img: &[u8], at: [f32; 2]) -> [u8; 4] {
    let (x, y) = (at[0] as usize, at[1] as usize);
    let i = (y * SIZE[0] as usize + x) * 4;
    [img[i], img[i + 1], img[i + 2], img[i + 3]]
}

#[test]
fn a_neuron_at_rate_one_lights_its_pixel_and_a_silent_one_does_not() {
    let Some(d) = device() else { return };
    let g = geometry();
    let cam = camera(&g);
    let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &g);
    // Two steps: at step 0 both silent, at step 1 the first neuron fires.
    cloud.upload_rates(&d.queue, &[0.0, 0.0, 1.0, 1.0, 0.0, 1.0]);
    let view = settings(&cam, ColourMode::Activity);
    let target = Offscreen::new(&d.device, SIZE);
    let lit = project(view.view_proj, view.viewport_px, [-40.0, 0.0, 0.0]).unwrap();
    let dark = project(view.view_proj, view.viewport_px, [40.0, 0.0, 0.0]).unwrap();
    assert!((lit[0] - dark[0]).abs() > 20.0, "the two neurons land apart");

    target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, 1, [0.0, 0.0, 0.0, 1.0]);
    let img = target.read(&d.device, &d.queue).unwrap();
    let p = pixel(&img, lit);
    assert!(p[0] as u32 + p[1] as u32 + p[2] as u32 > 300, "lit pixel {p:?}");
    assert_eq!(pixel(&img, dark), [0, 0, 0, 255], "a silent neuron leaves the background");
    // Far from both: background.
    assert_eq!(pixel(&img, [lit[0], 2.0]), [0, 0, 0, 255]);
    // The NaN neuron (no cell body) draws nothing: every lit pixel is near the first neuron.
    for y in 0..SIZE[1] {
        for x in 0..SIZE[0] {
            let q = pixel(&img, [x as f32, y as f32]);
            if q[..3] != [0, 0, 0] {
                assert!((x as f32 - lit[0]).abs() <= 8.0 && (y as f32 - lit[1]).abs() <= 8.0, "stray pixel at {x},{y}");
            }
        }
    }

    // Step 0: both silent, nothing drawn at all.
    target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, 0, [0.0, 0.0, 0.0, 1.0]);
    let img = target.read(&d.device, &d.queue).unwrap();
    assert!(img.chunks(4).all(|c| c == [0, 0, 0, 255]));
}

#[test]
fn the_draw_call_covers_only_the_runs_of_placed_neurons() {
    use flychess_render::cloud::placed_runs;
    let nan = [f32::NAN; 3];
    let g = CloudGeometry::new(&[nan, [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], nan, nan, [3.0, 0.0, 0.0], nan], &[0; 7]);
    assert_eq!(placed_runs(&g), vec![1..3, 5..6]);
    assert_eq!(placed_runs(&geometry()), vec![0..2], "the test cloud's unplaced neuron is left out");
    let all = CloudGeometry::new(&[[0.0; 3]; 4], &[0; 4]);
    assert_eq!(placed_runs(&all), vec![0..4], "one draw when every neuron is placed");
}

#[test]
fn region_colours_come_from_the_palette() {
    let Some(d) = device() else { return };
    let g = geometry();
    let cam = camera(&g);
    let cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &g);
    let mut view = settings(&cam, ColourMode::Region);
    view.ghost = 1.0;
    // Big sprites: the pixel centre sits at the core of the glow.
    view.point_px = [10.0, 10.0];
    let target = Offscreen::new(&d.device, SIZE);
    target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, 0, [0.0, 0.0, 0.0, 1.0]);
    let img = target.read(&d.device, &d.queue).unwrap();
    let at = project(view.view_proj, view.viewport_px, [40.0, 0.0, 0.0]).unwrap();
    let want = flychess_render::cloud::REGION_PALETTE[5];
    let got = pixel(&img, at);
    for k in 0..3 {
        assert!((got[k] as i32 - want[k] as i32).abs() <= 8, "centre {got:?}, palette {want:?}");
    }
}

#[test]
fn picking_returns_the_neuron_under_the_pointer() {
    let g = geometry();
    let cam = camera(&g);
    let view = settings(&cam, ColourMode::Activity);
    let a = project(view.view_proj, view.viewport_px, [-40.0, 0.0, 0.0]).unwrap();
    let b = project(view.view_proj, view.viewport_px, [40.0, 0.0, 0.0]).unwrap();
    assert_eq!(pick(&g, view.view_proj, view.viewport_px, a, 6.0), Some(0));
    assert_eq!(pick(&g, view.view_proj, view.viewport_px, [b[0] + 2.0, b[1] - 1.0], 6.0), Some(1));
    assert_eq!(pick(&g, view.view_proj, view.viewport_px, [(a[0] + b[0]) / 2.0, 1.0], 6.0), None);
}

#[test]
fn every_shader_validates_with_naga() {
    use wgpu::naga;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shaders");
    let mut seen = 0;
    // rate_math.wgsl is a fragment appended to the shaders that name it (as the engines compile
    // them); it is validated as part of each.
    let fragment = std::fs::read_to_string(dir.join("rate_math.wgsl")).unwrap();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "wgsl") && !path.ends_with("rate_math.wgsl") {
            let mut text = std::fs::read_to_string(&path).unwrap();
            if text.contains("rate_math.wgsl") {
                text.push_str(&fragment);
            }
            let module = naga::front::wgsl::parse_str(&text).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&text)));
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
                .validate(&module)
                .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
            seen += 1;
        }
    }
    assert!(seen >= 2, "brain_step.wgsl and brain_cloud.wgsl at least");
}

#[test]
fn the_simulators_buffer_is_bound_directly_and_draws_what_the_upload_draws() {
    let Some(d) = device() else { return };
    // A small brain: a chain of three neurons and one alone.
    let brain = Brain::from_parts(4, vec![0, 0, 1, 2, 2], vec![0, 1], vec![0.8, -0.6], vec![]);
    let mut engine = GpuEngine::new(d.device.clone(), d.queue.clone(), &brain).unwrap();
    let rates = engine.think(&[[[false; 64]; 12]]).unwrap().clone();
    engine.wait().unwrap();
    assert!(!rates.usage().contains(wgpu::BufferUsages::MAP_READ), "the viewer never maps the rates");
    assert!(rates.usage().contains(wgpu::BufferUsages::VERTEX));
    let on_cpu = engine.read_rates().unwrap();
    assert!(on_cpu.data.iter().any(|&r| r > 0.05), "the brain does something");

    let g = CloudGeometry::new(&[[-40.0, 0.0, 0.0], [0.0, 0.0, 0.0], [40.0, 0.0, 0.0], [0.0, 30.0, 0.0]], &[0, 1, 2, 3]);
    let cam = camera(&g);
    let view = settings(&cam, ColourMode::Activity);
    let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &g);
    cloud.upload_rates(&d.queue, &on_cpu.data);
    let target = Offscreen::new(&d.device, SIZE);
    for step in [0, 5, 11] {
        target.render(
            &d.device,
            &d.queue,
            &cloud,
            &view,
            Rates::Buffer { buffer: &rates, batch: 1, position: 0 },
            step,
            [0.0, 0.0, 0.0, 1.0],
        );
        let direct = target.read(&d.device, &d.queue).unwrap();
        target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, step, [0.0, 0.0, 0.0, 1.0]);
        let uploaded = target.read(&d.device, &d.queue).unwrap();
        let differ = direct.iter().zip(&uploaded).filter(|(a, b)| a != b).count();
        assert!(differ == 0, "step {step}: {differ} bytes differ");
        assert!(direct.chunks(4).any(|c| c[..3] != [0, 0, 0]), "something is drawn at step {step}");
    }
}

#[test]
fn one_position_of_a_batch_is_drawn_straight_from_the_batchs_buffer() {
    use flychess_brain::eye::{EyeCell, EyeRole};
    let Some(d) = device() else { return };
    // The chain's first neuron sees a pawn on e2, the lone neuron a rook on a1: the boards differ.
    let eye =
        vec![EyeCell { neuron: 0, square: 12, role: EyeRole::PieceType(0) }, EyeCell { neuron: 3, square: 0, role: EyeRole::PieceType(3) }];
    let brain = Brain::from_parts(4, vec![0, 0, 1, 2, 2], vec![0, 1], vec![0.8, -0.6], eye);
    let mut engine = GpuEngine::new(d.device.clone(), d.queue.clone(), &brain).unwrap();
    // Three boards: empty, one piece, a full rank (different input to the eye).
    let mut one = [[false; 64]; 12];
    one[0][12] = true;
    let mut rank = [[false; 64]; 12];
    rank[3][..8].fill(true);
    let rates = engine.think(&[[[false; 64]; 12], one, rank]).unwrap().clone();
    engine.wait().unwrap();
    let on_cpu = engine.read_rates().unwrap();
    let at_last: Vec<Vec<f32>> = (0..3).map(|p| (0..4).map(|k| on_cpu.at(11, k, p)).collect()).collect();
    assert!(
        at_last[0] != at_last[1] && at_last[1] != at_last[2] && at_last[0] != at_last[2],
        "the three boards think differently: {at_last:?}"
    );
    let g = CloudGeometry::new(&[[-40.0, 0.0, 0.0], [0.0, 0.0, 0.0], [40.0, 0.0, 0.0], [0.0, 30.0, 0.0]], &[0, 1, 2, 3]);
    let cam = camera(&g);
    let view = settings(&cam, ColourMode::Activity);
    let target = Offscreen::new(&d.device, SIZE);
    for position in 0..3 {
        // Position `position`'s own rates (step-major), uploaded, against the batch bound with a stride.
        let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &g);
        let own: Vec<f32> = (0..12).flat_map(|s| (0..4).map(move |k| (s, k))).map(|(s, k)| on_cpu.at(s, k, position)).collect();
        cloud.upload_rates(&d.queue, &own);
        for step in [0, 6, 11] {
            target.render(
                &d.device,
                &d.queue,
                &cloud,
                &view,
                Rates::Buffer { buffer: &rates, batch: 3, position },
                step,
                [0.0, 0.0, 0.0, 1.0],
            );
            let direct = target.read(&d.device, &d.queue).unwrap();
            target.render(&d.device, &d.queue, &cloud, &view, Rates::Uploaded, step, [0.0, 0.0, 0.0, 1.0]);
            let uploaded = target.read(&d.device, &d.queue).unwrap();
            let differ = direct.iter().zip(&uploaded).filter(|(a, b)| a != b).count();
            assert!(differ == 0, "position {position}, step {step}: {differ} bytes differ");
        }
    }
}
