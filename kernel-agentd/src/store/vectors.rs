//! Memory vectors: the `memory_vectors` table (one int8 vector and its scale per memory, tagged
//! with the model that made it). The store does not embed or compare: `memory::semantic` does.

use sqlx::FromRow;

use super::{Store, StoreError};

/// One stored vector, with its memory's creation time (unix ms) for date filters.
#[derive(Debug, Clone, FromRow)]
pub struct StoredVector {
    pub memory_id: i64,
    pub created_at: i64,
    pub scale: f64,
    pub vector: Vec<u8>,
}

impl Store {
    /// Up to `limit` memories without a vector of `model` (none yet, or another model's), oldest
    /// first: `(id, text)`.
    pub async fn memories_without_vector(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        sqlx::query_as(
            "SELECT m.id, m.text FROM memories AS m
             LEFT JOIN memory_vectors AS v ON v.memory_id = m.id
             WHERE v.memory_id IS NULL OR v.model != ?1
             ORDER BY m.id LIMIT ?2",
        )
        .bind(model)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("find memories without vectors"))
    }

    /// Stores vectors `(memory id, scale, int8 bytes)` of `model` in one transaction, replacing
    /// older ones; memories deleted meanwhile are skipped. Returns the created times (unix ms) of
    /// the memories stored, in input order (`None` for a skipped one).
    pub async fn put_vectors(
        &self,
        model: &str,
        vectors: &[(i64, f32, Vec<u8>)],
    ) -> Result<Vec<Option<i64>>, StoreError> {
        let op = "store memory vectors";
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let mut created = Vec::with_capacity(vectors.len());
        for (id, scale, bytes) in vectors {
            let at: Option<i64> =
                sqlx::query_scalar("SELECT created_at FROM memories WHERE id = ?1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(StoreError::db(op))?;
            if at.is_some() {
                sqlx::query(
                    "INSERT OR REPLACE INTO memory_vectors (memory_id, model, dim, scale, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .bind(id)
                .bind(model)
                .bind(i64::try_from(bytes.len()).unwrap_or(i64::MAX))
                .bind(f64::from(*scale))
                .bind(bytes.as_slice())
                .execute(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            }
            created.push(at);
        }
        tx.commit().await.map_err(StoreError::db(op))?;
        Ok(created)
    }

    /// Every vector of `model` with `dim` components, by memory id.
    pub async fn load_vectors(
        &self,
        model: &str,
        dim: Option<usize>,
    ) -> Result<Vec<StoredVector>, StoreError> {
        sqlx::query_as(
            "SELECT v.memory_id, m.created_at, v.scale, v.vector
             FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory_id
             WHERE v.model = ?1 AND (?2 IS NULL OR v.dim = ?2)
             ORDER BY v.memory_id",
        )
        .bind(model)
        .bind(dim.and_then(|d| i64::try_from(d).ok()))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("load memory vectors"))
    }

    /// How many memories have a vector of `model`.
    pub async fn count_vectors(&self, model: &str) -> Result<u64, StoreError> {
        let (count,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM memory_vectors WHERE model = ?1")
                .bind(model)
                .fetch_one(&self.pool)
                .await
                .map_err(StoreError::db("count memory vectors"))?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// Memories `ids` that exist, in the order given.
    pub async fn memories_by_id(
        &self,
        ids: &[i64],
    ) -> Result<Vec<super::memory::MemoryRow>, StoreError> {
        let json = serde_json::Value::from(ids.to_vec()).to_string();
        let rows: Vec<(i64, String, i64, bool, Option<String>)> = sqlx::query_as(
            "SELECT id, text, created_at, source = 'auto' AS auto, origin FROM memories
             WHERE id IN (SELECT value FROM json_each(?1))",
        )
        .bind(json)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("read memories"))?;
        let mut by_id: std::collections::HashMap<i64, super::memory::MemoryRow> = rows
            .into_iter()
            .map(|(id, text, created_at, auto, origin)| {
                let created_at = super::from_millis(created_at, || format!("memory {id}"))?;
                Ok((
                    id,
                    super::memory::MemoryRow {
                        id,
                        text,
                        created_at,
                        auto,
                        origin,
                    },
                ))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }
}
