//! Who is calling: bearer tokens from a tokens file that stores only their
//! sha256, optional JWTs (HS256 or RS256) with a `groups` claim, OAuth access
//! tokens of trusted authorization servers ([`crate::oauth`]), or no auth on
//! a loopback bind. The result is a [`Caller`], whose groups the search
//! library enforces; nothing here decides what a caller may see.

use crate::oauth::{ResourceServer, TokenCheck};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;
use subtle::ConstantTimeEq;

pub use crate::limits::JWT_LEEWAY_SECS;
/// Every token starts with this, so a leaked one is easy to recognise (and to scan for).
pub const TOKEN_PREFIX: &str = "cairn_";

pub use cairn_search::Caller;

/// The file holding a JWT verification key, and so the algorithm.
#[derive(Clone, Debug)]
pub enum JwtKeyFile {
    /// A shared secret of at least 32 bytes (HS256).
    Hs256Secret(PathBuf),
    /// An RSA public key in PEM (RS256).
    Rs256PublicKey(PathBuf),
}

/// Why a tokens file or a credential was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The tokens file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The tokens file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A token name is taken, missing or malformed.
    #[error("{0}")]
    Name(String),
    /// A JWT key could not be read.
    #[error("JWT key {path}: {message}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// One stored token: its name, groups and sha256 (never the token).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// Unique name (who holds it).
    pub name: String,
    /// sha256 of the token, hex.
    pub sha256: String,
    /// Access groups.
    #[serde(default)]
    pub groups: Vec<String>,
    /// May set runtime weights.
    #[serde(default)]
    pub admin: bool,
    /// When it was made (RFC 3339).
    pub created_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensFile {
    tokens: Vec<TokenEntry>,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The tokens file: a JSON list of [`TokenEntry`], written atomically with mode 0600.
pub struct TokenStore {
    path: PathBuf,
}

impl TokenStore {
    /// The store kept in `path` (created on the first `add`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    fn file_err(&self, message: impl ToString) -> AuthError {
        AuthError::File {
            path: self.path.clone(),
            message: message.to_string(),
        }
    }

    /// The stored entries (none when the file does not exist yet).
    pub fn list(&self) -> Result<Vec<TokenEntry>, AuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice::<TokensFile>(&bytes)
                .map(|f| f.tokens)
                .map_err(|e| self.file_err(e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(self.file_err(e)),
        }
    }

    fn save(&self, tokens: Vec<TokenEntry>) -> Result<(), AuthError> {
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.file_err(e))?;
        let bytes =
            serde_json::to_vec_pretty(&TokensFile { tokens }).map_err(|e| self.file_err(e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| self.file_err(e))?;
        std::io::Write::write_all(&mut tmp, &bytes).map_err(|e| self.file_err(e))?;
        tmp.as_file().sync_all().map_err(|e| self.file_err(e))?;
        // NamedTempFile is created 0600, so the hashes are never world-readable.
        tmp.persist(&self.path)
            .map_err(|e| self.file_err(e.error))?;
        Ok(())
    }

    /// Adds a token named `name` and returns it: the only time it is ever shown.
    pub fn add(&self, name: &str, groups: &[String], admin: bool) -> Result<String, AuthError> {
        let valid = |s: &str| {
            !s.is_empty()
                && s.len() <= 100
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
        };
        if !valid(name) {
            return Err(AuthError::Name(format!(
                "token name {name:?}: use 1 to 100 letters, digits, '-', '_', '.', '@'"
            )));
        }
        if let Some(g) = groups.iter().find(|g| !valid(g)) {
            return Err(AuthError::Name(format!(
                "group {g:?}: use 1 to 100 letters, digits, '-', '_', '.', '@'"
            )));
        }
        let mut tokens = self.list()?;
        if tokens.iter().any(|t| t.name == name) {
            return Err(AuthError::Name(format!(
                "a token named {name:?} exists; revoke it first"
            )));
        }
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        let token = format!("{TOKEN_PREFIX}{}", hex::encode(secret));
        tokens.push(TokenEntry {
            name: name.to_owned(),
            sha256: hex::encode(digest(&token)),
            groups: groups.to_vec(),
            admin,
            created_at: time::OffsetDateTime::now_utc()
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default(),
        });
        self.save(tokens)?;
        Ok(token)
    }

    /// Removes the token named `name`.
    pub fn revoke(&self, name: &str) -> Result<(), AuthError> {
        let mut tokens = self.list()?;
        let before = tokens.len();
        tokens.retain(|t| t.name != name);
        if tokens.len() == before {
            return Err(AuthError::Name(format!("no token named {name:?}")));
        }
        self.save(tokens)
    }
}

/// Which key signs accepted JWTs.
#[derive(Clone)]
pub enum JwtKey {
    /// A shared secret (HS256).
    Hs256(Vec<u8>),
    /// An RSA public key in PEM (RS256).
    Rs256(Vec<u8>),
}

/// How JWTs are checked.
#[derive(Clone)]
pub struct JwtConfig {
    /// The key.
    pub key: JwtKey,
    /// Required `iss`, if any.
    pub issuer: Option<String>,
    /// Required `aud`, if any.
    pub audience: Option<String>,
    /// Members of this group may set weights.
    pub admin_group: String,
}

impl JwtConfig {
    /// Reads the key: a secret file for HS256, a PEM public key for RS256.
    pub fn from_file(
        key: &JwtKeyFile,
        issuer: Option<String>,
        audience: Option<String>,
        admin_group: String,
    ) -> Result<Self, AuthError> {
        let (path, rs256) = match key {
            JwtKeyFile::Hs256Secret(p) => (p.as_path(), false),
            JwtKeyFile::Rs256PublicKey(p) => (p.as_path(), true),
        };
        let bytes = std::fs::read(path).map_err(|e| AuthError::Key {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let key = if rs256 {
            jsonwebtoken::DecodingKey::from_rsa_pem(&bytes).map_err(|e| AuthError::Key {
                path: path.to_owned(),
                message: e.to_string(),
            })?;
            JwtKey::Rs256(bytes)
        } else {
            let secret = bytes.trim_ascii().to_vec();
            if secret.len() < 32 {
                return Err(AuthError::Key {
                    path: path.to_owned(),
                    message: "an HS256 secret needs at least 32 bytes".to_owned(),
                });
            }
            JwtKey::Hs256(secret)
        };
        Ok(Self {
            key,
            issuer,
            audience,
            admin_group,
        })
    }

    fn check(&self, token: &str) -> Option<Caller> {
        use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
        #[derive(Deserialize)]
        struct Claims {
            sub: Option<String>,
            #[serde(default)]
            groups: Vec<String>,
        }
        let (key, alg) = match &self.key {
            JwtKey::Hs256(s) => (DecodingKey::from_secret(s), Algorithm::HS256),
            JwtKey::Rs256(pem) => (DecodingKey::from_rsa_pem(pem).ok()?, Algorithm::RS256),
        };
        let mut v = Validation::new(alg);
        // Clocks of issuer and server differ a little; a token is accepted up
        // to this long past its `exp` (and before its `nbf`). SECURITY.md says so.
        v.leeway = JWT_LEEWAY_SECS;
        // A configured claim is required, not merely checked when present:
        // leaving it out must not be a way around it.
        let mut required = vec!["exp"];
        if let Some(iss) = &self.issuer {
            v.set_issuer(&[iss]);
            required.push("iss");
        }
        match &self.audience {
            Some(aud) => {
                v.set_audience(&[aud]);
                required.push("aud");
            }
            None => v.validate_aud = false,
        }
        v.set_required_spec_claims(&required);
        v.validate_nbf = true;
        let data = decode::<Claims>(token, &key, &v).ok()?;
        let c = data.claims;
        Some(Caller {
            // Without a subject each token is its own caller (and rate-limit
            // bucket), named by its hash so logs never hold the token.
            name: c
                .sub
                .unwrap_or_else(|| format!("jwt-{}", &hex::encode(digest(token))[..16])),
            admin: c.groups.contains(&self.admin_group),
            groups: Some(c.groups),
        })
    }
}

struct Loaded {
    entries: Vec<([u8; 32], TokenEntry)>,
    modified: Option<SystemTime>,
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer_token(authorization: &str) -> Option<&str> {
    authorization
        .strip_prefix("Bearer ")
        .or_else(|| authorization.strip_prefix("bearer "))
        .map(str::trim)
}

/// Checks credentials: the tokens file (reloaded when it changes), then JWTs.
pub struct Authenticator {
    store: Option<TokenStore>,
    loaded: Mutex<Loaded>,
    jwt: Option<JwtConfig>,
    oauth: Option<ResourceServer>,
    no_auth: bool,
}

/// What a request presented and what it got.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Known caller.
    Caller(Caller),
    /// No credentials.
    Missing,
    /// Credentials that match nothing (wrong, revoked, expired).
    Refused,
    /// An OAuth access token for this server without the required scope.
    InsufficientScope,
}

impl Authenticator {
    /// Tokens from `tokens` (if given), JWTs per `jwt` (if given); `no_auth` trusts everyone.
    pub fn new(
        tokens: Option<PathBuf>,
        jwt: Option<JwtConfig>,
        no_auth: bool,
    ) -> Result<Self, AuthError> {
        let a = Self {
            store: tokens.map(TokenStore::new),
            loaded: Mutex::new(Loaded {
                entries: Vec::new(),
                modified: None,
            }),
            jwt,
            oauth: None,
            no_auth,
        };
        a.reload()?;
        Ok(a)
    }

    /// Also accepts access tokens of the authorization servers `rs` trusts.
    pub fn with_oauth(mut self, rs: ResourceServer) -> Self {
        self.oauth = Some(rs);
        self
    }

    /// The OAuth resource server, when one is configured.
    pub fn oauth(&self) -> Option<&ResourceServer> {
        self.oauth.as_ref()
    }

    /// True when every caller is trusted.
    pub fn is_open(&self) -> bool {
        self.no_auth
    }

    fn reload(&self) -> Result<(), AuthError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let modified = std::fs::metadata(&store.path)
            .and_then(|m| m.modified())
            .ok();
        let entries = store
            .list()?
            .into_iter()
            .filter_map(|e| {
                let mut h = [0u8; 32];
                hex::decode_to_slice(&e.sha256, &mut h).ok()?;
                Some((h, e))
            })
            .collect();
        if let Ok(mut l) = self.loaded.lock() {
            *l = Loaded { entries, modified };
        }
        Ok(())
    }

    /// Rereads the tokens file if it changed, so added and revoked tokens take
    /// effect without a restart. A damaged file keeps the last good list.
    /// True when a new list was loaded.
    pub fn refresh(&self) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let now = std::fs::metadata(&store.path)
            .and_then(|m| m.modified())
            .ok();
        let seen = self.loaded.lock().map(|l| l.modified).unwrap_or(None);
        if now == seen {
            return false;
        }
        match self.reload() {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "tokens file not reloaded; keeping the previous tokens");
                false
            }
        }
    }

    /// The token whose sha256 is `presented`, as a caller (None: no such
    /// token, or it was revoked). The web page's sessions hold this digest,
    /// so a revoked token ends them too.
    pub fn caller_of_digest(&self, presented: &[u8; 32]) -> Option<Caller> {
        let mut found = None;
        if let Ok(l) = self.loaded.lock() {
            // Compare against every entry, each in constant time, so timing
            // says nothing about which hash (or how much of it) matched.
            for (h, e) in &l.entries {
                if bool::from(h.ct_eq(presented)) {
                    found = Some(Caller {
                        name: e.name.clone(),
                        groups: Some(e.groups.clone()),
                        admin: e.admin,
                    });
                }
            }
        }
        found
    }

    /// The sha256 of a presented token, when it is one of cairn's tokens (not a JWT).
    pub fn token_digest(token: &str) -> Option<[u8; 32]> {
        token
            .trim()
            .starts_with(TOKEN_PREFIX)
            .then(|| digest(token.trim()))
    }

    /// Checks an `Authorization` header value (None: none was sent).
    pub fn check(&self, authorization: Option<&str>) -> Verdict {
        if self.no_auth {
            return Verdict::Caller(Caller::local());
        }
        let Some(value) = authorization else {
            return Verdict::Missing;
        };
        let Some(token) = bearer_token(value) else {
            return Verdict::Refused;
        };
        if token.starts_with(TOKEN_PREFIX) {
            return self
                .caller_of_digest(&digest(token))
                .map_or(Verdict::Refused, Verdict::Caller);
        }
        if let Some(c) = self.jwt.as_ref().and_then(|j| j.check(token)) {
            return Verdict::Caller(c);
        }
        match self.oauth.as_ref().map(|rs| rs.check(token)) {
            Some(TokenCheck::Valid(c)) => Verdict::Caller(c),
            Some(TokenCheck::InsufficientScope) => Verdict::InsufficientScope,
            Some(TokenCheck::Invalid) | None => Verdict::Refused,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_stored_as_hashes_and_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokens.json");
        let store = TokenStore::new(&path);
        let t = store
            .add("bot", &["team-a".to_owned()], false)
            .expect("add");
        assert!(t.starts_with(TOKEN_PREFIX));
        let file = std::fs::read_to_string(&path).expect("read");
        assert!(
            !file.contains(&t[TOKEN_PREFIX.len()..]),
            "only the hash is stored"
        );
        assert!(store.add("bot", &[], false).is_err(), "names are unique");
        assert!(store.add("bad name", &[], false).is_err());
        let auth = Authenticator::new(Some(path.clone()), None, false).expect("auth");
        assert_eq!(
            auth.check(Some(&format!("Bearer {t}"))),
            Verdict::Caller(Caller {
                name: "bot".into(),
                groups: Some(vec!["team-a".into()]),
                admin: false
            })
        );
        assert_eq!(auth.check(None), Verdict::Missing);
        assert_eq!(auth.check(Some("Bearer cairn_00")), Verdict::Refused);
        assert_eq!(auth.check(Some("Basic abc")), Verdict::Refused);
        store.revoke("bot").expect("revoke");
        assert!(store.revoke("bot").is_err());
        // The file changed: make sure its mtime differs even on coarse clocks.
        let later = SystemTime::now() + std::time::Duration::from_secs(2);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(later))
            .expect("touch");
        auth.refresh();
        assert_eq!(
            auth.check(Some(&format!("Bearer {t}"))),
            Verdict::Refused,
            "revoked"
        );
    }

    #[test]
    fn hs256_jwts_carry_groups() {
        use jsonwebtoken::{EncodingKey, Header, encode};
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("secret");
        std::fs::write(&key, "0123456789abcdef0123456789abcdef").expect("write");
        let cfg = JwtConfig::from_file(&JwtKeyFile::Hs256Secret(key), None, None, "admins".into())
            .expect("cfg");
        let auth = Authenticator::new(None, Some(cfg), false).expect("auth");
        let exp = time::OffsetDateTime::now_utc().unix_timestamp() + 600;
        let claims = serde_json::json!({"sub": "ada", "groups": ["team-a", "admins"], "exp": exp});
        let jwt = encode(
            &Header::default(),
            &claims,
            &EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef"),
        )
        .expect("encode");
        assert_eq!(
            auth.check(Some(&format!("Bearer {jwt}"))),
            Verdict::Caller(Caller {
                name: "ada".into(),
                groups: Some(vec!["team-a".into(), "admins".into()]),
                admin: true
            })
        );
        let forged = encode(
            &Header::default(),
            &claims,
            &EncodingKey::from_secret(b"another secret of thirty-two byt"),
        )
        .expect("encode");
        assert_eq!(
            auth.check(Some(&format!("Bearer {forged}"))),
            Verdict::Refused
        );
        let expired = serde_json::json!({"sub": "ada", "groups": [], "exp": exp - 7200});
        let old = encode(
            &Header::default(),
            &expired,
            &EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef"),
        )
        .expect("encode");
        assert_eq!(auth.check(Some(&format!("Bearer {old}"))), Verdict::Refused);
    }

    #[test]
    fn rs256_jwts_are_checked_against_the_public_key() {
        use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
        use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let mut rng = rand_core_06();
        let private = rsa::RsaPrivateKey::new(&mut rng, 2048).expect("key");
        let public_pem = rsa::RsaPublicKey::from(&private)
            .to_public_key_pem(LineEnding::LF)
            .expect("pem");
        let private_pem = private.to_pkcs8_pem(LineEnding::LF).expect("pem");
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("public.pem");
        std::fs::write(&key, public_pem).expect("write");
        let cfg = JwtConfig::from_file(
            &JwtKeyFile::Rs256PublicKey(key),
            Some("https://idp.example.org".into()),
            Some("cairn".into()),
            "cairn-admin".into(),
        )
        .expect("cfg");
        let auth = Authenticator::new(None, Some(cfg), false).expect("auth");
        let exp = time::OffsetDateTime::now_utc().unix_timestamp() + 600;
        let sign = |claims: serde_json::Value| {
            encode(
                &Header::new(Algorithm::RS256),
                &claims,
                &EncodingKey::from_rsa_pem(private_pem.as_bytes()).expect("key"),
            )
            .expect("encode")
        };
        let good = sign(serde_json::json!({
            "sub": "grace", "groups": ["team-b"], "exp": exp,
            "iss": "https://idp.example.org", "aud": "cairn"
        }));
        assert_eq!(
            auth.check(Some(&format!("Bearer {good}"))),
            Verdict::Caller(Caller {
                name: "grace".into(),
                groups: Some(vec!["team-b".into()]),
                admin: false
            })
        );
        let wrong_audience = sign(serde_json::json!({
            "sub": "grace", "groups": [], "exp": exp,
            "iss": "https://idp.example.org", "aud": "someone-else"
        }));
        assert_eq!(
            auth.check(Some(&format!("Bearer {wrong_audience}"))),
            Verdict::Refused
        );
    }

    /// Configured `iss` and `aud` are required (leaving them out is no way
    /// around them), `nbf` is honoured, and a token without `sub` is a caller
    /// (and rate-limit bucket) of its own.
    #[test]
    fn configured_claims_are_required_and_nbf_is_honoured() {
        use jsonwebtoken::{EncodingKey, Header, encode};
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("secret");
        let secret = b"0123456789abcdef0123456789abcdef";
        std::fs::write(&key, secret).expect("write");
        let cfg = JwtConfig::from_file(
            &JwtKeyFile::Hs256Secret(key),
            Some("https://idp.example.org".into()),
            Some("cairn".into()),
            "admins".into(),
        )
        .expect("cfg");
        let auth = Authenticator::new(None, Some(cfg), false).expect("auth");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let sign = |claims: serde_json::Value| {
            let jwt = encode(
                &Header::default(),
                &claims,
                &EncodingKey::from_secret(secret),
            )
            .expect("encode");
            auth.check(Some(&format!("Bearer {jwt}")))
        };
        let (iss, aud) = ("https://idp.example.org", "cairn");
        let full = serde_json::json!({"sub": "ada", "exp": now + 600, "iss": iss, "aud": aud});
        assert!(matches!(sign(full), Verdict::Caller(_)));
        let bare = serde_json::json!({"sub": "ada", "groups": ["team-a"], "exp": now + 600});
        assert_eq!(sign(bare), Verdict::Refused, "no iss, no aud");
        let no_aud = serde_json::json!({"sub": "ada", "exp": now + 600, "iss": iss});
        assert_eq!(sign(no_aud), Verdict::Refused);
        let no_iss = serde_json::json!({"sub": "ada", "exp": now + 600, "aud": aud});
        assert_eq!(sign(no_iss), Verdict::Refused);
        let early = serde_json::json!({
            "sub": "ada", "exp": now + 90 * 86400, "nbf": now + 30 * 86400, "iss": iss, "aud": aud
        });
        assert_eq!(sign(early), Verdict::Refused, "not valid before nbf");
        let names: Vec<String> = [1, 2]
            .iter()
            .map(|n| {
                let c = serde_json::json!({"exp": now + 600 + n, "iss": iss, "aud": aud});
                match sign(c) {
                    Verdict::Caller(c) => c.name,
                    other => panic!("{other:?}"),
                }
            })
            .collect();
        assert_ne!(names[0], names[1], "each sub-less token is its own caller");
        assert!(names.iter().all(|n| n.starts_with("jwt-") && n.len() == 20));
        let limiter = crate::ratelimit::RateLimiter::new(1);
        let t = std::time::Instant::now();
        assert!(limiter.take(&names[0], t).is_ok());
        assert!(limiter.take(&names[1], t).is_ok(), "buckets are separate");
    }

    /// rsa 0.9 takes a rand_core 0.6 generator.
    fn rand_core_06() -> rsa::rand_core::OsRng {
        rsa::rand_core::OsRng
    }
}
