//! The command line's shape: every subcommand's arguments as clap types.
//! Defaults come from the libraries' constants, so the CLI, the server and
//! the tests agree on them; what each subcommand does is in `commands/`.

mod serving;

pub use serving::{LlmArgs, McpArgs, OpenapiArgs, ServeArgs, SlackArgs, TokenAction, TokenArgs};

use cairn_embed::DevicePref;
use cairn_index::layout::DEFAULT_KEEP;
use cairn_pipeline::{DEFAULT_CACHE, DEFAULT_CONFIG};
use cairn_search::{Engine, EngineOptions};
use cairn_serve::limits::DEFAULT_TOKENS;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// What `cairn --version` prints: the version, the commit it was built
/// from and the index format it reads.
pub fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        format!(
            "{} (commit {}, index format {})",
            env!("CARGO_PKG_VERSION"),
            env!("CAIRN_GIT_COMMIT"),
            cairn_index::manifest::FORMAT_VERSION
        )
    })
}

/// `cairn`'s arguments.
#[derive(Parser)]
#[command(
    name = "cairn",
    version = version_line(),
    about = "Reproducible citation search over scientific software repositories"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands besides the operations' (see [`command`]).
#[derive(Subcommand)]
pub enum Command {
    /// Build and publish a new index version from repositories.yml.
    Build(BuildArgs),
    /// Keep an index fresh: poll each remote's ref and build when one moves.
    Watch(WatchArgs),
    /// Fine-tune the embedding model on pairs mined from an index's own text (a model folder for `build --model-dir`).
    Adapt(AdaptArgs),
    /// Write one index version as a checked, shippable pack (`cairn-index-<version>.tar.zst` + `.sha256`).
    Pack(PackArgs),
    /// Check a pack's sha256 and manifest, add it to an index root and make it CURRENT.
    Unpack(UnpackArgs),
    /// Score search against golden queries: recall@k, MRR@10, nDCG@10, per kind, and the misses.
    Eval(EvalArgs),
    /// Serve the HTTP API (and MCP at /mcp) for bots; hot-swaps new index versions.
    Serve(Box<ServeArgs>),
    /// Serve MCP over stdio (for Claude Desktop, IDEs and agents that spawn a process).
    Mcp(McpArgs),
    /// Manage the bearer tokens the server accepts (the file stores only their sha256).
    Token(TokenArgs),
    /// Print the HTTP API's OpenAPI 3.1 document (import it as a GPT Action).
    Openapi(OpenapiArgs),
    /// Recheck every checksum, content hash and chunk span of the current version.
    Verify(VerifyArgs),
    /// Download the newest published pack (or one named by URL), check its sha256 and drop it into an index root for adoption.
    Pull(PullArgs),
    /// Check this machine: model and its sha256, index root and CURRENT, tokens file, disk, CPU, GPU.
    Doctor(DoctorArgs),
    /// Print shell completions (bash, zsh, fish, powershell, elvish) for `cairn`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) for `cairn`.
    Man,
    /// Print the agent skill (SKILL.md) that tells a coding agent when and how to use cairn: `cairn skill > ~/.claude/skills/cairn/SKILL.md`.
    Skill,
    /// Connect an MCP client to cairn in one step: write its MCP entry (merged, with a backup) and install the skill where it reads skills.
    Setup(SetupArgs),
    /// Read one PDF from stdin and print its pages' text as JSON: the build
    /// runs this in a child process for each PDF (not for direct use).
    #[command(name = "__pdf-text", hide = true)]
    PdfText(PdfTextArgs),
}

/// `cairn setup`.
#[derive(clap::Args)]
pub struct SetupArgs {
    /// The client: claude-code, claude-desktop, cursor, vscode, codex, gemini or opencode.
    #[arg(required_unless_present = "list")]
    pub client: Option<String>,
    /// A running server's MCP endpoint (https://host/mcp) instead of `cairn mcp`;
    /// the client sends the token it finds in CAIRN_TOKEN (never written to a file).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Index root `cairn mcp` serves (default: found as every command finds it).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// Print what would change, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Show each client's files and whether cairn is set up there.
    #[arg(long, conflicts_with_all = ["client", "url", "dry_run"])]
    pub list: bool,
}

/// `cairn __pdf-text`: the bounds the parent build passes.
#[derive(clap::Args)]
pub struct PdfTextArgs {
    /// Pages read at most.
    pub max_pages: u32,
    /// Text kept at most (bytes).
    pub max_text_bytes: usize,
    /// Compressed streams inflated at most, all together (bytes).
    pub max_inflated_bytes: u64,
}

/// `cairn pull`.
#[derive(clap::Args)]
pub struct PullArgs {
    /// `latest`, a `latest.json` URL, or a pack URL (its `.sha256` must lie beside it).
    pub source: String,
    /// Index root to drop the pack into (default: ./.cairn/index in a project, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// The `latest.json` that `latest` means (default: the nightly's release).
    #[arg(long, env = "CAIRN_PULL_FROM")]
    pub from: Option<String>,
    /// Also check the pack's build provenance attestation as made by this
    /// GitHub repository (`OWNER/REPO`), with the GitHub CLI, before dropping it.
    #[arg(long, env = "CAIRN_ATTEST_REPO")]
    pub attest_repo: Option<String>,
    /// Also take `http://` sources (without it only https is fetched: over
    /// plain HTTP anyone on the path can swap the pack and its checksum alike).
    #[arg(long)]
    pub allow_http: bool,
    /// Give up when the whole download takes longer than this many seconds.
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
    /// Refuse a pack larger than this many bytes (and never fill the disk).
    #[arg(long, default_value_t = 16 << 30)]
    pub max_bytes: u64,
    /// Keep pulling: read the source again every this many seconds and
    /// drop each new version it names (a replica's sidecar); a failed try
    /// is reported and tried again at the next.
    #[arg(long, value_name = "SECONDS")]
    pub every: Option<u64>,
}

/// `cairn doctor`.
#[derive(clap::Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    /// Tokens file (`cairn token add`).
    #[arg(long, default_value = DEFAULT_TOKENS, env = "CAIRN_TOKENS")]
    pub tokens: PathBuf,
    /// The model to check, when one is configured.
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cairn completions`.
#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Where the embedding model runs.
#[derive(Clone, Copy, ValueEnum)]
pub enum Device {
    /// The CPU.
    Cpu,
    /// The first NVIDIA GPU (a build with `--features cuda`).
    Cuda,
}

impl From<Device> for DevicePref {
    fn from(d: Device) -> Self {
        match d {
            Device::Cpu => DevicePref::Cpu,
            Device::Cuda => DevicePref::Cuda(0),
        }
    }
}

/// Where the index and the query model are.
#[derive(clap::Args)]
pub struct OpenArgs {
    /// Index root (default: ./.cairn/index if it holds one, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// Model folder instead of the hub cache (the model the index was built with).
    #[arg(long, env = "CAIRN_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
}

impl OpenArgs {
    /// The index root: the one named, or the first found ([`index_root`]).
    pub fn root(&self) -> anyhow::Result<PathBuf> {
        index_root(self.index.as_deref())
    }

    /// The library's options for these arguments.
    pub fn options(&self) -> anyhow::Result<EngineOptions> {
        Ok(EngineOptions {
            index: self.root()?,
            model_dir: self.model_dir.clone(),
            device: DevicePref::Cpu,
        })
    }

    /// The engine over this index.
    pub fn engine(&self) -> anyhow::Result<Engine> {
        use anyhow::Context;
        let options = self.options()?;
        Engine::open(&options)
            .with_context(|| format!("opening the index at {}", options.index.display()))
    }
}

/// The index root to read: `given` (`--index`, `CAIRN_INDEX`), else the
/// first place that holds an index (`./.cairn/index`, then the user's data
/// folder); the error names every place looked.
pub fn index_root(given: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    Ok(cairn_index::layout::find_root(given)?)
}

/// The index root to write: `given`, else `./.cairn/index` inside a
/// project, else the user's data folder, said on stderr so the user knows.
pub fn index_out(given: Option<&std::path::Path>) -> PathBuf {
    let (root, outside) = cairn_index::layout::write_root(given);
    if outside {
        eprintln!(
            "no --out and no project here (repositories.yml or .cairn/): the index goes to {}",
            root.display()
        );
    }
    root
}

/// What a build reads and where it publishes: `cairn build` and `cairn watch` alike.
#[derive(clap::Args)]
pub struct BuildInputs {
    /// repositories.yml (nancy-brain layout).
    #[arg(long, default_value = DEFAULT_CONFIG)]
    pub config: PathBuf,
    /// Index root to publish into (default: ./.cairn/index in a project, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub out: Option<PathBuf>,
    /// Git and embedding cache.
    #[arg(long, default_value = DEFAULT_CACHE, env = "CAIRN_CACHE")]
    pub cache: PathBuf,
    /// weights.yaml (default: weights.yaml beside the config, if any).
    #[arg(long)]
    pub weights: Option<PathBuf>,
    /// Build settings YAML (default: build.yaml beside the config, if any).
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Model folder (config.json, tokenizer.json, model.safetensors) instead of the hub cache.
    #[arg(long, env = "CAIRN_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Where the embedding model runs.
    #[arg(long, value_enum, default_value = "cpu")]
    pub device: Device,
    /// Index versions to keep.
    #[arg(long, default_value_t = DEFAULT_KEEP)]
    pub keep: usize,
    /// Build the other repositories when one fails (the failure is recorded in the manifest).
    #[arg(long)]
    pub keep_going: bool,
    /// Where arXiv articles (`articles:` in repositories.yml) are downloaded
    /// from: arxiv.org, or a mirror. Citations link to arxiv.org either way.
    #[arg(long, env = "CAIRN_ARXIV_URL", default_value = cairn_pipeline::articles::DEFAULT_ARXIV_URL)]
    pub arxiv_url: String,
}

/// `cairn build`.
#[derive(clap::Args)]
pub struct BuildArgs {
    /// What to build.
    #[command(flatten)]
    pub inputs: BuildInputs,
    /// Build only shard I of N (1-based) into a part folder at --out, for --merge.
    #[arg(long, conflicts_with = "merge")]
    pub shard: Option<String>,
    /// Publish the part folders of a sharded build into --out (same index as one machine builds).
    #[arg(long, num_args = 1..)]
    pub merge: Vec<PathBuf>,
    /// Print a machine-readable summary on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `cairn watch`.
#[derive(clap::Args)]
pub struct WatchArgs {
    /// What to build on every change (always `--keep-going`: one failing
    /// repository never stops the others from staying fresh).
    #[command(flatten)]
    pub inputs: BuildInputs,
    /// Seconds between two polls of the remotes.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub every: u64,
    /// Stop after this many polls (default: run until stopped).
    #[arg(long, value_name = "N")]
    pub polls: Option<u64>,
    /// Also accept GitHub and GitLab push webhooks on this address (e.g.
    /// 127.0.0.1:9090): a push for a watched repository polls at once.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The webhooks' secret, from this file (or `CAIRN_WEBHOOK_SECRET`).
    #[arg(long, value_name = "FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// Also pack each new version into this folder with a `latest.json`
    /// naming it, for replicas to `cairn pull` (the `--keep` newest packs stay).
    #[arg(long, value_name = "DIR")]
    pub pack_to: Option<PathBuf>,
}

/// `cairn pack`.
#[derive(clap::Args)]
pub struct PackArgs {
    /// Index root (default: ./.cairn/index if it holds one, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// The version to pack (default: CURRENT).
    #[arg(long)]
    pub version: Option<String>,
    /// Folder to write the pack into.
    #[arg(long, default_value = ".")]
    pub out_dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cairn unpack`.
#[derive(clap::Args)]
pub struct UnpackArgs {
    /// The pack (its `.sha256` must lie beside it).
    pub pack: PathBuf,
    /// Index root to add it to (default: ./.cairn/index in a project, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
}

/// `cairn eval`.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// Golden queries YAML.
    #[arg(default_value = "golden/queries.yaml")]
    pub golden: PathBuf,
    #[command(flatten)]
    pub open: OpenArgs,
    /// k of recall@k.
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// Modes to evaluate (repeatable; default: hybrid, bm25 and vector).
    #[arg(long)]
    pub mode: Vec<String>,
    /// Exit 1 when hybrid recall@k is below this.
    #[arg(long)]
    pub min_recall: Option<f64>,
    /// Print JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print Markdown tables (per kind, then the misses), e.g. for `$GITHUB_STEP_SUMMARY`.
    #[arg(long)]
    pub markdown: bool,
    /// A previous `cairn eval --json` of the same file: exit 1 when hybrid
    /// recall@k or MRR@10 fell by more than `--max-drop` since.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// The largest fall from `--baseline` tolerated (0.02: a question on a
    /// 100-question file moves recall@5 by 0.01).
    #[arg(long, default_value_t = 0.02, requires = "baseline")]
    pub max_drop: f64,
    /// Exit 1 when any guard question fails (a `never_first` doc came first, or a hit left the filters).
    #[arg(long)]
    pub fail_on_guard: bool,
    /// A rewrites file (`id: [phrasing, …]`): each question is searched with
    /// these phrasings fused in, as a calling model would send `queries`.
    #[arg(long)]
    pub rewrites: Option<PathBuf>,
    /// Multipliers of the fusion's list shares, `bm25,vector,subchunk,identifier`
    /// (default 1,1,1,1): to measure another fusion (scripts/fit-fusion.py).
    #[arg(long)]
    pub fusion: Option<String>,
    /// A prior to switch off (repeatable): `path`, `form`, `brevity` or
    /// `runtime`; it then counts 1, so the figures show what it adds.
    #[arg(long, value_name = "PRIOR")]
    pub without_prior: Vec<String>,
    /// Write each question's first 30 hybrid candidates with their features
    /// to this JSON Lines file (for `scripts/fit-ranker.py`).
    #[arg(long, value_name = "FILE")]
    pub features: Option<std::path::PathBuf>,
    /// Use the version's approximate index (if it has one) for callers who may
    /// search at least this many vector rows (default 100,000; 0: always):
    /// to measure approximate search on a small index.
    #[arg(long, value_name = "ROWS")]
    pub exact_below: Option<usize>,
}

/// `cairn adapt`.
#[derive(clap::Args)]
pub struct AdaptArgs {
    /// Index root whose current version's text the pairs are mined from (default: ./.cairn/index if it holds one, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// Folder to write the adapted model to.
    #[arg(long)]
    pub out: PathBuf,
    /// Base model folder (default: the model the index was built with).
    #[arg(long, env = "CAIRN_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
    /// Most pairs to train on.
    #[arg(long, default_value_t = 4000)]
    pub pairs: usize,
    /// Passes over the pairs.
    #[arg(long, default_value_t = 1)]
    pub epochs: usize,
    /// Pairs per step.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = 2e-5)]
    pub learning_rate: f64,
    /// Seed of the pairs' order.
    #[arg(long, default_value_t = 17)]
    pub seed: u64,
    /// Also write the mined pairs to this file (JSON lines).
    #[arg(long)]
    pub dump_pairs: Option<PathBuf>,
}

/// `cairn verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// Index root (default: ./.cairn/index if it holds one, else the user's data folder's cairn/index).
    #[arg(long, env = "CAIRN_INDEX")]
    pub index: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}
