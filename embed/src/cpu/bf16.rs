//! Matrix products in bfloat16 with AVX-512 BF16's dot-product instruction
//! (two products a lane, summed in f32): twice the multiply-adds a cycle of
//! f32 FMA on CPUs that have it (AMD Zen 4 and later, Intel Cooper Lake and
//! Sapphire Rapids and later). The weights are rounded to bfloat16 once, at
//! load; each product rounds its input rows as it starts. Sums stay f32.

use std::cell::RefCell;

/// Rows one kernel step keeps in registers: 12 rows by 32 columns of sums
/// take 24 of AVX-512's 32 vector registers.
const ROWS: usize = 12;
/// Output columns of one step: two vectors of 16 lanes.
const COLS: usize = 32;

/// Whether this CPU runs the kernel.
pub(super) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `x` rounded to the nearest bfloat16 (ties to even), as its bits.
pub(super) fn bf16(x: f32) -> u16 {
    let bits = x.to_bits();
    let round = 0x7fff + ((bits >> 16) & 1);
    let rounded = (bits.wrapping_add(round) >> 16) as u16;
    // A NaN stays a (quiet) NaN rather than rounding into infinity.
    if x.is_nan() {
        ((bits >> 16) | 0x40) as u16
    } else {
        rounded
    }
}

/// Two bfloat16 in one 32-bit lane, the first in the low half, as the dot
/// product instruction pairs them.
fn pair(lo: f32, hi: f32) -> u32 {
    u32::from(bf16(lo)) | (u32::from(bf16(hi)) << 16)
}

/// A weight matrix (`inp × out`) in bfloat16, by panels of [`COLS`] output
/// columns, each a run of `inp / 2` input pairs of 32 lanes.
pub(super) struct Packed {
    data: Vec<u32>,
    inp: usize,
    out: usize,
}

impl Packed {
    /// Packs `w`, `inp × out` row-major.
    pub(super) fn new(w: &[f32], inp: usize, out: usize) -> Self {
        let pairs = inp.div_ceil(2);
        let panels = out.div_ceil(COLS);
        let mut data = vec![0u32; panels * pairs * COLS];
        let at = |k: usize, j: usize| {
            if k < inp && j < out {
                w[k * out + j]
            } else {
                0.0
            }
        };
        for p in 0..panels {
            for kp in 0..pairs {
                for c in 0..COLS {
                    let j = p * COLS + c;
                    data[(p * pairs + kp) * COLS + c] = pair(at(2 * kp, j), at(2 * kp + 1, j));
                }
            }
        }
        Self { data, inp, out }
    }

    /// `y (rows × out) += x (rows × inp) · W`, on this thread. A query runs
    /// here too: splitting its products between two threads measured no
    /// faster (p50 3.4 ms alone against 3.9 ms split; the hand-offs cost
    /// what the second core saves), and a query on one core leaves the other
    /// to the next search.
    pub(super) fn matmul_add(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        assert!(
            x.len() >= rows * self.inp && y.len() >= rows * self.out && available(),
            "bf16 matmul: shapes disagree, or the CPU lacks AVX-512 BF16"
        );
        thread_local! {
            static PACKED_ROWS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
        }
        PACKED_ROWS.with(|a| {
            let a = &mut *a.borrow_mut();
            self.pack_rows(x, rows, a);
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the CPU was checked above; `a` and `self.data` were
            // packed for these shapes and `y` holds rows × out.
            unsafe {
                kernel(a, rows, &self.data, self.inp.div_ceil(2), self.out, y)
            }
        });
    }

    /// `x`'s rows as bfloat16 pairs, by blocks of [`ROWS`] rows interleaved
    /// pair by pair (a block's rows past the end repeat its last row).
    fn pack_rows(&self, x: &[f32], rows: usize, a: &mut Vec<u32>) {
        let (inp, pairs) = (self.inp, self.inp.div_ceil(2));
        a.clear();
        a.resize(rows.div_ceil(ROWS) * pairs * ROWS, 0);
        for (b, block) in a.chunks_exact_mut(pairs * ROWS).enumerate() {
            for r in 0..ROWS {
                let row = &x[(b * ROWS + r).min(rows - 1) * inp..][..inp];
                let (twos, odd) = row.as_chunks::<2>();
                for (kp, [lo, hi]) in twos.iter().enumerate() {
                    block[kp * ROWS + r] = pair(*lo, *hi);
                }
                if let [last] = odd {
                    block[(pairs - 1) * ROWS + r] = pair(*last, 0.0);
                }
            }
        }
    }
}

/// The product over packed rows and weights (see [`Packed`]).
///
/// # Safety
/// The CPU must have AVX-512F and AVX-512 BF16; `a` must hold
/// `rows.div_ceil(ROWS) · pairs · ROWS` lanes, `b` `out.div_ceil(COLS) · pairs ·
/// COLS`, and `y` `rows · out` values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn kernel(a: &[u32], rows: usize, b: &[u32], pairs: usize, out: usize, y: &mut [f32]) {
    assert!(
        a.len() >= rows.div_ceil(ROWS) * pairs * ROWS
            && b.len() >= out.div_ceil(COLS) * pairs * COLS
            && y.len() >= rows * out
    );
    for p in 0..out.div_ceil(COLS) {
        let col0 = p * COLS;
        let cols = (out - col0).min(COLS);
        let bp = b[p * pairs * COLS..].as_ptr();
        for block in 0..rows.div_ceil(ROWS) {
            let ap = a[block * pairs * ROWS..].as_ptr();
            let r0 = block * ROWS;
            let y = &mut y[r0 * out..];
            // The last block runs only its real rows (a query is one short block).
            // SAFETY: as for `step`; the assertion above bounds every run.
            unsafe {
                match rows - r0 {
                    1 => step::<1>(ap, bp, pairs, out, col0, cols, y),
                    2 => step::<2>(ap, bp, pairs, out, col0, cols, y),
                    3 => step::<3>(ap, bp, pairs, out, col0, cols, y),
                    4 => step::<4>(ap, bp, pairs, out, col0, cols, y),
                    5 => step::<5>(ap, bp, pairs, out, col0, cols, y),
                    6 => step::<6>(ap, bp, pairs, out, col0, cols, y),
                    7 => step::<7>(ap, bp, pairs, out, col0, cols, y),
                    8 => step::<8>(ap, bp, pairs, out, col0, cols, y),
                    9 => step::<9>(ap, bp, pairs, out, col0, cols, y),
                    10 => step::<10>(ap, bp, pairs, out, col0, cols, y),
                    11 => step::<11>(ap, bp, pairs, out, col0, cols, y),
                    _ => step::<ROWS>(ap, bp, pairs, out, col0, cols, y),
                }
            }
        }
    }
}

/// One block of `R` rows by one panel: `R × 32` sums in registers while the
/// panel's pairs stream past.
///
/// # Safety
/// AVX-512F and AVX-512 BF16; `ap` points at a block's `pairs × ROWS` lanes,
/// `bp` at a panel's `pairs × COLS`, and `y` holds `R` rows of `out`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[allow(clippy::too_many_arguments)]
unsafe fn step<const R: usize>(
    ap: *const u32,
    bp: *const u32,
    pairs: usize,
    out: usize,
    col0: usize,
    cols: usize,
    y: &mut [f32],
) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract bounds every read.
    unsafe {
        let mut lo = [_mm512_setzero_ps(); R];
        let mut hi = [_mm512_setzero_ps(); R];
        for kp in 0..pairs {
            let w0: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(kp * COLS).cast()));
            let w1: __m512bh =
                std::mem::transmute(_mm512_loadu_si512(bp.add(kp * COLS + 16).cast()));
            let row = ap.add(kp * ROWS);
            for r in 0..R {
                let v: __m512bh = std::mem::transmute(_mm512_set1_epi32(*row.add(r) as i32));
                lo[r] = _mm512_dpbf16_ps(lo[r], v, w0);
                hi[r] = _mm512_dpbf16_ps(hi[r], v, w1);
            }
        }
        for r in 0..R {
            let mut sums = [0.0f32; COLS];
            _mm512_storeu_ps(sums.as_mut_ptr(), lo[r]);
            _mm512_storeu_ps(sums.as_mut_ptr().add(16), hi[r]);
            for (v, s) in y[r * out + col0..][..cols].iter_mut().zip(sums) {
                *v += s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rounds_to_nearest_even() {
        assert_eq!(super::bf16(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between two bfloat16: ties go to the even one.
        assert_eq!(super::bf16(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(super::bf16(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(super::bf16(-2.0), 0xc000);
    }
}
