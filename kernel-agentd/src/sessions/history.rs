//! Reading sessions again (the web console): a session's whole history by id, as the owner
//! reads it (text blocks, the tools called, the time; tool results and reasoning left out),
//! and finding sessions by a text in their title (what was said in them: `recall`). Neither changes
//! the `#n` listing.

use super::{SessionInfo, Sessions};
use crate::conversation::{Block, Role};
use crate::error::ApiError;
use crate::refusal::Refusal;

/// Most sessions a search returns.
pub(crate) const SEARCH_LIMIT: usize = 50;
/// Longest search text, in characters.
pub(crate) const SEARCH_MAX_CHARS: usize = 200;

/// One message as the owner reads it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HistoryEntry {
    pub(crate) role: Role,
    /// The text blocks joined by blank lines (empty for a message that only calls tools).
    pub(crate) text: String,
    /// The tools called in this message, in order.
    pub(crate) tools: Vec<String>,
    /// `YYYY-MM-DD HH:MM` in the configured time zone.
    pub(crate) time: String,
    /// The owner's reaction to this answer (empty: none).
    pub(crate) feedback: String,
}

/// A session and its messages in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionHistory {
    pub(crate) session: SessionInfo,
    pub(crate) messages: Vec<HistoryEntry>,
}

impl Sessions {
    /// The history of the session with database id `id`.
    pub(crate) async fn history(&self, id: i64) -> Result<SessionHistory, ApiError> {
        let row = self
            .get(id)
            .await?
            .ok_or_else(|| ApiError::NotFound("no session with that id".to_owned()))?;
        let stored = self
            .inner
            .store
            .load_messages(id)
            .await
            .map_err(ApiError::internal)?;
        let mut feedback = self
            .inner
            .store
            .feedback_of(id)
            .await
            .map_err(ApiError::internal)?;
        let messages = stored
            .into_iter()
            .filter_map(|m| {
                let mut texts = Vec::new();
                let mut tools = Vec::new();
                for block in &m.message.content {
                    match block {
                        Block::Text { text } if !text.trim().is_empty() => texts.push(text.clone()),
                        Block::ToolCall { name, .. } => tools.push(name.clone()),
                        _ => {}
                    }
                }
                (!texts.is_empty() || !tools.is_empty()).then(|| HistoryEntry {
                    role: m.message.role,
                    text: texts.join("\n\n"),
                    tools,
                    time: m
                        .created_at
                        .with_timezone(&self.inner.tz)
                        .format("%Y-%m-%d %H:%M")
                        .to_string(),
                    feedback: feedback.remove(&m.id).unwrap_or_default(),
                })
            })
            .collect();
        Ok(SessionHistory {
            session: self.info_for(&row),
            messages,
        })
    }

    /// Sessions whose title contains `query` (trimmed; 1..=[`SEARCH_MAX_CHARS`]
    /// characters), newest first, at most [`SEARCH_LIMIT`]; their numbers are those of the
    /// latest listing (0 when not in it).
    pub(crate) async fn search(&self, query: &str) -> Result<Vec<SessionInfo>, ApiError> {
        let query = query.trim();
        if query.is_empty() {
            return Err(Refusal::QueryEmpty.into());
        }
        if query.chars().count() > SEARCH_MAX_CHARS {
            return Err(ApiError::InvalidArgument(format!(
                "a session search is at most {SEARCH_MAX_CHARS} characters"
            )));
        }
        let rows = self
            .inner
            .store
            .search_sessions(query, SEARCH_LIMIT)
            .await
            .map_err(ApiError::internal)?;
        Ok(rows.iter().map(|r| self.info_for(r)).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::conversation::Message;
    use crate::models::Models;
    use crate::test_support::env;

    #[tokio::test]
    async fn a_history_keeps_texts_and_tool_names_and_search_finds_by_content() {
        let env = env("").await;
        let models = Models::start(&env.config, BTreeMap::new(), env.store.clone())
            .await
            .unwrap();
        let s = Sessions::new(env.store.clone(), models, env.config.general.timezone);
        let id = s.current().await.unwrap().id;
        let call = Message {
            role: Role::Assistant,
            content: vec![Block::ToolCall {
                id: "c1".into(),
                name: "memory_add".into(),
                input: serde_json::json!({}),
            }],
        };
        let result = Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                call_id: "c1".into(),
                content: "ok".into(),
                is_error: false,
            }],
        };
        env.store
            .append_messages(
                id,
                &[
                    Message::user_text("remember **tea**"),
                    call,
                    result,
                    Message::assistant_text("Done."),
                ],
            )
            .await
            .unwrap();
        let h = s.history(id).await.unwrap();
        assert_eq!(h.session.id, id);
        let seen: Vec<_> = h
            .messages
            .iter()
            .map(|m| (m.role, m.text.as_str(), m.tools.clone()))
            .collect();
        assert_eq!(
            seen,
            [
                (Role::User, "remember **tea**", vec![]),
                (Role::Assistant, "", vec!["memory_add".to_owned()]),
                (Role::Assistant, "Done.", vec![]),
            ]
        );
        assert!(matches!(
            s.history(id + 100).await,
            Err(ApiError::NotFound(_))
        ));
        env.store.set_session_title(id, "Tea time").await.unwrap();
        assert_eq!(s.search(" tea ").await.unwrap()[0].id, id);
        assert!(s.search("coffee").await.unwrap().is_empty());
        assert!(matches!(
            s.search("  ").await,
            Err(ApiError::Refused(Refusal::QueryEmpty))
        ));
        assert!(matches!(
            s.search(&"x".repeat(201)).await,
            Err(ApiError::InvalidArgument(_))
        ));
    }
}
