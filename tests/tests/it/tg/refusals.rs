//! Every refusal of the command table, through both real binaries and the fakes, in the owner's
//! language (issue 16 item 2): each command with each bad argument or state it refuses, in `zh`
//! (no sentence without Chinese) and in `en` (no Chinese). grpcurl users keep English messages.

use kernel_common::config::Locale;
use kernel_common::said::Said;
use kernel_proto::refused::{self, Refused};
use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::unix_channel;
use tests::stack::{PROMPT, Stack, text_of};

const NOKEY: &str = "\n[providers.nokey]\ntype = \"openai_compat\"\napi_base = \"http://127.0.0.1:9/v1\"\ndefault_model = \"x\"\n";

fn titles_section(url: &str) -> String {
    format!(
        "\n[titles]\ntype = \"claude\"\napi_base = \"{url}\"\napi_key = \"sk-titles-key-0123456789\"\nmodel = \"title-model\"\nmax_tokens = 64\n\n# The titles fake answers titles only (auto memory would share it).\n[memory_auto]\nenabled = false\n"
    )
}

/// What `/model nope` is refused with.
fn unknown_model() -> Refused {
    Refused::UnknownModel(refused::UnknownModel {
        model: "nope".into(),
        provider: "fake".into(),
        choices: vec!["fake-model".into(), "fake-model-2".into()],
    })
}

async fn stack(locale: Locale, extra: &str) -> Stack {
    let locale = match locale {
        Locale::Zh => "zh",
        Locale::En => "en",
    };
    Stack::start_edited("claude", &format!("{NOKEY}{extra}"), |toml| {
        toml.replacen("[general]", &format!("[general]\nlocale = \"{locale}\""), 1)
    })
    .await
}

/// Sends every refused command (and the few commands and turns that set up the state a refusal
/// needs); returns `(command, reply)` for the refusals. `titles` is the `[titles]` fake.
async fn walk(stack: &Stack, titles: &FakeLlm) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let refused = [
        // kernel-tg's own checks.
        "/frobnicate",
        "/resume",
        "/resume x",
        "/resume #1 #2",
        "/retitle #0",
        "/del_history",
        "/del_history #a",
        "/forget",
        "/forget 1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21",
        "/remember",
        "/provider a\u{3000}b",
        "/model a b",
        // agentd's: nothing listed yet.
        "/resume #9",
        "/retitle #1",
        "/del_history #1",
        "/forget #500",
        // agentd's: configuration.
        "/provider nope",
        "/provider nokey",
        "/model nope",
        // an empty current session has nothing to title (or there is no [titles]).
        "/retitle",
    ];
    for command in refused {
        out.push((command.to_owned(), stack.command(command).await));
    }
    let too_long = format!("/remember {}", "长".repeat(10_001));
    out.push(("/remember <10001>".into(), stack.command(&too_long).await));
    // Listed: numbers outside the listing.
    stack.command("/history").await;
    for command in ["/resume #9", "/retitle #9", "/del_history #1/#9"] {
        out.push((command.to_owned(), stack.command(command).await));
    }
    stack.command("/remember 喝茶").await;
    stack.command("/memory").await;
    out.push(("/forget #500".into(), stack.command("/forget #500").await));
    // A listed session deleted since.
    stack.command("/del_history #1").await;
    out.push(("/resume #1".into(), stack.command("/resume #1").await));
    // The titles model fails when asked again (after the round's own title).
    titles.push(Script::text("标题"));
    stack.llm.push(Script::text("好的"));
    stack.owner_says("你好");
    stack
        .telegram
        .wait_for_call("sendMessage", |c| text_of(c) == "好的", PROMPT)
        .await;
    titles.wait_requests(1, PROMPT).await;
    titles.push(Script::raw_error(
        400,
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad title request"}}"#,
    ));
    out.push(("/retitle (failing)".into(), stack.command("/retitle").await));
    out
}

fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// The sentences of a reply without a Chinese character that have words in them.
fn ascii_only_sentences(reply: &str) -> Vec<String> {
    strip_tags(reply)
        .split(['\n', '。', '！', '？', '；'])
        .flat_map(|s| s.split(". "))
        .filter(|s| s.chars().any(|c| c.is_ascii_alphabetic()) && !s.chars().any(is_cjk))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_zh_every_refusal_is_chinese() {
    let titles = FakeLlm::start().await;
    let stack = stack(Locale::Zh, &titles_section(&titles.url())).await;
    let replies = walk(&stack, &titles).await;
    for (command, reply) in &replies {
        assert!(
            reply.starts_with("⚠️") || reply.chars().any(is_cjk),
            "{command}: {reply}"
        );
        let english = ascii_only_sentences(reply);
        assert!(
            english.is_empty(),
            "{command}: {reply}\nEnglish: {english:?}"
        );
    }
    let zh = Said::new(Locale::Zh);
    let reply = |command: &str| {
        replies
            .iter()
            .rev()
            .find(|(c, _)| c == command)
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert_eq!(
        reply("/forget #500"),
        zh.refused(&Refused::NotInListing(refused::NotInListing {
            number: 500,
            max: 1
        }))
    );
    assert_eq!(reply("/model nope"), zh.refused(&unknown_model()));
    assert_eq!(reply("/retitle"), zh.refused(&Refused::NothingToTitle));
    let failed = reply("/retitle (failing)");
    assert!(
        failed.starts_with("⚠️ 生成标题失败：") && failed.contains("bad title request"),
        "{failed}"
    );
    assert_eq!(
        reply("/resume #1"),
        zh.refused(&Refused::SessionGone(refused::SessionGone { number: 1 }))
    );

    // grpcurl users keep the English message; the kind rides in the details.
    let mut client = AgentClient::new(unix_channel(stack.cfg.socket()).await);
    let err = client
        .select_model(pb::SelectModelRequest {
            model: "nope".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.message(),
        "model \"nope\" is not configured for provider fake; choose one of: fake-model, fake-model-2"
    );
    let refusal = kernel_proto::refusal::of(&err).expect("the refusal's kind");
    assert_eq!(refusal.reason, "UNKNOWN_MODEL");
    assert_eq!(refusal.args["model"], "nope");
    assert_eq!(
        refusal.args["choices"], "fake-model, fake-model-2",
        "the map grpcurl users read"
    );
    assert_eq!(Refused::parse(&refusal), Some(unknown_model()), "typed");
    stack.assert_no_secrets();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_en_every_refusal_is_english() {
    let titles = FakeLlm::start().await;
    let stack = stack(Locale::En, &titles_section(&titles.url())).await;
    for (command, reply) in walk(&stack, &titles).await {
        assert!(!reply.chars().any(is_cjk), "{command}: {reply}");
        assert!(
            reply.chars().filter(char::is_ascii_alphabetic).count() > 10,
            "{command}: {reply}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_titles_retitle_is_refused_in_either_language() {
    for locale in [Locale::Zh, Locale::En] {
        let stack = stack(locale, "").await;
        let reply = stack.command("/retitle").await;
        assert_eq!(
            reply,
            Said::new(locale).refused(&Refused::TitlesNotConfigured)
        );
    }
}
