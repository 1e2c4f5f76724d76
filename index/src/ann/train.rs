//! Making the lists: how many, k-means over a sample for their centroids,
//! each row's nearest centroid, and rows quantised to int8 with the dot
//! product that reads them.

use crate::vectors::dot;
use rayon::prelude::*;

/// Rows sampled per list to train the centroids: enough for stable means,
/// and training costs this many rows' assignments per round, not all rows'.
const SAMPLE_PER_LIST: usize = 64;
/// Rounds of k-means (Lloyd): the centroids move little after these.
const ROUNDS: usize = 10;

/// How many lists `rows` rows get: √rows, so a list holds about as many
/// rows as there are centroids to score.
pub(super) fn list_count(rows: usize) -> usize {
    ((rows as f64).sqrt().round() as usize).clamp(1, rows.max(1))
}

/// The list whose centroid is nearest `row` (ties to the lower list).
pub(super) fn nearest(centroids: &[f32], dim: usize, row: &[f32]) -> u32 {
    let mut best = (0u32, f32::NEG_INFINITY);
    for (l, c) in centroids.chunks_exact(dim).enumerate() {
        let d = dot(c, row);
        if d > best.1 {
            best = (l as u32, d);
        }
    }
    best.0
}

pub(super) fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Spherical k-means over a sample of `keys` (every n-th, in order):
/// `lists` unit centroids, the same for the same rows on any thread count.
pub(super) fn train(rows: &[f32], dim: usize, keys: &[u32], lists: usize) -> Vec<f32> {
    let row = |k: u32| &rows[k as usize * dim..(k as usize + 1) * dim];
    let want = (lists * SAMPLE_PER_LIST).min(keys.len());
    let sample: Vec<u32> = (0..want).map(|i| keys[i * keys.len() / want]).collect();
    let mut centroids: Vec<f32> = (0..lists)
        .flat_map(|l| row(sample[l * sample.len() / lists]).iter().copied())
        .collect();
    for _ in 0..ROUNDS {
        let assigned: Vec<u32> = sample
            .par_iter()
            .map(|&k| nearest(&centroids, dim, row(k)))
            .collect();
        let mut sums = vec![0f32; lists * dim];
        let mut counts = vec![0usize; lists];
        for (&k, &l) in sample.iter().zip(&assigned) {
            let l = l as usize;
            counts[l] += 1;
            let sum = &mut sums[l * dim..(l + 1) * dim];
            sum.iter_mut().zip(row(k)).for_each(|(s, x)| *s += x);
        }
        // A list that drew no row keeps its centroid (a real row).
        for (l, &n) in counts.iter().enumerate() {
            if n > 0 {
                let c = &mut sums[l * dim..(l + 1) * dim];
                normalise(c);
                centroids[l * dim..(l + 1) * dim].copy_from_slice(c);
            }
        }
    }
    centroids
}

/// `row` as int8 and the factor that turns int8 products back into floats.
pub(super) fn quantise(row: &[f32]) -> (Vec<i8>, f32) {
    let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (vec![0; row.len()], 0.0);
    }
    let scale = max / 127.0;
    let codes = row
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (codes, scale)
}

/// Int8 dot product of a query and a stored row (its bytes are the int8
/// codes). Integer sums are exact, so every path gives the same answer;
/// with AVX2 the loop is four times wider than x86-64's baseline, and
/// AVX-512 with VNNI (multiply-add of 16-bit pairs into 32-bit sums in one
/// instruction) twice that again: the list scan is most of a search at
/// 100× the corpus.
pub(super) fn dot_i8(a: &[i8], b: &[u8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if vnni() {
        // SAFETY: the CPU was found to have AVX-512 BW and VNNI.
        #[allow(unsafe_code)]
        return unsafe { dot_i8_vnni(a, b) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU was just found to have AVX2.
        #[allow(unsafe_code)]
        return unsafe { dot_i8_avx2(a, b) };
    }
    dot_i8_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn dot_i8_avx2(a: &[i8], b: &[u8]) -> i32 {
    dot_i8_portable(a, b)
}

/// Whether the CPU has AVX-512 BW and VNNI (asked once).
#[cfg(target_arch = "x86_64")]
fn vnni() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    })
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[allow(unsafe_code)]
unsafe fn dot_i8_vnni(a: &[i8], b: &[u8]) -> i32 {
    dot_i8_portable(a, b)
}

/// Products in i16 (127² fits), summed in i32 (127² × dim fits): the shape
/// the compiler turns into multiply-add instructions.
#[inline(always)]
pub(super) fn dot_i8_portable(a: &[i8], b: &[u8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(i16::from(x) * i16::from(y as i8)))
        .sum()
}

/// The f32 `query` against a stored row's int8 codes (times the row's scale
/// by the caller): eight independent sums, as [`crate::vectors::dot`], so
/// the compiler vectorises it.
pub(super) fn dot_f32_i8(query: &[f32], codes: &[u8]) -> f32 {
    let mut acc = [0f32; 8];
    let (cq, cc) = (query.chunks_exact(8), codes.chunks_exact(8));
    let (rq, rc) = (cq.remainder(), cc.remainder());
    for (x, y) in cq.zip(cc) {
        for i in 0..8 {
            acc[i] += x[i] * f32::from(y[i] as i8);
        }
    }
    acc.iter().sum::<f32>()
        + rq.iter()
            .zip(rc)
            .map(|(x, &y)| x * f32::from(y as i8))
            .sum::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whichever kernel this CPU picks gives the portable loop's sum, at
    /// the model's width and at widths no vector register divides.
    #[test]
    fn every_kernel_sums_alike() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 56) as u8
        };
        for dim in [1, 7, 31, 64, 383, 384, 385, 1024] {
            let a: Vec<i8> = (0..dim).map(|_| (byte() as i8).max(-127)).collect();
            let b: Vec<u8> = (0..dim).map(|_| (byte() as i8).max(-127) as u8).collect();
            let want = dot_i8_portable(&a, &b);
            assert_eq!(dot_i8(&a, &b), want, "dim {dim}");
            // Each kernel this CPU has, not only the one it picks.
            #[cfg(target_arch = "x86_64")]
            #[allow(unsafe_code)]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2.
                    assert_eq!(unsafe { dot_i8_avx2(&a, &b) }, want, "avx2, dim {dim}");
                }
                if vnni() {
                    // SAFETY: the CPU has AVX-512 BW and VNNI.
                    assert_eq!(unsafe { dot_i8_vnni(&a, &b) }, want, "vnni, dim {dim}");
                }
            }
        }
        // The extremes: every product 127², summed at full width.
        let (a, b) = (vec![127i8; 384], vec![127u8; 384]);
        assert_eq!(dot_i8(&a, &b), 127 * 127 * 384);
        let (a, b) = (vec![-127i8; 384], vec![127u8; 384]);
        assert_eq!(dot_i8(&a, &b), -127 * 127 * 384);
    }

    /// A row's int8 codes times its scale, against an f32 query: the naive
    /// sum at any width, and within the rounding bound of the f32 product.
    #[test]
    fn f32_query_against_int8_rows_is_the_dequantised_product() {
        for dim in [1, 7, 384, 385] {
            let row: Vec<f32> = (0..dim)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 97.0)
                .collect();
            let query: Vec<f32> = (0..dim)
                .map(|i| ((i * 53 % 89) as f32 - 44.0) / 61.0)
                .collect();
            let (codes, scale) = quantise(&row);
            let bytes: Vec<u8> = codes.iter().map(|&c| c as u8).collect();
            let got = dot_f32_i8(&query, &bytes) * scale;
            let naive: f32 = query
                .iter()
                .zip(&codes)
                .map(|(q, &c)| q * f32::from(c) * scale)
                .sum();
            assert!(
                (got - naive).abs() <= 1e-4 * naive.abs().max(1.0),
                "dim {dim}"
            );
            // Each code is within half a step of its value.
            let exact: f32 = query.iter().zip(&row).map(|(q, x)| q * x).sum();
            let bound: f32 = query.iter().map(|q| q.abs()).sum::<f32>() * scale / 2.0;
            assert!(
                (got - exact).abs() <= bound + 1e-4,
                "dim {dim}: {got} vs {exact}"
            );
        }
    }
}
