//! The orbit camera of the brain view: it looks at a target from a yaw, pitch and distance, and
//! turns µm positions into clip space. Presets frame a brain from the front, the side and the top.

use glam::{Mat4, Vec3};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Front,
    Side,
    Top,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    /// Radians around the vertical axis.
    pub yaw: f32,
    /// Radians above the horizontal plane, kept inside ±89°.
    pub pitch: f32,
    pub distance: f32,
    pub fov_y: f32,
}

impl OrbitCamera {
    /// Frames the points' bounding sphere from the front.
    pub fn framing(points: &[[f32; 3]]) -> OrbitCamera {
        let finite: Vec<Vec3> = points.iter().map(|p| Vec3::from_array(*p)).filter(|p| p.is_finite()).collect();
        let centre = if finite.is_empty() { Vec3::ZERO } else { finite.iter().copied().sum::<Vec3>() / finite.len() as f32 };
        // The 98th percentile of distances: a few stray cells should not shrink the brain.
        let mut d: Vec<f32> = finite.iter().map(|p| p.distance(centre)).collect();
        d.sort_by(f32::total_cmp);
        let radius = d.get((d.len() * 98 / 100).min(d.len().saturating_sub(1))).copied().unwrap_or(1.0).max(1.0);
        let fov_y = 45f32.to_radians();
        OrbitCamera { target: centre, yaw: 0.0, pitch: 0.0, distance: radius / (fov_y / 2.0).sin(), fov_y }
    }

    pub fn eye(&self) -> Vec3 {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        self.target + dir * self.distance
    }

    /// Drag by (dx, dy) radians.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        self.yaw += dx;
        self.pitch = (self.pitch + dy).clamp(-89f32.to_radians(), 89f32.to_radians());
    }

    /// Moves the target across the screen by (dx, dy) in fractions of the view's height.
    pub fn pan(&mut self, dx: f32, dy: f32) {
        let forward = (self.target - self.eye()).normalize_or_zero();
        let right = forward.cross(Vec3::NEG_Y).normalize_or_zero();
        let up = right.cross(forward).normalize_or_zero();
        let height = 2.0 * self.distance * (self.fov_y / 2.0).tan();
        self.target += (-right * dx + up * dy) * height;
    }

    /// The three standard views of a brain: from the front, the side and the top.
    pub fn preset(&mut self, preset: Preset) {
        let (yaw, pitch) = match preset {
            Preset::Front => (0.0, 0.0),
            Preset::Side => (std::f32::consts::FRAC_PI_2, 0.0),
            // Dorsal is −y: the top view looks down from there.
            Preset::Top => (0.0, -89f32.to_radians()),
        };
        self.yaw = yaw;
        self.pitch = pitch;
    }

    /// Zoom by a factor (> 1 moves away).
    pub fn zoom(&mut self, factor: f32) {
        self.distance = (self.distance * factor).max(1e-3);
    }

    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        // Connectome coordinates grow ventrally in y: dorsal (−y) is up on screen.
        let view = Mat4::look_at_rh(self.eye(), self.target, Vec3::NEG_Y);
        let near = (self.distance * 0.01).max(1e-3);
        let proj = Mat4::perspective_rh(self.fov_y, aspect.max(1e-3), near, self.distance * 10.0);
        proj * view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_lands_in_the_middle_of_the_screen() {
        let pts = [[0.0, 0.0, 0.0], [100.0, 50.0, 20.0], [-40.0, 10.0, 5.0]];
        let mut cam = OrbitCamera::framing(&pts);
        for (dx, dy) in [(0.0, 0.0), (1.0, 0.3), (-2.0, -0.7)] {
            cam.orbit(dx, dy);
            let clip = cam.view_projection(1.6) * cam.target.extend(1.0);
            let ndc = clip.truncate() / clip.w;
            assert!(ndc.x.abs() < 1e-4 && ndc.y.abs() < 1e-4, "{ndc:?}");
        }
    }

    #[test]
    fn every_point_of_the_framed_cloud_is_on_screen() {
        let pts: Vec<[f32; 3]> = (0..100).map(|i| [(i as f32).sin() * 300.0, (i as f32 * 0.7).cos() * 200.0, i as f32]).collect();
        let cam = OrbitCamera::framing(&pts);
        let vp = cam.view_projection(1.0);
        let on_screen = pts
            .iter()
            .filter(|p| {
                let clip = vp * Vec3::from_array(**p).extend(1.0);
                let ndc = clip.truncate() / clip.w;
                ndc.x.abs() <= 1.0 && ndc.y.abs() <= 1.0 && (0.0..=1.0).contains(&ndc.z)
            })
            .count();
        assert!(on_screen >= 98, "{on_screen} of 100 (the framing ignores the farthest 2%)");
    }

    #[test]
    fn panning_moves_the_target_across_the_screen() {
        let mut cam = OrbitCamera::framing(&[[0.0, 0.0, 0.0], [10.0, 10.0, 10.0]]);
        let before = cam.target;
        cam.pan(0.1, 0.0);
        let vp = cam.view_projection(1.0);
        let clip = vp * before.extend(1.0);
        // The old target now sits to the right of the centre (the scene moved with the pointer).
        assert!(clip.x / clip.w > 0.05, "{}", clip.x / clip.w);
        cam.preset(Preset::Top);
        assert!(cam.eye().y < cam.target.y, "the top view looks from the dorsal side (−y)");
    }

    #[test]
    fn pitch_is_clamped_and_zoom_stays_positive() {
        let mut cam = OrbitCamera::framing(&[[0.0; 3]]);
        cam.orbit(0.0, 10.0);
        assert!(cam.pitch <= 89f32.to_radians());
        cam.zoom(0.0);
        assert!(cam.distance > 0.0);
    }
}
