//! Figures of several frames on a real wgpu device (lavapipe without a GPU): the 12 steps at once
//! put each step's frame in its own tile with its caption, and the replay GIF has one frame per
//! step, looping, each showing its step.

use flychess_brain::brain::gpu::headless_device;
use flychess_render::camera::OrbitCamera;
use flychess_render::cloud::{CloudGeometry, CloudRenderer, ColourMode, OFFSCREEN_FORMAT, ViewSettings};
use flychess_render::figure::{Frames, replay_gif, step_grid};

/// Two neurons, left and right: the left fires at even steps, the right at odd ones.
fn scene() -> (CloudGeometry, Vec<f32>) {
    let g = CloudGeometry::new(&[[-40.0, 0.0, 0.0], [40.0, 0.0, 0.0]], &[4, 5]);
    let rates = (0..12).flat_map(|t| if t % 2 == 0 { [1.0, 0.0] } else { [0.0, 1.0] }).collect();
    (g, rates)
}

fn bright(p: &image::Rgba<u8>) -> bool {
    p.0[0] as u32 + p.0[1] as u32 + p.0[2] as u32 > 200
}

#[test]
fn the_twelve_steps_land_in_their_tiles_with_captions_and_the_gif_replays_them() {
    let d = match headless_device() {
        Ok(d) => d,
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("CI has lavapipe: {e}"),
        Err(e) => return eprintln!("skipping: {e}"),
    };
    let (g, rates) = scene();
    let mut cloud = CloudRenderer::new(&d.device, OFFSCREEN_FORMAT, &g);
    cloud.upload_rates(&d.queue, &rates);
    let camera = OrbitCamera::framing(&g.placed().collect::<Vec<_>>());
    let view = |size: [u32; 2]| ViewSettings {
        view_proj: camera.view_projection(size[0] as f32 / size[1] as f32),
        viewport_px: [size[0] as f32, size[1] as f32],
        point_px: [3.0, 6.0],
        ghost: 0.0,
        rate_scale: 1.0,
        mode: ColourMode::Activity,
        white_background: false,
    };
    let frames = Frames { device: &d.device, queue: &d.queue, cloud: &cloud, view: &view, background: [0.0, 0.0, 0.0, 1.0] };
    let captions: Vec<String> = (1..=12).map(|k| format!("Step {k}")).collect();
    let (w, h) = (480u32, 360u32);
    let img = step_grid(&frames, [w, h], "Twelve steps", &captions).unwrap();
    if let Ok(dir) = std::env::var("FLYCHESS_DOCS") {
        img.save(std::path::Path::new(&dir).join("figure-test-grid.png")).unwrap();
    }
    assert_eq!((img.width(), img.height()), (w, h));
    let title_h = (h as f32 * 0.06).round() as u32;
    let (tile_w, tile_h) = (w / 4, (h - title_h) / 3);
    let caption_h = (tile_h as f32 * 0.13).round() as u32;
    assert!((0..title_h).any(|y| (0..w).any(|x| bright(img.get_pixel(x, y)))), "the title is written");
    let mut sides = Vec::new();
    for step in 0..12u32 {
        let (x0, y0) = ((step % 4) * tile_w, title_h + (step / 4) * tile_h);
        let lit = |left: bool| {
            (y0..y0 + tile_h - caption_h)
                .any(|y| (0..tile_w / 2).any(|dx| bright(img.get_pixel(x0 + if left { dx } else { tile_w / 2 + dx }, y))))
        };
        // The camera may show either neuron on either side: the two alternate, one at a time.
        let (left, right) = (lit(true), lit(false));
        assert!(left != right, "step {}: one neuron fires, one is silent", step + 1);
        sides.push(left);
        assert!(
            (y0 + tile_h - caption_h..y0 + tile_h).any(|y| (x0..x0 + tile_w).any(|x| bright(img.get_pixel(x, y)))),
            "step {}: its caption",
            step + 1
        );
    }

    assert!(sides.windows(2).all(|w| w[0] != w[1]), "each step shows its own frame: {sides:?}");

    let gif = replay_gif(&frames, [160, 120], &captions, 100).unwrap();
    use image::AnimationDecoder;
    let decoded: Vec<image::Frame> =
        image::codecs::gif::GifDecoder::new(std::io::Cursor::new(gif)).unwrap().into_frames().collect::<Result<_, _>>().unwrap();
    assert_eq!(decoded.len(), 12, "one frame per step");
    let cloud_h = 120 - (120.0f32 * 0.1).round() as u32;
    for (step, f) in decoded.iter().enumerate() {
        let b = f.buffer();
        let left = (0..cloud_h).any(|y| (0..80).any(|x| bright(b.get_pixel(x, y))));
        let right = (0..cloud_h).any(|y| (80..160).any(|x| bright(b.get_pixel(x, y))));
        assert_eq!((left, right), (sides[step], !sides[step]), "GIF frame {step} shows step {}", step + 1);
    }
}
