//! Long-term memory through the library (`Memories` over a fresh SQLite file): Chinese and
//! English search with jieba + FTS5, BM25 order, AND→OR→LIKE fallbacks, LIKE when FTS5 is
//! reported unavailable, both tables kept in step, hostile queries, limits, validation.

use kernel_agentd::memory::{MAX_TEXT_CHARS, Memories, MemoryError, SearchMode};
use kernel_agentd::store::Store;
use sqlx::sqlite::SqlitePoolOptions;

struct Db {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kernel.db");
        Db { _dir: dir, path }
    }

    async fn store(&self) -> Store {
        Store::open(&self.path).await.unwrap()
    }

    async fn memories(&self) -> Memories {
        Memories::open(self.store().await, shanghai()).await
    }

    /// Memories over a store whose FTS5 is reported unavailable.
    async fn memories_without_fts5(&self) -> Memories {
        let store = self.store().await.without_fts5();
        Memories::open(store, shanghai()).await
    }

    async fn sql(&self) -> sqlx::SqlitePool {
        let url = format!("sqlite://{}", self.path.display());
        SqlitePoolOptions::new().connect(&url).await.unwrap()
    }

    async fn count(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&self.sql().await)
            .await
            .unwrap()
    }
}

fn shanghai<T: std::str::FromStr<Err: std::fmt::Debug>>() -> T {
    "Asia/Shanghai".parse().unwrap()
}

const CORPUS: &[&str] = &[
    "北京明天的天气怎么样",
    "北京的天气很好",
    "主人喜欢喝乌龙茶，不加糖",
    "The owner's cat is called Miso",
    "The owner prefers dark mode in every editor",
    "主人在上海工作，住在浦东",
];

async fn seeded(m: &Memories) -> Vec<i64> {
    let mut ids = Vec::new();
    for text in CORPUS {
        ids.push(m.add(text).await.unwrap().id);
    }
    ids
}

fn texts(found: &kernel_agentd::memory::Found) -> Vec<&str> {
    found.memories.iter().map(|m| m.text.as_str()).collect()
}

#[tokio::test]
async fn chinese_and_english_words_are_found_with_fts5() {
    let db = Db::new();
    let m = db.memories().await;
    assert_eq!(m.mode(), SearchMode::Fts5);
    seeded(&m).await;

    let found = m.search("天气", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Fts5);
    assert!(texts(&found).contains(&"北京明天的天气怎么样"), "{found:?}");
    assert!(texts(&found).contains(&"北京的天气很好"), "{found:?}");
    assert!(!texts(&found).iter().any(|t| t.contains("乌龙茶")));

    let found = m.search("北京天气", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Fts5);
    assert!(texts(&found).contains(&"北京的天气很好"), "{found:?}");

    let found = m.search("乌龙茶", 5).await.unwrap();
    assert_eq!(texts(&found), ["主人喜欢喝乌龙茶，不加糖"]);

    let found = m.search("CAT", 5).await.unwrap();
    assert_eq!(
        (found.mode, texts(&found)),
        (SearchMode::Fts5, vec!["The owner's cat is called Miso"])
    );
    let found = m.search("dark mode", 5).await.unwrap();
    assert_eq!(
        texts(&found),
        ["The owner prefers dark mode in every editor"]
    );
}

#[tokio::test]
async fn bm25_ranks_the_closer_match_first() {
    let db = Db::new();
    let m = db.memories().await;
    let long = m
        .add("办公室里有打印机、白板、沙发、绿植、冰箱、微波炉，角落里还放着咖啡和很多杂物")
        .await
        .unwrap();
    let short = m.add("主人每天早上喝咖啡，下午也喝咖啡").await.unwrap();
    m.add("主人不喜欢下雨天").await.unwrap();

    let found = m.search("咖啡", 5).await.unwrap();
    let ids: Vec<i64> = found.memories.iter().map(|r| r.id).collect();
    assert_eq!(ids, [short.id, long.id], "{found:?}");

    // OR after an empty AND: the memory sharing the rarer word comes first.
    let found = m.search("咖啡 下雨天", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Fts5);
    assert_eq!(found.memories.len(), 3, "{found:?}");
    assert_eq!(found.memories[0].text, "主人不喜欢下雨天", "{found:?}");
}

#[tokio::test]
async fn and_is_tried_before_or() {
    let db = Db::new();
    let m = db.memories().await;
    seeded(&m).await;
    let found = m.search("owner cat", 5).await.unwrap();
    assert_eq!(
        texts(&found),
        ["The owner's cat is called Miso"],
        "AND narrows: {found:?}"
    );
    let found = m.search("上海 咖啡", 5).await.unwrap();
    assert_eq!(
        (found.mode, texts(&found)),
        (SearchMode::Fts5, vec!["主人在上海工作，住在浦东"]),
        "OR when AND finds nothing"
    );
}

#[tokio::test]
async fn like_takes_over_when_fts5_finds_nothing() {
    let db = Db::new();
    let m = db.memories().await;
    m.add("The password manager is supercalifragilistic")
        .await
        .unwrap();
    let found = m.search("cali", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Like);
    assert_eq!(
        texts(&found),
        ["The password manager is supercalifragilistic"]
    );
    let found = m.search("nothing-like-this", 5).await.unwrap();
    assert!(found.memories.is_empty());
}

#[tokio::test]
async fn like_fallback_when_fts5_is_reported_unavailable() {
    let db = Db::new();
    db.memories().await; // creates the (empty) index
    let m = db.memories_without_fts5().await;
    assert_eq!(m.mode(), SearchMode::Like);
    seeded(&m).await;

    let found = m.search("天气", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Like);
    assert!(texts(&found).contains(&"北京明天的天气怎么样"), "{found:?}");
    assert!(texts(&found).contains(&"北京的天气很好"), "{found:?}");
    let found = m.search("北京天气", 5).await.unwrap();
    assert!(texts(&found).contains(&"北京的天气很好"), "{found:?}");
    let found = m.search("cat", 5).await.unwrap();
    assert_eq!(texts(&found), ["The owner's cat is called Miso"]);
    // No word in common with anything: the terms are matched one by one, then nothing.
    assert!(m.search("火星", 5).await.unwrap().memories.is_empty());

    // The index was never touched; a later start with FTS5 indexes what it lacks.
    assert_eq!(db.count("memories_fts").await, 0);
    let m = db.memories().await;
    assert_eq!(db.count("memories_fts").await, CORPUS.len() as i64);
    let found = m.search("天气", 5).await.unwrap();
    assert_eq!((found.mode, found.memories.len()), (SearchMode::Fts5, 2));
}

#[tokio::test]
async fn add_and_delete_keep_both_tables_in_step() {
    let db = Db::new();
    let store = db.store().await;
    let m = Memories::open(store.clone(), shanghai()).await;
    let ids = seeded(&m).await;
    assert_eq!(store.memory_index_ids().await.unwrap(), ids);

    assert_eq!(m.delete(&[ids[1], ids[3], 9_999]).await.unwrap(), 2);
    let left: Vec<i64> = [0, 2, 4, 5].iter().map(|&i| ids[i]).collect();
    assert_eq!(store.memory_index_ids().await.unwrap(), left);
    let listed: Vec<i64> = m.list(200).await.unwrap().iter().map(|r| r.id).collect();
    assert_eq!(listed, left.iter().rev().copied().collect::<Vec<_>>());
    assert!(m.search("cat", 5).await.unwrap().memories.is_empty());

    // One transaction: when the index write fails, the memory is not stored either.
    sqlx::query("DROP TABLE memories_fts")
        .execute(&db.sql().await)
        .await
        .unwrap();
    let before = db.count("memories").await;
    let err = m.add("这条写不进索引").await.unwrap_err();
    assert!(matches!(err, MemoryError::Store(_)), "{err:?}");
    assert_eq!(db.count("memories").await, before);
    let err = m.delete(&[left[0]]).await.unwrap_err();
    assert!(matches!(err, MemoryError::Store(_)), "{err:?}");
    assert_eq!(db.count("memories").await, before);

    // The next start rebuilds the index from the memories.
    let m = db.memories().await;
    assert_eq!(store.memory_index_ids().await.unwrap(), left);
    assert_eq!(m.search("乌龙茶", 5).await.unwrap().memories.len(), 1);
}

#[tokio::test]
async fn an_index_built_by_another_segmenter_is_rebuilt_at_start_up() {
    let db = Db::new();
    let store = db.store().await;
    let m = Memories::open(store.clone(), shanghai()).await;
    let ids = seeded(&m).await;
    let current = kernel_agentd::memory::segment::SEGMENTER;
    assert_eq!(
        store
            .get_setting("memory_index.segmenter")
            .await
            .unwrap()
            .as_deref(),
        Some(current)
    );

    // As an older dictionary would have left it: other terms for every memory.
    let pool = db.sql().await;
    sqlx::query("UPDATE memories_fts SET terms = 'stale'")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "UPDATE settings SET value = 'jieba-search/full-dict' WHERE key = 'memory_index.segmenter'",
    )
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(m.search("乌龙茶", 5).await.unwrap().mode, SearchMode::Like);

    let m = db.memories().await;
    assert_eq!(store.memory_index_ids().await.unwrap(), ids);
    let found = m.search("乌龙茶", 5).await.unwrap();
    assert_eq!(found.mode, SearchMode::Fts5);
    assert_eq!(texts(&found), ["主人喜欢喝乌龙茶，不加糖"]);
    assert!(m.search("stale", 5).await.unwrap().memories.is_empty());
    assert_eq!(
        store
            .get_setting("memory_index.segmenter")
            .await
            .unwrap()
            .as_deref(),
        Some(current)
    );

    // The same segmenter again: nothing is rebuilt (the index keeps what is in it).
    sqlx::query("UPDATE memories_fts SET terms = 'kept' WHERE rowid = ?1")
        .bind(ids[0])
        .execute(&pool)
        .await
        .unwrap();
    let m = db.memories().await;
    assert_eq!(texts(&m.search("kept", 5).await.unwrap()), [CORPUS[0]]);
}

#[tokio::test]
async fn hostile_queries_are_searched_as_words_and_never_fail() {
    let db = Db::new();
    let m = db.memories().await;
    seeded(&m).await;
    let odd = m
        .add("Notes: NEAR the OR gate, col: value, a * star and a \"quote\"")
        .await
        .unwrap();
    let hostile = [
        "\"",
        "*",
        "NEAR(",
        "col:",
        "OR",
        "'; DROP TABLE memories; --",
        "\"unbalanced",
        "AND OR NOT",
        "terms:天气",
        "^北京",
        "a\" OR \"b",
        "%",
        "_",
        "\\",
        "(((((",
        "NEAR(\"北京\" \"天气\", 2)",
    ];
    for q in hostile {
        let found = m.search(q, 5).await;
        assert!(found.is_ok(), "{q:?}: {found:?}");
    }
    for q in ["NEAR(", "col:", "OR", "\"", "*"] {
        let found = m.search(q, 5).await.unwrap();
        assert!(
            found.memories.iter().any(|r| r.id == odd.id),
            "{q:?} finds the memory containing it: {found:?}"
        );
    }
    for q in ["NEAR(", "col:", "OR", "NEAR(\"北京\" \"天气\", 2)"] {
        let found = m.search(q, 5).await.unwrap();
        assert_eq!(
            found.mode,
            SearchMode::Fts5,
            "{q:?} ran as FTS5 words: {found:?}"
        );
    }
    let found = m.search("terms:天气", 5).await.unwrap();
    assert!(texts(&found).contains(&"北京的天气很好"), "{found:?}");
    // A LIKE wildcard matches only itself.
    assert!(m.search("%", 5).await.unwrap().memories.is_empty());
    assert!(m.search("_", 5).await.unwrap().memories.is_empty());
    assert_eq!(db.count("memories").await, CORPUS.len() as i64 + 1);
    assert_eq!(db.count("memories_fts").await, CORPUS.len() as i64 + 1);
}

#[tokio::test]
async fn limits_are_clamped() {
    let db = Db::new();
    let m = db.memories().await;
    for i in 0..60 {
        m.add(&format!("第{i}条：主人喜欢猫")).await.unwrap();
    }
    assert_eq!(m.search("猫", 0).await.unwrap().memories.len(), 1);
    assert_eq!(m.search("猫", 3).await.unwrap().memories.len(), 3);
    assert_eq!(m.search("猫", 1_000_000).await.unwrap().memories.len(), 50);
    assert_eq!(m.list(0).await.unwrap().len(), 1);
    assert_eq!(m.list(usize::MAX).await.unwrap().len(), 60);
    let newest = m.list(1).await.unwrap();
    assert_eq!(newest[0].text, "第59条：主人喜欢猫");
    // A huge query is cut down, not refused.
    let huge = "猫 ".repeat(200_000);
    assert!(!m.search(&huge, 5).await.unwrap().memories.is_empty());
}

#[tokio::test]
async fn texts_are_validated_and_not_stored_twice() {
    let db = Db::new();
    let m = db.memories().await;
    assert!(matches!(m.add("").await, Err(MemoryError::Empty)));
    assert!(matches!(m.add(" \n\t ").await, Err(MemoryError::Empty)));
    let too_long = "长".repeat(MAX_TEXT_CHARS + 1);
    assert!(matches!(
        m.add(&too_long).await,
        Err(MemoryError::TooLong { .. })
    ));
    assert!(m.add(&"长".repeat(MAX_TEXT_CHARS)).await.is_ok());
    assert!(matches!(
        m.search("  ", 5).await,
        Err(MemoryError::EmptyQuery)
    ));

    let first = m.add("  主人的生日是五月三日 ").await.unwrap();
    assert_eq!(first.text, "主人的生日是五月三日");
    let again = m.add("主人的生日是五月三日").await.unwrap();
    assert_eq!(again.id, first.id);
    assert_eq!(db.count("memories").await, 2);
    assert_eq!(db.count("memories_fts").await, 2);
}

#[tokio::test]
async fn recall_prefers_matches_then_the_most_recent() {
    let db = Db::new();
    let m = db.memories().await;
    let ids = seeded(&m).await;
    let rows = m.recall_rows("明天北京天气如何？要带伞吗", 5).await;
    assert!(
        rows.iter().any(|r| r.text == "北京明天的天气怎么样"),
        "{rows:?}"
    );
    assert!(!rows.iter().any(|r| r.text.contains("乌龙茶")), "{rows:?}");
    let rows = m.recall_rows("hello there", 3).await;
    let recent: Vec<i64> = rows.iter().map(|r| r.id).collect();
    assert_eq!(recent, [ids[5], ids[4], ids[3]], "the 3 most recent");
    assert!(m.recall_rows("天气", 0).await.is_empty());
}
