//! Embedding throughput, single-query latency and peak memory on a fixed
//! workload (a JSON list of texts; `scripts/bench-embed.sh` makes it):
//! `cargo run --release -p cairn-embed --example embed_bench -- WORKLOAD.json
//! [--pass best|f32|bf16|amx|candle|cuda|cuda-tf32] [--out VECTORS.f32] [--compare VECTORS.f32]`.
//!
//! `--pass` picks the forward pass (default: the best the CPU has; `candle`
//! is the reference; `cuda` is candle's on the first NVIDIA GPU, in f32, as
//! `--device cuda` builds; `cuda-tf32` the same with cuBLAS's TF32 products, a
//! measurement only: builds do not use it);
//! `--out` writes the vectors (little-endian f32, one row a text),
//! `--compare` prints the minimum cosine against vectors written earlier,
//! and `--profile` where the CPU pass's time went, stage by stage.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec, Pass, Precision, gpu_info};
use std::time::Instant;

const QUERIES: [&str; 4] = [
    "emcee multiprocessing Pool",
    "how do I mark the true parameter values on a corner plot",
    "dynesty could not find a single point that have a valid log-likelihood",
    "MulensModel PSPL parameter names",
];

/// Peak resident memory of this process, from the kernel.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let opts = parse_args(&args)?;
    if opts.profile {
        cairn_embed::profile::enable();
    }
    let texts: Vec<String> = serde_json::from_slice(&std::fs::read(&opts.workload)?)?;
    let files = ModelSpec::default_hub().locate()?;
    let e = BertEmbedder::load_pass(&files, opts.device, opts.pass)?;
    let on = match opts.device {
        DevicePref::Cpu => "cpu".to_owned(),
        DevicePref::Cuda(i) => gpu_info(i)?.name,
    };
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = time_batch(&e, &refs, opts.profile)?;
    let latency = query_latency(&e)?;
    println!(
        "cairn ({}{} on {on}): {} texts, {} tokens in {:.2} s: {:.0} tokens/s; query p50 {:.2} ms p99 {:.2} ms; peak RSS {:.0} MB",
        e.model().forward,
        if opts.tf32 { "-tf32" } else { "" },
        batch.vectors.len(),
        batch.tokens,
        batch.seconds,
        batch.tokens as f64 / batch.seconds,
        latency.p50_ms,
        latency.p99_ms,
        peak_rss_mb()
    );
    if let Some(out) = &opts.out {
        write_vectors(out, &batch.vectors)?;
    }
    if let Some(other) = &opts.compare {
        compare_vectors(other, &batch.vectors, e.model().dim)?;
    }
    Ok(())
}

/// What the command line asked for.
struct BenchArgs {
    workload: String,
    pass: Pass,
    device: DevicePref,
    /// Whether `--pass cuda-tf32` was asked for, so the result line says so.
    tf32: bool,
    profile: bool,
    out: Option<String>,
    compare: Option<String>,
}

/// Reads the command line, turning TF32 on as soon as `--pass cuda-tf32` is seen.
fn parse_args(args: &[String]) -> Result<BenchArgs, Box<dyn std::error::Error>> {
    let usage = "usage: embed_bench WORKLOAD.json [--pass P] [--out F] [--compare F]";
    let cpu = DevicePref::Cpu;
    let gpu = DevicePref::Cuda(0);
    let workload = args.get(1).ok_or(usage)?;
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let (pass, device) = match flag("--pass").map(String::as_str) {
        None | Some("best") => (Pass::Best, cpu),
        Some("f32") => (Pass::Cpu(Precision::F32), cpu),
        Some("bf16") => (Pass::Cpu(Precision::Bf16), cpu),
        Some("amx") => (Pass::Cpu(Precision::Amx), cpu),
        Some("candle") => (Pass::Candle, cpu),
        Some("cuda") => (Pass::Candle, gpu),
        Some("cuda-tf32") => {
            tf32()?;
            (Pass::Candle, gpu)
        }
        Some(other) => {
            return Err(
                format!("--pass {other}: best, f32, bf16, amx, candle, cuda or cuda-tf32").into(),
            );
        }
    };
    Ok(BenchArgs {
        workload: workload.clone(),
        pass,
        device,
        tf32: flag("--pass").is_some_and(|p| p == "cuda-tf32"),
        profile: args.iter().any(|a| a == "--profile"),
        out: flag("--out").cloned(),
        compare: flag("--compare").cloned(),
    })
}

/// The whole workload embedded once against the clock.
struct Batch {
    vectors: Vec<Vec<f32>>,
    /// Tokens the pass saw (each text cut to the model's limit).
    tokens: usize,
    seconds: f64,
}

/// Embeds the workload once to warm up, then once timed, printing where the time went when profiling.
fn time_batch(
    e: &BertEmbedder,
    refs: &[&str],
    profile: bool,
) -> Result<Batch, Box<dyn std::error::Error>> {
    // Once before the clock: a GPU compiles its kernels on first use.
    e.embed(&refs[..refs.len().min(64)])?;
    let tokenized = Instant::now();
    let tokens: usize = e
        .count_tokens_batch(refs)?
        .into_iter()
        .map(|t| t.min(e.model().max_tokens))
        .sum();
    let tokenizing = tokenized.elapsed().as_secs_f64();
    let before: Vec<f64> = cairn_embed::profile::seconds()
        .iter()
        .map(|(_, s)| s)
        .copied()
        .collect();
    let t = Instant::now();
    let vectors = e.embed(refs)?;
    let s = t.elapsed().as_secs_f64();
    if profile {
        print_profile(e, &before, tokenizing, s);
    }
    Ok(Batch {
        vectors,
        tokens,
        seconds: s,
    })
}

/// Prints each stage's share of the timed pass, from the profile's totals `before` it.
fn print_profile(e: &BertEmbedder, before: &[f64], tokenizing: f64, s: f64) {
    let stages = cairn_embed::profile::seconds();
    let spent: Vec<(String, f64)> = stages
        .iter()
        .zip(before)
        .map(|((stage, now), then)| (format!("{stage:?}"), now - then))
        .collect();
    let total: f64 = spent.iter().map(|(_, s)| s).sum();
    println!(
        "profile ({}, thread-seconds): {}; tokenizing (one thread, untruncated) {tokenizing:.2} s; the pass {s:.2} s of wall time",
        e.model().forward,
        spent
            .iter()
            .map(|(n, v)| format!("{n} {v:.2} s ({:.0} %)", 100.0 * v / total.max(1e-9)))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Single-query latency percentiles, in milliseconds.
struct Latency {
    p50_ms: f64,
    p99_ms: f64,
}

/// Times 300 one-text queries, each made distinct so no cache answers it.
fn query_latency(e: &BertEmbedder) -> Result<Latency, Box<dyn std::error::Error>> {
    let mut took = Vec::new();
    for i in 0..300 {
        let q = format!("{} {i}", QUERIES[i % QUERIES.len()]);
        let t = Instant::now();
        e.embed(&[q.as_str()])?;
        took.push(t.elapsed().as_secs_f64() * 1e3);
    }
    took.sort_by(f64::total_cmp);
    let at = |p: f64| took[((took.len() - 1) as f64 * p).round() as usize];
    Ok(Latency {
        p50_ms: at(0.5),
        p99_ms: at(0.99),
    })
}

/// Writes the vectors as little-endian f32, one row a text, for a later `--compare`.
fn write_vectors(out: &str, vectors: &[Vec<f32>]) -> std::io::Result<()> {
    let bytes: Vec<u8> = vectors
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(out, bytes)
}

/// Prints the lowest cosine between these vectors and those a pass wrote to `other`.
fn compare_vectors(other: &str, vectors: &[Vec<f32>], dim: usize) -> std::io::Result<()> {
    let bytes = std::fs::read(other)?;
    let theirs: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let min = vectors
        .iter()
        .zip(theirs.chunks_exact(dim))
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
        .fold(f32::INFINITY, f32::min);
    println!(
        "cosine with {other}: min {min:.6} over {} texts",
        vectors.len()
    );
    Ok(())
}

/// cuBLAS may use TF32 for f32 products from here on.
#[cfg(feature = "cuda")]
fn tf32() -> Result<(), Box<dyn std::error::Error>> {
    candle_core::cuda_backend::set_gemm_reduced_precision_f32(true);
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn tf32() -> Result<(), Box<dyn std::error::Error>> {
    Err("--pass cuda-tf32 needs a build with --features cuda".into())
}
