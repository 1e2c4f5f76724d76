//! `cairn setup CLIENT` and `cairn setup --list`: the target (this
//! executable serving the index found, or a server's URL), then the plan,
//! printed, and written unless `--dry-run`.

use crate::cli::SetupArgs;
use crate::commands::SKILL;
use crate::setup::clients::{TOKEN_VAR, Target, by_name};
use crate::setup::{State, apply, clients, plan, status};
use anyhow::{Context, bail};
use std::process::ExitCode;

/// Sets up one client, or lists them all.
pub fn run(a: SetupArgs) -> anyhow::Result<ExitCode> {
    if a.list {
        return list(&a);
    }
    let name = a.client.as_deref().unwrap_or_default();
    let Some(client) = by_name(name) else {
        let names: Vec<&str> = clients().iter().map(|c| c.name).collect();
        bail!(
            "{name:?} is not a client cairn sets up: {}",
            names.join(", ")
        );
    };
    let target = target(&a)?;
    let plan = plan(client, &target, SKILL)?;
    for change in std::iter::once(&plan.config).chain(&plan.skill) {
        let verb = match (change.state, a.dry_run) {
            (State::Same, _) => "already set up",
            (_, true) => "would write",
            (_, false) => "writes",
        };
        println!("{}: {verb} {}", client.title, change.path.display());
        // Only cairn's entry: the rest of the file may hold other servers' keys.
        if a.dry_run && change.state != State::Same && change.path == plan.config.path {
            println!(
                "{}",
                serde_json::to_string_pretty(&plan.entry).unwrap_or_default()
            );
        }
    }
    if plan.skill.is_none() {
        println!(
            "{}: no skill folder to install into (`cairn skill` prints it, to add in the app)",
            client.title
        );
    }
    if !a.dry_run {
        let written = apply(&plan)?;
        for path in &written {
            if plan.config.before.is_some() && *path == plan.config.path {
                println!(
                    "  the previous file is kept as {}.cairn-backup",
                    path.display()
                );
            }
        }
        if written.is_empty() {
            println!("nothing changed");
        }
    }
    if matches!(target, Target::Remote { .. }) {
        println!(
            "the client sends the token in {TOKEN_VAR}: set it in its environment (`cairn token add NAME` makes one)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What a client is pointed at: `--url`, or this executable's `mcp` on the index found.
fn target(a: &SetupArgs) -> anyhow::Result<Target> {
    if let Some(url) = &a.url {
        let parsed = url::Url::parse(url).with_context(|| format!("--url {url:?}"))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            bail!("--url {url:?}: an http(s) URL of the server's /mcp");
        }
        return Ok(Target::Remote {
            url: parsed.to_string(),
        });
    }
    let index = crate::cli::index_root(a.index.as_deref())?;
    let index = std::fs::canonicalize(&index)
        .with_context(|| format!("--index {}: no such index", index.display()))?;
    let exe = std::env::current_exe().context("finding this executable")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    Ok(Target::Stdio {
        command: exe.to_string_lossy().into_owned(),
        args: vec![
            "mcp".to_owned(),
            "--index".to_owned(),
            index.to_string_lossy().into_owned(),
        ],
    })
}

/// Each client's file and skill, and where cairn stands in them.
fn list(a: &SetupArgs) -> anyhow::Result<ExitCode> {
    // Compared with what setup would write where an index is found; else present or not.
    let target = target(a).ok();
    for client in clients() {
        let (config, skill) = status(client, target.as_ref(), SKILL)?;
        println!(
            "{:15} {} ({})",
            client.name,
            config.path.display(),
            config.state.said()
        );
        match skill {
            Some(s) => println!("{:15} skill {} ({})", "", s.path.display(), s.state.said()),
            None => println!("{:15} skill: none (added in the app)", ""),
        }
    }
    Ok(ExitCode::SUCCESS)
}
