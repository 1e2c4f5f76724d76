//! Message templates: the string literals of a `raise`/`throw`/`warn`
//! statement, with a hole wherever the message is computed (`{x}` in an
//! f-string, `{}`/`{0:.2f}` before `.format`, `%s`/`%(name)d`, a
//! concatenated expression), and how much of a concrete message one explains.

/// One part of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text the message holds as written (whitespace collapsed).
    Lit(String),
    /// Anything, computed at run time.
    Hole,
}

/// Literals shorter than this may be missing from a message without it failing to match.
const OPTIONAL_LITERAL: usize = 3;

/// A message as the source writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Template(pub Vec<Piece>);

/// How a template meets a message.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Match {
    /// Every literal was found, in order.
    pub complete: bool,
    /// Share of the message's characters the found literals account for.
    pub explained: f32,
    /// The longest literal found, in characters (a lone `": "` proves nothing).
    pub longest: usize,
}

/// Which language's literal syntax to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `'…'`, `"…"`, triple quotes, `r`/`f`/`b` prefixes.
    Python,
    /// `"…"` with backslash escapes (`'x'` is a character).
    C,
    /// `'…'` and `"…"`, a doubled quote escaping itself.
    Fortran,
}

impl Template {
    /// The template of a statement's message: its literals in order. Literals
    /// joined only by whitespace, `+`, `//` or a line continuation are one
    /// piece; any other code between them is a hole.
    pub fn of_statement(stmt: &str, syntax: Syntax) -> Self {
        let mut pieces = Vec::new();
        let mut gap_start = 0;
        let mut i = 0;
        let b = stmt.as_bytes();
        while i < b.len() {
            let Some((lit, end)) = literal_at(stmt, i, syntax) else {
                i += stmt[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            };
            let gap = &stmt[gap_start..i];
            let joins = gap
                .chars()
                .all(|c| c.is_whitespace() || matches!(c, '+' | '/' | '\\' | '&'));
            let concatenated = gap.trim_end().ends_with('+') || gap.trim_end().ends_with("//");
            if (!pieces.is_empty() && !joins) || (pieces.is_empty() && concatenated) {
                pieces.push(Piece::Hole);
            }
            pieces.extend(lit);
            gap_start = end;
            i = end;
        }
        // A concatenation after the last literal computes the message's end.
        let tail = stmt[gap_start..].trim_start();
        if !pieces.is_empty() && (tail.starts_with('+') || tail.starts_with("//")) {
            pieces.push(Piece::Hole);
        }
        Self::normalised(pieces)
    }

    /// A template from pieces, normalised like one read from a statement.
    pub fn from_pieces(pieces: Vec<Piece>) -> Self {
        Self::normalised(pieces)
    }

    /// Adjacent literals merged, adjacent holes merged, blank literals dropped.
    fn normalised(pieces: Vec<Piece>) -> Self {
        let mut out: Vec<Piece> = Vec::new();
        for p in pieces {
            match (out.last_mut(), p) {
                (Some(Piece::Lit(a)), Piece::Lit(b)) => a.push_str(&b),
                (Some(Piece::Hole), Piece::Hole) => {}
                (_, p) => out.push(p),
            }
        }
        let mut merged: Vec<Piece> = Vec::new();
        for p in out {
            match p {
                Piece::Lit(s) => {
                    let s = collapse(&s);
                    if s.trim().is_empty() {
                        if merged.last() != Some(&Piece::Hole) {
                            merged.push(Piece::Hole);
                        }
                    } else {
                        merged.push(Piece::Lit(s));
                    }
                }
                Piece::Hole if merged.last() == Some(&Piece::Hole) => {}
                Piece::Hole => merged.push(Piece::Hole),
            }
        }
        Self(merged)
    }

    /// Whether the template holds any literal text.
    pub fn is_empty(&self) -> bool {
        !self.0.iter().any(|p| matches!(p, Piece::Lit(_)))
    }

    /// The template as people write one: literals, `{}` for each hole.
    pub fn display(&self) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Lit(s) => s.as_str(),
                Piece::Hole => "{}",
            })
            .collect()
    }

    /// How much of `message` this template explains. Literals are looked for
    /// in order, each leftmost after the one before (which leaves the most room
    /// for the rest); whitespace runs compare as one space.
    pub fn match_message(&self, message: &Message) -> Match {
        let message = &message.0;
        let mut at = 0;
        let (mut found, mut total, mut longest) = (0usize, 0usize, 0usize);
        let mut complete = true;
        for p in &self.0 {
            let Piece::Lit(lit) = p else { continue };
            let lit = lit.trim();
            let n = lit.chars().count();
            match message[at..].find(lit) {
                Some(pos) => {
                    found += n;
                    total += n;
                    longest = longest.max(n);
                    at += pos + lit.len();
                }
                // A separator computed into the message (`", ".join`) may be absent; words may not.
                None if n < OPTIONAL_LITERAL => {}
                None => {
                    total += n;
                    complete = false;
                }
            }
        }
        let len = message.trim().chars().count().max(1);
        Match {
            complete: complete && total > 0,
            explained: (found.min(len) as f32) / len as f32,
            longest,
        }
    }
}

/// A message ready to match: whitespace runs collapsed once, for every template.
pub struct Message(String);

impl Message {
    /// `raw` with its whitespace runs as single spaces.
    pub fn new(raw: &str) -> Self {
        Self(collapse(raw.trim()))
    }
}

/// Whitespace runs as one space.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// The string literal starting at byte `i`, as pieces, and where it ends.
fn literal_at(s: &str, i: usize, syntax: Syntax) -> Option<(Vec<Piece>, usize)> {
    let b = s.as_bytes();
    // A prefix must not be the tail of an identifier (`self.f"` is not one).
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let (mut raw, mut fstr, mut j) = (false, false, i);
    if syntax == Syntax::Python {
        while j < b.len()
            && j - i < 2
            && matches!(b[j].to_ascii_lowercase(), b'r' | b'f' | b'b' | b'u')
        {
            raw |= b[j].eq_ignore_ascii_case(&b'r');
            fstr |= b[j].eq_ignore_ascii_case(&b'f');
            j += 1;
        }
    }
    let quote = *b.get(j)?;
    let ok = match syntax {
        Syntax::C => quote == b'"',
        Syntax::Python | Syntax::Fortran => quote == b'"' || quote == b'\'',
    };
    if !ok {
        return None;
    }
    let triple =
        syntax == Syntax::Python && s[j..].starts_with(&String::from_utf8(vec![quote; 3]).ok()?);
    let open = if triple { 3 } else { 1 };
    let body_start = j + open;
    let mut k = body_start;
    let mut body = String::new();
    loop {
        let c = s[k..].chars().next()?;
        if triple {
            if s[k..].starts_with(&s[j..j + 3]) {
                k += 3;
                break;
            }
        } else if c as u32 == quote as u32 {
            if syntax == Syntax::Fortran && s[k + 1..].starts_with(c) {
                body.push(c);
                k += 2;
                continue;
            }
            k += 1;
            break;
        } else if c == '\n' && syntax != Syntax::Python {
            return None;
        }
        if c == '\\' && syntax != Syntax::Fortran {
            let next = s[k + 1..].chars().next()?;
            if raw {
                body.push('\\');
                body.push(next);
            } else {
                body.push(match next {
                    'n' | 't' | 'r' => ' ',
                    '\n' => '\0',
                    other => other,
                });
            }
            k += 1 + next.len_utf8();
            continue;
        }
        body.push(c);
        k += c.len_utf8();
    }
    let body = body.replace('\0', "");
    Some((holes(&body, fstr, syntax), k))
}

/// A literal's text split at its format holes.
fn holes(body: &str, fstr: bool, syntax: Syntax) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let hole = |pieces: &mut Vec<Piece>, lit: &mut String| {
        if !lit.is_empty() {
            pieces.push(Piece::Lit(std::mem::take(lit)));
        }
        pieces.push(Piece::Hole);
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '{' if next == Some('{') => {
                lit.push('{');
                i += 2;
            }
            '}' if next == Some('}') => {
                lit.push('}');
                i += 2;
            }
            '{' if syntax == Syntax::Python => match field_end(&chars, i, fstr) {
                Some(end) => {
                    hole(&mut pieces, &mut lit);
                    i = end + 1;
                }
                None => {
                    lit.push(c);
                    i += 1;
                }
            },
            '%' if next == Some('%') => {
                lit.push('%');
                i += 2;
            }
            '%' => match conversion_end(&chars, i) {
                Some(end) => {
                    hole(&mut pieces, &mut lit);
                    i = end + 1;
                }
                None => {
                    lit.push(c);
                    i += 1;
                }
            },
            _ => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    pieces
}

/// The `}` closing a replacement field opened at `i`: any expression in an
/// f-string, else a `.format` field (`{}`, `{0}`, `{name}`, `{x!r:>8}`).
fn field_end(chars: &[char], i: usize, fstr: bool) -> Option<usize> {
    let mut depth = 0;
    for (k, &c) in chars.iter().enumerate().skip(i) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let inner: String = chars[i + 1..k].iter().collect();
                    let name = inner.split([':', '!']).next().unwrap_or("");
                    let is_field = fstr
                        || name
                            .chars()
                            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'));
                    return is_field.then_some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The last character of a `%` conversion at `i` (`%s`, `%5.2f`, `%(name)d`).
fn conversion_end(chars: &[char], i: usize) -> Option<usize> {
    let mut k = i + 1;
    if chars.get(k) == Some(&'(') {
        k += chars[k..].iter().position(|&c| c == ')')? + 1;
    }
    while chars.get(k).is_some_and(|c| {
        c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | ' ' | '#' | '*' | 'l' | 'h')
    }) {
        k += 1;
    }
    chars
        .get(k)
        .is_some_and(|c| "sdifeEgGrxXouaclz".contains(*c))
        .then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(s: &str) -> Template {
        Template::of_statement(s, Syntax::Python)
    }

    #[test]
    fn f_string_holes_match_the_concrete_message() {
        let t = py(
            r#"raise ValueError(f"The number of walkers ({nwalkers}) must be at least {2 * ndim}")"#,
        );
        assert_eq!(
            t.display(),
            "The number of walkers ({}) must be at least {}"
        );
        let m = t.match_message(&Message::new(
            "The number of walkers (3) must be at least 10",
        ));
        assert!(m.complete);
        assert!(m.explained > 0.8, "{m:?}");
        assert!(
            !t.match_message(&Message::new("The number of walkers is wrong"))
                .complete
        );
    }

    #[test]
    fn format_and_percent_holes_and_escaped_braces() {
        let t =
            py(r#"raise KeyError("{{literal}} key {0!r} is not in {names}".format(k, names=n))"#);
        assert_eq!(t.display(), "{literal} key {} is not in {}");
        assert!(
            t.match_message(&Message::new("{literal} key 'x' is not in ['a']"))
                .complete
        );
        let t = py(r#"raise ValueError("bad value %s for %(name)d, 100%% sure" % (a, b))"#);
        assert_eq!(t.display(), "bad value {} for {}, 100% sure");
        // A brace that is no field stays literal.
        let t = py(r#"raise ValueError("shape {n, m} expected")"#);
        assert_eq!(t.display(), "shape {n, m} expected");
    }

    #[test]
    fn concatenation_and_line_continuation() {
        let t = py(
            "raise ValueError(\"It is a very bad idea to have \"\n      \"more dimensions than walkers\")",
        );
        assert_eq!(
            t.display(),
            "It is a very bad idea to have more dimensions than walkers"
        );
        let t = py(r#"raise ValueError("got " + str(n) + " walkers")"#);
        assert_eq!(t.display(), "got {} walkers");
        let t = Template::of_statement(
            r#"throw std::invalid_argument("index " + std::to_string(i) + " out of \"range\"");"#,
            Syntax::C,
        );
        assert_eq!(t.display(), "index {} out of \"range\"");
        let t = Template::of_statement("error stop 'can''t open ' // trim(f)", Syntax::Fortran);
        assert_eq!(t.display(), "can't open {}");
    }

    #[test]
    fn multi_line_messages_match_across_wrapping() {
        let t = py(
            "raise ValueError('''The chain is shorter than {0} times\nthe integrated autocorrelation time'''.format(tol))",
        );
        let m = t.match_message(&Message::new("The chain is shorter than 50 times the integrated\n  autocorrelation time for 2 parameter(s)."));
        assert!(m.complete, "{m:?}");
        assert_eq!(m.longest, "times the integrated autocorrelation time".len());
    }

    #[test]
    fn prefixes_and_identifiers_are_not_confused() {
        // A raw f-string keeps its backslashes and still has holes.
        let t = py(r#"raise ValueError(rf"path C:\x {p}")"#);
        assert_eq!(t.display(), r"path C:\x {}");
        assert!(py("raise ValueError").is_empty());
    }
}
