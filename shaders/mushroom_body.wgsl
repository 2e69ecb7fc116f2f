// The dopamine fly's mushroom body on the GPU (the twin of sim/arena/src/bio/mod.rs: `sparse_kenyon`
// and `add_input`), run between the brain's steps on the same rates buffer as brain_step.wgsl.
// At every step t >= 1:
//
//   kenyon_cut:  cut_b = the p-th highest Kenyon cell rate of position b at step t-1
//                (an exact radix select on the rates' bits: the very value the CPU's
//                select_nth_unstable finds)
//   [brain_step: every neuron's new rate from W' r + x, W' the brain without the plastic synapses]
//   mbon_step:   each MBON's rate again, from W' r + x + sum_k M_k r_hat_k in the CPU's order,
//                r_hat_k = r_k sigmoid((r_k - cut_b) / width)
//
// The sigmoid's exp is a polynomial here and libm's on the CPU: the rates agree to rounding, not
// bit for bit. `product`, `divide`, `tanh_relu` and `activate` are in rate_math.wgsl, appended to
// this file when it is compiled.

struct BodyParams {
    neurons: u32,
    batch: u32,      // positions in the slab's rates buffer
    step: u32,       // the step being computed (>= 1); kenyon_cut reads the one before
    groups_x: u32,   // workgroups along x in mbon_step's 2-D dispatch
    beta: f32,
    leak: f32,
    zero: u32,       // always 0: see `product`
    width: f32,      // the sigmoid's width around the cut
    kenyons: u32,    // Kenyon cells: body[0 .. kenyons] are their neuron ids
    passing: u32,    // p: how many pass (1 ..= kenyons)
    mbons: u32,      // MBONs: body[mbon_at ..] their neuron ids
    mbon_at: u32,
    start_at: u32,   // body[start_at + i .. start_at + i + 1]: MBON i's plastic synapses
    kc_at: u32,      // body[kc_at + e]: the Kenyon cell (index into body[0 ..]) of synapse e
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: BodyParams;
@group(0) @binding(1) var<storage, read> row_start: array<u32>;
@group(0) @binding(2) var<storage, read> pre: array<u32>;
@group(0) @binding(3) var<storage, read> weight: array<f32>;
@group(0) @binding(4) var<storage, read> eye_slot: array<u32>;
@group(0) @binding(5) var<storage, read> eye_input: array<f32>;     // [cell * batch + position]
@group(0) @binding(6) var<storage, read> homeostasis: array<f32>;   // mu [step * n + j], then gain
@group(0) @binding(7) var<storage, read_write> rates: array<f32>;   // [(step * n + j) * batch + b]
@group(0) @binding(8) var<storage, read> body: array<u32>;
@group(0) @binding(9) var<storage, read> strength: array<f32>;      // M, one per plastic synapse
@group(0) @binding(10) var<storage, read_write> cuts: array<f32>;   // one per position

const NO_EYE: u32 = 0xffffffffu;
const STEPS: u32 = 12u;
const BINS: u32 = 256u;

// A float's bits as a key that orders like f32::total_cmp (negatives flipped whole, positives
// above them), and back.
fn order_key(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x80000000u) != 0u) {
        return ~bits;
    }
    return bits | 0x80000000u;
}

fn from_key(key: u32) -> f32 {
    if ((key & 0x80000000u) != 0u) {
        return bitcast<f32>(key & 0x7fffffffu);
    }
    return bitcast<f32>(~key);
}

var<workgroup> histogram: array<atomic<u32>, 256>;
// (the key's bits decided so far, the rank still sought among the keys that share them)
var<workgroup> decided: vec2<u32>;

// One workgroup per position: four passes of 8 bits from the top, each counting the Kenyon cells
// whose keys share the bits decided so far by their next 8 bits, then taking the bin where the
// p-th highest falls.
@compute @workgroup_size(256)
fn kenyon_cut(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let b = wg.x;
    let batch = params.batch;
    let base = (params.step - 1u) * params.neurons * batch;
    var prefix = 0u;
    var rank = params.passing;
    for (var digit = 0u; digit < 4u; digit = digit + 1u) {
        let shift = 24u - 8u * digit;
        atomicStore(&histogram[li], 0u);
        workgroupBarrier();
        for (var k = li; k < params.kenyons; k = k + BINS) {
            let key = order_key(rates[base + body[k] * batch + b]);
            if (digit == 0u || (key >> (shift + 8u)) == (prefix >> (shift + 8u))) {
                atomicAdd(&histogram[(key >> shift) & 255u], 1u);
            }
        }
        workgroupBarrier();
        if (li == 0u) {
            var above = 0u;
            var bin = 255u;
            loop {
                let count = atomicLoad(&histogram[bin]);
                if (above + count >= rank || bin == 0u) {
                    break;
                }
                above = above + count;
                bin = bin - 1u;
            }
            decided = vec2<u32>(prefix | (bin << shift), rank - above);
        }
        let now = workgroupUniformLoad(&decided);
        prefix = now.x;
        rank = now.y;
    }
    if (li == 0u && b < batch) {
        cuts[b] = from_key(prefix);
    }
}

// e^x as the CPU engine's tanh computes it (`exp_reduced` in rate_math.wgsl, then 2^n from the
// exponent bits), over the whole range a sigmoid meets: 0 below -87, +inf above 88.
fn exp_full(x: f32) -> f32 {
    if (x < -87.0) {
        return 0.0;
    }
    if (x > 88.0) {
        return bitcast<f32>(0x7f800000u);
    }
    let n = i32(floor(product(x, 1.442695) + 0.5));
    // 2^n in two halves, so n down to -126 and up to 127 both stay normal numbers.
    let half = n / 2;
    let a = bitcast<f32>(u32(half + 127) << 23u);
    let c = bitcast<f32>(u32(n - half + 127) << 23u);
    return product(product(exp_reduced(x, n), a), c);
}

fn sigmoid(x: f32) -> f32 {
    if (x < -80.0) {
        return 0.0;
    }
    return divide(1.0, 1.0 + exp_full(-x));
}

// One invocation per (MBON, position): its input in the CPU's order (the eye, W' r, then each
// plastic synapse), its new rate written over the one brain_step gave it.
@compute @workgroup_size(64)
fn mbon_step(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let n = params.neurons;
    let batch = params.batch;
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    if (i >= params.mbons * batch) {
        return;
    }
    let m = i / batch;
    let b = i % batch;
    let j = body[params.mbon_at + m];
    let t = params.step;
    let base = (t - 1u) * n * batch;

    var u = 0.0;
    let slot = eye_slot[j];
    if (slot != NO_EYE) {
        u = eye_input[slot * batch + b];
    }
    let end = row_start[j + 1u];
    for (var e = row_start[j]; e < end; e = e + 1u) {
        u = product(rates[base + pre[e] * batch + b], weight[e]) + u;
    }
    let cut = cuts[b];
    let last = body[params.start_at + m + 1u];
    for (var e = body[params.start_at + m]; e < last; e = e + 1u) {
        let r = rates[base + body[body[params.kc_at + e]] * batch + b];
        let hat = product(r, sigmoid(divide(r - cut, params.width)));
        u = product(strength[e], hat) + u;
    }
    rates[t * n * batch + j * batch + b] =
        activate(u, homeostasis[t * n + j], homeostasis[STEPS * n + t * n + j], rates[base + j * batch + b]);
}
