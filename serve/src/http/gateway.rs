//! The chat gateway, `POST /v1/chat/completions` (served when a model is
//! configured): a caller's OpenAI Chat Completions request, its last user
//! message answered from the index first (the `context` operation, with the
//! caller's own access, so a restricted document never reaches a prompt it
//! may not see), the passages added to its system message within a token
//! budget, the request forwarded to the configured model, and the model's
//! answer returned as the endpoint wrote it with those passages as
//! `citations`. `"use_rag": false` forwards the request untouched; `"rag"`
//! takes the `context` operation's options (filters, `max_tokens`, …).

use super::api::call;
use super::state::AppState;
use crate::ops::context::{Context, ContextArgs};
use crate::ops::{Anonymous, Input};
use crate::problem::ApiError;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use cairn_search::Code;
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
    let mut request = parse(&bytes)?;
    let grounding = match request.use_rag {
        true => Some(ground(&state, &req, &mut request).await?),
        false => None,
    };
    let until = std::time::Instant::now() + llm.config().timeout;
    let body = request.body;
    let (mut answer, usage) = web::block(move || llm.forward(body, Some(until)))
        .await
        .map_err(|_| ApiError::new(Code::Internal, "the model's request was lost"))?
        .map_err(|e| {
            tracing::warn!(target: "cairn::llm", error = %e, "the gateway's model request failed");
            ApiError::from(e)
        })?;
    state
        .metrics
        .model_tokens(usage.prompt_tokens, usage.completion_tokens);
    if let Some(g) = grounding {
        answer["citations"] = serde_json::to_value(&g.citations).unwrap_or_default();
        answer["insufficient_evidence"] = g.insufficient_evidence.into();
        answer["index_version"] = g.index_version.into();
    }
    Ok(HttpResponse::Ok().json(answer))
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
    if body["messages"].as_array().is_none_or(|m| m.is_empty()) {
        return Err(ApiError::invalid(
            "messages",
            "a non-empty list of chat messages",
        ));
    }
    if body.get("stream").is_some_and(|s| s != &Value::Bool(false)) {
        return Err(ApiError::invalid(
            "stream",
            "streaming is not offered by the gateway yet: send \"stream\": false",
        ));
    }
    Ok(GatewayRequest { body, use_rag, rag })
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
    let messages = request.body["messages"]
        .as_array()
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
    request.body["messages"] = Value::Array(with_context(messages, &context.context));
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
                r#"{"messages": [{"role": "user", "content": "q"}], "stream": true}"#,
                Some("stream"),
            ),
            (r#"[1]"#, None),
        ] {
            let e = parse(body.as_bytes()).err().expect(body);
            assert_eq!(e.field.as_deref(), field, "{body}: {}", e.detail);
        }
    }
}
