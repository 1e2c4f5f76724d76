//! cairn as a Slack app, served by `cairn serve` when it is given Slack's
//! signing secret: `POST /slack/commands` (a slash command, `/cairn how do
//! I …`) and `POST /slack/events` (`app_mention` and direct messages, and
//! the `url_verification` handshake).
//!
//! Every request is verified as Slack signs it ([`verify`]) and its
//! workspace checked against the allowed ones before anything else reads
//! it; a repeated signature (a replay) and an event id seen before (Slack's
//! retries) are acknowledged and never answered twice. Slack wants an
//! answer within 3 s, so each request is acknowledged at once and the
//! search runs afterwards, as one caller ("slack", with the groups the
//! operator gives it and its own request budget) on the CPU pool within the
//! deadline, like any API call; the answer ([`blocks`]) goes to the
//! command's `response_url` or, for events, to `chat.postMessage` in the
//! thread ([`post`]). With a configured model the answer is `ask`'s: a
//! "reading the index" message is posted at once and updated as the model
//! calls tools, then replaced by the answer. Slack's API address is an
//! option, so tests post to a local receiver. `http` mounts the routes; this module depends on `ops` (the
//! search operation), `mcp_app` (the focus lines), `live`, `pool`, `costs`,
//! `signed` and `ratelimit`.

pub mod blocks;
mod post;
pub mod verify;

use crate::costs::Costs;
use crate::live::LiveIndex;
use crate::ops::Call;
use crate::ops::ask::{Ask, AskArgs, AskEvent, AskResponse, Progress};
use crate::ops::search::{Search, SearchArgs};
use crate::pool::CpuPool;
use crate::problem::ApiError;
use crate::ratelimit::RateLimiter;
use crate::signed::RecentIds;
use actix_web::http::StatusCode;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::{Caller, Deadline, Filters};
use post::{Poster, RESPONSE_URL_USES, Reply, Shown, show};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Slack's Web API, where `chat.postMessage` lives.
pub const DEFAULT_API_URL: &str = "https://slack.com/api";
/// Where Slack's `response_url`s point.
const RESPONSE_URL_PREFIX: &str = "https://hooks.slack.com/";
/// Signatures and event ids remembered: more than a busy workspace sends
/// in the 5 minutes a signature stays fresh (218 a second), so a replay is
/// never forgotten before its timestamp is stale (about 10 MB when full).
const REMEMBERED: usize = 65_536;

/// How the Slack app runs (from `cairn serve`'s `--slack-*` options).
#[derive(Clone)]
pub struct SlackConfig {
    /// The app's signing secret.
    pub signing_secret: Vec<u8>,
    /// The bot token (`xoxb-…`) events are answered with; without it only
    /// slash commands answer.
    pub bot_token: Option<String>,
    /// The access groups the integration searches as (empty: public documents only).
    pub groups: Vec<String>,
    /// The workspaces (`team_id`) answered.
    pub teams: Vec<String>,
    /// Slack's Web API base URL.
    pub api_url: String,
    /// Searches per minute, all workspaces together.
    pub per_minute: u32,
}

impl std::fmt::Debug for SlackConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret or the token.
        f.debug_struct("SlackConfig")
            .field("bot_token", &self.bot_token.as_ref().map(|_| "…"))
            .field("groups", &self.groups)
            .field("teams", &self.teams)
            .field("api_url", &self.api_url)
            .field("per_minute", &self.per_minute)
            .finish_non_exhaustive()
    }
}

/// What the app searches with: the server's index, CPU pool, costs and
/// deadline, and its public URL (for the "more" link).
pub struct Server {
    /// The live index.
    pub live: Arc<LiveIndex>,
    /// The CPU pool.
    pub pool: CpuPool,
    /// What callers' CPU work costs them.
    pub costs: Arc<Costs>,
    /// How long one search may take.
    pub deadline: Duration,
    /// The web page's address, when the server has a public one.
    pub public_url: Option<String>,
    /// The configured model: questions are answered in words with `ask`.
    pub llm: Option<Arc<crate::llm::LlmClient>>,
}

/// The Slack app's state, shared by every worker.
pub struct Slack {
    config: SlackConfig,
    server: Server,
    budget: RateLimiter,
    signatures: RecentIds,
    events: RecentIds,
    refusals: Throttle,
    poster: Arc<Poster>,
}

/// Counts events and says when one may be logged: at most once a second,
/// with how many happened since the last line.
#[derive(Default)]
struct Throttle {
    state: std::sync::Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    /// Counts one; `Some(count since the last line)` when a line is due.
    fn tick(&self) -> Option<u64> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1 += 1;
        let now = Instant::now();
        if s.0
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return None;
        }
        let n = s.1;
        *s = (Some(now), 0);
        Some(n)
    }
}

impl Slack {
    /// The app for `config`, searching with `server`.
    pub fn new(config: SlackConfig, server: Server) -> Self {
        let poster = Arc::new(Poster::new(
            config.api_url.clone(),
            config.bot_token.clone(),
        ));
        Self {
            budget: RateLimiter::new(config.per_minute.max(1)),
            config,
            server,
            signatures: RecentIds::new(REMEMBERED),
            events: RecentIds::new(REMEMBERED),
            refusals: Throttle::default(),
            poster,
        }
    }
}

impl Slack {
    /// The one caller Slack is: its groups, never an admin.
    fn caller(&self) -> Caller {
        Caller {
            name: "slack".to_owned(),
            groups: Some(self.config.groups.clone()),
            admin: false,
        }
    }
}

/// Registers `/slack/commands` and `/slack/events`.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/slack/commands").route(web::post().to(command)))
        .service(web::resource("/slack/events").route(web::post().to(event)));
}

/// The paths, which answer without a bearer token (Slack signs instead).
pub const PATHS: [&str; 2] = ["/slack/commands", "/slack/events"];

/// A refused request: its status and why, said to Slack in plain text.
type Refusal = (StatusCode, String);

fn plain((status, text): Refusal) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/plain; charset=utf-8")
        .body(text)
}

/// Whether the request comes from Slack: signed with the secret, recent,
/// and not seen before; else the refusal.
fn verified(slack: &Slack, req: &HttpRequest, body: &[u8]) -> Result<(), Refusal> {
    let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok());
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let verified = verify::verify(
        &slack.config.signing_secret,
        header("x-slack-signature"),
        header("x-slack-request-timestamp"),
        body,
        now,
    );
    let signature = match verified {
        Ok(signature) => signature,
        Err(e) => {
            // Unsigned requests cost a hash each; their log lines are kept
            // to one a second, with how many were refused since.
            if let Some(refused) = slack.refusals.tick() {
                tracing::warn!(target: "cairn::slack", reason = %e, refused, "request refused");
            }
            let status = match e {
                verify::Refused::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                _ => StatusCode::UNAUTHORIZED,
            };
            return Err((status, e.to_string()));
        }
    };
    // From here on the access log names the caller the request searches as.
    req.extensions_mut().insert(slack.caller());
    // The same signature twice is the same request sent again.
    if !slack.signatures.first_time(&signature) {
        tracing::warn!(target: "cairn::slack", "request refused: a replay (its signature was seen before)");
        return Err((
            StatusCode::CONFLICT,
            "this request was already received".into(),
        ));
    }
    Ok(())
}

/// Whether `team` may use the app; else the refusal.
fn allowed_team(slack: &Slack, team: &str) -> Result<(), Refusal> {
    match slack.config.teams.iter().any(|t| t == team) {
        true => Ok(()),
        false => {
            tracing::warn!(target: "cairn::slack", team, "workspace not allowed");
            Err((
                StatusCode::FORBIDDEN,
                "this workspace is not allowed (--slack-team)".into(),
            ))
        }
    }
}

/// `POST /slack/commands`: acknowledged at once, answered at `response_url`.
async fn command(slack: web::Data<Slack>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    if let Err(refused) = verified(&slack, &req, &body) {
        return plain(refused);
    }
    let form: BTreeMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let field = |k: &str| form.get(k).map(String::as_str).unwrap_or("");
    if let Err(refused) = allowed_team(&slack, field("team_id")) {
        return plain(refused);
    }
    let question = unescape(field("text")).trim().to_owned();
    if question.is_empty() {
        return HttpResponse::Ok().json(json!({
            "response_type": "ephemeral",
            "text": format!("Ask a question: `{} how do I run emcee in parallel`", field("command")),
        }));
    }
    let response_url = field("response_url");
    if !response_url_allowed(&slack.config.api_url, response_url) {
        tracing::warn!(target: "cairn::slack", response_url, "request refused: the response_url is not Slack's");
        return plain((
            StatusCode::BAD_REQUEST,
            "response_url is not Slack's".into(),
        ));
    }
    spawn_answer(
        slack.into_inner(),
        question.clone(),
        Reply::ResponseUrl(response_url.to_owned()),
    );
    HttpResponse::Ok().json(json!({
        "response_type": "ephemeral",
        "text": format!("Searching for “{}”…", blocks::escape(&question)),
    }))
}

/// `POST /slack/events`: the URL handshake, or an event acknowledged at
/// once and answered in its thread.
async fn event(slack: web::Data<Slack>, req: HttpRequest, body: web::Bytes) -> HttpResponse {
    if let Err(refused) = verified(&slack, &req, &body) {
        return plain(refused);
    }
    let Ok(payload) = serde_json::from_slice::<Value>(&body) else {
        return plain((StatusCode::BAD_REQUEST, "the body is not JSON".into()));
    };
    if payload["type"] == "url_verification" {
        return HttpResponse::Ok().json(json!({"challenge": payload["challenge"]}));
    }
    if let Err(refused) = allowed_team(&slack, payload["team_id"].as_str().unwrap_or("")) {
        return plain(refused);
    }
    // In a channel shared with another workspace (Slack Connect) the
    // envelope names the app's workspace while the person who wrote is of
    // another: every team the event names must be allowed as well.
    // Acknowledged (Slack would retry a refusal) and never answered.
    for field in ["team", "user_team", "source_team"] {
        if let Some(team) = payload["event"][field].as_str()
            && allowed_team(&slack, team).is_err()
        {
            return HttpResponse::Ok().finish();
        }
    }
    // Slack retries an event it thinks went unanswered: one answer per event id.
    let id = payload["event_id"].as_str().unwrap_or("");
    if id.is_empty() || !slack.events.first_time(id) {
        return HttpResponse::Ok().finish();
    }
    let e = &payload["event"];
    let wanted = match e["type"].as_str() {
        Some("app_mention") => true,
        Some("message") => e["channel_type"] == "im",
        _ => false,
    };
    // Bots (cairn's own answers included) and edits are never answered.
    let from_a_person = e.get("bot_id").is_none() && e.get("subtype").is_none();
    let question = question_of(e["text"].as_str().unwrap_or(""));
    let channel = e["channel"].as_str().unwrap_or("").to_owned();
    let ts = e["thread_ts"]
        .as_str()
        .or(e["ts"].as_str())
        .unwrap_or("")
        .to_owned();
    if slack.config.bot_token.is_none() {
        tracing::warn!(target: "cairn::slack", "an event, and no bot token to answer it with (--slack-bot-token-file)");
    } else if wanted && from_a_person && !question.is_empty() && !channel.is_empty() {
        spawn_answer(slack.into_inner(), question, Reply::Thread { channel, ts });
    }
    HttpResponse::Ok().finish()
}

/// A message's question: without the mentions (`<@U123>`), its entities decoded.
fn question_of(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("<@") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once('>').map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    unescape(&out).trim().to_owned()
}

/// Text as Slack sends it, its three entities decoded (`&amp;` last, so
/// `&amp;lt;` stays `&lt;`).
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Whether `url` may receive an answer: Slack's hooks, or (for a local
/// receiver standing in for Slack) the configured API's own origin.
fn response_url_allowed(api_url: &str, url: &str) -> bool {
    if url.starts_with(RESPONSE_URL_PREFIX) {
        return true;
    }
    let origin = |u: &str| url::Url::parse(u).ok().map(|u| u.origin());
    origin(url).is_some_and(|o| o.is_tuple() && Some(o) == origin(api_url))
}

/// Answers and posts, after the request has been acknowledged.
fn spawn_answer(slack: Arc<Slack>, question: String, reply: Reply) {
    actix_web::rt::spawn(async move {
        let reply = Arc::new(reply);
        let mut shown = Shown::default();
        let message = answer(&slack, question, &reply, &mut shown).await;
        if let Err(e) = show(&slack.poster, &reply, &mut shown, message).await {
            tracing::error!(target: "cairn::slack", error = %e, "the answer was not posted");
        }
    });
}

/// The answer to `question`: with a configured model, its written answer
/// (a "reading the index" message shown first and updated as the model
/// calls tools); otherwise, or when the model's answer has no evidence or
/// fails, the searched list.
async fn answer(
    slack: &Arc<Slack>,
    question: String,
    reply: &Arc<Reply>,
    shown: &mut Shown,
) -> Value {
    let server = &slack.server;
    if let Err(wait) = slack.budget.take("slack", Instant::now()) {
        return blocks::trouble(&format!(
            "cairn is answering too many questions right now; ask again in {wait} s."
        ));
    }
    let caller = slack.caller();
    let engine = server.live.current();
    let commits: BTreeMap<String, String> = engine
        .version(caller.groups())
        .repos
        .into_iter()
        .filter_map(|r| Some((r.name, r.commit?)))
        .collect();
    let call = || {
        let payer = crate::costs::Payer::new(Arc::clone(&server.costs), caller.name.clone(), false);
        Call::new(Arc::clone(&engine), caller.clone(), "/slack")
            .on(
                server.pool.clone(),
                Deadline::at(Instant::now() + server.deadline),
            )
            .paid_by(Some(payer), false)
    };
    let more = server.public_url.as_deref().map(|base| {
        let q: String = url::form_urlencoded::byte_serialize(question.as_bytes()).collect();
        format!("{}/?q={q}", base.trim_end_matches('/'))
    });
    if let Some(llm) = &server.llm {
        let call = call().with_model(Some(Arc::clone(llm)));
        // Without evidence, or when the model fails, today's cited list says so in words.
        match asked(slack, &question, call, reply, shown).await {
            Ok(asked) if !asked.insufficient_evidence => {
                return blocks::asked(&asked, more.as_deref());
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(target: "cairn::slack", error = %e.detail, "ask failed; answering with the search");
            }
        }
    }
    let args = SearchArgs {
        query: question,
        queries: Vec::new(),
        limit: Some(blocks::MAX_HITS),
        filters: Filters::default(),
        threshold: None,
        mode: None,
    };
    let resp = match crate::ops::run::<Search>(args, call()).await {
        Ok(resp) => resp,
        Err(e) => return blocks::trouble(&format!("cairn could not answer: {}", e.detail)),
    };
    // Each hit's focus lines (its snippet is not them), as the MCP view reads them.
    let cites = <Search as crate::ops::Op>::cites(&resp);
    let focus: Vec<Option<String>> = match crate::mcp_app::read_focus(&cites, call()).await {
        Ok(read) => read.into_iter().map(|r| r.ok().map(|r| r.text)).collect(),
        Err(_) => Vec::new(),
    };
    blocks::answer(&resp, &focus, &commits, more.as_deref())
}

/// Least time between two updates of the "reading the index" message.
const UPDATE_EVERY: Duration = Duration::from_millis(1500);

/// `ask` for `question`, the "reading the index" message shown first and
/// updated with the steps as they come (at most every [`UPDATE_EVERY`],
/// and keeping a `response_url`'s last use for the answer).
async fn asked(
    slack: &Arc<Slack>,
    question: &str,
    call: Call,
    reply: &Arc<Reply>,
    shown: &mut Shown,
) -> Result<AskResponse, ApiError> {
    if let Err(e) = show(&slack.poster, reply, shown, blocks::working(question, &[])).await {
        tracing::warn!(target: "cairn::slack", error = %e, "the first message was not posted");
    }
    let (progress, mut told) = Progress::new(false);
    let args = AskArgs {
        question: question.to_owned(),
        max_steps: None,
    };
    let mut job = std::pin::pin!(crate::ops::run::<Ask>(args, call.with_progress(progress)));
    let sends_left = |shown: &Shown| match reply.as_ref() {
        Reply::ResponseUrl(_) => shown.sends + 1 < RESPONSE_URL_USES,
        Reply::Thread { .. } => true,
    };
    let mut steps = Vec::new();
    let mut last = Instant::now();
    loop {
        tokio::select! {
            biased;
            Some(told) = told.recv() => {
                if let AskEvent::Step(step) = told {
                    steps.push(step);
                }
                if shown.posted() && sends_left(shown) && last.elapsed() >= UPDATE_EVERY {
                    last = Instant::now();
                    if let Err(e) = show(&slack.poster, reply, shown, blocks::working(question, &steps)).await {
                        tracing::warn!(target: "cairn::slack", error = %e, "a progress update was not posted");
                    }
                }
            }
            done = &mut job => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_logged_once_a_second_with_their_count() {
        let t = Throttle::default();
        assert_eq!(t.tick(), Some(1));
        assert!((0..1000).all(|_| t.tick().is_none()));
        std::thread::sleep(Duration::from_millis(1050));
        assert_eq!(t.tick(), Some(1001));
    }

    #[test]
    fn a_mention_is_left_out_of_the_question() {
        assert_eq!(
            question_of("<@U024BE7LH> how do I fit &lt;data&gt;?"),
            "how do I fit <data>?"
        );
        assert_eq!(question_of("<@U1> <@U2>"), "");
    }

    #[test]
    fn answers_go_only_to_slack_or_to_the_configured_api_s_origin() {
        let api = "http://127.0.0.1:9/api";
        assert!(response_url_allowed(
            DEFAULT_API_URL,
            "https://hooks.slack.com/commands/T1/2/x"
        ));
        assert!(response_url_allowed(api, "http://127.0.0.1:9/response/1"));
        assert!(!response_url_allowed(api, "http://127.0.0.1:10/response/1"));
        assert!(!response_url_allowed(
            DEFAULT_API_URL,
            "http://169.254.169.254/latest"
        ));
        assert!(!response_url_allowed(
            DEFAULT_API_URL,
            "https://hooks.slack.com.evil.example/"
        ));
    }
}
