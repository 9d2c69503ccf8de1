//! `SessionSummary`: what the rounds folded out of a session's request leave behind, in a fixed
//! structure — goal, constraints, decisions, open items, facts from tools (with artifact paths) —
//! built by rules from the stored (slimmed) messages, no model call. Rendered (in the prompt's
//! language) as the first block of the request's history, so it changes only when rounds fold
//! (and when the optional cheap-model rewrite, `summary_rewrite`, stores its version after one).

use std::collections::HashMap;
use std::sync::LazyLock;

use kernel_common::text::fit;
use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::conversation::{Block, Message, Role};

/// Entries kept per list; over it, the middle goes (the oldest half and the newest stay).
pub const MAX_ENTRIES: usize = 12;
/// Characters kept per entry.
const MAX_ENTRY_CHARS: usize = 200;
/// What opens the rendered summary.
pub(crate) const SUMMARY_HEADING: &str = "[会话摘要]";

const GOAL_WORDS: &[&str] = &["目标", "goal", "objective", "我想要", "i want to"];
const CONSTRAINT_WORDS: &[&str] = &[
    "必须",
    "不要",
    "不能",
    "不得",
    "禁止",
    "务必",
    "一定要",
    "只能",
    "只用",
    "别再",
    "约束",
    "must",
    "never",
    "don't",
    "do not",
    "always",
    "only use",
    "should not",
    "constraint",
];
const DECISION_WORDS: &[&str] = &[
    "决定",
    "选定",
    "选择了",
    "采用",
    "就用",
    "定为",
    "确定用",
    "decided",
    "decision",
    "we'll use",
    "we will use",
    "going with",
    "chose",
    "settled on",
];
const OPEN_WORDS: &[&str] = &[
    "待办",
    "下一步",
    "还需要",
    "未完成",
    "待定",
    "稍后",
    "todo",
    "next step",
    "open question",
    "pending",
    "follow up",
    "follow-up",
];

/// The summary of a session's folded rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub goal: Option<String>,
    /// Whether `goal` was stated as one (a later stated goal replaces a guessed one).
    #[serde(default)]
    pub goal_stated: bool,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub decisions: Vec<String>,
    #[serde(default)]
    pub open_items: Vec<String>,
    /// `tool: what it produced`, with the artifact path when there is one.
    #[serde(default)]
    pub facts: Vec<String>,
    /// Rounds folded in so far.
    #[serde(default)]
    pub rounds: u64,
    /// `rounds` when a cheap model last rewrote the summary (`summary_rewrite`); never set
    /// without `[summary]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_at: Option<u64>,
}

impl SessionSummary {
    /// A stored summary (an unreadable one starts over, with a warning).
    pub fn from_json(json: &str) -> Self {
        serde_json::from_str(json).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "a stored session summary cannot be read; starting a new one");
            Self::default()
        })
    }

    /// The summary as stored.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether nothing was folded yet.
    pub fn is_empty(&self) -> bool {
        self.rounds == 0
    }

    /// Folds `messages` (whole rounds, oldest first) into the summary.
    pub fn fold(&mut self, messages: &[Message]) {
        let mut calls: HashMap<&str, (&str, &serde_json::Value)> = HashMap::new();
        for m in messages {
            if super::context::starts_round(m) {
                self.rounds += 1;
            }
            for block in &m.content {
                match (m.role, block) {
                    (Role::User, Block::Text { text }) => self.user_text(text),
                    (Role::Assistant, Block::Text { text }) => self.assistant_text(text),
                    (_, Block::ToolCall { id, name, input }) => {
                        calls.insert(id, (name, input));
                    }
                    (
                        _,
                        Block::ToolResult {
                            call_id, content, ..
                        },
                    ) => {
                        let (tool, input) = calls
                            .get(call_id.as_str())
                            .map_or(("tool", None), |(n, i)| (*n, Some(*i)));
                        self.tool_fact(tool, input, content);
                    }
                    _ => {}
                }
            }
        }
    }

    fn user_text(&mut self, text: &str) {
        if is_placeholder(text) {
            return;
        }
        for s in sentences(text) {
            let lower = s.to_lowercase();
            if has_any(&lower, GOAL_WORDS) && !self.goal_stated {
                self.goal = Some(entry(s));
                self.goal_stated = true;
            } else if has_any(&lower, CONSTRAINT_WORDS) {
                push(&mut self.constraints, entry(s));
            } else if has_any(&lower, DECISION_WORDS) {
                push(&mut self.decisions, entry(s));
            } else if has_any(&lower, OPEN_WORDS) {
                push(&mut self.open_items, entry(s));
            }
        }
        if self.goal.is_none() {
            self.goal = Some(entry(text.trim()));
        }
    }

    fn assistant_text(&mut self, text: &str) {
        for s in sentences(text) {
            let lower = s.to_lowercase();
            if has_any(&lower, DECISION_WORDS) {
                push(&mut self.decisions, entry(s));
            } else if has_any(&lower, OPEN_WORDS) {
                push(&mut self.open_items, entry(s));
            }
        }
    }

    fn tool_fact(&mut self, tool: &str, input: Option<&serde_json::Value>, content: &str) {
        let input = input.map(serde_json::Value::to_string).unwrap_or_default();
        let path = artifact_path(content).or_else(|| artifact_path(&input));
        if let Some(path) = path {
            let line = content.lines().next().unwrap_or_default();
            push(
                &mut self.facts,
                format!("{tool}: {} → {path}", fit(line, 120)),
            );
        }
    }

    /// The artifact paths of the facts (a rewrite must keep every one), in order, once each.
    pub fn artifact_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for fact in &self.facts {
            let path = match fact.rsplit_once(" → ") {
                Some((_, p)) if !p.trim().is_empty() => Some(p.trim().to_owned()),
                _ => artifact_path(fact),
            };
            if let Some(p) = path.filter(|p| !paths.contains(p)) {
                paths.push(p);
            }
        }
        paths
    }

    /// The summary as the model reads it (fixed headings; `（无）` for an empty part).
    pub fn render(&self) -> String {
        let mut out = format!(
            "{SUMMARY_HEADING} 以下是本会话较早的 {} 轮对话的摘要（原文已折叠）。",
            self.rounds
        );
        let none = "（无）";
        out.push_str("\n## 目标\n");
        out.push_str(self.goal.as_deref().unwrap_or(none));
        for (heading, list) in [
            ("约束", &self.constraints),
            ("决定", &self.decisions),
            ("待办", &self.open_items),
            ("工具结果与文件", &self.facts),
        ] {
            out.push_str("\n## ");
            out.push_str(heading);
            if list.is_empty() {
                out.push('\n');
                out.push_str(none);
            }
            for item in list {
                out.push_str("\n- ");
                out.push_str(item);
            }
        }
        out
    }
}

fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    t.is_empty() || (t.starts_with('[') && t.ends_with(']') && !t.contains('\n'))
}

fn has_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

/// One line, cut to [`MAX_ENTRY_CHARS`].
fn entry(s: &str) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    fit(&one_line, MAX_ENTRY_CHARS).into_owned()
}

/// Appends `item` unless present; over [`MAX_ENTRIES`], drops the middle entry.
fn push(list: &mut Vec<String>, item: String) {
    if item.is_empty() || list.contains(&item) {
        return;
    }
    list.push(item);
    if list.len() > MAX_ENTRIES {
        list.remove(MAX_ENTRIES / 2);
    }
}

/// The sentences of `text` (split after 。！？!? ; and line ends, and after `. `).
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[。！？!?；;\n]+|\.\s+").expect("valid regex"));
    RE.split(text).map(str::trim).filter(|s| !s.is_empty())
}

/// The first file path in `text`: after `详见 `, an `output_path`, or anything path-shaped with
/// a `/` and an extension.
fn artifact_path(text: &str) -> Option<String> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"详见 (\S+)|"(?:output_path|path|file)"\s*:\s*"([^"]+)"|((?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]+\.[A-Za-z0-9]{1,8})\b"#)
            .expect("valid regex")
    });
    let caps = RE.captures(text)?;
    let m = caps
        .get(1)
        .or_else(|| caps.get(2))
        .or_else(|| caps.get(3))?;
    Some(fit(m.as_str(), 160).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(user: &str, assistant: &str) -> Vec<Message> {
        vec![Message::user_text(user), Message::assistant_text(assistant)]
    }

    #[test]
    fn facts_land_in_their_parts_and_survive_many_folds() {
        let mut s = SessionSummary::default();
        s.fold(&round(
            "目标：把博客迁移到 Hugo。必须保留所有旧链接",
            "好的，我们决定采用 Hugo 0.120 作为生成器。下一步：导出文章",
        ));
        s.fold(&[
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolCall {
                    id: "c1".into(),
                    name: "delegate_to_cli".into(),
                    input: serde_json::json!({"task": "plan"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    call_id: "c1".into(),
                    content: "delegate_to_cli 结果已处理(成功)，52000 字符，详见 data/cli_outputs/plan-42.md".into(),
                    is_error: false,
                }],
            },
        ]);
        for i in 0..300 {
            s.fold(&round(
                &format!("第 {i} 个问题：you must check item {i}, 决定 {i}"),
                &format!("decided on option {i}; todo item {i}"),
            ));
        }
        assert_eq!(s.rounds, 301);
        assert_eq!(s.goal.as_deref(), Some("目标：把博客迁移到 Hugo"));
        assert!(
            s.constraints.contains(&"必须保留所有旧链接".to_owned()),
            "{s:?}"
        );
        assert!(
            s.decisions.iter().any(|d| d.contains("Hugo 0.120")),
            "{s:?}"
        );
        assert!(
            s.facts
                .iter()
                .any(|f| f.contains("data/cli_outputs/plan-42.md")),
            "{s:?}"
        );
        assert!(s.constraints.len() <= MAX_ENTRIES && s.decisions.len() <= MAX_ENTRIES);
        let text = s.render();
        for part in [
            "## 目标",
            "## 约束",
            "## 决定",
            "## 待办",
            "## 工具结果与文件",
        ] {
            assert!(text.contains(part), "{text}");
        }
        assert_eq!(SessionSummary::from_json(&s.to_json()), s);
    }

    #[test]
    fn the_first_message_is_the_goal_until_one_is_stated() {
        let mut s = SessionSummary::default();
        s.fold(&round("帮我看看这个报错", "好的"));
        assert_eq!(s.goal.as_deref(), Some("帮我看看这个报错"));
        s.fold(&round("[图片已处理]", "ok"));
        s.fold(&round("Our goal is a working CI", "ok"));
        assert_eq!(s.goal.as_deref(), Some("Our goal is a working CI"));
        assert!(SessionSummary::default().render().contains("（无）"));
    }

    #[test]
    fn the_artifact_paths_of_rule_based_and_rewritten_facts() {
        let s = SessionSummary {
            facts: vec![
                "delegate_to_cli: 结果已处理 → data/cli_outputs/plan-42.md".into(),
                "计划写在 ./out/report.pdf 里".into(),
                "shell: done → data/cli_outputs/plan-42.md".into(),
                "没有路径的事实".into(),
            ],
            ..SessionSummary::default()
        };
        assert_eq!(
            s.artifact_paths(),
            ["data/cli_outputs/plan-42.md", "./out/report.pdf"]
        );
        let json = SessionSummary::default().to_json();
        assert!(!json.contains("rewritten_at"), "{json}");
    }

    #[test]
    fn artifact_paths() {
        assert_eq!(
            artifact_path("x，详见 data/a.txt").as_deref(),
            Some("data/a.txt")
        );
        assert_eq!(
            artifact_path(r#"{"output_path":"/tmp/x y.log"}"#).as_deref(),
            Some("/tmp/x y.log")
        );
        assert_eq!(
            artifact_path("wrote ./out/report.pdf ok").as_deref(),
            Some("./out/report.pdf")
        );
        assert_eq!(artifact_path("no path here"), None);
    }
}
