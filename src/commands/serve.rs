//! `cairn serve`: flags into a `ServeConfig`; the library does the rest.

use crate::cli::ServeArgs;
use anyhow::Context;
use cairn_index::pack::Rollback;
use cairn_serve::auth::JwtKeyFile;
use cairn_serve::config::{Access, IndexSource, JwtSettings, ServeConfig};
use cairn_serve::http::HttpOptions;
use cairn_serve::oauth::OAuthSettings;
use std::process::ExitCode;
use std::time::Duration;

/// The shortest watch interval accepted, so a typo cannot spin the watcher.
const MIN_WATCH_MS: u64 = 100;

/// Serves until SIGTERM or SIGINT.
pub fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    cairn_serve::server::run(config(a)?)?;
    Ok(ExitCode::SUCCESS)
}

/// The configuration these flags ask for.
fn config(a: ServeArgs) -> anyhow::Result<ServeConfig> {
    let oauth = match (a.oauth_issuer.is_empty(), &a.public_url) {
        (true, _) => None,
        (false, None) => {
            anyhow::bail!("--oauth-issuer needs --public-url (the resource tokens must name)")
        }
        (false, Some(public)) => {
            let public_url = url::Url::parse(public)
                .with_context(|| format!("--public-url {public:?} is not a URL"))?;
            let settings = OAuthSettings {
                issuers: a.oauth_issuer,
                public_url,
                groups_claim: a.oauth_groups_claim,
                scope: Some(a.oauth_scope).filter(|s| !s.trim().is_empty()),
                admin_group: a.jwt_admin_group.clone(),
                key_refresh: Duration::from_secs(a.oauth_key_refresh_secs.max(1)),
            };
            settings.validate()?;
            Some(Box::new(settings))
        }
    };
    let key = match (a.jwt_hs256_secret, a.jwt_rs256_public_key) {
        (Some(p), _) => Some(JwtKeyFile::Hs256Secret(p)),
        (_, Some(p)) => Some(JwtKeyFile::Rs256PublicKey(p)),
        (None, None) => None,
    };
    let access = match a.no_auth {
        true => Access::Open,
        false => Access::Credentials {
            tokens: a.tokens,
            jwt: key.map(|key| JwtSettings {
                key,
                issuer: a.jwt_issuer,
                audience: a.jwt_audience,
                admin_group: a.jwt_admin_group,
            }),
            oauth,
        },
    };
    let mut http = HttpOptions::new(a.bind);
    http.deadline = Duration::from_millis(a.work.deadline_ms);
    http.body_timeout = Duration::from_millis(a.body_timeout_ms.max(100));
    http.queue = a.work.queue;
    http.rate_limit = a.rate_limit;
    http.anonymous_rate_limit = (a.anonymous_rate_limit > 0).then_some(a.anonymous_rate_limit);
    http.cpu_budget_ms = a.cpu_budget_ms.filter(|&ms| ms > 0);
    http.anonymous_cpu_budget_ms =
        (a.anonymous_cpu_budget_ms > 0).then_some(a.anonymous_cpu_budget_ms);
    http.trusted_proxies = a.trusted_proxy;
    http.public_url = a.public_url;
    http.ui = !a.no_ui;
    http.public_read = a.public_read;
    http.watch_interval = Duration::from_millis(a.watch_ms.max(MIN_WATCH_MS));
    http.allowed_origins.extend(a.allow_origin);
    http.allowed_hosts.extend(a.allow_host);
    if let Some(n) = a.work.cpu_workers {
        http.cpu_workers = n.max(1);
    }
    if let Some(n) = a.http_workers {
        http.http_workers = n.max(1);
    }
    http.slack = slack(a.slack)?;
    http.llm = a.llm.config()?;
    http.mcp_tools = a.tools.choice()?;
    let rollback = match a.allow_rollback {
        true => Rollback::Allow,
        false => Rollback::Refuse,
    };
    Ok(ServeConfig {
        source: IndexSource::from_path(&a.open.root()?, &a.unpack_into, rollback),
        model_dir: a.open.model_dir,
        access,
        http,
        keep: a.keep,
    })
}

/// The Slack app these flags ask for, if any: the secret and token read
/// from their files (first line), at least one workspace.
fn slack(a: crate::cli::SlackArgs) -> anyhow::Result<Option<cairn_serve::slack::SlackConfig>> {
    let first_line = |flag: &str, path: &std::path::Path| -> anyhow::Result<String> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{flag} {}", path.display()))?;
        let line = text.lines().next().unwrap_or("").trim().to_owned();
        anyhow::ensure!(
            !line.is_empty(),
            "{flag} {}: the file is empty",
            path.display()
        );
        Ok(line)
    };
    let Some(secret_file) = a.slack_signing_secret_file else {
        anyhow::ensure!(
            a.slack_bot_token_file.is_none(),
            "--slack-bot-token-file needs --slack-signing-secret-file (every Slack request is checked against it)"
        );
        return Ok(None);
    };
    anyhow::ensure!(
        !a.slack_team.is_empty(),
        "--slack-signing-secret-file needs --slack-team TEAM_ID: the workspaces the app answers"
    );
    url::Url::parse(&a.slack_api_url)
        .with_context(|| format!("--slack-api-url {:?} is not a URL", a.slack_api_url))?;
    Ok(Some(cairn_serve::slack::SlackConfig {
        signing_secret: first_line("--slack-signing-secret-file", &secret_file)?.into_bytes(),
        bot_token: a
            .slack_bot_token_file
            .map(|p| first_line("--slack-bot-token-file", &p))
            .transpose()?,
        groups: a.slack_groups,
        teams: a.slack_team,
        api_url: a.slack_api_url,
        per_minute: a.slack_rate_limit,
    }))
}
