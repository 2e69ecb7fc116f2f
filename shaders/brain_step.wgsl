// One step of the fly's rate model for a batch of positions (the GPU twin of sim/brain/src/brain/cpu.rs).
//
//   u = W r + x;  z = (u - mu_t) * gain_t + beta  (gain = alpha / sigma_t);  r <- (1 - leak) r + leak max(0, tanh z)
//
// Rates of all 12 steps live in one buffer that the brain view binds directly:
// rates[(step * neurons + neuron) * batch + position]. Step t reads step t-1 of the same buffer and
// writes step t; at step 0 every earlier rate is 0. Every operation is one the CPU does, in the same
// order, rounded the same way (`product`, `divide`): bit for bit on an H200, within about 1e-5 on
// lavapipe (see `divide`).

struct StepParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,   // workgroups along x in the 2-D dispatch (x is capped at 65,535)
    alpha: f32,
    beta: f32,
    leak: f32,
    zero: u32,       // always 0: see `product`
    rows: u32,       // step_rows, step4_rows: how many rows `rows` lists
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(1) var<storage, read> row_start: array<u32>;
@group(0) @binding(2) var<storage, read> pre: array<u32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;
@group(0) @binding(4) var<storage, read> eye_slot: array<u32>;
@group(0) @binding(5) var<storage, read> eye_input: array<f32>;     // [cell * batch + position]
@group(0) @binding(6) var<storage, read> homeostasis: array<f32>;   // mu [step * n + j], then gain = alpha / sigma
@group(0) @binding(7) var<storage, read_write> rates: array<f32>;
// The same two buffers seen four positions at a time (`step4`, for batches that are a multiple of 4).
@group(0) @binding(8) var<storage, read> eye_input4: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read_write> rates4: array<vec4<f32>>;
// The rows a reader needs at this step (`step_rows`, `step4_rows`: the CPU engine's `NeededRows`);
// the others are left as they are, and nothing reads them.
@group(0) @binding(10) var<storage, read> rows: array<u32>;

const NO_EYE: u32 = 0xffffffffu;
const STEPS: u32 = 12u;

fn product4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(bitcast<vec4<u32>>(a * b) ^ vec4<u32>(params.zero));
}

// `product`, `divide`, `tanh_relu` and `activate` are in rate_math.wgsl, appended to this file
// when it is compiled (the backward pass, brain_backward.wgsl, and the mushroom body,
// mushroom_body.wgsl, use the same ones).

// Row j's new rate for position b.
fn neuron_step(j: u32, b: u32) {
    let n = params.neurons;
    let batch = params.batch;
    let t = params.step;
    let i = j * batch + b;

    var u = 0.0;
    let slot = eye_slot[j];
    if (slot != NO_EYE) {
        u = eye_input[slot * batch + b];
    }
    var previous = 0.0;
    if (t > 0u) {
        let base = (t - 1u) * n * batch;
        let end = row_start[j + 1u];
        for (var e = row_start[j]; e < end; e = e + 1u) {
            u = product(rates[base + pre[e] * batch + b], weight[e]) + u;
        }
        previous = rates[base + i];
    }
    rates[t * n * batch + i] = activate(u, homeostasis[t * n + j], homeostasis[STEPS * n + t * n + j], previous);
}

// Row j's new rates for the four positions of quad q: the same sums in the same order, with each
// sender's rates fetched four positions at a time (`batch` a multiple of 4).
fn neuron_step4(j: u32, q: u32) {
    let n = params.neurons;
    let quads = params.batch / 4u;
    let t = params.step;
    let i = j * quads + q;

    var u = vec4<f32>(0.0);
    let slot = eye_slot[j];
    if (slot != NO_EYE) {
        u = eye_input4[slot * quads + q];
    }
    var previous = vec4<f32>(0.0);
    if (t > 0u) {
        let base = (t - 1u) * n * quads;
        let end = row_start[j + 1u];
        for (var e = row_start[j]; e < end; e = e + 1u) {
            u = product4(rates4[base + pre[e] * quads + q], vec4<f32>(weight[e])) + u;
        }
        previous = rates4[base + i];
    }
    let mu = homeostasis[t * n + j];
    let gain = homeostasis[STEPS * n + t * n + j];
    rates4[t * n * quads + i] = vec4<f32>(
        activate(u.x, mu, gain, previous.x),
        activate(u.y, mu, gain, previous.y),
        activate(u.z, mu, gain, previous.z),
        activate(u.w, mu, gain, previous.w),
    );
}

// One invocation per (neuron, position).
@compute @workgroup_size(64)
fn step(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= params.neurons * params.batch) {
        return;
    }
    neuron_step(i / params.batch, i % params.batch);
}

// One invocation per (neuron, four consecutive positions).
@compute @workgroup_size(64)
fn step4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let quads = params.batch / 4u;
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= params.neurons * quads) {
        return;
    }
    neuron_step4(i / quads, i % quads);
}

// One invocation per (needed row, position).
@compute @workgroup_size(64)
fn step_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= params.rows * params.batch) {
        return;
    }
    neuron_step(rows[i / params.batch], i % params.batch);
}

// One invocation per (needed row, four consecutive positions).
@compute @workgroup_size(64)
fn step4_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let quads = params.batch / 4u;
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= params.rows * quads) {
        return;
    }
    neuron_step4(rows[i / quads], i % quads);
}
