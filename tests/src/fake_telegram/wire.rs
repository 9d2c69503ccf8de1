//! The Bot API's wire shapes: the `{"ok":…}` envelope, error bodies, and the JSON of users,
//! chats and the bot itself, exactly as Telegram sends them.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::model::Failure;

/// The bot's first name.
pub const BOT_FIRST_NAME: &str = "Kernel Test Bot";
/// The bot's username.
pub const BOT_USERNAME: &str = "kernel_test_bot";

/// A Bot API error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub code: u16,
    pub description: String,
    pub retry_after: Option<u32>,
}

impl ApiError {
    pub(super) fn new(code: u16, description: &str) -> ApiError {
        ApiError {
            code,
            description: description.to_owned(),
            retry_after: None,
        }
    }

    /// 400 `Bad Request: <detail>`.
    pub(super) fn bad_request(detail: &str) -> ApiError {
        ApiError::new(400, &format!("Bad Request: {detail}"))
    }

    pub(super) fn not_found() -> ApiError {
        ApiError::new(404, "Not Found")
    }

    pub(super) fn unauthorized() -> ApiError {
        ApiError::new(401, "Unauthorized")
    }

    pub(super) fn chat_not_found() -> ApiError {
        ApiError::bad_request("chat not found")
    }

    /// The answer an injected failure gives; `None` for [`Failure::Disconnect`].
    pub(super) fn injected(failure: &Failure) -> Option<ApiError> {
        Some(match failure {
            Failure::RetryAfter(secs) => ApiError {
                code: 429,
                description: format!("Too Many Requests: retry after {secs}"),
                retry_after: Some(*secs),
            },
            Failure::BadRequest(detail) => ApiError::bad_request(detail),
            Failure::ServerError => ApiError::new(500, "Internal Server Error"),
            Failure::Api { code, description } => ApiError::new(*code, description),
            Failure::Page(code) => ApiError::new(*code, "an HTML error page"),
            Failure::Disconnect => return None,
        })
    }

    pub(super) fn body(&self) -> Value {
        let mut body = json!({
            "ok": false,
            "error_code": self.code,
            "description": self.description,
        });
        if let Some(secs) = self.retry_after {
            body["parameters"] = json!({ "retry_after": secs });
        }
        body
    }

    pub(super) fn response(&self) -> Response {
        json_response(self.code, &self.body())
    }
}

/// `{"ok":true,"result":…}` with status 200.
pub(crate) fn ok_response(result: &Value) -> Response {
    json_response(200, &json!({ "ok": true, "result": result }))
}

fn json_response(status: u16, body: &Value) -> Response {
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .expect("a valid response")
}

/// A proxy's HTML error page with `status` (not the Bot API's JSON).
pub(crate) fn page_response(status: u16) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let title = format!(
        "{} {}",
        code.as_u16(),
        code.canonical_reason().unwrap_or("Error")
    );
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "text/html")
        .body(Body::from(format!(
            "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        )))
        .expect("a valid response")
}

/// A response whose body breaks off: the client sees a network error.
pub(crate) fn broken_response() -> Response {
    let chunks: [Result<&'static [u8], std::io::Error>; 2] = [
        Ok(b"{\"ok\":tr"),
        Err(std::io::Error::other("connection reset by the fake")),
    ];
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(futures::stream::iter(chunks)))
        .expect("a valid response")
}

/// A raw file with status 200.
pub(crate) fn file_response(data: Vec<u8>) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .body(Body::from(data))
        .expect("a valid response")
}

/// Seconds since the Unix epoch, as message dates.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The bot as a message's `from`.
pub(crate) fn bot_user(bot_id: i64) -> Value {
    json!({
        "id": bot_id,
        "is_bot": true,
        "first_name": BOT_FIRST_NAME,
        "username": BOT_USERNAME,
    })
}

/// `getMe`'s answer.
pub(crate) fn me(bot_id: i64, topics: bool) -> Value {
    let mut me = bot_user(bot_id);
    me["has_topics_enabled"] = Value::Bool(topics);
    for flag in [
        "can_join_groups",
        "can_read_all_group_messages",
        "supports_inline_queries",
        "can_connect_to_business",
        "has_main_web_app",
    ] {
        me[flag] = Value::Bool(flag == "can_join_groups");
    }
    me
}

/// A human user (the owner is named "Owner").
pub(crate) fn user(id: i64) -> Value {
    json!({
        "id": id,
        "is_bot": false,
        "first_name": first_name(id),
        "username": format!("user{id}"),
        "language_code": "zh-hans",
    })
}

fn first_name(id: i64) -> String {
    if id == super::OWNER_ID {
        "Owner".to_owned()
    } else {
        format!("User {id}")
    }
}

/// The private chat with user `id` (its id is the user's).
pub(crate) fn private_chat(id: i64) -> Value {
    json!({
        "id": id,
        "type": "private",
        "first_name": first_name(id),
        "username": format!("user{id}"),
    })
}

/// A group: a supergroup when `id` has the `-100…` form, else a basic group.
pub(crate) fn group_chat(id: i64) -> Value {
    let kind = if id <= -1_000_000_000_000 {
        "supergroup"
    } else {
        "group"
    };
    json!({ "id": id, "type": kind, "title": format!("Group {id}") })
}
