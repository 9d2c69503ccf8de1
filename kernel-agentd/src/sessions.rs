//! Sessions: the current one, `#n` listings and their mapping to ids, new/resume/delete.
//!
//! A restart always begins a new conversation: the current session is created lazily on first use
//! and old ones are entered only through a listing and `resume`.

use crate::agent::Agent;
use crate::error::ApiError;
use crate::store::SessionRow;

/// How many sessions a listing shows.
pub const LISTING_LIMIT: usize = 20;

/// The current session and the latest listing's `#n → id` mapping.
#[derive(Debug, Default)]
pub struct SessionState {
    current: Option<i64>,
    listing: Vec<i64>,
}

/// A session as shown to the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// `#n` in the latest listing, 0 when not from a listing.
    pub number: u32,
    pub id: i64,
    /// Empty while untitled.
    pub title: String,
    /// `YYYY-MM-DD` in the configured time zone.
    pub date: String,
    pub current: bool,
}

impl Agent {
    fn session_state<R>(&self, f: impl FnOnce(&mut SessionState) -> R) -> R {
        f(&mut self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner()))
    }

    fn session_info(&self, row: &SessionRow, number: u32) -> SessionInfo {
        let tz = self.config().general.timezone;
        SessionInfo {
            number,
            id: row.id,
            title: row.title.clone().unwrap_or_default(),
            date: row
                .created_at
                .with_timezone(&tz)
                .format("%Y-%m-%d")
                .to_string(),
            current: self.session_state(|s| s.current == Some(row.id)),
        }
    }

    /// The current session, created (with the current provider/model) if there is none yet.
    pub async fn current_session(&self) -> Result<SessionRow, ApiError> {
        if let Some(id) = self.session_state(|s| s.current)
            && let Some(row) = self
                .store()
                .get_session(id)
                .await
                .map_err(ApiError::internal)?
        {
            return Ok(row);
        }
        self.start_new_session().await
    }

    /// The current session's info, if one exists (never creates one).
    pub async fn current_session_info(&self) -> Result<Option<SessionInfo>, ApiError> {
        let Some(id) = self.session_state(|s| s.current) else {
            return Ok(None);
        };
        let row = self
            .store()
            .get_session(id)
            .await
            .map_err(ApiError::internal)?;
        Ok(row.map(|r| self.info_for(&r)))
    }

    async fn start_new_session(&self) -> Result<SessionRow, ApiError> {
        let sel = self.selection();
        let row = self
            .store()
            .create_session(&sel.provider, &sel.model)
            .await
            .map_err(ApiError::internal)?;
        self.session_state(|s| s.current = Some(row.id));
        tracing::info!(session = row.id, "new session");
        Ok(row)
    }

    /// Archives the current session and starts a fresh one (inherits provider/model).
    pub async fn new_session(&self) -> Result<SessionInfo, ApiError> {
        let row = self.start_new_session().await?;
        Ok(self.session_info(&row, 0))
    }

    /// Sessions newest first, numbered `#1..#20`; becomes the mapping for `#n` references.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, ApiError> {
        let rows = self
            .store()
            .list_sessions(LISTING_LIMIT)
            .await
            .map_err(ApiError::internal)?;
        self.session_state(|s| s.listing = rows.iter().map(|r| r.id).collect());
        Ok(rows
            .iter()
            .enumerate()
            .map(|(i, r)| self.session_info(r, i as u32 + 1))
            .collect())
    }

    /// The session id behind `#n` of the latest listing.
    fn resolve_session(&self, number: u32) -> Result<i64, ApiError> {
        self.session_state(|s| {
            if s.listing.is_empty() {
                return Err(ApiError::FailedPrecondition(
                    "list the sessions first (/history)".into(),
                ));
            }
            (number as usize)
                .checked_sub(1)
                .and_then(|i| s.listing.get(i).copied())
                .ok_or_else(|| {
                    ApiError::InvalidArgument(format!(
                        "#{number} is not in the latest listing (#1..#{})",
                        s.listing.len()
                    ))
                })
        })
    }

    /// Makes `#n` the current session.
    pub async fn resume_session(&self, number: u32) -> Result<SessionInfo, ApiError> {
        let id = self.resolve_session(number)?;
        let row = self
            .store()
            .get_session(id)
            .await
            .map_err(ApiError::internal)?
            .ok_or_else(|| ApiError::NotFound(format!("session #{number} no longer exists")))?;
        self.session_state(|s| s.current = Some(id));
        tracing::info!(session = id, "session resumed");
        Ok(self.session_info(&row, number))
    }

    /// Deletes sessions by `#n`; all numbers are checked before anything is deleted. Returns how
    /// many were deleted and, if the current one was among them, the fresh current session.
    pub async fn delete_sessions(
        &self,
        numbers: &[u32],
    ) -> Result<(u64, Option<SessionInfo>), ApiError> {
        if numbers.is_empty() {
            return Err(ApiError::InvalidArgument(
                "name at least one session: #n".into(),
            ));
        }
        let mut ids = numbers
            .iter()
            .map(|&n| self.resolve_session(n))
            .collect::<Result<Vec<_>, _>>()?;
        ids.sort_unstable();
        ids.dedup();
        let deleted = self
            .store()
            .delete_sessions(&ids)
            .await
            .map_err(ApiError::internal)?;
        let current_deleted = self.session_state(|s| s.current.is_some_and(|c| ids.contains(&c)));
        let fresh = if current_deleted {
            Some(self.new_session().await?)
        } else {
            None
        };
        tracing::info!(deleted, "sessions deleted");
        Ok((deleted, fresh))
    }

    /// The session behind an optional `#n` (default: the current one).
    pub(crate) async fn session_by_number(
        &self,
        number: Option<u32>,
    ) -> Result<SessionRow, ApiError> {
        match number {
            None => self.current_session().await,
            Some(n) => {
                let id = self.resolve_session(n)?;
                self.store()
                    .get_session(id)
                    .await
                    .map_err(ApiError::internal)?
                    .ok_or_else(|| ApiError::NotFound(format!("session #{n} no longer exists")))
            }
        }
    }

    /// Info for a row, with its number in the latest listing.
    pub(crate) fn info_for(&self, row: &SessionRow) -> SessionInfo {
        let number = self.session_state(|s| {
            s.listing
                .iter()
                .position(|&x| x == row.id)
                .map_or(0, |i| i as u32 + 1)
        });
        self.session_info(row, number)
    }
}
