//! `getUpdates` as Telegram serves it: offsets confirm (forget) earlier updates, a negative
//! offset keeps only the last few, `timeout` holds an empty answer until an update arrives,
//! `allowed_updates` filters, and a newer call ends a held older one with 409 Conflict.

use std::time::Duration;

use serde_json::Value;

use super::Shared;
use super::params;
use super::state::State;
use super::wire::ApiError;

/// Telegram's update types; unknown ones (malformed test updates) are never filtered.
const UPDATE_TYPES: &[&str] = &[
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "business_connection",
    "business_message",
    "edited_business_message",
    "deleted_business_messages",
    "message_reaction",
    "message_reaction_count",
    "inline_query",
    "chosen_inline_result",
    "callback_query",
    "shipping_query",
    "pre_checkout_query",
    "purchased_paid_media",
    "poll",
    "poll_answer",
    "my_chat_member",
    "chat_member",
    "chat_join_request",
    "chat_boost",
    "removed_chat_boost",
];

/// Types Telegram leaves out unless asked for explicitly.
const OPT_IN_TYPES: &[&str] = &["chat_member", "message_reaction", "message_reaction_count"];

/// Serves one getUpdates call.
pub(crate) async fn get_updates(shared: &Shared, p: &Value) -> Result<Value, ApiError> {
    let offset = params::int(p, "offset");
    let limit = params::int(p, "limit").unwrap_or(100).clamp(1, 100) as usize;
    let timeout = params::int(p, "timeout").unwrap_or(0).clamp(0, 3_600) as u64;
    let generation = {
        let mut st = shared.lock();
        if let Some(Value::Array(types)) = params::structured(p, "allowed_updates") {
            let types: Vec<String> = types
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect();
            st.allowed_updates = (!types.is_empty()).then_some(types);
        }
        confirm(&mut st, offset);
        st.poll_generation += 1;
        st.poll_generation
    };
    shared.updates.notify_waiters();
    shared.activity.notify_waiters();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);
    let mut expired = timeout == 0;
    loop {
        let notified = shared.updates.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        {
            let mut st = shared.lock();
            if st.poll_generation != generation {
                return Err(ApiError::new(
                    409,
                    "Conflict: terminated by other getUpdates request; make sure that only \
                     one bot instance is running",
                ));
            }
            let batch = deliverable(&mut st, limit);
            expired |= st.timed_out_generation >= generation;
            if !batch.is_empty() || expired {
                return Ok(Value::Array(batch));
            }
        }
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep_until(deadline) => expired = true,
            () = shared.shutdown.cancelled() => expired = true,
        }
    }
}

/// Applies `offset`: forgets updates below it, or keeps only the last `-offset` when negative
/// (a drop of pending updates, after which `polling` waits for a regular call).
fn confirm(st: &mut State, offset: Option<i64>) {
    match offset {
        Some(offset) if offset < 0 => {
            let keep = offset.unsigned_abs() as usize;
            while st.queue.len() > keep {
                st.queue.pop_front();
            }
            st.polling = false;
        }
        Some(offset) => {
            st.queue
                .retain(|u| u.get("update_id").and_then(Value::as_i64) >= Some(offset));
            st.polling = true;
        }
        None => st.polling = true,
    }
}

/// The first `limit` queued updates the bot accepts; updates of types it did not ask for are
/// forgotten, as Telegram never keeps them.
fn deliverable(st: &mut State, limit: usize) -> Vec<Value> {
    let allowed = st.allowed_updates.clone();
    st.queue.retain(|update| {
        let Some(kind) = kind(update) else {
            return true;
        };
        if !UPDATE_TYPES.contains(&kind) {
            return true;
        }
        match &allowed {
            Some(allowed) => allowed.iter().any(|a| a == kind),
            None => !OPT_IN_TYPES.contains(&kind),
        }
    });
    st.queue.iter().take(limit).cloned().collect()
}

/// An update's type: its first field other than `update_id`.
fn kind(update: &Value) -> Option<&str> {
    update
        .as_object()?
        .keys()
        .find(|k| *k != "update_id")
        .map(String::as_str)
}
