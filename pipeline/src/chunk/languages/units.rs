//! The units of code a chunk may start at: Python definitions, brace
//! blocks (C, C++, CUDA, Rust, JavaScript …) and Fortran program units.

use crate::chunk::caps::MAX_NAME_CHARS;

/// `def name` / `class name` of a trimmed line.
pub(in crate::chunk) fn def_name(t: &str) -> Option<String> {
    let rest = t
        .strip_prefix("async def ")
        .or_else(|| t.strip_prefix("def "))
        .map(|r| ("def", r))
        .or_else(|| t.strip_prefix("class ").map(|r| ("class", r)))?;
    let name: String = rest
        .1
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .take(MAX_NAME_CHARS)
        .collect();
    (!name.is_empty()).then(|| format!("{} {name}", rest.0))
}

pub(in crate::chunk) fn python_defs(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(name) = def_name(l) else { continue };
        // Decorators and comments directly above belong to the definition.
        let mut start = i;
        while start > 0 {
            let p = lines[start - 1];
            if p.starts_with('@') || p.starts_with('#') {
                start -= 1;
            } else {
                break;
            }
        }
        out.push((start as u32 + 1, name));
    }
    out
}

pub(in crate::chunk) fn brace_blocks(lines: &[&str]) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    for (i, l) in lines.iter().enumerate() {
        let starts_block = depth == 0
            && l.chars()
                .next()
                .is_some_and(|c| !c.is_whitespace() && c != '}' && c != '{' && c != ')')
            && (i == 0 || lines[i - 1].trim().is_empty() || lines[i - 1].starts_with('}'));
        if starts_block {
            let title = lines[i..]
                .iter()
                .take(6)
                .map(|x| x.trim())
                .find(|x| {
                    !x.starts_with("//")
                        && !x.starts_with("/*")
                        && !x.starts_with('*')
                        && !x.is_empty()
                })
                .unwrap_or("")
                .chars()
                .take(100)
                .collect();
            out.push((i as u32 + 1, title));
        }
        depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
        depth = depth.max(0);
    }
    out
}

pub(in crate::chunk) fn fortran_units(lines: &[&str]) -> Vec<(u32, String)> {
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim().to_ascii_lowercase();
            let unit = !t.starts_with("end")
                && (t.starts_with("subroutine ")
                    || t.starts_with("module ")
                    || t.starts_with("program ")
                    || t.contains("function ") && !t.starts_with('!'));
            unit.then(|| (i as u32 + 1, l.trim().chars().take(80).collect()))
        })
        .collect()
}
