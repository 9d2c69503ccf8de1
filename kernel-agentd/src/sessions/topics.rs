//! Telegram topics as sessions: the session a topic (`message_thread_id`) belongs to, created
//! (with the current provider/model, without becoming the current session) and bound the first
//! time the topic is seen or by `/new` for the topic; the binding is stored (`store::topics`).

use super::{SessionInfo, Sessions};
use crate::error::ApiError;
use crate::store::SessionRow;

impl Sessions {
    /// The session of topic `thread_id` and whether it was created just now; `name` (the
    /// topic's name, when the client saw it created or renamed) is recorded.
    pub async fn for_topic(
        &self,
        thread_id: i64,
        name: Option<&str>,
    ) -> Result<(SessionInfo, bool), ApiError> {
        let found = self.bound_or_new(thread_id).await?;
        if let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) {
            self.inner
                .store
                .name_topic(thread_id, name)
                .await
                .map_err(ApiError::internal)?;
        }
        Ok(found)
    }

    async fn bound_or_new(&self, thread_id: i64) -> Result<(SessionInfo, bool), ApiError> {
        check_thread(thread_id)?;
        let store = &self.inner.store;
        if let Some(id) = store
            .topic_session(thread_id)
            .await
            .map_err(ApiError::internal)?
            && let Some(row) = self.get(id).await?
        {
            return Ok((self.info_for(&row), false));
        }
        let row = self.create_bound(thread_id).await?;
        tracing::info!(session = row.id, thread_id, "a new topic got its session");
        Ok((self.info_for(&row), true))
    }

    /// `/new` for topic `thread_id`: a fresh session (the current provider/model) bound to
    /// the topic in place of its earlier one, which stays in `/history`; the current session
    /// (the main chat's) does not change.
    pub async fn new_in_topic(&self, thread_id: i64) -> Result<SessionInfo, ApiError> {
        check_thread(thread_id)?;
        let row = self.create_bound(thread_id).await?;
        tracing::info!(session = row.id, thread_id, "a new session for a topic");
        Ok(self.info_for(&row))
    }

    /// A fresh session on the current provider/model, bound to topic `thread_id`.
    async fn create_bound(&self, thread_id: i64) -> Result<SessionRow, ApiError> {
        let store = &self.inner.store;
        let sel = self.inner.models.selection();
        let row = store
            .create_session(&sel.provider, &sel.model)
            .await
            .map_err(ApiError::internal)?;
        store
            .bind_topic(thread_id, row.id)
            .await
            .map_err(ApiError::internal)?;
        Ok(row)
    }

    /// `/resume #n` inside topic `thread_id`: binds session `#n` to the topic (its earlier
    /// topic, and the topic's earlier session, are let go); the current session stays. Also
    /// returns the topic's earlier session (see [`Sessions::drop_if_empty`]), if another.
    pub async fn resume_in_topic(
        &self,
        number: u32,
        thread_id: i64,
    ) -> Result<(SessionInfo, Option<i64>), ApiError> {
        check_thread(thread_id)?;
        let row = self.by_number(Some(number)).await?;
        let store = &self.inner.store;
        let earlier = store
            .topic_session(thread_id)
            .await
            .map_err(ApiError::internal)?
            .filter(|&id| id != row.id);
        store
            .bind_topic(thread_id, row.id)
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(
            session = row.id,
            thread_id,
            "a session was resumed in a topic"
        );
        Ok((self.session_info(&row, number), earlier))
    }

    /// Deletes session `id` when it has no messages and is not the current one (a topic's
    /// session let go by `/resume #n` there, never used: it would only clutter `/history`);
    /// whether it was deleted. The caller knows no turn runs in it.
    pub async fn drop_if_empty(&self, id: i64) -> Result<bool, ApiError> {
        let store = &self.inner.store;
        if self.current_id() == Some(id)
            || store.message_count(id).await.map_err(ApiError::internal)? > 0
            || store
                .session_topic(id)
                .await
                .map_err(ApiError::internal)?
                .is_some()
        {
            return Ok(false);
        }
        let deleted = store
            .delete_sessions(&[id])
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(session = id, "an empty session a topic let go was deleted");
        Ok(deleted > 0)
    }

    /// The topic session `session_id` lives in, if any.
    pub async fn topic_of(&self, session_id: i64) -> Result<Option<i64>, ApiError> {
        self.inner
            .store
            .session_topic(session_id)
            .await
            .map_err(ApiError::internal)
    }
}

/// Refuses a thread id no Telegram topic can have (`InvalidArgument`).
fn check_thread(thread_id: i64) -> Result<(), ApiError> {
    if thread_id <= 0 {
        return Err(ApiError::InvalidArgument(format!(
            "thread_id {thread_id} is not a Telegram topic"
        )));
    }
    Ok(())
}
