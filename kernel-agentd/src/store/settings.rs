//! Settings: a small key/value table (the chosen provider and model, …).

use super::{Store, StoreError};

impl Store {
    /// The value stored under `key`, if any.
    pub async fn get_setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM settings WHERE key = ?1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(StoreError::db("read a setting"))
    }

    /// Stores `value` under `key`, replacing any previous value.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        put_setting(&self.pool, key, value)
            .await
            .map_err(StoreError::db("write a setting"))
    }
}

/// Stores `value` under `key` through `db` (the pool, or a caller's transaction).
pub(super) async fn put_setting<'e, E: sqlx::SqliteExecutor<'e>>(
    db: E,
    key: &str,
    value: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO settings (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )
    .bind(key)
    .bind(value)
    .execute(db)
    .await?;
    Ok(())
}
