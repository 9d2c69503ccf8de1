//! Unit and property tests of the bot texts: both locales, and HTML safety of dynamic values.

use super::*;
use crate::command::{self, CommandError, CommandKind};
use proptest::prelude::*;

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
fn history_lines() {
    let sessions = [
        SessionEntry {
            number: 1,
            date: "2025-03-02",
            title: "Rust <tips>",
            current: true,
        },
        SessionEntry {
            number: 2,
            date: "2025-03-01",
            title: "",
            current: false,
        },
    ];
    let zh = ZH.history(&sessions);
    assert!(
        zh.contains("#1 2025-03-02 Rust &lt;tips&gt; ← 当前\n"),
        "{zh}"
    );
    assert!(zh.contains("#2 2025-03-01 （无标题）\n"), "{zh}");
    assert!(EN.history(&sessions).contains("#2 2025-03-01 (untitled)\n"));
    assert_eq!(ZH.history(&[]), "还没有历史会话");
    let long = "t".repeat(200);
    let line = EN.session_line(&SessionEntry {
        number: 3,
        date: "d",
        title: &long,
        current: false,
    });
    assert_eq!(line.chars().count(), "#3 d ".len() + MAX_TITLE_CHARS);
}

#[test]
fn memory_lines() {
    let memories = [
        MemoryEntry {
            number: 4,
            date: "2025-01-09",
            text: "likes tea & <cake>",
            auto: false,
            origin: "",
        },
        MemoryEntry {
            number: 5,
            date: "2025-01-08",
            text: "allergic to peanuts",
            auto: true,
            origin: "",
        },
    ];
    assert!(
        EN.memories(&memories, 2)
            .contains("#4 2025-01-09 likes tea &amp; &lt;cake&gt;\n")
    );
    assert!(
        EN.memories(&memories, 2)
            .contains("#5 2025-01-08 [auto] allergic to peanuts\n")
    );
    assert!(
        ZH.memories(&memories, 2)
            .contains("#5 2025-01-08 〔自动〕 allergic to peanuts\n")
    );
    assert_eq!(EN.memories(&[], 0), "No memories yet");
    assert_eq!(ZH.remembered("a<b"), "已记住：a&lt;b");
}

#[test]
fn status_shows_everything_escaped() {
    let mcp = [
        McpEntry {
            name: "fs",
            state: "connected",
            tool_count: 3,
            detail: None,
        },
        McpEntry {
            name: "web",
            state: "skipped",
            tool_count: 0,
            detail: Some("missing <cmd>"),
        },
    ];
    let status = StatusView {
        version: "0.1.0",
        uptime_seconds: 90_061,
        session: Some(SessionEntry {
            number: 0,
            date: "2025-03-02",
            title: "a&b",
            current: true,
        }),
        provider: "anthropic",
        model: "claude-<x>",
        turn_started_at: Some("2025-03-02T10:00:00Z"),
        running_tool: Some("shell"),
        running_cli: Some("codex"),
        last_error: Some("HTTP 500 <html>"),
        fts5_available: false,
        mcp_servers: &mcp,
        undelivered: 2,
        oldest_undelivered_seconds: Some(3_725),
        cooldowns: &[CooldownEntry {
            provider: "spare<1>",
            until: "2025-03-02T10:05:00Z",
            failures: 2,
        }],
        memory_auto: Some(MemoryAutoView {
            enabled: true,
            last_run: Some("2025-03-02T10:00:00Z"),
            added: 3,
            refreshed: 1,
            outcome: "ok",
        }),
        embeddings: Some(EmbeddingsEntry {
            model: "e5<small>",
            with_vectors: 3,
            memories: 4,
            last_error: Some("HTTP 503 <busy>"),
        }),
    };
    for texts in [ZH, EN] {
        let text = texts.status(&status);
        assert_html_safe(&text);
        for needle in [
            "a&amp;b",
            "claude-&lt;x&gt;",
            "<code>shell</code>",
            "<code>codex</code>",
            "HTTP 500 &lt;html&gt;",
            "missing &lt;cmd&gt;",
            "<code>fs</code> connected (3",
            "<code>spare&lt;1&gt;</code> ",
            "<code>e5&lt;small&gt;</code>",
            "3/4",
            "HTTP 503 &lt;busy&gt;",
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
    }
    assert!(EN.status(&status).ends_with("up 1d 1h 1m"));
    assert!(
        EN.status(&status)
            .contains("Undelivered: 2 (oldest waiting 1h 2m)\n")
    );
    assert!(
        ZH.status(&status)
            .contains("待送达：2（最早的已等 1小时 2分）\n")
    );
    assert_eq!(
        (EN.age(59), ZH.age(60)),
        ("59s".to_owned(), "1分".to_owned())
    );
    assert!(EN.status(&status).contains(
        "Cooling down: <code>spare&lt;1&gt;</code> until 2025-03-02 10:05:00 UTC (2 failures in a row)\n"
    ));
    assert!(ZH.status(&status).contains(
        "冷却中：<code>spare&lt;1&gt;</code> 至 2025-03-02 10:05:00 UTC（连续失败 2 次）\n"
    ));
    let idle = EN.status(&StatusView::default());
    assert!(
        idle.contains("Task: idle")
            && idle.contains("Session: (none)")
            && idle.contains("MCP: none configured")
            && idle.contains("Undelivered: 0\n")
    );
    assert_eq!(ZH.uptime(59), "已运行 0分");
    assert_eq!(ZH.uptime(3_660), "已运行 1小时 1分");
}

#[test]
fn provider_and_model_listings() {
    let models = vec!["m1".to_owned(), "m<2>".to_owned()];
    let providers = [
        ProviderEntry {
            name: "anthropic",
            models: &models,
            default_model: "m1",
            available: true,
            current: true,
            cooldown_until: None,
        },
        ProviderEntry {
            name: "local",
            models: &[],
            default_model: "",
            available: false,
            current: false,
            cooldown_until: Some("2025-03-02T10:05:00Z"),
        },
    ];
    let text = EN.providers(&providers, "anthropic", "m1");
    assert!(
        text.contains("• <code>anthropic</code> ✓ — m1, m&lt;2&gt;\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "• <code>local</code> (no API key) (cooling down until 2025-03-02 10:05:00 UTC, 0 min left; choosing it ends the cooldown) — (no models)\n"
        ),
        "{text}"
    );
    let text = ZH.providers(&providers, "anthropic", "m1");
    assert!(
        text.contains("（冷却中，至 2025-03-02 10:05:00 UTC，还剩 0 分钟；选择它即结束冷却）"),
        "{text}"
    );
    let text = ZH.models("anthropic", &models, "m<2>");
    assert!(
        text.contains("• <code>m&lt;2&gt;</code> ✓\n") && text.contains("• <code>m1</code>\n"),
        "{text}"
    );
    assert_eq!(
        EN.switched("a", "b&c"),
        "Switched to <code>a</code> / <code>b&amp;c</code>"
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
        let sessions = [SessionEntry { number: n, date: &value, title: &value, current: n % 2 == 0 }];
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
fn the_memory_listing_says_how_many_there_are() {
    let memory = MemoryEntry {
        number: 1,
        date: "2025-01-09",
        text: "x",
        auto: false,
        origin: "",
    };
    assert!(
        ZH.memories(&[memory; 3], 3)
            .starts_with("<b>长期记忆</b>（共 3 条）\n")
    );
    assert!(
        EN.memories(&[memory; 3], 3)
            .starts_with("<b>Memories</b> (3 in total)\n")
    );
    assert!(
        ZH.memories(&[memory; 2], 300)
            .starts_with("<b>长期记忆</b>（共 300 条，显示最新 2 条）\n")
    );
    assert!(
        EN.memories(&[memory; 2], 300)
            .starts_with("<b>Memories</b> (300 in total, the newest 2 shown)\n")
    );
}

#[test]
fn status_times_are_in_the_owners_time_zone() {
    let shanghai = ZH.with_timezone(chrono_tz::Asia::Shanghai);
    let view = StatusView {
        turn_started_at: Some("2025-01-02T03:04:05Z"),
        running_cli: Some("claude_code since 2025-01-02T03:04:06Z"),
        ..StatusView::default()
    };
    let status = shanghai.status(&view);
    assert!(
        status.contains("开始于 2025-01-02 11:04:05 CST"),
        "{status}"
    );
    assert!(
        status.contains("CLI：<code>claude_code</code>，开始于 2025-01-02 11:04:06 CST"),
        "{status}"
    );
    assert!(!status.contains("03:04:0"), "{status}");
    assert!(
        ZH.status(&view).contains("2025-01-02 03:04:05 UTC"),
        "UTC without a zone"
    );
    assert_eq!(shanghai.local_time("not a time"), "not a time");
    let en = EN.with_timezone(chrono_tz::Asia::Shanghai).status(&view);
    assert!(
        en.contains("CLI: <code>claude_code</code> since 2025-01-02 11:04:06 CST"),
        "{en}"
    );
}

#[test]
fn skills_list_names_levels_and_descriptions() {
    let entries = [
        SkillEntry {
            name: "daily-brief",
            description: "Summarise <today>",
            side_effects: "read-only",
        },
        SkillEntry {
            name: "deploy",
            description: "Restart the service",
            side_effects: "process-control",
        },
    ];
    let zh = ZH.skills(&entries);
    assert_eq!(
        zh,
        "<b>技能</b>（共 2 个，模型需要时读取）\n• <b>daily-brief</b>（只读）：Summarise &lt;today&gt;\n• <b>deploy</b>（控制进程）：Restart the service"
    );
    let en = EN.skills(&entries);
    assert!(en.contains("• <b>deploy</b> (controls processes): Restart the service"));
    for text in [zh, en, ZH.skills(&[]), EN.skills(&[])] {
        assert_html_safe(&text);
    }
    assert!(ZH.skills(&[]).contains("SKILL.md"));
}

#[test]
fn schedule_lines() {
    let schedules = [
        ScheduleEntry {
            number: 1,
            next_fire: "2026-05-02 09:00",
            mode: "remind",
            message: "交房租 <now>",
            cron: "",
        },
        ScheduleEntry {
            number: 2,
            next_fire: "2026-05-04 08:00",
            mode: "task",
            message: "weather & agenda",
            cron: "0 8 * * 1-5",
        },
    ];
    let zh = ZH.schedules(&schedules);
    assert!(
        zh.contains("#1 下次 2026-05-02 09:00 提醒 交房租 &lt;now&gt;\n"),
        "{zh}"
    );
    assert!(
        zh.contains(
            "#2 下次 2026-05-04 08:00 (<code>0 8 * * 1-5</code>) 任务 weather &amp; agenda\n"
        ),
        "{zh}"
    );
    let en = EN.schedules(&schedules);
    assert!(
        en.contains("#1 next 2026-05-02 09:00 reminder 交房租"),
        "{en}"
    );
    assert_eq!(EN.schedules(&[]), "No reminders or scheduled tasks");
    assert_eq!(ZH.schedules_deleted(2), "已删除 2 个提醒或任务");
    let hint = EN.command_error(&crate::command::CommandError::UnknownAction {
        command: crate::command::CommandKind::Tasks,
        action: "<x>".into(),
    });
    assert!(
        hint.contains("&lt;x&gt;") && hint.contains("/tasks del #1"),
        "{hint}"
    );
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

#[test]
fn job_lines() {
    let jobs = [
        JobEntry {
            number: 1,
            status: "running",
            started: "2026-05-02 09:00",
            cli: "claude_code",
            task: "build <it>",
            exit_code: None,
        },
        JobEntry {
            number: 2,
            status: "failed",
            started: "2026-05-01 08:00",
            cli: "codex",
            task: "fix & test",
            exit_code: Some(2),
        },
    ];
    let zh = ZH.jobs(&jobs);
    assert!(
        zh.contains("#1 运行中 2026-05-02 09:00 <code>claude_code</code> build &lt;it&gt;\n"),
        "{zh}"
    );
    assert!(
        zh.contains("#2 失败（退出码 2） 2026-05-01 08:00 <code>codex</code> fix &amp; test\n"),
        "{zh}"
    );
    assert!(zh.contains("/jobs cancel #n"), "{zh}");
    let en = EN.jobs(&jobs[1..]);
    assert!(en.contains("#2 failed (exit code 2) 2026-05-01"), "{en}");
    assert!(!en.contains("/jobs cancel"), "{en}");
    assert_html_safe(&zh);
    assert_eq!(EN.jobs(&[]), "No background jobs");
    assert_ne!(ZH.job_cancelled(true), ZH.job_cancelled(false));
    let hint = EN.command_error(&CommandError::UnknownAction {
        command: CommandKind::Jobs,
        action: "del".into(),
    });
    assert!(hint.contains("/jobs cancel #1"), "{hint}");
}
