//! The MCP side of the bridge: JSON-RPC 2.0 over streamable HTTP, answered as plain JSON
//! (`initialize`, `ping`, `tools/list`, `tools/call`; notifications get `202 Accepted`; no
//! server-initiated stream, so `GET` is 405). The protocol version is the client's when this
//! server knows it, else the newest it knows.

use serde_json::{Value, json};

use super::{Bridge, Session, tools};

/// Protocol revisions this server speaks, newest first.
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The reply to `message`, or `None` for a notification.
pub(super) async fn respond(bridge: &Bridge, session: &Session, message: Value) -> Option<Value> {
    let id = message.get("id").cloned();
    let method = message.get("method").and_then(Value::as_str);
    let Some(id) = id else {
        // A notification (initialized, cancelled…) or a response: nothing to answer.
        return None;
    };
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        Some("initialize") => {
            let asked = params["protocolVersion"].as_str().unwrap_or_default();
            let version = VERSIONS
                .iter()
                .find(|v| **v == asked)
                .unwrap_or(&VERSIONS[0]);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "kernel", "version": env!("CARGO_PKG_VERSION")},
                "instructions": "Kernel, the owner's assistant that started you: ask the owner (ask_owner), report progress (notify_owner), search or add to the owner's memories, send the owner a file from the workspace.",
            }))
        }
        Some("ping") => Ok(json!({})),
        Some("tools/list") => Ok(json!({"tools": tools::list(bridge)})),
        Some("tools/call") => match params["name"].as_str() {
            Some(name) => {
                let args = match params.get("arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(a) => a.clone(),
                };
                let (text, is_error) = tools::call(bridge, session, name, args).await;
                Ok(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
            }
            None => Err((-32602, "tools/call needs params.name".to_owned())),
        },
        Some(other) => Err((-32601, format!("method not found: {other}"))),
        None => Err((-32600, "invalid request: no method".to_owned())),
    };
    Some(match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    })
}
