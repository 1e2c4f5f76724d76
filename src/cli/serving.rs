//! The arguments of the subcommands that serve: `serve`, `mcp`, `token`
//! and `openapi`, with the CPU pool's settings they share.

use super::OpenArgs;
use cairn_index::layout::{DEFAULT_KEEP, DEFAULT_ROOT};
use cairn_serve::limits::{
    DEFAULT_ANONYMOUS_CPU_MS_PER_MINUTE, DEFAULT_ANONYMOUS_PER_MINUTE, DEFAULT_BIND,
    DEFAULT_BODY_TIMEOUT_MS, DEFAULT_DEADLINE_MS, DEFAULT_JWT_ADMIN_GROUP, DEFAULT_QUEUE,
    DEFAULT_TOKENS, DEFAULT_WATCH_MS,
};
use clap::Subcommand;
use std::path::PathBuf;

/// How much CPU work a server takes on, shared by `serve` and `mcp`.
#[derive(clap::Args)]
pub struct WorkArgs {
    /// Most milliseconds a request may take.
    #[arg(long, default_value_t = DEFAULT_DEADLINE_MS)]
    pub deadline_ms: u64,
    /// Searches that may wait for a CPU thread before requests get 503.
    #[arg(long, default_value_t = DEFAULT_QUEUE)]
    pub queue: usize,
    /// Threads for searches (default: all cores).
    #[arg(long)]
    pub cpu_workers: Option<usize>,
}

/// `cairn serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    #[command(flatten)]
    pub work: WorkArgs,
    #[command(flatten)]
    pub slack: SlackArgs,
    /// The configured model (the chat gateway).
    #[command(flatten)]
    pub llm: LlmArgs,
    /// The tools `/mcp` lists.
    #[command(flatten)]
    pub tools: ToolArgs,
    /// Address to listen on.
    #[arg(long, default_value = DEFAULT_BIND, env = "CAIRN_BIND")]
    pub bind: std::net::SocketAddr,
    /// Tokens file (`cairn token add`).
    #[arg(long, default_value = DEFAULT_TOKENS, env = "CAIRN_TOKENS")]
    pub tokens: PathBuf,
    /// Most milliseconds a request body may take to arrive whole (then
    /// 408, and the connection is closed).
    #[arg(long, default_value_t = DEFAULT_BODY_TIMEOUT_MS)]
    pub body_timeout_ms: u64,
    /// Accept every request without credentials (loopback binds only).
    #[arg(long)]
    pub no_auth: bool,
    /// Answer the API and MCP without credentials too, as an anonymous
    /// caller: documents without groups only, never admin, within the
    /// anonymous budgets (a public read-only index; credentials still widen it).
    #[arg(long, conflicts_with = "no_auth")]
    pub public_read: bool,
    /// Also accept HS256 JWTs signed with the secret in this file (at least 32 bytes).
    #[arg(long, conflicts_with = "jwt_rs256_public_key")]
    pub jwt_hs256_secret: Option<PathBuf>,
    /// Also accept RS256 JWTs signed by the key whose public PEM is in this file.
    #[arg(long)]
    pub jwt_rs256_public_key: Option<PathBuf>,
    /// Required JWT issuer (`iss`).
    #[arg(long)]
    pub jwt_issuer: Option<String>,
    /// Required JWT audience (`aud`).
    #[arg(long)]
    pub jwt_audience: Option<String>,
    /// Members of this JWT (or OAuth groups-claim) group may set weights.
    #[arg(long, default_value = DEFAULT_JWT_ADMIN_GROUP)]
    pub jwt_admin_group: String,
    /// Accept OAuth access tokens issued by this authorization server (its
    /// issuer URL; repeatable). Needs --public-url: tokens must name it as audience.
    #[arg(long, value_name = "ISSUER_URL", requires = "public_url")]
    pub oauth_issuer: Vec<String>,
    /// The scope an OAuth access token needs ("" for none).
    #[arg(long, default_value = cairn_serve::oauth::DEFAULT_SCOPE)]
    pub oauth_scope: String,
    /// The access-token claim holding the caller's groups.
    #[arg(long, default_value = cairn_serve::oauth::DEFAULT_GROUPS_CLAIM)]
    pub oauth_groups_claim: String,
    /// Seconds between two fetches of an issuer's keys at most (a token
    /// naming an unknown key triggers one).
    #[arg(long, default_value_t = cairn_serve::oauth::DEFAULT_KEY_REFRESH.as_secs())]
    pub oauth_key_refresh_secs: u64,
    /// A browser origin allowed to call (repeatable); other origins get 403.
    #[arg(long)]
    pub allow_origin: Vec<String>,
    /// A host name every route answers to besides loopback names and IP addresses (repeatable; DNS-rebinding protection).
    #[arg(long)]
    pub allow_host: Vec<String>,
    /// The public base URL (an origin): the OpenAPI document's `servers`,
    /// and the resource OAuth access tokens must name.
    #[arg(long, env = "CAIRN_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Requests per minute per caller (default: unlimited); an anonymous
    /// visitor of the pages is a caller by address.
    #[arg(long)]
    pub rate_limit: Option<u32>,
    /// Page requests per minute that all anonymous visitors share (0: unlimited).
    #[arg(long, default_value_t = DEFAULT_ANONYMOUS_PER_MINUTE)]
    pub anonymous_rate_limit: u32,
    /// Milliseconds of CPU work (searches, greps, pages) each token holder's
    /// calls may take per minute, charged for the time each took (default and 0: unlimited).
    #[arg(long, value_name = "MS")]
    pub cpu_budget_ms: Option<u32>,
    /// Milliseconds of CPU work per minute that all anonymous callers share,
    /// each address a quarter of it (0: unlimited).
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_ANONYMOUS_CPU_MS_PER_MINUTE)]
    pub anonymous_cpu_budget_ms: u32,
    /// A reverse proxy (address or CIDR block, repeatable) whose `Forwarded`
    /// or `X-Forwarded-For` header names the visitor; nobody else's is believed.
    #[arg(long)]
    pub trusted_proxy: Vec<cairn_serve::http::client::Cidr>,
    /// HTTP worker threads (default: all cores).
    #[arg(long)]
    pub http_workers: Option<usize>,
    /// How often CURRENT, dropped packs and the tokens file are checked, in milliseconds.
    #[arg(long, default_value_t = DEFAULT_WATCH_MS)]
    pub watch_ms: u64,
    /// Where a pack given as --index is unpacked (an index root).
    #[arg(long, default_value = DEFAULT_ROOT)]
    pub unpack_into: PathBuf,
    /// Make a pack given as --index CURRENT even when it was built before the
    /// version CURRENT names now (without it, such a pack changes nothing).
    #[arg(long)]
    pub allow_rollback: bool,
    /// Index versions (and tried packs) kept after a dropped pack is adopted.
    #[arg(long, default_value_t = DEFAULT_KEEP)]
    pub keep: usize,
    /// Serve no web pages (`/`, `/doc/…`, `/browse/…`, `/api`): the JSON API and MCP only.
    #[arg(long)]
    pub no_ui: bool,
}

/// The Slack app (`POST /slack/commands`, `POST /slack/events`).
#[derive(clap::Args)]
pub struct SlackArgs {
    /// The Slack app's signing secret, from this file (its first line):
    /// turns the Slack app on (docs/slack-app.yml is its manifest).
    #[arg(long, value_name = "FILE", env = "CAIRN_SLACK_SIGNING_SECRET_FILE")]
    pub slack_signing_secret_file: Option<PathBuf>,
    /// The bot token (`xoxb-…`), from this file: answers mentions and
    /// direct messages in their thread (slash commands need none).
    #[arg(long, value_name = "FILE", env = "CAIRN_SLACK_BOT_TOKEN_FILE")]
    pub slack_bot_token_file: Option<PathBuf>,
    /// A workspace the app answers, by team id (`T0123ABCD`; repeatable,
    /// at least one with the signing secret).
    #[arg(long, value_name = "TEAM_ID")]
    pub slack_team: Vec<String>,
    /// The access groups the Slack app searches as (repeatable or
    /// comma-separated; default: public documents only).
    #[arg(long, value_name = "GROUP", value_delimiter = ',')]
    pub slack_groups: Vec<String>,
    /// Questions per minute from Slack, all workspaces together.
    #[arg(long, value_name = "N", default_value_t = 60)]
    pub slack_rate_limit: u32,
    /// Slack's Web API base URL (where `chat.postMessage` is posted; a
    /// `response_url` on its origin is accepted too, as Slack's are).
    #[arg(long, value_name = "URL", default_value = cairn_serve::slack::DEFAULT_API_URL)]
    pub slack_api_url: String,
}

/// `cairn mcp`.
#[derive(clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub open: OpenArgs,
    #[command(flatten)]
    pub work: WorkArgs,
    /// The configured model (`ask`).
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub tools: ToolArgs,
}

/// Which MCP tools are listed (docs/API.md, "Fewer tools").
#[derive(clap::Args, Clone, Debug)]
pub struct ToolArgs {
    /// Tool sets to list instead of the default seven: read, code,
    /// history, explain, admin, or all (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "SETS")]
    pub toolsets: Vec<String>,
    /// Tools to list besides those sets (comma-separated names).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub tools: Vec<String>,
}

impl ToolArgs {
    /// The choice, each name checked.
    pub fn choice(&self) -> anyhow::Result<cairn_serve::toolsets::ToolChoice> {
        let named: Vec<&String> = self.toolsets.iter().chain(&self.tools).collect();
        cairn_serve::toolsets::ToolChoice::parse(&named)
            .map_err(|e| anyhow::anyhow!("--toolsets/--tools: {e}"))
    }
}

/// `cairn token`.
#[derive(clap::Args)]
pub struct TokenArgs {
    /// What to do with tokens.
    #[command(subcommand)]
    pub action: TokenAction,
    /// Tokens file.
    #[arg(long, global = true, default_value = DEFAULT_TOKENS, env = "CAIRN_TOKENS")]
    pub tokens: PathBuf,
}

/// `cairn token …`.
#[derive(Subcommand)]
pub enum TokenAction {
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

/// `cairn openapi`.
#[derive(clap::Args)]
pub struct OpenapiArgs {
    /// The server's public base URL, written into `servers`.
    #[arg(long, env = "CAIRN_PUBLIC_URL")]
    pub public_url: Option<String>,
}

/// The configured language model (docs/CONFIG.md, "A model"): off unless
/// `--llm-url` and `--llm-model` are given.
#[derive(clap::Args, Clone, Debug)]
pub struct LlmArgs {
    /// An OpenAI-compatible Chat Completions API, up to its version
    /// (`https://api.openai.com/v1`, `http://127.0.0.1:8080/v1` for
    /// llama.cpp's server or vLLM, `http://127.0.0.1:11434/v1` for Ollama).
    #[arg(
        long,
        value_name = "URL",
        env = "CAIRN_LLM_URL",
        requires = "llm_model"
    )]
    pub llm_url: Option<String>,
    /// The model's name at that endpoint.
    #[arg(
        long,
        value_name = "NAME",
        env = "CAIRN_LLM_MODEL",
        requires = "llm_url"
    )]
    pub llm_model: Option<String>,
    /// A file holding the API key (mode 600), sent as a bearer token.
    #[arg(long, value_name = "FILE", env = "CAIRN_LLM_KEY_FILE")]
    pub llm_key_file: Option<PathBuf>,
    /// Most milliseconds one request to the model may take.
    #[arg(long, default_value_t = 60_000)]
    pub llm_timeout_ms: u64,
    /// Most tokens the model may write in one reply.
    #[arg(long, default_value_t = 1024)]
    pub llm_max_tokens: u32,
    /// Most rounds of tool calls one `ask` may take (1 to 8).
    #[arg(long, default_value_t = cairn_serve::llm::DEFAULT_STEPS)]
    pub llm_max_steps: u32,
    /// Most model tokens (read and written) each caller may spend a
    /// minute, across ask and the gateway (default: no bound).
    #[arg(long, value_name = "TOKENS")]
    pub llm_tokens_per_minute: Option<u32>,
    /// The request field bounding a reply's tokens: `max_tokens` (most
    /// servers) or `max_completion_tokens` (OpenAI's reasoning models).
    #[arg(long, value_enum, default_value = "max_tokens")]
    pub llm_token_field: cairn_serve::llm::TokenField,
}

impl LlmArgs {
    /// The model's configuration, checked; `None` when none is configured.
    pub fn config(
        &self,
    ) -> Result<Option<cairn_serve::llm::LlmConfig>, cairn_serve::llm::LlmError> {
        use cairn_serve::llm::{ApiKey, LlmConfig};
        let (Some(url), Some(model)) = (&self.llm_url, &self.llm_model) else {
            return Ok(None);
        };
        let key = self
            .llm_key_file
            .as_deref()
            .map(ApiKey::from_file)
            .transpose()?;
        LlmConfig::new(
            url,
            model,
            key,
            std::time::Duration::from_millis(self.llm_timeout_ms),
            self.llm_max_tokens,
        )?
        .with_max_steps(self.llm_max_steps)?
        .with_tokens_per_minute(self.llm_tokens_per_minute)
        .map(|c| Some(c.with_token_field(self.llm_token_field)))
    }
}
