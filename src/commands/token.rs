//! `cairn token`: add, list and revoke bearer tokens.

use crate::cli::{TokenAction, TokenArgs};
use crate::commands::print_json;
use cairn_serve::auth::TokenStore;
use std::process::ExitCode;

/// Changes or lists the tokens file.
pub fn run(a: TokenArgs) -> anyhow::Result<ExitCode> {
    let store = TokenStore::new(&a.tokens);
    match a.action {
        TokenAction::Add {
            name,
            groups,
            admin,
        } => {
            let token = store.add(&name, &groups, admin)?;
            eprintln!(
                "token {name:?} added to {}; it is shown once, store it now:",
                a.tokens.display()
            );
            println!("{token}");
        }
        TokenAction::List { json: true } => {
            let rows: Vec<serde_json::Value> = store
                .list()?
                .iter()
                .map(|t| serde_json::json!({"name": t.name, "groups": t.groups, "admin": t.admin, "created_at": t.created_at}))
                .collect();
            print_json(&rows)?;
        }
        TokenAction::List { json: false } => {
            for t in &store.list()? {
                println!(
                    "{}  groups [{}]{}  created {}",
                    t.name,
                    t.groups.join(","),
                    if t.admin { "  admin" } else { "" },
                    t.created_at
                );
            }
        }
        TokenAction::Revoke { name } => {
            store.revoke(&name)?;
            eprintln!("token {name:?} revoked");
        }
    }
    Ok(ExitCode::SUCCESS)
}
