//! The OAuth 2.1 resource server of the MCP authorization specification:
//! cairn never issues tokens, it trusts the authorization servers the
//! operator names. Here live their discovery (RFC 8414 / OpenID), their
//! signing keys (JWKS, refreshed on an unknown `kid` at a bounded rate),
//! access-token checks (`iss`, `exp`, an audience equal to this server per
//! RFC 8707, the required scope), the protected-resource metadata document
//! (RFC 9728) and the `WWW-Authenticate` challenges. The result is a
//! [`Caller`] whose groups come from a configured claim, so the library's
//! hidden-equals-absent rules hold for OAuth callers as for any other.
//!
//! Depends on [`crate::limits`] only; [`crate::auth::Authenticator`] asks it
//! after tokens and static JWTs.

use crate::limits::JWT_LEEWAY_SECS;
use cairn_search::Caller;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Serialize;
use serde_json::Value;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two fetches of one issuer's keys unless the
/// operator sets another: an unknown `kid` (a rotated key, or a forged
/// token) refreshes at most this often.
pub const DEFAULT_KEY_REFRESH: Duration = Duration::from_secs(30);
/// Keys older than this are fetched again on the next token that names
/// them, so a key its issuer withdrew stops verifying within this time.
pub const MAX_KEY_AGE: Duration = Duration::from_secs(3600);
/// How long one metadata or key fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes read from a metadata document or a key set.
const MAX_DOCUMENT_BYTES: u64 = 256 * 1024;
/// The scope a token needs unless the operator names another.
pub const DEFAULT_SCOPE: &str = "cairn:read";
/// The claim holding a caller's groups unless the operator names another.
pub const DEFAULT_GROUPS_CLAIM: &str = "groups";
/// Where the metadata of the whole server is served (RFC 9728).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
/// Where the metadata of the MCP endpoint is served (path-suffixed, RFC 9728 §3.1).
pub const MCP_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// Which authorization servers are trusted, and for what.
#[derive(Clone, Debug)]
pub struct OAuthSettings {
    /// Issuer identifiers (`iss`), exactly as their metadata states them.
    pub issuers: Vec<String>,
    /// This server's public URL (an origin): the resource tokens must name.
    pub public_url: url::Url,
    /// The claim whose strings are the caller's groups.
    pub groups_claim: String,
    /// The scope every call needs (`None`: any token of a trusted issuer for this resource).
    pub scope: Option<String>,
    /// Members of this group may set weights.
    pub admin_group: String,
    /// The least time between two fetches of one issuer's keys.
    pub key_refresh: Duration,
}

/// Why the settings were refused.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// The public URL is not an http(s) origin.
    #[error(
        "--public-url {0:?} must be an http(s) URL with no path, query or fragment (the resource tokens name)"
    )]
    PublicUrl(String),
    /// An issuer is not an http(s) URL.
    #[error("--oauth-issuer {0:?} must be an https URL (http on loopback only)")]
    Issuer(String),
    /// The scope is not one RFC 6749 scope token.
    #[error(
        "--oauth-scope {0:?} must be one scope token (printable ASCII without space, quote or backslash)"
    )]
    Scope(String),
}

/// What a presented access token is.
#[derive(Debug, PartialEq, Eq)]
pub enum TokenCheck {
    /// Valid, for this server, with the scope: this caller.
    Valid(Caller),
    /// Valid and for this server, without the required scope.
    InsufficientScope,
    /// Not valid here: wrong issuer, audience or signature; expired; not a
    /// JWT; or a key its issuer has not published ([`ResourceServer::unknown_key`]
    /// says when to refresh first).
    Invalid,
}

/// One trusted issuer and what was learnt of it.
struct Issuer {
    id: String,
    keys: Mutex<Keys>,
}

#[derive(Default)]
struct Keys {
    set: Vec<Jwk>,
    /// When they were last fetched (or tried), for the refresh bound.
    fetched: Option<Instant>,
    /// When `set` was last loaded, for its age.
    loaded: Option<Instant>,
}

/// The resource server: trusted issuers, their keys and the checks.
pub struct ResourceServer {
    settings: OAuthSettings,
    issuers: Vec<Issuer>,
    agent: ureq::Agent,
}

/// RFC 9728 protected-resource metadata.
#[derive(Debug, Serialize)]
pub struct ResourceMetadata {
    /// The resource's identifier (what a token's audience must be).
    pub resource: String,
    /// Issuers whose tokens are accepted.
    pub authorization_servers: Vec<String>,
    /// Scopes a client should ask for.
    pub scopes_supported: Vec<String>,
    /// Tokens go in the Authorization header only (never a query string or a form).
    pub bearer_methods_supported: [&'static str; 1],
    /// A name for people.
    pub resource_name: &'static str,
}

impl OAuthSettings {
    /// Validates the URLs: the public URL an origin, issuers http(s) (http on loopback).
    pub fn validate(&self) -> Result<(), OAuthError> {
        let u = &self.public_url;
        let origin_only =
            matches!(u.path(), "" | "/") && u.query().is_none() && u.fragment().is_none();
        if !matches!(u.scheme(), "http" | "https") || !origin_only || !u.has_host() {
            return Err(OAuthError::PublicUrl(u.to_string()));
        }
        if let Some(i) = self.issuers.iter().find(|i| !https_or_loopback(i)) {
            return Err(OAuthError::Issuer(i.clone()));
        }
        // RFC 6749 §3.3 scope-token: it is quoted into WWW-Authenticate.
        if let Some(s) = &self.scope
            && !s
                .bytes()
                .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
        {
            return Err(OAuthError::Scope(s.clone()));
        }
        Ok(())
    }

    /// This server's resource identifier: its public origin, no trailing slash.
    pub fn resource(&self) -> String {
        self.public_url.as_str().trim_end_matches('/').to_owned()
    }

    /// The MCP endpoint's resource identifier (what MCP clients ask tokens for).
    pub fn mcp_resource(&self) -> String {
        format!("{}/mcp", self.resource())
    }
}

impl ResourceServer {
    /// A resource server for `settings`; keys are fetched by [`Self::refresh`].
    pub fn new(settings: OAuthSettings) -> Result<Self, OAuthError> {
        settings.validate()?;
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(FETCH_TIMEOUT))
            // A redirect could point a key fetch anywhere; metadata URLs are exact.
            .max_redirects(0)
            .http_status_as_error(false)
            .build()
            .into();
        let issuers = settings
            .issuers
            .iter()
            .map(|id| Issuer {
                id: id.clone(),
                keys: Mutex::new(Keys::default()),
            })
            .collect();
        Ok(Self {
            settings,
            issuers,
            agent,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// Fetches every issuer's keys (at start), logging the ones that fail:
    /// a server whose issuer is down still starts, and refuses that issuer's
    /// tokens until its keys can be fetched.
    pub fn refresh_all(&self) {
        for i in 0..self.issuers.len() {
            self.refresh(i);
        }
    }

    /// Fetches issuer `i`'s metadata and keys unless they were fetched less
    /// than [`OAuthSettings::key_refresh`] ago. Blocking (network): call it off the
    /// request threads. True when new keys were loaded.
    pub fn refresh(&self, i: usize) -> bool {
        let Some(issuer) = self.issuers.get(i) else {
            return false;
        };
        {
            let mut keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
            if keys
                .fetched
                .is_some_and(|t| t.elapsed() < self.settings.key_refresh)
            {
                return false;
            }
            // Claimed before fetching, so concurrent callers do not all fetch.
            keys.fetched = Some(Instant::now());
        }
        match self.fetch_keys(&issuer.id) {
            Ok(set) => {
                tracing::info!(issuer = %issuer.id, keys = set.len(), "authorization server keys loaded");
                let mut keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
                keys.set = set;
                keys.loaded = Some(Instant::now());
                true
            }
            Err(why) => {
                tracing::warn!(issuer = %issuer.id, reason = %why, "authorization server keys not loaded; its tokens are refused until they are");
                false
            }
        }
    }

    /// The issuer's metadata (RFC 8414, then OpenID discovery), checked to
    /// name this issuer, and the key set its `jwks_uri` holds.
    fn fetch_keys(&self, issuer: &str) -> Result<Vec<Jwk>, String> {
        let mut tried = Vec::new();
        for url in metadata_urls(issuer) {
            let doc = match self.get_json(&url) {
                Ok(d) => d,
                Err(e) => {
                    tried.push(format!("{url}: {e}"));
                    continue;
                }
            };
            // RFC 8414 §3.3: metadata naming another issuer is not this issuer's.
            if doc.get("issuer").and_then(Value::as_str) != Some(issuer) {
                return Err(format!("{url} names issuer {:?}", doc.get("issuer")));
            }
            let jwks_uri = doc
                .get("jwks_uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{url} has no jwks_uri"))?;
            if !https_or_loopback(jwks_uri) {
                return Err(format!("{url}: jwks_uri {jwks_uri:?} is not https"));
            }
            let set: JwkSet = serde_json::from_value(self.get_json(jwks_uri)?)
                .map_err(|e| format!("{jwks_uri}: {e}"))?;
            return Ok(set.keys);
        }
        Err(tried.join("; "))
    }

    fn get_json(&self, url: &str) -> Result<Value, String> {
        let mut resp = self
            .agent
            .get(url)
            .header("Accept", "application/json")
            .call()
            .map_err(|e| e.to_string())?;
        if resp.status() != 200 {
            return Err(format!("HTTP {}", resp.status()));
        }
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_DOCUMENT_BYTES)
            .read_to_vec()
            .map_err(|e| e.to_string())?;
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    }

    /// The trusted issuer (its index) whose keys should be fetched before
    /// `token` is judged: it names a key not known yet, or the keys are
    /// older than [`MAX_KEY_AGE`] (a withdrawn key stops verifying). Read
    /// without checking the signature; [`Self::refresh`] bounds the rate.
    pub fn wants_refresh(&self, token: &str) -> Option<usize> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        let claims = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token).ok()?;
        let iss = claims.get("iss").and_then(Value::as_str)?;
        let i = self.issuers.iter().position(|is| is.id == iss)?;
        let keys = self.issuers[i]
            .keys
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let stale = keys.loaded.is_none_or(|t| t.elapsed() > MAX_KEY_AGE);
        let unknown = pick_key(&keys.set, header.kid.as_deref(), header.alg).is_none();
        (stale || unknown).then_some(i)
    }

    /// Checks a bearer token: a JWT signed by a trusted issuer's key, not
    /// expired, for this server, with the scope.
    pub fn check(&self, token: &str) -> TokenCheck {
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return TokenCheck::Invalid;
        };
        // Only public-key algorithms: a shared secret is not how an
        // authorization server signs, and `none` is never accepted.
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return TokenCheck::Invalid;
        }
        // RFC 9068 access tokens are `at+jwt`; many servers still write `JWT`.
        // Any other type (a logout token, say) is not an access token.
        let typ_ok = header.typ.as_deref().is_none_or(|t| {
            ["at+jwt", "application/at+jwt", "jwt"]
                .iter()
                .any(|ok| t.eq_ignore_ascii_case(ok))
        });
        if !typ_ok {
            return TokenCheck::Invalid;
        }
        // The issuer picks the keys; the signature check below is what trusts it.
        let Ok(unverified) = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token) else {
            return TokenCheck::Invalid;
        };
        let iss = unverified.get("iss").and_then(Value::as_str);
        let Some(issuer) = self.issuers.iter().find(|is| Some(is.id.as_str()) == iss) else {
            return TokenCheck::Invalid;
        };
        let key = {
            let keys = issuer.keys.lock().unwrap_or_else(|p| p.into_inner());
            pick_key(&keys.set, header.kid.as_deref(), header.alg)
        };
        let Some(key) = key else {
            return TokenCheck::Invalid;
        };
        let Ok(key) = DecodingKey::from_jwk(&key) else {
            return TokenCheck::Invalid;
        };
        let mut v = Validation::new(header.alg);
        v.leeway = JWT_LEEWAY_SECS;
        v.set_issuer(&[&issuer.id]);
        v.set_required_spec_claims(&["exp", "iss"]);
        v.validate_nbf = true;
        // The audience is checked below: RFC 8707 lets it be `aud` or `resource`.
        v.validate_aud = false;
        let Ok(data) = jsonwebtoken::decode::<Value>(token, &key, &v) else {
            return TokenCheck::Invalid;
        };
        let claims = data.claims;
        // RFC 9068 §3 / RFC 8707: the audience is `aud`, and only `aud`.
        let mine = [self.settings.resource(), self.settings.mcp_resource()];
        if !strings(claims.get("aud")).iter().any(|a| mine.contains(a)) {
            return TokenCheck::Invalid;
        }
        if let Some(scope) = &self.settings.scope {
            // `scope` (RFC 9068) or Entra ID's `scp`, each a space-separated string or a list.
            let granted: Vec<String> = ["scope", "scp"]
                .iter()
                .flat_map(|c| strings(claims.get(*c)))
                .flat_map(|s| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .collect();
            if !granted.iter().any(|g| g == scope) {
                return TokenCheck::InsufficientScope;
            }
        }
        let groups = strings(claims.get(&self.settings.groups_claim));
        // Subjects are unique per issuer only: the name (and rate budget) holds both.
        let name = match claims.get("sub").and_then(Value::as_str) {
            Some(sub) => format!("oauth:{}#{sub}", issuer.id),
            None => format!("oauth:{}", issuer.id),
        };
        TokenCheck::Valid(Caller {
            name,
            admin: groups.contains(&self.settings.admin_group),
            groups: Some(groups),
        })
    }

    /// The RFC 9728 document for the resource at `path` (`/` or `/mcp`).
    pub fn metadata(&self, mcp: bool) -> ResourceMetadata {
        ResourceMetadata {
            resource: match mcp {
                true => self.settings.mcp_resource(),
                false => self.settings.resource(),
            },
            authorization_servers: self.settings.issuers.clone(),
            scopes_supported: self.settings.scope.iter().cloned().collect(),
            bearer_methods_supported: ["header"],
            resource_name: "cairn",
        }
    }

    /// `WWW-Authenticate` for a request to `path` without valid credentials
    /// (`error`: `None` when none were sent, else `invalid_token` or
    /// `insufficient_scope`, RFC 6750 §3.1).
    pub fn challenge(&self, path: &str, error: Option<&str>) -> String {
        let metadata = match path == "/mcp" || path.starts_with("/mcp/") {
            true => MCP_METADATA_PATH,
            false => METADATA_PATH,
        };
        let mut c = format!(
            "Bearer resource_metadata=\"{}{metadata}\"",
            self.settings.resource()
        );
        if let Some(scope) = &self.settings.scope {
            c.push_str(&format!(", scope=\"{scope}\""));
        }
        if let Some(e) = error {
            c.push_str(&format!(", error=\"{e}\""));
        }
        c
    }
}

/// An https URL, or http on a loopback host (tests and local development).
fn https_or_loopback(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| match u.scheme() {
        "https" => true,
        "http" => matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")),
        _ => false,
    })
}

/// Where an issuer's metadata may be: RFC 8414's well-known URI (inserted
/// before the issuer's path), then OpenID discovery (appended, and inserted).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(u) = url::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ]
}

/// The key a token names: by `kid`, or the only key for its algorithm when it names none.
fn pick_key(set: &[Jwk], kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let fits = |k: &&Jwk| {
        // A key that states its algorithm is used for that one only, and an
        // encryption key never verifies a signature.
        let for_signing = !matches!(
            k.common.public_key_use,
            Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
        );
        for_signing
            && k.common
                .key_algorithm
                .is_none_or(|a| a.to_string() == format!("{alg:?}"))
    };
    match kid {
        Some(kid) => set
            .iter()
            .filter(fits)
            .find(|k| k.common.key_id.as_deref() == Some(kid))
            .cloned(),
        None => {
            let mut fitting = set.iter().filter(fits);
            match (fitting.next(), fitting.next()) {
                (Some(k), None) => Some(k.clone()),
                _ => None,
            }
        }
    }
}

/// A claim that is a string or a list of strings, as strings.
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_put_it() {
        assert_eq!(
            metadata_urls("https://id.example.org/realms/sci"),
            [
                "https://id.example.org/.well-known/oauth-authorization-server/realms/sci",
                "https://id.example.org/realms/sci/.well-known/openid-configuration",
                "https://id.example.org/.well-known/openid-configuration/realms/sci",
            ]
        );
        assert_eq!(
            metadata_urls("https://tenant.auth0.com/")[0],
            "https://tenant.auth0.com/.well-known/oauth-authorization-server"
        );
    }

    #[test]
    fn encryption_keys_and_keys_for_other_algorithms_never_verify() {
        let rsa = |kid: &str, extra: Value| {
            let mut k = json!({"kty": "RSA", "kid": kid, "n": "sXch", "e": "AQAB"});
            if let (Some(k), Some(e)) = (k.as_object_mut(), extra.as_object()) {
                k.extend(e.clone());
            }
            serde_json::from_value::<Jwk>(k).expect("jwk")
        };
        let pick = |set: &[Jwk], kid| pick_key(set, kid, Algorithm::RS256).is_some();
        assert!(!pick(&[rsa("a", json!({"use": "enc"}))], Some("a")));
        assert!(!pick(&[rsa("a", json!({"alg": "RS512"}))], Some("a")));
        let signing = [rsa("a", json!({"use": "sig", "alg": "RS256"}))];
        assert!(pick(&signing, Some("a")));
        assert!(!pick(&signing, Some("b")));
        // Without a kid, only a single fitting key is taken.
        assert!(pick(&signing, None));
        assert!(!pick(&[rsa("a", json!({})), rsa("b", json!({}))], None));
    }

    #[test]
    fn settings_refuse_urls_that_cannot_name_this_server() {
        let s = |public: &str, issuer: &str| OAuthSettings {
            issuers: vec![issuer.to_owned()],
            public_url: url::Url::parse(public).expect("url"),
            groups_claim: DEFAULT_GROUPS_CLAIM.to_owned(),
            scope: Some(DEFAULT_SCOPE.to_owned()),
            admin_group: "admin".to_owned(),
            key_refresh: DEFAULT_KEY_REFRESH,
        };
        assert!(
            s("https://cairn.example.org", "https://id.example.org")
                .validate()
                .is_ok()
        );
        assert!(
            s("https://cairn.example.org/sub", "https://id.example.org")
                .validate()
                .is_err()
        );
        assert!(
            s("https://cairn.example.org/?x=1", "https://id.example.org")
                .validate()
                .is_err()
        );
        assert!(
            s("https://cairn.example.org", "http://id.example.org")
                .validate()
                .is_err()
        );
        assert!(
            s("https://cairn.example.org", "http://127.0.0.1:9")
                .validate()
                .is_ok()
        );
        let mut quoted = s("https://cairn.example.org", "https://id.example.org");
        quoted.scope = Some("a\" b".to_owned());
        assert!(
            quoted.validate().is_err(),
            "a scope is quoted into a header"
        );
        let rs = ResourceServer::new(s("https://cairn.example.org/", "https://id.example.org"))
            .expect("rs");
        assert_eq!(
            rs.challenge("/mcp", Some("invalid_token")),
            "Bearer resource_metadata=\"https://cairn.example.org/.well-known/oauth-protected-resource/mcp\", scope=\"cairn:read\", error=\"invalid_token\""
        );
        assert_eq!(rs.metadata(true).resource, "https://cairn.example.org/mcp");
        assert_eq!(rs.metadata(false).resource, "https://cairn.example.org");
    }
}
