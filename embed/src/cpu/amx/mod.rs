//! Matrix products on AMX tiles (Intel Sapphire Rapids and later): bfloat16
//! inputs, f32 sums, 16 × 16 × 32 multiply-adds an instruction, an order of
//! magnitude more a cycle than AVX-512 BF16's dot product. Linux must grant
//! a process the tiles' register state first (`arch_prctl(ARCH_REQ_XCOMP_PERM)`);
//! where the CPU lacks AMX or the kernel refuses, [`available`] is false and
//! the pass falls back to `bf16.rs` or f32.
//!
//! The weights are rounded to bfloat16 once, at load, and laid out as the
//! tiles read them; each product rounds its input rows as it starts (as
//! `bf16.rs` does, so both passes give the same vectors up to summation
//! order). Rust's AMX intrinsics are not stable, so the few instructions are
//! written as inline assembly; `is_x86_feature_detected!` cannot name AMX
//! either, so CPUID says whether the CPU has it.

mod attention;
mod gelu;

pub(super) use attention::attention_head;
pub(super) use gelu::gelu_rows;

use std::cell::RefCell;
use std::sync::OnceLock;

/// Rows (and output columns) of one block: two tiles of 16.
const BLOCK: usize = 32;
/// Inputs one tile step takes: 16 pairs of bfloat16.
const STEP: usize = 32;
/// bfloat16 values in one packed block-step: two B tiles of 16 × 32.
const BLOCK_STEP: usize = 2 * 16 * STEP;

/// Whether this CPU has AMX-BF16 and the kernel lets this process use it
/// (asked once; the answer holds for every thread).
pub(super) fn available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| cpu_has_amx() && super::bf16::available() && tiles_granted())
}

/// CPUID leaf 7: AMX-BF16 (EDX bit 22) and AMX-TILE (bit 24).
#[cfg(target_arch = "x86_64")]
fn cpu_has_amx() -> bool {
    let leaf = std::arch::x86_64::__cpuid_count(7, 0);
    leaf.edx & (1 << 22) != 0 && leaf.edx & (1 << 24) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_amx() -> bool {
    false
}

/// Asks Linux for the tiles' register state (XTILEDATA) for this process.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn tiles_granted() -> bool {
    const SYS_ARCH_PRCTL: i64 = 158;
    const ARCH_REQ_XCOMP_PERM: u64 = 0x1023;
    const XFEATURE_XTILEDATA: u64 = 18;
    let ret: i64;
    // SAFETY: arch_prctl(ARCH_REQ_XCOMP_PERM) only records a permission;
    // it reads and writes no memory of ours.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") SYS_ARCH_PRCTL => ret,
            in("rdi") ARCH_REQ_XCOMP_PERM,
            in("rsi") XFEATURE_XTILEDATA,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
    ret == 0
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn tiles_granted() -> bool {
    false
}

/// A weight matrix (`inp × out`) in bfloat16, laid out as B tiles: for each
/// block of 32 output columns, for each step of 32 inputs, two tiles (columns
/// 0–15, then 16–31), each 16 rows of input pairs × 16 columns × the pair.
/// Inputs and columns past the matrix are zero.
pub(super) struct Packed {
    data: Vec<u16>,
    inp: usize,
    out: usize,
    steps: usize,
}

impl Packed {
    /// Packs `w`, `inp × out` row-major.
    pub(super) fn new(w: &[f32], inp: usize, out: usize) -> Self {
        let mut data = Vec::new();
        pack(&mut data, inp, out, |k, col| {
            super::bf16::bf16(w[k * out + col])
        });
        Self {
            data,
            inp,
            out,
            steps: inp.div_ceil(STEP),
        }
    }

    /// The rows [`Packed::matmul_add_rounded`] takes for `rows` rows: the
    /// rows padded to whole blocks, and the inputs of one row.
    pub(super) fn rounded_shape(&self, rows: usize) -> (usize, usize) {
        (rows.div_ceil(BLOCK) * BLOCK, self.steps * STEP)
    }

    /// `y (rows × out) += a · W` for rows already rounded to bfloat16 and
    /// laid out as [`Packed::rounded_shape`] says (rows past `rows` zero).
    pub(super) fn matmul_add_rounded(&self, a: &[u16], rows: usize, y: &mut [f32]) {
        let (padded, width) = self.rounded_shape(rows);
        assert!(
            a.len() >= padded * width && y.len() >= rows * self.out && available(),
            "amx matmul: shapes disagree, or the CPU lacks AMX"
        );
        #[cfg(target_arch = "x86_64")]
        // SAFETY: available() checked AMX; `a` and `y` were checked above.
        unsafe {
            products(
                a, padded, width, &self.data, self.steps, self.out, rows, y, self.out,
            );
        }
    }

    /// `y (rows × out) += x (rows × inp) · W`, on this thread.
    pub(super) fn matmul_add(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        assert!(
            x.len() >= rows * self.inp && y.len() >= rows * self.out && available(),
            "amx matmul: shapes disagree, or the CPU lacks AMX"
        );
        thread_local! {
            static ROWS: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
        }
        ROWS.with(|a| {
            let a = &mut *a.borrow_mut();
            let width = self.steps * STEP;
            let padded = rows.div_ceil(BLOCK) * BLOCK;
            a.clear();
            a.resize(padded * width, 0);
            #[cfg(target_arch = "x86_64")]
            // SAFETY: available() checked AVX-512 BF16 (and AMX); `a` holds
            // `padded` rows of `width`, `x` holds `rows` of `inp`, and the
            // packed weights were laid out for `steps` and `out`.
            unsafe {
                round_rows(x, self.inp, rows, self.inp, 1.0, a, width);
                products(
                    a, padded, width, &self.data, self.steps, self.out, rows, y, self.out,
                );
            }
        });
    }
}

/// Lays out a matrix (`inp × out`, element `(k, col)` given as bfloat16 by
/// `at`) as [`Packed`] does, into `data`.
fn pack(data: &mut Vec<u16>, inp: usize, out: usize, at: impl Fn(usize, usize) -> u16) {
    let steps = inp.div_ceil(STEP);
    let blocks = out.div_ceil(BLOCK);
    data.clear();
    data.resize(blocks * steps * BLOCK_STEP, 0);
    for nb in 0..blocks {
        for ks in 0..steps {
            let tiles = &mut data[(nb * steps + ks) * BLOCK_STEP..][..BLOCK_STEP];
            for half in 0..2 {
                let col0 = nb * BLOCK + half * 16;
                for kp in 0..16 {
                    let k0 = ks * STEP + 2 * kp;
                    let row = &mut tiles[half * 512 + kp * 32..][..32];
                    for n in 0..16.min(out.saturating_sub(col0)) {
                        for e in 0..2.min(inp.saturating_sub(k0)) {
                            row[n * 2 + e] = at(k0 + e, col0 + n);
                        }
                    }
                }
            }
        }
    }
}

/// `x`'s `rows` rows (of `cols`, `stride` apart), times `scale`, rounded to
/// bfloat16 into `a` (rows of `width`).
///
/// # Safety
/// AVX-512F and AVX-512 BF16; `a` holds at least `rows × width` values and
/// `width ≥ cols`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
#[allow(clippy::too_many_arguments)]
unsafe fn round_rows(
    x: &[f32],
    stride: usize,
    rows: usize,
    cols: usize,
    scale: f32,
    a: &mut [u16],
    width: usize,
) {
    use std::arch::x86_64::*;
    let by = _mm512_set1_ps(scale);
    for r in 0..rows {
        let src = &x[r * stride..][..cols];
        let dst = &mut a[r * width..][..width];
        let (chunks, rest) = src.as_chunks::<32>();
        for (c, chunk) in chunks.iter().enumerate() {
            // SAFETY: 32 values in, 32 bfloat16 (64 bytes) out, both in bounds.
            unsafe {
                let lo = _mm512_mul_ps(_mm512_loadu_ps(chunk.as_ptr()), by);
                let hi = _mm512_mul_ps(_mm512_loadu_ps(chunk.as_ptr().add(16)), by);
                let both = _mm512_cvtne2ps_pbh(hi, lo);
                _mm512_storeu_si512(
                    dst.as_mut_ptr().add(c * 32).cast(),
                    std::mem::transmute::<__m512bh, __m512i>(both),
                );
            }
        }
        for (i, v) in rest.iter().enumerate() {
            dst[chunks.len() * 32 + i] = super::bf16::bf16(v * scale);
        }
    }
}

/// The tile configuration: every tile 16 rows of 64 bytes.
#[repr(C, align(64))]
struct TileConfig {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

const CONFIG: TileConfig = TileConfig {
    palette: 1,
    start_row: 0,
    reserved: [0; 14],
    colsb: [64, 64, 64, 64, 64, 64, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0],
    rows: [16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0],
};

/// `y += a · W` block by block: each 32 × 32 block of sums in four tiles
/// while the rows' and the weights' tiles stream through the inputs.
///
/// # Safety
/// AMX-BF16 granted to this process; `a` holds `padded` rows of `width`
/// (`steps · 32`) bfloat16, `w` the packed weights of `out` columns, and `y`
/// `rows` rows of `out` columns, `y_stride` apart, with `rows ≤ padded`.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
unsafe fn products(
    a: &[u16],
    padded: usize,
    width: usize,
    w: &[u16],
    steps: usize,
    out: usize,
    rows: usize,
    y: &mut [f32],
    y_stride: usize,
) {
    assert!(
        a.len() >= padded * width
            && w.len() >= out.div_ceil(BLOCK) * steps * BLOCK_STEP
            && (rows == 0 || y.len() >= (rows - 1) * y_stride + out)
            && y_stride >= out
            && steps > 0
    );
    let mut sums = [0.0f32; BLOCK * BLOCK];
    // SAFETY: loading a valid configuration; every tile below is one it sets.
    unsafe {
        std::arch::asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(nostack, readonly));
    }
    for mb in 0..padded / BLOCK {
        for nb in 0..out.div_ceil(BLOCK) {
            let rows_at = a[mb * BLOCK * width..].as_ptr();
            let weights_at = w[nb * steps * BLOCK_STEP..].as_ptr();
            let (r0, c0) = (mb * BLOCK, nb * BLOCK);
            // A whole block of y: its tiles start from y's values and go back
            // there, with no copy between; an edge block sums into `sums`.
            let whole = r0 + BLOCK <= rows && c0 + BLOCK <= out;
            let (dst, dst_stride) = if whole {
                (y[r0 * y_stride + c0..].as_mut_ptr(), y_stride * 4)
            } else {
                sums.fill(0.0);
                (sums.as_mut_ptr(), BLOCK * 4)
            };
            // SAFETY: the assertion bounds the 32 rows × steps·32 inputs read
            // from `a` and the steps × 2 tiles read from `w`; a whole block's
            // 32 rows × 32 columns of y are inside y (checked just above and
            // by the assertion), and `sums` holds an edge block.
            unsafe {
                block(rows_at, width * 2, weights_at, steps, dst, dst_stride);
            }
            if whole {
                continue;
            }
            let cols = (out - c0).min(BLOCK);
            for r in 0..BLOCK.min(rows.saturating_sub(r0)) {
                let dst = &mut y[(r0 + r) * y_stride + c0..][..cols];
                for (d, s) in dst.iter_mut().zip(&sums[r * BLOCK..]) {
                    *d += s;
                }
            }
        }
    }
    // SAFETY: gives the tiles' state back; nothing reads it after.
    unsafe {
        std::arch::asm!("tilerelease", options(nostack, nomem));
    }
}

/// One 32 × 32 block: `sums` (32 rows `sums_stride` bytes apart) plus the
/// products of the rows and the weights. Tiles 0–3 hold the block, 4 and 5
/// the two 16-row halves of the rows, 6 and 7 the two 16-column halves of
/// the weights.
///
/// # Safety
/// The tiles are configured ([`CONFIG`]); `rows` points at 32 rows of
/// `row_bytes` bytes each holding `steps · 32` bfloat16, `weights` at
/// `steps` packed block-steps, and `sums` at 32 rows of 32 f32.
#[cfg(target_arch = "x86_64")]
unsafe fn block(
    rows: *const u16,
    row_bytes: usize,
    weights: *const u16,
    steps: usize,
    sums: *mut f32,
    sums_stride: usize,
) {
    // SAFETY: the caller's contract bounds every tile load and store.
    unsafe {
        std::arch::asm!(
            "tileloadd tmm0, [{c} + {c_stride}*1]",
            "lea {t}, [{c} + 64]",
            "tileloadd tmm1, [{t} + {c_stride}*1]",
            "tileloadd tmm2, [{c16} + {c_stride}*1]",
            "lea {t}, [{c16} + 64]",
            "tileloadd tmm3, [{t} + {c_stride}*1]",
            "2:",
            "tileloadd tmm4, [{a} + {a_stride}*1]",
            "tileloadd tmm5, [{a16} + {a_stride}*1]",
            "tileloadd tmm6, [{b} + {b_stride}*1]",
            "lea {t}, [{b} + 1024]",
            "tileloadd tmm7, [{t} + {b_stride}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            "add {a}, 64",
            "add {a16}, 64",
            "add {b}, 2048",
            "dec {k}",
            "jnz 2b",
            "tilestored [{c} + {c_stride}*1], tmm0",
            "lea {t}, [{c} + 64]",
            "tilestored [{t} + {c_stride}*1], tmm1",
            "tilestored [{c16} + {c_stride}*1], tmm2",
            "lea {t}, [{c16} + 64]",
            "tilestored [{t} + {c_stride}*1], tmm3",
            a = inout(reg) rows => _,
            a16 = inout(reg) rows.byte_add(16 * row_bytes) => _,
            a_stride = in(reg) row_bytes,
            b = inout(reg) weights => _,
            b_stride = in(reg) 64usize,
            k = inout(reg) steps => _,
            c = in(reg) sums,
            c16 = in(reg) sums.byte_add(16 * sums_stride),
            c_stride = in(reg) sums_stride,
            t = out(reg) _,
            options(nostack)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this CPU runs the tile kernels; without them a test says it
    /// is skipped, and fails instead under `CAIRN_REQUIRE_AMX=1` (the AMX
    /// kind's CI and benchmark runs), so a lost AMX grant cannot pass quietly.
    fn amx_here() -> bool {
        let here = available();
        if !here {
            crate::fixtures::skip_unless_required(
                "CAIRN_REQUIRE_AMX",
                "a CPU with AMX tiles that Linux grants",
            );
        }
        here
    }

    /// The tile products equal the same bfloat16 inputs multiplied in f32,
    /// for shapes that fill no block exactly (where the CPU has AMX).
    #[test]
    fn tile_products_match_rounded_inputs() {
        if !amx_here() {
            return;
        }
        let (rows, inp, out) = (37, 70, 45);
        let x: Vec<f32> = (0..rows * inp)
            .map(|i| ((i * 7919) % 97) as f32 / 50.0 - 1.0)
            .collect();
        let w: Vec<f32> = (0..inp * out)
            .map(|i| ((i * 104_729) % 89) as f32 / 40.0 - 1.1)
            .collect();
        let round = |v: f32| f32::from_bits(u32::from(super::super::bf16::bf16(v)) << 16);
        let mut want = vec![0.5f32; rows * out];
        for r in 0..rows {
            for c in 0..out {
                let s: f64 = (0..inp)
                    .map(|k| f64::from(round(x[r * inp + k])) * f64::from(round(w[k * out + c])))
                    .sum();
                want[r * out + c] += s as f32;
            }
        }
        let mut got = vec![0.5f32; rows * out];
        Packed::new(&w, inp, out).matmul_add(&x, rows, &mut got);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "{g} vs {w}");
        }
    }

    /// One head's attention on tiles matches the same arithmetic in f64 on
    /// the bfloat16-rounded inputs, for lengths that fill no block exactly.
    #[test]
    fn tile_attention_matches_the_arithmetic() {
        if !amx_here() {
            return;
        }
        let round =
            |v: f32| f64::from(f32::from_bits(u32::from(super::super::bf16::bf16(v)) << 16));
        for n in [33, 70] {
            let (d, stride) = (32, 3 * 64);
            let qkv: Vec<f32> = (0..n * stride)
                .map(|i| ((i * 7919) % 101) as f32 / 60.0 - 0.8)
                .collect();
            let (q0, k0, v0) = (32, 64 + 32, 128 + 32);
            let scale = 0.176_776_7_f32;
            let mut scores = vec![0.0f32; n * n];
            let mut context = vec![9.0f32; n * 64];
            attention_head(
                &qkv,
                stride,
                (q0, k0, v0),
                d,
                n,
                scale,
                &mut scores,
                &mut context,
                (64, 32),
            );
            for i in 0..n {
                let s: Vec<f64> = (0..n)
                    .map(|j| {
                        (0..d)
                            .map(|c| {
                                round(qkv[i * stride + q0 + c] * scale)
                                    * round(qkv[j * stride + k0 + c])
                            })
                            .sum()
                    })
                    .collect();
                let max = s.iter().copied().fold(f64::MIN, f64::max);
                let e: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
                let total: f64 = e.iter().sum();
                for c in 0..d {
                    let want: f64 = (0..n)
                        .map(|j| e[j] / total * round(qkv[j * stride + v0 + c]))
                        .sum();
                    let got = f64::from(context[i * 64 + 32 + c]);
                    assert!(
                        (got - want).abs() < 1e-2,
                        "n {n}, row {i}, col {c}: {got} vs {want}"
                    );
                    assert_eq!(context[i * 64 + c], 9.0, "other heads' columns untouched");
                }
            }
        }
    }
}
