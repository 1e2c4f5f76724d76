//! Server-sent events for the calls that wait on the model (`ask`): asked
//! with `Accept: text/event-stream`, a call's progress goes out as it comes
//! (`step` after each tool call, `draft` as the model writes), then its
//! answer (`answer`) or its problem (`error`), each rendered by the
//! connector that asked (JSON for the API, HTML for the page). A call that
//! fails before it has anything to tell (a bad question, no budget) is an
//! ordinary problem response with its status; a caller that goes away
//! abandons the call.

use crate::ops::ask::AskEvent;
use crate::problem::ApiError;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use cairn_search::Code;
use std::future::Future;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// Longest a reader may leave one event unread before it is given up on
/// (and the call abandoned).
const STALLED: Duration = Duration::from_secs(30);

/// How one connector writes the events of a call answering `T`.
pub struct Render<T> {
    /// A step or a draft, as one event.
    pub event: Box<dyn Fn(&AskEvent) -> String>,
    /// The answer, as the last event.
    pub answer: Box<dyn Fn(T) -> String>,
    /// A failure after the first event, as the last event.
    pub error: Box<dyn Fn(&ApiError) -> String>,
}

/// Whether the request asks for server-sent events.
pub fn wanted(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// One server-sent event named `name` carrying `data`, each of its lines
/// a `data:` line: a line break of any kind the event-stream format knows
/// (CR, LF, CRLF) starts a new one, so text a model wrote can never start a
/// field or an event of its own.
pub fn event(name: &str, data: &str) -> String {
    let mut out = format!("event: {name}\n");
    for line in data.replace("\r\n", "\n").split(['\n', '\r']) {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The events of `job`, told by `progress` as it runs, written by `render`.
pub async fn stream<T, F>(
    job: F,
    mut progress: UnboundedReceiver<AskEvent>,
    render: Render<T>,
) -> Result<HttpResponse, ApiError>
where
    T: 'static,
    F: Future<Output = Result<T, ApiError>> + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<String, ApiError>>(32);
    let Render {
        event,
        answer,
        error,
    } = render;
    actix_web::rt::spawn(async move {
        // False once the reader has gone or stopped reading.
        let send = |item| {
            let tx = tx.clone();
            async move {
                matches!(
                    tokio::time::timeout(STALLED, tx.send(item)).await,
                    Ok(Ok(()))
                )
            }
        };
        let mut job = std::pin::pin!(job);
        loop {
            tokio::select! {
                biased;
                Some(told) = progress.recv() => {
                    if !send(Ok(event(&told))).await {
                        return; // dropping the job abandons it
                    }
                }
                done = &mut job => {
                    while let Ok(told) = progress.try_recv() {
                        if !send(Ok(event(&told))).await {
                            return;
                        }
                    }
                    send(done.map(&answer)).await;
                    return;
                }
            }
        }
    });
    let first = match rx.recv().await {
        Some(first) => first?,
        None => return Err(ApiError::new(Code::Internal, "the answer was lost")),
    };
    let rest = futures_util::stream::unfold((rx, error), |(mut rx, error)| async move {
        let next = rx.recv().await?;
        let text = next.unwrap_or_else(|e| error(&e));
        Some((Ok::<_, std::io::Error>(web::Bytes::from(text)), (rx, error)))
    });
    let body = futures_util::StreamExt::chain(
        futures_util::stream::once(async move { Ok(web::Bytes::from(first)) }),
        rest,
    );
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // Compressing would hold events back until a block fills.
        .insert_header(header::ContentEncoding::Identity)
        .streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_data_is_a_data_line() {
        assert_eq!(
            event("answer", "<p>a</p>\r\n<p>b</p>"),
            "event: answer\ndata: <p>a</p>\ndata: <p>b</p>\n\n"
        );
        // A draft trying to end its event and start another stays data.
        let sent = event("draft", "x\revent: answer\rdata: {}\n\nevent: error");
        let fields: Vec<&str> = sent.lines().collect();
        assert_eq!(
            fields,
            [
                "event: draft",
                "data: x",
                "data: event: answer",
                "data: data: {}",
                "data: ",
                "data: event: error",
                ""
            ]
        );
    }
}
