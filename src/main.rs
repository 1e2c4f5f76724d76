//! `cairn`: the command line. Parses arguments, sets up logging, calls the
//! libraries, and maps results to exit codes (0 ok, 1 failure, 2 bad input).

mod output;
mod progress;

// candle allocates and frees large tensors on every op; glibc malloc returns
// them to the kernel each time (page faults, system time), mimalloc keeps them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use cairn_embed::DevicePref;
use cairn_index::IndexRoot;
use cairn_pipeline::{BuildOptions, build};
use cairn_search::{Engine, EngineOptions, Filters, Mode, SearchRequest};
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

/// Where the index and the query model are.
#[derive(clap::Args)]
struct OpenArgs {
    /// Index root.
    #[arg(long, default_value = ".cairn/index", env = "CAIRN_INDEX")]
    index: PathBuf,
    /// Model folder instead of the hub cache (the model the index was built with).
    #[arg(long, env = "CAIRN_MODEL_DIR")]
    model_dir: Option<PathBuf>,
}

impl OpenArgs {
    fn options(&self) -> EngineOptions {
        EngineOptions {
            index: self.index.clone(),
            model_dir: self.model_dir.clone(),
            device: DevicePref::Cpu,
        }
    }

    fn engine(&self) -> anyhow::Result<Engine> {
        Engine::open(&self.options())
            .with_context(|| format!("opening the index at {}", self.index.display()))
    }
}

#[derive(Subcommand)]
enum Command {
    /// Build and publish a new index version from repositories.yml.
    Build {
        /// repositories.yml (nancy-brain layout).
        #[arg(long, default_value = "config/repositories.yml")]
        config: PathBuf,
        /// Index root to publish into.
        #[arg(long, default_value = ".cairn/index", env = "CAIRN_INDEX")]
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
        #[arg(long, default_value_t = cairn_index::layout::DEFAULT_KEEP)]
        keep: usize,
        /// Build the other repositories when one fails (the failure is recorded in the manifest).
        #[arg(long)]
        keep_going: bool,
        /// Build only shard I of N (1-based) into a part folder at --out, for --merge.
        #[arg(long, conflicts_with = "merge")]
        shard: Option<String>,
        /// Publish the part folders of a sharded build into --out (same index as one machine builds).
        #[arg(long, num_args = 1..)]
        merge: Vec<PathBuf>,
        /// Print a machine-readable summary on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Write one index version as a checked, shippable pack (`cairn-index-<version>.tar.zst` + `.sha256`).
    Pack {
        /// Index root.
        #[arg(long, default_value = ".cairn/index", env = "CAIRN_INDEX")]
        index: PathBuf,
        /// The version to pack (default: CURRENT).
        #[arg(long)]
        version: Option<String>,
        /// Folder to write the pack into.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check a pack's sha256 and manifest, add it to an index root and make it CURRENT.
    Unpack {
        /// The pack (its `.sha256` must lie beside it).
        pack: PathBuf,
        /// Index root to add it to.
        #[arg(long, default_value = ".cairn/index", env = "CAIRN_INDEX")]
        index: PathBuf,
    },
    /// Search the index: ranked citations with line spans and GitHub links.
    Search {
        /// What to look for.
        query: String,
        #[command(flatten)]
        open: OpenArgs,
        /// Hits wanted (1 to 50).
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// Only these toolkits (repeatable).
        #[arg(long)]
        toolkit: Vec<String>,
        /// Only these doctypes: code, doc, readme, notebook, example, test, config (repeatable).
        #[arg(long)]
        doctype: Vec<String>,
        /// Only these repositories (repeatable).
        #[arg(long)]
        repo: Vec<String>,
        /// Only these categories (repeatable).
        #[arg(long)]
        category: Vec<String>,
        /// Only doc_ids starting with this (repeatable).
        #[arg(long)]
        path_prefix: Vec<String>,
        /// hybrid (default), bm25 or vector.
        #[arg(long, default_value = "hybrid")]
        mode: String,
        /// Evidence below this (cosine, 0 to 1) marks the answer insufficient.
        #[arg(long)]
        threshold: Option<f32>,
        /// Print the API's JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print exact lines of a document, with their links.
    Retrieve {
        /// `<category>/<repo>/<path>`.
        doc_id: String,
        /// `START:END`, 1-based and inclusive.
        #[arg(long, default_value = "1:400")]
        lines: String,
        #[command(flatten)]
        open: OpenArgs,
        /// Print the API's JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the doc_id tree.
    Tree {
        /// Only below this prefix.
        #[arg(default_value = "")]
        prefix: String,
        #[command(flatten)]
        open: OpenArgs,
        /// Levels shown.
        #[arg(long, default_value_t = 2)]
        depth: usize,
        /// Most entries shown.
        #[arg(long, default_value_t = 500)]
        max_entries: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Score search against golden queries: recall@k, MRR@10, nDCG@10, per kind, and the misses.
    Eval {
        /// Golden queries YAML.
        #[arg(default_value = "golden/queries.yaml")]
        golden: PathBuf,
        #[command(flatten)]
        open: OpenArgs,
        /// k of recall@k.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Modes to evaluate (repeatable; default: hybrid, bm25 and vector).
        #[arg(long)]
        mode: Vec<String>,
        /// Exit 1 when hybrid recall@k is below this.
        #[arg(long)]
        min_recall: Option<f64>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the HTTP API (and MCP at /mcp) for bots; hot-swaps new index versions.
    Serve(ServeArgs),
    /// Serve MCP over stdio (for Claude Desktop, IDEs and agents that spawn a process).
    Mcp {
        #[command(flatten)]
        open: OpenArgs,
    },
    /// Manage the bearer tokens the server accepts (the file stores only their sha256).
    Token {
        #[command(subcommand)]
        action: TokenAction,
        /// Tokens file.
        #[arg(
            long,
            global = true,
            default_value = ".cairn/tokens.json",
            env = "CAIRN_TOKENS"
        )]
        tokens: PathBuf,
    },
    /// Print the HTTP API's OpenAPI 3.1 document (import it as a GPT Action).
    Openapi {
        /// The server's public base URL, written into `servers`.
        #[arg(long, env = "CAIRN_PUBLIC_URL")]
        public_url: Option<String>,
    },
    /// Recheck every checksum, content hash and chunk span of the current version.
    Verify {
        /// Index root.
        #[arg(long, default_value = ".cairn/index", env = "CAIRN_INDEX")]
        index: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum TokenAction {
    /// Make a token; it is printed once and only its hash is kept.
    Add {
        /// Who holds it (unique).
        name: String,
        /// Access groups, comma-separated (documents restricted to other groups stay invisible).
        #[arg(long, value_delimiter = ',')]
        groups: Vec<String>,
        /// May set runtime weights.
        #[arg(long)]
        admin: bool,
    },
    /// List tokens (names, groups, admin; never the tokens).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token by name (the server stops accepting it within seconds).
    Revoke {
        /// The token's name.
        name: String,
    },
}

#[derive(clap::Args)]
struct ServeArgs {
    #[command(flatten)]
    open: OpenArgs,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "CAIRN_BIND")]
    bind: std::net::SocketAddr,
    /// Tokens file (`cairn token add`).
    #[arg(long, default_value = ".cairn/tokens.json", env = "CAIRN_TOKENS")]
    tokens: PathBuf,
    /// Accept every request without credentials (loopback binds only).
    #[arg(long)]
    no_auth: bool,
    /// Also accept HS256 JWTs signed with the secret in this file (at least 32 bytes).
    #[arg(long, conflicts_with = "jwt_rs256_public_key")]
    jwt_hs256_secret: Option<PathBuf>,
    /// Also accept RS256 JWTs signed by the key whose public PEM is in this file.
    #[arg(long)]
    jwt_rs256_public_key: Option<PathBuf>,
    /// Required JWT issuer (`iss`).
    #[arg(long)]
    jwt_issuer: Option<String>,
    /// Required JWT audience (`aud`).
    #[arg(long)]
    jwt_audience: Option<String>,
    /// Members of this JWT group may set weights.
    #[arg(long, default_value = "cairn-admin")]
    jwt_admin_group: String,
    /// A browser origin allowed to call (repeatable); other origins get 403.
    #[arg(long)]
    allow_origin: Vec<String>,
    /// A host name every route answers to besides loopback names and IP addresses (repeatable; DNS-rebinding protection).
    #[arg(long)]
    allow_host: Vec<String>,
    /// The public base URL, for the OpenAPI document's `servers`.
    #[arg(long, env = "CAIRN_PUBLIC_URL")]
    public_url: Option<String>,
    /// Requests per minute per caller (default: unlimited).
    #[arg(long)]
    rate_limit: Option<u32>,
    /// Most milliseconds a request may take.
    #[arg(long, default_value_t = 10_000)]
    deadline_ms: u64,
    /// Searches that may wait for a CPU thread before requests get 503.
    #[arg(long, default_value_t = 64)]
    queue: usize,
    /// Threads for searches (default: all cores).
    #[arg(long)]
    cpu_workers: Option<usize>,
    /// HTTP worker threads (default: all cores).
    #[arg(long)]
    http_workers: Option<usize>,
    /// How often CURRENT, dropped packs and the tokens file are checked, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    watch_ms: u64,
    /// Where a pack given as --index is unpacked (an index root).
    #[arg(long, default_value = ".cairn/index")]
    unpack_into: PathBuf,
    /// Make a pack given as --index CURRENT even when it was built before the
    /// version CURRENT names now (without it, such a pack changes nothing).
    #[arg(long)]
    allow_rollback: bool,
    /// Index versions (and tried packs) kept after a dropped pack is adopted.
    #[arg(long, default_value_t = cairn_index::layout::DEFAULT_KEEP)]
    keep: usize,
}

impl ServeArgs {
    fn run(self) -> anyhow::Result<ExitCode> {
        use cairn_serve::auth::{Authenticator, JwtConfig};
        use cairn_serve::http::{AppState, HttpOptions, serve};
        if self.no_auth && !self.bind.ip().is_loopback() {
            anyhow::bail!(
                "--no-auth is only allowed on a loopback address; {} is not one",
                self.bind
            );
        }
        let jwt = match (&self.jwt_hs256_secret, &self.jwt_rs256_public_key) {
            (Some(p), _) | (_, Some(p)) => Some(JwtConfig::from_file(
                p,
                self.jwt_rs256_public_key.is_some(),
                self.jwt_issuer.clone(),
                self.jwt_audience.clone(),
                self.jwt_admin_group.clone(),
            )?),
            _ => None,
        };
        let tokens = (!self.no_auth).then(|| self.tokens.clone());
        let auth = Authenticator::new(tokens, jwt.clone(), self.no_auth)?;
        if !self.no_auth
            && jwt.is_none()
            && cairn_serve::auth::TokenStore::new(&self.tokens)
                .list()?
                .is_empty()
        {
            tracing::warn!(tokens = %self.tokens.display(), "no tokens yet: every API call will get 401; make one with `cairn token add NAME`");
        }
        let mut opts = HttpOptions::new(self.bind);
        opts.deadline = std::time::Duration::from_millis(self.deadline_ms);
        opts.queue = self.queue;
        opts.rate_limit = self.rate_limit;
        opts.public_url = self.public_url.clone();
        opts.watch_interval = std::time::Duration::from_millis(self.watch_ms.max(100));
        opts.allowed_origins
            .extend(self.allow_origin.iter().cloned());
        opts.allowed_hosts.extend(self.allow_host.iter().cloned());
        if let Some(n) = self.cpu_workers {
            opts.cpu_workers = n.max(1);
        }
        if let Some(n) = self.http_workers {
            opts.http_workers = n.max(1);
        }
        let mut open = self.open.options();
        if open.index.is_file() {
            // A pack: checked and unpacked into an index root before anything is served.
            let rollback = match self.allow_rollback {
                true => cairn_index::pack::Rollback::Allow,
                false => cairn_index::pack::Rollback::Refuse,
            };
            let u = cairn_index::pack::unpack(
                &open.index,
                &IndexRoot::new(&self.unpack_into),
                rollback,
            )
            .with_context(|| format!("unpacking {}", open.index.display()))?;
            if u.current {
                tracing::info!(pack = %open.index.display(), root = %self.unpack_into.display(), version = %u.version, "unpacked; now CURRENT");
            } else {
                tracing::warn!(pack = %open.index.display(), version = %u.version, built_at = %u.built_at, current_built_at = %u.previous_built_at, "the pack is older than CURRENT's version: serving CURRENT (pass --allow-rollback to serve the pack)");
            }
            open.index = self.unpack_into.clone();
        }
        let live = cairn_serve::live::LiveIndex::open(open.clone())
            .with_context(|| format!("opening the index at {}", open.index.display()))?
            .with_keep(self.keep);
        let state = AppState::new(std::sync::Arc::new(live), std::sync::Arc::new(auth), opts)?;
        actix_web::rt::System::new()
            .block_on(serve(state))
            .context("serving")?;
        Ok(ExitCode::SUCCESS)
    }
}

/// A failed search call: `error [code]: message`, and the code's exit status.
fn input_error(e: &cairn_search::SearchError) -> ExitCode {
    eprintln!("error [{}]: {e}", e.code());
    ExitCode::from(e.code().exit_code())
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
            shard,
            merge,
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
            if let Some(shard) = shard {
                let shard = cairn_pipeline::Shard::parse(&shard).map_err(anyhow::Error::msg)?;
                return match cairn_pipeline::build_shard(&opts, shard, &reporter) {
                    Ok(summary) => {
                        if json {
                            println!("{}", serde_json::to_string_pretty(&summary)?);
                        } else {
                            println!(
                                "shard {}/{}: {} repositories, {} docs, {} chunks ({} embedded, {} cached) in {}",
                                shard.index,
                                shard.count,
                                summary.repos.len(),
                                summary.docs,
                                summary.chunks,
                                summary.stats.embedded,
                                summary.stats.cached,
                                summary.part.display()
                            );
                        }
                        let failed = summary.repos.iter().any(|r| r.error.is_some());
                        Ok(ExitCode::from(if failed { 1 } else { 0 }))
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        Ok(ExitCode::from(e.exit_code() as u8))
                    }
                };
            }
            let result = if merge.is_empty() {
                build(&opts, &reporter)
            } else {
                cairn_pipeline::merge(&opts, &merge, &reporter)
            };
            match result {
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
        Command::Search {
            query,
            open,
            limit,
            toolkit,
            doctype,
            repo,
            category,
            path_prefix,
            mode,
            threshold,
            json,
        } => {
            let mode = Mode::parse(&mode)
                .ok_or_else(|| anyhow::anyhow!("--mode must be hybrid, bm25 or vector"))?;
            let engine = open.engine()?;
            let resp = engine.search(&SearchRequest {
                query,
                limit,
                filters: Filters {
                    repo,
                    category,
                    toolkit,
                    doctype,
                    path_prefix,
                },
                threshold,
                mode,
                groups: None,
                deadline: None,
            });
            let resp = match resp {
                Ok(r) => r,
                Err(e) => return Ok(input_error(&e)),
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&resp)?);
            } else {
                print!("{resp}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Retrieve {
            doc_id,
            lines,
            open,
            json,
        } => {
            let (start, end) = output::parse_lines(&lines)?;
            let engine = open.engine()?;
            match engine.retrieve(&doc_id, start, end, None) {
                Ok(r) if json => println!("{}", serde_json::to_string_pretty(&r)?),
                Ok(r) => print!("{r}"),
                Err(e) => return Ok(input_error(&e)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Tree {
            prefix,
            open,
            depth,
            max_entries,
            json,
        } => {
            let engine = open.engine()?;
            match engine.tree(&prefix, depth, max_entries, None) {
                Ok(t) if json => println!("{}", serde_json::to_string_pretty(&t)?),
                Ok(t) => print!("{t}"),
                Err(e) => return Ok(input_error(&e)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Eval {
            golden,
            open,
            k,
            mode,
            min_recall,
            json,
        } => {
            let engine = open.engine()?;
            let queries = cairn_search::eval::load(&golden)?;
            let modes: Vec<Mode> = if mode.is_empty() {
                vec![Mode::Hybrid, Mode::Bm25, Mode::Vector]
            } else {
                mode.iter()
                    .map(|m| {
                        Mode::parse(m)
                            .ok_or_else(|| anyhow::anyhow!("--mode {m:?}: hybrid, bm25 or vector"))
                    })
                    .collect::<anyhow::Result<_>>()?
            };
            let mut reports = Vec::new();
            for m in modes {
                reports.push(cairn_search::eval::evaluate(&engine, &queries, m, k)?);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&reports)?);
            } else {
                for r in &reports {
                    output::print_eval(r);
                }
            }
            let gate = reports
                .iter()
                .find(|r| r.mode == Mode::Hybrid)
                .or(reports.first());
            let below = match (min_recall, gate) {
                (Some(min), Some(r)) => r.overall.recall_at_k < min,
                _ => false,
            };
            Ok(ExitCode::from(if below { 1 } else { 0 }))
        }
        Command::Serve(args) => args.run(),
        Command::Pack {
            index,
            version,
            out_dir,
            json,
        } => {
            let root = IndexRoot::new(&index);
            let version = match version {
                Some(v) => cairn_index::IndexVersion::parse(&v)?,
                None => root.current()?,
            };
            std::fs::create_dir_all(&out_dir)
                .with_context(|| format!("creating {}", out_dir.display()))?;
            let out = out_dir.join(cairn_index::pack::pack_name(&version));
            let info = cairn_index::pack::pack(&root, &version, &out)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&info)?);
            } else {
                println!(
                    "{} ({} bytes, sha256 {})\n{}",
                    info.path.display(),
                    info.bytes,
                    info.sha256,
                    info.checksum_path.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Unpack { pack, index } => {
            // Naming the pack on the command line is the operator asking for it, whatever its age.
            let u = cairn_index::pack::unpack(
                &pack,
                &IndexRoot::new(&index),
                cairn_index::pack::Rollback::Allow,
            )?;
            println!("{} is CURRENT in {}", u.version, index.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp { open } => {
            let live = cairn_serve::live::LiveIndex::open(open.options())
                .with_context(|| format!("opening the index at {}", open.index.display()))?;
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .context("starting the async runtime")?;
            rt.block_on(cairn_serve::mcp::serve_stdio(
                std::sync::Arc::new(live),
                std::time::Duration::from_secs(30),
            ))
            .map_err(|e| anyhow::anyhow!("MCP over stdio: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Token { action, tokens } => {
            let store = cairn_serve::auth::TokenStore::new(&tokens);
            match action {
                TokenAction::Add {
                    name,
                    groups,
                    admin,
                } => {
                    let token = store.add(&name, &groups, admin)?;
                    eprintln!(
                        "token {name:?} added to {}; it is shown once, store it now:",
                        tokens.display()
                    );
                    println!("{token}");
                }
                TokenAction::List { json } => {
                    let list = store.list()?;
                    if json {
                        let rows: Vec<serde_json::Value> = list
                            .iter()
                            .map(|t| serde_json::json!({"name": t.name, "groups": t.groups, "admin": t.admin, "created_at": t.created_at}))
                            .collect();
                        println!("{}", serde_json::to_string_pretty(&rows)?);
                    } else {
                        for t in &list {
                            println!(
                                "{}  groups [{}]{}  created {}",
                                t.name,
                                t.groups.join(","),
                                if t.admin { "  admin" } else { "" },
                                t.created_at
                            );
                        }
                    }
                }
                TokenAction::Revoke { name } => {
                    store.revoke(&name)?;
                    eprintln!("token {name:?} revoked");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Openapi { public_url } => {
            let doc = cairn_serve::http::openapi::document(public_url.as_deref());
            println!("{}", serde_json::to_string_pretty(&doc)?);
            Ok(ExitCode::SUCCESS)
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
