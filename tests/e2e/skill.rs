//! The agent skill and the Custom GPT's instructions say only what works:
//! `cairn skill` prints skills/cairn/SKILL.md (Agent Skills front matter
//! included), every command the skill shows runs against the fixture index
//! as a shell would run it, and every operation the GPT instructions name
//! is in the OpenAPI document.

use crate::fixtures::{World, cairn, stdout};
use std::path::Path;

const SKILL_FILE: &str = include_str!("../../skills/cairn/SKILL.md");

/// The lines of the skill's `sh` code blocks that run `cairn`.
fn shown_commands(markdown: &str) -> Vec<&str> {
    let mut in_sh = false;
    let mut commands = Vec::new();
    for line in markdown.lines() {
        match line.trim() {
            "```sh" => in_sh = true,
            "```" => in_sh = false,
            l if in_sh && l.starts_with("cairn ") => commands.push(l),
            _ => {}
        }
    }
    commands
}

#[test]
fn cairn_skill_prints_the_skill_and_every_command_it_shows_runs() {
    let o = cairn(&["skill"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), SKILL_FILE);
    let front = SKILL_FILE
        .strip_prefix("---\n")
        .and_then(|r| r.split_once("\n---\n"))
        .map(|(f, _)| f)
        .expect("front matter");
    let field = |key: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
            .unwrap_or_else(|| panic!("{key} in the front matter"))
    };
    assert_eq!(field("name"), "cairn");
    let description = field("description");
    assert!((20..=1024).contains(&description.len()), "{description}");

    let w = World::new();
    assert!(w.build("out", &[]).status.success());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_cairn"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let commands = shown_commands(SKILL_FILE);
    assert!(commands.len() >= 6, "{commands:?}");
    // What an agent does with the first search's first hit.
    let mut hit: Option<(String, String)> = None;
    for shown in commands {
        let line = match &hit {
            Some((doc, lines)) => shown.replace("DOC_ID", doc).replace("START:END", lines),
            None => shown.to_owned(),
        };
        assert!(!line.contains("DOC_ID"), "a search comes first: {shown}");
        let o = std::process::Command::new("sh")
            .args(["-c", &line])
            .env("PATH", &path)
            .env("CAIRN_INDEX", w.path("out"))
            .env("CAIRN_MODEL_DIR", &w.model)
            .output()
            .expect("sh");
        assert!(
            o.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let answer: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{line}: not JSON: {e}"));
        if hit.is_none()
            && let Some(h) = answer["hits"].get(0)
        {
            hit = Some((
                h["doc_id"].as_str().expect("doc_id").to_owned(),
                format!("{}:{}", h["start_line"], h["end_line"]),
            ));
        }
    }
    assert!(
        hit.is_some(),
        "the skill's search found something to retrieve"
    );
}

#[test]
fn the_gpt_instructions_name_only_operations_the_openapi_document_has() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/gpt-instructions.md"),
    )
    .expect("docs/gpt-instructions.md");
    let o = cairn(&["openapi"]);
    let api: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("openapi json");
    let ids: Vec<&str> = api["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|ops| ops.as_object().into_iter().flat_map(|m| m.values()))
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    // The instructions pasted into the GPT, and in them the words that look
    // like operationIds (lowerCamelCase).
    let block = doc
        .split_once("```text\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(b, _)| b)
        .expect("a text block");
    let named: Vec<&str> = block
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && w.chars().any(|c| c.is_ascii_uppercase())
        })
        .collect();
    assert!(named.len() >= 7, "{named:?}");
    for n in named {
        assert!(ids.contains(&n), "{n} is not an operationId: {ids:?}");
    }
}
