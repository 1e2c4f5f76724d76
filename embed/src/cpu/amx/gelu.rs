//! GELU over the intermediate rows, fused with their rounding to the
//! bfloat16 the output product reads, and the AVX-512 `exp` softmax shares.

use super::available;

/// GELU (the exact, erf form) of `x`'s `rows` rows of `cols`, rounded to
/// bfloat16 into `a` as [`Packed::rounded_shape`] lays rows out (`width`
/// per row; rows past `rows` left as they are, zero): the activation and the
/// next product's rounding in one pass. erf to about 1e-5 (Abramowitz and
/// Stegun 7.1.26 with a 14-bit reciprocal), under bfloat16's 4e-3.
pub(in crate::cpu) fn gelu_rows(x: &[f32], rows: usize, cols: usize, a: &mut [u16], width: usize) {
    assert!(
        x.len() >= rows * cols && a.len() >= rows * width && width >= cols && available(),
        "amx gelu: shapes disagree, or the CPU lacks AVX-512 BF16"
    );
    #[cfg(target_arch = "x86_64")]
    // SAFETY: available() checked AVX-512 BF16; the shapes were checked above.
    unsafe {
        gelu_kernel(x, rows, cols, a, width);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16,avx512bw")]
unsafe fn gelu_kernel(x: &[f32], rows: usize, cols: usize, a: &mut [u16], width: usize) {
    use std::arch::x86_64::*;
    let gelu = |v: __m512| -> __m512 {
        let z = _mm512_mul_ps(v, _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
        let abs = _mm512_abs_ps(z);
        let t = _mm512_rcp14_ps(_mm512_fmadd_ps(
            abs,
            _mm512_set1_ps(0.327_591_1),
            _mm512_set1_ps(1.0),
        ));
        let mut poly = _mm512_set1_ps(1.061_405_4);
        for c in [-1.453_152_1, 1.421_413_8, -0.284_496_72, 0.254_829_6] {
            poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(c));
        }
        poly = _mm512_mul_ps(poly, t);
        // erf(|z|) = 1 - poly · e^(-z²), with z's sign.
        let e = exp(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(abs, abs)));
        let erf_abs = _mm512_fnmadd_ps(poly, e, _mm512_set1_ps(1.0));
        let sign = _mm512_and_si512(_mm512_castps_si512(z), _mm512_set1_epi32(i32::MIN));
        let erf = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(erf_abs), sign));
        _mm512_mul_ps(
            _mm512_mul_ps(_mm512_set1_ps(0.5), v),
            _mm512_add_ps(_mm512_set1_ps(1.0), erf),
        )
    };
    let lanes = |m: usize| -> __mmask16 { if m >= 16 { 0xffff } else { (1u16 << m) - 1 } };
    for r in 0..rows {
        let src = x[r * cols..][..cols].as_ptr();
        let dst = a[r * width..][..width].as_mut_ptr();
        for c in (0..cols).step_by(32) {
            let (m0, m1) = (lanes(cols - c), lanes(cols.saturating_sub(c + 16)));
            // SAFETY: loads and stores masked to the row's `cols` values.
            unsafe {
                let lo = gelu(_mm512_maskz_loadu_ps(m0, src.add(c)));
                let hi = gelu(_mm512_maskz_loadu_ps(m1, src.wrapping_add(c + 16)));
                let both: __m512i = std::mem::transmute(_mm512_cvtne2ps_pbh(hi, lo));
                _mm512_mask_storeu_epi16(
                    dst.add(c).cast(),
                    u32::from(m0) | (u32::from(m1) << 16),
                    both,
                );
            }
        }
    }
}

/// `e^x` for `x ≤ 0`, 16 lanes: 2^k · e^r with a degree-5 polynomial.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
pub(super) fn exp(x: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    let k =
        _mm512_roundscale_ps::<0x08>(_mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::LOG2_E)));
    let r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693_145_75), x);
    let r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428_606_8e-6), r);
    let mut poly = _mm512_set1_ps(1.0 / 120.0);
    for c in [1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0] {
        poly = _mm512_fmadd_ps(poly, r, _mm512_set1_ps(c));
    }
    _mm512_scalef_ps(poly, k)
}
