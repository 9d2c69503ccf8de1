//! Kernel's bilingual conversational recall set (`bench/recall/conversations.json`, made by
//! `bench/recall/make_set.py`): each conversation's sessions are stored in a fresh database and
//! indexed by the real indexer, each question is one `History::search` (limit 5), and a
//! question counts when the owner turn that answers it is among the hits (turn-level recall@5),
//! overall and per kind (lexical, paraphrase, cross-language).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use kernel_agentd::conversation::Message;
use kernel_agentd::recall::{History, HistoryQuery};
use kernel_agentd::store::Store;
use kernel_common::config::Locale;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::table::Table;

#[derive(Deserialize)]
struct Set {
    conversations: Vec<Conversation>,
}

#[derive(Deserialize)]
struct Conversation {
    sessions: Vec<Vec<Turn>>,
    questions: Vec<Question>,
}

#[derive(Deserialize)]
struct Turn {
    id: String,
    owner: String,
    kernel: String,
}

#[derive(Deserialize)]
struct Question {
    question: String,
    kind: String,
    answer: String,
}

/// The set's path in the repository.
pub(crate) fn set_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/recall/conversations.json")
}

/// Turn-level recall@5 of the lexical search (`[embeddings]` off), overall and per kind.
pub(crate) async fn run(table: &mut Table) -> anyhow::Result<()> {
    let path = set_path();
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
    let set: Set = serde_json::from_str(&text)?;
    let mut by_kind: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for conversation in &set.conversations {
        let dir = tempfile::tempdir()?;
        let store = Store::open(&dir.path().join("kernel.db")).await?;
        let mut turn_of: HashMap<String, i64> = HashMap::new();
        for session in &conversation.sessions {
            let id = store.create_session("p", "m").await?.id;
            for turn in session {
                let ids = store
                    .append_messages(
                        id,
                        &[
                            Message::user_text(turn.owner.clone()),
                            Message::assistant_text(turn.kernel.clone()),
                        ],
                    )
                    .await?;
                turn_of.insert(turn.id.clone(), ids[0]);
            }
        }
        let tasks = TaskTracker::new();
        let cancel = CancellationToken::new();
        let history = History::open(
            store.clone(),
            chrono_tz::Tz::UTC,
            Locale::Zh,
            &tasks,
            cancel.clone(),
        )
        .await;
        loop {
            let p = history.progress().await?;
            if p.done == p.total {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        for q in &conversation.questions {
            let hits = history
                .search(&HistoryQuery {
                    query: &q.question,
                    limit: 5,
                    ..Default::default()
                })
                .await?;
            let want = turn_of[&q.answer];
            let found = hits.iter().any(|h| h.message_id == want);
            for kind in [q.kind.as_str(), "all"] {
                let e = by_kind.entry(kind.to_owned()).or_default();
                e.0 += usize::from(found);
                e.1 += 1;
            }
        }
        cancel.cancel();
        store.close().await;
    }
    for (kind, (found, total)) in &by_kind {
        table.info(
            &format!("conversation recall@5, lexical only, {kind}"),
            format!("{:.3}", *found as f64 / *total as f64),
            &format!(
                "{found} of {total} questions; {} conversations of bench/recall/conversations.json",
                set.conversations.len()
            ),
        );
    }
    Ok(())
}
