//! Sessions: the current one, `#n` listings and their mapping to ids, new/resume/delete.
//!
//! A restart always begins a new conversation: the current session is created lazily on first use
//! and old ones are entered only through a listing and `resume`.

mod feedback;
mod found;
mod history;
mod rename;
mod topics;

use std::sync::{Arc, Mutex};

use chrono_tz::Tz;

use crate::error::ApiError;
use crate::listing::Listing;
use crate::models::Models;
use crate::refusal::{Listed, Refusal};
use crate::store::{SessionRow, Store};

/// How many of the most recently active sessions [`Sessions::current_or_latest`] looks through
/// for one of the main chat (the others are topics').
const LATEST_SCAN: usize = 50;

/// How many sessions a listing shows.
pub(crate) const LISTING_LIMIT: usize = 20;

/// A session as shown to the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// `#n` in the latest listing, 0 when not from a listing.
    pub number: u32,
    pub id: i64,
    /// Empty while untitled.
    pub title: String,
    /// `YYYY-MM-DD` of the last activity (what listings are ordered by) in the configured time
    /// zone.
    pub date: String,
    pub current: bool,
    /// In a listing: the Telegram topic the session lives in, if any.
    pub topic: Option<Topic>,
}

/// A Telegram topic a session lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    pub thread_id: i64,
    /// Its name, if seen.
    pub name: Option<String>,
}

/// The sessions: which one is current and the latest `#n` listing. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Sessions {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    /// New sessions start with the current provider/model.
    models: Models,
    tz: Tz,
    current: Mutex<Option<i64>>,
    listing: Listing,
}

impl Sessions {
    /// No current session yet (one is created on first use); dates shown in `tz`.
    pub fn new(store: Store, models: Models, tz: Tz) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                models,
                tz,
                current: Mutex::new(None),
                listing: Listing::new(Listed::Sessions),
            }),
        }
    }

    /// The current session's id, if one was made or resumed (never creates one).
    pub fn current_id(&self) -> Option<i64> {
        *self.inner.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_current(&self, id: i64) {
        *self.inner.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
    }

    async fn get(&self, id: i64) -> Result<Option<SessionRow>, ApiError> {
        self.inner
            .store
            .get_session(id)
            .await
            .map_err(ApiError::internal)
    }

    fn session_info(&self, row: &SessionRow, number: u32) -> SessionInfo {
        SessionInfo {
            number,
            id: row.id,
            title: row.title.clone().unwrap_or_default(),
            date: row
                .updated_at
                .with_timezone(&self.inner.tz)
                .format("%Y-%m-%d")
                .to_string(),
            current: self.current_id() == Some(row.id),
            topic: None,
        }
    }

    /// Session `id`, if it exists.
    pub async fn by_id(&self, id: i64) -> Result<Option<SessionRow>, ApiError> {
        self.get(id).await
    }

    /// The current session, created (with the current provider/model) if there is none yet.
    pub async fn current(&self) -> Result<SessionRow, ApiError> {
        if let Some(id) = self.current_id()
            && let Some(row) = self.get(id).await?
        {
            return Ok(row);
        }
        self.start_new().await
    }

    /// The session whose last message `/retry` (or an edit's re-answer) runs again: the current
    /// one; right after agentd starts (none made or resumed yet) the most recently active
    /// main-chat session, which becomes current — running its last message again continues it,
    /// as `/resume` would. With no such session, a new one (nothing to run again).
    pub async fn current_or_latest(&self) -> Result<SessionRow, ApiError> {
        if self.current_id().is_none() {
            let recent = self
                .inner
                .store
                .list_sessions(LATEST_SCAN)
                .await
                .map_err(ApiError::internal)?;
            for row in recent {
                if self.topic_of(row.id).await?.is_none() {
                    self.set_current(row.id);
                    tracing::info!(session = row.id, "the latest session resumed to run again");
                    return Ok(row);
                }
            }
        }
        self.current().await
    }

    /// The current session's info, if one exists (never creates one).
    pub async fn current_info(&self) -> Result<Option<SessionInfo>, ApiError> {
        let Some(id) = self.current_id() else {
            return Ok(None);
        };
        Ok(self.get(id).await?.map(|r| self.info_for(&r)))
    }

    async fn start_new(&self) -> Result<SessionRow, ApiError> {
        let sel = self.inner.models.selection();
        let row = self
            .inner
            .store
            .create_session(&sel.provider, &sel.model)
            .await
            .map_err(ApiError::internal)?;
        self.set_current(row.id);
        tracing::info!(session = row.id, "new session");
        Ok(row)
    }

    /// Archives the current session and starts a fresh one (inherits provider/model). A current
    /// session without messages is fresh already: it is kept (moved to the top of the listing)
    /// instead of leaving an empty session behind.
    pub async fn new_session(&self) -> Result<SessionInfo, ApiError> {
        if let Some(id) = self.current_id()
            && self.get(id).await?.is_some()
        {
            let store = &self.inner.store;
            if store.message_count(id).await.map_err(ApiError::internal)? == 0 {
                store.touch_session(id).await.map_err(ApiError::internal)?;
                if let Some(row) = self.get(id).await? {
                    tracing::info!(
                        session = id,
                        "the current session is empty; kept as the new one"
                    );
                    return Ok(self.session_info(&row, 0));
                }
            }
        }
        let row = self.start_new().await?;
        Ok(self.session_info(&row, 0))
    }

    /// Sessions newest first, numbered `#1..#20`; becomes the mapping for `#n` references.
    pub async fn list(&self) -> Result<Vec<SessionInfo>, ApiError> {
        let rows = self
            .inner
            .store
            .list_sessions(LISTING_LIMIT)
            .await
            .map_err(ApiError::internal)?;
        self.inner.listing.set(rows.iter().map(|r| r.id).collect());
        let mut topics = self
            .inner
            .store
            .session_topics()
            .await
            .map_err(ApiError::internal)?;
        Ok(rows
            .iter()
            .zip(1..)
            .map(|(r, n)| SessionInfo {
                topic: topics
                    .remove(&r.id)
                    .map(|(thread_id, name)| Topic { thread_id, name }),
                ..self.session_info(r, n)
            })
            .collect())
    }

    /// Makes `#n` the current session.
    pub async fn resume(&self, number: u32) -> Result<SessionInfo, ApiError> {
        let row = self.by_number(Some(number)).await?;
        self.set_current(row.id);
        tracing::info!(session = row.id, "session resumed");
        Ok(self.session_info(&row, number))
    }

    /// Deletes sessions by `#n`; all numbers are checked before anything is deleted. Returns how
    /// many were deleted and, if the current one was among them, the fresh current session.
    pub async fn delete(&self, numbers: &[u32]) -> Result<(u64, Option<SessionInfo>), ApiError> {
        let ids = self.inner.listing.resolve_all(numbers)?;
        let deleted = self
            .inner
            .store
            .delete_sessions(&ids)
            .await
            .map_err(ApiError::internal)?;
        let current_deleted = self.current_id().is_some_and(|c| ids.contains(&c));
        let fresh = if current_deleted {
            Some(self.new_session().await?)
        } else {
            None
        };
        tracing::info!(deleted, "sessions deleted");
        Ok((deleted, fresh))
    }

    /// The session behind an optional `#n` (default: the current one).
    pub async fn by_number(&self, number: Option<u32>) -> Result<SessionRow, ApiError> {
        match number {
            None => self.current().await,
            Some(n) => {
                let id = self.inner.listing.resolve(n)?;
                self.get(id)
                    .await?
                    .ok_or_else(|| Refusal::SessionGone { number: n }.into())
            }
        }
    }

    /// Info for a row, with its number in the latest listing.
    pub fn info_for(&self, row: &SessionRow) -> SessionInfo {
        self.session_info(row, self.inner.listing.number_of(row.id))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::conversation::Message;
    use crate::test_support::{TestEnv, env};

    /// Gives session `id` a message (a session with none is reused by `new_session`).
    async fn used(env: &TestEnv, id: i64) {
        env.store
            .append_messages(id, &[Message::user_text("hi")])
            .await
            .unwrap();
    }

    async fn sessions(env: &TestEnv) -> Sessions {
        let models = Models::start(&env.config, BTreeMap::new(), env.store.clone())
            .await
            .unwrap();
        Sessions::new(env.store.clone(), models, env.config.general.timezone)
    }

    #[tokio::test]
    async fn the_current_session_is_created_on_first_use_with_the_current_model() {
        let env = env("").await;
        let s = sessions(&env).await;
        assert_eq!(s.current_info().await.unwrap(), None);
        let row = s.current().await.unwrap();
        assert_eq!((row.provider.as_str(), row.model.as_str()), ("main", "m1"));
        assert_eq!(s.current().await.unwrap().id, row.id, "the same one");
        let info = s.current_info().await.unwrap().unwrap();
        assert_eq!((info.id, info.number, info.current), (row.id, 0, true));
        assert_eq!(info.title, "");
        assert_eq!(info.date.len(), "2026-01-01".len());
    }

    #[tokio::test]
    async fn listings_number_newest_first_and_resume_by_number() {
        let env = env("").await;
        let s = sessions(&env).await;
        let first = s.current().await.unwrap().id;
        used(&env, first).await;
        let second = s.new_session().await.unwrap();
        assert!(second.current);
        let list = s.list().await.unwrap();
        let numbered: Vec<(u32, i64, bool)> =
            list.iter().map(|i| (i.number, i.id, i.current)).collect();
        assert_eq!(numbered, vec![(1, second.id, true), (2, first, false)]);
        let resumed = s.resume(2).await.unwrap();
        assert_eq!(
            (resumed.id, resumed.number, resumed.current),
            (first, 2, true)
        );
        assert_eq!(s.current().await.unwrap().id, first);
        let row = env.store.get_session(second.id).await.unwrap().unwrap();
        assert_eq!(
            s.info_for(&row).number,
            1,
            "numbers follow the latest listing"
        );
        assert!(matches!(
            s.resume(3).await,
            Err(ApiError::Refused(Refusal::NotInListing {
                number: 3,
                max: 2
            }))
        ));
    }

    #[tokio::test]
    async fn numbers_need_a_listing_and_deleting_the_current_one_starts_a_fresh_one() {
        let env = env("").await;
        let s = sessions(&env).await;
        assert!(matches!(
            s.resume(1).await,
            Err(ApiError::Refused(Refusal::ListingNotShown {
                what: Listed::Sessions
            }))
        ));
        let first = s.current().await.unwrap().id;
        used(&env, first).await;
        let other = s.new_session().await.unwrap().id;
        s.resume(0).await.unwrap_err();
        s.list().await.unwrap();
        assert!(matches!(
            s.delete(&[]).await,
            Err(ApiError::Refused(Refusal::NoNumbers { .. }))
        ));
        assert!(
            matches!(
                s.delete(&[2, 9]).await,
                Err(ApiError::Refused(Refusal::NotInListing { number: 9, .. }))
            ),
            "nothing is deleted when one number is unknown"
        );
        assert!(env.store.get_session(first).await.unwrap().is_some());
        let (deleted, fresh) = s.delete(&[1, 1]).await.unwrap();
        assert_eq!(deleted, 1);
        let fresh = fresh.expect("the current session was deleted");
        assert!(fresh.id != other && fresh.current);
        assert_eq!(s.current().await.unwrap().id, fresh.id);
        let (deleted, fresh) = s.delete(&[2]).await.unwrap();
        assert_eq!(
            (deleted, fresh),
            (1, None),
            "#2 still means the first session"
        );
        assert!(env.store.get_session(first).await.unwrap().is_none());
        assert!(matches!(
            s.by_number(Some(1)).await,
            Err(ApiError::Refused(Refusal::SessionGone { number: 1 }))
        ));
    }

    #[tokio::test]
    async fn new_keeps_an_empty_current_session_instead_of_leaving_it_behind() {
        let env = env("").await;
        let s = sessions(&env).await;
        let first = s.new_session().await.unwrap();
        let again = s.new_session().await.unwrap();
        assert_eq!((again.id, again.current), (first.id, true), "reused");
        assert_eq!(
            s.list().await.unwrap().len(),
            1,
            "no empty session left behind"
        );
        used(&env, first.id).await;
        let fresh = s.new_session().await.unwrap();
        assert_ne!(fresh.id, first.id, "a session with messages is archived");
        s.list().await.unwrap(); // #1 fresh, #2 first
        s.resume(2).await.unwrap();
        let third = s.new_session().await.unwrap();
        assert!(
            third.id != fresh.id && third.id != first.id,
            "first has messages"
        );
        let ids: Vec<i64> = s.list().await.unwrap().iter().map(|i| i.id).collect();
        let at = ids.iter().position(|&id| id == fresh.id).unwrap();
        s.resume(u32::try_from(at + 1).unwrap()).await.unwrap();
        let back = s.new_session().await.unwrap();
        assert_eq!(back.id, fresh.id, "the empty current one is kept");
        let ids: Vec<i64> = s.list().await.unwrap().iter().map(|i| i.id).collect();
        assert_eq!(ids[0], fresh.id, "and moved to the top: {ids:?}");
        assert_eq!(ids.len(), 3);
    }

    #[tokio::test]
    async fn listings_show_the_date_they_are_ordered_by() {
        use sqlx::Connection as _;
        let env = env("").await;
        let s = sessions(&env).await;
        let id = s.current().await.unwrap().id;
        let path = env.config.general.data_dir.join("kernel.db");
        let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
        let mut conn = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        // Created 2020-01-01 00:30 UTC (08:30 in Shanghai); active just now.
        sqlx::query("UPDATE sessions SET created_at = 1577838600000 WHERE id = ?1")
            .bind(id)
            .execute(&mut conn)
            .await
            .unwrap();
        used(&env, id).await;
        let today = chrono::Utc::now()
            .with_timezone(&env.config.general.timezone)
            .format("%Y-%m-%d")
            .to_string();
        let listed = s.list().await.unwrap();
        assert_eq!(listed[0].date, today, "the last activity, not the creation");
    }
}
