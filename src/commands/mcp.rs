//! `cairn mcp`: MCP over stdio for a client that spawns the process.

use crate::cli::McpArgs;
use anyhow::Context;
use cairn_serve::limits::default_workers;
use cairn_serve::live::LiveIndex;
use cairn_serve::llm::LlmClient;
use cairn_serve::mcp::McpOptions;
use cairn_serve::pool::CpuPool;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Serves until the client closes stdin.
pub fn run(a: McpArgs) -> anyhow::Result<ExitCode> {
    // The flags first: a misspelt set is said before the index is looked for.
    let tools = a.tools.choice()?;
    let options = a.open.options()?;
    let index = options.index.clone();
    let live = LiveIndex::open(options)
        .with_context(|| format!("opening the index at {}", index.display()))?;
    let workers = a.work.cpu_workers.unwrap_or_else(default_workers).max(1);
    let llm = a.llm.config()?.map(|c| Arc::new(LlmClient::new(c)));
    let opts = McpOptions {
        deadline: Duration::from_millis(a.work.deadline_ms),
        llm,
        tools,
        ..McpOptions::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(cairn_serve::mcp::serve_stdio(
        Arc::new(live),
        CpuPool::new(workers, a.work.queue),
        opts,
    ))
    .map_err(|e| anyhow::anyhow!("MCP over stdio: {e}"))?;
    Ok(ExitCode::SUCCESS)
}
