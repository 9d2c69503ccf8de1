//! The SQLite store against a real database file in a fresh tempdir per test.

use std::path::{Path, PathBuf};

use kernel_agentd::conversation::{Block, Message, Role};
use kernel_agentd::store::{MIGRATOR, Store, StoreError, StoredMessage};
use serde_json::json;
use sqlx::SqlitePool;
use sqlx::migrate::Migrator;
use sqlx::sqlite::SqliteConnectOptions;
use tempfile::TempDir;

/// A fresh directory and the database path inside it (in a not-yet-existing subdirectory).
fn db_path() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data").join("kernel.db");
    (dir, path)
}

async fn open() -> (TempDir, Store) {
    let (dir, path) = db_path();
    let store = Store::open(&path).await.unwrap();
    (dir, store)
}

/// A second, plain connection pool to the same file, for raw SQL.
async fn raw(path: &Path) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    SqlitePool::connect_with(options).await.unwrap()
}

fn latest_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap()
}

fn tool_call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: id.into(),
            name: "search".into(),
            input: json!({"q": id}),
        }],
    }
}

fn tool_result(call_id: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: call_id.into(),
            content: "found".into(),
            is_error: false,
        }],
    }
}

fn messages_of(stored: &[StoredMessage]) -> Vec<Message> {
    stored.iter().map(|s| s.message.clone()).collect()
}

#[tokio::test]
async fn open_creates_a_private_wal_database_with_fts5() {
    let (_dir, path) = db_path();
    let store = Store::open(&path).await.unwrap();
    assert!(path.is_file());
    assert_eq!(store.path(), path);
    assert!(store.fts5_available());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let pool = raw(&path).await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn foreign_keys_are_enforced_so_deleting_sessions_cascades() {
    let (_dir, path) = db_path();
    let store = Store::open(&path).await.unwrap();
    let a = store.create_session("claude", "opus").await.unwrap();
    let b = store.create_session("claude", "opus").await.unwrap();
    let c = store.create_session("claude", "opus").await.unwrap();
    for s in [&a, &b, &c] {
        store
            .append_messages(
                s.id,
                &[Message::user_text("q"), Message::assistant_text("a")],
            )
            .await
            .unwrap();
    }

    let deleted = store.delete_sessions(&[a.id, c.id, 9_999]).await.unwrap();

    assert_eq!(deleted, 2);
    assert_eq!(store.get_session(a.id).await.unwrap(), None);
    assert_eq!(store.get_session(c.id).await.unwrap(), None);
    assert_eq!(store.message_count(b.id).await.unwrap(), 2);
    let pool = raw(&path).await;
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM messages")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        rows, 2,
        "messages of deleted sessions are gone from the table"
    );
}

#[tokio::test]
async fn sessions_are_created_updated_and_listed_newest_first() {
    let (_dir, store) = open().await;
    let a = store.create_session("claude", "opus").await.unwrap();
    assert_eq!(a.title, None);
    assert_eq!((a.provider.as_str(), a.model.as_str()), ("claude", "opus"));
    let b = store.create_session("openai", "gpt").await.unwrap();
    let c = store.create_session("openai", "gpt").await.unwrap();

    let ids =
        |rows: Vec<kernel_agentd::store::SessionRow>| rows.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_sessions(10).await.unwrap()),
        [c.id, b.id, a.id]
    );
    assert_eq!(ids(store.list_sessions(2).await.unwrap()), [c.id, b.id]);

    store.touch_session(a.id).await.unwrap();
    assert_eq!(
        ids(store.list_sessions(10).await.unwrap()),
        [a.id, c.id, b.id]
    );
    store
        .append_messages(b.id, &[Message::user_text("hi")])
        .await
        .unwrap();
    assert_eq!(
        ids(store.list_sessions(10).await.unwrap()),
        [b.id, a.id, c.id]
    );

    store.set_session_title(a.id, "关于天气").await.unwrap();
    store
        .set_session_model(a.id, "openai", "gpt-mini")
        .await
        .unwrap();
    let a2 = store.get_session(a.id).await.unwrap().unwrap();
    assert_eq!(a2.title.as_deref(), Some("关于天气"));
    assert_eq!(
        (a2.provider.as_str(), a2.model.as_str()),
        ("openai", "gpt-mini")
    );
    assert_eq!(a2.created_at, a.created_at);
    assert!(a2.updated_at > a.updated_at);
    assert_eq!(
        ids(store.list_sessions(10).await.unwrap()),
        [b.id, a.id, c.id],
        "retitling is no activity"
    );
}

#[tokio::test]
async fn missing_sessions_and_messages_are_not_found() {
    let (_dir, store) = open().await;
    assert_eq!(store.get_session(42).await.unwrap(), None);
    assert!(matches!(
        store.set_session_title(42, "x").await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.set_session_model(42, "p", "m").await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.touch_session(42).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.append_messages(42, &[Message::user_text("x")]).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.replace_message(42, &Message::user_text("x")).await,
        Err(StoreError::NotFound)
    ));
    assert!(store.load_messages(42).await.unwrap().is_empty());
    assert_eq!(store.message_count(42).await.unwrap(), 0);
}

#[tokio::test]
async fn appended_messages_keep_order_and_ordinals_continue_across_calls() {
    let (_dir, store) = open().await;
    let s = store.create_session("claude", "opus").await.unwrap();
    let first = [Message::user_text("1"), Message::assistant_text("2")];
    let second = [
        Message::user_text("3"),
        Message::assistant_text("4"),
        Message::user_text("5"),
    ];

    let ids1 = store.append_messages(s.id, &first).await.unwrap();
    assert!(store.append_messages(s.id, &[]).await.unwrap().is_empty());
    let ids2 = store.append_messages(s.id, &second).await.unwrap();

    let stored = store.load_messages(s.id).await.unwrap();
    let texts: Vec<String> = stored.iter().map(|m| m.message.text()).collect();
    assert_eq!(texts, ["1", "2", "3", "4", "5"]);
    assert_eq!(
        stored.iter().map(|m| m.ordinal).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    assert_eq!(
        stored.iter().map(|m| m.id).collect::<Vec<_>>(),
        [ids1, ids2].concat()
    );
    assert_eq!(store.message_count(s.id).await.unwrap(), 5);
}

#[tokio::test]
async fn every_block_kind_round_trips() {
    let (_dir, store) = open().await;
    let s = store.create_session("claude", "opus").await.unwrap();
    let image_bytes: Vec<u8> = (0..=255).collect();
    let messages = vec![
        Message {
            role: Role::User,
            content: vec![
                Block::text("看看这张图"),
                Block::Image {
                    mime_type: "image/png".into(),
                    data: image_bytes,
                },
            ],
        },
        Message {
            role: Role::Assistant,
            content: vec![
                Block::Reasoning {
                    provider: "claude".into(),
                    data: json!({"type": "thinking", "thinking": "hmm", "signature": "c2ln"}),
                },
                Block::text("Let me check."),
                Block::ToolCall {
                    id: "call_1".into(),
                    name: "memory_search".into(),
                    input: json!({"query": "猫", "k": 3}),
                },
            ],
        },
        Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                call_id: "call_1".into(),
                content: "boom".into(),
                is_error: true,
            }],
        },
        Message::assistant_text("**done**"),
    ];

    store.append_messages(s.id, &messages).await.unwrap();

    assert_eq!(
        messages_of(&store.load_messages(s.id).await.unwrap()),
        messages
    );
}

#[tokio::test]
async fn last_rounds_start_at_user_turns_never_at_tool_results() {
    let (_dir, store) = open().await;
    let s = store.create_session("claude", "opus").await.unwrap();
    let history = vec![
        Message::user_text("r1"),
        tool_call("a"),
        tool_result("a"),
        Message::assistant_text("r1 done"),
        Message::user_text("r2"),
        tool_call("b"),
        tool_result("b"),
        tool_call("c"),
        tool_result("c"),
        Message::assistant_text("r2 done"),
        Message::user_text("r3"),
        Message::assistant_text("r3 done"),
    ];
    store.append_messages(s.id, &history).await.unwrap();

    let last = |n| {
        let store = store.clone();
        async move { messages_of(&store.load_last_rounds(s.id, n).await.unwrap()) }
    };
    assert_eq!(last(0).await, Vec::<Message>::new());
    assert_eq!(last(1).await, history[10..]);
    assert_eq!(last(2).await, history[4..]);
    assert_eq!(last(3).await, history);
    assert_eq!(last(50).await, history);

    // A round still running (tool result last) is one round; it starts at its user turn.
    store
        .append_messages(
            s.id,
            &[Message::user_text("r4"), tool_call("d"), tool_result("d")],
        )
        .await
        .unwrap();
    let r4 = last(1).await;
    assert_eq!(r4.first().map(Message::text).as_deref(), Some("r4"));
    assert_eq!(r4.len(), 3);
}

#[tokio::test]
async fn last_rounds_skip_messages_before_the_first_user_turn() {
    let (_dir, store) = open().await;
    let s = store.create_session("claude", "opus").await.unwrap();
    store
        .append_messages(
            s.id,
            &[tool_result("orphan"), Message::assistant_text("stray")],
        )
        .await
        .unwrap();
    assert!(store.load_last_rounds(s.id, 5).await.unwrap().is_empty());

    store
        .append_messages(
            s.id,
            &[Message::user_text("q"), Message::assistant_text("a")],
        )
        .await
        .unwrap();
    let texts: Vec<String> = store
        .load_last_rounds(s.id, 5)
        .await
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect();
    assert_eq!(texts, ["q", "a"]);
}

#[tokio::test]
async fn messages_can_be_repaired_and_deleted() {
    let (_dir, store) = open().await;
    let s = store.create_session("claude", "opus").await.unwrap();
    let ids = store
        .append_messages(
            s.id,
            &[
                Message::user_text("q"),
                tool_call("x"),
                Message::user_text("interrupted"),
            ],
        )
        .await
        .unwrap();

    // The dangling call gets a synthetic result in place of the next message: no longer a turn.
    store
        .replace_message(ids[2], &tool_result("x"))
        .await
        .unwrap();
    let last = store.load_last_rounds(s.id, 1).await.unwrap();
    assert_eq!(last.iter().map(|m| m.id).collect::<Vec<_>>(), ids);
    assert_eq!(last[2].message, tool_result("x"));

    assert_eq!(
        store
            .delete_message_ids(&[ids[1], ids[2], 9_999])
            .await
            .unwrap(),
        2
    );
    let left = store.load_messages(s.id).await.unwrap();
    assert_eq!(left.iter().map(|m| m.id).collect::<Vec<_>>(), [ids[0]]);
    let next = store
        .append_messages(s.id, &[Message::assistant_text("a")])
        .await
        .unwrap();
    assert_eq!(store.load_messages(s.id).await.unwrap()[1].id, next[0]);
}

#[tokio::test]
async fn settings_are_upserted() {
    let (_dir, store) = open().await;
    assert_eq!(store.get_setting("provider").await.unwrap(), None);
    store.set_setting("provider", "claude").await.unwrap();
    store.set_setting("model", "opus").await.unwrap();
    store.set_setting("provider", "openai").await.unwrap();
    assert_eq!(
        store.get_setting("provider").await.unwrap().as_deref(),
        Some("openai")
    );
    assert_eq!(
        store.get_setting("model").await.unwrap().as_deref(),
        Some("opus")
    );
}

#[tokio::test]
async fn corrupt_rows_are_reported_not_panicked_on() {
    let (_dir, path) = db_path();
    let store = Store::open(&path).await.unwrap();
    let s = store.create_session("claude", "opus").await.unwrap();
    let t = store.create_session("claude", "opus").await.unwrap();
    store
        .append_messages(s.id, &[Message::user_text("ok")])
        .await
        .unwrap();
    store
        .append_messages(t.id, &[Message::user_text("ok")])
        .await
        .unwrap();
    let pool = raw(&path).await;
    sqlx::query("INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES (?1, 5, 'assistant', '{not json', 0)")
        .bind(s.id)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE messages SET role = 'system' WHERE session_id = ?1")
        .bind(t.id)
        .execute(&pool)
        .await
        .unwrap();

    let bad_json = store.load_messages(s.id).await.unwrap_err();
    assert!(
        matches!(&bad_json, StoreError::Corrupt(m) if m.contains("bad content")),
        "{bad_json}"
    );
    assert!(matches!(
        store.load_last_rounds(s.id, 1).await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(
        matches!(store.load_messages(t.id).await, Err(StoreError::Corrupt(m)) if m.contains("role"))
    );
}

#[tokio::test]
async fn errors_never_show_sql() {
    let (_dir, store) = open().await;
    store.close().await;
    let err = store.list_sessions(5).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(..)));
    let shown = err.to_string();
    assert!(shown.contains("list sessions"), "{shown}");
    assert!(!shown.to_uppercase().contains("SELECT"), "{shown}");
}

#[tokio::test]
async fn a_fresh_database_is_at_the_latest_schema_version() {
    let (_dir, store) = open().await;
    assert!(latest_version() >= 2);
    assert_eq!(store.schema_version().await.unwrap(), latest_version());
}

#[tokio::test]
async fn a_first_version_database_is_upgraded_with_its_data_intact() {
    let (_dir, path) = db_path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let pool = raw(&path).await;
    let v1 = Migrator::with_migrations(
        MIGRATOR
            .iter()
            .filter(|m| m.version == 1)
            .cloned()
            .collect(),
    );
    v1.run(&pool).await.unwrap();
    let history = [
        Message::user_text("old question"),
        tool_call("a"),
        tool_result("a"),
        Message::assistant_text("old answer"),
        Message::user_text("second"),
        Message::assistant_text("second answer"),
    ];
    sqlx::query("INSERT INTO sessions (id, title, provider, model, created_at, updated_at) VALUES (7, '旧会话', 'claude', 'opus', 1700000000000, 1700000001000), (8, NULL, 'openai', 'gpt', 1700000002000, 1700000002000)")
        .execute(&pool)
        .await
        .unwrap();
    for (ordinal, m) in history.iter().enumerate() {
        let role = if m.role == Role::User {
            "user"
        } else {
            "assistant"
        };
        sqlx::query("INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES (7, ?1, ?2, ?3, 1700000000500)")
            .bind(ordinal as i64)
            .bind(role)
            .bind(serde_json::to_string(&m.content).unwrap())
            .execute(&pool)
            .await
            .unwrap();
    }
    sqlx::query("INSERT INTO messages (session_id, ordinal, role, content, created_at) VALUES (8, 0, 'user', 'garbage', 0), (8, 1, 'user', '[\"x\", 1]', 0)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("INSERT INTO settings (key, value) VALUES ('provider', 'claude')")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let store = Store::open(&path).await.unwrap();

    assert_eq!(store.schema_version().await.unwrap(), latest_version());
    let old = store.get_session(7).await.unwrap().unwrap();
    assert_eq!(old.title.as_deref(), Some("旧会话"));
    assert_eq!(old.created_at.timestamp_millis(), 1_700_000_000_000);
    assert_eq!(
        store
            .list_sessions(10)
            .await
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>(),
        [8, 7]
    );
    assert_eq!(messages_of(&store.load_messages(7).await.unwrap()), history);
    assert_eq!(
        messages_of(&store.load_last_rounds(7, 1).await.unwrap()),
        history[4..],
        "round starts backfilled"
    );
    assert_eq!(
        messages_of(&store.load_last_rounds(7, 2).await.unwrap()),
        history
    );
    assert!(matches!(
        store.load_messages(8).await,
        Err(StoreError::Corrupt(_))
    ));
    assert_eq!(
        store.get_setting("provider").await.unwrap().as_deref(),
        Some("claude")
    );
    let next = store
        .append_messages(7, &[Message::user_text("new")])
        .await
        .unwrap();
    assert_eq!(
        store
            .load_messages(7)
            .await
            .unwrap()
            .last()
            .map(|m| (m.id, m.ordinal)),
        Some((next[0], 6))
    );
}

#[tokio::test]
async fn a_database_from_a_newer_kernel_is_refused() {
    let (_dir, path) = db_path();
    Store::open(&path).await.unwrap().close().await;
    let pool = raw(&path).await;
    sqlx::query("INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (9999, 'future', 1, x'00', 0)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let err = Store::open(&path).await.unwrap_err();
    assert!(err.to_string().contains("newer Kernel"), "{err}");
}

#[tokio::test]
async fn the_same_file_can_be_opened_twice() {
    let (_dir, path) = db_path();
    let first = Store::open(&path).await.unwrap();
    let second = Store::open(&path).await.unwrap();
    let s = first.create_session("claude", "opus").await.unwrap();
    second
        .append_messages(s.id, &[Message::user_text("via the second handle")])
        .await
        .unwrap();
    assert_eq!(
        first.load_messages(s.id).await.unwrap()[0].message.text(),
        "via the second handle"
    );
    assert_eq!(second.get_session(s.id).await.unwrap().unwrap().id, s.id);
}
