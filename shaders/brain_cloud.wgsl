// The brain view: one camera-facing sprite per neuron (instanced, six vertices each), placed at
// its cell body (µm), sized and lit by its rate at the shown step, coloured by activity (the
// inferno map, perceptually even) or by region. The rates arrive as a per-instance vertex buffer:
// the simulator's own rates buffer (layout [(step·neurons + neuron)·batch + position], so the
// step and position are a byte offset and the batch is the stride) or a CPU upload with the same
// layout. Neurons without a cell-body position are left out by the draw call itself (it covers
// only the runs of placed neurons), never reach this shader.

struct View {
    view_proj: mat4x4<f32>,
    // Viewport size in pixels.
    viewport: vec2<f32>,
    // Sprite radius in pixels of a silent and of a fully active neuron.
    point_px: vec2<f32>,
    // Brightness of a silent neuron (0: invisible; the app keeps a faint outline).
    ghost: f32,
    // Rate drawn at the top of the colour map.
    rate_scale: f32,
    // 0: colour by activity, 1: colour by region, 2: a signed value (the error going back:
    // red above 0, blue below, sized by its size).
    mode: u32,
    // 1: drawn on a white background (dark colours, normal blending of darkness).
    white_background: u32,
    palette: array<vec4<f32>, 20>,
};

@group(0) @binding(0) var<uniform> view: View;

struct Out {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
    @location(1) rate: f32,
    @location(2) @interpolate(flat) region: u32,
    @location(3) mark: f32,
    // The value's sign in blame mode (+1, −1 or 0).
    @location(4) polarity: f32,
};

fn corner(i: u32) -> vec2<f32> {
    switch i {
        case 0u: { return vec2<f32>(-1.0, -1.0); }
        case 1u: { return vec2<f32>(1.0, -1.0); }
        case 2u: { return vec2<f32>(1.0, 1.0); }
        case 3u: { return vec2<f32>(-1.0, -1.0); }
        case 4u: { return vec2<f32>(1.0, 1.0); }
        default: { return vec2<f32>(-1.0, 1.0); }
    }
}

@vertex
fn vs(
    @builtin(vertex_index) vertex: u32,
    @location(0) position: vec4<f32>,
    @location(1) rate: f32,
    @location(2) mark: f32,
) -> Out {
    var out: Out;
    let c = corner(vertex % 6u);
    out.uv = c;
    out.region = u32(max(position.w, 0.0));
    out.mark = mark;
    let signed = clamp(rate / max(view.rate_scale, 1e-6), -1.0, 1.0);
    // Blame: sized by |value| (a square root, so the many small values still show).
    let r = select(max(signed, 0.0), sqrt(abs(signed)), view.mode == 2u);
    out.rate = r;
    out.polarity = sign(signed);
    var clip = view.view_proj * vec4<f32>(position.xyz, 1.0);
    var radius = mix(view.point_px.x, view.point_px.y, r);
    if mark > 0.5 {
        radius = max(radius, view.point_px.y) * 1.5;
    }
    let offset = c * radius * 2.0 / view.viewport;
    clip = vec4<f32>(clip.xy + offset * clip.w, clip.z, clip.w);
    out.clip = clip;
    return out;
}

// Inferno, as a polynomial fit (Matt Zucker's, CC0); mirrored on the CPU for the legend.
fn inferno(t: f32) -> vec3<f32> {
    let c0 = vec3<f32>(0.0002189403691192265, 0.001651004631001012, -0.01948089843709184);
    let c1 = vec3<f32>(0.1065134194856116, 0.5639564367884091, 3.932712388889277);
    let c2 = vec3<f32>(11.60249308247187, -3.972853965665698, -15.9423941062914);
    let c3 = vec3<f32>(-41.70399613139459, 17.43639888205313, 44.35414519872813);
    let c4 = vec3<f32>(77.162935699427, -33.40235894210092, -81.80730925738993);
    let c5 = vec3<f32>(-71.31942824499214, 32.62606426397723, 73.20951985803202);
    let c6 = vec3<f32>(25.13112622477341, -12.24266895238567, -23.07032500287172);
    return clamp(c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * c6))))), vec3<f32>(0.0), vec3<f32>(1.0));
}

@fragment
fn fs(in: Out) -> @location(0) vec4<f32> {
    let d2 = dot(in.uv, in.uv);
    if d2 > 1.0 {
        discard;
    }
    // A bright core with a soft glow around it.
    let glow = exp(-4.0 * d2);
    var colour: vec3<f32>;
    var strength: f32;
    if view.mode == 1u {
        colour = view.palette[min(in.region, 19u)].rgb;
        strength = max(in.rate, view.ghost);
    } else if view.mode == 2u {
        // Diverging: red where more activity would lower the loss, blue where less would.
        let red = vec3<f32>(0.95, 0.25, 0.15);
        let blue = vec3<f32>(0.2, 0.45, 1.0);
        colour = mix(vec3<f32>(0.5, 0.5, 0.5), select(blue, red, in.polarity > 0.0), clamp(in.rate * 1.5, 0.0, 1.0));
        strength = max(in.rate, view.ghost * 0.5);
    } else {
        colour = inferno(0.25 + 0.75 * in.rate);
        strength = select(in.rate, max(in.rate, view.ghost), in.rate <= view.ghost);
    }
    if in.mark > 1.5 {
        colour = vec3<f32>(1.0, 1.0, 1.0);
        strength = 1.0;
    } else if in.mark > 0.5 {
        colour = vec3<f32>(0.35, 0.85, 1.0);
        strength = 1.0;
    }
    if view.white_background == 1u {
        // Ink on paper: darker where more active.
        colour = colour * 0.8;
    }
    let alpha = clamp(strength * glow, 0.0, 1.0);
    // Premultiplied alpha.
    return vec4<f32>(colour * alpha, alpha);
}
