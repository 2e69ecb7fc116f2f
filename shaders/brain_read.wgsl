// Copies the rates a reader wants out of one slab's think (the GPU twin of the CPU engine's
// `run_reading` visit): for each position of the slab, each read step and each wanted neuron,
//
//   out[((first + b) * read_steps + s) * wanted + k] = rates[(read_step[s] * neurons + neuron[k]) * slab + b]
//
// so a position's readings sit together (what the DN cache and the readout take) and only those
// bytes cross back to the CPU. One invocation per (position, read step, wanted neuron).

struct ReadParams {
    neurons: u32,
    slab: u32,        // positions in the slab's rates buffer (its stride)
    positions: u32,   // positions of the slab to copy out (the rest is padding)
    first: u32,       // where the slab's first position goes in `out`
    wanted: u32,      // neurons read
    read_steps: u32,  // steps read
    groups_x: u32,    // workgroups along x in the 2-D dispatch
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: ReadParams;
@group(0) @binding(1) var<storage, read> neuron: array<u32>;
@group(0) @binding(2) var<storage, read> read_step: array<u32>;
@group(0) @binding(3) var<storage, read> rates: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn copy_out(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = (wg.y * params.groups_x + wg.x) * 64u + li;
    let per_position = params.read_steps * params.wanted;
    if (i >= params.positions * per_position) {
        return;
    }
    let b = i / per_position;
    let s = (i % per_position) / params.wanted;
    let k = i % params.wanted;
    let src = (read_step[s] * params.neurons + neuron[k]) * params.slab + b;
    out[(params.first + b) * per_position + s * params.wanted + k] = rates[src];
}
