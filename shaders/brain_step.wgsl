// One step of the fly's rate model for a batch of positions (the GPU twin of sim/src/brain/cpu.rs).
//
//   u = W r + x;  z = (u - mu_t) * gain_t + beta  (gain = alpha / sigma_t);  r <- (1 - leak) r + leak max(0, tanh z)
//
// One invocation per (neuron, position). Rates of all 12 steps live in one buffer that the brain
// view binds directly: rates[(step * neurons + neuron) * batch + position]. Step t reads step t-1
// of the same buffer and writes step t; at step 0 every earlier rate is 0.

struct StepParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,   // workgroups along x in the 2-D dispatch (x is capped at 65,535)
    alpha: f32,
    beta: f32,
    leak: f32,
    _pad: f32,
}

@group(0) @binding(0) var<uniform> params: StepParams;
@group(0) @binding(1) var<storage, read> row_start: array<u32>;
@group(0) @binding(2) var<storage, read> pre: array<u32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;
@group(0) @binding(4) var<storage, read> eye_slot: array<u32>;
@group(0) @binding(5) var<storage, read> eye_input: array<f32>;     // [cell * batch + position]
@group(0) @binding(6) var<storage, read> homeostasis: array<f32>;   // mu [step * n + j], then gain = alpha / sigma
@group(0) @binding(7) var<storage, read_write> rates: array<f32>;

const NO_EYE: u32 = 0xffffffffu;
const STEPS: u32 = 12u;

// max(0, tanh z) as 1 - 2 / (e^{2z} + 1), clamped like the CPU engine so it never overflows.
// e^x is computed exactly as the CPU does (range reduction by ln 2, the Cephes polynomial, 2^n
// from the exponent bits) rather than with the driver's exp, whose precision varies by device.
// Plain multiply-adds, never fma(): WGSL leaves fma's rounding to the driver, the CPU never fuses.
fn tanh_relu(z: f32) -> f32 {
    let x = clamp(2.0 * z, 0.0, 18.0);
    let n = i32(x * 1.442695 + 0.5);
    let nf = f32(n);
    let r = -nf * -0.00021219444 + (-nf * 0.6933594 + x);
    var p = 0.00019875692;
    p = p * r + 0.0013981999;
    p = p * r + 0.008333452;
    p = p * r + 0.041665796;
    p = p * r + 0.16666665;
    p = p * r + 0.5;
    let e = (p * (r * r) + (r + 1.0)) * bitcast<f32>(u32(n + 127) << 23u);
    return 1.0 - 2.0 / (e + 1.0);
}

@compute @workgroup_size(64)
fn step(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let n = params.neurons;
    let batch = params.batch;
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= n * batch) {
        return;
    }
    let j = i / batch;
    let b = i % batch;
    let t = params.step;

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
            u = rates[base + pre[e] * batch + b] * weight[e] + u;
        }
        previous = rates[base + i];
    }
    let mu = homeostasis[t * n + j];
    let gain = homeostasis[STEPS * n + t * n + j];
    let z = (u - mu) * gain + params.beta;
    rates[t * n * batch + i] = params.leak * tanh_relu(z) + (1.0 - params.leak) * previous;
}
