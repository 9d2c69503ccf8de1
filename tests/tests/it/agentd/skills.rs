//! Skills end to end: the index in the byte-stable system prompt (re-read once when the folder
//! changes), `skill_read` through a turn (body, files, refused escapes), a malformed SKILL.md
//! warned about by name and skipped, and `/skills` through both real binaries.

use std::path::Path;

use kernel_agentd::conversation::Block;
use kernel_common::config::Locale;
use kernel_proto::v1 as pb;
use tests::chat::{KINDS, completed, session_id, stored, system_text, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, LogCapture, Script};
use tests::harness::Harness;
use tests::stack::Stack;
use tests::told::Told;
use tracing::Level;

fn write_skill(root: &Path, id: &str, name: &str, description: &str, body: &str) {
    let dir = root.join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\nside_effects: read-only\n---\n\n{body}"
        ),
    )
    .unwrap();
}

fn skills_dir(cfg: &TestConfig) -> std::path::PathBuf {
    cfg.dir.path().join("skills")
}

#[tokio::test]
async fn the_index_is_byte_stable_and_changes_once_when_a_skill_is_added() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let cfg = TestConfig::with_kind(kind, &fake.url(), "");
        let root = skills_dir(&cfg);
        write_skill(
            &root,
            "daily-brief",
            "daily-brief",
            "Summarise the day",
            "Steps.\n",
        );
        let mut h = Harness::start(cfg).await;
        for n in 1..=2 {
            fake.push(Script::text(format!("answer {n}")));
            completed(&turn(&mut h.client, &format!("question {n}")).await);
        }
        write_skill(
            &root,
            "git-status",
            "git-status",
            "Report repository state",
            "Run git.\n",
        );
        for n in 3..=4 {
            fake.push(Script::text(format!("answer {n}")));
            completed(&turn(&mut h.client, &format!("question {n}")).await);
        }

        let requests = fake.requests();
        let systems: Vec<String> = requests.iter().map(|r| system_text(&r.body)).collect();
        let tools: Vec<String> = requests
            .iter()
            .map(|r| r.body["tools"].to_string())
            .collect();
        assert!(
            systems[0].contains("## 技能（按需读取）")
                && systems[0].contains("- daily-brief（read-only）：Summarise the day"),
            "{kind}: {}",
            systems[0]
        );
        assert!(!systems[0].contains("git-status"), "{kind}");
        assert_eq!(systems[0], systems[1], "{kind}: turns 1 and 2");
        assert_ne!(
            systems[1], systems[2],
            "{kind}: the added skill changes the prefix"
        );
        assert!(
            systems[2].contains("- git-status（read-only）：Report repository state"),
            "{kind}: {}",
            systems[2]
        );
        assert_eq!(systems[2], systems[3], "{kind}: turns 3 and 4");
        assert!(tools[0].contains("skill_read"), "{kind}: {}", tools[0]);
        assert!(tools.iter().all(|t| *t == tools[0]), "{kind}: tools stable");
    }
}

#[tokio::test]
async fn skill_read_returns_the_body_and_files_and_refuses_escapes() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::with_kind("claude", &fake.url(), "");
    let root = skills_dir(&cfg);
    write_skill(
        &root,
        "brief",
        "brief",
        "Daily brief",
        "# Brief\nUse the template.\n",
    );
    std::fs::write(root.join("brief/template.md"), "TEMPLATE-TEXT").unwrap();
    std::fs::write(cfg.dir.path().join("outside.txt"), "OUTSIDE-SECRET").unwrap();
    std::os::unix::fs::symlink(
        cfg.dir.path().join("outside.txt"),
        root.join("brief/link.md"),
    )
    .unwrap();
    let mut h = Harness::start(cfg).await;
    fake.push(Script::tool_call("skill_read", r#"{"name":"brief"}"#));
    fake.push(Script::tool_call(
        "skill_read",
        r#"{"name":"brief","file":"template.md"}"#,
    ));
    fake.push(Script::tool_call(
        "skill_read",
        r#"{"name":"brief","file":"../../outside.txt"}"#,
    ));
    fake.push(Script::tool_call(
        "skill_read",
        r#"{"name":"brief","file":"link.md"}"#,
    ));
    fake.push(Script::tool_call(
        "skill_read",
        r#"{"name":"brief","file":"/etc/hostname"}"#,
    ));
    fake.push(Script::text("done"));
    let events = turn(&mut h.client, "give me the brief").await;
    assert_eq!(completed(&events).text, "done");

    let history = stored(&h.cfg, session_id(&events)).await;
    let results: Vec<(String, bool)> = history
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolResult {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 5, "{results:#?}");
    assert_eq!(
        results[0],
        (
            "# Brief\nUse the template.\n\n---\nOther files of this skill (read one with skill_read and `file`):\n- template.md"
                .to_owned(),
            false
        )
    );
    assert_eq!(results[1], ("TEMPLATE-TEXT".to_owned(), false));
    for (content, is_error) in &results[2..] {
        assert!(*is_error, "{content}");
        assert!(!content.contains("OUTSIDE-SECRET"), "{content}");
    }
    assert!(results[2].0.contains("not allowed"), "{}", results[2].0);
    assert!(
        results[3].0.contains("outside the skill"),
        "{}",
        results[3].0
    );
    assert!(results[4].0.contains("not allowed"), "{}", results[4].0);
}

#[tokio::test]
async fn a_broken_skill_is_warned_about_by_name_and_skipped() {
    let (logs, _guard) = LogCapture::install();
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::with_kind("claude", &fake.url(), "");
    let root = skills_dir(&cfg);
    write_skill(&root, "good", "good", "Works", "Body.\n");
    std::fs::create_dir_all(root.join("broken")).unwrap();
    let broken = root.join("broken/SKILL.md");
    std::fs::write(&broken, "---\nname: broken\ndescription: no end fence\n").unwrap();
    let mut h = Harness::start(cfg).await;
    fake.push(Script::text("ok"));
    completed(&turn(&mut h.client, "hi").await);
    fake.push(Script::text("ok again"));
    completed(&turn(&mut h.client, "hi again").await);

    let system = system_text(&fake.requests()[0].body);
    assert!(system.contains("- good（read-only）：Works"), "{system}");
    assert!(!system.contains("broken"), "{system}");
    let listed = h
        .client
        .list_skills(pb::ListSkillsRequest {})
        .await
        .unwrap()
        .into_inner()
        .skills;
    assert_eq!(
        listed,
        [pb::SkillInfo {
            name: "good".into(),
            description: "Works".into(),
            side_effects: "read-only".into(),
        }]
    );
    let file = broken.display().to_string();
    let warned: Vec<String> = logs
        .lines_at(Level::WARN)
        .into_iter()
        .filter(|l| l.contains(&file))
        .collect();
    assert_eq!(warned.len(), 1, "warned once, not per turn: {warned:#?}");
    assert!(warned[0].contains("malformed SKILL.md"), "{warned:#?}");
    assert!(warned[0].contains("no closing"), "{warned:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_skills_lists_them_in_chinese() {
    let stack = Stack::start().await;
    let texts = Told::new(Locale::Zh);
    assert_eq!(stack.command("/skills").await, texts.no_skills());
    let root = skills_dir(&stack.cfg);
    write_skill(&root, "daily-brief", "daily-brief", "每日简报", "Body.\n");
    let reply = stack.command("/skills").await;
    assert_eq!(
        reply,
        "<b>技能</b>（共 1 个，模型需要时读取）
• <b>daily-brief</b>（只读）：每日简报"
    );
    assert!(
        reply.contains("<b>daily-brief</b>（只读）：每日简报"),
        "{reply}"
    );
    stack.assert_no_secrets();
}
