//! Push webhooks for `cairn watch`: GitHub's `push` event, signed with
//! `X-Hub-Signature-256` (HMAC-SHA256 of the raw body), and GitLab's push
//! hook, carrying `X-Gitlab-Token`; both secrets compared in constant time
//! before the body is read as JSON. A valid push for a watched repository
//! wakes the watch at once (its next poll sees the ref move and builds); a
//! push for another repository is acknowledged and ignored; everything else
//! is refused with its status and builds nothing. A push is remembered by
//! its ref and commit as well as its delivery id (which its signature does
//! not cover), so a captured delivery replayed under a new id is refused.
//! Every body arrives within [`body::DEFAULT_BODY_TIMEOUT`], at most a few
//! at once from one address, over at most [`MAX_CONNECTIONS`] connections.
//! The listener is its own small server, separate from `cairn serve`,
//! which stays read-only.

use crate::body::{self, BodyLimits};
use crate::signed::{RecentIds, hmac_matches};
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::{Next, from_fn};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, guard, web};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::mpsc::Sender;
use subtle::ConstantTimeEq;

/// Largest delivery read (GitHub caps its payloads at 25 MB; a push of a
/// few commits is kilobytes, and nothing here needs more than the names).
pub const MAX_DELIVERY_BYTES: usize = 1 << 20;
/// Delivery ids remembered, so a replayed delivery is refused.
const REMEMBERED: usize = 4096;

/// One watched repository: its name and the addresses a webhook may name it by.
#[derive(Clone, Debug)]
pub struct Watched {
    /// Its name in repositories.yml (what wakes the watch).
    pub name: String,
    /// Its fetch URL and web URL.
    pub urls: Vec<String>,
}

/// What the listener checks deliveries against.
pub struct Hooks {
    secret: Vec<u8>,
    repos: Vec<(String, Vec<String>)>,
    seen: RecentIds,
    wake: Mutex<Sender<String>>,
}

impl Hooks {
    /// Deliveries signed with `secret`, for `repos`, waking the watch through `wake`.
    pub fn new(secret: Vec<u8>, repos: Vec<Watched>, wake: Sender<String>) -> Self {
        Self {
            secret,
            repos: repos
                .into_iter()
                .map(|r| (r.name, r.urls.iter().map(|u| url_key(u)).collect()))
                .collect(),
            seen: RecentIds::new(REMEMBERED),
            wake: Mutex::new(wake),
        }
    }
}

/// A URL as a key that its other spellings share: no scheme, credentials,
/// `.git` or trailing slash, lower case (`git@github.com:a/b.git`,
/// `https://github.com/a/b` and `https://github.com/A/b.git` are one).
pub fn url_key(url: &str) -> String {
    let u = url.trim().to_ascii_lowercase();
    let u = u.split_once("://").map_or(u.as_str(), |(_, rest)| rest);
    let u = u.rsplit_once('@').map_or(u, |(_, host)| host);
    let u = u.trim_end_matches('/').trim_end_matches(".git");
    // scp-like `host:owner/name`.
    match u.split_once(':') {
        Some((host, path))
            if !path.starts_with(|c: char| c.is_ascii_digit()) && !host.contains('/') =>
        {
            format!("{host}/{path}")
        }
        _ => u.to_owned(),
    }
}

/// A delivery's answer: its status and what it says.
type Answer = (StatusCode, String);

fn refuse(status: StatusCode, why: impl Into<String>) -> Answer {
    (status, why.into())
}

impl Hooks {
    /// Judges one delivery and, when it is a valid push for a watched
    /// repository, wakes the watch.
    pub fn deliver(&self, req: &HttpRequest, body: &[u8]) -> Answer {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());

        let (event, delivery) = if let Some(event) = header("x-github-event") {
            let Some(signature) = header("x-hub-signature-256") else {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "unsigned: X-Hub-Signature-256 is missing",
                );
            };
            if !self.signed(signature, body) {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "the signature does not match the secret",
                );
            }
            (event, header("x-github-delivery"))
        } else if let Some(event) = header("x-gitlab-event") {
            let token = header("x-gitlab-token").unwrap_or("").as_bytes();
            if !bool::from(token.ct_eq(&self.secret)) || token.is_empty() {
                return refuse(
                    StatusCode::UNAUTHORIZED,
                    "X-Gitlab-Token does not match the secret",
                );
            }
            (event, header("x-gitlab-event-uuid"))
        } else {
            return refuse(
                StatusCode::BAD_REQUEST,
                "not a GitHub or GitLab webhook delivery",
            );
        };
        match event {
            "ping" => return (StatusCode::OK, "pong".to_owned()),
            "push" | "Push Hook" | "Tag Push Hook" => {}
            other => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    format!("event {other:?} is not handled: send push events only"),
                );
            }
        }
        // The delivery id is not signed: a captured delivery replays under a
        // new one. So the push itself is remembered too, by what it says
        // moved (its ref and new commit), or by its signed bytes.
        if let Some(id) = delivery
            && !self.seen.first_time(&format!("id:{id}"))
        {
            return refuse(
                StatusCode::CONFLICT,
                format!("delivery {id} was already received"),
            );
        }
        let Ok(payload) = serde_json::from_slice::<serde_json::Value>(body) else {
            return refuse(StatusCode::BAD_REQUEST, "the body is not JSON");
        };
        let named: Vec<String> = [
            &payload["repository"]["clone_url"],
            &payload["repository"]["html_url"],
            &payload["repository"]["ssh_url"],
            &payload["repository"]["git_url"],
            &payload["project"]["git_http_url"],
            &payload["project"]["git_ssh_url"],
            &payload["project"]["web_url"],
        ]
        .iter()
        .filter_map(|v| v.as_str())
        .map(url_key)
        .collect();
        let watched: Vec<&String> = self
            .repos
            .iter()
            .filter(|(_, keys)| keys.iter().any(|k| named.contains(k)))
            .map(|(name, _)| name)
            .collect();
        if watched.is_empty() {
            return (
                StatusCode::ACCEPTED,
                "not a watched repository: ignored".to_owned(),
            );
        }
        if !self.seen.first_time(&push_key(&watched, &payload, body)) {
            return refuse(
                StatusCode::CONFLICT,
                "this push was already received (same ref and commit)",
            );
        }
        if let Ok(wake) = self.wake.lock() {
            for name in &watched {
                let _ = wake.send((*name).clone());
            }
        }
        tracing::info!(target: "cairn::watch", repos = ?watched, "push delivered");
        (StatusCode::ACCEPTED, "a build follows".to_owned())
    }

    /// Whether `signature` (`sha256=<hex>`) is the body's HMAC under the secret.
    fn signed(&self, signature: &str, body: &[u8]) -> bool {
        signature
            .strip_prefix("sha256=")
            .and_then(|h| hex::decode(h).ok())
            .is_some_and(|given| hmac_matches(&self.secret, &[body], &given))
    }
}

/// What names one push whatever delivery carries it: the repositories it
/// wakes, its ref and the commit it moved the ref to (GitHub's and GitLab's
/// `ref` and `after`), or, without those, the sha256 of its signed body.
fn push_key(watched: &[&String], payload: &serde_json::Value, body: &[u8]) -> String {
    use sha2::Digest;
    let names: Vec<&str> = watched.iter().map(|n| n.as_str()).collect();
    match (payload["ref"].as_str(), payload["after"].as_str()) {
        (Some(r), Some(after)) => format!("push:{}:{r}:{after}", names.join(",")),
        _ => format!("body:{}", hex::encode(sha2::Sha256::digest(body))),
    }
}

/// Whether a request's body is compressed: refused before anything reads
/// it, since decoding is where a kilobyte becomes gigabytes (and GitHub and
/// GitLab never compress deliveries).
fn compressed(ctx: &actix_web::guard::GuardContext<'_>) -> bool {
    ctx.head()
        .headers()
        .get(actix_web::http::header::CONTENT_ENCODING)
        .is_some_and(|e| !e.as_bytes().trim_ascii().eq_ignore_ascii_case(b"identity"))
}

async fn refuse_compressed() -> HttpResponse {
    HttpResponse::UnsupportedMediaType()
        .content_type("text/plain; charset=utf-8")
        .body("deliveries must not be compressed")
}

async fn hook(
    req: HttpRequest,
    body: Result<web::Bytes, actix_web::Error>,
    hooks: web::Data<Hooks>,
) -> HttpResponse {
    let (status, message) = match body {
        Ok(body) => hooks.deliver(&req, &body),
        Err(e) => {
            let late = e
                .as_error::<actix_web::error::PayloadError>()
                .is_some_and(body::timed_out);
            let status = match late {
                true => StatusCode::REQUEST_TIMEOUT,
                false => e.as_response_error().status_code(),
            };
            (status, e.to_string())
        }
    };
    if status.is_client_error() {
        tracing::warn!(target: "cairn::watch", status = status.as_u16(), %message, "webhook refused");
    }
    let mut answer = HttpResponse::build(status);
    if status == StatusCode::REQUEST_TIMEOUT {
        // What is left of the body is never read: the connection ends here.
        answer.force_close();
    }
    answer
        .content_type("text/plain; charset=utf-8")
        .body(message)
}

/// Connections the listener holds at once (more wait in the kernel's
/// backlog, holding no descriptor of the watch's).
const MAX_CONNECTIONS: usize = 64;

/// Every delivery's body under the deadline, and at most a few arriving
/// from one address at once (none is verified before it has arrived).
async fn bound_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static>>, actix_web::Error> {
    let limits = req.app_data::<web::Data<Arc<BodyLimits>>>().cloned();
    if let Some(limits) = limits {
        let address = req
            .peer_addr()
            .map(|a| a.ip().to_string())
            .unwrap_or_default();
        let Some(place) = limits.enter(address) else {
            let refused = HttpResponse::TooManyRequests()
                .insert_header(("Retry-After", "1"))
                .insert_header(("Connection", "close"))
                .content_type("text/plain; charset=utf-8")
                .body("too many deliveries arriving from this address at once");
            return Ok(req.into_response(refused).map_into_right_body());
        };
        body::bound(&mut req, limits.timeout, Some(place));
    }
    Ok(next.call(req).await?.map_into_left_body())
}

/// Serves `POST /` (and `POST /webhook`) on `addr` in a thread of its own;
/// answers the address it bound.
pub fn spawn(addr: SocketAddr, hooks: Hooks) -> std::io::Result<SocketAddr> {
    let hooks = web::Data::new(hooks);
    let limits = web::Data::new(BodyLimits::new(
        body::DEFAULT_BODY_TIMEOUT,
        body::DEFAULT_BODIES_PER_ADDRESS,
    ));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let run = actix_web::rt::System::new().block_on(async move {
            let server = HttpServer::new(move || {
                App::new()
                    .app_data(hooks.clone())
                    .app_data(limits.clone())
                    .wrap(from_fn(bound_body))
                    .app_data(web::PayloadConfig::new(MAX_DELIVERY_BYTES))
                    .route(
                        "/",
                        web::post()
                            .guard(guard::fn_guard(compressed))
                            .to(refuse_compressed),
                    )
                    .route(
                        "/webhook",
                        web::post()
                            .guard(guard::fn_guard(compressed))
                            .to(refuse_compressed),
                    )
                    .route("/", web::post().to(hook))
                    .route("/webhook", web::post().to(hook))
            })
            .workers(1)
            .max_connections(MAX_CONNECTIONS)
            // SIGTERM is the watch's to take (it stops the process, between
            // or in the middle of builds, which publish atomically); actix
            // would catch it and stop only this listener.
            .disable_signals()
            .bind(addr);
            match server {
                Ok(s) => {
                    let bound = s.addrs().first().copied();
                    let _ = tx.send(bound.ok_or_else(|| std::io::Error::other("no address bound")));
                    s.run().await
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    Ok(())
                }
            }
        });
        if let Err(e) = run {
            tracing::error!(target: "cairn::watch", error = %e, "the webhook listener stopped");
        }
    });
    rx.recv()
        .map_err(|_| std::io::Error::other("the webhook listener did not start"))?
}

#[cfg(test)]
mod tests {
    use super::url_key;

    #[test]
    fn one_repository_has_one_key_however_it_is_written() {
        for u in [
            "https://github.com/rpoleski/MulensModel",
            "https://github.com/rpoleski/MulensModel.git",
            "git@github.com:rpoleski/MulensModel.git",
            "ssh://git@github.com/rpoleski/MulensModel",
            "https://token@GitHub.com/rpoleski/mulensmodel/",
        ] {
            assert_eq!(url_key(u), "github.com/rpoleski/mulensmodel", "{u}");
        }
        assert_eq!(url_key("/srv/mirrors/alpha.git"), "/srv/mirrors/alpha");
        assert_eq!(url_key("http://127.0.0.1:8080/a/b"), "127.0.0.1:8080/a/b");
    }
}
