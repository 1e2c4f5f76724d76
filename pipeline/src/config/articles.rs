//! The `articles:` list of repositories.yml: each entry validated into a
//! [`RepoConfig`] (one PDF, one document). An entry names its PDF by one of
//! `arxiv:` (an arXiv id, fetched from `<arxiv url>/pdf/<id>`), `url:` (a
//! PDF's URL), `doi:` alone (fetched from doi.org asking for a PDF), `file:`
//! (a local PDF) or `bibtex:` (a bibliography: each entry with an `eprint`,
//! a PDF `url` or a `doi` becomes an article). `crate::articles` fetches them.

use super::entry::{ArticleParts, ArticleSource, ArticleSpec, RepoConfig, check_segment};
use super::error::{ConfigError, at};
use super::url::{has_credentials, redacted};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::Path;

/// The category articles are listed under unless an entry names one.
pub const DEFAULT_CATEGORY: &str = "papers";

/// One entry of `articles:` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawArticle {
    arxiv: Option<Spanned<String>>,
    doi: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    file: Option<Spanned<String>>,
    bibtex: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    category: Option<Spanned<String>>,
    toolkit: Option<Spanned<String>>,
    title: Option<String>,
    web_url: Option<Spanned<String>>,
    #[serde(default)]
    groups: Vec<Spanned<String>>,
}

/// What one article resolves to before it becomes a `RepoConfig`.
struct Resolved {
    name: String,
    source: ArticleSource,
    /// As written, for the manifest.
    written: String,
    landing: String,
    file_name: String,
    title: Option<String>,
}

/// Validates `raw` (from `path`, whose folder is `base`) into one config per article.
pub(crate) fn configs(
    path: &Path,
    base: &Path,
    raw: Vec<Spanned<RawArticle>>,
    names: &mut std::collections::HashSet<String>,
    category_groups: &std::collections::HashMap<String, Vec<String>>,
) -> Result<Vec<RepoConfig>, ConfigError> {
    let mut out = Vec::new();
    // The next number to try for each clashing name, so numbering a
    // bibliography whose keys all clash costs its length, not its square.
    let mut next_number: std::collections::HashMap<String, usize> = Default::default();
    for entry in raw {
        let r = &entry.value;
        let category = match &r.category {
            Some(c) => {
                check_segment(path, c, "category")?;
                c.value.clone()
            }
            None => DEFAULT_CATEGORY.to_owned(),
        };
        for g in &r.groups {
            check_segment(path, g, "group")?;
        }
        // Like a repository: its own groups, else its category's.
        let groups: Vec<String> = if r.groups.is_empty() {
            category_groups.get(&category).cloned().unwrap_or_default()
        } else {
            r.groups.iter().map(|g| g.value.clone()).collect()
        };
        let resolved = resolve(path, base, &entry)?;
        let several = resolved.len() > 1;
        for a in resolved {
            let name = match (&r.name, several) {
                (Some(n), false) => {
                    check_segment(path, n, "article name")?;
                    n.value.clone()
                }
                // A bibliography's keys may clash once sanitized: number them.
                _ if r.bibtex.is_some() => {
                    let k = next_number.entry(a.name.clone()).or_insert(1);
                    loop {
                        let n = match *k {
                            1 => a.name.clone(),
                            k => format!("{}-{k}", a.name),
                        };
                        *k += 1;
                        if !names.contains(&n) {
                            break n;
                        }
                    }
                }
                _ => a.name,
            };
            if !names.insert(name.clone()) {
                return Err(at(
                    path,
                    &entry,
                    format!("duplicate name {name:?}: give the article a `name` of its own"),
                ));
            }
            let toolkit = match &r.toolkit {
                Some(t) => {
                    check_segment(path, t, "toolkit")?;
                    t.value.clone()
                }
                None => name.to_lowercase(),
            };
            let landing = match &r.web_url {
                Some(w) if !several => checked_url(path, w, "web_url")?,
                _ => a.landing,
            };
            let fetch_url = match &a.source {
                ArticleSource::Url(u) => u.clone(),
                ArticleSource::File(p) => p.display().to_string(),
                ArticleSource::Arxiv(_) => String::new(),
            };
            out.push(RepoConfig::article(
                &category,
                &name,
                ArticleParts {
                    url: a.written,
                    fetch_url,
                    web_url: landing,
                    toolkit,
                    groups: groups.clone(),
                    description: r.title.clone().or(a.title),
                    spec: ArticleSpec {
                        source: a.source,
                        file_name: a.file_name,
                        from_bibliography: r.bibtex.is_some(),
                    },
                },
            ));
        }
    }
    Ok(out)
}

/// The article (or, for `bibtex:`, articles) one entry names.
fn resolve(
    path: &Path,
    base: &Path,
    entry: &Spanned<RawArticle>,
) -> Result<Vec<Resolved>, ConfigError> {
    let r = &entry.value;
    let given: Vec<&Spanned<String>> = [&r.arxiv, &r.url, &r.file, &r.bibtex]
        .into_iter()
        .flatten()
        .collect();
    let doi = match &r.doi {
        Some(d) => Some(checked_doi(path, d)?),
        None => None,
    };
    match (given.as_slice(), &doi) {
        ([], None) => {
            return Err(at(
                path,
                entry,
                "an article needs one of arxiv, url, doi, file or bibtex",
            ));
        }
        ([_, second, ..], _) => {
            return Err(at(
                path,
                second,
                "give one of arxiv, url, file or bibtex per article",
            ));
        }
        _ => {}
    }
    let doi_landing = doi.as_ref().map(|d| doi_url(d));
    if let Some(id) = &r.arxiv {
        let id_value = checked_arxiv(path, id)?;
        return Ok(vec![Resolved {
            name: format!("arxiv-{}", id_value.replace('/', "-")),
            file_name: format!("{}.pdf", id_value.replace('/', "-")),
            landing: doi_landing.unwrap_or_else(|| format!("https://arxiv.org/abs/{id_value}")),
            written: format!("arXiv:{id_value}"),
            source: ArticleSource::Arxiv(id_value),
            title: None,
        }]);
    }
    if let Some(u) = &r.url {
        let url = checked_url(path, u, "url")?;
        // `articles` was an ordinary key before it was reserved: a
        // repository listed under it must not quietly become a PDF.
        if crate::config::github_web_url(&url).is_some() {
            return Err(at(
                path,
                u,
                "`articles:` lists PDFs, and this is a repository: list repositories under another category (`articles` is reserved)",
            ));
        }
        let stem = file_stem(url.rsplit('/').next().unwrap_or(""));
        let name = if stem.is_empty() {
            "article".to_owned()
        } else {
            stem
        };
        return Ok(vec![Resolved {
            file_name: format!("{name}.pdf"),
            name,
            landing: doi_landing.unwrap_or_else(|| url.clone()),
            written: url.clone(),
            source: ArticleSource::Url(url),
            title: None,
        }]);
    }
    if let Some(f) = &r.file {
        let local = base.join(f.value.trim());
        let stem = file_stem(local.file_name().and_then(|n| n.to_str()).unwrap_or(""));
        if stem.is_empty() {
            return Err(at(path, f, "file must name a PDF file"));
        }
        return Ok(vec![Resolved {
            file_name: format!("{stem}.pdf"),
            name: stem,
            landing: doi_landing.unwrap_or_default(),
            written: f.value.trim().to_owned(),
            source: ArticleSource::File(local),
            title: None,
        }]);
    }
    if let Some(b) = &r.bibtex {
        return from_bibtex(path, base, b);
    }
    // A DOI alone: doi.org is asked for the PDF (many publishers answer with it).
    let doi = doi.unwrap_or_default();
    let slug = format!("doi-{}", sanitize(&doi));
    Ok(vec![Resolved {
        file_name: format!("{slug}.pdf"),
        name: slug,
        landing: doi_url(&doi),
        written: format!("doi:{doi}"),
        source: ArticleSource::Url(doi_url(&doi)),
        title: None,
    }])
}

/// The articles of a bibliography: entries with an arXiv eprint, a PDF URL or a DOI.
fn from_bibtex(
    path: &Path,
    base: &Path,
    b: &Spanned<String>,
) -> Result<Vec<Resolved>, ConfigError> {
    let file = base.join(b.value.trim());
    let text = std::fs::read_to_string(&file)
        .map_err(|e| at(path, b, format!("bibtex {}: {e}", file.display())))?;
    let mut out = Vec::new();
    for e in crate::bibtex::entries(&text) {
        let key = sanitize(&e.key);
        let doi = e
            .field("doi")
            .filter(|d| d.starts_with("10.") && !d.contains(' '));
        let landing = doi.as_ref().map(|d| doi_url(d));
        let title = e.field("title");
        let arxiv = e
            .field("eprint")
            .filter(|id| arxiv_id_ok(id.trim_start_matches("arXiv:")));
        let (source, written, landing) = if let Some(id) = arxiv {
            let id = id.trim_start_matches("arXiv:").to_owned();
            let landing = landing.unwrap_or_else(|| format!("https://arxiv.org/abs/{id}"));
            (
                ArticleSource::Arxiv(id.clone()),
                format!("arXiv:{id}"),
                landing,
            )
        } else if let Some(u) = e
            .field("url")
            .filter(|u| plain_http_url(u) && !has_credentials(u) && !signed(u))
            .filter(|u| crate::config::github_web_url(u).is_none())
        {
            let landing = landing.unwrap_or_else(|| u.clone());
            (ArticleSource::Url(u.clone()), u, landing)
        } else if let Some(d) = doi {
            let url = doi_url(&d);
            (ArticleSource::Url(url.clone()), format!("doi:{d}"), url)
        } else {
            // Books and entries with no way to a PDF are not articles here.
            continue;
        };
        if key.is_empty() {
            continue;
        }
        out.push(Resolved {
            file_name: format!("{key}.pdf"),
            name: key,
            source,
            written,
            landing,
            title,
        });
    }
    if out.is_empty() {
        return Err(at(
            path,
            b,
            format!(
                "bibtex {}: no entry has an eprint, a url or a doi",
                file.display()
            ),
        ));
    }
    Ok(out)
}

/// A name made of the characters names may hold.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect::<String>()
        .trim_matches(['.', '-'])
        .to_owned()
}

/// A file name without its `.pdf`, sanitized.
fn file_stem(name: &str) -> String {
    let name = name.split(['?', '#']).next().unwrap_or("");
    let stem = name
        .strip_suffix(".pdf")
        .or_else(|| name.strip_suffix(".PDF"))
        .unwrap_or(name);
    sanitize(stem)
}

fn arxiv_id_ok(id: &str) -> bool {
    // A version suffix is the last `v` (archive names hold a `v` too: solv-int).
    let id = id.rsplit_once('v').map_or(id, |(head, v)| {
        if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
            head
        } else {
            id
        }
    });
    let new_style = id.split_once('.').is_some_and(|(a, b)| {
        a.len() == 4
            && a.bytes().all(|x| x.is_ascii_digit())
            && (4..=5).contains(&b.len())
            && b.bytes().all(|x| x.is_ascii_digit())
    });
    let old_style = id.split_once('/').is_some_and(|(a, b)| {
        a.bytes().next().is_some_and(|x| x.is_ascii_alphabetic())
            && a.bytes()
                .all(|x| x.is_ascii_lowercase() || x == b'-' || x == b'.' || x.is_ascii_uppercase())
            && b.len() == 7
            && b.bytes().all(|x| x.is_ascii_digit())
    });
    new_style || old_style
}

/// Whether a URL's query carries a secret (a signed or tokened link).
fn signed(url: &str) -> bool {
    let Some((_, query)) = url.split_once('?') else {
        return false;
    };
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
        [
            "signature",
            "token",
            "key",
            "sig",
            "credential",
            "password",
            "secret",
        ]
        .iter()
        .any(|s| name.contains(s))
    })
}

/// `https://doi.org/<doi>`, with the characters a URL cannot carry as they are percent-encoded.
fn doi_url(doi: &str) -> String {
    let mut out = String::from("https://doi.org/");
    for b in doi.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:;()+,=@!$*'[]".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn checked_arxiv(path: &Path, id: &Spanned<String>) -> Result<String, ConfigError> {
    let v = id.value.trim();
    let v = v
        .strip_prefix("arXiv:")
        .or_else(|| v.strip_prefix("arxiv:"))
        .unwrap_or(v);
    if arxiv_id_ok(v) {
        Ok(v.to_owned())
    } else {
        Err(at(
            path,
            id,
            format!("arxiv {v:?} is not an arXiv id (like 1202.3665 or astro-ph/0501001)"),
        ))
    }
}

fn checked_doi(path: &Path, d: &Spanned<String>) -> Result<String, ConfigError> {
    let v = d.value.trim();
    let v = v
        .strip_prefix("https://doi.org/")
        .or_else(|| v.strip_prefix("doi:"))
        .unwrap_or(v);
    if v.starts_with("10.") && v.contains('/') && !v.contains(char::is_whitespace) {
        Ok(v.to_owned())
    } else {
        Err(at(
            path,
            d,
            format!("doi {v:?} is not a DOI (like 10.21105/joss.00024)"),
        ))
    }
}

/// An http(s) URL written only in the characters a URL carries as they are
/// (RFC 3986's, and `%` escapes): a citation link never carries spaces,
/// quotes, angle brackets or braces into a page or a client.
fn plain_http_url(v: &str) -> bool {
    let url_char = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c);
    (v.starts_with("https://") || v.starts_with("http://")) && v.chars().all(url_char)
}

fn checked_url(path: &Path, u: &Spanned<String>, what: &str) -> Result<String, ConfigError> {
    let v = u.value.trim();
    if has_credentials(v) {
        return Err(at(
            path,
            u,
            format!("{what} holds a user name or password: remove it"),
        ));
    }
    if !plain_http_url(v) {
        return Err(at(
            path,
            u,
            format!(
                "{what} {:?} must be an http(s) URL (other characters percent-encoded)",
                redacted(v)
            ),
        ));
    }
    if signed(v) {
        return Err(at(
            path,
            u,
            format!(
                "{what} is a signed URL (its query holds a signature or token): citations would publish it, and it expires; give a stable URL"
            ),
        ));
    }
    Ok(v.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arxiv_ids() {
        for ok in ["1202.3665", "1202.3665v3", "2301.00001", "astro-ph/0501001"] {
            assert!(arxiv_id_ok(ok), "{ok}");
        }
        assert!(arxiv_id_ok("solv-int/9901001v2"));
        for bad in [
            "",
            "1202",
            "12023665",
            "../../etc",
            "../1234567",
            "1202.3665/../x",
            "a b/1234567",
        ] {
            assert!(!arxiv_id_ok(bad), "{bad}");
        }
        assert_eq!(sanitize("a/b c?d"), "a-b-c-d");
        assert_eq!(
            doi_url("10.1002/(SICI)1<2>#3"),
            "https://doi.org/10.1002/(SICI)1%3C2%3E%233"
        );
        assert!(signed("https://x.org/a.pdf?X-Amz-Signature=1&b=2"));
        assert!(!signed("https://x.org/a.pdf?download=1"));
        assert!(plain_http_url("https://x.org/a%20b.pdf?v=1#page=2"));
        for bad in [
            "https://x.org/a b.pdf",
            "https://x.org/\"><b>",
            "ftp://x.org/a.pdf",
            "https://x.org/{a}",
        ] {
            assert!(!plain_http_url(bad), "{bad}");
        }
    }

    /// An article takes its category's groups like a repository; a
    /// bibliography's clashing keys are numbered; every name stays unique.
    #[test]
    fn articles_take_their_category_groups_and_unique_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("refs.bib"),
            "@article{a:b, eprint = {1202.3665}}\n@article{a/b, doi = {10.1/x}}\n@book{c, title = {No link}}\n",
        )
        .expect("bib");
        let yml = dir.path().join("repositories.yml");
        let text = "internal:\n  groups: [staff]\n  repos:\n    - name: r\n      url: https://github.com/o/r\narticles:\n  - arxiv: \"1202.3665\"\n    category: internal\n  - bibtex: refs.bib\n";
        let reg = crate::config::Registry::parse(&yml, text).expect("config");
        let names: Vec<(&str, &str, &[String])> = reg
            .repos
            .iter()
            .map(|r| (r.name.as_str(), r.category.as_str(), r.groups.as_slice()))
            .collect();
        let staff = ["staff".to_owned()];
        assert_eq!(
            names,
            [
                ("r", "internal", &staff[..]),
                ("arxiv-1202.3665", "internal", &staff[..]),
                ("a-b", "papers", &[][..]),
                ("a-b-2", "papers", &[][..]),
            ]
        );
        assert!(
            reg.repos[3]
                .article
                .as_ref()
                .is_some_and(|a| a.from_bibliography)
        );
        assert_eq!(file_stem("joss.00024.pdf?download=1"), "joss.00024");
    }
}
