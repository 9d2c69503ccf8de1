//! `kernel-agentd export` / `import` through the real binary: export then import into a fresh
//! data_dir gives the same memories, sessions, notes and schedules, and a second import adds
//! nothing; sample OpenClaw, nanobot and Hermes Agent folders (written from their documented
//! formats) import once; a bad file (not UTF-8, too large, a symlink out) is named and nothing
//! is added. What the commands print is Chinese by default and English with `locale = "en"`.

use std::path::Path;
use std::process::{Command, Output};

use kernel_agentd::store::Store;
use kernel_proto::v1 as pb;
use tests::chat;
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::process::bin_path;

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

/// `kernel-agentd import --config X --from Y`: `--config` after the subcommand (it is global).
fn import(cfg: &TestConfig, from: &Path, extra: &[&str]) -> (bool, String) {
    let out = Command::new(bin_path("kernel-agentd"))
        .arg("import")
        .arg("--config")
        .arg(&cfg.path)
        .arg("--from")
        .arg(from)
        .args(extra)
        .output()
        .expect("run kernel-agentd");
    (out.status.success(), text(&out))
}

async fn store(cfg: &TestConfig) -> Store {
    Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_import_into_a_fresh_data_dir_round_trips() {
    let fake = FakeLlm::start().await;
    fake.push(Script::text("first answer"));
    fake.push(Script::text("second answer"));
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let mut client = h.client().await;
    chat::completed(&chat::turn(&mut client, "hello round trip").await);
    chat::completed(&chat::turn(&mut client, "second message").await);
    for text in ["likes green tea", "喜欢西湖"] {
        client
            .add_memory(pb::AddMemoryRequest { text: text.into() })
            .await
            .unwrap();
    }
    let cfg = h.stop().await;
    let s = store(&cfg).await;
    let pool = sqlx::SqlitePool::connect_with(
        sqlx::sqlite::SqliteConnectOptions::new().filename(cfg.data_dir().join("kernel.db")),
    )
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO daily_notes (date, text, updated_at) VALUES ('2026-03-01', 'a quiet day', 1)",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("INSERT INTO schedules (spec, expr, mode, message, next_fire, created_at) VALUES ('every day 08:00', '0 8 * * *', 'reminder', 'water the plants', 1900000000000, 1)")
        .execute(&pool)
        .await
        .unwrap();
    // A memory consolidation set aside (superseded by "likes green tea").
    sqlx::raw_sql(
        "INSERT INTO consolidation_runs (at, outcome) VALUES (7, 'ok');
         INSERT INTO memory_changes (run_id, kind, memory_id, at) VALUES (1, 'supersede', 99, 7);
         INSERT INTO memories_set_aside (id, text, created_at, source, importance, reason, by_id,
                                         change_id, set_aside_at)
         VALUES (99, 'likes black coffee', 2, 'auto', 3, 'superseded',
                 (SELECT id FROM memories WHERE text = 'likes green tea'), 1, 7)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let aside_before = s.export_set_aside().await.unwrap();
    assert_eq!(aside_before[0].by.as_deref(), Some("likes green tea"));
    let before = (
        s.export_sessions().await.unwrap(),
        s.export_memories().await.unwrap(),
        s.export_notes().await.unwrap(),
        s.export_schedules().await.unwrap(),
    );
    s.close().await;
    assert_eq!(before.0.len(), 1);

    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export");
    let out = agentd(&cfg.path, &["export", "--to", export.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let md: Vec<_> = std::fs::read_dir(export.join("sessions"))
        .unwrap()
        .collect();
    assert_eq!(md.len(), 1);
    let md = std::fs::read_to_string(md[0].as_ref().unwrap().path()).unwrap();
    assert!(
        md.contains("hello round trip") && md.contains("first answer"),
        "{md}"
    );
    for file in [
        "memories.json",
        "notes.json",
        "schedules.json",
        "usage.json",
    ] {
        assert!(export.join(file).is_file(), "{file}");
    }

    let fresh = TestConfig::new(&fake.url(), "");
    let (ok, said) = import(&fresh, &export, &[]);
    assert!(ok, "{said}");
    assert!(
        said.contains("已新增 1 个会话、2 条记忆（另有 1 条已搁置）、1 篇每日笔记、1 个定时任务"),
        "{said}"
    );
    let s = store(&fresh).await;
    assert_eq!(s.export_set_aside().await.unwrap(), aside_before);
    let after = (
        s.export_sessions().await.unwrap(),
        s.export_memories().await.unwrap(),
        s.export_notes().await.unwrap(),
        s.export_schedules().await.unwrap(),
    );
    s.close().await;
    let strip = |mut v: Vec<kernel_agentd::store::transfer::SessionOut>| {
        v.iter_mut().for_each(|s| s.id = 0);
        v
    };
    assert_eq!(strip(after.0), strip(before.0));
    assert_eq!(after.1, before.1);
    assert_eq!(after.2, before.2);
    assert_eq!(after.3, before.3);

    let (ok, said) = import(&fresh, &export, &[]);
    assert!(ok, "{said}");
    assert!(
        said.contains("已新增 0 个会话、0 条记忆、0 篇每日笔记、0 个定时任务"),
        "{said}"
    );
}

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaw_nanobot_and_hermes_memories_import_once() {
    let root = tempfile::tempdir().unwrap();
    // OpenClaw: the workspace's curated MEMORY.md and a daily log memory/YYYY-MM-DD.md.
    let openclaw = root.path().join("openclaw");
    write(
        &openclaw,
        "MEMORY.md",
        "# MEMORY.md\n\n## Preferences\n- Prefers tea over coffee\n- Answers in Chinese\n\n## People\n- Sister is called Lin\n",
    );
    write(
        &openclaw,
        "memory/2026-02-14.md",
        "# 2026-02-14\n\n- Booked the dentist for Friday\n",
    );
    // nanobot: memory/MEMORY.md (long-term facts), memory/HISTORY.md (timestamped entries) and
    // a daily file memory/YYYY-MM-DD.md (that day's note).
    let nanobot = root.path().join("nanobot");
    write(
        &nanobot,
        "memory/MEMORY.md",
        "# Long-term Memory\n\n## User Information\n- Works as a nurse\n- Lives in Chengdu\n",
    );
    write(
        &nanobot,
        "memory/HISTORY.md",
        "[2026-01-05 09:12] Asked for a running plan; agreed on three runs a week.\n\n[2026-01-07 21:40] Reported a sore knee after running.\n",
    );
    write(
        &nanobot,
        "memory/2026-01-05.md",
        "# 2026-01-05\n\n- Ran 5 km along the river\n",
    );
    // Hermes Agent: MEMORY.md and USER.md, entries separated by a line holding only §.
    let hermes = root.path().join("hermes");
    write(
        &hermes,
        "MEMORY.md",
        "Project Kernel lives in ~/src/kernel\n§\nThe NAS is at 192.168.1.20\n",
    );
    write(
        &hermes,
        "USER.md",
        "Name: Wei\n§\nPrefers concise replies\n",
    );

    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    for (dir, label, memories, notes) in [
        (&openclaw, "openclaw", 3, 1),
        (&nanobot, "nanobot", 4, 1),
        (&hermes, "hermes", 4, 0),
    ] {
        let (ok, said) = import(&cfg, dir, &["--dry-run"]);
        assert!(
            ok && said.contains("将新增") && said.contains(&format!("（{label}）")),
            "{said}"
        );
        let (ok, said) = import(&cfg, dir, &[]);
        assert!(ok, "{said}");
        assert!(
            said.contains(&format!(
                "已新增 0 个会话、{memories} 条记忆、{notes} 篇每日笔记"
            )),
            "{label}: {said}"
        );
        let (ok, said) = import(&cfg, dir, &[]);
        assert!(ok, "{said}");
        assert!(
            said.contains("已新增 0 个会话、0 条记忆、0 篇每日笔记"),
            "{label} again: {said}"
        );
    }
    let s = store(&cfg).await;
    let memories = s.export_memories().await.unwrap();
    s.close().await;
    assert_eq!(memories.len(), 11);
    let find = |text: &str| {
        memories
            .iter()
            .find(|m| m.text == text)
            .unwrap_or_else(|| panic!("{text} in {memories:?}"))
    };
    assert_eq!(find("Prefers tea over coffee").source, "imported:openclaw");
    assert!(
        find("[2026-01-07 21:40] Reported a sore knee after running.").source == "imported:nanobot"
    );
    assert_eq!(find("The NAS is at 192.168.1.20").source, "imported:hermes");
    assert_eq!(find("Prefers concise replies").source, "imported:hermes");

    // agentd indexes the imported memories at start: search finds them.
    let h = Harness::start(cfg).await;
    let mut client = h.client().await;
    let found = client
        .search_memories(pb::SearchMemoriesRequest {
            query: "coffee".into(),
            limit: 5,
            numbered: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        found
            .memories
            .iter()
            .any(|m| m.text == "Prefers tea over coffee"),
        "{found:?}"
    );
    // nanobot's daily file is that day's note.
    let note = client
        .get_notes(pb::GetNotesRequest {
            date: "2026-01-05".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        note.text.as_deref(),
        Some("# 2026-01-05\n\n- Ran 5 km along the river"),
        "{note:?}"
    );
    h.stop().await;
}

#[tokio::test]
async fn a_bad_file_is_named_and_nothing_is_added() {
    let root = tempfile::tempdir().unwrap();
    let cfg = TestConfig::new("http://127.0.0.1:9", "");
    // Not UTF-8.
    let bad = root.path().join("bad-utf8");
    write(&bad, "USER.md", "Name: Wei\n");
    std::fs::write(bad.join("MEMORY.md"), b"ok\n\xff\xfe\n").unwrap();
    // A symlink out of the folder.
    let escape = root.path().join("escape");
    std::fs::create_dir_all(escape.join("memory")).unwrap();
    write(root.path(), "secret.md", "- not yours\n");
    std::os::unix::fs::symlink(root.path().join("secret.md"), escape.join("MEMORY.md")).unwrap();
    // Larger than an import reads (a sparse file).
    let huge = root.path().join("huge");
    write(&huge, "memory/MEMORY.md", "- fine\n");
    let file = std::fs::File::create(huge.join("memory/HISTORY.md")).unwrap();
    file.set_len(1024 * 1024 * 1024).unwrap();

    // In the default locale the reason is Chinese; the rest in English.
    let (ok, said) = import(&cfg, &bad, &[]);
    assert!(
        !ok && said.contains("MEMORY.md：它不是 UTF-8 文本"),
        "{said}"
    );
    tests::media::set_locale(&cfg, "en");
    for (dir, file, why) in [
        (&bad, "MEMORY.md", "not UTF-8"),
        (&escape, "MEMORY.md", "outside the folder"),
        (&huge, "memory/HISTORY.md", "more than"),
    ] {
        let (ok, said) = import(&cfg, dir, &[]);
        assert!(!ok, "{said}");
        assert!(
            said.contains(&dir.join(file).display().to_string()) && said.contains(why),
            "{said}"
        );
    }
    let s = store(&cfg).await;
    assert!(
        s.export_memories().await.unwrap().is_empty(),
        "nothing added"
    );
    s.close().await;
}
