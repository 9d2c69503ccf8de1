//! Hybrid memory search against the deterministic fake embeddings endpoint: paraphrases and
//! cross-language questions find their memory (lexical search alone does not), strong lexical
//! hits keep their place, date ranges, and the endpoint down, slow or answering garbage
//! (searches and recall still answer lexically, memories are stored, vectors catch up once it
//! is back), a model change re-embeds in the background; end to end, `[embeddings]` shows in
//! GetStatus and SearchMemories answers "hybrid".

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_agentd::memory::embeddings::EmbeddingsClient;
use kernel_agentd::memory::hybrid::DateRange;
use kernel_agentd::memory::semantic::Semantic;
use kernel_agentd::memory::{Memories, SearchMode};
use kernel_agentd::store::Store;
use kernel_common::Secret;
use kernel_common::config::{EmbeddingsConfig, InputStyle};
use kernel_proto::v1 as pb;
use tests::config::TestConfig;
use tests::fake_embeddings::{Behaviour, FakeEmbeddings};
use tests::fake_llm::FakeLlm;
use tests::harness::Harness;
use tests::wait::eventually;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const KEY: &str = "sk-embed-test-key";
const WAIT: Duration = Duration::from_secs(20);

const MEMORIES: &[&str] = &[
    "妈妈对花生过敏",
    "我的领导是老王",
    "我家的猫叫咪咪",
    "主人每天早上喝一杯拿铁咖啡",
    "The owner's car is a blue Volvo",
    "主人住在上海浦东",
];

fn shanghai<T: std::str::FromStr<Err: std::fmt::Debug>>() -> T {
    "Asia/Shanghai".parse().unwrap()
}

/// A fresh database with [`MEMORIES`], its lexical-only `Memories`, and what a hybrid one needs.
struct Rig {
    _dir: tempfile::TempDir,
    store: Store,
    tasks: TaskTracker,
    cancel: CancellationToken,
}

impl Rig {
    async fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
        Rig {
            _dir: dir,
            store,
            tasks: TaskTracker::new(),
            cancel: CancellationToken::new(),
        }
    }

    async fn lexical(&self) -> Memories {
        Memories::open(self.store.clone(), shanghai()).await
    }

    /// Memories with embeddings from `base` tagged `model`.
    async fn hybrid(&self, base: &str, model: &str, budget: Duration) -> (Memories, Semantic) {
        let m = self.lexical().await;
        let config = EmbeddingsConfig {
            api_base: base.to_owned(),
            api_key: Some(Secret::new(KEY)),
            model: model.to_owned(),
            dimensions: None,
            input_style: InputStyle::Plain,
            headers: BTreeMap::new(),
            timeout: Duration::from_secs(5),
            recall_budget: budget,
            min_similarity: 0.0,
        };
        let client = EmbeddingsClient::new(&config, &reqwest_client()).unwrap();
        let semantic = Semantic::start(
            client,
            model.to_owned(),
            self.store.clone(),
            budget,
            &self.tasks,
            self.cancel.child_token(),
        );
        m.attach_semantic(semantic.clone());
        (m, semantic)
    }

    async fn stop(&self) {
        self.cancel.cancel();
        self.tasks.close();
        self.tasks.wait().await;
    }
}

fn reqwest_client() -> kernel_agentd::http::Client {
    kernel_agentd::http::client().unwrap()
}

async fn add_all(m: &Memories) -> Vec<i64> {
    let mut ids = Vec::new();
    for text in MEMORIES {
        ids.push(m.add(text).await.unwrap().id);
    }
    ids
}

async fn all_embedded(semantic: &Semantic, n: u64) {
    eventually(format!("{n} memories with vectors"), WAIT, async || {
        semantic.status().await.with_vectors == n
    })
    .await;
}

async fn top(m: &Memories, query: &str) -> (Option<String>, SearchMode) {
    let found = m.search(query, 3).await.unwrap();
    (found.memories.first().map(|r| r.text.clone()), found.mode)
}

#[tokio::test]
async fn paraphrases_and_other_languages_are_found_by_meaning() {
    let fake = FakeEmbeddings::start(KEY).await;
    let rig = Rig::new().await;
    let (m, semantic) = rig
        .hybrid(&fake.base(), "fake-embed", Duration::from_secs(2))
        .await;
    add_all(&m).await;
    all_embedded(&semantic, MEMORIES.len() as u64).await;
    let lexical = rig.lexical().await;
    for (query, memory) in [
        ("哪些坚果我不能吃", "妈妈对花生过敏"),
        ("who is my boss", "我的领导是老王"),
        ("我养了什么宠物", "我家的猫叫咪咪"),
        ("我开什么车", "The owner's car is a blue Volvo"),
    ] {
        assert_eq!(
            top(&m, query).await,
            (Some(memory.to_owned()), SearchMode::Hybrid),
            "{query}"
        );
        let (lexical_top, _) = top(&lexical, query).await;
        assert_ne!(
            lexical_top.as_deref(),
            Some(memory),
            "lexical alone: {query}"
        );
        let recalled = m.recall_rows(query, 1).await;
        assert_eq!(recalled[0].text, memory, "recall: {query}");
    }
    // A known query vector (benchmarks): the same ranking without the embedding call.
    let known = tests::fake_embeddings::embed("我养了什么宠物");
    let found = m
        .search_with_vector("我养了什么宠物", &known, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.memories[0].text, "我家的猫叫咪咪");
    assert!(
        lexical
            .search_with_vector("猫", &known, 3)
            .await
            .unwrap()
            .is_none()
    );
    // A strong lexical hit keeps the first place.
    assert_eq!(
        top(&m, "浦东").await,
        (Some("主人住在上海浦东".to_owned()), SearchMode::Hybrid)
    );
    // Queries are marked as queries, memories as passages (plain style: no prefixes).
    let inputs: Vec<String> = fake.requests().iter().flat_map(|r| r.inputs()).collect();
    assert!(
        inputs.contains(&"哪些坚果我不能吃".to_owned()),
        "{inputs:?}"
    );
    assert!(inputs.contains(&"妈妈对花生过敏".to_owned()), "{inputs:?}");
    // Deleting a memory drops its vector.
    let cat = m.search("猫", 1).await.unwrap().memories[0].id;
    m.delete(&[cat]).await.unwrap();
    assert_eq!(
        semantic.status().await.with_vectors,
        MEMORIES.len() as u64 - 1
    );
    let (first, _) = top(&m, "我养了什么宠物").await;
    assert_ne!(first.as_deref(), Some("我家的猫叫咪咪"));
    rig.stop().await;
}

#[tokio::test]
async fn date_ranges_are_local_days() {
    let fake = FakeEmbeddings::start(KEY).await;
    let rig = Rig::new().await;
    let (hybrid, semantic) = rig
        .hybrid(&fake.base(), "fake-embed", Duration::from_secs(2))
        .await;
    add_all(&hybrid).await;
    all_embedded(&semantic, MEMORIES.len() as u64).await;
    let lexical = rig.lexical().await;
    // Asia/Shanghai: UTC+8 all year.
    let tz = chrono::FixedOffset::east_opt(8 * 3600).unwrap();
    let today = chrono::Utc::now().with_timezone(&tz).date_naive();
    let day = |d: chrono::NaiveDate| Some(d.format("%Y-%m-%d").to_string());
    let range = |s: Option<String>, u: Option<String>| {
        DateRange::local(s.as_deref(), u.as_deref(), shanghai()).unwrap()
    };
    for m in [&lexical, &hybrid] {
        for (r, expected) in [
            (range(day(today), day(today)), 1),
            (range(day(today.succ_opt().unwrap()), None), 0),
            (range(None, day(today.pred_opt().unwrap())), 0),
        ] {
            let found = m.search_between("浦东", 5, r).await.unwrap().memories;
            assert_eq!(found.len().min(1), expected, "{r:?}: {found:?}");
            if expected == 1 {
                assert_eq!(found[0].text, "主人住在上海浦东");
            }
        }
    }
    rig.stop().await;
}

#[tokio::test]
async fn endpoint_down_or_garbage_searches_lexically_and_vectors_catch_up() {
    for broken in [Behaviour::Fail(503), Behaviour::Garbage] {
        let fake = FakeEmbeddings::start(KEY).await;
        fake.set(broken.clone());
        let rig = Rig::new().await;
        let (m, semantic) = rig
            .hybrid(&fake.base(), "fake-embed", Duration::from_secs(2))
            .await;
        add_all(&m).await;
        let status = eventually("the failure in the status", WAIT, async || {
            let s = semantic.status().await;
            s.last_error.is_some().then_some(s)
        })
        .await;
        assert_eq!(status.with_vectors, 0, "{broken:?}");
        assert!(!status.last_error.unwrap().contains(KEY));
        assert_eq!(
            m.count().await.unwrap(),
            MEMORIES.len() as u64,
            "memories are stored"
        );
        let found = m.search("浦东", 3).await.unwrap();
        assert_eq!(found.mode, SearchMode::Fts5, "{broken:?}: lexical");
        assert_eq!(found.memories[0].text, "主人住在上海浦东");

        fake.set(Behaviour::Answer);
        m.add("主人的生日是五月三日").await.unwrap();
        all_embedded(&semantic, MEMORIES.len() as u64 + 1).await;
        assert_eq!(semantic.status().await.last_error, None);
        assert_eq!(
            top(&m, "哪些坚果我不能吃").await,
            (Some("妈妈对花生过敏".to_owned()), SearchMode::Hybrid)
        );
        rig.stop().await;
    }
}

#[tokio::test]
async fn a_slow_endpoint_costs_recall_no_more_than_its_budget() {
    let fake = FakeEmbeddings::start(KEY).await;
    let rig = Rig::new().await;
    let budget = Duration::from_millis(300);
    let (m, semantic) = rig.hybrid(&fake.base(), "fake-embed", budget).await;
    add_all(&m).await;
    all_embedded(&semantic, MEMORIES.len() as u64).await;
    fake.set(Behaviour::Stall);
    let started = Instant::now();
    let rows = m.recall_rows("主人住在哪里？浦东吗", 3).await;
    let took = started.elapsed();
    assert!(took >= budget && took < Duration::from_secs(2), "{took:?}");
    assert_eq!(rows[0].text, "主人住在上海浦东", "lexical for this turn");
    rig.stop().await;
}

#[tokio::test]
async fn a_model_change_re_embeds_in_the_background() {
    let fake = FakeEmbeddings::start(KEY).await;
    let rig = Rig::new().await;
    let (m, semantic) = rig
        .hybrid(&fake.base(), "model-a", Duration::from_secs(2))
        .await;
    add_all(&m).await;
    all_embedded(&semantic, MEMORIES.len() as u64).await;
    rig.stop().await;
    drop(m);

    let rig2 = Rig {
        _dir: tempfile::tempdir().unwrap(),
        store: rig.store.clone(),
        tasks: TaskTracker::new(),
        cancel: CancellationToken::new(),
    };
    let before = fake.requests().len();
    let (m, semantic) = rig2
        .hybrid(&fake.base(), "model-b", Duration::from_secs(2))
        .await;
    assert_eq!(semantic.status().await.model, "model-b");
    all_embedded(&semantic, MEMORIES.len() as u64).await;
    let asked: Vec<String> = fake.requests()[before..]
        .iter()
        .filter(|r| r.json["model"] == "model-b")
        .flat_map(|r| r.inputs())
        .collect();
    assert_eq!(asked.len(), MEMORIES.len(), "{asked:?}");
    assert_eq!(
        top(&m, "who is my boss").await,
        (Some("我的领导是老王".to_owned()), SearchMode::Hybrid)
    );
    rig2.stop().await;
}

#[tokio::test]
async fn status_and_search_rpc_end_to_end() {
    let llm = FakeLlm::start().await;
    let fake = FakeEmbeddings::start(KEY).await;
    let mut h = Harness::start(TestConfig::new(&llm.url(), &fake.config(KEY))).await;
    for text in MEMORIES {
        h.client
            .add_memory(pb::AddMemoryRequest {
                text: (*text).to_owned(),
            })
            .await
            .unwrap();
    }
    let status = eventually("all memories embedded", WAIT, async || {
        let s = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        s.embeddings
            .filter(|e| e.with_vectors == MEMORIES.len() as u64)
    })
    .await;
    assert_eq!(status.model, "fake-embed");
    assert_eq!(status.memories, MEMORIES.len() as u64);
    assert_eq!(status.last_error, None);
    let found = h
        .client
        .search_memories(pb::SearchMemoriesRequest {
            query: "我养了什么宠物".into(),
            limit: 3,
            numbered: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(found.mode, "hybrid");
    assert_eq!(found.memories[0].text, "我家的猫叫咪咪");
    h.stop().await;
}

/// The newest user message of a recorded model request, as JSON text.
fn newest_user(body: &serde_json::Value) -> String {
    let messages = tests::chat::wire_messages(body);
    messages.last().unwrap().to_string()
}

#[tokio::test]
async fn turns_recall_by_meaning_and_answer_while_the_endpoint_is_down() {
    let llm = FakeLlm::start().await;
    let fake = FakeEmbeddings::start(KEY).await;
    let mut h = Harness::start(TestConfig::new(&llm.url(), &fake.config(KEY))).await;
    let mut cat = 0;
    for text in MEMORIES {
        let id = h
            .client
            .add_memory(pb::AddMemoryRequest {
                text: (*text).to_owned(),
            })
            .await
            .unwrap()
            .into_inner()
            .id;
        if text.contains('猫') {
            cat = id;
        }
    }
    eventually("all memories embedded", WAIT, async || {
        let s = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        s.embeddings
            .is_some_and(|e| e.with_vectors == MEMORIES.len() as u64)
    })
    .await;
    llm.push(tests::fake_llm::Script::text("咪咪。"));
    tests::chat::completed(&tests::chat::turn(&mut h.client, "我养了什么宠物").await);
    let first = newest_user(&llm.requests()[0].body);
    assert!(
        first.contains(&format!("[{cat}] (")),
        "the cat is recalled first: {first}"
    );
    let cat_at = first.find("我家的猫叫咪咪").unwrap();
    let next_memory = first.find("- [").unwrap();
    assert!(
        first[next_memory..].starts_with(&format!("- [{cat}]")) && cat_at > next_memory,
        "{first}"
    );

    // The endpoint down: the turn still answers (lexical recall), a new memory is stored.
    fake.set(Behaviour::Fail(503));
    llm.push(tests::fake_llm::Script::text("浦东。"));
    tests::chat::completed(&tests::chat::turn(&mut h.client, "我住在浦东吗").await);
    let second = newest_user(&llm.requests()[1].body);
    assert!(second.contains("主人住在上海浦东"), "{second}");
    h.client
        .add_memory(pb::AddMemoryRequest {
            text: "主人的生日是五月三日".into(),
        })
        .await
        .unwrap();
    let status = eventually("the failure in the status", WAIT, async || {
        let s = h
            .client
            .get_status(pb::GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        s.embeddings.filter(|e| e.last_error.is_some())
    })
    .await;
    assert_eq!(status.memories, MEMORIES.len() as u64 + 1);
    assert!(status.last_error.unwrap().contains("503"));
    // Back up: the new memory gets its vector.
    fake.set(Behaviour::Answer);
    eventually(
        "the new memory embedded",
        Duration::from_secs(90),
        async || {
            let s = h
                .client
                .get_status(pb::GetStatusRequest {})
                .await
                .unwrap()
                .into_inner();
            s.embeddings.is_some_and(|e| {
                e.with_vectors == MEMORIES.len() as u64 + 1 && e.last_error.is_none()
            })
        },
    )
    .await;
    h.stop().await;
}
