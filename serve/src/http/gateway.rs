//! The chat gateway, `POST /v1/chat/completions` (served when a model is
//! configured): a caller's OpenAI Chat Completions request, its last user
//! message answered from the index first (the `context` operation, with the
//! caller's own access, so a restricted document never reaches a prompt it
//! may not see), the passages added to its system message within a token
//! budget, the request forwarded to the configured model, and the model's
//! answer returned as the endpoint wrote it with those passages as
//! `citations`. `"use_rag": false` forwards the request untouched; `"rag"`
//! takes the `context` operation's options (filters, `max_tokens`, …);
//! `"stream": true` relays the model's server-sent events as they come,
//! with the citations as one more event before `data: [DONE]`.

use super::api::call;
use super::state::AppState;
use crate::llm::{Assembly, MAX_MODEL_WAITS, MAX_MODEL_WAITS_EACH, ModelPlace};
use crate::ops::context::{Context, ContextArgs};
use crate::ops::{Anonymous, Input};
use crate::problem::ApiError;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::{Code, ContextResponse};
use serde_json::{Map, Value, json};

/// The gateway's route.
pub const PATH: &str = "/v1/chat/completions";

/// Mounts the gateway.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).route(web::post().to(chat)));
}

/// A gateway request as cairn reads it: the body to forward (cairn's own
/// fields taken out), whether to ground it, and the grounding's options.
struct GatewayRequest {
    body: Map<String, Value>,
    use_rag: bool,
    rag: Map<String, Value>,
    /// The answer wanted as server-sent events.
    stream: bool,
}

async fn chat(
    state: web::Data<AppState>,
    req: HttpRequest,
    bytes: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let Some(llm) = state.llm.clone() else {
        return Err(ApiError::new(Code::NotFound, "no model is configured"));
    };
    if req.extensions().contains::<Anonymous>() {
        return Err(ApiError::new(
            Code::Unauthorized,
            "the chat gateway spends the configured model's tokens: send a token",
        ));
    }
    // The same content-type rule as every other JSON body.
    super::api::body(&req, &bytes)?;
    let mut request = parse(&bytes)?;
    let grounding = match request.use_rag {
        true => Some(ground(&state, &req, &mut request).await?),
        false => None,
    };
    let grounds = grounding.as_ref().map(Grounds::of);
    let caller = req
        .extensions()
        .get::<cairn_search::Caller>()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    llm.spending().allow(&caller).map_err(ApiError::from)?;
    let Some(place) = ModelPlace::take(&caller) else {
        return Err(ApiError::new(
            Code::Overloaded,
            format!(
                "{MAX_MODEL_WAITS} answers (or {MAX_MODEL_WAITS_EACH} of yours) are waiting on the model; retry shortly"
            ),
        )
        .retry_after(1));
    };
    if request.stream {
        return stream(llm, request.body, grounds, place, caller).await;
    }
    let until = std::time::Instant::now() + llm.config().timeout;
    let body = request.body;
    let client = std::sync::Arc::clone(&llm);
    let (mut answer, usage) = web::block(move || {
        let _place = place;
        client.forward(body, Some(until))
    })
    .await
    .map_err(|_| ApiError::new(Code::Internal, "the model's request was lost"))?
    .map_err(refused)?;
    llm.spending().spend(&caller, &usage);
    if let (Some(g), Some(fields)) = (grounds, answer.as_object_mut()) {
        fields.extend(g.0);
    }
    Ok(HttpResponse::Ok().json(answer))
}

/// What the gateway adds to an answer: its `citations`,
/// `insufficient_evidence` and `index_version`.
struct Grounds(Map<String, Value>);

impl Grounds {
    fn of(context: &ContextResponse) -> Self {
        let mut fields = Map::new();
        fields.insert(
            "citations".to_owned(),
            serde_json::to_value(&context.citations).unwrap_or_default(),
        );
        fields.insert(
            "insufficient_evidence".to_owned(),
            context.insufficient_evidence.into(),
        );
        fields.insert(
            "index_version".to_owned(),
            context.index_version.clone().into(),
        );
        Self(fields)
    }
}

/// The model's failure as the caller is told it, logged whole first.
fn refused(e: crate::llm::LlmError) -> ApiError {
    tracing::warn!(target: "cairn::llm", error = %e, "the gateway's model request failed");
    ApiError::from(e)
}

/// A streamed request: the model's server-sent events relayed as they
/// arrive, with one more event before `data: [DONE]` holding the grounds
/// (`"object": "cairn.citations"`). The model's error, before any event,
/// is a problem like any other.
async fn stream(
    llm: std::sync::Arc<crate::llm::LlmClient>,
    body: Map<String, Value>,
    grounds: Option<Grounds>,
    place: ModelPlace,
    caller: String,
) -> Result<HttpResponse, ApiError> {
    let until = std::time::Instant::now() + llm.config().timeout;
    let prompt_chars = body.get("messages").map_or(0, |m| m.to_string().len());
    let client = std::sync::Arc::clone(&llm);
    let events = web::block(move || client.forward_stream(body))
        .await
        .map_err(|_| ApiError::new(Code::Internal, "the model's request was lost"))?
        .map_err(refused)?;
    let tail = grounds.map(|mut g| {
        g.0.insert("object".to_owned(), "cairn.citations".into());
        format!("data: {}\n\n", Value::Object(g.0))
    });
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<web::Bytes, std::io::Error>>(16);
    std::thread::Builder::new()
        .name("cairn-gateway-stream".into())
        .spawn(move || {
            let _place = place;
            let read = relay(events, tail, &tx, until);
            llm.spending().spend(&caller, &read.usage(prompt_chars));
        })
        .map_err(|_| {
            ApiError::new(Code::Overloaded, "no thread to relay the answer").retry_after(1)
        })?;
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("cache-control", "no-cache"))
        // Compressing would hold events back until a block fills.
        .insert_header(actix_web::http::header::ContentEncoding::Identity)
        .streaming(body))
}

/// Copies `events` line by line to `tx`, putting `tail` before the
/// `data: [DONE]` that ends them (and ending them so if the model did not);
/// stops when the caller has gone. What was relayed, assembled (for its usage).
fn relay(
    mut events: Box<dyn std::io::BufRead + Send>,
    tail: Option<String>,
    tx: &tokio::sync::mpsc::Sender<Result<web::Bytes, std::io::Error>>,
    until: std::time::Instant,
) -> Assembly {
    let mut read = Assembly::default();
    // A caller that stops reading is given up on at the deadline, not waited for.
    let send = |text: String| {
        let mut item = Ok(web::Bytes::from(text));
        loop {
            match tx.try_send(item) {
                Ok(()) => return true,
                Err(tokio::sync::mpsc::error::TrySendError::Full(back)) => {
                    if std::time::Instant::now() >= until {
                        return false;
                    }
                    item = back;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => return false,
            }
        }
    };
    let mut line = String::new();
    loop {
        line.clear();
        match events.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.trim_end() == "data: [DONE]" => break,
            Ok(_) => {
                // Relayed as the model wrote it, read or not.
                let _ = read.take(&line);
                if !send(std::mem::take(&mut line)) {
                    return read;
                }
            }
        }
    }
    if let Some(t) = tail
        && !send(t)
    {
        return read;
    }
    send("data: [DONE]\n\n".to_owned());
    read
}

/// The body as a gateway request: a JSON object with a non-empty
/// `messages` list, cairn's `use_rag` (default true) and `rag` taken out.
fn parse(bytes: &[u8]) -> Result<GatewayRequest, ApiError> {
    let mut body: Map<String, Value> = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::malformed(None, format!("not a JSON object: {e}")))?;
    let use_rag = match body.remove("use_rag") {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(ApiError::invalid("use_rag", "true or false")),
    };
    let rag = match body.remove("rag") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(ApiError::invalid("rag", "an object of the context options")),
    };
    if body
        .get("messages")
        .and_then(Value::as_array)
        .is_none_or(|m| m.is_empty())
    {
        return Err(ApiError::invalid(
            "messages",
            "a non-empty list of chat messages",
        ));
    }
    let stream = match body.remove("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(ApiError::invalid("stream", "true or false")),
    };
    Ok(GatewayRequest {
        body,
        use_rag,
        rag,
        stream,
    })
}

/// Grounds `request`: the context for its last user message, as the caller
/// may see it, added to its system message. Returns what it cites.
async fn ground(
    state: &AppState,
    req: &HttpRequest,
    request: &mut GatewayRequest,
) -> Result<cairn_search::ContextResponse, ApiError> {
    for own in ["query", "messages"] {
        if request.rag.contains_key(own) {
            return Err(ApiError::invalid(
                format!("rag.{own}"),
                "the question is the last user message",
            ));
        }
    }
    let messages = request
        .body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let question = last_question(&messages)
        .ok_or_else(|| ApiError::invalid("messages", "holds no user message with text"))?;
    let mut options = request.rag.clone();
    options.insert("query".to_owned(), question.into());
    let args = Input::Value(Value::Object(options))
        .parse::<ContextArgs>()
        .map_err(in_request)?;
    let context = crate::ops::run::<Context>(args, call(state, req))
        .await
        .map_err(in_request)?;
    request.body.insert(
        "messages".to_owned(),
        Value::Array(with_context(messages, &context.context)),
    );
    Ok(context)
}

/// `e` with its field named as the gateway's request has it: the question
/// is the last user message, every other option is under `rag`.
fn in_request(e: ApiError) -> ApiError {
    let field = e.field.as_deref().map(|f| match f {
        "query" => "messages".to_owned(),
        f => format!("rag.{f}"),
    });
    ApiError { field, ..e }
}

/// The text of the last user message: its string, or its text parts joined.
fn last_question(messages: &[Value]) -> Option<String> {
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .find_map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter(|p| p["type"] == "text")
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (!text.trim().is_empty()).then_some(text)
        })
}

/// `messages` with `block` added to the first system (or developer)
/// message, as text or as a text part as its content is written; a system
/// message is put first when there is none. (The `context` operation does
/// the same for its typed messages; this one keeps every other field of the
/// caller's messages as sent: tool calls, names, content parts.)
fn with_context(mut messages: Vec<Value>, block: &str) -> Vec<Value> {
    let system = messages
        .iter_mut()
        .find(|m| m["role"] == "system" || m["role"] == "developer");
    match system {
        Some(m) => match &mut m["content"] {
            Value::String(s) => {
                s.push_str("\n\n");
                s.push_str(block);
            }
            Value::Array(parts) => parts.push(json!({"type": "text", "text": block})),
            other => *other = block.into(),
        },
        None => messages.insert(0, json!({"role": "system", "content": block})),
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_is_the_last_user_text() {
        let m = vec![
            json!({"role": "user", "content": "first"}),
            json!({"role": "assistant", "content": "a"}),
            json!({"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": "second"}]}),
            json!({"role": "user", "content": "  "}),
        ];
        assert_eq!(last_question(&m).as_deref(), Some("second"));
        assert_eq!(last_question(&m[1..2]), None);
    }

    #[test]
    fn the_block_joins_the_system_message_as_it_is_written() {
        let out = with_context(vec![json!({"role": "user", "content": "q"})], "CTX");
        assert_eq!(out[0], json!({"role": "system", "content": "CTX"}));
        let out = with_context(
            vec![
                json!({"role": "developer", "content": "be brief", "name": "x"}),
                json!({"role": "user", "content": "q"}),
            ],
            "CTX",
        );
        assert_eq!(
            out[0],
            json!({"role": "developer", "content": "be brief\n\nCTX", "name": "x"})
        );
        let out = with_context(
            vec![json!({"role": "system", "content": [{"type": "text", "text": "a"}]})],
            "CTX",
        );
        assert_eq!(out[0]["content"][1], json!({"type": "text", "text": "CTX"}));
    }

    #[test]
    fn cairns_own_fields_are_taken_out_and_checked() {
        let r = parse(br#"{"model": "x", "messages": [{"role": "user", "content": "q"}], "use_rag": false, "rag": {"toolkit": "a"}, "temperature": 0.2}"#).map_err(|e| e.detail).expect("parses");
        assert!(!r.use_rag);
        assert_eq!(r.rag["toolkit"], "a");
        assert!(!r.body.contains_key("use_rag") && !r.body.contains_key("rag"));
        assert_eq!(r.body["temperature"], 0.2);
        for (body, field) in [
            (r#"{"messages": []}"#, Some("messages")),
            (
                r#"{"messages": [{"role": "user", "content": "q"}], "use_rag": 1}"#,
                Some("use_rag"),
            ),
            (
                r#"{"messages": [{"role": "user", "content": "q"}], "rag": []}"#,
                Some("rag"),
            ),
            (
                r#"{"messages": [{"role": "user", "content": "q"}], "stream": 1}"#,
                Some("stream"),
            ),
            (r#"{"model": "x"}"#, Some("messages")),
            (r#"[1]"#, None),
        ] {
            let e = parse(body.as_bytes()).err().expect(body);
            assert_eq!(e.field.as_deref(), field, "{body}: {}", e.detail);
        }
    }
}
