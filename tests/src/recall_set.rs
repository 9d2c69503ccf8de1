//! Kernel's bilingual conversational recall set (`bench/recall/conversations.json`, made by
//! `bench/recall/make_set.py`) and its evaluation loop, shared by `kernel-bench --sections
//! historyeval` (lexical) and `memory::history_real_model` (with the real model): each
//! conversation is stored in a fresh database and indexed by the real indexer, each question
//! is asked, and a question counts for a ranking when the owner turn that answers it is among
//! that ranking's hits (turn-level recall@5), per half (even / odd conversations) and kind.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use kernel_agentd::conversation::Message;
use kernel_agentd::recall::History;
use kernel_agentd::store::Store;
use kernel_common::config::Locale;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

#[derive(Debug, Deserialize)]
pub struct Set {
    pub conversations: Vec<Conversation>,
}

#[derive(Debug, Deserialize)]
pub struct Conversation {
    pub sessions: Vec<Vec<Turn>>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Deserialize)]
pub struct Turn {
    pub id: String,
    pub owner: String,
    pub kernel: String,
}

#[derive(Debug, Deserialize)]
pub struct Question {
    pub question: String,
    /// `lexical` (the fact's own words), `paraphrase` or `cross` (the other language).
    pub kind: String,
    /// The id of the turn whose owner message answers it.
    pub answer: String,
}

/// The set's path in the repository.
pub fn path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/recall/conversations.json")
}

/// The set, read from [`path`].
pub fn load() -> anyhow::Result<Set> {
    let path = path();
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// Stores `conversation` (a session per session, each turn an owner message and Kernel's
/// answer) and returns each turn's owner message id.
pub async fn store(
    store: &Store,
    conversation: &Conversation,
) -> anyhow::Result<HashMap<String, i64>> {
    let mut turn_of = HashMap::new();
    for session in &conversation.sessions {
        let id = store.create_session("p", "m").await?.id;
        for turn in session {
            let m = [
                Message::user_text(turn.owner.clone()),
                Message::assistant_text(turn.kernel.clone()),
            ];
            let ids = store.append_messages(id, &m).await?;
            turn_of.insert(turn.id.clone(), ids[0]);
        }
    }
    Ok(turn_of)
}

/// The conversation index over `store` once its background indexer (on `tasks`, until
/// `cancel`) has indexed everything stored.
pub async fn indexed(
    store: &Store,
    tasks: &TaskTracker,
    cancel: &CancellationToken,
) -> anyhow::Result<History> {
    let history = History::open(
        store.clone(),
        chrono_tz::Tz::UTC,
        Locale::En,
        tasks,
        cancel.clone(),
    )
    .await;
    loop {
        let p = history.progress().await?;
        if p.done == p.total {
            return Ok(history);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Found / asked per (ranking, half, kind); half and kind also summed as `both` and `all`.
#[derive(Debug, Default)]
pub struct Tally(BTreeMap<(String, String, String), (usize, usize)>);

impl Tally {
    /// Counts one question of `kind` in `half` for ranking `name`.
    pub fn count(&mut self, name: &str, half: &str, kind: &str, found: bool) {
        for (h, k) in [(half, kind), (half, "all"), ("both", kind), ("both", "all")] {
            let key = (name.to_owned(), h.to_owned(), k.to_owned());
            let e = self.0.entry(key).or_default();
            e.0 += usize::from(found);
            e.1 += 1;
        }
    }

    /// `(found, asked)` of ranking `name` in `half` (`both`, `even`, `odd`) for `kind` (`all`…).
    pub fn counts(&self, name: &str, half: &str, kind: &str) -> (usize, usize) {
        let key = (name.to_owned(), half.to_owned(), kind.to_owned());
        self.0.get(&key).copied().unwrap_or_default()
    }

    /// Recall of ranking `name` in `half` for `kind` (0 when nothing was asked).
    pub fn recall(&self, name: &str, half: &str, kind: &str) -> f64 {
        let (found, asked) = self.counts(name, half, kind);
        if asked == 0 {
            return 0.0;
        }
        found as f64 / asked as f64
    }
}

/// Runs the set: each conversation stored and indexed, then `open` makes the index searched
/// (it may attach vectors and wait for them), and `ask` answers each question with
/// `(ranking, found)` pairs, `found` meaning the owner message `want` is among that ranking's
/// top 5.
pub async fn evaluate<O, A>(set: &Set, mut open: O, mut ask: A) -> anyhow::Result<Tally>
where
    O: AsyncFnMut(&Store, &TaskTracker, &CancellationToken) -> anyhow::Result<History>,
    A: AsyncFnMut(&History, &Question, i64) -> anyhow::Result<Vec<(String, bool)>>,
{
    let mut tally = Tally::default();
    for (n, conversation) in set.conversations.iter().enumerate() {
        let half = if n % 2 == 0 { "even" } else { "odd" };
        let dir = tempfile::tempdir()?;
        let db = Store::open(&dir.path().join("kernel.db")).await?;
        let turn_of = store(&db, conversation).await?;
        let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
        let history = open(&db, &tasks, &cancel).await?;
        for q in &conversation.questions {
            let want = *turn_of
                .get(&q.answer)
                .with_context(|| format!("no turn {}", q.answer))?;
            for (name, found) in ask(&history, q, want).await? {
                tally.count(&name, half, &q.kind, found);
            }
        }
        cancel.cancel();
        tasks.close();
        tasks.wait().await;
        db.close().await;
    }
    Ok(tally)
}
