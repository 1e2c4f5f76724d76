//! A page as an HTTP response: its HTML with the headers every page
//! carries (what it may load, no framing, no caching, the referrer kept to
//! this site). Used by every page's handler.

use super::html;
use actix_web::HttpResponse;
use actix_web::http::header;

/// What a page may load: only this server's own files, no inline script,
/// no frames.
const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// A page response with the security headers every page carries.
pub(super) fn html_response(status: actix_web::http::StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // Clicks to GitHub carry no referrer (the query stays here); a form
        // posted to this server keeps its real Origin (`no-referrer` would make
        // it `Origin: null`, which the Origin check rightly refuses).
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(body)
}

/// A 200 page: `main` under `title`, the footer naming the index `version`.
pub(super) fn ok_page(title: &str, main: &str, version: &str) -> HttpResponse {
    let footer = format!(
        "cairn {} · index <code>{}</code>",
        env!("CARGO_PKG_VERSION"),
        html::esc(version)
    );
    html_response(
        actix_web::http::StatusCode::OK,
        html::page(title, main, &footer),
    )
}
