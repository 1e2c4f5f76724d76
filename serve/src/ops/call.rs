//! One call's context besides its arguments ([`Call`]): the engine and
//! caller, where its CPU work runs and who pays, its deadline and trace id,
//! and where earlier versions are found. Every connector builds it with
//! [`Call::new`] and the builder methods, the CLI with [`Call::local`].

use crate::costs::Payer;
use crate::llm::LlmClient;
use crate::ops::ask::Progress;
use crate::pool::CpuPool;
use crate::problem::ApiError;
use cairn_index::IndexVersion;
use cairn_search::{Caller, Deadline, Engine, RetrieveResponse, SearchError, SpanRequest};
use std::sync::Arc;
use std::time::Duration;

/// Most time a call that waits on the configured model may take.
pub const MAX_MODEL_WAIT: Duration = Duration::from_secs(300);

/// A fresh id naming one call in logs and problem bodies.
pub fn new_trace_id() -> String {
    let mut b = [0u8; 16];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut b);
    hex::encode(b)
}

/// Marks a request that presented no valid credentials (a public route's
/// or `--public-read`'s anonymous caller): the HTTP middleware sets it,
/// handlers and MCP calls read it into [`Call::anonymous`].
#[derive(Clone, Copy, Debug)]
pub struct Anonymous;

/// Everything one call needs besides its arguments.
#[derive(Clone)]
pub struct Call {
    /// The engine answering (held until the answer is built).
    pub engine: Arc<Engine>,
    /// Who is asking.
    pub caller: Caller,
    /// The caller presented no credentials (a public route's probe).
    pub anonymous: bool,
    /// Where CPU work runs (`None`: on the calling thread, as the CLI does).
    pub pool: Option<CpuPool>,
    /// Who pays for its CPU work (`None`: nobody, as for the CLI).
    pub payer: Option<Payer>,
    /// When the answer stops being wanted (on the pool, also once the
    /// caller stops waiting).
    pub deadline: Deadline,
    /// Names the call in logs and in failed batch items.
    pub trace_id: String,
    /// What was called (the HTTP path, or `mcp:<tool>`), for failed batch items.
    pub instance: String,
    /// Whether the answer's text is wanted (MCP shows it; HTTP sends JSON only).
    pub text: bool,
    /// Where earlier versions are found (the server's live index); `None`
    /// opens them from the engine's root each time (the CLI).
    pub versions: Option<Arc<dyn Versions>>,
    /// The configured model, for the operations that call one (`ask`).
    pub llm: Option<Arc<LlmClient>>,
    /// How long one step may take when the call waits on the model (its
    /// tool calls): the deadline it had before [`Call::for_model`].
    pub step: Option<Duration>,
    /// Where a call that waits on the model tells how far it has come
    /// (`None`: nobody is watching).
    pub progress: Option<Progress>,
}

/// Earlier index versions, for reading passages cited from them.
pub trait Versions: Send + Sync {
    /// The engine of `version`: the live one, or a kept earlier one
    /// ([`cairn_search::SearchError::VersionGone`] once it is not kept).
    fn engine(&self, version: &IndexVersion) -> Result<Arc<Engine>, SearchError>;
}

impl Call {
    /// The one way a call is made: `caller` asking `engine`, named
    /// `instance`; on this thread, with no deadline, payer or text, a new
    /// trace id. A connector adds what it has ([`Call::on`],
    /// [`Call::paid_by`], …).
    pub fn new(engine: Arc<Engine>, caller: Caller, instance: impl Into<String>) -> Self {
        Self {
            engine,
            caller,
            anonymous: false,
            pool: None,
            payer: None,
            deadline: Deadline::none(),
            trace_id: new_trace_id(),
            instance: instance.into(),
            text: false,
            versions: None,
            llm: None,
            step: None,
            progress: None,
        }
    }

    /// A call by the local user (the CLI), on this thread, with no deadline
    /// to speak of, its text wanted.
    pub fn local(engine: Arc<Engine>) -> Self {
        Self::new(engine, Caller::local(), "cli").with_text()
    }

    /// Its CPU work on `pool`, wanted until `deadline`.
    pub fn on(self, pool: CpuPool, deadline: Deadline) -> Self {
        Self {
            pool: Some(pool),
            deadline,
            ..self
        }
    }

    /// Its CPU work paid by `payer`; `anonymous` when the caller showed no credentials.
    pub fn paid_by(self, payer: Option<Payer>, anonymous: bool) -> Self {
        Self {
            payer,
            anonymous,
            ..self
        }
    }

    /// Its trace id, as the request that made it is traced.
    pub fn traced(self, trace_id: String) -> Self {
        Self { trace_id, ..self }
    }

    /// Its answer's text wanted too (MCP shows it, the CLI prints it).
    pub fn with_text(self) -> Self {
        Self { text: true, ..self }
    }

    /// Earlier versions found through `versions` (the server's live index).
    pub fn versions(self, versions: Arc<dyn Versions>) -> Self {
        Self {
            versions: Some(versions),
            ..self
        }
    }

    /// The configured model, when there is one.
    pub fn with_model(self, llm: Option<Arc<LlmClient>>) -> Self {
        Self { llm, ..self }
    }

    /// Its progress told to `progress`.
    pub fn with_progress(self, progress: Progress) -> Self {
        Self {
            progress: Some(progress),
            ..self
        }
    }

    /// The call with the deadline a model's answer needs: its timeout for
    /// each of the rounds the model may take and one more, at most
    /// [`MAX_MODEL_WAIT`] (a model waits, it does not compute here). A call
    /// without a deadline (the CLI's) keeps none.
    pub fn for_model(self) -> Self {
        let (Some(llm), Some(_)) = (&self.llm, self.deadline.instant()) else {
            return self;
        };
        let rounds = llm.config().max_steps + 1;
        let wait = (llm.config().timeout * rounds).min(MAX_MODEL_WAIT);
        let now = std::time::Instant::now();
        Self {
            step: self
                .deadline
                .instant()
                .map(|d| d.saturating_duration_since(now)),
            deadline: Deadline::at(now + wait),
            ..self
        }
    }

    /// A call for one step of a call that waits on the model (a tool the
    /// model called): the same caller, pool and payer, its own trace, and
    /// the deadline of one ordinary call, not the model's.
    pub fn for_step(&self) -> Self {
        let deadline = match (self.step, self.deadline.instant()) {
            (Some(step), Some(end)) => Deadline::at((std::time::Instant::now() + step).min(end)),
            _ => self.deadline.clone(),
        };
        // The model reads each answer's text.
        Self {
            deadline,
            text: true,
            llm: None,
            step: None,
            progress: None,
            ..self.clone()
        }
    }

    /// The lines `span` asks for, from the version it names (default: the
    /// one serving now; see [`Engine::retrieve_cited`]).
    pub fn retrieve(&self, span: &SpanRequest) -> Result<RetrieveResponse, ApiError> {
        let groups = self.caller.groups();
        Ok(self
            .engine
            .retrieve_cited(span, groups, &|v| self.earlier(v))?)
    }

    /// An earlier version's engine: the server's open ones, or opened now (the CLI).
    pub fn earlier(&self, version: &IndexVersion) -> Result<Arc<Engine>, SearchError> {
        match &self.versions {
            Some(versions) => versions.engine(version),
            None => self.engine.open_version(version).map(Arc::new),
        }
    }

    /// The caller's groups, owned, as library requests take them.
    pub fn groups(&self) -> Option<Vec<String>> {
        self.caller.groups.clone()
    }

    /// The version answering, as answers carry it.
    pub fn index_version(&self) -> String {
        self.engine.snapshot().version.to_string()
    }
}
