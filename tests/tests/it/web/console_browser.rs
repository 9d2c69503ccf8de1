//! The console's second pass in a real headless Chromium, with the real kernel-agentd and
//! kernel-web: `/chat` opens on the current session's conversation rendered for the browser
//! (a table as `<table>`, code as `<pre><code class="language-…">` with a copy button, a
//! `<script>` as text) — also right after agentd started, when no session is current yet (the
//! latest is shown) —, its sidebar links to the other sessions (`/chat?session=N` opens one
//! with its composer, and "make it current") and starts a new one; two tabs on two sessions
//! stream their answers at the same time, each into its own session; Enter sends and Shift+Enter does not;
//! an attached file's name shows before sending (a pasted image too); retry on the last answer replaces it with a
//! new one and an edited last message is answered again; and chat, memory, sessions, usage and status
//! at 1280×800 and 390×844, light and dark, each screenshotted under
//! `target/web-screenshots/console-*` with the layout facts that matter asserted (the viewport
//! meta, no horizontal scroll, the send button visible, the sidebar reachable, dark colours,
//! every nav link inside the width, the copy button clear of the code it copies).

use fantoccini::Locator;
use kernel_agentd::conversation::Message;
use kernel_proto::v1 as pb;
use serde_json::{Value, json};
use std::time::Duration;
use tests::config::TestConfig;

use tests::fake_llm::{FakeLlm, Reply, Script};
use tests::web::WEB_SECTION;
use tests::web_browser::{
    WAIT, WebStack, answer_in_state, click, fill, seed_store, text_of, texts_of, wait_for,
};

/// An answer with a table, a code block and a script, as a model might write it.
const ANSWER: &str = "Here is the plan:\n\n| day | city |\n|---|---|\n| 1 | Kyoto |\n| 2 | Nara |\n\n\
```rust\nfn main() { println!(\"a very long line of code that must scroll inside its own block, not the page\"); }\n```\n\n\
<script>alert('x')</script>\n";

/// Two sessions before agentd starts: an older titled one, then "Trip plan" with a question
/// and [`ANSWER`]. Returns the older session's id.
async fn seed_conversations(cfg: &TestConfig) -> i64 {
    let store = seed_store(cfg).await;
    let old = store.create_session("fake", "fake-model").await.unwrap().id;
    store.set_session_title(old, "Old plans").await.unwrap();
    store
        .append_messages(
            old,
            &[
                Message::user_text("what about the old plans?"),
                Message::assistant_text("The old answer."),
            ],
        )
        .await
        .unwrap();
    let now = store.create_session("fake", "fake-model").await.unwrap().id;
    store.set_session_title(now, "Trip plan").await.unwrap();
    store
        .append_messages(
            now,
            &[
                Message::user_text("plan my trip as a table"),
                Message::assistant_text(ANSWER),
            ],
        )
        .await
        .unwrap();
    store.close().await;
    old
}

/// Makes "Trip plan" the current session (a restart of agentd begins a fresh one) and opens the
/// chat.
async fn resume_trip_plan(stack: &WebStack) {
    let mut agent = stack.agent().await;
    let listed = agent
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .unwrap()
        .into_inner()
        .sessions;
    let trip = listed.iter().find(|s| s.title == "Trip plan").unwrap();
    agent
        .resume_session(pb::ResumeSessionRequest {
            number: trip.number,
            thread_id: None,
        })
        .await
        .unwrap();
    stack.goto("/chat").await;
}

async fn js(stack: &WebStack, script: &str) -> Value {
    stack
        .browser
        .client
        .execute(script, vec![])
        .await
        .unwrap_or_else(|e| panic!("{script}: {e}"))
}

#[tokio::test]
async fn the_chat_opens_on_the_conversation_rendered_and_switches_sessions() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let old = seed_conversations(&cfg).await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let browser = &stack.browser;
    let c = &browser.client;

    // agentd just started, so no session is current yet: the chat shows the latest one (here
    // after the login link), rendered, to carry on in; not an empty page.
    let question = text_of(browser, ".msg.me.past").await;
    assert!(question.contains("plan my trip as a table"), "{question}");
    let cells = texts_of(browser, ".msg.kernel.past table td").await;
    assert_eq!(cells, ["1", "Kyoto", "2", "Nara"]);
    assert_eq!(
        texts_of(browser, ".msg.kernel.past table th").await,
        ["day", "city"]
    );
    let code = text_of(browser, ".msg.kernel.past pre code.language-rust").await;
    assert!(code.starts_with("fn main()"), "{code}");
    assert_eq!(
        text_of(browser, ".msg.kernel.past .codeblock button.copy").await,
        "复制"
    );
    let answer = text_of(browser, ".msg.kernel.past").await;
    assert!(answer.contains("<script>alert('x')</script>"), "{answer}");
    let scripts = c.find_all(Locator::Css("script")).await.unwrap();
    assert_eq!(scripts.len(), 1, "only the console's own script");
    assert!(c.find(Locator::Id("not-current")).await.is_err());
    assert!(c.find(Locator::Id("chat-form")).await.is_ok());
    browser.screenshot("console-chat-conversation").await;

    // The sidebar links to the older session; it opens with its composer (what is sent there
    // continues it) and "make it current".
    let titles = texts_of(browser, "#session-list .title").await;
    assert!(titles.contains(&"Old plans".to_owned()), "{titles:?}");
    click(browser, &format!("#session-list a[data-id=\"{old}\"]")).await;
    wait_for(browser, Locator::Id("not-current"), "the older session").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(url.query(), Some(format!("session={old}").as_str()));
    let log = text_of(browser, "#chat-log").await;
    assert!(log.contains("The old answer."), "{log}");
    assert!(!log.contains("Kyoto"), "{log}");
    assert!(
        c.find(Locator::Id("chat-form")).await.is_ok(),
        "not read-only"
    );
    browser.screenshot("console-chat-other-session").await;
    click(browser, "#resume-session").await;
    let resumed = format!("#session-list li.shown.current a[data-id=\"{old}\"]");
    wait_for(browser, Locator::Css(&resumed), "the resumed session").await;
    assert!(
        text_of(browser, "#chat-log")
            .await
            .contains("The old answer.")
    );
    assert!(c.find(Locator::Id("not-current")).await.is_err());

    // "New session": an empty conversation.
    click(browser, "#new-session").await;
    wait_for(browser, Locator::Id("chat-empty"), "a new, empty session").await;
    stack.close().await;
}

#[tokio::test]
async fn two_tabs_on_two_sessions_stream_at_the_same_time_each_into_its_own_session() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    let old = seed_conversations(&cfg).await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    let (llm, browser) = (&stack.llm, &stack.browser);
    let c = &browser.client;
    let trip = js(
        &stack,
        "return Number(document.getElementById('chat-log').dataset.session)",
    )
    .await
    .as_i64()
    .unwrap();
    assert_ne!(trip, old);

    // Tab one, on the older session: a slow answer (four parts, a second apart).
    let first = c.window().await.unwrap();
    stack.goto(&format!("/chat?session={old}")).await;
    wait_for(browser, Locator::Id("not-current"), "the older session").await;
    llm.push(Reply::text("Old plans: A1 A2 A3 A4").slow(6, Duration::from_secs(1)));
    fill(browser, "#chat-text", "and the old plans?\u{E007}").await;
    llm.wait_requests(1, WAIT).await;

    // Tab two, on "Trip plan", while the first still streams: answered at once.
    let second = c.new_window(true).await.unwrap().handle;
    c.switch_to_window(second).await.unwrap();
    stack.goto(&format!("/chat?session={trip}")).await;
    wait_for(browser, Locator::Id("chat-form"), "the second tab").await;
    llm.push(Script::text("Trip: pack light."));
    fill(browser, "#chat-text", "and for the trip?\u{E007}").await;
    eventually_done(browser, "Trip: pack light.").await;
    let served = llm.served();
    assert_eq!(served.len(), 2, "one model call per tab");
    let first_ended = served[0].finished;
    assert!(
        first_ended.is_none_or(|end| served[1].received < end),
        "the second turn started while the first streamed: {served:?}"
    );
    let log = text_of(browser, "#chat-log").await;
    assert!(log.contains("plan my trip as a table"), "{log}");
    assert!(!log.contains("A1"), "{log}");
    browser.screenshot("console-chat-second-tab").await;

    // Back in tab one: its own answer, whole.
    c.switch_to_window(first).await.unwrap();
    eventually_done(browser, "A4").await;
    let log = text_of(browser, "#chat-log").await;
    assert!(log.contains("The old answer."), "{log}");
    assert!(!log.contains("pack light"), "{log}");

    // Each turn ran in its tab's session, with that session's history.
    let requests = llm.requests();
    let (a, b) = (&requests[0].raw_body, &requests[1].raw_body);
    assert!(
        a.contains("and the old plans?") && a.contains("The old answer."),
        "{a}"
    );
    assert!(!a.contains("Kyoto"), "{a}");
    assert!(
        b.contains("and for the trip?") && b.contains("Kyoto"),
        "{b}"
    );
    assert!(!b.contains("The old answer."), "{b}");
    let mut agent = stack.agent().await;
    for (session, said) in [(old, "A4"), (trip, "pack light")] {
        let history = agent
            .get_session_history(pb::GetSessionHistoryRequest {
                session_id: session,
            })
            .await
            .unwrap()
            .into_inner();
        let last = history.messages.last().unwrap();
        assert!(
            last.text.contains(said),
            "session {session}: {:?}",
            last.text
        );
    }
    stack.close().await;
}

#[tokio::test]
async fn enter_sends_shift_enter_does_not_and_an_attached_file_shows_before_sending() {
    let stack = WebStack::logged_in("").await;
    let (llm, browser) = (&stack.llm, &stack.browser);

    // Shift+Enter: a new line, nothing sent.
    fill(
        browser,
        "#chat-text",
        "line one\u{E008}\u{E007}\u{E000}line two",
    )
    .await;
    let value = js(&stack, "return document.getElementById('chat-text').value").await;
    assert_eq!(value, json!("line one\nline two"));
    assert!(texts_of(browser, ".msg.me").await.is_empty(), "not sent");

    // Enter: sent, both lines.
    llm.push(Script::text("Got both lines:\n\n```sh\necho hi\n```"));
    fill(browser, "#chat-text", "\u{E007}").await;
    let answer = answer_in_state(browser, "done").await;
    assert!(answer.contains("Got both lines"), "{answer}");
    let mine = text_of(browser, ".msg.me").await;
    assert!(mine.starts_with("line one\nline two"), "{mine:?}");
    let body = llm.requests().last().unwrap().body.to_string();
    assert!(body.contains("line one\\nline two"), "{body}");
    assert_eq!(
        text_of(browser, ".answer .codeblock button.copy").await,
        "复制"
    );
    assert_eq!(
        js(&stack, "return document.getElementById('chat-text').value").await,
        json!("")
    );

    // A chosen file shows by name before sending, under a localized attach button.
    assert!(text_of(browser, "#chat-attach").await.contains("附件"));
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("trip-notes.txt");
    std::fs::write(&notes, "pack the umbrella\n").unwrap();
    fill(browser, "#chat-files", &notes.display().to_string()).await;
    let chosen = text_of(browser, "#chat-chosen").await;
    assert!(chosen.contains("trip-notes.txt"), "{chosen}");
    // An image pasted into the text box is attached too (and can be removed again).
    js(
        &stack,
        "const dt = new DataTransfer();\
         dt.items.add(new File([new Uint8Array([137, 80, 78, 71])], 'image.png', {type: 'image/png'}));\
         document.getElementById('chat-text').dispatchEvent(\
           new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, cancelable: true}));",
    )
    .await;
    let files = texts_of(browser, "#chat-chosen .file").await;
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files[1].starts_with("pasted-"), "{files:?}");
    browser.screenshot("console-chat-attached").await;
    js(
        &stack,
        "document.querySelector('#chat-chosen .file:last-child button').click()",
    )
    .await;
    let files = texts_of(browser, "#chat-chosen .file").await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("trip-notes.txt"), "{files:?}");
    llm.push(Script::text("Umbrella noted."));
    fill(browser, "#chat-text", "read this\u{E007}").await;
    eventually_done(browser, "Umbrella noted.").await;
    let body = llm.requests().last().unwrap().body.to_string();
    assert!(body.contains("pack the umbrella"), "{body}");
    assert_eq!(
        text_of(browser, "#chat-chosen").await,
        "",
        "cleared once sent"
    );
    stack.close().await;
}

#[tokio::test]
async fn retry_on_the_last_answer_produces_a_new_answer_and_an_edit_is_answered() {
    let stack = WebStack::logged_in("").await;
    let (llm, browser) = (&stack.llm, &stack.browser);
    llm.push(Script::text("First try: a knock-knock joke."));
    fill(browser, "#chat-text", "tell me a joke\u{E007}").await;
    eventually_done(browser, "First try").await;

    // Retry on Kernel's last answer: a new answer in its place.
    llm.push(Script::text("Second try: a pun."));
    click(browser, ".answer .living button.retry").await;
    let xpath = "//div[contains(@class,'kernel') and contains(., 'Second try')]";
    wait_for(browser, Locator::XPath(xpath), "the new answer").await;
    let log = text_of(browser, "#chat-log").await;
    assert!(!log.contains("First try"), "the old answer replaced: {log}");
    assert_eq!(log.matches("tell me a joke").count(), 1, "{log}");
    let body = llm.requests().last().unwrap().body.to_string();
    assert!(body.contains("tell me a joke"), "{body}");
    browser.screenshot("console-chat-retried").await;

    // Edit the owner's last message: Kernel answers the edited text.
    llm.push(Script::text("About cats, then."));
    click(browser, ".msg.me .living button.edit").await;
    js(
        &stack,
        "document.querySelector('.editing textarea').value = 'tell me about cats'",
    )
    .await;
    click(browser, ".editing button.save").await;
    let xpath = "//div[contains(@class,'kernel') and contains(., 'About cats')]";
    wait_for(
        browser,
        Locator::XPath(xpath),
        "the edited message's answer",
    )
    .await;
    let body = llm.requests().last().unwrap().body.to_string();
    assert!(body.contains("tell me about cats"), "{body}");
    let mine = texts_of(browser, ".msg.me.past .text").await;
    assert_eq!(
        mine.last().map(String::as_str),
        Some("tell me about cats"),
        "{mine:?}"
    );
    stack.close().await;
}

async fn eventually_done(browser: &tests::browser::Browser, needle: &str) {
    let xpath = format!(
        "//div[contains(@class,'answer') and @data-state='done' and contains(., '{needle}')]"
    );
    wait_for(browser, Locator::XPath(&xpath), needle).await;
}

/// The layout facts of the page shown: a viewport meta, no horizontal scroll, the colours of
/// the scheme; on the chat, the send button visible and the sessions reachable.
async fn check_layout(stack: &WebStack, page: &str, phone: bool, dark: bool, what: &str) {
    let facts = js(
        stack,
        "const bg = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);\
         return {viewport: !!document.querySelector('meta[name=viewport]'),\
         scroll: document.documentElement.scrollWidth, width: window.innerWidth,\
         light: (bg[0] + bg[1] + bg[2]) / 3};",
    )
    .await;
    assert_eq!(facts["viewport"], json!(true), "{what}");
    let (scroll, width) = (
        facts["scroll"].as_f64().unwrap(),
        facts["width"].as_f64().unwrap(),
    );
    assert!(
        scroll <= width,
        "{what}: no horizontal scroll ({scroll} > {width})"
    );
    // Every nav link whole inside the width (the last one is not cut off on a phone).
    let cut = js(
        stack,
        "return [...document.querySelectorAll('nav a')].filter((a) => {\
         const r = a.getBoundingClientRect();\
         return r.width === 0 || r.left < 0 || r.right > window.innerWidth; }).map((a) => a.textContent);",
    )
    .await;
    assert_eq!(cut, json!([]), "{what}: nav links cut off");
    let light = facts["light"].as_f64().unwrap();
    if dark {
        assert!(light < 60.0, "{what}: a dark background ({light})");
    } else {
        assert!(light > 200.0, "{what}: a light background ({light})");
    }
    if page != "chat" {
        return;
    }
    let send = js(
        stack,
        "const b = document.getElementById('chat-send'); const r = b.getBoundingClientRect();\
         const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);\
         return r.width > 0 && r.top >= 0 && r.bottom <= window.innerHeight\
         && r.right <= window.innerWidth && (hit === b || b.contains(hit));",
    )
    .await;
    assert_eq!(send, json!(true), "{what}: the send button visible");
    // The copy button covers no part of the code (its long line scrolls under nothing).
    let copy = js(
        stack,
        "const b = document.querySelector('.codeblock button.copy').getBoundingClientRect();\
         const p = document.querySelector('.codeblock pre').getBoundingClientRect();\
         return b.width > 0 && (b.bottom <= p.top || b.top >= p.bottom\
         || b.right <= p.left || b.left >= p.right);",
    )
    .await;
    assert_eq!(
        copy,
        json!(true),
        "{what}: the copy button clear of the code"
    );
    if phone {
        // Folded above the conversation; one tap opens it.
        let open = js(stack, "return document.getElementById('sidebar').open").await;
        assert_eq!(open, json!(false), "{what}: the sidebar folded");
        js(stack, "window.scrollTo(0, 0)").await;
        click(&stack.browser, "#sidebar summary").await;
    }
    let beside = js(
        stack,
        "const l = document.querySelector('#session-list a'); const r = l.getBoundingClientRect();\
         const c = document.querySelector('.conversation').getBoundingClientRect();\
         return {shown: r.width > 0 && r.height > 0, beside: r.right <= c.left};",
    )
    .await;
    assert_eq!(
        beside["shown"],
        json!(true),
        "{what}: the sessions reachable"
    );
    assert_eq!(
        beside["beside"],
        json!(!phone),
        "{what}: sessions beside on a big screen"
    );
}

#[tokio::test]
async fn every_page_fits_a_phone_and_a_big_screen_in_light_and_dark() {
    let llm = FakeLlm::start().await;
    let cfg = TestConfig::new(&llm.url(), WEB_SECTION);
    seed_conversations(&cfg).await;
    let stack = WebStack::logged_in_on(llm, cfg).await;
    resume_trip_plan(&stack).await;
    for page in ["chat", "memory", "sessions", "usage", "status"] {
        for (w, h, phone) in [(1280, 800, false), (390, 844, true)] {
            for dark in [false, true] {
                let scheme = if dark { "dark" } else { "light" };
                let what = format!("{page} at {w}x{h}, {scheme}");
                stack.browser.emulate(w, h, phone, dark).await;
                stack.goto(&format!("/{page}")).await;
                wait_for(&stack.browser, Locator::Css("main"), &what).await;
                stack
                    .browser
                    .screenshot(&format!("console-{page}-{w}x{h}-{scheme}"))
                    .await;
                check_layout(&stack, page, phone, dark, &what).await;
            }
        }
    }
    stack.close().await;
}
