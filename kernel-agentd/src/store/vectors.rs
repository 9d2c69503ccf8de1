//! Vectors: the `memory_vectors` and `history_vectors` tables (one int8 vector and its scale per
//! memory or indexed message, tagged with the model that made it). The store does not embed or compare: `memory::semantic` does.

use sqlx::{AssertSqlSafe, FromRow};

use super::{Store, StoreError};

/// One stored vector, with its memory's creation time (unix ms) for date filters.
#[derive(Debug, Clone, FromRow)]
pub struct StoredVector {
    pub memory_id: i64,
    pub created_at: i64,
    pub scale: f64,
    pub vector: Vec<u8>,
}

/// Which texts a vector table holds: memories (`memory_vectors`), or the indexed messages of the
/// conversation (`history_vectors`, issue 48). The same int8 rows, the same queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corpus {
    Memories,
    History,
}

impl Corpus {
    /// `(vector table, key column, text table, text table's key)`.
    fn tables(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Corpus::Memories => ("memory_vectors", "memory_id", "memories", "id"),
            Corpus::History => (
                "history_vectors",
                "message_id",
                "history_docs",
                "message_id",
            ),
        }
    }

    /// What it holds, for logs (`"memory"`, `"conversation"`).
    pub fn name(self) -> &'static str {
        match self {
            Corpus::Memories => "memory",
            Corpus::History => "conversation",
        }
    }
}

impl Store {
    /// Up to `limit` memories without a vector of `model` (none yet, or another model's), oldest
    /// first: `(id, text)`.
    pub async fn memories_without_vector(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        self.without_vector(Corpus::Memories, model, limit).await
    }

    /// Up to `limit` texts of `corpus` without a vector of `model`, oldest first: `(id, text)`.
    pub async fn without_vector(
        &self,
        corpus: Corpus,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let (vectors, key, texts, id) = corpus.tables();
        sqlx::query_as(AssertSqlSafe(format!(
            "SELECT m.{id}, m.text FROM {texts} AS m
             LEFT JOIN {vectors} AS v ON v.{key} = m.{id}
             WHERE v.{key} IS NULL OR v.model != ?1
             ORDER BY m.{id} LIMIT ?2"
        )))
        .bind(model)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("find texts without vectors"))
    }

    /// Stores memory vectors (see [`Store::put_vectors_of`]).
    pub async fn put_vectors(
        &self,
        model: &str,
        vectors: &[(i64, f32, Vec<u8>)],
    ) -> Result<Vec<Option<i64>>, StoreError> {
        self.put_vectors_of(Corpus::Memories, model, vectors).await
    }

    /// Stores vectors `(id, scale, int8 bytes)` of `model` in one transaction, replacing older
    /// ones; texts deleted meanwhile are skipped. Returns the created times (unix ms) of the
    /// texts stored, in input order (`None` for a skipped one).
    pub async fn put_vectors_of(
        &self,
        corpus: Corpus,
        model: &str,
        vectors: &[(i64, f32, Vec<u8>)],
    ) -> Result<Vec<Option<i64>>, StoreError> {
        let op = "store vectors";
        let (table, key, texts, id_col) = corpus.tables();
        let (read_time, insert) = (
            format!("SELECT created_at FROM {texts} WHERE {id_col} = ?1"),
            format!(
                "INSERT OR REPLACE INTO {table} ({key}, model, dim, scale, vector)
                 VALUES (?1, ?2, ?3, ?4, ?5)"
            ),
        );
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(StoreError::db(op))?;
        let mut created = Vec::with_capacity(vectors.len());
        for (id, scale, bytes) in vectors {
            let at: Option<i64> = sqlx::query_scalar(AssertSqlSafe(read_time.as_str()))
                .bind(id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(StoreError::db(op))?;
            if at.is_some() {
                sqlx::query(AssertSqlSafe(insert.as_str()))
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

    /// Every memory vector of `model` with `dim` components, by memory id.
    pub async fn load_vectors(
        &self,
        model: &str,
        dim: Option<usize>,
    ) -> Result<Vec<StoredVector>, StoreError> {
        self.load_vectors_of(Corpus::Memories, model, dim).await
    }

    /// Every vector of `corpus` and `model` with `dim` components, by id.
    pub async fn load_vectors_of(
        &self,
        corpus: Corpus,
        model: &str,
        dim: Option<usize>,
    ) -> Result<Vec<StoredVector>, StoreError> {
        let (vectors, key, texts, id) = corpus.tables();
        sqlx::query_as(AssertSqlSafe(format!(
            "SELECT v.{key} AS memory_id, m.created_at, v.scale, v.vector
             FROM {vectors} AS v JOIN {texts} AS m ON m.{id} = v.{key}
             WHERE v.model = ?1 AND (?2 IS NULL OR v.dim = ?2)
             ORDER BY v.{key}"
        )))
        .bind(model)
        .bind(dim.and_then(|d| i64::try_from(d).ok()))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::db("load vectors"))
    }

    /// How many memories have a vector of `model`.
    pub async fn count_vectors(&self, model: &str) -> Result<u64, StoreError> {
        self.count_vectors_of(Corpus::Memories, model).await
    }

    /// How many texts of `corpus` have a vector of `model`.
    pub async fn count_vectors_of(&self, corpus: Corpus, model: &str) -> Result<u64, StoreError> {
        let (vectors, ..) = corpus.tables();
        let (count,): (i64,) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM {vectors} WHERE model = ?1"
        )))
        .bind(model)
        .fetch_one(&self.pool)
        .await
        .map_err(StoreError::db("count vectors"))?;
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
