//! The consolidation call's prompt and the strict reading of its answer: one JSON object with
//! the lists `merge` (`{"ids": [..], "text"}`: near-duplicates become one memory with that text),
//! `retire` (ids of done or past tasks), `supersede` (`{"old", "new"}`: a newer memory
//! contradicts an older one) and `propose` (a merge that touches an owner's memory: only ever
//! proposed to the owner). The whole plan is checked before anything changes: other keys, an
//! id that is not a candidate, an owner's memory in `merge`/`retire`/`supersede.old`, a memory
//! named twice, an empty or overlong text — any of these and the plan is refused as a whole.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

use crate::memory::{MAX_TEXT_CHARS, MemoryRow};

/// Most memories one merge or proposal may name.
const MAX_GROUP: usize = 20;
/// Longest merged text of a proposal (characters): the owner's notice must fit one message
/// with its buttons.
const MAX_PROPOSAL_CHARS: usize = 1000;
/// Most memories one proposal may name (the notice quotes each).
const MAX_PROPOSAL_GROUP: usize = 8;

/// The system prompt (for the model: the prompt's language).
pub(super) const SYSTEM: &str = "你是记忆整理员。下面是主人的长期记忆，每条有编号、类别（auto = 自动记下的，manual = 主人自己记的）、日期。\
只输出一个 JSON 对象，不要任何解释或 Markdown：\n\
{\"merge\": [{\"ids\": [编号...], \"text\": \"合并后的一句话\"}], \"retire\": [编号...], \"supersede\": [{\"old\": 编号, \"new\": 编号}], \"propose\": [{\"ids\": [编号...], \"text\": \"合并后的一句话\"}]}\n\
- merge：说的是同一件事的多条 auto 记忆合成一条，保留最新的事实；只能包含 auto 记忆。\n\
- retire：已经完成或日期已过的待办事项（只能是 auto 记忆）。\n\
- supersede：一条较旧的 auto 记忆被较新的记忆推翻（old 是旧的 auto 记忆，new 是新的那条）。\n\
- propose：涉及 manual 记忆的合并，只是建议，由主人决定。\n\
- 每条记忆最多出现一次；没有要做的就给空数组；不要编造编号。";

/// The user prompt: today's date and the candidates, one line each.
pub(super) fn prompt(candidates: &[MemoryRow], today: &str, tz: Tz) -> String {
    let mut out = format!("今天是 {today}。记忆如下：\n\n");
    for m in candidates {
        let kind = if m.auto { "auto" } else { "manual" };
        let date = local_date(m.created_at, tz);
        let text = m.text.replace('\n', " ");
        out.push_str(&format!("[{}] ({kind}, {date}) {text}\n", m.id));
    }
    out.push_str("\n请输出 JSON。");
    out
}

fn local_date(time: DateTime<Utc>, tz: Tz) -> String {
    time.with_timezone(&tz).format("%Y-%m-%d").to_string()
}

/// A group of memories to become one, with the merged text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Group {
    pub ids: Vec<i64>,
    pub text: String,
}

/// An older memory a newer one contradicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Supersede {
    pub old: i64,
    pub new: i64,
}

/// The model's plan as read (not yet checked against the candidates).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plan {
    #[serde(default)]
    pub merge: Vec<Group>,
    #[serde(default)]
    pub retire: Vec<i64>,
    #[serde(default)]
    pub supersede: Vec<Supersede>,
    #[serde(default)]
    pub propose: Vec<Group>,
}

/// Why a plan was refused (nothing changes).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Refused {
    #[error("the answer is not a JSON plan: {0}")]
    NotJson(String),
    #[error("memory {0} is not one of the candidates")]
    Unknown(i64),
    #[error("memory {0} is the owner's: the job may only propose a change to it")]
    Manual(i64),
    #[error("memory {0} is named more than once")]
    Twice(i64),
    #[error("a merge needs 2 to {MAX_GROUP} memories, a proposal 2 to {MAX_PROPOSAL_GROUP}")]
    GroupSize,
    #[error("a proposal names no owner's memory (merge it instead)")]
    NoManual,
    #[error("a merged text is empty or longer than {MAX_TEXT_CHARS} characters")]
    BadText,
    #[error("memory {0} supersedes itself")]
    SelfSupersede(i64),
}

/// Reads the answer strictly (a `<think>` block and a code fence around it are tolerated).
pub(super) fn parse(answer: &str) -> Result<Plan, Refused> {
    let text = crate::llm::json_answer::object_text(answer)
        .ok_or_else(|| Refused::NotJson("no JSON object".into()))?;
    serde_json::from_str(&text).map_err(|e| Refused::NotJson(e.to_string()))
}

/// Checks `plan` as a whole against the `candidates` the model was shown.
pub(super) fn validate(plan: &Plan, candidates: &[MemoryRow]) -> Result<(), Refused> {
    let auto: HashMap<i64, bool> = candidates.iter().map(|m| (m.id, m.auto)).collect();
    let mut seen = HashSet::new();
    let mut name = |id: i64, must_be_auto: bool| -> Result<(), Refused> {
        let is_auto = *auto.get(&id).ok_or(Refused::Unknown(id))?;
        if must_be_auto && !is_auto {
            return Err(Refused::Manual(id));
        }
        if !seen.insert(id) {
            return Err(Refused::Twice(id));
        }
        Ok(())
    };
    let text_ok = |t: &str| !t.trim().is_empty() && t.trim().chars().count() <= MAX_TEXT_CHARS;
    for g in &plan.merge {
        if !(2..=MAX_GROUP).contains(&g.ids.len()) {
            return Err(Refused::GroupSize);
        }
        if !text_ok(&g.text) {
            return Err(Refused::BadText);
        }
        for &id in &g.ids {
            name(id, true)?;
        }
    }
    for &id in &plan.retire {
        name(id, true)?;
    }
    for s in &plan.supersede {
        if s.old == s.new {
            return Err(Refused::SelfSupersede(s.old));
        }
        name(s.old, true)?;
        name(s.new, false)?;
    }
    for g in &plan.propose {
        if !(2..=MAX_PROPOSAL_GROUP).contains(&g.ids.len()) {
            return Err(Refused::GroupSize);
        }
        if !text_ok(&g.text) || g.text.trim().chars().count() > MAX_PROPOSAL_CHARS {
            return Err(Refused::BadText);
        }
        if g.ids.iter().all(|id| auto.get(id).copied().unwrap_or(true)) {
            return Err(Refused::NoManual);
        }
        for &id in &g.ids {
            name(id, false)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, auto: bool) -> MemoryRow {
        MemoryRow {
            id,
            text: format!("memory {id}"),
            created_at: Utc::now(),
            auto,
            origin: None,
        }
    }

    #[test]
    fn only_a_whole_valid_plan_passes() {
        let c = [row(1, true), row(2, true), row(3, true), row(4, false)];
        let ok = parse(
            r#"```json
{"merge":[{"ids":[1,2],"text":"merged"}],"retire":[3],"supersede":[],"propose":[]}
```"#,
        )
        .unwrap();
        assert_eq!(validate(&ok, &c), Ok(()));
        let refused = [
            (
                r#"{"merge":[{"ids":[1,9],"text":"x"}]}"#,
                Refused::Unknown(9),
            ),
            (r#"{"retire":[4]}"#, Refused::Manual(4)),
            (
                r#"{"retire":[1],"supersede":[{"old":1,"new":2}]}"#,
                Refused::Twice(1),
            ),
            (r#"{"merge":[{"ids":[1],"text":"x"}]}"#, Refused::GroupSize),
            (r#"{"merge":[{"ids":[1,2],"text":"  "}]}"#, Refused::BadText),
            (
                r#"{"propose":[{"ids":[1,2],"text":"x"}]}"#,
                Refused::NoManual,
            ),
            (
                r#"{"supersede":[{"old":2,"new":2}]}"#,
                Refused::SelfSupersede(2),
            ),
            (r#"{"supersede":[{"old":4,"new":2}]}"#, Refused::Manual(4)),
        ];
        let long = format!(
            r#"{{"propose":[{{"ids":[4,1],"text":"{}"}}]}}"#,
            "长".repeat(1001)
        );
        assert_eq!(validate(&parse(&long).unwrap(), &c), Err(Refused::BadText));
        for (answer, want) in refused {
            let plan = parse(answer).unwrap();
            assert_eq!(validate(&plan, &c), Err(want), "{answer}");
        }
        let proposal = parse(r#"{"propose":[{"ids":[4,1],"text":"x"}]}"#).unwrap();
        assert_eq!(validate(&proposal, &c), Ok(()));
        for bad in [
            "好的",
            r#"{"merge":[],"delete":[1]}"#,
            r#"{"retire":["1"]}"#,
            "[]",
        ] {
            assert!(matches!(parse(bad), Err(Refused::NotJson(_))), "{bad}");
        }
    }
}
