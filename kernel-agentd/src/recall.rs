//! Conversation recall (issue 48): [`History`] keeps every stored owner message and Kernel
//! answer in a full-text index (`store::history_index`, segmented like memory search: jieba
//! search mode) and searches it by words and time. The `history_search` tool, the
//! `SearchHistory` RPC (Telegram's `/history <words>`) and the web console's session search all
//! use it.
//!
//! Indexing runs in the background ([`indexer`]): at start it catches up on every message not
//! indexed yet (an existing database's migration; progress in `/status`), then indexes each
//! message once the store signals its commit. A deleted message (with its session) leaves the
//! index by `ON DELETE CASCADE` and a trigger. Ranking: the terms ANDed (BM25, ties newest
//! first); when that finds fewer than asked for, each term widened by its other-language words
//! ([`lexicon`]: "doctor" also looks for 医生) and those groups ORed below them (each group's
//! BM25, summed); every term is a quoted string, so nothing a user types is FTS5 syntax. Each
//! full-text query scores its newest 2,000 matches (`store::history_index::SCORED_PER_QUERY`),
//! so a common word costs no more than a rare one.
//!
//! With `[embeddings]`, a `memory::semantic::Semantic` over the indexed messages
//! (`Corpus::History`: `history_vectors`, int8 like memories') embeds each indexed message in
//! the background (the indexer wakes it after each batch), and a search fuses the lexical
//! candidates with the nearest vectors ([`fusion`]). The query is embedded beside the lexical
//! search, within `embeddings.recall_budget_ms`; when it does not come in time the search is the
//! lexical one. Either way a text said again (an acknowledgement, a greeting) is listed once.

mod indexer;
mod kept;
pub mod lexicon;
pub mod range;
pub mod text;
mod tool;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use kernel_common::config::Locale;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::conversation::Role;
use crate::error::ApiError;
use crate::memory::exact::ExactWords;
pub use crate::memory::fusion;
use crate::memory::segment::{self, Combine};
use crate::memory::semantic::Semantic;
use crate::store::history_index::{HistoryDoc, HistoryProgress};
use crate::store::{Store, StoreError};
pub use kept::KeptSearch;
pub use range::{RangeError, TimeRange};
pub use tool::{TOOL_NAME, register_tool};

/// Names the segmentation the index was built with (the memory index's): a change re-indexes.
const SEGMENTER: &str = segment::SEGMENTER;
/// Hits when no limit is given.
pub const DEFAULT_LIMIT: usize = 10;
/// Most hits.
pub const MAX_LIMIT: usize = 50;
/// Candidates taken from each side of a hybrid search (at least; more when the limit is larger).
const MIN_CANDIDATES: usize = 20;
/// Candidates ranked per hit asked for: a repeated text is listed once (`hits`).
const SPARE: usize = 3;
/// Longest excerpt of a hit, and of each neighbour, in characters.
const HIT_CHARS: usize = 600;
const NEIGHBOUR_CHARS: usize = 200;

/// One message found.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryHit {
    pub message_id: i64,
    pub session_id: i64,
    /// The session's title, empty while untitled.
    pub session_title: String,
    pub role: Role,
    pub at: DateTime<Utc>,
    /// The message (at most [`HIT_CHARS`] characters around the hit).
    pub text: String,
    /// The messages just before and after it in its session (excerpts).
    pub before: Option<Neighbour>,
    pub after: Option<Neighbour>,
}

/// A message next to a hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbour {
    pub role: Role,
    pub text: String,
}

/// Why a search was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("the search query is empty; give words, or a time range to list what was said then")]
    EmptyQuery,
    #[error(transparent)]
    Range(#[from] RangeError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl HistoryError {
    /// The refusal in the owner's language (`None` for a store failure).
    pub fn owner_text(&self, locale: Locale) -> Option<String> {
        Some(match self {
            HistoryError::EmptyQuery => locale.pick(
                "搜索内容是空的：请给出要找的词，或给出时间范围来列出那段时间的对话",
                "The search query is empty: give words to look for, or a time range to list what was said then",
            ).to_owned(),
            HistoryError::Range(RangeError::Reversed) => locale
                .pick(
                    "时间范围前后颠倒了：after 必须早于 before",
                    "The time range is the wrong way round: after must be earlier than before",
                )
                .to_owned(),
            HistoryError::Range(RangeError::Unreadable { key, value }) => match locale {
                Locale::Zh => format!(
                    "{key} 应是日期（如 2026-03-01）或日期时间（如 2026-03-01 14:30），而不是 {value:?}"
                ),
                Locale::En => format!(
                    "{key} must be a date like 2026-03-01 or a date-time like 2026-03-01 14:30, not {value:?}"
                ),
            },
            HistoryError::Store(_) => return None,
        })
    }

    /// As an API error: refusals are `InvalidArgument` in the owner's language.
    pub fn into_api(self, locale: Locale) -> ApiError {
        match self.owner_text(locale) {
            Some(text) => ApiError::InvalidArgument(text),
            None => match self {
                HistoryError::Store(e) => ApiError::internal(e),
                other => ApiError::internal(other),
            },
        }
    }
}

/// What to look for.
#[derive(Debug, Clone, Default)]
pub struct HistoryQuery<'a> {
    /// Words (any language; any text is searched as plain words); may be empty with a range.
    pub query: &'a str,
    pub after: Option<&'a str>,
    pub before: Option<&'a str>,
    /// 0: [`DEFAULT_LIMIT`]; clamped to [`MAX_LIMIT`].
    pub limit: usize,
}

/// The conversation index and its search. A cheap `Clone` handle.
#[derive(Debug, Clone)]
pub struct History {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Store,
    fts: bool,
    tz: Tz,
    locale: Locale,
    /// Search by meaning, when `[embeddings]` is configured.
    semantic: OnceLock<Semantic>,
}

impl History {
    /// Prepares the index in `store` and starts the indexer on `tasks` (stopped by `cancel`).
    /// Without FTS5 (or when the index cannot be prepared) searches read `history_docs` by LIKE.
    pub async fn open(
        store: Store,
        tz: Tz,
        locale: Locale,
        tasks: &TaskTracker,
        cancel: CancellationToken,
    ) -> History {
        let mut fts = store.fts5_available();
        if let Err(e) = store.prepare_history_index(SEGMENTER, fts).await {
            tracing::warn!(error = %e, "the conversation index cannot be prepared");
            fts = false;
        }
        let history = History {
            inner: Arc::new(Inner {
                store,
                fts,
                tz,
                locale,
                semantic: OnceLock::new(),
            }),
        };
        tasks.spawn(indexer::run(history.clone(), cancel));
        history
    }

    /// Searches by meaning too with `semantic` (a `Semantic` started on `Corpus::History`;
    /// once: a second call is ignored).
    pub fn attach_semantic(&self, semantic: Semantic) {
        semantic.wake();
        let _ = self.inner.semantic.set(semantic);
    }

    /// The embeddings side, when attached.
    pub fn semantic(&self) -> Option<&Semantic> {
        self.inner.semantic.get()
    }

    /// Wakes the embedder (messages were indexed).
    fn wake_embedder(&self) {
        if let Some(s) = self.inner.semantic.get() {
            s.wake();
        }
    }

    /// The owner's locale (refusal texts).
    pub fn locale(&self) -> Locale {
        self.inner.locale
    }

    /// How far indexing got.
    pub async fn progress(&self) -> Result<HistoryProgress, StoreError> {
        self.inner.store.history_progress().await
    }

    /// `time` in the owner's zone, `YYYY-MM-DD HH:MM`.
    pub fn local_time(&self, time: DateTime<Utc>) -> String {
        time.with_timezone(&self.inner.tz)
            .format("%Y-%m-%d %H:%M")
            .to_string()
    }

    /// The messages matching `q`, best first (an empty query with a range: that time's
    /// messages, oldest first).
    pub async fn search(&self, q: &HistoryQuery<'_>) -> Result<Vec<HistoryHit>, HistoryError> {
        let range = TimeRange::parse(q.after, q.before, self.inner.tz)?;
        let limit = match q.limit {
            0 => DEFAULT_LIMIT,
            n => n.min(MAX_LIMIT),
        };
        let query = kernel_common::text::head(q.query.trim(), segment::MAX_QUERY_CHARS);
        if query.is_empty() {
            if range.is_open() {
                return Err(HistoryError::EmptyQuery);
            }
            let docs = self
                .inner
                .store
                .history_between(range.from_ms, range.to_ms, limit)
                .await?;
            return self.hits(docs, &[], limit, false).await;
        }
        segment::ready().await;
        let words = Words::new(query);
        let semantic = self.inner.semantic.get().filter(|s| s.has_vectors());
        // Spare candidates: `hits` lists each exchange once.
        let candidates = limit * SPARE;
        let docs = match semantic {
            None => self.find(&words, range, candidates).await?,
            Some(semantic) => {
                let budget = semantic.recall_budget();
                self.find_hybrid(semantic, &words, range, candidates, budget)
                    .await?
            }
        };
        // A hit found through the lexicon is excerpted around its other-language word.
        let shown: Vec<String> = words
            .terms
            .iter()
            .chain(words.others.iter().flatten())
            .cloned()
            .collect();
        self.hits(docs, &shown, limit, true).await
    }

    /// Lexical candidates and vector candidates (when the query's vector comes within
    /// `budget`; else `None`) fused by [`fusion::HISTORY`].
    async fn find_hybrid(
        &self,
        semantic: &Semantic,
        words: &Words<'_>,
        range: TimeRange,
        limit: usize,
        budget: std::time::Duration,
    ) -> Result<Vec<HistoryDoc>, StoreError> {
        let k = limit.max(MIN_CANDIDATES);
        let (lexical, near) = tokio::join!(
            self.find(words, range, k),
            nearest(semantic, words.query, k, range, budget)
        );
        let mut lexical = lexical?;
        let Some(near) = near else {
            lexical.truncate(limit);
            return Ok(lexical);
        };
        let exact = ExactWords::new(words.query, &words.terms);
        let marked: Vec<(i64, bool)> = lexical
            .iter()
            .map(|d| (d.message_id, exact.matches(&d.text)))
            .collect();
        let ids = fusion::fuse(
            &marked,
            &near,
            fusion::SHIPPED_FLOOR,
            &fusion::HISTORY,
            // All of them: a vector of a message deleted since start-up stays in the in-memory
            // index and is skipped below.
            usize::MAX,
        );
        let missing: Vec<i64> = ids
            .iter()
            .filter(|id| !lexical.iter().any(|d| d.message_id == **id))
            .copied()
            .collect();
        let mut known: HashMap<i64, HistoryDoc> =
            lexical.into_iter().map(|d| (d.message_id, d)).collect();
        for doc in self.inner.store.history_docs_by_id(&missing).await? {
            known.insert(doc.message_id, doc);
        }
        Ok(ids
            .iter()
            .filter_map(|id| known.remove(id))
            .take(limit)
            .collect())
    }

    /// A query's lexical candidates (`(id, exact)`, best first) and vector candidates (`(id,
    /// cosine)`, best first; empty without embeddings), `k` of each: the inputs of [`fusion`]
    /// (the recall evaluation compares rankings on them).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn candidates(
        &self,
        query: &str,
        k: usize,
    ) -> Result<(Vec<(i64, bool)>, Vec<(i64, f32)>), HistoryError> {
        let range = TimeRange::parse(None, None, self.inner.tz)?;
        let words = Words::new(query);
        let lexical = self.find(&words, range, k).await?;
        let exact = ExactWords::new(query, &words.terms);
        let marked = lexical
            .iter()
            .map(|d| (d.message_id, exact.matches(&d.text)))
            .collect();
        let near = match self.inner.semantic.get() {
            Some(s) => nearest(s, query, k, range, std::time::Duration::from_secs(60))
                .await
                .unwrap_or_default(),
            None => Vec::new(),
        };
        Ok((marked, near))
    }

    /// The lexical search: FTS5 AND of the query's own words, then below them each word or its
    /// other-language words, those groups ORed; LIKE without FTS5 or without terms.
    async fn find(
        &self,
        words: &Words<'_>,
        range: TimeRange,
        limit: usize,
    ) -> Result<Vec<HistoryDoc>, StoreError> {
        let Words {
            query,
            terms,
            others,
        } = words;
        let store = &self.inner.store;
        let (from, to) = (range.from_ms, range.to_ms);
        if !self.inner.fts || terms.is_empty() {
            let terms = if terms.is_empty() {
                vec![kernel_common::text::head(query, 200).to_owned()]
            } else {
                terms.to_vec()
            };
            return store.search_history_like(&terms, from, to, limit).await;
        }
        let all = [segment::match_expr(terms, Combine::And)];
        let mut docs: Vec<HistoryDoc> = store
            .search_history_fts(&all, from, to, limit)
            .await?
            .into_iter()
            .map(|(d, _)| d)
            .collect();
        if docs.len() >= limit {
            return Ok(docs);
        }
        // Below them each term or its other-language words (the lexicon), the groups ORed:
        // one query per group, their BM25 summed by the store.
        let mut translated = false;
        let groups: Vec<String> = terms
            .iter()
            .zip(others)
            .map(|(t, other)| {
                let mut group = vec![t.clone()];
                group.extend(other.iter().cloned());
                translated |= !other.is_empty();
                segment::match_expr(&group, Combine::Or)
            })
            .collect();
        if translated || groups.len() > 1 {
            for (doc, _) in store.search_history_fts(&groups, from, to, limit).await? {
                if docs.len() >= limit {
                    break;
                }
                if !docs.iter().any(|d| d.message_id == doc.message_id) {
                    docs.push(doc);
                }
            }
        }
        Ok(docs)
    }

    /// The first `limit` of `docs` as hits: session titles, roles, excerpts and neighbours.
    /// `distinct`: a message with the same text as a hit above is not listed again ("Got it,
    /// noted." said twenty times is one hit, not five of the top five).
    async fn hits(
        &self,
        docs: Vec<HistoryDoc>,
        terms: &[String],
        limit: usize,
        distinct: bool,
    ) -> Result<Vec<HistoryHit>, HistoryError> {
        let mut texts: HashSet<&str> = HashSet::new();
        let listed: Vec<&HistoryDoc> = docs
            .iter()
            .filter(|d| !distinct || texts.insert(d.text.as_str()))
            .take(limit)
            .collect();
        // Two queries for all hits: their neighbours, and their sessions' titles.
        let ids: Vec<i64> = listed.iter().map(|d| d.message_id).collect();
        let mut sessions: Vec<i64> = listed.iter().map(|d| d.session_id).collect();
        sessions.sort_unstable();
        sessions.dedup();
        let store = &self.inner.store;
        let mut around: HashMap<(i64, i64), HistoryDoc> = HashMap::new();
        for (hit, side, doc) in store.history_neighbours(&ids).await? {
            around.insert((hit, side), doc);
        }
        let titles: HashMap<i64, String> =
            store.session_titles(&sessions).await?.into_iter().collect();
        let neighbour = |d: HistoryDoc| Neighbour {
            role: role(&d.role),
            text: text::excerpt(&d.text, &[], NEIGHBOUR_CHARS),
        };
        Ok(listed
            .into_iter()
            .map(|doc| HistoryHit {
                message_id: doc.message_id,
                session_id: doc.session_id,
                session_title: titles.get(&doc.session_id).cloned().unwrap_or_default(),
                role: role(&doc.role),
                at: DateTime::from_timestamp_millis(doc.created_at).unwrap_or_default(),
                text: text::excerpt(&doc.text, terms, HIT_CHARS),
                before: around.remove(&(doc.message_id, -1)).map(neighbour),
                after: around.remove(&(doc.message_id, 1)).map(neighbour),
            })
            .collect())
    }

    /// Indexes what is pending now (tests and benchmarks; the indexer does this by itself).
    #[cfg(any(test, feature = "test-support"))]
    pub async fn catch_up(&self) -> Result<(), StoreError> {
        while indexer::index_batch(&self.inner.store, self.inner.fts).await? > 0 {
            self.wake_embedder();
        }
        Ok(())
    }
}

/// The `k` indexed messages nearest `query` within `range` (the scan on a blocking thread);
/// `None` when the query's vector does not come within `budget`.
async fn nearest(
    semantic: &Semantic,
    query: &str,
    k: usize,
    range: TimeRange,
    budget: std::time::Duration,
) -> Option<Vec<(i64, f32)>> {
    let vector = match semantic.query_vector(query, budget).await {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "query embedding failed or too slow; this history search is lexical");
            return None;
        }
    };
    let semantic = semantic.clone();
    let (from, to) = (range.from_ms, range.to_ms);
    let scan = move || semantic.nearest(&vector, k, Some(from), Some(to));
    tokio::task::spawn_blocking(scan).await.ok()
}

/// A query's words, looked up once per search: its search terms and, for each, the other
/// language's words ([`lexicon`]).
struct Words<'q> {
    query: &'q str,
    terms: Vec<String>,
    others: Vec<Vec<String>>,
}

impl<'q> Words<'q> {
    fn new(query: &'q str) -> Words<'q> {
        let terms = segment::query_terms(query);
        let others = terms.iter().map(|t| lexicon::other_terms(t)).collect();
        Words {
            query,
            terms,
            others,
        }
    }
}

fn role(stored: &str) -> Role {
    if stored == "assistant" {
        Role::Assistant
    } else {
        Role::User
    }
}

#[cfg(test)]
mod tests;
