//! Sessions found by the conversation index (`SearchHistory`, the web console's search): their
//! infos, and optionally a `#n` listing of them.

use super::{SessionInfo, Sessions};
use crate::error::ApiError;

impl Sessions {
    /// The existing sessions among `ids`, in that order; when `listed`, they become the latest
    /// `#n` listing (`#1` the first).
    pub(crate) async fn found(
        &self,
        ids: &[i64],
        listed: bool,
    ) -> Result<Vec<SessionInfo>, ApiError> {
        let mut rows = Vec::with_capacity(ids.len());
        for &id in ids {
            if let Some(row) = self.get(id).await? {
                rows.push(row);
            }
        }
        if listed {
            self.inner.listing.set(rows.iter().map(|r| r.id).collect());
            return Ok(rows
                .iter()
                .zip(1..)
                .map(|(r, n)| self.session_info(r, n))
                .collect());
        }
        Ok(rows.iter().map(|r| self.info_for(r)).collect())
    }

    /// Makes the session with database id `id` the current one.
    pub(crate) async fn resume_id(&self, id: i64) -> Result<SessionInfo, ApiError> {
        let row = self
            .get(id)
            .await?
            .ok_or_else(|| ApiError::NotFound("no session with that id".to_owned()))?;
        self.set_current(row.id);
        tracing::info!(session = row.id, "session resumed by id");
        Ok(self.info_for(&row))
    }
}
