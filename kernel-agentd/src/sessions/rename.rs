//! The owner's own title for a session (the web console's rename): checked, trimmed and set
//! as given, without calling a model.

use super::{SessionInfo, Sessions};
use crate::error::ApiError;
use crate::refusal::Refusal;

/// Longest title the owner may give, in characters.
pub(crate) const TITLE_MAX_CHARS: usize = 100;

impl Sessions {
    /// Gives session `#number` (the current one when `None`) the title `title`.
    pub(crate) async fn rename(
        &self,
        number: Option<u32>,
        title: &str,
    ) -> Result<SessionInfo, ApiError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(ApiError::InvalidArgument(
                "a title cannot be empty".to_owned(),
            ));
        }
        if title.chars().count() > TITLE_MAX_CHARS {
            return Err(ApiError::InvalidArgument(format!(
                "a title is at most {TITLE_MAX_CHARS} characters"
            )));
        }
        if title.chars().any(char::is_control) {
            return Err(ApiError::InvalidArgument(
                "a title cannot hold control characters".to_owned(),
            ));
        }
        let row = self.by_number(number).await?;
        self.inner
            .store
            .set_session_title(row.id, title)
            .await
            .map_err(ApiError::internal)?;
        let row = self
            .get(row.id)
            .await?
            .ok_or(Refusal::SessionDeletedMeanwhile)?;
        tracing::info!(session = row.id, "session renamed by the owner");
        Ok(self.info_for(&row))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::models::Models;
    use crate::test_support::env;

    #[tokio::test]
    async fn a_title_is_set_as_given_and_bad_ones_are_refused() {
        let env = env("").await;
        let models = Models::start(&env.config, BTreeMap::new(), env.store.clone())
            .await
            .unwrap();
        let s = Sessions::new(env.store.clone(), models, env.config.general.timezone);
        let id = s.current().await.unwrap().id;
        let info = s.rename(None, "  Tea <plans>  ").await.unwrap();
        assert_eq!((info.id, info.title.as_str()), (id, "Tea <plans>"));
        for bad in ["", "   ", "a\nb", &"x".repeat(101)] {
            assert!(
                matches!(s.rename(None, bad).await, Err(ApiError::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        assert_eq!(
            s.current_info().await.unwrap().unwrap().title,
            "Tea <plans>"
        );
    }
}
