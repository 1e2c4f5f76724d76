//! The model's configuration: where it is, which model, the key (from a
//! file, redacted wherever it is printed), and the bounds of each request.

use super::error::LlmError;
use std::fmt;
use std::path::Path;
use std::time::Duration;
use url::Url;

/// Most bytes a key file may hold (keys are a few hundred bytes at most).
const MAX_KEY_BYTES: u64 = 16 << 10;

/// An API key, read from a file. It prints as `[redacted]` however it is
/// formatted, so no log line, trace or error can carry it by accident.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key in `path`: its first line, trimmed. A file other users may
    /// read is refused, as is an empty one.
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let bad = |detail: String| LlmError::Config {
            flag: "--llm-key-file",
            detail: format!("{}: {detail}", path.display()),
        };
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(bad(format!(
                    "other users may read it (mode {:o}); chmod 600 it",
                    meta.permissions().mode() & 0o777
                )));
            }
        }
        if meta.len() > MAX_KEY_BYTES {
            return Err(bad(format!("over {MAX_KEY_BYTES} bytes: not a key file")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let key = text.lines().next().unwrap_or("").trim();
        if key.is_empty() {
            return Err(bad("holds no key".to_owned()));
        }
        if key.chars().any(|c| c.is_control() || c == ' ') {
            return Err(bad("the key holds spaces or control characters".to_owned()));
        }
        Ok(Self(key.to_owned()))
    }

    /// The key itself, for the request header and for blanking it out of
    /// what the endpoint answers.
    pub(super) fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Where the model is and how far a request to it may go.
#[derive(Clone, Debug)]
pub struct LlmConfig {
    /// The API's base URL, up to and including its version (`…/v1`):
    /// requests go to `{url}/chat/completions` and `{url}/models`.
    pub url: Url,
    /// The model name the endpoint knows.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when given.
    pub key: Option<ApiKey>,
    /// How long one request to the model may take.
    pub timeout: Duration,
    /// Most completion tokens one request may ask for.
    pub max_tokens: u32,
    /// Most rounds of tool calls one `ask` may take (1 to [`MAX_STEPS`]).
    pub max_steps: u32,
    /// Most model tokens each caller may spend a minute (`None`: unlimited).
    pub tokens_per_minute: Option<u32>,
    /// The request field that bounds a reply's tokens.
    pub token_field: TokenField,
}

/// The request field that bounds a reply's tokens: `max_tokens`, which
/// most servers read (llama.cpp's, vLLM, Ollama), or `max_completion_tokens`,
/// which OpenAI's reasoning models require (they refuse `max_tokens`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TokenField {
    /// `max_tokens`.
    #[default]
    #[value(name = "max_tokens")]
    MaxTokens,
    /// `max_completion_tokens`.
    #[value(name = "max_completion_tokens")]
    MaxCompletionTokens,
}

impl TokenField {
    /// The field's name in a request body.
    pub fn name(self) -> &'static str {
        match self {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// Most rounds of tool calls an `ask` may be configured to take.
pub const MAX_STEPS: u32 = 8;

/// The rounds an `ask` takes unless configured otherwise.
pub const DEFAULT_STEPS: u32 = 6;

impl LlmConfig {
    /// The configuration for `url` and `model`, checked: an http(s) URL
    /// without credentials, query or fragment, and a key only over https
    /// or to this machine (a key sent in clear text to another host is
    /// a key given away).
    pub fn new(
        url: &str,
        model: &str,
        key: Option<ApiKey>,
        timeout: Duration,
        max_tokens: u32,
    ) -> Result<Self, LlmError> {
        let bad = |detail: &str| LlmError::Config {
            flag: "--llm-url",
            detail: detail.to_owned(),
        };
        let mut parsed = Url::parse(url).map_err(|e| bad(&format!("not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("must be an http or https URL"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad(
                "holds credentials: give the key with --llm-key-file instead",
            ));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(bad("must not hold a query or fragment"));
        }
        let local = parsed.host_str().is_some_and(is_loopback);
        if key.is_some() && parsed.scheme() == "http" && !local {
            return Err(bad(
                "a key would cross the network in clear text: use https (plain http only to this machine)",
            ));
        }
        let trimmed = parsed.path().trim_end_matches('/').to_owned();
        parsed.set_path(&trimmed);
        if model.trim().is_empty() {
            return Err(LlmError::Config {
                flag: "--llm-model",
                detail: "names no model".to_owned(),
            });
        }
        if timeout.is_zero() || max_tokens == 0 {
            return Err(LlmError::Config {
                flag: "--llm-timeout-ms",
                detail: "the timeout and --llm-max-tokens must be above 0".to_owned(),
            });
        }
        Ok(Self {
            url: parsed,
            model: model.trim().to_owned(),
            key,
            timeout,
            max_tokens,
            max_steps: DEFAULT_STEPS,
            tokens_per_minute: None,
            token_field: TokenField::MaxTokens,
        })
    }

    /// The configuration with `steps` rounds of tool calls per `ask`.
    pub fn with_max_steps(self, steps: u32) -> Result<Self, LlmError> {
        match (1..=MAX_STEPS).contains(&steps) {
            true => Ok(Self {
                max_steps: steps,
                ..self
            }),
            false => Err(LlmError::Config {
                flag: "--llm-max-steps",
                detail: format!("1 to {MAX_STEPS}"),
            }),
        }
    }

    /// The configuration with each caller's model tokens a minute bounded.
    pub fn with_tokens_per_minute(self, tokens: Option<u32>) -> Result<Self, LlmError> {
        match tokens {
            Some(0) => Err(LlmError::Config {
                flag: "--llm-tokens-per-minute",
                detail: "at least 1 (leave it out for no bound)".to_owned(),
            }),
            _ => Ok(Self {
                tokens_per_minute: tokens,
                ..self
            }),
        }
    }

    /// The configuration bounding replies with `field`.
    pub fn with_token_field(self, field: TokenField) -> Self {
        Self {
            token_field: field,
            ..self
        }
    }

    /// `{url}/{path}`.
    pub(super) fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.url.as_str().trim_end_matches('/'))
    }
}

/// Whether `host` names this machine.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ApiKey {
        ApiKey("sk-test-123".to_owned())
    }

    #[test]
    fn a_key_never_prints() {
        let config = LlmConfig::new(
            "https://api.example.com/v1/",
            "m",
            Some(key()),
            Duration::from_secs(1),
            10,
        )
        .expect("config");
        let shown = format!("{config:?} {:?} {}", key(), key());
        assert!(!shown.contains("sk-test"), "{shown}");
        assert_eq!(
            config.endpoint("models"),
            "https://api.example.com/v1/models"
        );
    }

    #[test]
    fn bad_urls_are_refused_naming_the_flag() {
        let s = Duration::from_secs(1);
        for (url, model, key, says) in [
            ("ftp://h/v1", "m", None, "http or https"),
            ("https://u:p@h/v1", "m", None, "credentials"),
            ("https://h/v1?k=1", "m", None, "query"),
            ("http://example.com/v1", "m", Some(key()), "clear text"),
            ("https://h/v1", " ", None, "--llm-model"),
        ] {
            let err = LlmConfig::new(url, model, key, s, 10).expect_err(url);
            assert!(err.to_string().contains(says), "{url}: {err}");
            assert!(!err.to_string().contains("sk-test"));
        }
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost/v1",
            "http://[::1]/v1",
        ] {
            assert!(
                LlmConfig::new(url, "m", Some(key()), s, 10).is_ok(),
                "{url}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("key");
        std::fs::write(&path, "sk-abc\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = ApiKey::from_file(&path).expect_err("world-readable");
        assert!(err.to_string().contains("chmod 600"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        assert_eq!(ApiKey::from_file(&path).expect("key").secret(), "sk-abc");
        std::fs::write(&path, "\n").expect("write");
        assert!(ApiKey::from_file(&path).is_err());
    }
}
