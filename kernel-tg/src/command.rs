//! Bot command parsing: turns a Telegram message text into a [`Command`] of the spec's table (§2).
//!
//! Parsing is pure so the adapter can branch on the result and `texts` can render the hints;
//! [`crate::command_call`] performs a parsed command against agentd. Numbers (`#n`) are the ones of
//! agentd's latest listing; this module only checks their shape (u32 ≥ 1, at most
//! [`MAX_NUMBERS`]).

use kernel_common::config::Locale;

mod args;
use args::{non_empty_numbers, numbers, optional_name};

/// The most `#n` numbers one `/del_history`, `/forget` or `/tasks del` accepts.
pub(crate) const MAX_NUMBERS: usize = 20;

/// Longest provider/model name accepted (characters).
pub(crate) const MAX_NAME_CHARS: usize = 100;

/// Longest `/memory <words>` query, in characters.
pub(crate) const MAX_MEMORY_QUERY_CHARS: usize = 200;

/// Longest command name Telegram allows; longer unknown names are cut to this in errors.
const MAX_COMMAND_CHARS: usize = 32;

/// A parsed bot command with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    Start,
    Help,
    New,
    History,
    /// `/resume #n`.
    Resume(u32),
    /// `/retitle [#n]`: `None` is the current session.
    Retitle(Option<u32>),
    /// `/del_history #a[/#b/...]`: distinct numbers in the order given.
    DelHistory(Vec<u32>),
    /// `/provider [name]`: `None` shows the list.
    Provider(Option<String>),
    /// `/model [name]`: `None` shows the list.
    Model(Option<String>),
    /// `/remember <text>`: the text, trimmed at both ends, inner lines kept verbatim.
    Remember(String),
    Memory,
    /// `/memory <n>`: page `n` (≥ 2) of all memories; `/memory` and `/memory 1` are [`Command::Memory`].
    MemoryPage(u32),
    /// `/memory all [n]` (`全部`): page `n` (default 1) with the memories consolidation set aside.
    MemoryAll(u32),
    /// `/memory undo` (`撤销`): undo the last memory consolidation.
    MemoryUndo,
    /// `/memory <words>`: the memories matching the words (trimmed, at most
    /// [`MAX_MEMORY_QUERY_CHARS`]).
    MemorySearch(String),
    /// `/history <words>`: the sessions where the words were said.
    HistorySearch(String),
    /// `/forget #a[/#b/...]`: distinct numbers in the order given.
    Forget(Vec<u32>),
    Skills,
    Cancel,
    /// `/cancel all`: also clears the `/next` queue.
    CancelAll,
    Status,
    /// `/notes [YYYY-MM-DD]`: the day's auto-memory note; `None` is today.
    Notes(Option<String>),
    /// `/tasks`: the reminders and scheduled tasks.
    Tasks,
    /// `/tasks del #a[/#b/...]`: distinct numbers in the order given.
    TasksDelete(Vec<u32>),
    /// `/tasks pause #n` (`true`) or `/tasks resume #n` (`false`).
    TasksPause(u32, bool),
    /// `/steer <text>`: the text for the running turn's next step (trimmed).
    Steer(String),
    /// `/next <text>`: queued to run after the running turn (trimmed).
    Next(String),
    /// `/compact`: fold the session's older rounds into its summary now.
    Compact,
    /// `/retry [model]`: the session's last message again (on `model`, or the current one).
    Retry(Option<String>),
    /// `/usage`: tokens and cost today, this session, the last 30 days.
    Usage,
    /// `/doctor`: agentd's offline checks of the setup.
    Doctor,
    /// `/web`: a one-time login link to the web console.
    Web,
    /// `/jobs`: the background jobs, running and recent.
    Jobs,
    /// `/jobs cancel #n`: cancels one running job.
    JobsCancel(u32),
}

/// Which command of the table, without arguments (for errors, menus and help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandKind {
    Start,
    Help,
    New,
    History,
    Resume,
    Retitle,
    DelHistory,
    Provider,
    Model,
    Remember,
    Memory,
    Forget,
    Skills,
    Cancel,
    Status,
    Notes,
    Tasks,
    Steer,
    Next,
    Compact,
    Retry,
    Usage,
    Jobs,
    Doctor,
    Web,
}

/// Why a command could not be used; each variant maps to a localized hint in `texts`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// A `/name` that is not in the table (name lowercased, at most 32 characters).
    #[error("unknown command /{name}")]
    Unknown { name: String },
    /// The command needs a `#n` and got none.
    #[error("/{} needs a number", command.name())]
    MissingNumber { command: CommandKind },
    /// A token that is not a number ≥ 1 fitting in u32 (malformed, zero or huge).
    #[error("/{}: invalid number {token:?}", command.name())]
    InvalidNumber { command: CommandKind, token: String },
    /// More numbers than the command accepts (`max` is 1 for `/resume` and `/retitle`).
    #[error("/{} takes at most {max} number(s)", command.name())]
    TooManyNumbers { command: CommandKind, max: usize },
    /// `/remember`, `/steer` or `/next` without text.
    #[error("/{} needs text", command.name())]
    MissingText { command: CommandKind },
    /// A provider/model name with whitespace in it or longer than [`MAX_NAME_CHARS`].
    #[error("/{}: invalid name", command.name())]
    InvalidName { command: CommandKind },
    /// A date that is not `YYYY-MM-DD` (at most 32 characters kept).
    #[error("/{}: invalid date {token:?}", command.name())]
    InvalidDate { command: CommandKind, token: String },
    /// An argument the command does not know (`/tasks foo`; at most 32 characters).
    #[error("/{}: unknown action {action:?}", command.name())]
    UnknownAction {
        command: CommandKind,
        action: String,
    },
    /// A search text longer than `max` characters (`/memory <words>`).
    #[error("/{}: the text is longer than {max} characters", command.name())]
    TooLong { command: CommandKind, max: usize },
}

impl CommandKind {
    /// Every command, in menu/help order.
    pub const ALL: [CommandKind; 25] = [
        CommandKind::Start,
        CommandKind::Help,
        CommandKind::New,
        CommandKind::History,
        CommandKind::Resume,
        CommandKind::Retitle,
        CommandKind::DelHistory,
        CommandKind::Provider,
        CommandKind::Model,
        CommandKind::Remember,
        CommandKind::Memory,
        CommandKind::Forget,
        CommandKind::Skills,
        CommandKind::Tasks,
        CommandKind::Jobs,
        CommandKind::Cancel,
        CommandKind::Status,
        CommandKind::Notes,
        CommandKind::Steer,
        CommandKind::Next,
        CommandKind::Compact,
        CommandKind::Retry,
        CommandKind::Usage,
        CommandKind::Doctor,
        CommandKind::Web,
    ];

    /// The command's name without the slash, as typed and as registered with setMyCommands.
    pub fn name(self) -> &'static str {
        match self {
            CommandKind::Start => "start",
            CommandKind::Help => "help",
            CommandKind::New => "new",
            CommandKind::History => "history",
            CommandKind::Resume => "resume",
            CommandKind::Retitle => "retitle",
            CommandKind::DelHistory => "del_history",
            CommandKind::Provider => "provider",
            CommandKind::Model => "model",
            CommandKind::Remember => "remember",
            CommandKind::Memory => "memory",
            CommandKind::Forget => "forget",
            CommandKind::Skills => "skills",
            CommandKind::Cancel => "cancel",
            CommandKind::Status => "status",
            CommandKind::Notes => "notes",
            CommandKind::Tasks => "tasks",
            CommandKind::Steer => "steer",
            CommandKind::Next => "next",
            CommandKind::Compact => "compact",
            CommandKind::Retry => "retry",
            CommandKind::Usage => "usage",
            CommandKind::Jobs => "jobs",
            CommandKind::Doctor => "doctor",
            CommandKind::Web => "web",
        }
    }

    /// Looks a lowercase name up in the table.
    pub fn from_name(name: &str) -> Option<CommandKind> {
        CommandKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// The argument synopsis, e.g. `#n` for `/resume`; empty when it takes none.
    pub fn usage(self) -> &'static str {
        match self {
            CommandKind::Resume => "#n",
            CommandKind::Retitle => "[#n]",
            CommandKind::DelHistory | CommandKind::Forget => "#a/#b/…",
            CommandKind::Provider | CommandKind::Model | CommandKind::Retry => "[name]",
            CommandKind::Notes => "[YYYY-MM-DD]",
            CommandKind::Tasks => "[del #a/#b/… | pause #n | resume #n]",
            CommandKind::Remember | CommandKind::Steer | CommandKind::Next => "text",
            CommandKind::Cancel => "[all]",
            CommandKind::Jobs => "[cancel #n]",
            CommandKind::Memory => "[page | words]",
            CommandKind::History => "[words]",
            _ => "",
        }
    }

    /// Short menu description (setMyCommands wants 1–256 characters).
    pub fn description(self, locale: Locale) -> &'static str {
        let (zh, en) = match self {
            CommandKind::Start => ("开始使用", "Get started"),
            CommandKind::Help => ("帮助与命令列表", "Help and command list"),
            CommandKind::New => ("开始新会话", "Start a new session"),
            CommandKind::History => (
                "历史会话列表；/history 关键词 搜索说过的话",
                "List past sessions; /history words searches what was said",
            ),
            CommandKind::Resume => ("继续某个会话：/resume #n", "Resume a session: /resume #n"),
            CommandKind::Retitle => ("重新生成标题", "Regenerate a session title"),
            CommandKind::DelHistory => (
                "删除会话：/del_history #a/#b",
                "Delete sessions: /del_history #a/#b",
            ),
            CommandKind::Provider => ("查看或切换提供方", "Show or switch provider"),
            CommandKind::Model => ("查看或切换模型", "Show or switch model"),
            CommandKind::Remember => ("记住一条长期记忆", "Add a long-term memory"),
            CommandKind::Memory => (
                "长期记忆：/memory 2 翻页，/memory 关键词 搜索，/memory all 含已整理，/memory undo 撤销整理",
                "Memories: /memory 2 pages, /memory words searches, /memory all shows set-aside, /memory undo undoes tidying",
            ),
            CommandKind::Forget => ("删除记忆：/forget #a/#b", "Delete memories: /forget #a/#b"),
            CommandKind::Skills => ("技能列表", "List skills"),
            CommandKind::Cancel => ("取消正在进行的任务", "Cancel the running task"),
            CommandKind::Status => ("运行状态", "Show status"),
            CommandKind::Notes => ("某天的对话笔记", "A day's conversation notes"),
            CommandKind::Tasks => (
                "提醒、定时任务与监视：/tasks del|pause|resume #n",
                "Reminders, tasks and watches: /tasks del|pause|resume #n",
            ),
            CommandKind::Steer => (
                "补充给正在进行的任务：/steer 内容",
                "Add to the running task: /steer text",
            ),
            CommandKind::Next => (
                "排到当前任务之后：/next 内容",
                "Queue after the running task: /next text",
            ),
            CommandKind::Compact => ("压缩会话上下文", "Compact the session context"),
            CommandKind::Retry => (
                "重新回答上一条消息：/retry [模型]",
                "Answer the last message again: /retry [model]",
            ),
            CommandKind::Usage => ("用量与费用", "Token usage and cost"),
            CommandKind::Doctor => ("检查运行环境", "Check the setup"),
            CommandKind::Web => (
                "网页控制台的一次性登录链接",
                "A one-time web console login link",
            ),
            CommandKind::Jobs => (
                "后台任务：/jobs cancel #n 取消",
                "Background jobs: /jobs cancel #n",
            ),
        };
        match locale {
            Locale::Zh => zh,
            Locale::En => en,
        }
    }
}

impl Command {
    /// Which command this is.
    pub(crate) fn kind(&self) -> CommandKind {
        match self {
            Command::Start => CommandKind::Start,
            Command::Help => CommandKind::Help,
            Command::New => CommandKind::New,
            Command::History | Command::HistorySearch(_) => CommandKind::History,
            Command::Resume(_) => CommandKind::Resume,
            Command::Retitle(_) => CommandKind::Retitle,
            Command::DelHistory(_) => CommandKind::DelHistory,
            Command::Provider(_) => CommandKind::Provider,
            Command::Model(_) => CommandKind::Model,
            Command::Remember(_) => CommandKind::Remember,
            Command::Memory
            | Command::MemoryPage(_)
            | Command::MemoryAll(_)
            | Command::MemoryUndo
            | Command::MemorySearch(_) => CommandKind::Memory,
            Command::Forget(_) => CommandKind::Forget,
            Command::Skills => CommandKind::Skills,
            Command::Cancel | Command::CancelAll => CommandKind::Cancel,
            Command::Status => CommandKind::Status,
            Command::Notes(_) => CommandKind::Notes,
            Command::Tasks | Command::TasksDelete(_) | Command::TasksPause(..) => {
                CommandKind::Tasks
            }
            Command::Steer(_) => CommandKind::Steer,
            Command::Next(_) => CommandKind::Next,
            Command::Compact => CommandKind::Compact,
            Command::Retry(_) => CommandKind::Retry,
            Command::Usage => CommandKind::Usage,
            Command::Doctor => CommandKind::Doctor,
            Command::Web => CommandKind::Web,
            Command::Jobs | Command::JobsCancel(_) => CommandKind::Jobs,
        }
    }
}

/// The setMyCommands list `(name, description)` for `locale`: every command but `/start`
/// (Telegram's Start button sends it).
pub(crate) fn menu(locale: Locale) -> Vec<(&'static str, &'static str)> {
    CommandKind::ALL
        .into_iter()
        .filter(|kind| *kind != CommandKind::Start)
        .map(|kind| (kind.name(), kind.description(locale)))
        .collect()
}

/// Parses a message text.
///
/// `None` when the text is not a command for this bot: no leading `/` (or `／`), an empty or
/// non-`[A-Za-z0-9_]` name (`/`, `/ x`, `/usr/bin`), or a `@mention` that is not `bot_username`
/// (case-insensitive; with `bot_username = None` any mention is refused). Commands taking no
/// argument ignore trailing text.
pub(crate) fn parse(
    text: &str,
    bot_username: Option<&str>,
) -> Option<Result<Command, CommandError>> {
    let text = text.trim_start();
    let rest = text.strip_prefix('/').or_else(|| text.strip_prefix('／'))?;
    let token_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let (token, args) = rest.split_at(token_end);
    let name = match token.split_once('@') {
        Some((name, mention)) => {
            let wanted = bot_username?.trim_start_matches('@');
            if wanted.is_empty() || !mention.eq_ignore_ascii_case(wanted) {
                return None;
            }
            name
        }
        None => token,
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let name = name.to_ascii_lowercase();
    let Some(kind) = CommandKind::from_name(&name) else {
        let name = name.chars().take(MAX_COMMAND_CHARS).collect();
        return Some(Err(CommandError::Unknown { name }));
    };
    Some(build(kind, args))
}

fn build(kind: CommandKind, args: &str) -> Result<Command, CommandError> {
    Ok(match kind {
        CommandKind::Start => Command::Start,
        CommandKind::Help => Command::Help,
        CommandKind::New => Command::New,
        CommandKind::History => history(kind, args)?,
        CommandKind::Memory => memory(kind, args)?,
        CommandKind::Skills => Command::Skills,
        CommandKind::Cancel => match args.trim() {
            all if all.eq_ignore_ascii_case("all") || all == "全部" => Command::CancelAll,
            _ => Command::Cancel,
        },
        CommandKind::Status => Command::Status,
        CommandKind::Compact => Command::Compact,
        CommandKind::Usage => Command::Usage,
        CommandKind::Doctor => Command::Doctor,
        CommandKind::Web => Command::Web,
        CommandKind::Resume => match numbers(kind, args, 1)?.first() {
            Some(n) => Command::Resume(*n),
            None => return Err(CommandError::MissingNumber { command: kind }),
        },
        CommandKind::Retitle => Command::Retitle(numbers(kind, args, 1)?.first().copied()),
        CommandKind::DelHistory => Command::DelHistory(non_empty_numbers(kind, args)?),
        CommandKind::Forget => Command::Forget(non_empty_numbers(kind, args)?),
        CommandKind::Provider => Command::Provider(optional_name(kind, args)?),
        CommandKind::Model => Command::Model(optional_name(kind, args)?),
        CommandKind::Retry => Command::Retry(optional_name(kind, args)?),
        CommandKind::Tasks => tasks(kind, args)?,
        CommandKind::Jobs => jobs(kind, args)?,
        CommandKind::Remember => match args.trim() {
            "" => return Err(CommandError::MissingText { command: kind }),
            text => Command::Remember(text.to_owned()),
        },
        CommandKind::Notes => match args.trim() {
            "" => Command::Notes(None),
            date => match chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d") {
                Ok(day) => Command::Notes(Some(day.format("%Y-%m-%d").to_string())),
                Err(_) => {
                    return Err(CommandError::InvalidDate {
                        command: kind,
                        token: date.chars().take(MAX_COMMAND_CHARS).collect(),
                    });
                }
            },
        },
        CommandKind::Steer | CommandKind::Next => match args.trim() {
            "" => return Err(CommandError::MissingText { command: kind }),
            text if kind == CommandKind::Steer => Command::Steer(text.to_owned()),
            text => Command::Next(text.to_owned()),
        },
    })
}

/// `/memory` alone (or `/memory 1`) lists page 1; `/memory <n>` page `n`; a number with a sign
/// (`-1`, `+2`) is refused as a bad number; `/memory undo` undoes the last consolidation and
/// `/memory all [n]` lists set-aside memories too; any other text is searched for.
fn memory(kind: CommandKind, args: &str) -> Result<Command, CommandError> {
    let args = args.trim();
    if args.is_empty() {
        return Ok(Command::Memory);
    }
    if matches!(args.to_lowercase().as_str(), "undo" | "撤销") {
        return Ok(Command::MemoryUndo);
    }
    let first = args.split_whitespace().next().unwrap_or_default();
    if matches!(first.to_lowercase().as_str(), "all" | "全部") {
        let rest = args[first.len()..].trim();
        if rest.is_empty() {
            return Ok(Command::MemoryAll(1));
        }
        if let Ok(n @ 1..) = rest.parse::<u32>()
            && !rest.starts_with('+')
        {
            return Ok(Command::MemoryAll(n));
        }
        if rest
            .strip_prefix(['-', '+', '#'])
            .unwrap_or(rest)
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            return Err(CommandError::InvalidNumber {
                command: kind,
                token: rest.chars().take(MAX_COMMAND_CHARS).collect(),
            });
        }
    }
    let unsigned = args.strip_prefix(['-', '+', '#']).unwrap_or(args);
    if !unsigned.is_empty() && unsigned.chars().all(|c| c.is_ascii_digit()) {
        return match args.parse::<u32>() {
            Ok(1) => Ok(Command::Memory),
            Ok(n) if n > 1 && !args.starts_with('+') => Ok(Command::MemoryPage(n)),
            _ => Err(CommandError::InvalidNumber {
                command: kind,
                token: args.chars().take(MAX_COMMAND_CHARS).collect(),
            }),
        };
    }
    if args.chars().count() > MAX_MEMORY_QUERY_CHARS {
        return Err(CommandError::TooLong {
            command: kind,
            max: MAX_MEMORY_QUERY_CHARS,
        });
    }
    Ok(Command::MemorySearch(args.to_owned()))
}

/// `/history` alone lists the sessions; `/history <words>` searches what was said in them.
fn history(kind: CommandKind, args: &str) -> Result<Command, CommandError> {
    let args = args.trim();
    if args.is_empty() {
        return Ok(Command::History);
    }
    if args.chars().count() > MAX_MEMORY_QUERY_CHARS {
        return Err(CommandError::TooLong {
            command: kind,
            max: MAX_MEMORY_QUERY_CHARS,
        });
    }
    Ok(Command::HistorySearch(args.to_owned()))
}

/// `/tasks` alone lists; `/tasks del #a/#b` (also `delete`, `rm`, `删除`) deletes; `/tasks
/// pause #n` (`暂停`) and `/tasks resume #n` (`恢复`) pause and resume one.
fn tasks(kind: CommandKind, args: &str) -> Result<Command, CommandError> {
    let args = args.trim();
    if args.is_empty() {
        return Ok(Command::Tasks);
    }
    let end = args.find(char::is_whitespace).unwrap_or(args.len());
    let (action, rest) = args.split_at(end);
    match action.to_lowercase().as_str() {
        "del" | "delete" | "rm" | "删除" => {
            Ok(Command::TasksDelete(non_empty_numbers(kind, rest)?))
        }
        verb @ ("pause" | "暂停" | "resume" | "恢复") => {
            match numbers(kind, rest, 1)?.first() {
                Some(n) => Ok(Command::TasksPause(*n, matches!(verb, "pause" | "暂停"))),
                None => Err(CommandError::MissingNumber { command: kind }),
            }
        }
        _ => Err(CommandError::UnknownAction {
            command: kind,
            action: action.chars().take(MAX_COMMAND_CHARS).collect(),
        }),
    }
}

/// `/jobs` alone lists; `/jobs cancel #n` (also `stop`, `kill`, `取消`) cancels one job.
fn jobs(kind: CommandKind, args: &str) -> Result<Command, CommandError> {
    let args = args.trim();
    if args.is_empty() {
        return Ok(Command::Jobs);
    }
    let end = args.find(char::is_whitespace).unwrap_or(args.len());
    let (action, rest) = args.split_at(end);
    match action.to_lowercase().as_str() {
        "cancel" | "stop" | "kill" | "取消" => match numbers(kind, rest, 1)?.first() {
            Some(n) => Ok(Command::JobsCancel(*n)),
            None => Err(CommandError::MissingNumber { command: kind }),
        },
        _ => Err(CommandError::UnknownAction {
            command: kind,
            action: action.chars().take(MAX_COMMAND_CHARS).collect(),
        }),
    }
}

#[cfg(test)]
mod tests;
