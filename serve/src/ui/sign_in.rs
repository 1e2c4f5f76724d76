//! Signing in and out of the web page: the form, the token checked, the
//! session cookie set and cleared, and who a request is signed in as.

use super::response::{html_response, ok_page};
use super::{html, pages};
use crate::http::AppState;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};

/// The session id a request's cookie carries.
pub(super) fn session_cookie(req: &HttpRequest) -> Option<String> {
    req.cookie(crate::session::COOKIE)
        .map(|c| c.value().to_owned())
}

/// Who the page is for, in words, for the sign-in page.
pub(super) fn signed_in_as(req: &HttpRequest) -> Option<String> {
    use actix_web::HttpMessage;
    let anonymous = req.extensions().contains::<crate::http::Anonymous>();
    match anonymous {
        true => None,
        false => req
            .extensions()
            .get::<crate::auth::Caller>()
            .map(|c| c.name.clone()),
    }
}

pub(super) async fn login_form(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    let main = pages::login(state.auth.is_open(), signed_in_as(&req).as_deref(), None);
    ok_page(
        "Sign in",
        &main,
        &state.live.current().snapshot().version.to_string(),
    )
}

/// A sign-in: the token comes in the form body, the session in an HttpOnly cookie.
pub(super) async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let token = url::form_urlencoded::parse(&body)
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let version = state.live.current().snapshot().version.to_string();
    let refuse = |why: &str| {
        let main = pages::login(false, None, Some(why));
        let footer = format!("index <code>{}</code>", html::esc(&version));
        html_response(
            actix_web::http::StatusCode::UNAUTHORIZED,
            html::page("Sign in", &main, &footer),
        )
    };
    let Some(digest) = crate::auth::Authenticator::token_digest(&token) else {
        return refuse(
            "That is not a cairn token (they start with the prefix `cairn token add` prints).",
        );
    };
    if state.auth.caller_of_digest(&digest).is_none() {
        return refuse("That token is not valid (wrong, revoked or expired).");
    }
    // Signing in again ends the session the browser held: one cookie, one
    // live session (no older identity left valid for its lifetime).
    if let Some(old) = session_cookie(&req) {
        state.sessions.close(&old);
    }
    let id = state.sessions.open(digest);
    let secure = req.connection_info().scheme() == "https"
        || state
            .opts
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"));
    let cookie = actix_web::cookie::Cookie::build(crate::session::COOKIE, id)
        .path("/")
        .http_only(true)
        .same_site(actix_web::cookie::SameSite::Strict)
        .secure(secure)
        .max_age(actix_web::cookie::time::Duration::seconds(
            crate::session::LIFETIME.as_secs() as i64,
        ))
        .finish();
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/"))
        .cookie(cookie)
        .finish()
}

pub(super) async fn logout(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    if let Some(id) = session_cookie(&req) {
        state.sessions.close(&id);
    }
    let mut gone = actix_web::cookie::Cookie::build(crate::session::COOKIE, "")
        .path("/")
        .http_only(true)
        .same_site(actix_web::cookie::SameSite::Strict)
        .finish();
    gone.make_removal();
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/"))
        .cookie(gone)
        .finish()
}
