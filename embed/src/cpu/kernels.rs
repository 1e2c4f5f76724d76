//! The element-wise work and the few-rows kernels, compiled for AVX-512 or
//! AVX2 and FMA when the CPU has them (the build targets plain x86-64) and
//! plainly otherwise: the same code, vectorised 16 or 8 lanes wide. Sums of
//! products use `mul_add`: one instruction with FMA, a slow library call on
//! CPUs without it (older than 2013).

use candle_transformers::models::bert::HiddenAct;

/// Output columns a few-rows kernel step keeps in registers (the panels
/// `linear` packs its weights into).
pub(super) const PANEL: usize = 16;

macro_rules! dispatch {
    ($plain:ident, $fast:ident, ($($arg:ident: $ty:ty),*)) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $fast($($arg: $ty),*) {
            $plain($($arg),*)
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
        unsafe fn widest($($arg: $ty),*) {
            $plain($($arg),*)
        }

        #[allow(unreachable_code)]
        pub(super) fn dispatch($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            if super::avx512() {
                // SAFETY: the CPU has the features the function was compiled for.
                return unsafe { widest($($arg),*) };
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU has the features the function was compiled for.
                return unsafe { $fast($($arg),*) };
            }
            $plain($($arg),*)
        }
    };
}

/// Whether the CPU has the AVX-512 the widest builds use (asked once).
#[cfg(target_arch = "x86_64")]
fn avx512() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
    })
}

/// Each row of `x` (rows of `gamma.len()`), plus the same row of `residual`
/// when given, normalised to zero mean and unit variance, then scaled and shifted.
pub(super) fn layer_norm_rows(
    x: &mut [f32],
    residual: Option<&[f32]>,
    gamma: &[f32],
    beta: &[f32],
    eps: f32,
) {
    mod imp {
        #[inline(always)]
        pub(super) fn plain(
            x: &mut [f32],
            residual: Option<&[f32]>,
            gamma: &[f32],
            beta: &[f32],
            eps: f32,
        ) {
            let h = gamma.len();
            for (i, row) in x.chunks_exact_mut(h).enumerate() {
                if let Some(r) = residual {
                    for (a, b) in row.iter_mut().zip(&r[i * h..][..h]) {
                        *a += b;
                    }
                }
                let mean = super::lane_sum(row, |v| v) / h as f32;
                let var = super::lane_sum(row, |v| (v - mean) * (v - mean)) / h as f32;
                let inv = 1.0 / (var + eps).sqrt();
                for ((v, g), b) in row.iter_mut().zip(gamma).zip(beta) {
                    *v = (*v - mean) * inv * g + b;
                }
            }
        }
        dispatch!(plain, fast, (x: &mut [f32], residual: Option<&[f32]>, gamma: &[f32], beta: &[f32], eps: f32));
    }
    imp::dispatch(x, residual, gamma, beta, eps)
}

/// The bodies of [`few_rows`] per instruction set, outside it so its dispatch reads alone.
mod few_rows_imp {
    use super::PANEL;
    const ROWS: usize = 4;
    /// The portable step: four rows by one panel of sums, for CPUs without AVX2 and FMA.
    #[inline(always)]
    pub(super) fn plain(
        x: &[f32],
        inp: usize,
        panels: &[f32],
        out: usize,
        ks: std::ops::Range<usize>,
        y: &mut [f32],
    ) {
        let rows = y.len() / out;
        for (block, panel) in panels.chunks_exact(inp * PANEL).enumerate() {
            let col0 = block * PANEL;
            let cols = (out - col0).min(PANEL);
            for r0 in (0..rows).step_by(ROWS) {
                let last = (rows - r0).min(ROWS) - 1;
                // Rows past the end repeat the last one; their sums are dropped.
                let at = |r: usize| (r0 + r.min(last)) * inp;
                let starts = [at(0), at(1), at(2), at(3)];
                let mut acc = [[0.0f32; PANEL]; ROWS];
                for k in ks.clone() {
                    let w = &panel[k * PANEL..k * PANEL + PANEL];
                    for (a, &start) in acc.iter_mut().zip(&starts) {
                        let xv = x[start + k];
                        for (s, wv) in a.iter_mut().zip(w) {
                            *s = xv.mul_add(*wv, *s);
                        }
                    }
                }
                for (r, a) in acc.iter().enumerate().take(last + 1) {
                    let row = &mut y[(r0 + r) * out + col0..][..cols];
                    for (v, s) in row.iter_mut().zip(a) {
                        *v += s;
                    }
                }
            }
        }
    }
    /// The AVX2 step: six rows by one panel of sums in twelve of the
    /// sixteen vector registers, two more for the panel's row.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; the arguments must be as
    /// `few_rows` asserts.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2(
        x: &[f32],
        inp: usize,
        panels: &[f32],
        out: usize,
        ks: std::ops::Range<usize>,
        y: &mut [f32],
    ) {
        use std::arch::x86_64::*;
        const R: usize = 6;
        let rows = y.len() / out;
        for (block, panel) in panels.chunks_exact(inp * PANEL).enumerate() {
            let col0 = block * PANEL;
            let cols = (out - col0).min(PANEL);
            for r0 in (0..rows).step_by(R) {
                let last = (rows - r0).min(R) - 1;
                // Rows past the end repeat the last one; their sums are dropped.
                let row = |r: usize| x[(r0 + r.min(last)) * inp..].as_ptr();
                let (x0, x1, x2, x3, x4, x5) = (row(0), row(1), row(2), row(3), row(4), row(5));
                let wp = panel.as_ptr();
                // SAFETY: k < inp (asserted by the caller), so every
                // x row read is inside its row and every panel read
                // inside the panel (inp × PANEL).
                unsafe {
                    let z = _mm256_setzero_ps();
                    let (mut l0, mut l1, mut l2, mut l3, mut l4, mut l5) = (z, z, z, z, z, z);
                    let (mut h0, mut h1, mut h2, mut h3, mut h4, mut h5) = (z, z, z, z, z, z);
                    for k in ks.clone() {
                        let w0 = _mm256_loadu_ps(wp.add(k * PANEL));
                        let w1 = _mm256_loadu_ps(wp.add(k * PANEL + 8));
                        // One row: its input broadcast against the panel's row.
                        // Named sums, not an array, keep every one in a register.
                        macro_rules! row {
                            ($x:ident, $lo:ident, $hi:ident) => {
                                let v = _mm256_broadcast_ss(&*$x.add(k));
                                $lo = _mm256_fmadd_ps(v, w0, $lo);
                                $hi = _mm256_fmadd_ps(v, w1, $hi);
                            };
                        }
                        row!(x0, l0, h0);
                        row!(x1, l1, h1);
                        row!(x2, l2, h2);
                        row!(x3, l3, h3);
                        row!(x4, l4, h4);
                        row!(x5, l5, h5);
                    }
                    let lo = [l0, l1, l2, l3, l4, l5];
                    let hi = [h0, h1, h2, h3, h4, h5];
                    for r in 0..=last {
                        let mut sums = [0.0f32; PANEL];
                        _mm256_storeu_ps(sums.as_mut_ptr(), lo[r]);
                        _mm256_storeu_ps(sums.as_mut_ptr().add(8), hi[r]);
                        let row = &mut y[(r0 + r) * out + col0..][..cols];
                        for (v, s) in row.iter_mut().zip(sums) {
                            *v += s;
                        }
                    }
                }
            }
        }
    }
}

/// `y (rows × out) += x[:, ks] · W[ks, :]` for the inputs `ks`, with `x`
/// rows of `inp` and `W` given by its panels (see `Linear::panels`): four
/// rows by one panel of accumulators stay in registers while the panel
/// streams past once.
pub(super) fn few_rows(
    x: &[f32],
    inp: usize,
    panels: &[f32],
    out: usize,
    ks: std::ops::Range<usize>,
    y: &mut [f32],
) {
    assert!(
        super::PANEL == 16
            && ks.end <= inp
            && x.len() >= (y.len() / out) * inp
            && panels.len() == out.div_ceil(super::PANEL) * inp * super::PANEL,
        "few_rows: shapes disagree"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features; the shapes were checked above.
        return unsafe { few_rows_imp::avx2(x, inp, panels, out, ks, y) };
    }
    few_rows_imp::plain(x, inp, panels, out, ks, y)
}

/// Multi-head attention for a few tokens without matrix products: `qkv`
/// holds each token's query, key and value (`n × 3h`); `context` gets each
/// token's heads side by side (`n × h`); `scores` is room for `n × n`.
pub(super) fn attention_few_rows(
    qkv: &[f32],
    n: usize,
    h: usize,
    heads: usize,
    scale: f32,
    scores: &mut [f32],
    context: &mut [f32],
) {
    mod imp {
        #[inline(always)]
        pub(super) fn plain(
            qkv: &[f32],
            n: usize,
            h: usize,
            heads: usize,
            scale: f32,
            scores: &mut [f32],
            context: &mut [f32],
        ) {
            let d = h / heads;
            for head in 0..heads {
                let part = |t: usize, which: usize| &qkv[t * 3 * h + which * h + head * d..][..d];
                for i in 0..n {
                    let q = part(i, 0);
                    let row = &mut scores[i * n..(i + 1) * n];
                    for (j, s) in row.iter_mut().enumerate() {
                        *s = scale * q.iter().zip(part(j, 1)).map(|(a, b)| a * b).sum::<f32>();
                    }
                }
                super::softmax_rows(&mut scores[..n * n], n);
                for i in 0..n {
                    let out = &mut context[i * h + head * d..][..d];
                    out.fill(0.0);
                    for j in 0..n {
                        let p = scores[i * n + j];
                        for (o, v) in out.iter_mut().zip(part(j, 2)) {
                            *o = p.mul_add(*v, *o);
                        }
                    }
                }
            }
        }
        dispatch!(plain, fast, (qkv: &[f32], n: usize, h: usize, heads: usize, scale: f32, scores: &mut [f32], context: &mut [f32]));
    }
    imp::dispatch(qkv, n, h, heads, scale, scores, context)
}

/// Each row (of `n`) of `x` replaced by its softmax.
pub(super) fn softmax_rows(x: &mut [f32], n: usize) {
    mod imp {
        /// Lanes of the reductions: the compiler keeps them in vectors (a
        /// plain `sum` or `max` of floats stays one lane, in order).
        const LANES: usize = 16;

        #[inline(always)]
        pub(super) fn plain(x: &mut [f32], n: usize) {
            for row in x.chunks_exact_mut(n) {
                let (body, tail) = row.as_chunks::<LANES>();
                let mut top = [f32::NEG_INFINITY; LANES];
                for chunk in body {
                    for (t, v) in top.iter_mut().zip(chunk) {
                        *t = t.max(*v);
                    }
                }
                let max = tail
                    .iter()
                    .chain(&top)
                    .copied()
                    .fold(f32::NEG_INFINITY, f32::max);
                let mut sums = [0.0f32; LANES];
                let (body, tail) = row.as_chunks_mut::<LANES>();
                for chunk in body {
                    for (s, v) in sums.iter_mut().zip(chunk.iter_mut()) {
                        *v = super::exp(*v - max);
                        *s += *v;
                    }
                }
                for v in tail.iter_mut() {
                    *v = super::exp(*v - max);
                    sums[0] += *v;
                }
                let inv = 1.0 / sums.iter().sum::<f32>();
                for v in row.iter_mut() {
                    *v *= inv;
                }
            }
        }
        dispatch!(plain, fast, (x: &mut [f32], n: usize));
    }
    imp::dispatch(x, n)
}

/// The hidden activation, in place.
pub(super) fn activate(x: &mut [f32], act: HiddenAct) {
    mod imp {
        use candle_transformers::models::bert::HiddenAct;
        #[inline(always)]
        pub(super) fn plain(x: &mut [f32], act: HiddenAct) {
            match act {
                HiddenAct::Gelu => {
                    for v in x.iter_mut() {
                        *v = 0.5 * *v * (1.0 + super::erf(*v * std::f32::consts::FRAC_1_SQRT_2));
                    }
                }
                HiddenAct::GeluApproximate => {
                    const C: f32 = 0.797_884_6; // sqrt(2 / pi)
                    for v in x.iter_mut() {
                        let u = C * (*v + 0.044715 * *v * *v * *v);
                        // tanh(u) = 1 - 2 / (exp(2u) + 1)
                        let t = 1.0 - 2.0 / (super::exp(2.0 * u) + 1.0);
                        *v = 0.5 * *v * (1.0 + t);
                    }
                }
                HiddenAct::Relu => {
                    for v in x.iter_mut() {
                        *v = v.max(0.0);
                    }
                }
            }
        }
        dispatch!(plain, fast, (x: &mut [f32], act: HiddenAct));
    }
    imp::dispatch(x, act)
}

/// The sum of `f` over `xs` in 16 lanes, then across them: the order the
/// compiler can keep in vectors (a plain float `sum` stays one lane, in order).
#[inline(always)]
fn lane_sum(xs: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let (body, tail) = xs.as_chunks::<16>();
    let mut lanes = [0.0f32; 16];
    for chunk in body {
        for (l, v) in lanes.iter_mut().zip(chunk) {
            *l += f(*v);
        }
    }
    tail.iter().map(|v| f(*v)).sum::<f32>() + lanes.iter().sum::<f32>()
}

/// `e^x` to about 2 ulp, without branches or float-to-int conversions so
/// loops over it vectorise.
#[inline(always)]
fn exp(x: f32) -> f32 {
    // Adding 1.5·2^23 rounds to an integer and leaves it in the low mantissa bits.
    const MAGIC: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.7);
    // e^x = 2^k · e^r with k = round(x / ln 2) and |r| ≤ ln 2 / 2.
    let shifted = x * std::f32::consts::LOG2_E + MAGIC;
    let k = shifted - MAGIC;
    let r = x - k * 0.693_145_75 - k * 1.428_606_8e-6;
    // Degree-6 Taylor polynomial of e^r on |r| ≤ 0.35.
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // 2^k from k's bits: (k + 127) << 23, in wrapping integer arithmetic.
    let scale = f32::from_bits(
        shifted
            .to_bits()
            .wrapping_sub(MAGIC.to_bits())
            .wrapping_add(127)
            << 23,
    );
    p * scale
}

/// The error function to about 1e-7 absolute (Abramowitz and Stegun 7.1.26),
/// without branches.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_72 + t * (1.421_413_8 + t * (-1.453_152_1 + t * 1.061_405_4))));
    let y = 1.0 - poly * exp(-a * a);
    y.copysign(x)
}

#[cfg(test)]
mod tests {
    #[test]
    fn exp_and_erf_agree_with_the_library() {
        for i in -2000..=2000 {
            let x = i as f32 / 100.0;
            let want = x.exp();
            let got = super::exp(x);
            assert!(
                ((got - want) / want).abs() < 1e-6,
                "exp({x}) = {got}, want {want}"
            );
        }
        // erf from its series, in f64.
        let erf64 = |x: f64| {
            let mut sum = 0.0;
            let mut term = x;
            for n in 0..60 {
                sum += term / (2 * n + 1) as f64;
                term *= -x * x / (n + 1) as f64;
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        };
        for i in -300..=300 {
            let x = i as f64 / 100.0;
            let got = f64::from(super::erf(x as f32));
            assert!(
                (got - erf64(x)).abs() < 5e-7,
                "erf({x}) = {got}, want {}",
                erf64(x)
            );
        }
    }
}
