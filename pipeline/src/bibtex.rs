//! A small BibTeX reader: entries with their key, fields and first line.
//! The chunker cuts a `.bib` file at its entries (titled by key and title),
//! and `articles` turns a bibliography listed under `articles:` into
//! articles. Malformed entries are passed over, never an error: a `.bib`
//! in a repository is input like any file.

/// One `@type{key, field = value, …}` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The entry type, lowercased (`article`, `misc` …).
    pub kind: String,
    /// The citation key.
    pub key: String,
    /// Fields, names lowercased, values with their outer braces or quotes removed.
    pub fields: Vec<(String, String)>,
    /// The 1-based line the entry starts on.
    pub line: u32,
}

impl Entry {
    /// The value of field `name` (lowercase), braces inside it dropped and spaces squeezed.
    pub fn field(&self, name: &str) -> Option<String> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| {
            v.replace(['{', '}'], "")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
    }
}

/// Every well-formed entry of `text`, in order (`@comment`, `@string` and
/// `@preamble` are not entries).
pub fn entries(text: &str) -> Vec<Entry> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    // Lines are counted as the scan moves on: a large file stays linear.
    let (mut line, mut counted) = (1u32, 0usize);
    while let Some(at) = text[i..].find('@').map(|p| p + i) {
        line += text[counted..at].matches('\n').count() as u32;
        counted = at;
        i = at + 1;
        let kind_len = text[i..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(text.len() - i);
        let kind = text[i..i + kind_len].to_ascii_lowercase();
        let mut j = i + kind_len;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if kind.is_empty() || j >= bytes.len() || !matches!(bytes[j], b'{' | b'(') {
            continue;
        }
        let Some(end) = closing(text, j) else { break };
        if !matches!(kind.as_str(), "comment" | "string" | "preamble")
            && let Some((key, fields)) = body(&text[j + 1..end])
        {
            out.push(Entry {
                kind,
                key,
                fields,
                line,
            });
        }
        i = end + 1;
    }
    out
}

/// The byte index of the delimiter closing the `{` or `(` at `open`
/// (braces inside the entry nest; a `(` entry closes at its `)`).
fn closing(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let paren = bytes[open] == b'(';
    let mut depth = 0usize;
    for (k, &b) in bytes.iter().enumerate().skip(open + 1) {
        match b {
            b'{' => depth += 1,
            // A stray `}` in a `(` entry is text, not its end.
            b'}' if depth == 0 && paren => {}
            b'}' if depth == 0 => return Some(k),
            b'}' => depth -= 1,
            b')' if paren && depth == 0 => return Some(k),
            _ => {}
        }
    }
    None
}

/// `key, name = value, …` split into its key and fields.
fn body(inner: &str) -> Option<(String, Vec<(String, String)>)> {
    let (key, rest) = inner.split_once(',').unwrap_or((inner, ""));
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    let mut fields = Vec::new();
    let mut rest = rest;
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq]
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = rest[eq + 1..].trim_start();
        let (value, next) = value(after);
        if !name.is_empty() && !name.contains(char::is_whitespace) {
            fields.push((name, value));
        }
        rest = next;
    }
    Some((key.to_owned(), fields))
}

/// A field's value (`{…}`, `"…"` or a bare word) and what follows it.
fn value(s: &str) -> (String, &str) {
    match s.as_bytes().first() {
        Some(b'{') => {
            let mut depth = 0usize;
            for (k, c) in s.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return (s[1..k].to_owned(), &s[k + 1..]);
                        }
                    }
                    _ => {}
                }
            }
            (s[1..].to_owned(), "")
        }
        Some(b'"') => match s[1..].find('"') {
            Some(k) => (s[1..k + 1].to_owned(), &s[k + 2..]),
            None => (s[1..].to_owned(), ""),
        },
        _ => {
            let end = s.find(',').unwrap_or(s.len());
            (s[..end].trim().to_owned(), &s[end..])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_fields_and_lines() {
        let text = "% refs\n@string{joss = \"JOSS\"}\n@ARTICLE{emcee,\n  author = {{Foreman-Mackey}, D. and Hogg, D.~W.},\n  title = \"{emcee: The MCMC Hammer}\",\n  year = 2013,\n  eprint = {1202.3665},\n}\n\n@misc( corner , title={corner.py: {S}catterplot matrices} )\n@broken{ no closing\n";
        let e = entries(text);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].kind, "article");
        assert_eq!(e[0].key, "emcee");
        assert_eq!(e[0].line, 3);
        assert_eq!(
            e[0].field("title").as_deref(),
            Some("emcee: The MCMC Hammer")
        );
        assert_eq!(e[0].field("year").as_deref(), Some("2013"));
        assert_eq!(e[0].field("eprint").as_deref(), Some("1202.3665"));
        assert_eq!(e[1].key, "corner");
        assert_eq!(e[1].line, 10);
        assert_eq!(
            e[1].field("title").as_deref(),
            Some("corner.py: Scatterplot matrices")
        );
    }

    #[test]
    fn hostile_text_never_panics() {
        for t in [
            "@",
            "@{",
            "@a{",
            "@a{k",
            "@a{k,",
            "@a{k, t = {",
            "@a{k, t = \"",
            "}}}@a(k)",
            "@a{k, = 3}",
            "@é{ß, t=1}",
        ] {
            let _ = entries(t);
        }
        // A stray brace in a `(` entry loses neither it nor the next one.
        let e = entries("@misc(a, title={x}})\n@misc{b, title={y}}\n");
        let keys: Vec<&str> = e.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
    }
}
