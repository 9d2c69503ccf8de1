//! The `/start` and `/help` text: welcome, the command list and key configuration hints.

use super::Texts;
use crate::command::CommandKind;

impl Texts {
    /// The help text (`/start` = `/help`).
    pub fn help(self) -> String {
        let mut out = String::from(self.pick(
            "<b>你好，我是 Kernel，你的私人助手。</b>\n直接发消息即可对话；也可以发送图片、文件或语音。\n\n<b>命令</b>\n",
            "<b>Hi, I am Kernel, your personal assistant.</b>\nJust send a message to chat; photos, files and voice notes work too.\n\n<b>Commands</b>\n",
        ));
        for kind in CommandKind::ALL {
            if kind == CommandKind::Start {
                continue;
            }
            out.push_str(&format!("/{}", kind.name()));
            let usage = self.usage(kind);
            if !usage.is_empty() {
                out.push(' ');
                out.push_str(usage);
            }
            out.push_str(" — ");
            out.push_str(self.help_line(kind));
            out.push('\n');
        }
        out.push_str(self.pick(
            "\n<b>提示</b>\n• <code>#n</code> 是最近一次 /history、/memory、/tasks 或 /jobs 列表中的编号；多个用 / 分隔，如 <code>/forget #1/#3</code>。\n• 模型只能从配置中该提供方的 <code>models = [...]</code> 里选择。\n• 界面语言由配置 <code>[general] locale</code> 决定（<code>zh</code> / <code>en</code>）。",
            "\n<b>Hints</b>\n• <code>#n</code> is the number from the latest /history, /memory, /tasks or /jobs listing; separate several with /, e.g. <code>/forget #1/#3</code>.\n• Models must come from the provider's configured <code>models = [...]</code>.\n• The language is set by <code>[general] locale</code> in the config (<code>zh</code> / <code>en</code>).",
        ));
        out
    }

    /// The argument synopsis, HTML-escaped and localized.
    pub fn usage(self, kind: CommandKind) -> &'static str {
        match kind {
            CommandKind::Resume => "#n",
            CommandKind::Retitle => "[#n]",
            CommandKind::DelHistory | CommandKind::Forget => "#a/#b/…",
            CommandKind::Provider => self.pick("[名称]", "[name]"),
            CommandKind::Model => self.pick("[模型]", "[model]"),
            CommandKind::Notes => self.pick("[年-月-日]", "[YYYY-MM-DD]"),
            CommandKind::Tasks => "[del #a/#b/…]",
            CommandKind::Remember | CommandKind::Steer | CommandKind::Next => {
                self.pick("&lt;内容&gt;", "&lt;text&gt;")
            }
            CommandKind::Cancel => "[all]",
            CommandKind::Jobs => "[cancel #n]",
            _ => "",
        }
    }

    fn help_line(self, kind: CommandKind) -> &'static str {
        match kind {
            CommandKind::New => self.pick(
                "归档当前会话，开始新会话",
                "archive this session, start a new one",
            ),
            CommandKind::History => {
                self.pick("历史会话（最新在前）", "past sessions, newest first")
            }
            CommandKind::Resume => self.pick("继续某个历史会话", "continue a past session"),
            CommandKind::Retitle => self.pick(
                "重新生成标题（默认当前会话）",
                "regenerate a title (default: this session)",
            ),
            CommandKind::DelHistory => self.pick("删除会话", "delete sessions"),
            CommandKind::Provider => self.pick("查看 / 切换提供方", "show / switch provider"),
            CommandKind::Model => self.pick("查看 / 切换模型", "show / switch model"),
            CommandKind::Remember => self.pick("直接添加一条长期记忆", "add a long-term memory"),
            CommandKind::Memory => self.pick(
                "长期记忆（最新在前，每页 20 条）；带关键词则搜索",
                "memories, newest first, 20 a page; with words, a search",
            ),
            CommandKind::Forget => self.pick("删除记忆", "delete memories"),
            CommandKind::Skills => self.pick(
                "技能列表（模型按需读取）",
                "skills (the model reads them on demand)",
            ),
            CommandKind::Tasks => self.pick(
                "提醒与定时任务（下次时间在前）",
                "reminders and scheduled tasks, next due first",
            ),
            CommandKind::Cancel => self.pick(
                "立即停止正在进行的任务（all：并清空 /next 队列）",
                "stop the running task now (all: also clear the /next queue)",
            ),
            CommandKind::Steer => self.pick(
                "补充给正在进行的任务，在它的下一步之前生效",
                "add to the running task before its next step",
            ),
            CommandKind::Next => self.pick(
                "当前任务结束后再处理这条",
                "run this after the current task",
            ),
            CommandKind::Jobs => {
                self.pick("后台任务（运行中在前）", "background jobs, running first")
            }
            CommandKind::Status => self.pick(
                "会话、模型、任务与 MCP 状态",
                "session, model, task and MCP state",
            ),
            CommandKind::Notes => self.pick(
                "自动记忆记下的当天笔记（默认今天）",
                "the day's notes kept by auto memory (default: today)",
            ),
            CommandKind::Compact => self.pick(
                "把较早的对话折叠进会话摘要，腾出上下文",
                "fold older rounds into the session summary to free context",
            ),
            CommandKind::Retry => self.pick(
                "把本会话最后一条消息重新回答一次（可指定模型），新回答替换旧回答",
                "answer the session's last message again (optionally on another model); the new answer replaces the old one",
            ),
            CommandKind::Usage => self.pick(
                "今日、本会话、近 30 天的 token 用量与费用",
                "tokens and cost today, this session, the last 30 days",
            ),
            CommandKind::Doctor => self.pick(
                "配置、数据目录、数据库、待发送消息、备份、CLI 等检查（不联网）",
                "checks of config, data_dir, database, outbox, backups, CLIs (offline)",
            ),
            CommandKind::Web => self.pick(
                "网页控制台的一次性登录链接（10 分钟内有效，只能用一次）",
                "a one-time login link to the web console (valid 10 minutes, works once)",
            ),
            CommandKind::Help | CommandKind::Start => self.pick("显示本帮助", "show this help"),
        }
    }
}
