//! Localized hints for [`CommandError`]s: what was wrong and how to type it right.

use super::{Texts, escape_html};
use crate::command::{CommandError, CommandKind};
use kernel_common::config::Locale;

impl Texts {
    /// The hint replied for a command that could not be used.
    pub fn command_error(self, error: &CommandError) -> String {
        match error {
            CommandError::Unknown { name } => {
                let name = escape_html(name);
                match self.locale() {
                    Locale::Zh => format!("未知命令 /{name}，发送 /help 查看可用命令"),
                    Locale::En => format!("Unknown command /{name}; send /help for the list"),
                }
            }
            CommandError::MissingNumber { command } => {
                let example = self.example(*command);
                match self.locale() {
                    Locale::Zh => {
                        format!("请给出编号，例如 {example}（编号见 {}）", listing(*command))
                    }
                    Locale::En => format!(
                        "Give a number, e.g. {example} (numbers come from {})",
                        listing(*command)
                    ),
                }
            }
            CommandError::InvalidNumber { command, token } => {
                let token = escape_html(token);
                let example = self.example(*command);
                match self.locale() {
                    Locale::Zh => {
                        format!("编号 <code>{token}</code> 无效：应为正整数，例如 {example}")
                    }
                    Locale::En => format!(
                        "Invalid number <code>{token}</code>: use a positive whole number, e.g. {example}"
                    ),
                }
            }
            CommandError::TooManyNumbers { command, max } => {
                let example = self.example(*command);
                match self.locale() {
                    Locale::Zh => format!("最多 {max} 个编号，例如 {example}"),
                    Locale::En => format!("At most {max} number(s), e.g. {example}"),
                }
            }
            CommandError::MissingText {
                command: CommandKind::Steer | CommandKind::Next,
            } => match self.locale() {
                Locale::Zh => "请在命令后写上内容".to_owned(),
                Locale::En => "Write the text after the command".to_owned(),
            },
            CommandError::MissingText { command } => match self.locale() {
                Locale::Zh => format!("请在 /{} 后写上要记住的内容", command.name()),
                Locale::En => format!("Write what to remember after /{}", command.name()),
            },
            CommandError::InvalidName { command } => match self.locale() {
                Locale::Zh => format!("名称无效：不能含空格。发送 /{} 查看可选项", command.name()),
                Locale::En => format!(
                    "Invalid name: no spaces allowed. Send /{} to see the choices",
                    command.name()
                ),
            },
            CommandError::InvalidDate { command, token } => {
                let token = escape_html(token);
                match self.locale() {
                    Locale::Zh => format!(
                        "日期 <code>{token}</code> 无效：应为 年-月-日，例如 <code>/{} 2026-02-11</code>",
                        command.name()
                    ),
                    Locale::En => format!(
                        "Invalid date <code>{token}</code>: use YYYY-MM-DD, e.g. <code>/{} 2026-02-11</code>",
                        command.name()
                    ),
                }
            }
            CommandError::TooLong { command, max } => self.too_long(*command, *max),
            CommandError::UnknownAction { command, action } => {
                let action = escape_html(action);
                let name = command.name();
                let (verb, zh, en) = match command {
                    CommandKind::Jobs => ("cancel", "取消", "to cancel"),
                    _ => ("del", "删除", "to delete"),
                };
                match self.locale() {
                    Locale::Zh => format!(
                        "未知操作 <code>{action}</code>：发送 /{name} 查看列表，<code>/{name} {verb} #1</code> {zh}"
                    ),
                    Locale::En => format!(
                        "Unknown action <code>{action}</code>: send /{name} for the list, <code>/{name} {verb} #1</code> {en}"
                    ),
                }
            }
        }
    }

    fn example(self, command: CommandKind) -> String {
        let args = match command {
            CommandKind::DelHistory | CommandKind::Forget => "#1/#3",
            CommandKind::Tasks => "del #1/#3",
            CommandKind::Jobs => "cancel #1",
            _ => "#1",
        };
        format!("<code>/{} {args}</code>", command.name())
    }
}

fn listing(command: CommandKind) -> &'static str {
    match command {
        CommandKind::Forget => "/memory",
        CommandKind::Tasks => "/tasks",
        CommandKind::Jobs => "/jobs",
        _ => "/history",
    }
}
