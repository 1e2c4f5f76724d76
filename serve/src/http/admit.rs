//! The second middleware: who may call, one gate after another (the body's
//! form and size, the Host and Origin, the caller's credentials, the
//! budgets), and the caller it admits, with the name its work is paid under.

use super::{AppState, Pages, client};
use crate::auth::Caller;
use crate::auth::Verdict;
use crate::limits::MAX_BODY_BYTES;
use crate::ops::Anonymous;
use crate::problem::ApiError;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, web};
use cairn_search::Code;
use std::sync::Arc;
use std::time::Instant;

/// The server's own routes anyone may call without credentials (besides the
/// public operations). `/metrics` is not one: its cache and error counters
/// say what others asked and when, so it wants a token like the API.
const OPEN_ROUTES: [&str; 3] = [
    "/openapi.json",
    crate::oauth::METADATA_PATH,
    crate::oauth::MCP_METADATA_PATH,
];

/// How long a request waits for its issuer's keys to be fetched again.
const KEY_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether `path` answers without credentials (Slack's routes check
/// Slack's signature instead, and draw from the Slack app's own budget).
fn is_public(path: &str) -> bool {
    OPEN_ROUTES.contains(&path)
        || crate::slack::PATHS.contains(&path)
        || crate::ops::public_paths().any(|p| p == path)
}

/// Second middleware: the Origin check, then who the caller is (and their budget).
pub(super) async fn authenticate(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody + 'static>>, Error> {
    // An access token signed by a key its issuer has not shown us yet (a
    // rotation), or keys past their age: fetch the issuer's keys off this
    // thread, at most once per key-refresh interval, before judging the token.
    if let Some(state) = req.app_data::<web::Data<AppState>>()
        && let Some(rs) = state.auth.oauth()
        && let Some(i) = bearer(&req).and_then(|t| rs.wants_refresh(t))
    {
        let state = state.clone();
        // At most a second: a slow issuer finishes the fetch in the
        // background while this request is judged with the keys at hand.
        let fetch = web::block(move || state.auth.oauth().map(|rs| rs.refresh(i)));
        let _ = tokio::time::timeout(KEY_WAIT, fetch).await;
    }
    match admit(&req) {
        Ok((caller, anonymous, key)) => {
            if anonymous {
                req.extensions_mut().insert(Anonymous);
            }
            if let Some(state) = req.app_data::<web::Data<AppState>>().cloned() {
                if let Err(api) = bound_body(&mut req, &state, anonymous, &key) {
                    return Ok(req.error_response(api).map_into_right_body());
                }
                let payer = crate::costs::Payer::new(Arc::clone(&state.costs), key, anonymous);
                req.extensions_mut().insert(payer);
            }
            req.extensions_mut().insert(caller);
            Ok(next.call(req).await?.map_into_left_body())
        }
        // The error rides on the response; the trace middleware renders it.
        Err(api) => Ok(req.error_response(api).map_into_right_body()),
    }
}

/// Puts `req`'s body under its deadline; an unverified caller (`anonymous`,
/// paying as `key`, its address) takes one of its address's few places for
/// bodies arriving, or is refused unread.
fn bound_body(
    req: &mut ServiceRequest,
    state: &AppState,
    anonymous: bool,
    key: &str,
) -> Result<(), ApiError> {
    let h2 = req.version() == actix_web::http::Version::HTTP_2;
    if !crate::body::has_body(req) && !h2 {
        return Ok(());
    }
    let place = match anonymous {
        true => Some(state.bodies.enter(key.to_owned()).ok_or_else(|| {
            ApiError::new(
                Code::RateLimited,
                format!(
                    "at most {} request bodies at a time from one address before it is verified",
                    state.bodies.per_address
                ),
            )
            .retry_after(1)
        })?),
        false => None,
    };
    crate::body::bound(req, state.bodies.timeout, place);
    Ok(())
}

/// The bearer token of `req`'s Authorization header, if it has one.
fn bearer(req: &ServiceRequest) -> Option<&str> {
    crate::auth::bearer_token(req.headers().get(header::AUTHORIZATION)?.to_str().ok()?)
}

/// Whether the query string carries an OAuth access token (`access_token`).
fn has_query_token(req: &ServiceRequest) -> bool {
    url::form_urlencoded::parse(req.query_string().as_bytes()).any(|(k, _)| k == "access_token")
}

/// The body length a request declares, if it declares one.
fn declared_length(req: &ServiceRequest) -> Option<u64> {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

/// The host a request is addressed to: the Host header, or the URI's
/// authority (HTTP/2). Never `X-Forwarded-Host`: a same-origin page may set it.
fn request_host(req: &ServiceRequest) -> Option<String> {
    match req.headers().get(header::HOST) {
        Some(h) => Some(String::from_utf8_lossy(h.as_bytes()).into_owned()),
        None => req.uri().authority().map(|a| a.as_str().to_owned()),
    }
}

/// Whether `host` (`name`, `name:port`, `1.2.3.4:80`, `[::1]:80`) may be served.
///
/// An IP address is always accepted: DNS rebinding needs a name the attacker
/// controls, and a caller that addresses the server by IP (a load balancer's
/// probe, a pod's health check) is not a browser tricked by DNS. A name must
/// be on `allowed` (as `name` or `name:port`), compared without case.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let host = host.trim();
    let name = match host.strip_prefix('[') {
        // [v6]:port
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        },
    };
    if name.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host))
}

/// The caller of `req`, whether it is anonymous, and the name its work is
/// paid under (its own, or an anonymous visitor's address); or why it may
/// not proceed. The gates run in order, cheapest first, and each refuses on
/// its own: nothing past a refusing gate is looked at.
fn admit(req: &ServiceRequest) -> Result<(Caller, bool, String), ApiError> {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return Err(ApiError::from_status(StatusCode::INTERNAL_SERVER_ERROR, ""));
    };
    body_gate(req)?;
    origin_gate(req, state)?;
    let route = Route::of(req, state);
    let (caller, anonymous) = identify(req, state, &route)?;
    let budget = budget_gate(req, state, &route, &caller, anonymous)?;
    Ok((caller, anonymous, budget))
}

/// The body's form and size, before anything reads it.
fn body_gate(req: &ServiceRequest) -> Result<(), ApiError> {
    // A compressed body is refused unread: decoding is where a kilobyte
    // becomes gigabytes, before any size limit can see it.
    if let Some(enc) = req.headers().get(header::CONTENT_ENCODING)
        && !enc
            .as_bytes()
            .trim_ascii()
            .eq_ignore_ascii_case(b"identity")
    {
        return Err(ApiError::new(
            Code::UnsupportedMediaType,
            "request bodies must not be compressed: send them without Content-Encoding",
        ));
    }
    if declared_length(req).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(ApiError::new(
            Code::PayloadTooLarge,
            format!("request bodies are limited to {MAX_BODY_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// The Host the request is addressed to and the Origin a browser sends.
fn origin_gate(req: &ServiceRequest, state: &AppState) -> Result<(), ApiError> {
    // DNS rebinding: a page on the attacker's name that resolves to this
    // server is same-origin to the browser, so only Host tells it apart.
    if let Some(host) = request_host(req)
        && !host_allowed(&host, &state.hosts)
    {
        return Err(ApiError::new(
            Code::Forbidden,
            "this Host is not served; the operator must add it to the allowed hosts",
        ));
    }
    // Cross-site protection: a browser always sends Origin on a cross-site
    // call; one we do not know never gets an answer.
    if let Some(origin) = req.headers().get(header::ORIGIN)
        && !state
            .origins
            .iter()
            .any(|o| o.as_bytes() == origin.as_bytes())
    {
        return Err(ApiError::new(
            Code::Forbidden,
            "this Origin is not allowed; the operator must add it to the allowed origins",
        ));
    }
    Ok(())
}

/// What the matched path is, for the gates after: a page, open to anyone,
/// or open to anonymous readers under `--public-read`.
struct Route<'a> {
    path: &'a str,
    pages: Option<Pages>,
    page: bool,
    public: bool,
    read_openly: bool,
}

impl<'a> Route<'a> {
    fn of(req: &'a ServiceRequest, state: &AppState) -> Self {
        // Every gate after this one decides on the path the router matches: decoded
        // (`/%6detrics` is `/metrics`), not the raw URI a client chose.
        let path = req.match_info().as_str();
        // Pages answer anonymous visitors (who see documents without groups).
        let pages = req.app_data::<Pages>().copied();
        let page = pages.is_some_and(|p| (p.is_page)(path));
        let public = is_public(path) || page;
        // `--public-read`: the API and MCP answer callers without credentials as
        // anonymous too (`/metrics` still wants a token).
        let read_openly = state.opts.public_read && !public && path != "/metrics";
        Route {
            path,
            pages,
            page,
            public,
            read_openly,
        }
    }
}

/// Who the caller is: its credentials judged (a token, or on a page a
/// signed-in session's cookie), or an anonymous visitor where the route
/// allows one.
fn identify(
    req: &ServiceRequest,
    state: &AppState,
    route: &Route<'_>,
) -> Result<(Caller, bool), ApiError> {
    let Route {
        pages,
        page,
        public,
        read_openly,
        ..
    } = *route;
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if has_query_token(req) {
        // RFC 6750 §2.3 tokens in URLs end up in logs and Referer headers:
        // never accepted, with or without a header, and said so (400
        // invalid_request, §3.1) rather than answered as anonymous.
        let e = ApiError::malformed(
            Some("access_token".to_owned()),
            "a token in the query string is never accepted: send it in the Authorization header",
        );
        return Err(match state.auth.oauth() {
            Some(rs) => e.challenge(rs.challenge(req.path(), Some("invalid_request"))),
            None => e,
        });
    }
    let mut verdict = state.auth.check(presented);
    // A page without a bearer token may carry a signed-in session's cookie.
    if page
        && presented.is_none()
        && verdict == Verdict::Missing
        && let Some(c) = state.sessions.caller(
            pages
                .and_then(|p| (p.session_cookie)(req.request()))
                .as_deref(),
            &state.auth,
        )
    {
        verdict = Verdict::Caller(c);
    }
    // An OAuth resource server's challenge names its metadata, so a client
    // can find where to get a token (RFC 9728 §5.1).
    let challenge = |error: Option<&str>, e: ApiError| match state.auth.oauth() {
        Some(rs) => e.challenge(rs.challenge(req.path(), error)),
        None => e,
    };
    let (caller, anonymous) = match verdict {
        Verdict::Caller(c) => (c, false),
        Verdict::Missing | Verdict::Refused | Verdict::InsufficientScope if public => {
            (Caller::anonymous(), true)
        }
        // Credentials that were sent are still judged: an expired token gets
        // 401, so its client renews it instead of silently seeing less.
        Verdict::Missing if read_openly => (Caller::anonymous(), true),
        Verdict::Missing => {
            let how = match state.auth.oauth() {
                Some(_) => {
                    "send `Authorization: Bearer <token>`: an access token from the authorization server the WWW-Authenticate header's resource_metadata names, or a cairn token"
                }
                None => {
                    "send `Authorization: Bearer <token>` (make one with `cairn token add NAME`)"
                }
            };
            return Err(challenge(None, ApiError::new(Code::Unauthorized, how)));
        }
        Verdict::Refused => {
            return Err(challenge(
                Some("invalid_token"),
                ApiError::new(
                    Code::Unauthorized,
                    "the bearer token is not valid (wrong, revoked or expired; or an access token for another server)",
                ),
            ));
        }
        Verdict::InsufficientScope => {
            return Err(challenge(
                Some("insufficient_scope"),
                ApiError::new(
                    Code::Forbidden,
                    "the access token lacks the scope this server requires (see the WWW-Authenticate header)",
                ),
            ));
        }
    };
    Ok((caller, anonymous))
}

/// The request budgets: the caller's own, then the one all anonymous
/// visitors share. Answers the name the caller's work is paid under.
fn budget_gate(
    req: &ServiceRequest,
    state: &AppState,
    route: &Route<'_>,
    caller: &Caller,
    anonymous: bool,
) -> Result<String, ApiError> {
    let Route {
        path,
        pages,
        page,
        public,
        read_openly,
    } = *route;
    // Pages count against the visitor's budget like API calls: an anonymous
    // visitor's budget is its address's (assets are free), and all anonymous
    // visitors together also draw from one budget, limited by default.
    let counted_page = page && !pages.is_some_and(|p| (p.is_asset)(path));
    // Anonymous API and MCP calls (`--public-read`) draw from the same
    // budgets as anonymous page views.
    let counted = counted_page || (anonymous && read_openly);
    let now = Instant::now();
    let over = |wait: u32, who: &str| {
        ApiError::new(
            Code::RateLimited,
            format!("{who} is over its request budget; retry in {wait} s"),
        )
        .retry_after(wait)
    };
    let budget = match anonymous {
        true => format!(
            "anonymous@{}",
            client::client_ip(
                req.peer_addr().map(|a| a.ip()),
                req.headers(),
                &state.opts.trusted_proxies
            )
            .map(client::visitor)
            .unwrap_or_default()
        ),
        false => caller.name.clone(),
    };
    // The caller's own budget first (an anonymous visitor's is its address's,
    // limited by default), so one visitor refused there draws nothing from
    // the budget all anonymous visitors share.
    let own = match anonymous && counted {
        true => state.limiter.as_ref().or(state.anonymous_each.as_ref()),
        false => state.limiter.as_ref(),
    };
    if (!public || counted)
        && let Some(limiter) = own
        && let Err(wait) = limiter.take(&budget, now)
    {
        return Err(over(wait, &caller.name));
    }
    // Signing in and out never waits on anonymous searches: a flood of those
    // must not keep token holders from signing in.
    if anonymous
        && counted
        && !matches!(path, "/login" | "/logout")
        && let Some(shared) = &state.anonymous
        && let Err(wait) = shared.take("anonymous", now)
    {
        return Err(over(wait, "anonymous use of this server"));
    }
    Ok(budget)
}

#[cfg(test)]
mod tests {
    use super::host_allowed;

    #[test]
    fn hosts_are_names_on_the_list_or_ip_addresses() {
        let allowed = vec!["localhost".to_owned(), "cairn.example.org:8443".to_owned()];
        for ok in [
            "localhost",
            "LocalHost:8080",
            "127.0.0.1",
            "10.0.0.7:8080",
            "[::1]:8080",
            "[fe80::1]",
            "cairn.example.org:8443",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for bad in [
            "rebind.attacker.example",
            "localhost.attacker.example",
            "cairn.example.org",
            "cairn.example.org:80",
            "127.0.0.1.nip.io",
            "",
        ] {
            assert!(!host_allowed(bad, &allowed), "{bad}");
        }
    }
}
