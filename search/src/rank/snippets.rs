//! Snippets: the best few lines of a hit for its query, matches marked.

/// Query words worth marking in a snippet.
fn snippet_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// The best `n` lines of `text` for `query`, matches marked with `**`.
pub fn snippet(text: &str, query: &str, n: usize) -> String {
    let words = snippet_words(query);
    let lines: Vec<&str> = text.lines().collect();
    let hits: Vec<usize> = lines
        .iter()
        .map(|l| {
            let lower = l.to_lowercase();
            words.iter().filter(|w| lower.contains(w.as_str())).count()
        })
        .collect();
    let n = n.min(lines.len()).max(1);
    let best = (0..=lines.len().saturating_sub(n))
        .max_by_key(|&s| {
            (
                hits[s..(s + n).min(lines.len())].iter().sum::<usize>(),
                std::cmp::Reverse(s),
            )
        })
        .unwrap_or(0);
    lines[best..(best + n).min(lines.len())]
        .iter()
        .map(|l| mark(&truncate(l, 200), &words))
        .collect::<Vec<_>>()
        .join("\n")
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        s.chars().take(max).collect::<String>() + "…"
    }
}

fn mark(line: &str, words: &[String]) -> String {
    let lower = line.to_lowercase();
    if lower.len() != line.len() {
        return line.to_owned();
    }
    let mut marks = vec![false; line.len()];
    for w in words {
        let mut from = 0;
        while let Some(i) = lower[from..].find(w.as_str()) {
            marks[from + i..from + i + w.len()].fill(true);
            from += i + w.len();
        }
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut open = false;
    for (i, c) in line.char_indices() {
        if marks[i] != open {
            out.push_str("**");
            open = marks[i];
        }
        out.push(c);
    }
    if open {
        out.push_str("**");
    }
    out
}

/// `snippet` as plain text: the `**` pairs [`snippet`] put around
/// `query`'s words taken out, and every other `**` (Python's `**kwargs`,
/// `x**2`) left as the file has it.
pub fn unmark(snippet: &str, query: &str) -> String {
    let words = snippet_words(query);
    snippet
        .lines()
        .map(|line| {
            let mut out = String::with_capacity(line.len());
            let mut rest = line;
            while let Some(open) = rest.find("**") {
                let inner_start = open + 2;
                let close = rest[inner_start..].find("**").map(|c| inner_start + c);
                match close {
                    Some(close)
                        if close > inner_start && {
                            let inner = rest[inner_start..close].to_lowercase();
                            words.iter().any(|w| inner.contains(w.as_str()))
                        } =>
                    {
                        out.push_str(&rest[..open]);
                        out.push_str(&rest[inner_start..close]);
                        rest = &rest[close + 2..];
                    }
                    _ => {
                        out.push_str(&rest[..inner_start]);
                        rest = &rest[inner_start..];
                    }
                }
            }
            out.push_str(rest);
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_come_off_and_the_files_own_stars_stay() {
        let text = "def f(**kwargs):\n    return emcee.Pool(x**2)";
        let marked = snippet(text, "emcee pool kwargs", 2);
        assert_eq!(
            marked,
            "def f(****kwargs**):\n    return **emcee**.**Pool**(x**2)"
        );
        assert_eq!(unmark(&marked, "emcee pool kwargs"), text);
        assert_eq!(unmark("a **b** c", "zzz"), "a **b** c");
    }

    #[test]
    fn snippet_marks_terms() {
        let s = snippet("a\nb\nthe emcee Pool here\nc", "emcee pool", 1);
        assert_eq!(s, "the **emcee** **Pool** here");
    }
}
