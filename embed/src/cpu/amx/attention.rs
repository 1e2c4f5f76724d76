//! One attention head on tiles: the scores q·kᵀ, their softmax (AVX-512,
//! written as the bfloat16 the next product reads) and the values weighted
//! by it.

use super::gelu::exp;
use super::{BLOCK, BLOCK_STEP, STEP, available, products, round_rows};
use std::cell::RefCell;

/// One head's attention on tiles, for heads of a multiple of 32 columns:
/// softmax(`scale` · q·kᵀ) · v into `context`'s columns `c0..c0 + d` (rows
/// `ctx_stride` apart), where q, k and v are the `d` columns of `qkv` from
/// `q0`, `k0` and `v0` of its `n` rows (`stride` apart). The scores are
/// rounded to bfloat16 for the second product, as bf16 autocast does.
#[allow(clippy::too_many_arguments)]
pub(in crate::cpu) fn attention_head(
    qkv: &[f32],
    stride: usize,
    (q0, k0, v0): (usize, usize, usize),
    d: usize,
    n: usize,
    scale: f32,
    scores: &mut [f32],
    context: &mut [f32],
    (ctx_stride, c0): (usize, usize),
) {
    assert!(
        d.is_multiple_of(STEP)
            && n > 0
            && qkv.len() >= (n - 1) * stride + q0.max(k0).max(v0) + d
            && scores.len() >= n * n
            && context.len() >= (n - 1) * ctx_stride + c0 + d
            && available(),
        "amx attention: shapes disagree, or the CPU lacks AMX"
    );
    #[derive(Default)]
    struct Buffers {
        q: Vec<u16>,
        kv: Vec<u16>,
        packed: Vec<u16>,
        p: Vec<u16>,
        out: Vec<f32>,
    }
    thread_local! {
        static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::default());
    }
    BUFFERS.with(|b| {
        let b = &mut *b.borrow_mut();
        let padded = n.div_ceil(BLOCK) * BLOCK;
        let keys = n.div_ceil(STEP) * STEP;
        for (buf, len) in [
            (&mut b.q, padded * d),
            (&mut b.kv, n * d),
            (&mut b.p, padded * keys),
        ] {
            buf.clear();
            buf.resize(len, 0);
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: available() checked AVX-512 BF16 and AMX; the assertion
        // bounds every read of qkv and write of scores and context, and each
        // buffer is sized above for the rows and columns it is given.
        unsafe {
            use crate::cpu::profile::{Stage, time};
            let scores = &mut scores[..n * n];
            time(Stage::Scores, || {
                // scores = (scale · q) · kᵀ
                round_rows(&qkv[q0..], stride, n, d, scale, &mut b.q, d);
                round_rows(&qkv[k0..], stride, n, d, 1.0, &mut b.kv, d);
                pack_keys(&b.kv, n, d, &mut b.packed);
                scores.fill(0.0);
                products(&b.q, padded, d, &b.packed, d / STEP, n, n, scores, n);
            });
            // p = softmax(scores), rounded to bfloat16 as it is written.
            time(Stage::Softmax, || softmax_rows(scores, n, &mut b.p, keys));
            time(Stage::Context, || {
                // context = p · v
                round_rows(&qkv[v0..], stride, n, d, 1.0, &mut b.kv, d);
                pack_values(&b.kv, n, d, &mut b.packed);
                b.out.clear();
                b.out.resize(n * d, 0.0);
                products(
                    &b.p,
                    padded,
                    keys,
                    &b.packed,
                    keys / STEP,
                    d,
                    n,
                    &mut b.out,
                    d,
                );
            });
        }
        for (r, row) in b.out.chunks_exact(d).enumerate() {
            context[r * ctx_stride + c0..][..d].copy_from_slice(row);
        }
    });
}

/// Keys (`n × d` bfloat16, row-major) as the weights of q·kᵀ: [`pack`]'s
/// layout of kᵀ (`d × n`). A tile row is one pair of inputs across 16 keys,
/// so each tile is a 16 × 16 transpose of the keys' pairs.
fn pack_keys(k: &[u16], n: usize, d: usize, data: &mut Vec<u16>) {
    let steps = d / STEP;
    data.clear();
    data.resize(n.div_ceil(BLOCK) * steps * BLOCK_STEP, 0);
    for (j, key) in k.chunks_exact(d).take(n).enumerate() {
        let (nb, half, jj) = (j / BLOCK, (j % BLOCK) / 16, j % 16);
        for ks in 0..steps {
            let tile = (nb * steps + ks) * BLOCK_STEP + half * 512;
            for (kp, pair) in key[ks * STEP..][..STEP].chunks_exact(2).enumerate() {
                let at = tile + kp * 32 + jj * 2;
                data[at..at + 2].copy_from_slice(pair);
            }
        }
    }
}

/// Values (`n × d` bfloat16, row-major) as the weights of p·v: [`pack`]'s
/// layout of v. A tile row holds two consecutive values' rows interleaved.
fn pack_values(v: &[u16], n: usize, d: usize, data: &mut Vec<u16>) {
    let steps = n.div_ceil(STEP);
    data.clear();
    data.resize(d.div_ceil(BLOCK) * steps * BLOCK_STEP, 0);
    for (k, row) in v.chunks_exact(d).take(n).enumerate() {
        let (ks, kp, e) = (k / STEP, (k % STEP) / 2, k % 2);
        for (nb, cols) in row.chunks(BLOCK).enumerate() {
            for (c, &x) in cols.iter().enumerate() {
                let (half, cc) = (c / 16, c % 16);
                data[(nb * steps + ks) * BLOCK_STEP + half * 512 + kp * 32 + cc * 2 + e] = x;
            }
        }
    }
}

/// Each row (of `n`) of `scores` through softmax into `p` (rows of `width`),
/// rounded to bfloat16: the probabilities only feed a bfloat16 product, so
/// `e^x` to about 1e-6 (a degree-5 polynomial) is as good as exact.
///
/// # Safety
/// AVX-512F and AVX-512 BF16; `scores` holds `n × n` values and `p` at least
/// `n × width`, `width ≥ n`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn softmax_rows(scores: &mut [f32], n: usize, p: &mut [u16], width: usize) {
    use std::arch::x86_64::*;
    let lanes = |m: usize| -> __mmask16 { if m >= 16 { 0xffff } else { (1u16 << m) - 1 } };
    for (row, out) in scores.chunks_exact_mut(n).zip(p.chunks_exact_mut(width)) {
        // SAFETY: every load and store is masked to the row's `n` values.
        unsafe {
            let at = row.as_mut_ptr();
            let mut top = _mm512_set1_ps(f32::NEG_INFINITY);
            for c in (0..n).step_by(16) {
                let m = lanes(n - c);
                top = _mm512_mask_max_ps(top, m, top, _mm512_maskz_loadu_ps(m, at.add(c)));
            }
            let max = _mm512_set1_ps(_mm512_reduce_max_ps(top));
            let mut sum = _mm512_setzero_ps();
            for c in (0..n).step_by(16) {
                let m = lanes(n - c);
                let e = exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, at.add(c)), max));
                _mm512_mask_storeu_ps(at.add(c), m, e);
                sum = _mm512_mask_add_ps(sum, m, sum, e);
            }
            let inv = _mm512_set1_ps(1.0 / _mm512_reduce_add_ps(sum));
            for c in (0..n).step_by(32) {
                let (m0, m1) = (lanes(n - c), lanes(n.saturating_sub(c + 16)));
                let lo = _mm512_mul_ps(_mm512_maskz_loadu_ps(m0, at.add(c)), inv);
                let hi = _mm512_mul_ps(_mm512_maskz_loadu_ps(m1, at.wrapping_add(c + 16)), inv);
                let both: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                let mask = u32::from(m0) | (u32::from(m1) << 16);
                _mm512_mask_storeu_epi16(out.as_mut_ptr().add(c).cast(), mask, both);
            }
        }
    }
}
