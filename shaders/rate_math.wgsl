// The rate model's arithmetic as both engines do it, appended to brain_step.wgsl,
// brain_backward.wgsl and mushroom_body.wgsl when they are compiled. Each file's own `params` has
// a `zero` (always 0), `beta` and `leak`.

// a * b rounded on its own, like the CPU's: a driver may fuse a product and the add after it into
// one fma (NVIDIA's does), which rounds once instead of twice. The product's bits go through an XOR
// with a zero the compiler cannot see, so the rounded product is what gets added.
fn product(a: f32, b: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(a * b) ^ params.zero);
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
    let e = product(exp_reduced(x, n), bitcast<f32>(u32(n + 127) << 23u));
    return 1.0 - divide(2.0, e + 1.0);
}

// e^x / 2^n for the n nearest x / ln 2: x - n ln 2 in two parts, then the Cephes polynomial.
fn exp_reduced(x: f32, n: i32) -> f32 {
    let nf = f32(n);
    let r = product(-nf, -0.00021219444) + (product(-nf, 0.6933594) + x);
    var p = 0.00019875692;
    p = product(p, r) + 0.0013981999;
    p = product(p, r) + 0.008333452;
    p = product(p, r) + 0.041665796;
    p = product(p, r) + 0.16666665;
    p = product(p, r) + 0.5;
    return product(p, r * r) + (r + 1.0);
}

// The new rate of one neuron for one position from its input u and its previous rate.
fn activate(u: f32, mu: f32, gain: f32, previous: f32) -> f32 {
    let z = product(u - mu, gain) + params.beta;
    return product(params.leak, tanh_relu(z)) + product(1.0 - params.leak, previous);
}
