//! The Memory page's set-aside memories (memory consolidation) in a real headless Chromium:
//! a memory a consolidation run superseded (seeded in the database before agentd starts, as
//! the run writes it) is hidden by default; "show set-aside" lists it marked, with its reason
//! and the memory that replaced it, its `<script>` as text; the undo button undoes the run and
//! the memory is an ordinary one again. Screenshot `memory-set-aside`.

use std::time::Duration;

use chrono::Utc;
use fantoccini::Locator;
use kernel_agentd::store::Store;
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::harness::unix_channel;
use tests::process::AgentdProcess;
use tests::web::{WEB_SECTION, WebConsole};

use super::pages_browser::logged_in;

const WAIT: Duration = Duration::from_secs(30);
const OLD: &str = "<script>document.title='pwned'</script> the owner lives in Paris";
const NEW: &str = "the owner now lives in Berlin";

/// Memory 1 superseded by memory 2 in consolidation run 1 (the rows the run writes).
async fn seed(cfg: &TestConfig) {
    std::fs::create_dir_all(cfg.data_dir()).unwrap();
    let path = cfg.data_dir().join("kernel.db");
    Store::open(&path).await.unwrap().close().await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let now = Utc::now().timestamp_millis();
    let old = now - 86_400_000;
    for sql in [
        "INSERT INTO memories (id, text, created_at, source) VALUES (2, ?1, ?3, 'auto')",
        "INSERT INTO consolidation_runs (id, at, outcome, superseded) VALUES (1, ?3, 'ok', 1)",
        "INSERT INTO memory_changes (id, run_id, kind, memory_id, at)
         VALUES (1, 1, 'supersede', 1, ?3)",
        "INSERT INTO memories_set_aside (id, text, created_at, source, reason, by_id, change_id,
                                         set_aside_at)
         VALUES (1, ?2, ?4, 'auto', 'superseded', 2, 1, ?3)",
    ] {
        sqlx::query(sql)
            .bind(NEW)
            .bind(OLD)
            .bind(now)
            .bind(old)
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
}

#[tokio::test]
async fn set_aside_memories_are_hidden_by_default_shown_with_their_reason_and_undone() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    seed(&cfg).await;
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    let web = WebConsole::start(&cfg.path);
    let browser = logged_in(&web, &cfg).await;
    let c = &browser.client;
    let texts = async |css: &str| -> Vec<String> {
        let mut out = Vec::new();
        for cell in c.find_all(Locator::Css(css)).await.unwrap() {
            out.push(cell.text().await.unwrap());
        }
        out
    };

    // Hidden by default: only the memory that replaced it.
    c.goto(&web.url("/memory")).await.unwrap();
    assert_eq!(texts("td.memory-text").await, [NEW]);
    assert!(texts("tr.set-aside").await.is_empty());

    // "Show set-aside": listed, marked, with why and what replaced it; the script is text.
    c.find(Locator::Id("memory-aside"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.find(Locator::Id("memory-filter"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("tr.set-aside"))
        .await
        .expect("the set-aside memory listed");
    assert_eq!(texts("td.memory-text").await, [NEW, OLD]);
    let why = texts("tr.set-aside td.memory-aside").await;
    assert_eq!(
        why,
        ["已搁置: 已被取代，新记忆 #2"],
        "marked, with the memory replacing it"
    );
    assert_eq!(
        c.find(Locator::Css("tr.set-aside"))
            .await
            .unwrap()
            .attr("data-id")
            .await
            .unwrap()
            .as_deref(),
        Some("1")
    );
    assert_ne!(c.title().await.unwrap(), "pwned", "the script did not run");
    browser.screenshot("memory-set-aside").await;
    let hidden = client
        .browse_memories(pb::BrowseMemoriesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(hidden.total, 1, "not an ordinary memory by default");

    // Undo the latest run: memory 1 is an ordinary memory again.
    c.find(Locator::Id("memory-undo"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Id("memory-undone"))
        .await
        .expect("the undo's result");
    let undone = texts("#memory-undone").await;
    assert_eq!(undone, ["已撤销整理，恢复的记忆数：1"]);
    assert!(texts("tr.set-aside").await.is_empty());
    let all = client
        .browse_memories(pb::BrowseMemoriesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(all.total, 2);
    browser.close().await;
}
