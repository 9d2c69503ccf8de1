//! Editing a memory (the web console): the owner's new text replaces the memory — remembered
//! as `add` does (checked, indexed, embedded; an identical memory is reused), then the old one
//! forgotten, so nothing is lost if either step fails. The edited memory is the owner's own
//! word from then on (dated now, no outside origin).

use super::{Memories, MemoryError, MemoryRow};

impl Memories {
    /// Replaces memory `id` with `text`; the memory now holding the text, or `None` when no
    /// memory `id` exists (nothing is added then).
    pub(crate) async fn edit(&self, id: i64, text: &str) -> Result<Option<MemoryRow>, MemoryError> {
        let Some(old) = self.store.memory_by_id(id).await? else {
            return Ok(None);
        };
        if old.text == text.trim() {
            return Ok(Some(old));
        }
        let new = self.add(text).await?;
        if new.id != id {
            self.delete(&[id]).await?;
        }
        tracing::info!(old = id, new = new.id, "memory edited");
        Ok(Some(new))
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::store::{MemorySource, Store};

    #[tokio::test]
    async fn an_edit_replaces_the_text_and_browse_filters_by_source_and_day() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("k.db")).await.unwrap();
        let m = Memories::open(store.clone(), chrono_tz::Asia::Shanghai).await;
        let tea = m.add("likes green tea").await.unwrap();
        let cat = m.add("the cat is Miso").await.unwrap();

        let edited = m
            .edit(tea.id, "  likes oolong tea ")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(edited.text, "likes oolong tea");
        assert!(
            store.memory_by_id(tea.id).await.unwrap().is_none(),
            "old one gone"
        );
        assert_eq!(
            m.search("oolong", 5).await.unwrap().memories[0].id,
            edited.id
        );
        assert!(matches!(
            m.edit(cat.id, "  ").await,
            Err(MemoryError::Empty)
        ));
        assert!(
            store.memory_by_id(cat.id).await.unwrap().is_some(),
            "kept on refusal"
        );
        assert_eq!(m.edit(9999, "x").await.unwrap(), None);
        assert_eq!(m.count().await.unwrap(), 2);

        let all = m.browse(None, None, None, 0, false).await.unwrap();
        assert_eq!((all.total, all.page, all.pages), (2, 1, 1));
        assert_eq!(all.memories[0].id, edited.id, "newest first");
        let owner = m
            .browse(Some(MemorySource::Owner), None, None, 1, false)
            .await
            .unwrap();
        assert_eq!(owner.total, 2);
        let auto = m
            .browse(Some(MemorySource::Auto), None, None, 1, false)
            .await
            .unwrap();
        assert_eq!((auto.total, auto.pages), (0, 0));
        let today = chrono::Utc::now()
            .with_timezone(&chrono_tz::Asia::Shanghai)
            .date_naive();
        let on_today = m
            .browse(None, Some(today), Some(today), 1, false)
            .await
            .unwrap();
        assert_eq!(on_today.total, 2);
        let before = m
            .browse(None, None, Some(today - Duration::days(1)), 1, false)
            .await
            .unwrap();
        assert_eq!(before.total, 0);
    }
}
