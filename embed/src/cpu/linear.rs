//! The dense layers and their products: the weights as each kind of
//! product reads them (gemm's f32, the few-rows panels, bfloat16, AMX
//! tiles), bias first; and the layer norms' parameters.

use super::kernels::{self, PANEL};
use super::{Precision, amx, bf16};
use candle_nn::VarBuilder;

/// A tensor's values as f32, in row-major order.
pub(super) fn flat(t: candle_core::Tensor) -> candle_core::Result<Vec<f32>> {
    t.to_dtype(candle_core::DType::F32)?
        .flatten_all()?
        .to_vec1()
}

/// A dense layer, its weight transposed to `in × out` row-major.
pub(super) struct Linear {
    pub(super) w: Vec<f32>,
    /// The same weights by panels of [`PANEL`] output columns, each `inp × PANEL`
    /// row-major (the last padded with zeros): what the few-rows kernel streams.
    pub(super) panels: Vec<f32>,
    /// The weights in bfloat16, when the pass runs in it.
    pub(super) bf16: Option<bf16::Packed>,
    /// The weights as AMX tiles read them, when the pass runs on them.
    pub(super) amx: Option<amx::Packed>,
    pub(super) b: Vec<f32>,
    pub(super) inp: usize,
    pub(super) out: usize,
}

pub(super) struct LayerNorm {
    pub(super) gamma: Vec<f32>,
    pub(super) beta: Vec<f32>,
}

impl Linear {
    pub(super) fn load(
        vb: &VarBuilder,
        inp: usize,
        out: usize,
        precision: Precision,
    ) -> candle_core::Result<Self> {
        Self::stacked(&[vb], inp, out, precision)
    }

    /// Several layers of the same input side by side (q, k and v as one).
    pub(super) fn stacked(
        vbs: &[&VarBuilder],
        inp: usize,
        out: usize,
        precision: Precision,
    ) -> candle_core::Result<Self> {
        let total = out * vbs.len();
        let mut w = vec![0.0; inp * total];
        let mut b = Vec::with_capacity(total);
        for (part, vb) in vbs.iter().enumerate() {
            let weight = flat(vb.get((out, inp), "weight")?)?;
            for o in 0..out {
                for i in 0..inp {
                    w[i * total + part * out + o] = weight[o * inp + i];
                }
            }
            b.extend(flat(vb.get(out, "bias")?)?);
        }
        let blocks = total.div_ceil(PANEL);
        let mut panels = vec![0.0; blocks * inp * PANEL];
        for (j, col) in (0..total).map(|j| (j, j / PANEL)) {
            for i in 0..inp {
                panels[(col * inp + i) * PANEL + j % PANEL] = w[i * total + j];
            }
        }
        // Each precision keeps only the layouts its products read.
        let bf16 = (precision == Precision::Bf16).then(|| bf16::Packed::new(&w, inp, total));
        let amx = (precision == Precision::Amx).then(|| amx::Packed::new(&w, inp, total));
        if bf16.is_some() || amx.is_some() {
            (w, panels) = (Vec::new(), Vec::new());
        }
        Ok(Self {
            w,
            panels,
            bf16,
            amx,
            b,
            inp,
            out: total,
        })
    }

    /// `y = x·W + b` for the `rows` rows of `x`.
    pub(super) fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        self.bias(rows, y);
        if let Some(packed) = &self.bf16 {
            return packed.matmul_add(x, rows, y);
        }
        if let Some(packed) = &self.amx {
            return packed.matmul_add(x, rows, y);
        }
        if rows <= SKINNY_ROWS {
            return self.skinny(x, rows, y);
        }
        // SAFETY: x is rows × inp, w is inp × out and y is rows × out, all
        // row-major and in bounds (checked below), and y aliases neither.
        assert!(x.len() >= rows * self.inp && y.len() >= rows * self.out);
        unsafe {
            matmul(
                rows,
                self.out,
                self.inp,
                y.as_mut_ptr(),
                self.out,
                true,
                x.as_ptr(),
                self.inp as isize,
                1,
                self.w.as_ptr(),
                self.out as isize,
                1,
                1.0,
            );
        }
    }
}

impl Linear {
    /// `y = b` for `rows` rows.
    pub(super) fn bias(&self, rows: usize, y: &mut [f32]) {
        for r in y.chunks_exact_mut(self.out).take(rows) {
            r.copy_from_slice(&self.b);
        }
    }
}

/// Texts this short (a query) skip gemm: it would pack the whole weight
/// matrix to multiply it by a few rows, reading the weights twice.
pub(super) const SKINNY_ROWS: usize = 32;

impl Linear {
    /// `y += x·W` for a few rows, streaming the weights once and splitting
    /// them by input between two threads: a query is bound by reading the
    /// weights, and two cores read twice as fast as one.
    pub(super) fn skinny(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        let half = self.inp / 2;
        let mut other = vec![0.0; rows * self.out];
        let (x, y) = (&x[..rows * self.inp], &mut y[..rows * self.out]);
        rayon::join(
            || kernels::few_rows(x, self.inp, &self.panels, self.out, 0..half, y),
            || {
                kernels::few_rows(
                    x,
                    self.inp,
                    &self.panels,
                    self.out,
                    half..self.inp,
                    &mut other,
                )
            },
        );
        for (a, b) in y.iter_mut().zip(&other) {
            *a += b;
        }
    }
}

impl LayerNorm {
    pub(super) fn load(vb: &VarBuilder, n: usize) -> candle_core::Result<Self> {
        Ok(Self {
            gamma: flat(vb.get(n, "weight")?)?,
            beta: flat(vb.get(n, "bias")?)?,
        })
    }
}

/// `dst (m × n, row stride dst_rs) = [dst +] scale · lhs (m × k) · rhs (k × n)`,
/// each operand given by its row and column strides.
///
/// # Safety
/// Every element the strides reach must be in bounds, and dst must not alias.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn matmul(
    m: usize,
    n: usize,
    k: usize,
    dst: *mut f32,
    dst_rs: usize,
    accumulate: bool,
    lhs: *const f32,
    lhs_rs: isize,
    lhs_cs: isize,
    rhs: *const f32,
    rhs_rs: isize,
    rhs_cs: isize,
    scale: f32,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            dst_rs as isize,
            accumulate,
            lhs,
            lhs_cs,
            lhs_rs,
            rhs,
            rhs_cs,
            rhs_rs,
            1.0,
            scale,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}
