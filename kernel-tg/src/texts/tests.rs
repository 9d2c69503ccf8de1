//! Unit and property tests of the bot texts: both locales, and HTML safety of dynamic values.

use super::*;
use crate::command::{self, CommandError, CommandKind};
use proptest::prelude::*;

mod listings;

const ZH: Texts = Texts {
    locale: Locale::Zh,
    timezone: None,
};
const EN: Texts = Texts {
    locale: Locale::En,
    timezone: None,
};

/// Every `<` opens one of the tags we emit and every `&` starts one of our entities.
fn assert_html_safe(html: &str) {
    let allowed_tags = ["<b>", "</b>", "<code>", "</code>"];
    let entities = ["&amp;", "&lt;", "&gt;", "&quot;"];
    for (index, _) in html.match_indices('<') {
        assert!(
            allowed_tags
                .iter()
                .any(|tag| html[index..].starts_with(tag)),
            "raw < in {html:?}"
        );
    }
    for (index, _) in html.match_indices('&') {
        assert!(
            entities.iter().any(|e| html[index..].starts_with(e)),
            "raw & in {html:?}"
        );
    }
    assert!(
        !html.contains('>') || html.matches('>').count() == html.matches('<').count(),
        "raw > in {html:?}"
    );
}

#[test]
fn fixed_texts_in_both_locales() {
    assert_eq!(ZH.placeholder(), "正在生成回复…");
    assert_eq!(
        ZH.busy(),
        "正在处理上一条，请稍后或 /cancel；/steer 补充给当前任务，/next 排到它之后"
    );
    assert_eq!(ZH.nothing_to_cancel(), "没有正在进行的任务");
    assert_eq!(ZH.agentd_unavailable(), "助手后台不可用，稍后重试");
    assert_eq!(ZH.cli_running(), "⏳ 正在执行任务…");
    assert_eq!(ZH.transcribing(), "🎙 正在识别语音…");
    assert_eq!(EN.transcribing(), "🎙 Transcribing the voice note…");
    assert_eq!(ZH.synthesizing(), "🔊 正在生成语音…");
    assert_eq!(EN.synthesizing(), "🔊 Recording the voice reply…");
    assert_eq!(ZH.cancelled(None), "已取消");
    assert_eq!(ZH.cancelled(Some("")), "已取消");
    assert_eq!(EN.cancelled(None), "Cancelled");
    assert_eq!(EN.placeholder(), "Generating a reply…");
    assert_eq!(Texts::default(), ZH);
    assert_eq!(Texts::new(Locale::En).locale(), Locale::En);
}

#[test]
fn cancelled_names_the_cli_escaped() {
    let text = ZH.cancelled(Some("codex <x>"));
    assert_eq!(text, "已取消（已终止 <code>codex &lt;x&gt;</code>）");
    assert!(EN.cancelled(Some("claude")).contains("<code>claude</code>"));
}

#[test]
fn escape_and_truncate() {
    assert_eq!(
        escape_html("a & <b> \"c\""),
        "a &amp; &lt;b&gt; &quot;c&quot;"
    );
    assert_eq!(escape_truncated("abcdef", 4), "abc…");
    assert_eq!(escape_truncated("abc", 3), "abc");
    assert_eq!(escape_truncated("<<<<", 3), "&lt;&lt;…");
}

#[test]
fn help_lists_every_command_but_start() {
    for texts in [ZH, EN] {
        let help = texts.help();
        for kind in CommandKind::ALL {
            let listed = help.contains(&format!("/{} ", kind.name()))
                || help.contains(&format!("/{}\n", kind.name()));
            assert_eq!(listed, kind != CommandKind::Start, "{kind:?}");
        }
        assert!(help.contains("models = [...]"));
        assert_html_safe(&help);
    }
    assert_ne!(ZH.help(), EN.help());
}

#[test]
fn every_command_error_has_a_safe_hint() {
    let errors = [
        command::parse("/xyz", None),
        command::parse("/resume", None),
        command::parse("/resume #<0>", None),
        command::parse("/resume #1 #2", None),
        command::parse(
            "/forget #1 #2 #3 #4 #5 #6 #7 #8 #9 #10 #11 #12 #13 #14 #15 #16 #17 #18 #19 #20 #21",
            None,
        ),
        command::parse("/remember", None),
        command::parse("/model a b", None),
        command::parse("/notes <2026>", None),
    ];
    for error in errors {
        let error = error.unwrap().unwrap_err();
        for texts in [ZH, EN] {
            let hint = texts.command_error(&error);
            assert!(!hint.is_empty());
            assert_html_safe(&hint);
        }
    }
    let hint = EN.command_error(&CommandError::Unknown {
        name: "a<b>&".into(),
    });
    assert!(hint.contains("/a&lt;b&gt;&amp;"), "{hint}");
    let hint = ZH.command_error(&CommandError::InvalidNumber {
        command: CommandKind::Resume,
        token: "#<0>".into(),
    });
    assert!(hint.contains("<code>#&lt;0&gt;</code>"), "{hint}");
    let hint = EN.command_error(&CommandError::MissingNumber {
        command: CommandKind::Forget,
    });
    assert!(
        hint.contains("/forget #1/#3") && hint.contains("/memory"),
        "{hint}"
    );
}

#[test]
fn confirmations() {
    assert_eq!(ZH.sessions_deleted(2), "已删除 2 个会话");
    assert_eq!(EN.memories_deleted(1), "Deleted 1 memory(ies)");
    assert_eq!(ZH.retitled(""), "新标题：（无标题）");
    let resumed = EN.resumed(&SessionEntry {
        number: 2,
        date: "2025-01-01",
        title: "x",
        current: true,
        topic: None,
    });
    assert_eq!(resumed, "Resumed: #2 2025-01-01 x");
    assert_eq!(
        EN.rejected("model <x> not in list"),
        "⚠️ model &lt;x&gt; not in list"
    );
    assert!(ZH.turn_failed("boom & co").ends_with("boom &amp; co"));
    assert!(EN.tool_running("<t>").contains("&lt;t&gt;"));
    assert_eq!(
        EN.failed_over("main", "spare<2>", "rate_limited"),
        "↪️ <code>main</code> is rate limited; switching to <code>spare&lt;2&gt;</code>…"
    );
    assert_eq!(
        ZH.failed_over("main", "spare", "cooldown"),
        "↪️ <code>main</code> 冷却中，改用 <code>spare</code>…"
    );
    assert!(ZH.failed_over("a", "b", "new_reason").contains("不可用"));
    assert!(ZH.file_too_large(20).contains("20 MB"));
    assert!(!ZH.turn_interrupted().is_empty() && !EN.new_session().is_empty());
}

proptest! {
    #[test]
    fn dynamic_values_are_always_escaped(value in "\\PC{0,300}", n in 0u32..100) {
        let sessions = [SessionEntry { number: n, date: &value, title: &value, current: n % 2 == 0, topic: None }];
        let memories = [MemoryEntry { number: n, date: &value, text: &value, auto: n % 2 == 0, origin: "" }];
        let models = vec![value.clone()];
        let providers = [ProviderEntry { name: &value, models: &models, default_model: &value, available: false, current: true, cooldown_until: Some(&value) }];
        let cooldowns = [CooldownEntry { provider: &value, until: &value, failures: n }];
        let mcp = [McpEntry { name: &value, state: &value, tool_count: n, detail: Some(&value) }];
        let status = StatusView {
            version: &value, uptime_seconds: u64::from(n), session: Some(sessions[0]), provider: &value, model: &value,
            turn_started_at: Some(&value), running_tool: Some(&value), running_cli: Some(&value),
            last_error: Some(&value), fts5_available: true, mcp_servers: &mcp,
            undelivered: u64::from(n), oldest_undelivered_seconds: Some(u64::from(n)),
            cooldowns: &cooldowns,
            memory_auto: Some(MemoryAutoView { enabled: true, last_run: Some(&value), added: n, refreshed: n, outcome: &value }),
            embeddings: Some(EmbeddingsEntry { model: &value, with_vectors: u64::from(n), memories: u64::from(n), last_error: Some(&value) }),
        };
        for texts in [ZH, EN] {
            for html in [
                texts.history(&sessions), texts.memories(&memories, memories.len()), texts.status(&status),
                texts.providers(&providers, &value, &value), texts.models(&value, &models, &value),
                texts.cancelled(Some(&value)), texts.tool_running(&value),
                texts.failed_over(&value, &value, &value), texts.turn_failed(&value),
                texts.switched(&value, &value), texts.remembered(&value), texts.rejected(&value),
                texts.retitled(&value), texts.notes(&value, None),
            ] {
                assert_html_safe(&html);
            }
        }
    }
}

#[test]
fn reasoning_is_an_expandable_blockquote_cut_to_one_message() {
    let texts = Texts::new(Locale::En);
    assert_eq!(
        texts.reasoning(" a < b \n"),
        "💭 Reasoning\n<blockquote expandable>a &lt; b</blockquote>"
    );
    let long = Texts::new(Locale::Zh).reasoning(&"😀".repeat(5000));
    assert!(long.starts_with("💭 思考过程\n<blockquote expandable>😀"));
    assert!(long.ends_with("…</blockquote>"));
    let markup = "<blockquote expandable></blockquote>".len();
    assert!(kernel_render::utf16_len(&long) - markup <= kernel_render::MAX_CHUNK_UTF16);
}
