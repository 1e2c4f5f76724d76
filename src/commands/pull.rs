//! `cairn pull`: fetches the newest published pack and drops it into an index
//! root, checked, for a running `cairn serve` to adopt (or `cairn unpack`).
//! The download is the only network this command does; checking and
//! dropping are the library's (`index::pack::drop_pack`).

use crate::cli::PullArgs;
use anyhow::{Context, bail};
use cairn_index::layout::IndexRoot;
use cairn_index::{IndexVersion, pack};
use std::process::ExitCode;

/// Where the nightly job publishes `latest.json` (a release it overwrites each night).
pub const DEFAULT_LATEST: &str =
    "https://github.com/cairn-search/cairn/releases/download/index-latest/latest.json";

/// Downloads the pack to a scratch file, has the GitHub CLI verify its
/// build provenance attestation from `repo`, and only then drops it: a
/// server adopts a dropped pack at once, so the check must come first.
fn attested_drop(
    root: &IndexRoot,
    version: &IndexVersion,
    reader: impl std::io::Read,
    sha256: &str,
    repo: &str,
    pack_url: &str,
    max_bytes: u64,
) -> anyhow::Result<std::path::PathBuf> {
    let gh_found = std::process::Command::new("gh")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !gh_found {
        bail!(
            "--attest-repo needs the GitHub CLI (`gh`) to verify the attestation, and it is not installed; nothing was dropped"
        );
    }
    let scratch = tempfile::NamedTempFile::new().context("a scratch file for the pack")?;
    let copied = std::io::copy(
        &mut std::io::Read::take(reader, max_bytes.saturating_add(1)),
        &mut scratch.as_file(),
    )
    .with_context(|| format!("downloading {pack_url}"))?;
    if copied > max_bytes {
        bail!(
            "{pack_url} is larger than the {max_bytes}-byte limit (--max-bytes); nothing was dropped"
        );
    }
    let verified = std::process::Command::new("gh")
        .args(["attestation", "verify"])
        .arg(scratch.path())
        .args(["--repo", repo])
        .output()
        .context("running gh attestation verify")?;
    if !verified.status.success() {
        bail!(
            "{pack_url}: its attestation does not verify for {repo}; nothing was dropped:\n{}",
            String::from_utf8_lossy(&verified.stderr).trim()
        );
    }
    let file = std::fs::File::open(scratch.path()).context("reopening the downloaded pack")?;
    pack::drop_pack(root, version, file, sha256, max_bytes)
        .with_context(|| format!("{pack_url} was not dropped"))
}

/// Runs the pull, once or (`--every`) until stopped.
pub fn run(a: PullArgs) -> anyhow::Result<ExitCode> {
    use std::time::Duration;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        // A server that stops answering is given up on: headers within a
        // minute (or the whole timeout, if shorter), everything within it.
        .timeout_recv_response(Some(Duration::from_secs(a.timeout.clamp(1, 60))))
        .timeout_global(Some(Duration::from_secs(a.timeout.max(1))))
        // Nor may an https server redirect to plain http.
        .https_only(!a.allow_http)
        .build()
        .into();
    let source = match a.source.as_str() {
        "latest" => a.from.clone().unwrap_or_else(|| DEFAULT_LATEST.to_owned()),
        s => s.to_owned(),
    };
    if !a.allow_http && !source.to_ascii_lowercase().starts_with("https://") {
        bail!(
            "{source}: only https:// sources are pulled (the pack and its checksum come from the same server); pass --allow-http to take plain http anyway"
        );
    }
    let index = crate::cli::index_out(a.index.as_deref());
    let Some(every) = a.every else {
        pull_once(&agent, &a, &index, &source, None)?;
        return Ok(ExitCode::SUCCESS);
    };
    // The version last dropped: a source that keeps naming it (or names one
    // the server refused) is not downloaded again every interval.
    let mut last = None;
    loop {
        match pull_once(&agent, &a, &index, &source, last.as_ref()) {
            Ok(v) => last = Some(v),
            Err(e) => eprintln!("cairn pull: {e:#} (trying again in {every} s)"),
        }
        std::thread::sleep(Duration::from_secs(every.max(1)));
    }
}

/// What `source` (a latest.json URL or a pack URL) names: the version, the
/// pack's URL and its sha256.
fn what_to_pull(agent: &ureq::Agent, source: &str) -> anyhow::Result<(String, String, String)> {
    if source.ends_with(".json") {
        let latest: pack::Latest = serde_json::from_str(
            &agent
                .get(source)
                .call()
                .and_then(|mut r| r.body_mut().with_config().limit(1 << 20).read_to_string())
                .with_context(|| format!("downloading {source}"))?,
        )
        .with_context(|| {
            format!("{source}: not a latest.json ({{index_version, pack, sha256}})")
        })?;
        let base = source.rsplit_once('/').map_or("", |(b, _)| b);
        Ok((
            latest.index_version,
            format!("{base}/{}", latest.pack),
            latest.sha256,
        ))
    } else if let Some(name) = source
        .rsplit('/')
        .next()
        .filter(|n| n.ends_with(pack::PACK_SUFFIX))
    {
        let version = name
            .strip_prefix(pack::PACK_PREFIX)
            .and_then(|n| n.strip_suffix(pack::PACK_SUFFIX))
            .with_context(|| format!("{source}: not a cairn pack name"))?
            .to_owned();
        let sums = agent
            .get(&format!("{source}.sha256"))
            .call()
            .and_then(|mut r| r.body_mut().with_config().limit(1 << 20).read_to_string())
            .with_context(|| {
                format!("downloading {source}.sha256 (a pack is only taken with its checksum)")
            })?;
        let sha = sums.split_whitespace().next().unwrap_or("").to_owned();
        Ok((version, source.to_owned(), sha))
    } else {
        bail!(
            "{source}: give `latest`, a latest.json URL or a pack URL (…/cairn-index-<version>.tar.zst)"
        );
    }
}

/// Drops the version `source` names unless the root already holds it (or it
/// is `skip`, the one dropped last time); returns that version.
fn pull_once(
    agent: &ureq::Agent,
    a: &PullArgs,
    index: &std::path::Path,
    source: &str,
    skip: Option<&IndexVersion>,
) -> anyhow::Result<IndexVersion> {
    let (version, pack_url, sha256) = what_to_pull(agent, source)?;
    let version = IndexVersion::parse(&version)
        .map_err(|e| anyhow::anyhow!("index version {version:?}: {e}"))?;
    let root = IndexRoot::new(index);
    if source.ends_with(".json") {
        copy_freshness(agent, source, index);
    }
    if skip == Some(&version) {
        return Ok(version);
    }
    if root.version_dir(&version).path().is_dir() {
        println!(
            "{} already holds index {version}: nothing to pull",
            index.display()
        );
        return Ok(version);
    }
    let response = agent
        .get(&pack_url)
        .call()
        .with_context(|| format!("downloading {pack_url}"))?;
    let reader = response
        .into_body()
        .into_with_config()
        .limit(u64::MAX)
        .reader();
    let (dropped, checked) = match &a.attest_repo {
        None => (
            pack::drop_pack(&root, &version, reader, &sha256, a.max_bytes)
                .with_context(|| format!("{pack_url} was not dropped"))?,
            "sha256 checked; attestation not checked (--attest-repo OWNER/REPO checks it)",
        ),
        Some(repo) => (
            attested_drop(
                &root,
                &version,
                reader,
                &sha256,
                repo,
                &pack_url,
                a.max_bytes,
            )?,
            "sha256 and attestation checked",
        ),
    };
    println!(
        "dropped {} ({checked}): a running `cairn serve --index {}` adopts it; or run `cairn unpack {} --index {}`",
        dropped.display(),
        index.display(),
        dropped.display(),
        index.display()
    );
    Ok(version)
}

/// The `freshness.json` a watch's `--pack-to` writes beside `latest`, copied
/// into the index root, so a replica says how far it is behind as the
/// watching machine does. A folder without one (the nightly's) is fine.
fn copy_freshness(agent: &ureq::Agent, latest: &str, index: &std::path::Path) {
    use cairn_index::freshness::{self, FRESHNESS_FILE, Freshness};
    let Some((base, _)) = latest.rsplit_once('/') else {
        return;
    };
    let read = agent
        .get(&format!("{base}/{FRESHNESS_FILE}"))
        .call()
        .and_then(|mut r| r.body_mut().with_config().limit(1 << 20).read_to_string());
    if let Some(f) = read
        .ok()
        .and_then(|body| serde_json::from_str::<Freshness>(&body).ok())
        && let Err(e) = freshness::write(index, &f)
    {
        eprintln!("cairn pull: {}: {e}", index.join(FRESHNESS_FILE).display());
    }
}
