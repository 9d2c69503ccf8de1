//! Tests of the export/import store queries: every column of an exported table is exported or
//! named as not, and round trips keep what they carry.

use std::collections::BTreeSet;

use super::*;

async fn store(dir: &tempfile::TempDir, name: &str) -> Store {
    Store::open(&dir.path().join(name)).await.unwrap()
}

async fn run(store: &Store, sql: &'static str) {
    sqlx::raw_sql(sql).execute(&store.pool).await.unwrap();
}

/// A column not exported, and why.
type NotExported = (&'static str, &'static str);

/// Every column of the exported tables: (table, exported, not exported).
const COLUMNS: &[(&str, &[&str], &[NotExported])] = &[
    (
        "sessions",
        &[
            "id",
            "title",
            "provider",
            "model",
            "created_at",
            "updated_at",
        ],
        &[],
    ),
    (
        "messages",
        &["ordinal", "role", "content", "created_at", "starts_round"],
        &[
            ("id", "a new id on import"),
            ("session_id", "the session it is listed under"),
        ],
    ),
    (
        "memories",
        &[
            "text",
            "created_at",
            "source",
            "importance",
            "refreshed_at",
            "origin",
        ],
        &[("id", "a new id on import")],
    ),
    (
        "memories_set_aside",
        &[
            "text",
            "source",
            "origin",
            "created_at",
            "importance",
            "refreshed_at",
            "reason",
            "by_id",
            "set_aside_at",
        ],
        &[
            ("id", "a new id on import"),
            (
                "change_id",
                "a new change under the import's run: undo belongs to the database it was set aside in",
            ),
        ],
    ),
    (
        "answer_feedback",
        &["feedback"],
        &[
            ("message_id", "exported with its message"),
            ("chat_message_id", "a chat message of the exporting install"),
            ("created_at", "the message's time is kept"),
        ],
    ),
    ("daily_notes", &["date", "text", "updated_at"], &[]),
    (
        "topic_sessions",
        &["thread_id", "name", "created_at"],
        &[("session_id", "the session it is listed under")],
    ),
    (
        "schedules",
        &[
            "spec",
            "expr",
            "mode",
            "message",
            "next_fire",
            "created_at",
            "model",
        ],
        &[
            ("id", "a new id on import"),
            ("paused", "an imported schedule runs; pause it again there"),
            (
                "session_id",
                "the topic it reports in is this install's; an imported one reports in the main chat",
            ),
        ],
    ),
    (
        "usage",
        &[
            "session_id",
            "provider",
            "model",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "created_at",
            "purpose",
        ],
        &[("id", "exported to read, not imported")],
    ),
];

#[tokio::test]
async fn columns_every_column_of_an_exported_table_is_exported_or_named_as_not() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, "k.db").await;
    for (table, exported, not_exported) in COLUMNS {
        let found: BTreeSet<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?1)")
            .bind(table)
            .fetch_all(&store.pool)
            .await
            .unwrap()
            .into_iter()
            .collect();
        let known: BTreeSet<String> = exported
            .iter()
            .chain(not_exported.iter().map(|(c, _)| c))
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            found, known,
            "{table}: a column is neither exported nor named as not exported"
        );
    }
}

#[tokio::test]
async fn an_export_imported_elsewhere_keeps_origins_models_and_purposes() {
    let dir = tempfile::tempdir().unwrap();
    let from = store(&dir, "from.db").await;
    run(
        &from,
        "INSERT INTO memories (text, created_at, source, importance, refreshed_at, origin)
         VALUES ('the API key rotates monthly', 5, 'auto', 4, 9, 'tool mcp_docs__search'),
                ('likes tea', 6, 'owner', NULL, NULL, NULL)",
    )
    .await;
    run(
        &from,
        "INSERT INTO schedules (spec, expr, mode, message, next_fire, created_at, model)
         VALUES ('daily 08:00', '0 8 * * *', 'task', 'news', 100, 1, 'fake/fake-model-2')",
    )
    .await;
    run(
        &from,
        "INSERT INTO usage (provider, model, input_tokens, output_tokens, cache_read_tokens,
                            cache_write_tokens, created_at, purpose)
         VALUES ('fake', 'fake-model', 1, 2, 0, 0, 3, 'title')",
    )
    .await;
    run(
        &from,
        "INSERT INTO consolidation_runs (at, outcome) VALUES (7, 'ok');
         INSERT INTO memory_changes (run_id, kind, memory_id, at) VALUES (1, 'supersede', 99, 7);
         INSERT INTO memories_set_aside (id, text, created_at, source, reason, by_id, change_id,
                                         set_aside_at)
         VALUES (99, 'likes coffee', 2, 'auto', 'superseded', 2, 1, 7)",
    )
    .await;
    let memories = from.export_memories().await.unwrap();
    let schedules = from.export_schedules().await.unwrap();
    assert_eq!(
        from.export_usage().await.unwrap()[0].purpose,
        "title".to_owned()
    );
    let aside = from.export_set_aside().await.unwrap();
    assert_eq!(aside.len(), 1);
    assert_eq!(aside[0].reason, "superseded");
    assert_eq!(aside[0].by.as_deref(), Some("likes tea"));

    // Through JSON, as the files carry them, into another database.
    let memories: Vec<MemoryOut> =
        serde_json::from_slice(&serde_json::to_vec(&memories).unwrap()).unwrap();
    let schedules: Vec<ScheduleOut> =
        serde_json::from_slice(&serde_json::to_vec(&schedules).unwrap()).unwrap();
    let aside: Vec<SetAsideOut> =
        serde_json::from_slice(&serde_json::to_vec(&aside).unwrap()).unwrap();
    let to = store(&dir, "to.db").await;
    let rows = ImportRows {
        memories: memories.clone(),
        schedules: schedules.clone(),
        set_aside: aside.clone(),
        ..ImportRows::default()
    };
    let added = to.import_rows(&rows, false).await.unwrap();
    assert_eq!(added.set_aside, 1);
    // Set aside again, pointing at the same memory, and out of undo's reach.
    assert_eq!(to.export_set_aside().await.unwrap(), aside);
    assert_eq!(to.undo_consolidation(0, false).await.unwrap(), None);
    assert_eq!(to.last_consolidation_run().await.unwrap(), None);
    let page = to.memories_page_with_set_aside(0, 10).await.unwrap();
    assert_eq!(page.len(), 3, "{page:?}");
    let (row, why) = &page[0];
    assert_eq!(row.text, "likes coffee");
    assert_eq!(why.as_ref().unwrap().reason, "superseded");
    assert_eq!(to.export_memories().await.unwrap(), memories);
    assert_eq!(
        to.export_memories().await.unwrap()[0].origin.as_deref(),
        Some("tool mcp_docs__search")
    );
    assert_eq!(to.export_schedules().await.unwrap(), schedules);
    assert_eq!(schedules[0].model.as_deref(), Some("fake/fake-model-2"));

    // An export from before these fields reads with none.
    let old: MemoryOut =
        serde_json::from_str(r#"{"text": "t", "source": "owner", "created_at": 1}"#).unwrap();
    assert_eq!(old.origin, None);

    // The set-aside memory's id is one memories will not hand out again.
    run(
        &to,
        "INSERT INTO memories (text, created_at, source) VALUES ('new', 8, 'owner')",
    )
    .await;
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM memories UNION ALL SELECT id FROM memories_set_aside")
            .fetch_all(&to.pool)
            .await
            .unwrap();
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[tokio::test]
async fn feedback_on_an_answer_is_exported_and_imported_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let from = store(&dir, "from.db").await;
    run(
        &from,
        "INSERT INTO sessions (id, provider, model, created_at, updated_at)
             VALUES (1, 'p', 'm', 1, 1);
         INSERT INTO messages (id, session_id, ordinal, role, content, created_at, starts_round)
             VALUES (10, 1, 0, 'user', '[]', 1, 1), (11, 1, 1, 'assistant', '[]', 2, 0);
         INSERT INTO answer_feedback (message_id, feedback, chat_message_id, created_at)
             VALUES (11, '👍', 500, 3)",
    )
    .await;
    let sessions = from.export_sessions().await.unwrap();
    let feedback: Vec<_> = sessions[0]
        .messages
        .iter()
        .map(|m| m.feedback.clone())
        .collect();
    assert_eq!(feedback, [None, Some("👍".to_owned())]);
    let sessions: Vec<SessionOut> =
        serde_json::from_slice(&serde_json::to_vec(&sessions).unwrap()).unwrap();
    let to = store(&dir, "to.db").await;
    let rows = ImportRows {
        sessions: sessions.clone(),
        ..ImportRows::default()
    };
    to.import_rows(&rows, false).await.unwrap();
    assert_eq!(
        to.export_sessions().await.unwrap()[0].messages,
        sessions[0].messages
    );
}

#[tokio::test]
async fn a_sessions_topic_is_exported_and_imported_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let from = store(&dir, "from.db").await;
    run(
        &from,
        "INSERT INTO sessions (id, provider, model, created_at, updated_at)
             VALUES (1, 'p', 'm', 1, 1), (2, 'p', 'm', 2, 2), (3, 'p', 'm', 3, 3);
         INSERT INTO topic_sessions (thread_id, session_id, created_at, name)
             VALUES (41, 1, 5, 'Alpha'), (42, 2, 6, NULL)",
    )
    .await;
    let sessions = from.export_sessions().await.unwrap();
    let topics: Vec<_> = sessions.iter().map(|s| s.topic.clone()).collect();
    assert_eq!(
        topics,
        [
            Some(TopicOut {
                thread_id: 41,
                name: Some("Alpha".into()),
                created_at: 5
            }),
            Some(TopicOut {
                thread_id: 42,
                name: None,
                created_at: 6
            }),
            None
        ]
    );
    let sessions: Vec<SessionOut> =
        serde_json::from_slice(&serde_json::to_vec(&sessions).unwrap()).unwrap();
    let to = store(&dir, "to.db").await;
    // Topic 42 already has a session here: it keeps it.
    run(
        &to,
        "INSERT INTO sessions (id, provider, model, created_at, updated_at)
             VALUES (9, 'q', 'n', 9, 9);
         INSERT INTO topic_sessions (thread_id, session_id, created_at) VALUES (42, 9, 9)",
    )
    .await;
    let rows = ImportRows {
        sessions: sessions.clone(),
        ..ImportRows::default()
    };
    assert_eq!(to.import_rows(&rows, false).await.unwrap().sessions, 3);
    let imported = to.export_sessions().await.unwrap();
    let alpha = imported.iter().find(|s| s.created_at == 1).unwrap();
    assert_eq!(alpha.topic, sessions[0].topic);
    assert_eq!(to.topic_name(41).await.unwrap().as_deref(), Some("Alpha"));
    assert_eq!(to.topic_session(41).await.unwrap(), Some(alpha.id));
    assert_eq!(to.topic_session(42).await.unwrap(), Some(9));
    let second = imported.iter().find(|s| s.created_at == 2).unwrap();
    assert_eq!(second.topic, None);
    // An export from before topics reads with none.
    let old: SessionOut = serde_json::from_str(
        r#"{"id": 1, "title": null, "provider": "p", "model": "m", "created_at": 1, "updated_at": 1}"#,
    )
    .unwrap();
    assert_eq!(old.topic, None);
}
