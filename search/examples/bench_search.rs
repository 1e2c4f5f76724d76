//! Search, retrieve and history latency on a built index, one query at a time:
//! `cargo run --release -p cairn-search --example bench_search -- INDEX GOLDEN [ROUNDS] [MODE]`
//! (MODE: hybrid, the default, bm25 or vector: what each side costs).
//! Queries are the golden questions plus variants (distinct strings, so the
//! query-vector cache never helps), then the plain questions once more (it does).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_embed::DevicePref;
use cairn_search::eval::GoldenQuery;
use cairn_search::{Engine, EngineOptions, Mode, SearchError, SearchRequest, SpanRequest};
use std::time::Instant;

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The command line: where the index and golden file are, how many rounds
/// of variants to ask, and the ranking mode.
struct Args {
    index: String,
    golden: String,
    rounds: usize,
    mode: Mode,
}

/// A hit's cited lines.
struct Span {
    doc: String,
    start: u32,
    end: u32,
}

/// The timed searches: each one's milliseconds, and every hit they gave.
struct Searched {
    ms: Vec<f64>,
    hits: Vec<Span>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let t = Instant::now();
    let engine = Engine::open(&EngineOptions {
        index: args.index.into(),
        model_dir: None,
        device: DevicePref::Cpu,
    })?;
    println!("open: {:.0} ms", t.elapsed().as_secs_f64() * 1e3);
    let queries = cairn_search::eval::load(std::path::Path::new(&args.golden))?;
    let Searched {
        ms: mut search_ms,
        hits,
    } = search_rounds(&engine, &queries, args.rounds, args.mode)?;
    // The same questions asked again: their vectors come from the query cache.
    let mut repeat_ms = Vec::new();
    for q in &queries {
        let t = Instant::now();
        engine.search(&SearchRequest {
            query: q.query.clone(),
            queries: Vec::new(),
            mode: args.mode,
            ..SearchRequest::default()
        })?;
        repeat_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut retrieve_ms = time_spans(&hits, |span| engine.retrieve(span, None).map(drop))?;
    // The cited spans' line history (blame runs and log, from history.json).
    let mut history_ms = time_spans(&hits, |span| engine.history(span, None).map(drop))?;
    search_ms.sort_by(f64::total_cmp);
    repeat_ms.sort_by(f64::total_cmp);
    retrieve_ms.sort_by(f64::total_cmp);
    history_ms.sort_by(f64::total_cmp);
    println!(
        "search   n={} p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        search_ms.len(),
        pct(&search_ms, 0.5),
        pct(&search_ms, 0.99),
        search_ms[search_ms.len() - 1]
    );
    println!(
        "repeated n={} p50 {:.2} ms  p99 {:.2} ms  (same questions again: cached query vectors)",
        repeat_ms.len(),
        pct(&repeat_ms, 0.5),
        pct(&repeat_ms, 0.99)
    );
    println!(
        "retrieve n={} p50 {:.3} ms  p99 {:.3} ms",
        retrieve_ms.len(),
        pct(&retrieve_ms, 0.5),
        pct(&retrieve_ms, 0.99)
    );
    println!(
        "history  n={} p50 {:.3} ms  p99 {:.3} ms",
        history_ms.len(),
        pct(&history_ms, 0.5),
        pct(&history_ms, 0.99)
    );
    Ok(())
}

/// The command line, read: `INDEX GOLDEN [ROUNDS] [MODE]`.
fn parse_args() -> Result<Args, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (index, golden) = (
        args.get(1).ok_or("usage: INDEX GOLDEN [ROUNDS]")?,
        args.get(2).ok_or("GOLDEN")?,
    );
    let rounds: usize = args.get(3).map_or(Ok(8), |s| s.parse())?;
    let mode = match args.get(4) {
        Some(m) => Mode::parse(m).ok_or("MODE: hybrid, bm25 or vector")?,
        None => Mode::Hybrid,
    };
    Ok(Args {
        index: index.clone(),
        golden: golden.clone(),
        rounds,
        mode,
    })
}

/// Each question searched once a round, with that round's suffix so no string repeats.
fn search_rounds(
    engine: &Engine,
    queries: &[GoldenQuery],
    rounds: usize,
    mode: Mode,
) -> Result<Searched, Box<dyn std::error::Error>> {
    let suffixes = [
        "",
        " example",
        " how",
        " docs",
        " python",
        " api",
        " usage",
        " function",
        " parameters",
        " error",
    ];
    let mut search_ms = Vec::new();
    let mut hits = Vec::new();
    for r in 0..rounds {
        for q in queries {
            let query = format!("{}{}", q.query, suffixes[r % suffixes.len()]);
            let t = Instant::now();
            let resp = engine.search(&SearchRequest {
                query,
                queries: Vec::new(),
                mode,
                ..SearchRequest::default()
            })?;
            search_ms.push(t.elapsed().as_secs_f64() * 1e3);
            hits.extend(resp.hits.into_iter().map(|h| Span {
                doc: h.doc_id,
                start: h.start_line,
                end: h.end_line,
            }));
        }
    }
    Ok(Searched {
        ms: search_ms,
        hits,
    })
}

/// The milliseconds of `call` on each of 5000 spans, going round `hits`.
fn time_spans(
    hits: &[Span],
    call: impl Fn(&SpanRequest) -> Result<(), SearchError>,
) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let mut ms = Vec::new();
    for span in hits.iter().cycle().take(5000) {
        let t = Instant::now();
        call(&SpanRequest::lines(
            &span.doc,
            span.start.into(),
            span.end.into(),
        ))?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(ms)
}
