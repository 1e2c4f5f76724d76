//! Embedding throughput on real text: `cargo run --release -p cairn-embed --example embed_bench -- DIR [N]`.
//! Splits the .py/.md/.rst files under DIR into 30-line pieces and embeds the first N (default 2000).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_embed::{BertEmbedder, DevicePref, Embedder, ModelSpec};
use std::time::Instant;

fn collect(dir: &std::path::Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("py" | "md" | "rst")
        ) && let Ok(text) = std::fs::read_to_string(&p)
        {
            let lines: Vec<&str> = text.lines().collect();
            out.extend(lines.chunks(30).map(|c| c.join("\n")));
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).ok_or("usage: embed_bench DIR [N]")?;
    let n: usize = args.get(2).map_or(Ok(2000), |s| s.parse())?;
    let mut texts = Vec::new();
    collect(std::path::Path::new(dir), &mut texts);
    texts.truncate(n);
    let e = BertEmbedder::load(&ModelSpec::default_hub().locate()?, DevicePref::Cpu)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = e
        .count_tokens_batch(&refs)?
        .into_iter()
        .map(|t| t.min(e.model().max_tokens))
        .sum();
    let t = Instant::now();
    let v = e.embed(&refs)?;
    let s = t.elapsed().as_secs_f64();
    println!(
        "{} texts, {tokens} tokens in {s:.2}s: {:.0} tokens/s, {:.1} texts/s (dim {})",
        v.len(),
        tokens as f64 / s,
        v.len() as f64 / s,
        e.model().dim
    );
    Ok(())
}
