//! The rewrite call's prompt and the strict reading of its answer: one JSON object with exactly
//! the summary's parts — `goal` (a string, empty for none), `constraints`, `decisions`,
//! `open_items`, `facts` (lists of strings) — each list at most `SUMMARY_MAX_ENTRIES` non-empty
//! entries of at most [`MAX_ENTRY_CHARS`] characters, the whole no longer than the rule-based
//! summary allows, and every artifact path of the rule-based summary still among the facts.
//! A `<think>` block and a Markdown code fence around the object are tolerated.

use serde::Deserialize;

use crate::turn::{SUMMARY_MAX_ENTRIES, SessionSummary};

/// Longest entry accepted (characters).
pub(super) const MAX_ENTRY_CHARS: usize = 400;
/// Slack over the rule-based summary's rendered length (characters) a rewrite may use.
const SLACK_CHARS: usize = 200;

/// The system prompt of the rewrite call (for the model: the prompt's language).
pub(super) const SYSTEM: &str = "你是会话摘要整理员。给你一份按规则从较早对话中抽取的会话摘要，请把它改写得更简洁、连贯：合并重复，删掉琐碎与无关的内容，不要编造。只输出一个 JSON 对象，不要任何解释或 Markdown。\n\
格式：{\"goal\": \"…\", \"constraints\": [...], \"decisions\": [...], \"open_items\": [...], \"facts\": [...]}\n\
- goal：会话的目标，一句话（没有就给空字符串）；constraints：主人提出的约束；decisions：做出的决定；open_items：待办与未决问题；facts：工具结果与文件。\n\
- 每项是一句完整、独立可懂的话；每个列表最多 12 项；没有内容的列表给空数组。\n\
- 摘要中出现的每个文件路径都必须原样保留在 facts 中。\n\
- 用摘要所用的语言书写。";

/// The user prompt: the rule-based summary as rendered, and the paths that must stay.
pub(super) fn prompt(rendered: &str, paths: &[String]) -> String {
    let mut out = format!("以下是当前的会话摘要：\n\n{rendered}\n\n");
    if !paths.is_empty() {
        out.push_str("必须原样保留的文件路径：\n");
        for p in paths {
            out.push_str("- ");
            out.push_str(p);
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str("请输出 JSON。");
    out
}

/// The parts the model wrote.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Parts {
    goal: String,
    constraints: Vec<String>,
    decisions: Vec<String>,
    open_items: Vec<String>,
    facts: Vec<String>,
}

/// Why an answer is not a usable rewrite (no text of the answer in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unusable rewrite: {0}")]
pub(super) struct Rejected(pub String);

/// `original` as the model rewrote it in `answer` (its counters kept, marked as rewritten),
/// or why the answer is refused (see the module docs).
pub(super) fn read(answer: &str, original: &SessionSummary) -> Result<SessionSummary, Rejected> {
    let text = crate::llm::json_answer::object_text(answer)
        .ok_or_else(|| Rejected("the answer is not a JSON object".into()))?;
    // serde's messages can quote the answer: only where it went wrong is kept.
    let parts: Parts = serde_json::from_str(&text).map_err(|e| {
        Rejected(format!(
            "not the summary's JSON ({:?} error at line {}, column {})",
            e.classify(),
            e.line(),
            e.column()
        ))
    })?;
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let goal = one_line(&parts.goal);
    if goal.chars().count() > MAX_ENTRY_CHARS {
        return Err(Rejected(format!(
            "the goal is over {MAX_ENTRY_CHARS} characters"
        )));
    }
    let mut lists = [
        parts.constraints,
        parts.decisions,
        parts.open_items,
        parts.facts,
    ];
    for list in &mut lists {
        if list.len() > SUMMARY_MAX_ENTRIES {
            return Err(Rejected(format!(
                "a list has {} entries (at most {SUMMARY_MAX_ENTRIES})",
                list.len()
            )));
        }
        for item in list.iter_mut() {
            *item = one_line(item);
            let chars = item.chars().count();
            if chars == 0 || chars > MAX_ENTRY_CHARS {
                return Err(Rejected(format!("an entry has {chars} characters")));
            }
        }
    }
    let [constraints, decisions, open_items, facts] = lists;
    let rewritten = SessionSummary {
        goal: (!goal.is_empty()).then_some(goal),
        goal_stated: original.goal_stated,
        constraints,
        decisions,
        open_items,
        facts,
        rounds: original.rounds,
        rewritten_at: Some(original.rounds),
    };
    let limit = original.render().chars().count() + SLACK_CHARS;
    let length = rewritten.render().chars().count();
    if length > limit {
        return Err(Rejected(format!(
            "the rewrite has {length} characters (at most {limit})"
        )));
    }
    let facts = rewritten.facts.join("\n");
    let dropped = original
        .artifact_paths()
        .iter()
        .filter(|p| !facts.contains(p.as_str()))
        .count();
    if dropped > 0 {
        return Err(Rejected(format!(
            "{dropped} artifact path(s) of the summary are not in the rewrite's facts"
        )));
    }
    Ok(rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original() -> SessionSummary {
        SessionSummary {
            goal: Some("目标：把博客迁移到 Hugo".into()),
            goal_stated: true,
            constraints: vec!["必须保留所有旧链接".into(), "必须保留所有旧链接！".into()],
            decisions: vec!["决定采用 Hugo 0.120".into()],
            open_items: vec![],
            facts: vec!["delegate_to_cli: 计划已生成 → data/cli_outputs/plan-42.md".into()],
            rounds: 7,
            rewritten_at: None,
        }
    }

    fn answer(facts: &[&str]) -> String {
        serde_json::json!({
            "goal": "把博客迁移到 Hugo",
            "constraints": ["保留所有旧链接"],
            "decisions": ["采用 Hugo 0.120"],
            "open_items": [],
            "facts": facts,
        })
        .to_string()
    }

    #[test]
    fn reads_a_plain_fenced_or_thinking_answer() {
        let json = answer(&["计划在 data/cli_outputs/plan-42.md"]);
        for text in [
            json.clone(),
            format!("```json\n{json}\n```"),
            format!("<think>合并重复</think>\n{json}"),
        ] {
            let s = read(&text, &original()).unwrap();
            assert_eq!(s.goal.as_deref(), Some("把博客迁移到 Hugo"));
            assert_eq!(s.constraints, ["保留所有旧链接"]);
            assert_eq!(
                (s.rounds, s.rewritten_at, s.goal_stated),
                (7, Some(7), true)
            );
            assert_eq!(s.artifact_paths(), ["data/cli_outputs/plan-42.md"]);
        }
        let no_goal = answer(&["data/cli_outputs/plan-42.md"]).replace("把博客迁移到 Hugo", "");
        assert_eq!(read(&no_goal, &original()).unwrap().goal, None);
    }

    #[test]
    fn refuses_what_is_not_the_structure_or_drops_a_path() {
        let long = "长".repeat(MAX_ENTRY_CHARS + 1);
        let many: Vec<String> = (0..=SUMMARY_MAX_ENTRIES)
            .map(|i| format!("data/cli_outputs/plan-42.md {i}"))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let bloated: Vec<String> = (0..SUMMARY_MAX_ENTRIES)
            .map(|i| format!("data/cli_outputs/plan-42.md {i} {}", "很长".repeat(150)))
            .collect();
        let bloated: Vec<&str> = bloated.iter().map(String::as_str).collect();
        for (bad, why) in [
            ("好的，以下是改写后的摘要".to_owned(), "not a JSON object"),
            ("{\"goal\": ".to_owned(), "not the summary's JSON"),
            (
                r#"{"goal":"g","constraints":[],"decisions":[],"open_items":[]}"#.to_owned(),
                "not the summary's JSON",
            ),
            (
                answer(&["data/cli_outputs/plan-42.md"]).replace("}", ",\"extra\":1}"),
                "not the summary's JSON",
            ),
            (answer(&["计划已生成"]), "artifact path"),
            (answer(&[""]), "0 characters"),
            (answer(&[long.as_str()]), "characters"),
            (answer(&many), "entries"),
            (answer(&bloated), "the rewrite has"),
        ] {
            let e = read(&bad, &original()).unwrap_err();
            assert!(e.0.contains(why), "{bad}: {e}");
            assert!(!e.0.contains("好的"), "no answer text in the reason: {e}");
        }
    }
}
