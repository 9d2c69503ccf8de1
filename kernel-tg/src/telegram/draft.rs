//! `sendMessageDraft` (Bot API 9.3+): a partial message streamed into the owner's private chat
//! as an animated draft that disappears by itself. teloxide 0.17 lacks the method, so it is a
//! payload of our own sent through teloxide's request machinery on the same `Bot`.
//!
//! Whether the Bot API has the method is decided once per process: the first "method not
//! found" answer (an older self-hosted server) turns drafts off for good and is logged once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use teloxide::requests::{JsonRequest, Payload, Request};
use teloxide::types::True;
use teloxide::{ApiError, RequestError};

use super::{SendError, Telegram, describe};

/// The payload of `sendMessageDraft`.
#[derive(Debug, Clone, Serialize)]
struct SendMessageDraft {
    chat_id: i64,
    draft_id: i64,
    text: String,
    parse_mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_thread_id: Option<i64>,
}

impl Payload for SendMessageDraft {
    type Output = True;
    const NAME: &'static str = "sendMessageDraft";
}

/// Whether drafts were found missing, shared by every clone of one `Telegram`.
#[derive(Debug, Default, Clone)]
pub(super) struct DraftSupport {
    missing: Arc<AtomicBool>,
}

/// Why a draft was not shown.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum DraftError {
    /// The Bot API has no `sendMessageDraft`; drafts stay off for this process.
    #[error("the Bot API has no sendMessageDraft")]
    Unsupported,
    #[error(transparent)]
    Failed(#[from] SendError),
}

impl Telegram {
    /// Whether drafts may be tried (no "method not found" seen yet).
    pub(crate) fn drafts_usable(&self) -> bool {
        !self.drafts.missing.load(Ordering::Relaxed)
    }

    /// Shows `html` as draft `draft_id` (non-zero) in the owner's chat. One attempt: a draft
    /// that fails is simply replaced by the next one.
    pub(crate) async fn send_draft(&self, draft_id: i64, html: &str) -> Result<(), DraftError> {
        if !self.drafts_usable() {
            return Err(DraftError::Unsupported);
        }
        let payload = SendMessageDraft {
            chat_id: self.chat.0,
            draft_id,
            text: html.to_owned(),
            parse_mode: "HTML",
            message_thread_id: self.topic(),
        };
        match JsonRequest::new(self.bot.clone(), payload).send().await {
            Ok(_) => Ok(()),
            Err(e) if is_method_missing(&e) => {
                if !self.drafts.missing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        error = %describe(e),
                        "the Bot API has no sendMessageDraft; showing progress in a placeholder \
                         message instead for this process"
                    );
                }
                Err(DraftError::Unsupported)
            }
            Err(e) => Err(DraftError::Failed(describe(e))),
        }
    }
}

/// "Not Found: method not found" (404) or "Bad Request: method not found" (400); teloxide reads
/// a bare "Not Found" as a bad token, which after a working getMe means the same.
fn is_method_missing(e: &RequestError) -> bool {
    match e {
        RequestError::Api(ApiError::Unknown(text)) => {
            text.to_ascii_lowercase().contains("method not found")
        }
        RequestError::Api(ApiError::InvalidToken) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_not_found_answers_are_recognised_and_others_are_not() {
        let api = |text: &str| RequestError::Api(ApiError::Unknown(text.into()));
        assert!(is_method_missing(&api("Not Found: method not found")));
        assert!(is_method_missing(&api("Bad Request: method not found")));
        assert!(is_method_missing(&RequestError::Api(
            ApiError::InvalidToken
        )));
        assert!(!is_method_missing(&api(
            "Bad Request: draft_id must be non-zero"
        )));
        assert!(!is_method_missing(&RequestError::Api(ApiError::BotBlocked)));
    }

    #[test]
    fn the_payload_is_the_documented_json() {
        let payload = SendMessageDraft {
            chat_id: 42,
            draft_id: 7,
            text: "<b>x</b>".into(),
            parse_mode: "HTML",
            message_thread_id: None,
        };
        assert_eq!(
            serde_json::to_value(&payload).unwrap(),
            serde_json::json!({"chat_id": 42, "draft_id": 7, "text": "<b>x</b>", "parse_mode": "HTML"})
        );
    }
}
