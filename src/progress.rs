//! How the binary shows a build: progress bars on a terminal, plain log lines
//! elsewhere (CI), and the closing summary.

use cairn_pipeline::{BuildSummary, Reporter};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// Logs to stderr: human-readable on a terminal, JSON lines otherwise.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if std::io::stderr().is_terminal() {
        builder.init();
    } else {
        builder.json().init();
    }
}

/// Bars on a terminal, log lines otherwise.
pub struct TermReporter {
    bar: Mutex<Option<ProgressBar>>,
    tty: bool,
    stage: Mutex<(String, Option<u64>, u64)>,
}

impl TermReporter {
    pub fn new() -> Self {
        Self {
            bar: Mutex::new(None),
            tty: std::io::stderr().is_terminal(),
            stage: Mutex::new((String::new(), None, 0)),
        }
    }
}

impl Reporter for TermReporter {
    fn stage(&self, name: &str, total: Option<u64>) {
        if let Ok(mut s) = self.stage.lock() {
            *s = (name.to_owned(), total, 0);
        }
        if self.tty {
            let bar = match total {
                Some(n) => ProgressBar::new(n).with_style(
                    ProgressStyle::with_template(
                        "{msg:24} [{bar:40}] {pos}/{len} {per_sec} eta {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                ),
                None => ProgressBar::new_spinner(),
            };
            bar.set_message(name.to_owned());
            if let Ok(mut b) = self.bar.lock() {
                *b = Some(bar);
            }
        } else {
            tracing::info!(stage = name, total, "stage started");
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(b) = self.bar.lock()
            && let Some(bar) = b.as_ref()
        {
            bar.inc(n);
        }
        if !self.tty
            && let Ok(mut s) = self.stage.lock()
        {
            let before = s.2;
            s.2 += n;
            // A log line about every tenth of the way, not one per unit.
            if let Some(total) = s.1
                && total >= 20
                && (before * 10 / total) != (s.2 * 10 / total)
            {
                tracing::info!(stage = %s.0, done = s.2, total, "progress");
            }
        }
    }

    fn finish(&self, summary: &str) {
        if let Ok(mut b) = self.bar.lock()
            && let Some(bar) = b.take()
        {
            bar.finish_and_clear();
        }
        tracing::info!("{summary}");
    }

    fn note(&self, message: &str) {
        if let Ok(b) = self.bar.lock()
            && let Some(bar) = b.as_ref()
        {
            bar.println(message);
            return;
        }
        tracing::info!("{message}");
    }
}

/// The human summary printed after a build.
pub fn print_summary(s: &BuildSummary) {
    println!(
        "index {}{}: {} docs, {} chunks",
        s.index_version,
        if s.unchanged { " (unchanged)" } else { "" },
        s.docs,
        s.chunks
    );
    for r in &s.repos {
        match (&r.error, &r.commit) {
            (Some(e), Some(c)) if r.stale => println!(
                "  {:16} STALE @ {} ({} docs, the commit fetched before): {e}",
                r.name,
                &c[..c.len().min(12)],
                r.docs
            ),
            (Some(e), _) => println!("  {:16} FAILED: {e}", r.name),
            (None, Some(c)) => println!(
                "  {:16} {} @ {} ({} docs)",
                r.name,
                r.default_branch.as_deref().unwrap_or("?"),
                &c[..c.len().min(12)],
                r.docs
            ),
            (None, None) => println!("  {:16} ?", r.name),
        }
    }
    let skipped: Vec<String> = s
        .skipped_by_reason
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    println!(
        "  skipped: {}",
        if skipped.is_empty() {
            "none".into()
        } else {
            skipped.join(", ")
        }
    );
    println!(
        "  embedded {} chunks ({} cached), {:.1} chunks/s, {:.0} tokens/s; {:.1} s wall; {:.1} MB",
        s.embedded,
        s.cached,
        s.chunks_per_second,
        s.tokens_per_second,
        s.wall_seconds,
        s.index_bytes as f64 / 1e6
    );
}
