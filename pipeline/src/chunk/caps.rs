//! How long a name, a heading, or a path or scope of them may be, and how
//! one is cut to fit: every grammar's sections, titles and definitions keep
//! to these, so no file's shape can make one huge. A leaf: depends on
//! nothing else in `chunk`.

/// Most characters of one heading in a title, a heading path or a scope:
/// API references' headings spell whole signatures, well over 80 characters,
/// and keep them.
pub(in crate::chunk) const MAX_HEADING_CHARS: usize = 200;
/// Most characters of a name (an identifier) a definition keeps.
pub(in crate::chunk) const MAX_NAME_CHARS: usize = 200;
/// Most characters of a joined heading path, scope or chunk title: a file
/// of thousands of headings under one huge one must not copy it into each.
/// The first part and the last always fit (2 × 200 and the `…` between).
pub(in crate::chunk) const MAX_PATH_CHARS: usize = 512;

/// `s` cut to `max` characters, `…` standing for the rest.
pub(in crate::chunk) fn capped(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some(_) => {
            let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
            out.push('…');
            out
        }
    }
}

/// `parts` joined by `sep` within [`MAX_PATH_CHARS`]: where they do not fit,
/// the first and as many of the innermost as fit, `…` between (`Guide > … >
/// Install > Linux`). Callers cap each part (a heading at
/// [`MAX_HEADING_CHARS`], a name at [`MAX_NAME_CHARS`]), so the first and
/// the last always fit.
pub(in crate::chunk) fn join_capped(parts: &[&str], sep: &str) -> String {
    let len = |p: &str| p.chars().count();
    let sep_len = sep.chars().count();
    let whole: usize =
        parts.iter().map(|p| len(p)).sum::<usize>() + sep_len * parts.len().saturating_sub(1);
    let Some((first, rest)) = parts.split_first() else {
        return String::new();
    };
    if whole <= MAX_PATH_CHARS {
        return parts.join(sep);
    }
    let mut used = len(first) + 2 * sep_len + 1;
    let mut inner: Vec<&str> = Vec::new();
    for p in rest.iter().rev() {
        if used + len(p) + sep_len > MAX_PATH_CHARS && !inner.is_empty() {
            break;
        }
        used += len(p) + sep_len;
        inner.push(p);
    }
    inner.push("…");
    inner.push(first);
    inner.reverse();
    capped(&inner.join(sep), MAX_PATH_CHARS)
}

pub(in crate::chunk) fn join_path(path: &[(usize, String)]) -> String {
    join_capped(
        &path.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        " > ",
    )
}
