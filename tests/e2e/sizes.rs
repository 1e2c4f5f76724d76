//! Everything reads in one sitting (ARCHITECTURE.md's rule): a source file
//! is at most 500 lines before its tests, a function at most 100 lines
//! (split by step), a test file at most 600 lines (split by concern).

use std::path::{Path, PathBuf};

/// The folders holding the crates' code (sources and examples).
const CODE: [&str; 11] = [
    "src",
    "index/src",
    "index/examples",
    "embed/src",
    "embed/examples",
    "pipeline/src",
    "pipeline/examples",
    "search/src",
    "search/examples",
    "serve/src",
    "serve/examples",
];

/// The folders holding the integration tests.
const TESTS: [&str; 6] = [
    "tests",
    "index/tests",
    "embed/tests",
    "pipeline/tests",
    "search/tests",
    "serve/tests",
];

/// Every `.rs` file under the workspace-relative folders `dirs`.
fn rust_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    dirs.iter()
        .flat_map(|d| crate::walls::rust_files(&root.join(d)))
        .collect()
}

/// A file's lines before its `#[cfg(test)]` tests.
fn before_tests(text: &str) -> Vec<&str> {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .collect()
}

/// `text` with comments, strings and character literals blanked to spaces
/// (line breaks kept), so the braces left are the code's own.
fn code_braces(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else if c == 'r'
            && matches!(next, Some('"') | Some('#'))
            && !ident(chars.get(i.wrapping_sub(1)))
        {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            i += 2 + hashes;
            out.push_str(&" ".repeat(2 + hashes));
            while i < chars.len() && !chars[i..].starts_with(&close) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push_str(&" ".repeat(close.len()));
            i += close.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let skip = if chars[i] == '\\' { 2 } else { 1 };
                for k in 0..skip {
                    if let Some(&x) = chars.get(i + k) {
                        out.push(blank(x));
                    }
                }
                i += skip;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && char_literal(&chars[i..]).is_some() {
            let len = char_literal(&chars[i..]).unwrap_or(1);
            out.push_str(&" ".repeat(len));
            i += len;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `c` continues an identifier (so `r"` after it is not a raw string).
fn ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The length of the character literal at the start of `s` (`'x'`, `'\n'`,
/// `'\u{7b}'`), or `None` for a lifetime or label.
fn char_literal(s: &[char]) -> Option<usize> {
    if s.get(1) == Some(&'\\') {
        let close = s.iter().skip(2).position(|&c| c == '\'')?;
        return Some(close + 3);
    }
    (s.get(2) == Some(&'\'')).then_some(3)
}

/// Each function in `text` (before its tests) longer than `max` lines, as
/// `name (N lines)`, counted from its `fn` line to its closing brace.
fn long_functions(text: &str, max: usize) -> Vec<String> {
    let code = code_braces(&before_tests(text).join("\n"));
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = fn_name(lines[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut opened, mut j) = (0i64, false, i);
        'scan: while j < lines.len() {
            for c in lines[j].chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened && depth == 0 => break 'scan,
                    _ => {}
                }
                if opened && depth == 0 {
                    break 'scan;
                }
            }
            j += 1;
        }
        if opened && j - i + 1 > max {
            long.push(format!("{name} ({} lines)", j - i + 1));
        }
        // Nested functions are counted inside their parent only.
        i = if opened { j + 1 } else { i + 1 };
    }
    long
}

/// The name of the function a line declares, if it declares one.
fn fn_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        let w = w
            .trim_start_matches("pub(crate)")
            .trim_start_matches("pub(super)");
        match w {
            "" | "pub" | "async" | "unsafe" | "const" | "extern" => continue,
            "fn" => {
                let name = words.next()?;
                let end = name.find(['<', '(']).unwrap_or(name.len());
                return Some(&name[..end]);
            }
            _ => return None,
        }
    }
    None
}

#[test]
fn no_source_file_is_over_500_lines_before_its_tests() {
    const MAX_LINES: usize = 500;
    let files = rust_files(&CODE);
    assert!(files.len() > 100, "only {} source files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).expect("source file");
            let lines = before_tests(&text).len();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines before their tests: {long:?}"
    );
}

#[test]
fn no_function_is_over_100_lines() {
    let mut long = Vec::new();
    for path in rust_files(&CODE) {
        let text = std::fs::read_to_string(&path).expect("source file");
        for f in long_functions(&text, 100) {
            long.push(format!("{}: {f}", path.display()));
        }
    }
    assert!(long.is_empty(), "functions over 100 lines: {long:#?}");
}

#[test]
fn no_test_file_is_over_600_lines() {
    let files = rust_files(&TESTS);
    assert!(files.len() > 40, "only {} test files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path)
                .expect("test file")
                .lines()
                .count();
            (lines > 600).then(|| format!("{} ({lines} lines)", path.display()))
        })
        .collect();
    assert!(long.is_empty(), "test files over 600 lines: {long:?}");
}

#[test]
fn long_functions_are_found_past_braces_in_strings_and_comments() {
    let body: String = (0..101).map(|_| "    let x = 1;\n").collect();
    let text = format!(
        "/// a doc {{\nfn long() {{\n    let s = \"}}\"; let c = '}}'; // }}\n{body}}}\n\
         fn short<'a>(x: &'a str) -> &'a str {{ let r = r#\"}}\"#; x }}\n\
         trait T {{ fn declared(&self); }}\n"
    );
    assert_eq!(long_functions(&text, 100), ["long (104 lines)"]);
    assert!(long_functions(&text, 104).is_empty());
}
