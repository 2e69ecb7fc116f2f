// The backward pass of the rate model, one step at a time (the GPU twin of sim/learning/src/bptt/mod.rs,
// which it is checked against): from the error r̄ on every neuron's rate after step t,
//
//   z̄ = r̄ · leak · (1 − a²) [a > 0]      a = max(0, tanh z), z recomputed from u = W r(t−1) + x
//   β̄_j += Σ z̄,  ᾱ_j += Σ z̄ (z − β_j) / α_j,  ū = z̄ · g
//   θ̄_e += Σ ū_post r(t−1)_pre            (the softplus factor is applied on the CPU)
//   r̄(t−1) = (1 − leak) r̄ + Wᵀ ū         (gathered per sender over the transpose of the CSR)
//
// Rates and errors are batch-inner: [neuron * batch + position]; `prev` is the forward pass's
// rates after step t − 1 (a buffer of its own per step). `product`, `divide` and `tanh_relu` are
// in rate_math.wgsl, appended to this file when it is compiled, so z and a are the engines' own.

struct BackParams {
    neurons: u32,
    batch: u32,
    step: u32,
    groups_x: u32,
    // 1 when there is a step before this one (t > 0).
    has_prev: u32,
    edges: u32,
    // The descending neurons the readout reads (the `seed` kernel's count).
    read: u32,
    zero: u32,
    beta: f32,
    leak: f32,
    // 1 / the number of steps the readout averages.
    read_share: f32,
    _pad: f32,
};

@group(0) @binding(0) var<uniform> params: BackParams;
@group(0) @binding(1) var<storage, read> row_start: array<u32>;
@group(0) @binding(2) var<storage, read> pre: array<u32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;
@group(0) @binding(4) var<storage, read> eye_slot: array<u32>;
@group(0) @binding(5) var<storage, read> eye_input: array<f32>;       // [cell * batch + position]
@group(0) @binding(6) var<storage, read> homeostasis: array<f32>;     // mu' [step * n + j], then gain
@group(0) @binding(7) var<storage, read> prev: array<f32>;            // rates after step t − 1
@group(0) @binding(8) var<storage, read_write> rbar: array<f32>;
@group(0) @binding(9) var<storage, read_write> ubar: array<f32>;
@group(0) @binding(10) var<storage, read_write> theta_grad: array<f32>;
@group(0) @binding(11) var<storage, read_write> neuron_grad: array<f32>; // alpha at j, beta at n + j
@group(0) @binding(12) var<storage, read> neuron_const: array<f32>;    // 1 / alpha_j at j, beta_j at n + j
@group(0) @binding(13) var<storage, read> post: array<u32>;
@group(0) @binding(14) var<storage, read> sender_start: array<u32>;
@group(0) @binding(15) var<storage, read> by_sender: array<u32>;
@group(0) @binding(16) var<storage, read_write> next_rbar: array<f32>;
@group(0) @binding(17) var<storage, read> seeds: array<f32>;           // d loss / d feature [position * read + k]
@group(0) @binding(18) var<storage, read> descending: array<u32>;

const NO_EYE: u32 = 0xffffffffu;
const STEPS: u32 = 12u;

fn index(wg: vec3<u32>, li: u32) -> u32 {
    return (wg.y * params.groups_x + wg.x) * 64u + li;
}

// The readout's error arriving at this step: one invocation per (read neuron, position).
@compute @workgroup_size(64)
fn seed(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = index(wg, li);
    let batch = params.batch;
    if (i >= params.read * batch) {
        return;
    }
    let k = i / batch;
    let b = i % batch;
    let j = descending[k];
    rbar[j * batch + b] = rbar[j * batch + b] + seeds[b * params.read + k] * params.read_share;
}

// One invocation per neuron: z̄ and ū for every position, the neuron's ᾱ and β̄ (summed over the
// positions in order).
@compute @workgroup_size(64)
fn rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = index(wg, li);
    let n = params.neurons;
    if (j >= n) {
        return;
    }
    let batch = params.batch;
    let t = params.step;
    let mu = homeostasis[t * n + j];
    let g = homeostasis[STEPS * n + t * n + j];
    let inv_alpha = neuron_const[j];
    let beta_j = neuron_const[n + j];
    let slot = eye_slot[j];
    var sa = 0.0;
    var sb = 0.0;
    for (var b = 0u; b < batch; b = b + 1u) {
        var u = 0.0;
        if (slot != NO_EYE) {
            u = eye_input[slot * batch + b];
        }
        if (params.has_prev == 1u) {
            let end = row_start[j + 1u];
            for (var e = row_start[j]; e < end; e = e + 1u) {
                u = product(prev[pre[e] * batch + b], weight[e]) + u;
            }
        }
        let z = product(u - mu, g) + params.beta;
        let a = tanh_relu(z);
        var zbar = 0.0;
        if (a > 0.0) {
            zbar = rbar[j * batch + b] * params.leak * (1.0 - a * a);
        }
        sb = sb + zbar;
        sa = sa + zbar * (z - beta_j);
        ubar[j * batch + b] = zbar * g;
    }
    neuron_grad[j] = neuron_grad[j] + sa * inv_alpha;
    neuron_grad[n + j] = neuron_grad[n + j] + sb;
}

// One invocation per connection: its share of this step's error.
@compute @workgroup_size(64)
fn theta(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let e = index(wg, li);
    if (e >= params.edges) {
        return;
    }
    let batch = params.batch;
    let j = post[e];
    let p = pre[e];
    var s = 0.0;
    for (var b = 0u; b < batch; b = b + 1u) {
        s = s + ubar[j * batch + b] * prev[p * batch + b];
    }
    theta_grad[e] = theta_grad[e] + s;
}

// One invocation per (sender, position): the error one step earlier.
@compute @workgroup_size(64)
fn transpose(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = index(wg, li);
    let batch = params.batch;
    if (i >= params.neurons * batch) {
        return;
    }
    let sender = i / batch;
    let b = i % batch;
    var acc = (1.0 - params.leak) * rbar[i];
    let end = sender_start[sender + 1u];
    for (var k = sender_start[sender]; k < end; k = k + 1u) {
        let e = by_sender[k];
        acc = acc + weight[e] * ubar[post[e] * batch + b];
    }
    next_rbar[i] = acc;
}
