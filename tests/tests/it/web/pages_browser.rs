//! The web console's reading and tending pages in a real headless Chromium, with the real
//! kernel-agentd and kernel-web: the Usage page charts a ledger seeded over several days (the
//! fake provider's cost on each seeded day, as SVG bars with their titles; by purpose, an
//! empty purpose as "unspecified" and a hostile one as text; the budget and what is left); a
//! session's whole history opened, searched, renamed and deleted; a day's note rendered;
//! skills listed; a reminder shown with its next run and deleted. A screenshot of each page is
//! written under `target/web-screenshots/`. Memories browsed by source and day, and one edited.

use chrono::{FixedOffset, Utc};
use fantoccini::Locator;
use kernel_agentd::conversation::{Block, Message, Role};
use kernel_proto::v1 as pb;
use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::web::WEB_SECTION;
use tests::web_browser::{
    WebStack, click, fill, seed_pool, seed_store, text_of, texts_of, wait_for,
};

/// fake-model costs $1 per million input tokens; a $10 daily budget.
fn priced_config(llm: &FakeLlm) -> TestConfig {
    let cfg = TestConfig::new(
        &llm.url(),
        &format!("{WEB_SECTION}\n[budget]\ndaily = 10\n"),
    );
    cfg.rewrite(|toml| {
        toml.replace(
            r#"models = ["fake-model", "fake-model-2"]"#,
            r#"models = ["fake-model", "fake-model-2"]
prices."fake-model" = { input = 1.0, output = 0.0 }"#,
        )
    });
    cfg
}

/// Writes usage rows straight into the (migrated) database before agentd starts: `(days ago,
/// million input tokens, purpose)` each.
async fn seed_usage(cfg: &TestConfig, rows: &[(i64, u64, &str)]) {
    let pool = seed_pool(cfg).await;
    for &(days_ago, millions, purpose) in rows {
        let at = Utc::now() - chrono::Duration::days(days_ago);
        sqlx::query(
            "INSERT INTO usage (session_id, provider, model, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, created_at, purpose)
             VALUES (NULL, 'fake', 'fake-model', ?1, 10, 0, 0, ?2, ?3)",
        )
        .bind(i64::try_from(millions * 1_000_000).unwrap())
        .bind(at.timestamp_millis())
        .bind(purpose)
        .execute(&pool)
        .await
        .expect("seed usage");
    }
    pool.close().await;
}

/// The local (Asia/Shanghai, no DST) date `days_ago` days back.
fn local_date(days_ago: i64) -> String {
    let shanghai = FixedOffset::east_opt(8 * 3600).unwrap();
    (Utc::now() - chrono::Duration::days(days_ago))
        .with_timezone(&shanghai)
        .format("%Y-%m-%d")
        .to_string()
}

#[tokio::test]
async fn the_usage_chart_shows_the_fake_providers_cost_for_each_seeded_day() {
    let llm = FakeLlm::start().await;
    let cfg = priced_config(&llm);
    let hostile = "<script>alert('owned')</script>";
    seed_usage(
        &cfg,
        &[
            (1, 1, "owner"),
            (3, 2, "owner"),
            (5, 3, "task"),
            (5, 1, ""),
            (89, 4, hostile),
            (200, 7, "owner"),
        ],
    )
    .await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let browser = &stack.browser;
    let c = &browser.client;

    stack.goto("/usage").await;
    let bars = c
        .find_all(Locator::Css("#cost-chart rect.bar[data-key=\"fake\"]"))
        .await
        .unwrap();
    let mut seen = Vec::new();
    for bar in &bars {
        let date = bar.attr("data-date").await.unwrap().unwrap();
        let title = bar
            .find(Locator::Css("title"))
            .await
            .unwrap()
            .html(true)
            .await
            .unwrap();
        seen.push((date, title));
    }
    let expected: Vec<(String, String)> = [(89, "$4.00"), (5, "$4.00"), (3, "$2.00"), (1, "$1.00")]
        .iter()
        .map(|&(ago, cost)| {
            let date = local_date(ago);
            (date.clone(), format!("{date} · fake · {cost}"))
        })
        .collect();
    assert_eq!(
        seen, expected,
        "one bar per seeded day in the last 90, none older"
    );
    let tokens = c
        .find_all(Locator::Css("#tokens-chart rect.bar"))
        .await
        .unwrap();
    assert_eq!(tokens.len(), 4);
    let budgets = text_of(browser, "#budgets").await;
    assert!(budgets.contains("$10.00"), "{budgets}");
    browser.screenshot("usage").await;

    // By purpose: the empty one is "unspecified", the hostile one shows as text.
    click(browser, "#usage-by a[href=\"/usage?by=purpose\"]").await;
    wait_for(
        browser,
        Locator::Css("#cost-chart rect.bar[data-key=\"task\"]"),
        "the chart by purpose",
    )
    .await;
    let purposes = text_of(browser, "#usage-by-purpose").await;
    for purpose in ["owner", "task", "未注明", hostile] {
        assert!(purposes.contains(purpose), "{purpose}: {purposes}");
    }
    let scripts = c.find_all(Locator::Css("script")).await.unwrap();
    assert_eq!(scripts.len(), 1, "only the console's own script");
    let unspecified = c
        .find_all(Locator::Css("#cost-chart rect.bar[data-key=\"未注明\"]"))
        .await
        .unwrap();
    assert_eq!(unspecified.len(), 1);
    browser.screenshot("usage-by-purpose").await;
    stack.close().await;
}

/// Two stored sessions (written before agentd starts): a titled one whose answer has Markdown
/// and markup, and an untitled one about tuna.
async fn seed_sessions(cfg: &TestConfig) {
    let store = seed_store(cfg).await;
    let trip = store.create_session("fake", "fake-model").await.unwrap().id;
    store
        .set_session_title(trip, "Trip to Kyoto")
        .await
        .unwrap();
    let call = Message {
        role: Role::Assistant,
        content: vec![Block::ToolCall {
            id: "c1".into(),
            name: "web_fetch".into(),
            input: serde_json::json!({}),
        }],
    };
    let result = Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: "c1".into(),
            content: "tool output".into(),
            is_error: false,
        }],
    };
    store
        .append_messages(
            trip,
            &[
                Message::user_text("plan my trip <script>alert('x')</script>"),
                call,
                result,
                Message::assistant_text("Visit **Fushimi Inari** early."),
            ],
        )
        .await
        .unwrap();
    let tuna = store.create_session("fake", "fake-model").await.unwrap().id;
    store
        .append_messages(tuna, &[Message::user_text("the cat wants tuna")])
        .await
        .unwrap();
    store.close().await;
}

#[tokio::test]
async fn a_sessions_history_opens_rendered_and_sessions_are_searched_renamed_and_deleted() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    seed_sessions(&cfg).await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let browser = &stack.browser;
    let c = &browser.client;

    // The listing; open the titled session's history.
    stack.goto("/sessions").await;
    let listing = text_of(browser, "#sessions").await;
    assert!(listing.contains("Trip to Kyoto"), "{listing}");
    browser.screenshot("sessions").await;
    c.find(Locator::LinkText("Trip to Kyoto"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(browser, Locator::Id("history"), "the history page").await;
    let history = text_of(browser, "#history").await;
    assert!(
        history.contains("plan my trip <script>alert('x')</script>"),
        "the owner's words as text: {history}"
    );
    assert!(history.contains("web_fetch"), "the tool called: {history}");
    assert!(
        !history.contains("tool output"),
        "no tool results: {history}"
    );
    assert_eq!(
        text_of(browser, "#history .answer strong").await,
        "Fushimi Inari"
    );
    let scripts = c.find_all(Locator::Css("script")).await.unwrap();
    assert_eq!(scripts.len(), 1, "only the console's own script");
    assert_eq!(text_of(browser, "h1").await, "Trip to Kyoto");
    browser.screenshot("session-history").await;

    // Search by content: only the tuna session.
    // (The search reads the conversation index, which a background indexer fills after each
    // message is stored: under load it can lag the first search by a moment.)
    tests::wait::eventually(
        "one session found for tuna",
        tests::stack::PROMPT,
        async || {
            stack.goto("/sessions").await;
            fill(browser, "#sessions-q", "tuna").await;
            click(browser, "#sessions-search").await;
            wait_for(browser, Locator::Css("#sessions-q"), "the sessions page").await;
            c.find_all(Locator::Css("tr.session")).await.unwrap().len() == 1
        },
    )
    .await;
    let rows = c.find_all(Locator::Css("tr.session")).await.unwrap();
    browser.screenshot("sessions-search").await;

    // Rename it (the untitled one), then delete the trip.
    let field = rows[0].find(Locator::Css("input.title")).await.unwrap();
    field.send_keys("Cat food").await.unwrap();
    rows[0]
        .find(Locator::Css("button.rename"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(
        browser,
        Locator::LinkText("Cat food"),
        "the new title in the listing",
    )
    .await;
    let trip = c
        .find(Locator::XPath(
            "//tr[contains(@class,'session') and .//a[text()='Trip to Kyoto']]",
        ))
        .await
        .unwrap();
    trip.find(Locator::Css("button.delete"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(browser, Locator::Id("sessions"), "the listing").await;
    let listing = text_of(browser, "#sessions").await;
    assert!(!listing.contains("Trip to Kyoto"), "{listing}");
    assert!(listing.contains("Cat food"), "{listing}");
    stack.close().await;
}

#[tokio::test]
async fn notes_schedules_jobs_and_skills_pages_show_and_a_schedule_is_deleted() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let yesterday = local_date(1);
    let store = seed_store(&cfg).await;
    store
        .append_daily_note(
            &yesterday,
            "went to the **market** <script>alert(1)</script>",
        )
        .await
        .unwrap();
    store.close().await;
    let skill = cfg.dir.path().join("skills").join("brief");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: daily-brief\ndescription: A morning summary\nside_effects: read-only\n---\n\nBody.",
    )
    .unwrap();
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let mut client = stack.agent().await;
    client
        .add_schedule(pb::AddScheduleRequest {
            when: "2099-01-01 09:00".into(),
            message: "water the <b>plants</b>".into(),
            mode: "remind".into(),
            model: String::new(),
        })
        .await
        .expect("AddSchedule");
    let browser = &stack.browser;
    let c = &browser.client;

    // Notes: today has none; yesterday's note rendered, its markup as text.
    stack.goto("/notes").await;
    assert!(
        c.find(Locator::Id("note-none")).await.is_ok(),
        "no note today"
    );
    stack.goto(&format!("/notes?date={yesterday}")).await;
    let note = text_of(browser, "#note").await;
    assert!(note.contains("<script>alert(1)</script>"), "{note}");
    assert_eq!(text_of(browser, "#note strong").await, "market");
    browser.screenshot("notes").await;

    // Skills.
    stack.goto("/skills").await;
    let skills = text_of(browser, "#skills").await;
    assert!(skills.contains("daily-brief"), "{skills}");
    assert!(skills.contains("A morning summary"), "{skills}");
    browser.screenshot("skills").await;

    // Schedules: the reminder with its next run, no jobs; Delete removes it in agentd too.
    stack.goto("/schedules").await;
    let schedules = text_of(browser, "#schedules").await;
    assert!(schedules.contains("2099-01-01 09:00"), "{schedules}");
    assert!(schedules.contains("water the <b>plants</b>"), "{schedules}");
    let main = text_of(browser, "main").await;
    assert!(main.contains("没有后台任务"), "{main}");
    browser.screenshot("schedules").await;
    click(browser, "#schedules button.delete").await;
    wait_for(
        browser,
        Locator::XPath("//main[not(.//table[@id='schedules'])]"),
        "the schedule gone from the page",
    )
    .await;
    let left = client
        .list_schedules(pb::ListSchedulesRequest {})
        .await
        .unwrap()
        .into_inner()
        .schedules;
    assert!(left.is_empty(), "{left:?}");
    stack.close().await;
}

#[tokio::test]
async fn memories_are_browsed_by_source_and_day_and_edited() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    // Two automatic memories from ten days ago (one from outside content), written before
    // agentd starts; the owner's own added through agentd.
    let pool = seed_pool(&cfg).await;
    let old = (Utc::now() - chrono::Duration::days(10)).timestamp_millis();
    for (text, origin) in [
        ("the owner walks at six", None),
        ("the docs say v2 is out", Some("tool mcp_docs__search")),
    ] {
        sqlx::query(
            "INSERT INTO memories (text, created_at, source, origin) VALUES (?1, ?2, 'auto', ?3)",
        )
        .bind(text)
        .bind(old)
        .bind(origin)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let mut client = stack.agent().await;
    client
        .add_memory(pb::AddMemoryRequest {
            text: "the owner likes green tea".into(),
        })
        .await
        .unwrap();
    let browser = &stack.browser;
    let c = &browser.client;
    let texts = async || texts_of(browser, "td.memory-text").await;

    stack.goto("/memory").await;
    assert_eq!(
        texts().await,
        [
            "the owner likes green tea",
            "the docs say v2 is out",
            "the owner walks at six",
        ],
        "newest first (the later added first at the same time)"
    );
    browser.screenshot("memory-browse").await;

    // By source: the select and Filter.
    click(browser, "#memory-source option[value=\"outside\"]").await;
    click(browser, "#memory-filter").await;
    wait_for(
        browser,
        Locator::Css("#memory-source option[value=\"outside\"][selected]"),
        "the view by source",
    )
    .await;
    assert_eq!(texts().await, ["the docs say v2 is out"]);
    let source = text_of(browser, "td.memory-source").await;
    assert!(source.contains("tool mcp_docs__search"), "{source}");

    // By day: only today's.
    let today = local_date(0);
    stack
        .goto(&format!("/memory?from={today}&to={today}"))
        .await;
    assert_eq!(texts().await, ["the owner likes green tea"]);

    // Edit it: the new text replaces the old, in agentd too.
    let row = c.find(Locator::Css("tr.memory")).await.unwrap();
    row.find(Locator::Css("details.edit summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let area = row.find(Locator::Css("textarea")).await.unwrap();
    area.clear().await.unwrap();
    area.send_keys("the owner likes oolong tea").await.unwrap();
    browser.screenshot("memory-edit").await;
    row.find(Locator::Css("button.save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(
        browser,
        Locator::XPath(
            "//td[contains(@class,'memory-text') and text()='the owner likes oolong tea']",
        ),
        "the edited text",
    )
    .await;
    assert!(
        c.current_url().await.unwrap().as_str().contains("from="),
        "back to the view"
    );
    let all: Vec<String> = client
        .list_memories(pb::ListMemoriesRequest {})
        .await
        .unwrap()
        .into_inner()
        .memories
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert!(
        all.contains(&"the owner likes oolong tea".to_owned()),
        "{all:?}"
    );
    assert!(
        !all.contains(&"the owner likes green tea".to_owned()),
        "{all:?}"
    );
    assert_eq!(all.len(), 3);
    stack.close().await;
}
