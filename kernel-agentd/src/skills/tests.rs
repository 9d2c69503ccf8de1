//! Tests of the skills service: scanning, the index, re-reading on change, malformed skills,
//! and `skill_read` through the tool registry.

use serde_json::json;

use super::*;
use crate::tools::{ToolContext, ToolRegistry};

fn write_skill(root: &Path, id: &str, text: &str) {
    std::fs::create_dir_all(root.join(id)).unwrap();
    std::fs::write(root.join(id).join(SKILL_FILE), text).unwrap();
}

fn skill_text(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nside_effects: read-only\n---\n# {name}\nDo the {name} thing.\n"
    )
}

#[tokio::test]
async fn the_index_lists_skills_and_changes_only_when_the_folder_does() {
    let tmp = tempfile::tempdir().unwrap();
    let skills = Skills::new(tmp.path().join("missing"));
    assert_eq!(&*skills.index().await, "");

    let skills = Skills::new(tmp.path().to_owned());
    write_skill(tmp.path(), "b-skill", &skill_text("beta", "Second  one"));
    write_skill(tmp.path(), "a-skill", &skill_text("alpha", "First one"));
    std::fs::write(tmp.path().join("README.md"), "not a skill").unwrap();
    let one = skills.index().await;
    assert_eq!(
        &*one,
        "## 技能（按需读取）\n需要某项技能时，先用 skill_read 读取它的完整说明（以及其中列出的文件），再照做；括号里是技能声明的副作用级别。\n- alpha（read-only）：First one\n- beta（read-only）：Second one"
    );
    let two = skills.index().await;
    assert!(Arc::ptr_eq(&one, &two), "unchanged folder, same index");

    write_skill(tmp.path(), "c-skill", &skill_text("gamma", "Third"));
    let three = skills.index().await;
    assert!(three.ends_with("- gamma（read-only）：Third"), "{three}");
    let names: Vec<String> = skills.list().await.into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
}

#[tokio::test]
async fn malformed_and_duplicate_skills_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    write_skill(tmp.path(), "good", &skill_text("good", "Fine"));
    write_skill(tmp.path(), "broken", "no front matter\n");
    write_skill(tmp.path(), "twin", &skill_text("good", "Same name"));
    std::fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let skills = Skills::new(tmp.path().to_owned());
    let list = skills.list().await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].description, "Fine");
}

#[tokio::test]
async fn skill_read_returns_the_body_lists_files_and_refuses_escapes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    write_skill(&root, "brief", &skill_text("brief", "Daily brief"));
    std::fs::write(root.join("brief/template.md"), "TEMPLATE").unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "SECRET").unwrap();
    let skills = Skills::new(root);
    let registry = ToolRegistry::new();
    register_tool(&registry, &skills).unwrap();
    let call = |input: serde_json::Value| {
        let registry = registry.clone();
        async move {
            registry
                .call(TOOL_NAME, input, ToolContext::default())
                .await
        }
    };

    let out = call(json!({"name": "brief"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        out.content,
        "# brief\nDo the brief thing.\n\n---\nOther files of this skill (read one with skill_read and `file`):\n- template.md"
    );
    let out = call(json!({"name": "brief", "file": "template.md"})).await;
    assert_eq!((out.is_error, out.content.as_str()), (false, "TEMPLATE"));

    for file in ["../../secret.txt", "/etc/passwd", "../brief/SKILL.md"] {
        let out = call(json!({"name": "brief", "file": file})).await;
        assert!(out.is_error, "{file}: {out:?}");
        assert!(!out.content.contains("SECRET"), "{file}");
        assert!(
            out.content.contains("not allowed"),
            "{file}: {}",
            out.content
        );
    }
    let out = call(json!({"name": "nope"})).await;
    assert!(out.is_error);
    assert!(out.content.contains("available: brief"), "{}", out.content);
}

#[tokio::test]
async fn the_shipped_example_skills_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills");
    let skills = Skills::new(root);
    let list = skills.list().await;
    let names: Vec<(&str, SideEffects)> = list
        .iter()
        .map(|s| (s.name.as_str(), s.side_effects))
        .collect();
    assert_eq!(
        names,
        [
            ("daily-brief", SideEffects::ReadOnly),
            ("git-status", SideEffects::ProcessControl)
        ]
    );
    let body = skills.read("daily-brief", None).await.unwrap();
    assert!(body.starts_with("# 每日简报"), "{body}");
    assert!(body.ends_with("- template.md"), "{body}");
}
