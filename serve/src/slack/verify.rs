//! Whether a request came from Slack, as Slack specifies: `X-Slack-Signature`
//! is `v0=` and the hex HMAC-SHA256, under the app's signing secret, of
//! `v0:{X-Slack-Request-Timestamp}:{raw body}`; a timestamp more than five
//! minutes from now is refused (a replay), and so is a body over
//! [`MAX_BODY_BYTES`], before anything hashes it.

use crate::signed::hmac_matches;

/// Largest request read (a slash command is a few hundred bytes, an event
/// a few kilobytes).
pub const MAX_BODY_BYTES: usize = 64 << 10;
/// How far a request's timestamp may be from now.
pub const MAX_SKEW_SECONDS: i64 = 5 * 60;

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Over [`MAX_BODY_BYTES`].
    #[error("the body is over {MAX_BODY_BYTES} bytes")]
    TooLarge,
    /// A header is missing or malformed.
    #[error("unsigned: {0} is missing or malformed")]
    Unsigned(&'static str),
    /// The timestamp is too old (or in the future).
    #[error("the request timestamp is more than 5 minutes from now")]
    Stale,
    /// The signature does not match.
    #[error("the signature does not match the signing secret")]
    BadSignature,
}

/// Checks one request's `signature` and `timestamp` headers and body
/// against `secret`, at `now` (seconds since the Unix epoch); answers the
/// signature in one spelling (lower-case hex), which names the request
/// however its header spelled the hex digits.
pub fn verify(
    secret: &[u8],
    signature: Option<&str>,
    timestamp: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<String, Refused> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Refused::TooLarge);
    }
    let ts = timestamp.ok_or(Refused::Unsigned("X-Slack-Request-Timestamp"))?;
    let at: i64 = ts
        .trim()
        .parse()
        .map_err(|_| Refused::Unsigned("X-Slack-Request-Timestamp"))?;
    if now.abs_diff(at) > MAX_SKEW_SECONDS.unsigned_abs() {
        return Err(Refused::Stale);
    }
    let given = signature
        .and_then(|s| s.strip_prefix("v0="))
        .and_then(|h| hex::decode(h).ok())
        .ok_or(Refused::Unsigned("X-Slack-Signature"))?;
    match hmac_matches(secret, &[b"v0:", ts.as_bytes(), b":", body], &given) {
        true => Ok(hex::encode(given)),
        false => Err(Refused::BadSignature),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::Mac;

    fn sign(secret: &[u8], ts: &str, body: &[u8]) -> String {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).expect("key");
        mac.update(format!("v0:{ts}:").as_bytes());
        mac.update(body);
        format!("v0={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn signed_as_slack_signs_and_nothing_else() {
        let (secret, body, now) = (
            b"8f742231b10e8888abcd99yyyzzz85a5",
            b"text=hi",
            1_531_420_618,
        );
        let ts = now.to_string();
        let good = sign(secret, &ts, body);
        assert_eq!(
            verify(secret, Some(&good), Some(&ts), body, now),
            Ok(good[3..].to_owned())
        );
        // The same signature in capitals is the same request.
        assert_eq!(
            verify(
                secret,
                Some(&good.to_uppercase().replace("V0=", "v0=")),
                Some(&ts),
                body,
                now
            ),
            Ok(good[3..].to_owned())
        );
        assert_eq!(
            verify(secret, Some(&good), Some("-9223372036854775808"), body, now),
            Err(Refused::Stale)
        );
        assert_eq!(
            verify(secret, Some(&good), Some(&ts), b"text=ho", now),
            Err(Refused::BadSignature)
        );
        assert_eq!(
            verify(b"another", Some(&good), Some(&ts), body, now),
            Err(Refused::BadSignature)
        );
        assert_eq!(
            verify(secret, Some(&good), Some(&ts), body, now + 301),
            Err(Refused::Stale)
        );
        assert_eq!(
            verify(secret, None, Some(&ts), body, now),
            Err(Refused::Unsigned("X-Slack-Signature"))
        );
        assert_eq!(
            verify(secret, Some(&good), None, body, now),
            Err(Refused::Unsigned("X-Slack-Request-Timestamp"))
        );
        let big = vec![b'a'; MAX_BODY_BYTES + 1];
        let signed_big = sign(secret, &ts, &big);
        assert_eq!(
            verify(secret, Some(&signed_big), Some(&ts), &big, now),
            Err(Refused::TooLarge)
        );
    }
}
