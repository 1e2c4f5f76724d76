//! Posting to Slack, and updating what was posted as an answer progresses:
//! a slash command's `response_url` (a later post with `replace_original`
//! replaces the message; Slack allows 5 uses of one), or `chat.postMessage`
//! in the thread (updated with `chat.update` and the posted message's `ts`).

use actix_web::web;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Where an answer goes.
pub enum Reply {
    /// A slash command's `response_url`.
    ResponseUrl(String),
    /// `chat.postMessage` in a channel's thread.
    Thread {
        /// The channel.
        channel: String,
        /// The thread's first message.
        ts: String,
    },
}

/// Uses of one `response_url` Slack allows.
pub const RESPONSE_URL_USES: u32 = 5;

/// Posts to Slack's API (or to a `response_url`) with the bot's token.
pub struct Poster {
    api_url: String,
    bot_token: Option<String>,
    http: ureq::Agent,
}

impl Poster {
    /// A poster for Slack's API at `api_url`, with the bot's token when there is one.
    pub fn new(api_url: String, bot_token: Option<String>) -> Self {
        let http = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .build()
            .into();
        Self {
            api_url,
            bot_token,
            http,
        }
    }

    /// Posts `message` where `reply` says: the posted message's `ts` when
    /// Slack gives one (`chat.postMessage` does).
    pub fn post(&self, reply: &Reply, mut message: Value) -> Result<Option<String>, String> {
        message["unfurl_links"] = false.into();
        message["unfurl_media"] = false.into();
        match reply {
            Reply::ResponseUrl(url) => {
                message["response_type"] = "in_channel".into();
                message["replace_original"] = false.into();
                self.send(url, false, &message).map(|_| None)
            }
            Reply::Thread { channel, ts } => {
                message["channel"] = channel.as_str().into();
                message["thread_ts"] = ts.as_str().into();
                let answer = self.send(&self.method("chat.postMessage"), true, &message)?;
                Ok(answer["ts"].as_str().map(str::to_owned))
            }
        }
    }

    /// Replaces the message posted at `reply` (`posted`: its `ts`) with
    /// `message`; posts it anew where there is nothing to replace.
    pub fn update(
        &self,
        reply: &Reply,
        posted: Option<&str>,
        mut message: Value,
    ) -> Result<(), String> {
        match (reply, posted) {
            (Reply::ResponseUrl(url), _) => {
                message["response_type"] = "in_channel".into();
                message["replace_original"] = true.into();
                self.send(url, false, &message).map(|_| ())
            }
            (Reply::Thread { channel, .. }, Some(ts)) => {
                message["channel"] = channel.as_str().into();
                message["ts"] = ts.into();
                self.send(&self.method("chat.update"), true, &message)
                    .map(|_| ())
            }
            (Reply::Thread { .. }, None) => self.post(reply, message).map(|_| ()),
        }
    }

    /// The Web API method `name`'s URL.
    fn method(&self, name: &str) -> String {
        format!("{}/{name}", self.api_url.trim_end_matches('/'))
    }

    /// Sends `message` to `url` (with the bot's token when `bot`): Slack's answer.
    fn send(&self, url: &str, bot: bool, message: &Value) -> Result<Value, String> {
        let mut req = self
            .http
            .post(url)
            .header("Content-Type", "application/json; charset=utf-8");
        if bot {
            let Some(token) = &self.bot_token else {
                return Err(
                    "no bot token (--slack-bot-token-file): events cannot be answered".into(),
                );
            };
            req = req.header("Authorization", &format!("Bearer {token}"));
        }
        let mut resp = req
            .send(message.to_string().as_bytes())
            .map_err(|e| format!("{url}: {e}"))?;
        let status = resp.status();
        let body = resp
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .unwrap_or_default();
        // The Web API says `{"ok": false, "error": …}` with a 200.
        let answer = serde_json::from_str::<Value>(&body).unwrap_or(Value::Null);
        match status.is_success() && answer["ok"] != false {
            true => Ok(answer),
            false => Err(format!("{url}: {status}: {body}")),
        }
    }
}

/// The message shown for one answer so far: whether one was posted, its
/// `ts` where Slack gave one, and how many times it was sent.
#[derive(Default)]
pub struct Shown {
    posted: bool,
    ts: Option<String>,
    /// Messages sent for the answer so far (a `response_url` takes 5).
    pub sends: u32,
}

impl Shown {
    /// Whether a message was posted (and may be updated).
    pub fn posted(&self) -> bool {
        self.posted
    }
}

/// Posts `message` with `poster`, or replaces the one already `shown` with it.
pub async fn show(
    poster: &Arc<Poster>,
    reply: &Arc<Reply>,
    shown: &mut Shown,
    message: Value,
) -> Result<(), String> {
    let (p, r, posted, ts) = (
        Arc::clone(poster),
        Arc::clone(reply),
        shown.posted,
        shown.ts.clone(),
    );
    shown.sends += 1;
    let sent = web::block(move || match posted {
        true => p.update(&r, ts.as_deref(), message).map(|()| ts),
        false => p.post(&r, message),
    })
    .await
    .map_err(|e| e.to_string())??;
    shown.posted = true;
    shown.ts = sent;
    Ok(())
}
