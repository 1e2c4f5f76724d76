//! `cairn`: the command line. Parses arguments, sets up logging, calls the
//! libraries, and maps results to exit codes (0 ok, 1 failure, 2 bad input).

mod progress;

// candle allocates and frees large tensors on every op; glibc malloc returns
// them to the kernel each time (page faults, system time), mimalloc keeps them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use cairn_embed::DevicePref;
use cairn_index::IndexRoot;
use cairn_pipeline::{BuildOptions, build};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cairn",
    version,
    about = "Reproducible citation search over scientific software repositories"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Device {
    Cpu,
    Cuda,
}

#[derive(Subcommand)]
enum Command {
    /// Build and publish a new index version from repositories.yml.
    Build {
        /// repositories.yml (nancy-brain layout).
        #[arg(long, default_value = "config/repositories.yml")]
        config: PathBuf,
        /// Index root to publish into.
        #[arg(long, default_value = "index")]
        out: PathBuf,
        /// Git and embedding cache.
        #[arg(long, default_value = ".cairn/cache", env = "CAIRN_CACHE")]
        cache: PathBuf,
        /// weights.yaml (default: weights.yaml beside the config, if any).
        #[arg(long)]
        weights: Option<PathBuf>,
        /// Build settings YAML (default: build.yaml beside the config, if any).
        #[arg(long)]
        settings: Option<PathBuf>,
        /// Model folder (config.json, tokenizer.json, model.safetensors) instead of the hub cache.
        #[arg(long, env = "CAIRN_MODEL_DIR")]
        model_dir: Option<PathBuf>,
        /// Where the embedding model runs.
        #[arg(long, value_enum, default_value = "cpu")]
        device: Device,
        /// Index versions to keep.
        #[arg(long, default_value_t = 3)]
        keep: usize,
        /// Build the other repositories when one fails (the failure is recorded in the manifest).
        #[arg(long)]
        keep_going: bool,
        /// Print a machine-readable summary on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Recheck every checksum, content hash and chunk span of the current version.
    Verify {
        /// Index root.
        #[arg(long, default_value = "index")]
        index: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::init_tracing();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Build {
            config,
            out,
            cache,
            weights,
            settings,
            model_dir,
            device,
            keep,
            keep_going,
            json,
        } => {
            let opts = BuildOptions {
                config,
                weights,
                settings,
                out,
                cache,
                model_dir,
                device: match device {
                    Device::Cpu => DevicePref::Cpu,
                    Device::Cuda => DevicePref::Cuda(0),
                },
                keep,
                keep_going,
            };
            let reporter = progress::TermReporter::new();
            match build(&opts, &reporter) {
                Ok(summary) => {
                    if json {
                        println!("{}", serde_json::to_string_pretty(&summary)?);
                    } else {
                        progress::print_summary(&summary);
                    }
                    let failed = summary.repos.iter().any(|r| r.error.is_some());
                    Ok(ExitCode::from(if failed { 1 } else { 0 }))
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    Ok(ExitCode::from(e.exit_code() as u8))
                }
            }
        }
        Command::Verify { index, json } => {
            let root = IndexRoot::new(&index);
            let report = cairn_index::verify(&root)
                .with_context(|| format!("verifying {}", index.display()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                for p in &report.problems {
                    println!("problem: {p}");
                }
                println!(
                    "{} {}: {} files, {} docs, {} chunks checked, {} problems",
                    if report.ok() { "ok" } else { "FAILED" },
                    report
                        .index_version
                        .as_ref()
                        .map(|v| v.as_str())
                        .unwrap_or("?"),
                    report.files_checked,
                    report.docs_checked,
                    report.chunks_checked,
                    report.problems.len()
                );
            }
            Ok(ExitCode::from(if report.ok() { 0 } else { 1 }))
        }
    }
}
