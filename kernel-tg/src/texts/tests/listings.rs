//! Tests of the listings and views: /history, /memory, /status, providers and models, skills,
//! schedules and jobs, in both locales.

use super::*;

#[test]
fn history_marks_a_session_living_in_a_topic() {
    let entry = |topic| SessionEntry {
        number: 1,
        date: "d",
        title: "t",
        current: true,
        topic,
    };
    assert_eq!(
        ZH.session_line(&entry(Some("A<b>"))),
        "#1 d t · 话题「A&lt;b&gt;」 ← 当前"
    );
    assert_eq!(
        EN.session_line(&entry(Some("Alpha"))),
        "#1 d t · topic \"Alpha\" ← current"
    );
    assert_eq!(ZH.session_line(&entry(Some(""))), "#1 d t · 话题 ← 当前");
    assert_eq!(
        EN.session_line(&entry(Some(""))),
        "#1 d t · in a topic ← current"
    );
    assert_eq!(EN.session_line(&entry(None)), "#1 d t ← current");
}

#[test]
fn history_lines() {
    let sessions = [
        SessionEntry {
            number: 1,
            date: "2025-03-02",
            title: "Rust <tips>",
            current: true,
            topic: None,
        },
        SessionEntry {
            number: 2,
            date: "2025-03-01",
            title: "",
            current: false,
            topic: None,
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
        topic: None,
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
            topic: None,
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
            model: "",
            ..Default::default()
        },
        ScheduleEntry {
            number: 2,
            next_fire: "2026-05-04 08:00",
            mode: "task",
            message: "weather & agenda",
            cron: "0 8 * * 1-5",
            model: "cheap/<mini>",
            ..Default::default()
        },
    ];
    let zh = ZH.schedules(&schedules);
    assert!(
        zh.contains("#1 下次 2026-05-02 09:00 提醒 交房租 &lt;now&gt;\n"),
        "{zh}"
    );
    assert!(
        zh.contains(
            "#2 下次 2026-05-04 08:00 (<code>0 8 * * 1-5</code>) 任务 [cheap/&lt;mini&gt;] weather &amp; agenda\n"
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
