//! The defaults and limits of a server, in one place: the CLI's flags take
//! their defaults from here, and the HTTP and MCP connectors their limits.
//! Depends on nothing else here.

/// Where the server listens unless told otherwise.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";
/// The tokens file unless told otherwise.
pub const DEFAULT_TOKENS: &str = ".cairn/tokens.json";
/// Milliseconds one request may take.
pub const DEFAULT_DEADLINE_MS: u64 = 10_000;
/// Milliseconds a request body may take to arrive whole.
pub const DEFAULT_BODY_TIMEOUT_MS: u64 = 10_000;
/// CPU jobs that may wait for a thread before requests are refused.
pub const DEFAULT_QUEUE: usize = 64;
/// Milliseconds between checks of CURRENT, dropped packs and the tokens file.
pub const DEFAULT_WATCH_MS: u64 = 2_000;
/// Seconds of clock skew allowed on a JWT's (and an OAuth access token's) `exp` and `nbf`.
pub const JWT_LEEWAY_SECS: u64 = 60;
/// Members of this JWT group may set ranking weights.
pub const DEFAULT_JWT_ADMIN_GROUP: &str = "cairn-admin";
/// Page requests a minute all anonymous visitors share (each page may
/// search or explain: about 10 ms of a core each, so this keeps anonymous
/// use to about a tenth of one core).
pub const DEFAULT_ANONYMOUS_PER_MINUTE: u32 = 600;
/// One anonymous visitor may use at most this part (1/N) of each budget
/// all anonymous visitors share.
pub const ANONYMOUS_SHARE: u32 = 4;
/// Milliseconds of the CPU pool a minute all anonymous callers share
/// (half a core); each visitor has a [`ANONYMOUS_SHARE`] of it.
pub const DEFAULT_ANONYMOUS_CPU_MS_PER_MINUTE: u32 = 30_000;
/// The largest request body on any route, MCP included.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The machine's cores: the default number of CPU and HTTP worker threads.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Raises this process's open-files limit to its hard limit, so that
/// connections held open by slow clients cannot leave the server (or the
/// watch) unable to open its own files; answers the limit now in force.
pub fn raise_open_files() -> Option<u64> {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
        if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
            return Some(hard);
        }
        Some(soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Descriptors kept free of connections for the process's own files (the
/// index, the tokens file, logs, the CPU pool's work).
pub const RESERVED_FILES: u64 = 256;

/// Connections each of `workers` HTTP workers may hold under an open-files
/// limit of `files`: together they leave [`RESERVED_FILES`] free (at least
/// 16 each, at most actix's default of 25,000).
pub fn connections_per_worker(files: Option<u64>, workers: usize) -> usize {
    let free = files.map_or(25_000, |f| f.saturating_sub(RESERVED_FILES));
    let each = free / (workers.max(1) as u64);
    each.clamp(16, 25_000) as usize
}
