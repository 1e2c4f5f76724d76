//! The GPU side of the embedder: opening an NVIDIA GPU for candle, with an
//! error that says which thing is missing (this build lacks the `cuda`
//! feature, or the machine has no usable driver or device), and what that GPU
//! is, for `cairn doctor` and the benchmarks. Only `bert` and the binary's
//! doctor call it.

use crate::error::EmbedError;
use candle_core::Device;
use serde::Serialize;

/// Whether this build can run the model on an NVIDIA GPU at all.
pub const CUDA_BUILT: bool = cfg!(feature = "cuda");

/// What `--device cuda` says in a build without the feature.
#[cfg(not(feature = "cuda"))]
const NOT_BUILT: &str = "--device cuda: this cairn was built without the 'cuda' feature; \
     build it with `cargo build --release --features cuda` (see docs/OPERATIONS.md, \"On a GPU\")";

/// What one GPU is.
#[derive(Clone, Debug, Serialize)]
pub struct GpuInfo {
    /// The device's ordinal (`--device cuda` takes 0).
    pub ordinal: usize,
    /// The driver's name for it, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability, major and minor.
    pub compute_capability: (i32, i32),
    /// Device memory, bytes.
    pub total_bytes: u64,
    /// Device memory free now, bytes.
    pub free_bytes: u64,
}

/// Opens GPU `ordinal` for candle.
pub(crate) fn open(ordinal: usize) -> Result<Device, EmbedError> {
    #[cfg(feature = "cuda")]
    {
        Device::new_cuda(ordinal).map_err(|e| {
            EmbedError::Device(format!(
                "--device cuda: no usable NVIDIA GPU {ordinal} (the driver says: {})",
                driver_message(&e)
            ))
        })
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = ordinal;
        Err(EmbedError::Device(NOT_BUILT.to_owned()))
    }
}

/// Opens GPU `ordinal` and says what it is.
pub fn gpu_info(ordinal: usize) -> Result<GpuInfo, EmbedError> {
    describe(&open(ordinal)?, ordinal)
}

#[cfg(feature = "cuda")]
fn describe(device: &Device, ordinal: usize) -> Result<GpuInfo, EmbedError> {
    let Device::Cuda(cuda) = device else {
        return Err(EmbedError::Device(format!(
            "device {ordinal} is not a CUDA device"
        )));
    };
    let stream = cuda.cuda_stream();
    let ctx = stream.context();
    let driver = |e: candle_core::cuda_backend::cudarc::driver::DriverError| {
        EmbedError::Device(format!("GPU {ordinal}: {e}"))
    };
    let (free, total) = ctx.mem_get_info().map_err(driver)?;
    Ok(GpuInfo {
        ordinal,
        name: ctx.name().map_err(driver)?,
        compute_capability: ctx.compute_capability().map_err(driver)?,
        total_bytes: total as u64,
        free_bytes: free as u64,
    })
}

#[cfg(not(feature = "cuda"))]
fn describe(_device: &Device, _ordinal: usize) -> Result<GpuInfo, EmbedError> {
    Err(EmbedError::Device(NOT_BUILT.to_owned()))
}

/// The driver's message on one line, without the backtrace candle attaches
/// when RUST_BACKTRACE is set: the error must print as one line.
#[cfg(feature = "cuda")]
fn driver_message(e: &candle_core::Error) -> String {
    match e {
        candle_core::Error::WithBacktrace { inner, .. } => driver_message(inner),
        other => other
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[cfg(test)]
mod tests {
    use crate::{BertEmbedder, DevicePref, Embedder, ModelFiles, ModelSpec, Pass, Precision};

    /// The GPU pass on `files`, or `None` (the test skips) where this build or
    /// machine has no GPU; with CAIRN_REQUIRE_GPU set (scripts/gpu-check.sh
    /// sets it) a missing GPU fails the test instead.
    fn on_gpu(files: &ModelFiles) -> Option<BertEmbedder> {
        match BertEmbedder::load(files, DevicePref::Cuda(0)) {
            Ok(e) => Some(e),
            Err(e) => {
                crate::fixtures::skip_unless_required(
                    "CAIRN_REQUIRE_GPU",
                    &format!("a GPU and a `cuda` build ({e})"),
                );
                None
            }
        }
    }

    /// Texts of every length up to past the model's limit, more than one
    /// GPU batch of them.
    fn texts(n: usize) -> Vec<String> {
        let words = [
            "fit", "the", "model", "light", "curve", "data", "lens", "x1",
        ];
        (0..n)
            .map(|i| {
                (0..(i * 7) % 400)
                    .map(|k| words[(i + k * k) % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// The smallest cosine between the GPU's and the CPU f32 pass's vectors,
    /// whole texts and late-chunking spans alike.
    fn min_cosine(files: &ModelFiles, gpu: &BertEmbedder, n: usize) -> f32 {
        let cpu = BertEmbedder::load_pass(files, DevicePref::Cpu, Pass::Cpu(Precision::F32))
            .expect("cpu pass");
        let texts = texts(n);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        let mut min = f32::INFINITY;
        let (g, c) = (
            gpu.embed(&refs).expect("gpu"),
            cpu.embed(&refs).expect("cpu"),
        );
        assert_eq!(g.len(), n);
        for (a, b) in g.iter().zip(&c) {
            min = min.min(cos(a, b));
        }
        let items: Vec<crate::SpanText<'_>> = refs
            .iter()
            .map(|t| crate::SpanText {
                text: t,
                spans: vec![vec![0..t.len() / 2], vec![t.len() / 2..t.len()]],
            })
            .collect();
        let (g, c) = (
            gpu.embed_spans(&items).expect("gpu spans"),
            cpu.embed_spans(&items).expect("cpu spans"),
        );
        for (a, b) in g.iter().zip(&c) {
            min = min.min(cos(&a.whole, &b.whole));
            for (x, y) in a.parts.iter().zip(&b.parts) {
                match (x, y) {
                    (Some(x), Some(y)) => min = min.min(cos(x, y)),
                    (x, y) => assert_eq!(x.is_some(), y.is_some(), "same spans pooled"),
                }
            }
        }
        min
    }

    #[test]
    fn the_gpu_pass_matches_the_cpu_f32_pass_on_the_fixture_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        crate::fixtures::write_tiny_bert(dir.path()).expect("fixture");
        let files = ModelSpec::Dir(dir.path().to_owned())
            .locate()
            .expect("files");
        let Some(gpu) = on_gpu(&files) else { return };
        assert_eq!(gpu.model().forward, "candle-cuda");
        let min = min_cosine(&files, &gpu, 600);
        assert!(min >= 0.9999, "min cosine {min}");
    }

    /// The same for the default model, where it is installed
    /// (scripts/fetch-model.sh); CAIRN_REQUIRE_GPU makes its absence fail.
    #[test]
    fn the_gpu_pass_matches_the_cpu_f32_pass_on_the_default_model() {
        let files = match ModelSpec::default_hub().locate() {
            Ok(f) => f,
            Err(e) => {
                crate::fixtures::skip_unless_required(
                    "CAIRN_REQUIRE_GPU",
                    &format!("the default model, scripts/fetch-model.sh ({e})"),
                );
                return;
            }
        };
        let Some(gpu) = on_gpu(&files) else { return };
        let min = min_cosine(&files, &gpu, 300);
        assert!(min >= 0.9999, "min cosine {min}");
    }

    #[test]
    fn gpu_info_names_the_gpu_or_says_why_not() {
        match super::gpu_info(0) {
            Ok(info) => {
                assert!(!info.name.is_empty());
                assert!(info.total_bytes >= info.free_bytes && info.total_bytes > 0);
                assert!(info.compute_capability.0 >= 3);
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "one line: {msg}");
                if super::CUDA_BUILT {
                    assert!(msg.contains("no usable NVIDIA GPU"), "{msg}");
                    assert!(
                        std::env::var_os("CAIRN_REQUIRE_GPU").is_none(),
                        "CAIRN_REQUIRE_GPU is set, but {msg}"
                    );
                } else {
                    assert!(msg.contains("built without the 'cuda' feature"), "{msg}");
                }
            }
        }
    }
}
