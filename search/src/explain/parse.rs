//! Pasted error text → its parts: the exception, the message and the frames.
//! Knows Python tracebacks (plain and IPython/Jupyter), Python warnings,
//! C++ `terminate called after throwing` / `what():`, and gfortran runtime
//! errors; anything else is a plain message (still a good query).

use serde::Serialize;
use utoipa::ToSchema;

/// The form the pasted text was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// `Traceback (most recent call last):` with `File "…", line N, in f` frames.
    PythonTraceback,
    /// IPython/Jupyter's `File …/x.py:N, in f(…)` frames.
    NotebookTraceback,
    /// `path:N: SomeWarning: message`.
    PythonWarning,
    /// `terminate called after throwing an instance of 'T'` and `what():`.
    CppException,
    /// `At line N of file f.f90` and `Fortran runtime error: …`.
    FortranRuntime,
    /// Anything else: a one-line message or a log excerpt.
    Message,
}

/// One stack frame as printed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct Frame {
    /// The file as printed (an installed path, `<stdin>`, `Cell In[3]` …).
    pub file: String,
    /// The line printed for it.
    pub line: u32,
    /// The function, when printed.
    pub function: String,
    /// The source line printed under the frame (Python), trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// What the pasted text says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema, schemars::JsonSchema)]
pub struct ParsedError {
    /// The form it was in.
    pub shape: Shape,
    /// The exception or warning class as printed (`emcee.autocorr.AutocorrError`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception: Option<String>,
    /// The message, lines joined with `\n`.
    pub message: String,
    /// The frames, outermost first (as Python prints them).
    pub frames: Vec<Frame>,
}

impl ParsedError {
    /// The class's own name: the last dotted component (`AutocorrError`).
    pub fn class_name(&self) -> Option<&str> {
        self.exception
            .as_deref()
            .map(|e| e.rsplit(['.', ':']).next().unwrap_or(e))
    }
}

/// Parses pasted error text. Never fails: text it does not recognise is a message.
pub fn parse(text: &str) -> ParsedError {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.lines().collect();
    python(&lines)
        .or_else(|| warning(&lines))
        .or_else(|| cpp(&lines))
        .or_else(|| fortran(&lines))
        .unwrap_or_else(|| message(&lines))
}

/// The last traceback in the text (a chained one's last part raised last).
fn python(lines: &[&str]) -> Option<ParsedError> {
    let mut frames = Vec::new();
    let mut shape = None;
    let mut last_frame_end = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.contains("Traceback (most recent call last)") {
            // A new traceback replaces the one before it (a chained exception's
            // last part is what was raised last). IPython prints the class first:
            // `ValueError      Traceback (most recent call last)`.
            frames.clear();
            shape = Some(match line.trim_start().starts_with("Traceback") {
                true => Shape::PythonTraceback,
                false => Shape::NotebookTraceback,
            });
        }
        if let Some(mut f) = plain_frame(line).or_else(|| notebook_frame(line)) {
            shape.get_or_insert(if notebook_frame(line).is_some() {
                Shape::NotebookTraceback
            } else {
                Shape::PythonTraceback
            });
            // The source line follows, indented (IPython numbers it).
            let mut j = i + 1;
            while j < lines.len() && is_source_line(lines[j]) {
                let src = lines[j].trim();
                if f.source.is_none() {
                    if let Some(s) = arrow(src) {
                        f.source = Some(strip_line_number(s).to_owned());
                    } else if src.starts_with("File ") {
                        break;
                    } else if !is_caret_line(src)
                        && !src.chars().next().is_some_and(|c| c.is_ascii_digit())
                    {
                        f.source = Some(src.to_owned());
                    }
                }
                j += 1;
            }
            frames.push(f);
            last_frame_end = j;
            i = j;
            continue;
        }
        i += 1;
    }
    let shape = shape?;
    // The exception line: the first line after the frames that is `Name: …`
    // or a bare name; what follows is the rest of a multi-line message.
    let rest = &lines[last_frame_end.min(lines.len())..];
    let start = rest.iter().position(|l| exception_line(l).is_some())?;
    let (exception, first) = exception_line(rest[start])?;
    let mut message = vec![first.to_owned()];
    for l in &rest[start + 1..] {
        if l.trim_start().starts_with("During handling")
            || l.trim_start().starts_with("The above exception")
        {
            break;
        }
        message.push((*l).to_owned());
    }
    Some(ParsedError {
        shape,
        exception: Some(exception.to_owned()),
        message: trim_lines(&message),
        frames,
    })
}

/// `  File "path", line 12, in function`.
fn plain_frame(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (num, rest) = rest
        .split_once(", in ")
        .map_or((rest.trim(), ""), |(n, f)| (n.trim(), f));
    Some(Frame {
        file: file.to_owned(),
        line: num.parse().ok()?,
        function: rest.trim().to_owned(),
        source: None,
    })
}

/// IPython's `File ~/x/site-packages/emcee/ensemble.py:624, in EnsembleSampler.run_mcmc(self, …)`
/// and `Cell In[3], line 2`.
fn notebook_frame(line: &str) -> Option<Frame> {
    let l = line.trim_start();
    if let Some(rest) = l.strip_prefix("Cell ") {
        let (cell, rest) = rest.split_once(", line ")?;
        let num: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return Some(Frame {
            file: format!("Cell {cell}"),
            line: num.parse().ok()?,
            function: String::new(),
            source: None,
        });
    }
    let rest = l.strip_prefix("File ")?;
    if rest.starts_with('"') {
        return None;
    }
    let (loc, func) = rest.split_once(", in ").unwrap_or((rest, ""));
    let (file, num) = loc.trim().rsplit_once(':')?;
    let function = func.split('(').next().unwrap_or("").trim();
    Some(Frame {
        file: file.to_owned(),
        line: num.trim().parse().ok()?,
        function: function.to_owned(),
        source: None,
    })
}

/// A line under a frame: indented source, IPython's numbered context, carets.
fn is_source_line(line: &str) -> bool {
    (line.starts_with(' ') || line.starts_with('\t') || arrow(line).is_some())
        && !line.trim_start().starts_with("File ")
        && !line.trim().is_empty()
}

/// IPython marks the line that ran with an arrow: `----> 2 s.run()`.
fn arrow(line: &str) -> Option<&str> {
    let t = line.trim_start();
    t.starts_with('-')
        .then(|| t.trim_start_matches('-').strip_prefix('>'))
        .flatten()
}

fn is_caret_line(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| matches!(c, '^' | '~' | ' '))
}

/// IPython's `--> 624     raise ValueError(…)`: the number, then the source.
fn strip_line_number(s: &str) -> &str {
    s.trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim()
}

/// `pkg.mod.SomeError: message` or a bare `SomeError` → (class, message).
fn exception_line(line: &str) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let (name, msg) = match line.split_once(':') {
        Some((n, m)) => (n, m.strip_prefix(' ').unwrap_or(m)),
        None => (line.trim_end(), ""),
    };
    let is_name = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let last = name.rsplit('.').next().unwrap_or(name);
    let looks_like_class = last.chars().next().is_some_and(char::is_uppercase)
        || last.ends_with("Error")
        || last.ends_with("Exception")
        || last.ends_with("Warning");
    (is_name && looks_like_class).then_some((name, msg))
}

/// `/path/x.py:12: UserWarning: message` then the source line.
fn warning(lines: &[&str]) -> Option<ParsedError> {
    for (i, line) in lines.iter().enumerate() {
        let Some((loc, rest)) = split_warning(line) else {
            continue;
        };
        let (file, num) = loc.rsplit_once(':')?;
        let (class, msg) = rest.split_once(": ").unwrap_or((rest, ""));
        let mut message = vec![msg.to_owned()];
        let mut source = None;
        for l in &lines[i + 1..] {
            if l.starts_with([' ', '\t']) {
                source = Some(l.trim().to_owned());
                break;
            }
            message.push((*l).to_owned());
        }
        return Some(ParsedError {
            shape: Shape::PythonWarning,
            exception: Some(class.to_owned()),
            message: trim_lines(&message),
            frames: vec![Frame {
                file: file.to_owned(),
                line: num.parse().ok()?,
                function: String::new(),
                source,
            }],
        });
    }
    None
}

/// Splits `loc: SomeWarning: …` at the warning class.
fn split_warning(line: &str) -> Option<(&str, &str)> {
    let at = line
        .find("Warning: ")
        .or_else(|| line.ends_with("Warning").then(|| line.len() - 7))?;
    let head = &line[..at];
    let start = head.rfind(": ")?;
    let loc = &head[..start];
    let (_, num) = loc.rsplit_once(':')?;
    num.parse::<u32>().ok()?;
    Some((loc, &line[start + 2..]))
}

/// `terminate called after throwing an instance of 'std::runtime_error'` / `  what():  msg`.
fn cpp(lines: &[&str]) -> Option<ParsedError> {
    // The last exception thrown is the one that terminated; each is read
    // once, so pasted text of many aborts costs linear time.
    let exception = lines.iter().rev().find_map(|l| {
        l.split_once("throwing an instance of ")
            .map(|(_, rest)| rest.trim().trim_matches(['\'', '`', '"']).to_owned())
    });
    let message = lines
        .iter()
        .rposition(|l| l.contains("what():"))
        .and_then(|i| {
            let (_, rest) = lines[i].split_once("what():")?;
            let mut m = vec![rest.trim().to_owned()];
            m.extend(
                lines[i + 1..]
                    .iter()
                    .take_while(|l| !l.contains("Aborted") && !l.contains("core dumped"))
                    .map(|l| (*l).to_owned()),
            );
            Some(trim_lines(&m))
        });
    if exception.is_none() && message.is_none() {
        return None;
    }
    Some(ParsedError {
        shape: Shape::CppException,
        exception,
        message: message.unwrap_or_default(),
        frames: Vec::new(),
    })
}

/// gfortran: `At line 42 of file solver.f90 (unit = 10)` / `Fortran runtime error: …`.
fn fortran(lines: &[&str]) -> Option<ParsedError> {
    let mut frames = Vec::new();
    let mut message = None;
    for l in lines {
        let at = l
            .trim()
            .strip_prefix("At line ")
            .and_then(|r| r.split_once(" of file "));
        if let Some((num, file)) = at
            && let Ok(line) = num.trim().parse()
        {
            frames.push(Frame {
                file: file.split(" (").next().unwrap_or(file).trim().to_owned(),
                line,
                function: String::new(),
                source: None,
            });
        }
        let t = l.trim();
        for prefix in [
            "Fortran runtime error:",
            "Fortran runtime warning:",
            "ERROR STOP",
            "Error termination",
        ] {
            if let Some(rest) = t.strip_prefix(prefix) {
                message = Some(rest.trim().to_owned());
            }
        }
    }
    let message = message?;
    Some(ParsedError {
        shape: Shape::FortranRuntime,
        exception: None,
        message,
        frames,
    })
}

/// Anything else: `SomeError: message` on its first line gives the class.
fn message(lines: &[&str]) -> ParsedError {
    let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
    let (exception, message) = match lines.get(first).and_then(|l| exception_line(l.trim())) {
        Some((class, msg)) if !msg.is_empty() || lines.len() == 1 => {
            let mut m = vec![msg.to_owned()];
            m.extend(lines[first + 1..].iter().map(|l| (*l).to_owned()));
            (Some(class.to_owned()), trim_lines(&m))
        }
        _ => (
            None,
            trim_lines(&lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>()),
        ),
    };
    ParsedError {
        shape: Shape::Message,
        exception,
        message,
        frames: Vec::new(),
    }
}

/// Lines joined, blank ones at either end dropped, trailing spaces cut.
fn trim_lines(lines: &[String]) -> String {
    let kept: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    let start = kept
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(kept.len());
    let end = kept
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    kept[start..end].join("\n")
}
