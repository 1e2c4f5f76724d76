//! repositories.yml, weights.yaml and build settings: parsed and validated at
//! the edge, so the rest of the builder trusts them. `repo.rs` reads
//! repositories.yml, `entry.rs` holds one entry's raw and validated forms,
//! `validate.rs` checks a repository's entry and `articles.rs` the
//! `articles:` list, `url.rs` checks remotes, `weights.rs` reads
//! weights.yaml, `settings.rs` build.yaml; `error.rs` locates every error.
//!
//! Every error names `file:line:column`. Unknown keys are errors, not silent
//! defaults. This file only names what the rest of the crate uses.

mod articles;
mod entry;
mod error;
mod repo;
mod settings;
mod url;
mod validate;
mod weights;

pub use cairn_index::PathWeights;
pub use entry::{ArticleSource, ArticleSpec, RepoConfig};
pub use error::ConfigError;
pub use repo::Registry;
pub use settings::{BuildSettings, ReadLimits, SubchunkVectors};
pub use url::{github_web_url, redacted};
pub(crate) use url::{is_loopback, same_origin, url_origin};
pub use weights::{default_weights, load_weights};

#[cfg(test)]
mod tests {
    use super::url::{has_credentials, without_credentials};
    use super::*;

    #[test]
    fn shipped_weights_parse() {
        let w = default_weights();
        assert!(w.extensions.contains_key(".py") && w.path_includes.contains_key("tests"));
        let stale = w.for_path("examples/tutorial_old.ipynb");
        let current = w.for_path("examples/tutorial.ipynb");
        assert!(
            stale < current,
            "a stale copy ranks below the current file: {stale} vs {current}"
        );
    }

    #[test]
    fn pdf_time_bounds_are_checked_and_default_ones_leave_the_version_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("build.yaml");
        for bad in [
            "pdf_repo_seconds: 0\n",
            "pdf_repo_seconds: -5\n",
            "pdf_repo_seconds: .nan\n",
            "pdf_seconds: 100000\n",
        ] {
            std::fs::write(&path, bad).expect("write");
            let e = BuildSettings::load(&path).expect_err(bad).to_string();
            let key = bad.split(':').next().unwrap_or_default();
            assert!(e.contains(key), "{bad}: {e}");
        }
        std::fs::write(&path, "pdf_repo_seconds: 30\n").expect("write");
        let s = BuildSettings::load(&path).expect("load");
        assert_eq!(
            s.read_limits(None).pdf.repo_budget,
            std::time::Duration::from_secs(30)
        );
        // The default is left out of what the version hashes.
        let json = serde_json::to_string(&BuildSettings::default()).expect("json");
        assert!(!json.contains("pdf_repo_seconds"), "{json}");
    }

    #[test]
    fn credentials_never_reach_the_recorded_url() {
        assert_eq!(
            without_credentials("https://bot:s3cret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            without_credentials("https://ghp_token@github.com/o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(
            without_credentials("ssh://git@example.org:22/o/r"),
            "ssh://example.org:22/o/r"
        );
        // No authority credentials to remove: unchanged.
        for u in [
            "https://github.com/o/r",
            "git@github.com:o/r.git",
            "../repos/alpha",
            "https://example.org/a@b",
        ] {
            assert_eq!(without_credentials(u), u);
        }
    }

    #[test]
    fn no_form_of_url_shows_its_secret() {
        for (url, shown) in [
            (
                "HTTPS://user:TOPSECRET@github.com/o/r.git",
                "HTTPS://***@github.com/o/r.git",
            ),
            (
                "https://user:TOPSECRET@github.com",
                "https://***@github.com",
            ),
            (
                "user:TOPSECRET@github.com:o/r.git",
                "***@github.com:o/r.git",
            ),
            ("https://TOPSECRET@host/a b", "https://***@host/a b"),
            ("https://user:pa/ss@host/r.git", "https://***@host/r.git"),
            ("https://user:p#ss@host", "https://***@host"),
            ("https://host:8080/a@b", "https://host:8080/a@b"),
            ("https://github.com/o/r", "https://github.com/o/r"),
        ] {
            assert_eq!(redacted(url), shown);
        }
        for secret in [
            "HTTPS://user:TOPSECRET@github.com/o/r.git",
            "https://user:TOPSECRET@github.com",
            "user:TOPSECRET@github.com:o/r.git",
            "https://TOPSECRET@gitlab.example.org",
            "ssh://git:TOPSECRET@example.org/r.git",
            "ftp://user:TOPSECRET@example.org/r",
            "https://user:TOP/SECRET@example.org/r.git",
        ] {
            assert!(has_credentials(secret), "{secret}");
        }
        for plain in [
            "git@github.com:o/r.git",
            "ssh://git@example.org/r.git",
            "https://github.com/o/r",
            "https://example.org/a@b",
            "https://example.org:8443/a@b",
            "../repos/alpha",
        ] {
            assert!(!has_credentials(plain), "{plain}");
        }
        let loopback = |u: &str| url_origin(u).is_some_and(|(_, h, _)| is_loopback(&h));
        assert!(loopback("http://127.0.0.1:9000/a.git"));
        assert!(loopback("http://localhost/a.git"));
        assert!(loopback("http://[::1]:80/a.git"));
        assert!(!loopback("http://git.example.org/a.git"));
    }

    #[test]
    fn github_urls_give_web_urls() {
        assert_eq!(
            github_web_url("https://github.com/dfm/emcee.git").as_deref(),
            Some("https://github.com/dfm/emcee")
        );
        assert_eq!(
            github_web_url("git@github.com:dfm/corner.py.git").as_deref(),
            Some("https://github.com/dfm/corner.py")
        );
        assert_eq!(github_web_url("https://gitlab.com/a/b"), None);
    }
}
