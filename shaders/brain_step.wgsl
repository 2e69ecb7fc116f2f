// One step of the fly's rate model for a batch of positions (the GPU twin of sim/src/brain/cpu.rs).
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

const NO_EYE: u32 = 0xffffffffu;
const STEPS: u32 = 12u;

// a * b rounded on its own, like the CPU's: a driver may fuse a product and the add after it into
// one fma (NVIDIA's does), which rounds once instead of twice. The product's bits go through an XOR
// with a zero the compiler cannot see, so the rounded product is what gets added.
fn product(a: f32, b: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) ^ params.zero);
}

fn product4(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return bitcast<vec4<f32>>(bitcast<vec4<u32>>(a * b) ^ vec4<u32>(params.zero));
}

// a / b rounded correctly, like the CPU's, whatever the driver's division (WGSL allows 2.5 ulp):
// one correction by the residual, which a fused fma gives exactly. On an H200 this made the
// engines agree bit for bit. lavapipe's fma is not fused (LLVM's fmuladd), so there the
// correction can move a correct quotient by an ulp: rates stay within about 1e-5 of the CPU's.
// (Choosing among the quotient's neighbours by an exact Veltkamp residual instead was bit-exact on
// lavapipe but 1.2e-3 off on the H200, whose compiler rearranged the splitting.)
fn divide(a: f32, b: f32) -> f32 {
    let q = a / b;
    return fma(fma(-q, b, a), 1.0 / b, q);
}

// max(0, tanh z) as 1 - 2 / (e^{2z} + 1), clamped like the CPU engine so it never overflows.
// e^x is computed exactly as the CPU does (range reduction by ln 2, the Cephes polynomial, 2^n
// from the exponent bits) rather than with the driver's exp, whose precision varies by device.
fn tanh_relu(z: f32) -> f32 {
    let x = clamp(2.0 * z, 0.0, 18.0);
    let n = i32(product(x, 1.442695) + 0.5);
    let nf = f32(n);
    let r = product(-nf, -0.00021219444) + (product(-nf, 0.6933594) + x);
    var p = 0.00019875692;
    p = product(p, r) + 0.0013981999;
    p = product(p, r) + 0.008333452;
    p = product(p, r) + 0.041665796;
    p = product(p, r) + 0.16666665;
    p = product(p, r) + 0.5;
    let e = product(product(p, r * r) + (r + 1.0), bitcast<f32>(u32(n + 127) << 23u));
    return 1.0 - divide(2.0, e + 1.0);
}

// The new rate of one neuron for one position from its input u and its previous rate.
fn activate(u: f32, mu: f32, gain: f32, previous: f32) -> f32 {
    let z = product(u - mu, gain) + params.beta;
    return product(params.leak, tanh_relu(z)) + product(1.0 - params.leak, previous);
}

// One invocation per (neuron, position).
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
            u = product(rates[base + pre[e] * batch + b], weight[e]) + u;
        }
        previous = rates[base + i];
    }
    rates[t * n * batch + i] = activate(u, homeostasis[t * n + j], homeostasis[STEPS * n + t * n + j], previous);
}

// One invocation per (neuron, four consecutive positions): the same sums in the same order, with
// each sender's rates fetched four positions at a time (`batch` a multiple of 4).
@compute @workgroup_size(64)
fn step4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let n = params.neurons;
    let quads = params.batch / 4u;
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= n * quads) {
        return;
    }
    let j = i / quads;
    let q = i % quads;
    let t = params.step;

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
