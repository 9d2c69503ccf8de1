//! Every command of the spec's table through both real binaries, answered in Telegram HTML.

use kernel_common::config::Locale;
use tests::fake_llm::{FakeLlm, Script};
use tests::stack::{PROMPT, Stack, text_of};
use tests::told::Told;

fn zh() -> Told {
    Told::new(Locale::Zh)
}

fn titles_section(url: &str) -> String {
    format!(
        "[titles]\ntype = \"claude\"\napi_base = \"{url}\"\napi_key = \"sk-titles-key-0123456789\"\nmodel = \"title-model\"\nmax_tokens = 64\n\n# The titles fake answers titles only (auto memory would share it).\n[memory_auto]\nenabled = false\n"
    )
}

/// The owner sends `text` and the turn's answer arrives.
async fn turn(stack: &Stack, text: &str, answer: &str) {
    stack.llm.push(Script::text(answer));
    stack.owner_says(text);
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == answer, PROMPT)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_start_and_the_command_menu() {
    let stack = Stack::start().await;
    let help = stack.command("/help").await;
    assert_eq!(help, zh().help());
    assert_eq!(stack.command("/start").await, help);
    let menu = stack.telegram.commands().expect("setMyCommands at start");
    let names: Vec<_> = menu
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<_> = zh().menu().iter().map(|(name, _)| *name).collect();
    assert_eq!(names, expected);
    let unknown = stack.command("/frobnicate").await;
    assert_eq!(unknown, zh().unknown_command("frobnicate"));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_new_history_resume_retitle_and_delete() {
    let titles = FakeLlm::start().await;
    let stack = Stack::start_with("claude", &titles_section(&titles.url())).await;
    titles.push(Script::text("First chat"));
    turn(&stack, "first topic", "answer one").await;
    assert_eq!(stack.command("/new").await, zh().new_session());
    titles.push(Script::text("Second chat"));
    turn(&stack, "second topic", "answer two").await;

    let history = stack.command("/history").await;
    assert!(
        history.contains("#1") && history.contains("#2"),
        "{history}"
    );
    let resumed = stack.command("/resume #2").await;
    assert!(resumed.starts_with("已切换到会话："), "{resumed}");
    assert!(resumed.contains("#2"), "{resumed}");

    // Both sessions' titles were asked for (in the background, after each turn) before
    // /retitle asks again.
    titles.wait_requests(2, PROMPT).await;
    titles.push(Script::text("Renamed chat"));
    assert_eq!(
        stack.command("/retitle").await,
        zh().retitled("Renamed chat")
    );
    let history = stack.command("/history").await;
    assert!(history.contains("Renamed chat"), "{history}");

    let out_of_range = stack.command("/resume #99").await;
    assert!(out_of_range.starts_with("⚠️"), "{out_of_range}");
    let malformed = stack.command("/resume abc").await;
    assert_eq!(malformed, zh().invalid_number("resume", "abc"));

    stack.command("/history").await;
    assert_eq!(
        stack.command("/del_history #1/#2").await,
        zh().sessions_deleted(2)
    );
    let history = stack.command("/history").await;
    assert!(!history.contains("Renamed chat"), "{history}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_and_model_show_switch_and_refuse() {
    let stack = Stack::start().await;
    let providers = stack.command("/provider").await;
    assert!(
        providers.contains("<code>fake</code>") && providers.contains("fake-model-2"),
        "{providers}"
    );
    assert_eq!(
        stack.command("/provider fake").await,
        zh().switched("fake", "fake-model")
    );
    let unknown = stack.command("/provider nope").await;
    assert!(
        unknown.starts_with("⚠️") && unknown.contains("nope"),
        "{unknown}"
    );

    let models = stack.command("/model").await;
    assert_eq!(
        models,
        "提供方：<code>fake</code>\n• <code>fake-model</code> ✓\n• <code>fake-model-2</code>\n\n/model 名称 切换模型"
    );
    assert_eq!(
        stack.command("/model fake-model-2").await,
        zh().switched("fake", "fake-model-2")
    );
    let refused = stack.command("/model gpt-9").await;
    assert!(
        refused.starts_with("⚠️") && refused.contains("gpt-9"),
        "{refused}"
    );

    turn(&stack, "which model?", "this one").await;
    let request = stack.llm.last_request().unwrap();
    assert_eq!(request.body["model"], "fake-model-2");
    let status = stack.command("/status").await;
    assert!(status.contains("fake-model-2"), "{status}");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remember_memory_and_forget() {
    let stack = Stack::start().await;
    assert_eq!(
        stack.command("/remember 我喜欢绿茶").await,
        zh().remembered("我喜欢绿茶")
    );
    assert_eq!(
        stack
            .command("/remember the <b>server</b> is at home")
            .await,
        zh().remembered("the <b>server</b> is at home")
    );
    let memories = stack.command("/memory").await;
    assert!(memories.contains("我喜欢绿茶"), "{memories}");
    assert!(memories.contains("&lt;b&gt;server"), "escaped: {memories}");
    let first = memories
        .lines()
        .find(|l| l.starts_with("#1 "))
        .unwrap()
        .to_owned();
    let second = memories.lines().find(|l| l.starts_with("#2 ")).unwrap();
    let kept = second
        .split_once(' ')
        .unwrap()
        .1
        .split_once(' ')
        .unwrap()
        .1
        .to_owned();
    assert_eq!(stack.command("/forget #1").await, zh().memories_deleted(1));
    let after = stack.command("/memory").await;
    assert!(after.contains(&kept), "{after}");
    let gone = first.split_once(' ').unwrap().1.split_once(' ').unwrap().1;
    assert!(!after.contains(gone), "{after}");
    let missing = stack.command("/forget #7").await;
    assert!(missing.starts_with("⚠️"), "{missing}");
    let empty = stack.command("/remember").await;
    assert_eq!(empty, zh().missing_text("remember"));
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn english_is_selectable_in_config() {
    let stack = Stack::start_edited("claude", "", |t| {
        t.replacen("[general]", "[general]\nlocale = \"en\"", 1)
    })
    .await;
    let en = Told::new(Locale::En);
    assert_eq!(stack.command("/help").await, en.help());
    assert_eq!(stack.command("/cancel").await, en.nothing_to_cancel());
    let menu = stack.telegram.commands().expect("setMyCommands at start");
    let expected: Vec<_> = en
        .menu()
        .iter()
        .map(|(_, description)| *description)
        .collect();
    let descriptions: Vec<_> = menu
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["description"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(descriptions, expected);
    stack.llm.push(Script::stall());
    let asked = stack.owner_says("hi");
    assert_eq!(text_of(&stack.reply_to(asked).await), en.placeholder());
    assert_eq!(stack.command("/cancel").await, en.cancelled());
    stack.assert_no_secrets();
}
