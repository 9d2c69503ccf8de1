//! Probes of a running [`Stack`] shared by the end-to-end suites: agentd's RPCs through the real
//! grpcurl on the stack's socket, what the bot sent, the outbox draining, and its pruning.

use serde_json::{Value, json};

use super::{PROMPT, Stack, text_of};
use crate::process::grpcurl;
use crate::wait::eventually;

/// Calls `kernel.v1.Agent/<method>` with `request` on the stack's socket; its JSON reply.
pub fn rpc(stack: &Stack, method: &str, request: Value) -> Value {
    let socket = stack.cfg.socket().display().to_string();
    let body = request.to_string();
    let method = format!("kernel.v1.Agent/{method}");
    let out = grpcurl(&[
        "-plaintext",
        "-unix",
        "-authority",
        "localhost",
        "-d",
        &body,
        &socket,
        &method,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{method} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or(Value::Null)
}

/// How many messages the bot sent whose text contains `needle`.
pub fn sent_containing(stack: &Stack, needle: &str) -> usize {
    stack
        .telegram
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.ok && text_of(c).contains(needle))
        .count()
}

/// Waits until agentd's outbox has nothing left to deliver.
pub async fn outbox_drained(stack: &Stack) {
    eventually("the outbox to be delivered", PROMPT, async || {
        let status = rpc(stack, "GetStatus", json!({}));
        status.get("undelivered").is_none()
    })
    .await;
}

/// Prunes agentd's outbox as it does a week after delivery (every delivered row goes); how
/// many rows went.
pub async fn prune_outbox(stack: &Stack) -> u64 {
    let path = stack.cfg.data_dir().join("kernel.db");
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("open the database");
    let pruned = sqlx::query("DELETE FROM outbox WHERE acked_at IS NOT NULL")
        .execute(&pool)
        .await
        .expect("prune the outbox")
        .rows_affected();
    pool.close().await;
    pruned
}
