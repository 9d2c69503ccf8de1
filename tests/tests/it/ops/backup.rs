//! `kernel-agentd backup` / `restore` through the real binary: a backup taken while 20 turns run
//! is intact and holds every committed turn; restore then start gives the same sessions and
//! memories; restore is refused while agentd runs; a database from a newer schema is refused at
//! start and left unchanged. What the commands print is Chinese by default and English with
//! `locale = "en"`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use kernel_proto::v1 as pb;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use tests::chat;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::process::{AgentdProcess, bin_path};
use tests::wait::eventually;

/// Runs `kernel-agentd --config <config> <args>`.
fn agentd(config: &Path, args: &[&str]) -> Output {
    Command::new(bin_path("kernel-agentd"))
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("run kernel-agentd")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

async fn open(path: &Path) -> SqlitePool {
    SqlitePool::connect_with(SqliteConnectOptions::new().filename(path))
        .await
        .unwrap()
}

fn turn_text(i: usize) -> String {
    format!("backup-turn-{i:03}-end")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_while_20_turns_run_holds_every_committed_turn() {
    let fake = FakeLlm::start().await;
    for i in 0..20 {
        fake.push(Script::text(format!("answer {i}")));
    }
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let done = Arc::new(AtomicUsize::new(0));
    let mut client = h.client().await;
    let counter = done.clone();
    let turns = tokio::spawn(async move {
        for i in 0..20 {
            let events = chat::turn(&mut client, &turn_text(i)).await;
            chat::completed(&events);
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    eventually("5 turns done", Duration::from_secs(30), async || {
        done.load(Ordering::SeqCst) >= 5
    })
    .await;
    let committed = done.load(Ordering::SeqCst);
    let to = h.cfg.dir.path().join("backup-live");
    let config = h.cfg.path.clone();
    let to_arg = to.display().to_string();
    let out = tokio::task::spawn_blocking(move || agentd(&config, &["backup", "--to", &to_arg]))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The default locale: Chinese.
    assert!(text(&out).contains("备份已校验"), "{}", text(&out));
    turns.await.unwrap();
    assert!(
        done.load(Ordering::SeqCst) == 20,
        "the turns went on during the backup"
    );

    let copy = open(&to.join("kernel.db")).await;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&copy)
        .await
        .unwrap();
    assert_eq!(check, "ok");
    for i in 0..committed {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM messages WHERE content LIKE ?1")
            .bind(format!("%{}%", turn_text(i)))
            .fetch_one(&copy)
            .await
            .unwrap();
        assert_eq!(n, 1, "committed turn {i} is in the backup");
    }
    for file in ["manifest.json", "config.masked.toml"] {
        assert!(to.join(file).is_file(), "{file}");
    }
    let masked = std::fs::read_to_string(to.join("config.masked.toml")).unwrap();
    assert!(!masked.contains(tests::config::PROVIDER_KEY), "{masked}");
    assert!(!masked.contains(tests::config::TELEGRAM_TOKEN), "{masked}");
    h.stop().await;
}

async fn sessions(
    client: &mut pb::agent_client::AgentClient<tonic::transport::Channel>,
) -> Vec<(i64, String)> {
    let resp = client
        .list_sessions(pb::ListSessionsRequest::default())
        .await
        .unwrap()
        .into_inner();
    resp.sessions
        .iter()
        .map(|s| (s.id, s.title.clone()))
        .collect()
}

async fn memories(
    client: &mut pb::agent_client::AgentClient<tonic::transport::Channel>,
) -> Vec<String> {
    let resp = client
        .list_memories(pb::ListMemoriesRequest {})
        .await
        .unwrap()
        .into_inner();
    resp.memories.iter().map(|m| m.text.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_then_start_gives_the_same_sessions_and_memories() {
    let fake = FakeLlm::start().await;
    for i in 0..3 {
        fake.push(Script::text(format!("answer {i}")));
    }
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let mut client = h.client().await;
    chat::completed(&chat::turn(&mut client, "first session").await);
    for text in ["likes green tea", "lives in Hangzhou"] {
        client
            .add_memory(pb::AddMemoryRequest { text: text.into() })
            .await
            .unwrap();
    }
    // The session's title is set after the turn, in the background: the snapshot waits for it
    // (the backup would otherwise hold a title the snapshot has not seen).
    let titled = client.clone();
    eventually(
        "the first session titled",
        Duration::from_secs(10),
        async || {
            sessions(&mut titled.clone())
                .await
                .iter()
                .all(|(_, title)| !title.is_empty())
        },
    )
    .await;
    let (before_sessions, before_memories) =
        (sessions(&mut client).await, memories(&mut client).await);
    let cfg = h.stop().await;
    let to = cfg.dir.path().join("backup-1");
    let out = agentd(&cfg.path, &["backup", "--to", &to.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out));

    // After the backup: more data, which the restore must undo.
    let h = Harness::start(cfg).await;
    let mut client = h.client().await;
    client
        .add_memory(pb::AddMemoryRequest {
            text: "added after the backup".into(),
        })
        .await
        .unwrap();
    chat::completed(&chat::turn(&mut client, "after the backup").await);
    let cfg = h.stop().await;

    let out = agentd(&cfg.path, &["restore", &to.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("被替换的数据库保留在"),
        "{}",
        text(&out)
    );
    let h = Harness::start(cfg).await;
    let mut client = h.client().await;
    assert_eq!(sessions(&mut client).await, before_sessions);
    assert_eq!(memories(&mut client).await, before_memories);
    h.stop().await;
}

#[test]
fn restore_is_refused_while_agentd_runs_and_backup_works_meanwhile() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    tests::media::set_locale(&cfg, "en");
    let agentd_process = AgentdProcess::start(&cfg.path, &[]);
    let to = cfg.dir.path().join("while-running");
    let out = agentd(&cfg.path, &["backup", "--to", &to.display().to_string()]);
    assert!(out.status.success(), "{}", text(&out));
    let out = agentd(&cfg.path, &["restore", &to.display().to_string()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("kernel-agentd is running"),
        "{}",
        text(&out)
    );
    // A non-empty folder is not written into.
    let out = agentd(&cfg.path, &["backup", "--to", &to.display().to_string()]);
    assert!(!out.status.success());
    assert!(text(&out).contains("is not empty"), "{}", text(&out));
    agentd_process.terminate();
}

#[tokio::test]
async fn a_database_from_a_newer_schema_is_refused_at_start_and_left_unchanged() {
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    let db: PathBuf = cfg.data_dir().join("kernel.db");
    kernel_agentd::store::Store::open(&db)
        .await
        .unwrap()
        .close()
        .await;
    let pool = open(&db).await;
    sqlx::query("INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) VALUES (9999, 'future', 1, x'00', 0)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let before = std::fs::read(&db).unwrap();

    let out = tokio::task::spawn_blocking({
        let path = cfg.path.clone();
        move || agentd(&path, &[])
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    let said = text(&out);
    assert!(
        said.contains("schema version 9999") && said.contains("newer Kernel"),
        "{said}"
    );
    assert!(said.contains("restore"), "the fix is named: {said}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is unchanged"
    );
    assert!(
        !cfg.data_dir().join("backups").exists(),
        "nothing was migrated, so nothing backed up"
    );
}
