//! [`Semantic`]: recall by meaning beside the lexical index. It owns the embeddings client and
//! the in-memory [`VectorIndex`] of the configured model, and runs the background embedder (a
//! tracked task stopped by the root token): at start it loads the stored vectors, then embeds
//! memories without a vector of the current model (new ones, or all after a model change) in
//! batches of [`BATCH`], backing off 1 s → 2 s → … → 60 s while the endpoint fails; a new
//! memory wakes it. Nothing here blocks start-up or a turn; until a memory has its vector it is
//! found lexically only. The conversation index (`recall`, issue 48) runs its own `Semantic`
//! over its messages ([`Corpus::History`]): the same client, index and embedder.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::embeddings::{EmbedError, EmbeddingsClient, TextKind};
use super::vectors::{VectorIndex, quantise};
use crate::store::Store;
use crate::store::vectors::Corpus;

/// Memories embedded per request.
pub const BATCH: usize = 32;
/// The longest wait between attempts while the endpoint fails.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What `/status` shows about embeddings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingsStatus {
    /// The model vectors are made with.
    pub model: String,
    /// Memories with a vector of that model.
    pub with_vectors: u64,
    /// The last failure of the endpoint (redacted), until a request succeeds.
    pub last_error: Option<String>,
}

/// The embeddings client, the vector index and the embedder's state. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct Semantic {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    client: EmbeddingsClient,
    store: Store,
    /// Memories, or the conversation's indexed messages (`recall`).
    corpus: Corpus,
    /// The tag stored with each vector: the model, with `@dimensions` when configured.
    tag: String,
    index: RwLock<VectorIndex>,
    wake: Notify,
    last_error: Mutex<Option<String>>,
    recall_budget: Duration,
}

impl Semantic {
    /// Starts the memories' embedder on `tasks` (stopped by `cancel`); vectors are tagged `tag`.
    pub fn start(
        client: EmbeddingsClient,
        tag: String,
        store: Store,
        recall_budget: Duration,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Self {
        Self::start_on(
            Corpus::Memories,
            client,
            tag,
            store,
            recall_budget,
            tasks,
            cancel,
        )
    }

    /// Starts the embedder of `corpus` (see [`Semantic::start`]).
    pub fn start_on(
        corpus: Corpus,
        client: EmbeddingsClient,
        tag: String,
        store: Store,
        recall_budget: Duration,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> Self {
        let semantic = Self {
            inner: Arc::new(Inner {
                client,
                store,
                corpus,
                tag,
                index: RwLock::new(VectorIndex::new()),
                wake: Notify::new(),
                last_error: Mutex::new(None),
                recall_budget,
            }),
        };
        let worker = semantic.clone();
        tasks.spawn(async move {
            tokio::select! {
                () = worker.run() => {}
                () = cancel.cancelled() => {}
            }
        });
        semantic
    }

    /// How long the per-turn recall waits for the query's vector.
    pub fn recall_budget(&self) -> Duration {
        self.inner.recall_budget
    }

    /// The cosine below which a hit found only by meaning is dropped (`min_similarity`).
    pub fn min_similarity(&self) -> f32 {
        self.inner.client.min_similarity()
    }

    /// Wakes the embedder (a memory was added).
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Drops deleted memories' vectors from the index (the store cascades).
    pub fn forget(&self, ids: &[i64]) {
        let mut index = self.inner.index.write().unwrap_or_else(|e| e.into_inner());
        for &id in ids {
            index.remove(id);
        }
    }

    /// The query's normalised vector within `budget`.
    pub async fn query_vector(
        &self,
        query: &str,
        budget: Duration,
    ) -> Result<Vec<f32>, EmbedError> {
        let mut vectors = self
            .inner
            .client
            .embed(&[query.to_owned()], TextKind::Query, budget)
            .await?;
        vectors
            .pop()
            .ok_or_else(|| EmbedError::BadResponse("no vector".into()))
    }

    /// Whether any memory has a vector yet (if not, no query is embedded).
    pub fn has_vectors(&self) -> bool {
        !self.read().is_empty()
    }

    /// Up to `k` memories nearest `query` (created in `[from, to)` unix ms when given).
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Vec<(i64, f32)> {
        self.read().nearest(query, k, from, to)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, VectorIndex> {
        self.inner.index.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The model, how many memories have its vectors, and the last endpoint failure.
    pub async fn status(&self) -> EmbeddingsStatus {
        let with_vectors = match self
            .inner
            .store
            .count_vectors_of(self.inner.corpus, &self.inner.tag)
            .await
        {
            Ok(n) => n,
            Err(_) => self.read().len() as u64,
        };
        EmbeddingsStatus {
            model: self.inner.tag.clone(),
            with_vectors,
            last_error: self
                .inner
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    fn set_error(&self, error: Option<String>) {
        *self
            .inner
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = error;
    }

    /// The embedder: load, then embed what lacks a vector, forever.
    async fn run(self) {
        let mut backoff = Duration::from_secs(1);
        while let Err(e) = self.load().await {
            tracing::warn!(error = %e, corpus = self.inner.corpus.name(), "cannot load vectors; retrying");
            self.pause(&mut backoff).await;
        }
        backoff = Duration::from_secs(1);
        loop {
            match self.embed_batch().await {
                Ok(0) => self.inner.wake.notified().await,
                Ok(_) => backoff = Duration::from_secs(1),
                Err(e) => {
                    tracing::warn!(error = %e, corpus = self.inner.corpus.name(), retry_in_s = backoff.as_secs(), "embedding failed");
                    self.set_error(Some(e));
                    self.pause(&mut backoff).await;
                }
            }
        }
    }

    /// Waits `backoff` (or until a new memory wakes the embedder), then doubles it.
    async fn pause(&self, backoff: &mut Duration) {
        tokio::select! {
            () = tokio::time::sleep(*backoff) => {}
            () = self.inner.wake.notified() => {}
        }
        *backoff = (*backoff * 2).min(MAX_BACKOFF);
    }

    async fn load(&self) -> Result<(), crate::store::StoreError> {
        let rows = self
            .inner
            .store
            .load_vectors_of(self.inner.corpus, &self.inner.tag, None)
            .await?;
        let mut index = VectorIndex::new();
        let mut skipped = 0;
        for row in &rows {
            if !index.insert(row.memory_id, row.created_at, row.scale as f32, &row.vector) {
                skipped += 1;
            }
        }
        tracing::info!(
            model = %self.inner.tag,
            corpus = self.inner.corpus.name(),
            vectors = index.len(),
            skipped,
            "vectors loaded"
        );
        *self.inner.index.write().unwrap_or_else(|e| e.into_inner()) = index;
        Ok(())
    }

    /// Embeds one batch of memories lacking a vector; how many there were.
    async fn embed_batch(&self) -> Result<usize, String> {
        let tag = &self.inner.tag;
        let batch = self
            .inner
            .store
            .without_vector(self.inner.corpus, tag, BATCH)
            .await
            .map_err(|e| e.to_string())?;
        if batch.is_empty() {
            return Ok(0);
        }
        let texts: Vec<String> = batch.iter().map(|(_, t)| t.clone()).collect();
        let client = &self.inner.client;
        let vectors = client
            .embed(&texts, TextKind::Passage, client.timeout())
            .await
            .map_err(|e| e.to_string())?;
        let quantised: Vec<(i64, f32, Vec<u8>)> = batch
            .iter()
            .zip(&vectors)
            .map(|((id, _), v)| {
                let q = quantise(v);
                (*id, q.scale, q.bytes)
            })
            .collect();
        let created = self
            .inner
            .store
            .put_vectors_of(self.inner.corpus, tag, &quantised)
            .await
            .map_err(|e| e.to_string())?;
        {
            let mut index = self.inner.index.write().unwrap_or_else(|e| e.into_inner());
            for ((id, scale, bytes), at) in quantised.iter().zip(created) {
                if let Some(at) = at
                    && !index.insert(*id, at, *scale, bytes)
                {
                    tracing::warn!(
                        memory = id,
                        dim = bytes.len(),
                        expected = index.dim(),
                        "a memory vector of another dimension is not searched"
                    );
                }
            }
        }
        self.set_error(None);
        tracing::debug!(
            embedded = batch.len(),
            corpus = self.inner.corpus.name(),
            "texts embedded"
        );
        Ok(batch.len())
    }
}
