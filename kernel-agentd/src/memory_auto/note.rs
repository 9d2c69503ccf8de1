//! A run's part of the daily note: the time it ran and the extracted items by kind, as Markdown,
//! in the owner's language.

use kernel_common::config::Locale;

use super::extract::{Extraction, Kind};

fn heading(kind: Kind, locale: Locale) -> &'static str {
    match (kind, locale) {
        (Kind::Topic, Locale::Zh) => "话题",
        (Kind::Preference, Locale::Zh) => "偏好",
        (Kind::Decision, Locale::Zh) => "决定",
        (Kind::Task, Locale::Zh) => "待办",
        (Kind::Fact, Locale::Zh) => "事实",
        (Kind::Topic, Locale::En) => "Topics",
        (Kind::Preference, Locale::En) => "Preferences",
        (Kind::Decision, Locale::En) => "Decisions",
        (Kind::Task, Locale::En) => "Tasks",
        (Kind::Fact, Locale::En) => "Facts",
    }
}

/// `### HH:MM` and one bold heading with its bullet list per non-empty kind.
pub(super) fn section(time: &str, extraction: &Extraction, locale: Locale) -> String {
    let mut out = format!("### {time}");
    for (kind, items) in extraction.sections() {
        if items.is_empty() {
            continue;
        }
        out.push_str(&format!("\n\n**{}**", heading(kind, locale)));
        for item in items {
            out.push_str("\n- ");
            out.push_str(&item.text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_auto::extract::Item;

    #[test]
    fn lists_each_kind_under_its_heading() {
        let e = Extraction {
            topics: vec![Item {
                text: "周末计划".into(),
                importance: 2,
                source: None,
            }],
            facts: vec![Item {
                text: "主人对花生过敏".into(),
                importance: 5,
                source: None,
            }],
            ..Extraction::default()
        };
        assert_eq!(
            section("21:42", &e, Locale::Zh),
            "### 21:42\n\n**话题**\n- 周末计划\n\n**事实**\n- 主人对花生过敏"
        );
        assert!(section("09:00", &e, Locale::En).contains("**Facts**\n- 主人对花生过敏"));
    }
}
