//! Request bodies under a deadline, and few unverified ones per address at
//! once. actix bounds only a request's head in time; a body sent a byte
//! every few seconds would hold its connection (and a file descriptor) for
//! as long as the sender likes. Every body here must arrive whole within
//! [`BodyLimits::timeout`] (else the request fails with 408 and its
//! connection closes), and a caller not yet verified (anonymous, Slack
//! before its signature is checked, a webhook delivery) may have at most
//! [`BodyLimits::per_address`] bodies arriving at once from one address:
//! more are refused (429) unread. Used by `http` (the gate sits in its
//! authentication middleware, which knows who is verified) and `webhook`.

use actix_web::HttpMessage;
use actix_web::dev::{Payload, ServiceRequest};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::web::Bytes;
use futures_util::Stream;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

/// How long a request body may take to arrive, by default.
pub const DEFAULT_BODY_TIMEOUT: Duration =
    Duration::from_millis(crate::limits::DEFAULT_BODY_TIMEOUT_MS);
/// Unverified bodies one address may be sending at once, by default.
pub const DEFAULT_BODIES_PER_ADDRESS: usize = 8;

/// How bodies are bounded, and who is sending which.
pub struct BodyLimits {
    /// How long a body may take to arrive whole.
    pub timeout: Duration,
    /// Unverified bodies one address may be sending at once.
    pub per_address: usize,
    sending: Mutex<HashMap<String, usize>>,
}

impl BodyLimits {
    /// Bodies within `timeout`, at most `per_address` unverified ones per address.
    pub fn new(timeout: Duration, per_address: usize) -> Arc<Self> {
        Arc::new(Self {
            timeout,
            per_address: per_address.max(1),
            sending: Mutex::new(HashMap::new()),
        })
    }

    /// A place for one more unverified body from `address`; `None` when it
    /// is sending [`Self::per_address`] already.
    pub fn enter(self: &Arc<Self>, address: String) -> Option<Sending> {
        let mut sending = self.sending.lock().unwrap_or_else(|p| p.into_inner());
        let n = sending.entry(address.clone()).or_default();
        if *n >= self.per_address {
            return None;
        }
        *n += 1;
        Some(Sending {
            limits: Arc::clone(self),
            address,
        })
    }

    /// Unverified bodies arriving now, from every address.
    pub fn arriving(&self) -> usize {
        let sending = self.sending.lock().unwrap_or_else(|p| p.into_inner());
        sending.values().sum()
    }
}

/// One unverified body's place, given back when the body has arrived, has
/// timed out, or its request is dropped.
pub struct Sending {
    limits: Arc<BodyLimits>,
    address: String,
}

impl Drop for Sending {
    fn drop(&mut self) {
        let mut sending = self
            .limits
            .sending
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = sending.get_mut(&self.address) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                sending.remove(&self.address);
            }
        }
    }
}

/// Whether `req` carries a body (HTTP/1.1 says so by one of these headers;
/// HTTP/2 bodies are bounded all the same, see [`bound`]).
pub fn has_body(req: &ServiceRequest) -> bool {
    let h = req.headers();
    h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// Replaces `req`'s body with one that fails at `timeout` from now,
/// holding `place` until it ends.
pub fn bound(req: &mut ServiceRequest, timeout: Duration, place: Option<Sending>) {
    let inner = req.take_payload();
    let stream = Deadline {
        inner,
        timeout,
        sleep: Box::pin(tokio::time::sleep(timeout)),
        place,
    };
    req.set_payload(Payload::from(
        Box::pin(stream) as Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>>
    ));
}

/// Whether `e` is a body that did not arrive in time (answered 408).
pub fn timed_out(e: &PayloadError) -> bool {
    matches!(e, PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut)
}

/// A body that must end before its sleep does.
struct Deadline {
    inner: Payload,
    timeout: Duration,
    sleep: Pin<Box<tokio::time::Sleep>>,
    place: Option<Sending>,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(next) = Pin::new(&mut self.inner).poll_next(cx) {
            if !matches!(next, Some(Ok(_))) {
                self.place = None;
            }
            return Poll::Ready(next);
        }
        if self.sleep.as_mut().poll(cx).is_ready() {
            self.place = None;
            let secs = self.timeout.as_secs_f64();
            return Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the request body did not arrive within {secs} s"),
            )))));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_few_places_and_gets_them_back() {
        let limits = BodyLimits::new(DEFAULT_BODY_TIMEOUT, 2);
        let a1 = limits.enter("a".into()).expect("first");
        let _a2 = limits.enter("a".into()).expect("second");
        assert!(limits.enter("a".into()).is_none(), "a third from a");
        let _b = limits.enter("b".into()).expect("another address");
        assert_eq!(limits.arriving(), 3);
        drop(a1);
        assert!(limits.enter("a".into()).is_some(), "a place came back");
    }
}
