//! The /skills reply: each skill's name, declared side-effect level and one-line description.

use std::fmt::Write as _;

use kernel_common::config::Locale;
use kernel_proto::words::SkillSideEffects;

use super::{MAX_MEMORY_CHARS, Texts, escape_html, escape_truncated};

/// A skill as listed by agentd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SkillEntry<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// `read-only`, `local-write`, `message-send` or `process-control`.
    pub side_effects: &'a str,
}

impl Texts {
    /// The /skills reply.
    pub fn skills(self, skills: &[SkillEntry<'_>]) -> String {
        if skills.is_empty() {
            return self
                .pick(
                    "还没有技能。在技能目录（<code>[general] skills_dir</code>）里放 <code>&lt;名称&gt;/SKILL.md</code> 即可添加。",
                    "No skills yet. Add one as <code>&lt;name&gt;/SKILL.md</code> in the skills folder (<code>[general] skills_dir</code>).",
                )
                .to_owned();
        }
        let count = skills.len();
        let mut out = match self.locale() {
            Locale::Zh => format!("<b>技能</b>（共 {count} 个，模型需要时读取）\n"),
            Locale::En => format!("<b>Skills</b> ({count}, read by the model when needed)\n"),
        };
        for skill in skills {
            let name = escape_html(skill.name);
            let level = self.side_effects(skill.side_effects);
            let description = escape_truncated(skill.description, MAX_MEMORY_CHARS);
            let _ = match self.locale() {
                Locale::Zh => writeln!(out, "• <b>{name}</b>（{level}）：{description}"),
                Locale::En => writeln!(out, "• <b>{name}</b> ({level}): {description}"),
            };
        }
        out.truncate(out.trim_end().len());
        out
    }

    /// A side-effect level in words (an unknown spelling is shown as given).
    fn side_effects(self, level: &str) -> String {
        match SkillSideEffects::parse(level) {
            Some(level) => self.said().side_effects(level).to_owned(),
            None => escape_html(level),
        }
    }
}
