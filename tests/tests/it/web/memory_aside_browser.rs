//! The Memory page's set-aside memories (memory consolidation) in a real headless Chromium:
//! a memory a consolidation run superseded (seeded in the database before agentd starts, as
//! the run writes it) is hidden by default; "show set-aside" lists it marked, with its reason
//! and the memory that replaced it, its `<script>` as text; the undo button undoes the run and
//! the memory is an ordinary one again. Screenshot `memory-set-aside`.

use chrono::Utc;
use fantoccini::Locator;
use kernel_proto::v1 as pb;
use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::web::WEB_SECTION;
use tests::web_browser::{WebStack, click, seed_pool, texts_of, wait_for};

const OLD: &str = "<script>document.title='pwned'</script> the owner lives in Paris";
const NEW: &str = "the owner now lives in Berlin";

/// Memory 1 superseded by memory 2 in consolidation run 1 (the rows the run writes).
async fn seed(cfg: &TestConfig) {
    let pool = seed_pool(cfg).await;
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
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let mut client = stack.agent().await;
    let browser = &stack.browser;
    let c = &browser.client;

    // Hidden by default: only the memory that replaced it.
    stack.goto("/memory").await;
    assert_eq!(texts_of(browser, "td.memory-text").await, [NEW]);
    assert!(texts_of(browser, "tr.set-aside").await.is_empty());

    // "Show set-aside": listed, marked, with why and what replaced it; the script is text.
    click(browser, "#memory-aside").await;
    click(browser, "#memory-filter").await;
    wait_for(
        browser,
        Locator::Css("tr.set-aside"),
        "the set-aside memory listed",
    )
    .await;
    assert_eq!(texts_of(browser, "td.memory-text").await, [NEW, OLD]);
    let why = texts_of(browser, "tr.set-aside td.memory-aside").await;
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
    click(browser, "#memory-undo").await;
    wait_for(browser, Locator::Id("memory-undone"), "the undo's result").await;
    let undone = texts_of(browser, "#memory-undone").await;
    assert_eq!(undone, ["已撤销整理，恢复的记忆数：1"]);
    assert!(texts_of(browser, "tr.set-aside").await.is_empty());
    let all = client
        .browse_memories(pb::BrowseMemoriesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(all.total, 2);
    stack.close().await;
}
