//! The exact words kernel-tg says to the owner, as literals, in zh and en: what the end-to-end
//! suites expect to see through the fake Bot API. kernel-tg's `texts` is private; a change of
//! wording there fails these tests until the literal here is changed with it.

use kernel_common::config::Locale;
use kernel_common::said::escape_html;

/// Chinese, the default locale.
pub fn zh() -> Told {
    Told::new(Locale::Zh)
}

/// What kernel-tg says in one locale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Told(Locale);

/// A message kind kernel-tg does not take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    Sticker,
    Video,
}

impl Unsupported {
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Self::Sticker => ("贴纸", "a sticker"),
            Self::Video => ("视频", "a video"),
        }
    }
}

impl Told {
    pub fn new(locale: Locale) -> Self {
        Self(locale)
    }

    fn pick<T>(self, zh: T, en: T) -> T {
        match self.0 {
            Locale::Zh => zh,
            Locale::En => en,
        }
    }

    pub fn placeholder(self) -> &'static str {
        self.pick("正在生成回复…", "Generating a reply…")
    }

    pub fn busy(self) -> &'static str {
        self.pick(
            "正在处理上一条，请稍后或 /cancel；/steer 补充给当前任务，/next 排到它之后",
            "Still working on the previous message; wait or /cancel — /steer adds to it, /next queues after it",
        )
    }

    pub fn turn_cut_off(self) -> &'static str {
        self.pick(
            "⚠\u{fe0f} 回复被中断：Kernel 在回答完成前重启了。可点击下方按钮重新运行这条消息。",
            "⚠\u{fe0f} The answer was cut off: Kernel restarted before it was finished. Press the button below to run the message again.",
        )
    }

    pub fn edit_offer_button(self) -> &'static str {
        self.pick("回答修改后的消息", "Answer the edited message")
    }

    pub fn edit_command(self) -> &'static str {
        self.pick(
            "修改消息不会执行命令；请把命令重新发送一次",
            "An edit does not run a command; send the command again as a new message",
        )
    }

    pub fn stop_offer(self) -> &'static str {
        self.pick("⏳ 仍在处理中…", "⏳ Still working…")
    }

    pub fn stop_done(self) -> &'static str {
        self.pick("已停止", "Stopped")
    }

    pub fn stop_button(self) -> &'static str {
        self.pick("停止", "Stop")
    }

    pub fn steered(self) -> &'static str {
        self.pick(
            "已转告正在进行的任务（在下一步之前生效）",
            "Passed on to the running task (it takes effect before its next step)",
        )
    }

    /// `/status`'s task line while a turn runs (its start time follows).
    pub fn status_running(self) -> &'static str {
        self.pick("任务：运行中", "Task: running")
    }

    /// `/status`'s task line with no turn running.
    pub fn status_idle(self) -> &'static str {
        self.pick("任务：空闲", "Task: idle")
    }

    /// The head of `/status`'s list of the turns running in several sessions.
    pub fn running_turns(self) -> &'static str {
        self.pick("正在运行的回合：", "Running turns:")
    }

    /// One line of that list, up to its task.
    pub fn running_turn_of(self, session_id: i64) -> String {
        self.pick(
            format!("· 会话 {session_id}：运行中"),
            format!("· session {session_id}: running"),
        )
    }

    /// The head of `/resume #n`'s reply inside a topic (the session line follows).
    pub fn resumed_in_topic(self) -> &'static str {
        self.pick("本话题现在接续会话：", "This topic now continues: ")
    }

    /// The note under an item delivered in the main chat because its topic `name` was deleted.
    pub fn topic_deleted_note(self, name: &str) -> String {
        match self.0 {
            Locale::Zh => format!("（原话题「{name}」已删除）"),
            Locale::En => format!("(topic \"{name}\" was deleted)"),
        }
    }

    pub fn nothing_to_cancel(self) -> &'static str {
        self.pick("没有正在进行的任务", "Nothing is running")
    }

    pub fn budget_granted_running(self) -> &'static str {
        self.pick(
            "已继续：正在处理刚才那条消息",
            "Limit lifted: your message runs now",
        )
    }

    pub fn agentd_unavailable(self) -> &'static str {
        self.pick(
            "助手后台不可用，稍后重试",
            "The assistant backend is unavailable; try again later",
        )
    }

    pub fn watch_pause_button(self) -> &'static str {
        self.pick("⏸ 暂停此监视", "⏸ Pause this watch")
    }

    pub fn watch_delete_button(self) -> &'static str {
        self.pick("🗑 删除此监视", "🗑 Delete this watch")
    }

    pub fn turn_interrupted(self) -> &'static str {
        self.pick(
            "⚠\u{fe0f} 助手后台中断，本次回复未完成，请重试",
            "⚠\u{fe0f} The assistant backend went away; this reply is incomplete, please retry",
        )
    }

    pub fn try_again_offer(self) -> &'static str {
        self.pick("要重新回答吗？", "Shall I try again?")
    }

    pub fn try_again_button(self) -> &'static str {
        self.pick("重新回答", "Try again")
    }

    pub fn nothing_to_retry(self) -> &'static str {
        self.pick(
            "本会话还没有可以重新回答的消息",
            "There is no message in this session to answer again",
        )
    }

    pub fn transcribing(self) -> &'static str {
        self.pick("🎙 正在识别语音…", "🎙 Transcribing the voice note…")
    }

    pub fn steer_started(self) -> &'static str {
        self.pick(
            "没有正在进行的任务，已作为新消息处理",
            "Nothing was running; handled as a new message",
        )
    }

    pub fn schedule_resumed(self) -> &'static str {
        self.pick("已恢复", "Resumed")
    }

    pub fn schedule_paused(self) -> &'static str {
        self.pick(
            "已暂停，/tasks resume #n 可恢复",
            "Paused; /tasks resume #n restarts it",
        )
    }

    pub fn rerun_started(self) -> &'static str {
        self.pick("已重新运行", "Running it again")
    }

    pub fn rerun_over_budget(self) -> &'static str {
        self.pick(
            "已达到预算上限：请先点“今天继续”或“本月继续”，再重新运行",
            "Over the budget limit: press Continue today or Continue this month first, then run it again",
        )
    }

    pub fn rerun_button(self) -> &'static str {
        self.pick("重新运行", "Run again")
    }

    pub fn rerun_busy(self) -> &'static str {
        self.pick(
            "正在处理其他消息，请稍后再点",
            "Another message is being handled; press again later",
        )
    }

    pub fn question_stale(self) -> &'static str {
        self.pick("这个问题已经结束", "That question is closed")
    }

    pub fn question_answered(self) -> &'static str {
        self.pick("已回答", "Answered")
    }

    pub fn new_session(self) -> &'static str {
        self.pick("已开始新会话", "Started a new session")
    }

    pub fn new_topic_name(self) -> &'static str {
        self.pick("新对话", "New chat")
    }

    pub fn cli_running(self) -> &'static str {
        self.pick("⏳ 正在执行任务…", "⏳ Running a task…")
    }

    pub fn budget_continue_today(self) -> &'static str {
        self.pick("今天继续", "Continue today")
    }

    pub fn budget_continue_month(self) -> &'static str {
        self.pick("本月继续", "Continue this month")
    }

    pub fn help(self) -> &'static str {
        self.pick(
            "<b>你好，我是 Kernel，你的私人助手。</b>\n直接发消息即可对话；也可以发送图片、文件或语音。\n\n<b>命令</b>\n/help — 显示本帮助\n/new — 归档当前会话，开始新会话\n/history — 历史会话（最新在前）\n/resume #n — 继续某个历史会话\n/retitle [#n] — 重新生成标题（默认当前会话）\n/del_history #a/#b/… — 删除会话\n/provider [名称] — 查看 / 切换提供方\n/model [模型] — 查看 / 切换模型\n/remember &lt;内容&gt; — 直接添加一条长期记忆\n/memory — 长期记忆（最新在前，每页 20 条）；带关键词则搜索\n/forget #a/#b/… — 删除记忆\n/skills — 技能列表（模型按需读取）\n/tasks [del #a/#b/…] — 提醒与定时任务（下次时间在前）\n/jobs [cancel #n] — 后台任务（运行中在前）\n/cancel [all] — 立即停止正在进行的任务（all：并清空 /next 队列）\n/status — 会话、模型、任务与 MCP 状态\n/notes [年-月-日] — 自动记忆记下的当天笔记（默认今天）\n/steer &lt;内容&gt; — 补充给正在进行的任务，在它的下一步之前生效\n/next &lt;内容&gt; — 当前任务结束后再处理这条\n/compact — 把较早的对话折叠进会话摘要，腾出上下文\n/retry — 把本会话最后一条消息重新回答一次（可指定模型），新回答替换旧回答\n/usage — 今日、本会话、近 30 天的 token 用量与费用\n/doctor — 配置、数据目录、数据库、待发送消息、备份、CLI 等检查（不联网）\n/web — 网页控制台的一次性登录链接（10 分钟内有效，只能用一次）\n\n<b>提示</b>\n• <code>#n</code> 是最近一次 /history、/memory、/tasks 或 /jobs 列表中的编号；多个用 / 分隔，如 <code>/forget #1/#3</code>。\n• 模型只能从配置中该提供方的 <code>models = [...]</code> 里选择。\n• 界面语言由配置 <code>[general] locale</code> 决定（<code>zh</code> / <code>en</code>）。",
            "<b>Hi, I am Kernel, your personal assistant.</b>\nJust send a message to chat; photos, files and voice notes work too.\n\n<b>Commands</b>\n/help — show this help\n/new — archive this session, start a new one\n/history — past sessions, newest first\n/resume #n — continue a past session\n/retitle [#n] — regenerate a title (default: this session)\n/del_history #a/#b/… — delete sessions\n/provider [name] — show / switch provider\n/model [model] — show / switch model\n/remember &lt;text&gt; — add a long-term memory\n/memory — memories, newest first, 20 a page; with words, a search\n/forget #a/#b/… — delete memories\n/skills — skills (the model reads them on demand)\n/tasks [del #a/#b/…] — reminders and scheduled tasks, next due first\n/jobs [cancel #n] — background jobs, running first\n/cancel [all] — stop the running task now (all: also clear the /next queue)\n/status — session, model, task and MCP state\n/notes [YYYY-MM-DD] — the day's notes kept by auto memory (default: today)\n/steer &lt;text&gt; — add to the running task before its next step\n/next &lt;text&gt; — run this after the current task\n/compact — fold older rounds into the session summary to free context\n/retry — answer the session's last message again (optionally on another model); the new answer replaces the old one\n/usage — tokens and cost today, this session, the last 30 days\n/doctor — checks of config, data_dir, database, outbox, backups, CLIs (offline)\n/web — a one-time login link to the web console (valid 10 minutes, works once)\n\n<b>Hints</b>\n• <code>#n</code> is the number from the latest /history, /memory, /tasks or /jobs listing; separate several with /, e.g. <code>/forget #1/#3</code>.\n• Models must come from the provider's configured <code>models = [...]</code>.\n• The language is set by <code>[general] locale</code> in the config (<code>zh</code> / <code>en</code>).",
        )
    }

    pub fn no_schedules(self) -> &'static str {
        self.pick("还没有提醒或定时任务", "No reminders or scheduled tasks")
    }

    pub fn no_jobs(self) -> &'static str {
        self.pick("还没有后台任务", "No background jobs")
    }

    pub fn no_skills(self) -> &'static str {
        self.pick(
            "还没有技能。在技能目录（<code>[general] skills_dir</code>）里放 <code>&lt;名称&gt;/SKILL.md</code> 即可添加。",
            "No skills yet. Add one as <code>&lt;name&gt;/SKILL.md</code> in the skills folder (<code>[general] skills_dir</code>).",
        )
    }

    /// The /cancel reply when no CLI was killed.
    pub fn cancelled(self) -> &'static str {
        self.pick("已取消", "Cancelled")
    }

    pub fn job_cancelled(self, cancelled: bool) -> &'static str {
        match cancelled {
            true => self.pick(
                "已取消该后台任务，它的进程正在结束",
                "Cancelled the job; its processes are being ended",
            ),
            false => self.pick(
                "该后台任务已经结束，无需取消",
                "That job has already ended; nothing to cancel",
            ),
        }
    }

    pub fn schedules_deleted(self, count: usize) -> String {
        self.pick(
            format!("已删除 {count} 个提醒或任务"),
            format!("Deleted {count} reminder(s) or task(s)"),
        )
    }

    pub fn sessions_deleted(self, count: usize) -> String {
        self.pick(
            format!("已删除 {count} 个会话"),
            format!("Deleted {count} session(s)"),
        )
    }

    pub fn memories_deleted(self, count: usize) -> String {
        self.pick(
            format!("已删除 {count} 条记忆"),
            format!("Deleted {count} memory(ies)"),
        )
    }

    pub fn retitled(self, title: &str) -> String {
        let title = escape_html(title);
        self.pick(format!("新标题：{title}"), format!("New title: {title}"))
    }

    pub fn switched(self, provider: &str, model: &str) -> String {
        let to = format!("<code>{provider}</code> / <code>{model}</code>");
        self.pick(format!("已切换到 {to}"), format!("Switched to {to}"))
    }

    pub fn remembered(self, text: &str) -> String {
        let text = escape_html(text);
        self.pick(format!("已记住：{text}"), format!("Remembered: {text}"))
    }

    pub fn queued_next(self, position: u32) -> String {
        self.pick(
            format!("已排队（第 {position} 条），当前任务结束后处理"),
            format!("Queued (#{position}); it runs after the current task"),
        )
    }

    pub fn queue_cleared(self, reply: &str, cleared: u32) -> String {
        self.pick(
            format!("{reply}\n已清空队列（{cleared} 条）"),
            format!("{reply}\nQueue cleared ({cleared} message(s))"),
        )
    }

    pub fn unsupported_kind(self, kind: Unsupported) -> String {
        let (zh, en) = kind.names();
        self.pick(
            format!("暂不支持{zh}，请发送文字、图片、文件、语音、位置或联系人"),
            format!(
                "{} is not supported; send text, a photo, a file, a voice note, a location or a contact",
                capitalised(en)
            ),
        )
    }

    pub fn left_unsupported(self, kind: Unsupported) -> String {
        let (zh, en) = kind.names();
        self.pick(format!("{zh}（暂不支持）"), format!("{en} (not supported)"))
    }

    pub fn left_over_limit(self, count: usize, max: usize) -> String {
        self.pick(
            format!("{count} 个附件：超出每轮 {max} 个的上限"),
            format!("{count} attachment(s): over the limit of {max} per turn"),
        )
    }

    pub fn left_cut(self, count: usize) -> String {
        self.pick(
            format!("{count} 条较早的消息：超出单轮长度上限"),
            format!("{count} earlier message(s): over the length limit of one turn"),
        )
    }

    pub fn delivery_failed(self, failed: usize, total: usize) -> String {
        self.pick(
            format!("⚠\u{fe0f} 回复有 {failed}/{total} 段未能发送，请重试或查看日志"),
            format!(
                "⚠\u{fe0f} {failed} of {total} part(s) of the reply could not be sent; retry or check the logs"
            ),
        )
    }

    pub fn not_taken(self, excerpt: &str, waited_secs: u64) -> String {
        self.pick(
            format!(
                "⚠\u{fe0f} 助手后台 {waited_secs} 秒内没有恢复，这条消息未能处理，请稍后重发：\n「{excerpt}」"
            ),
            format!(
                "⚠\u{fe0f} The assistant backend did not come back within {waited_secs} s; this message was not taken, please send it again later:\n“{excerpt}”"
            ),
        )
    }

    pub fn file_too_large(self, max_mb: u32) -> String {
        self.pick(
            format!("文件太大（上限 {max_mb} MB），未处理"),
            format!("The file is too large (limit {max_mb} MB); not processed"),
        )
    }

    /// The reply to an unknown command `/name`.
    pub fn unknown_command(self, name: &str) -> String {
        self.pick(
            format!("未知命令 /{name}，发送 /help 查看可用命令"),
            format!("Unknown command /{name}; send /help for the list"),
        )
    }

    /// The reply to `/command token` where a number was wanted.
    pub fn invalid_number(self, command: &str, token: &str) -> String {
        let token = escape_html(token);
        self.pick(
            format!(
                "编号 <code>{token}</code> 无效：应为正整数，例如 <code>/{command} #1</code>"
            ),
            format!(
                "Invalid number <code>{token}</code>: use a positive whole number, e.g. <code>/{command} #1</code>"
            ),
        )
    }

    /// The reply to `/command` without the text it needs.
    pub fn missing_text(self, command: &str) -> String {
        self.pick(
            format!("请在 /{command} 后写上要记住的内容"),
            format!("Write what to remember after /{command}"),
        )
    }

    /// The reply to `/command` with more than `max` characters.
    pub fn too_long(self, command: &str, max: usize) -> String {
        self.pick(
            format!("/{command} 的内容太长：最多 {max} 个字符，请用几个关键词"),
            format!(
                "The text of /{command} is too long: at most {max} characters; use a few words"
            ),
        )
    }

    /// The command menu set with setMyCommands at start: (name, description).
    pub fn menu(self) -> &'static [(&'static str, &'static str)] {
        self.pick(
        &[
            ("help", "帮助与命令列表"),
            ("new", "开始新会话"),
            ("history", "历史会话列表；/history 关键词 搜索说过的话"),
            ("resume", "继续某个会话：/resume #n"),
            ("retitle", "重新生成标题"),
            ("del_history", "删除会话：/del_history #a/#b"),
            ("provider", "查看或切换提供方"),
            ("model", "查看或切换模型"),
            ("remember", "记住一条长期记忆"),
            ("memory", "长期记忆：/memory 2 翻页，/memory 关键词 搜索，/memory all 含已整理，/memory undo 撤销整理"),
            ("forget", "删除记忆：/forget #a/#b"),
            ("skills", "技能列表"),
            ("tasks", "提醒、定时任务与监视：/tasks del|pause|resume #n"),
            ("jobs", "后台任务：/jobs cancel #n 取消"),
            ("cancel", "取消正在进行的任务"),
            ("status", "运行状态"),
            ("notes", "某天的对话笔记"),
            ("steer", "补充给正在进行的任务：/steer 内容"),
            ("next", "排到当前任务之后：/next 内容"),
            ("compact", "压缩会话上下文"),
            ("retry", "重新回答上一条消息：/retry [模型]"),
            ("usage", "用量与费用"),
            ("doctor", "检查运行环境"),
            ("web", "网页控制台的一次性登录链接"),
        ],
        &[
            ("help", "Help and command list"),
            ("new", "Start a new session"),
            ("history", "List past sessions; /history words searches what was said"),
            ("resume", "Resume a session: /resume #n"),
            ("retitle", "Regenerate a session title"),
            ("del_history", "Delete sessions: /del_history #a/#b"),
            ("provider", "Show or switch provider"),
            ("model", "Show or switch model"),
            ("remember", "Add a long-term memory"),
            ("memory", "Memories: /memory 2 pages, /memory words searches, /memory all shows set-aside, /memory undo undoes tidying"),
            ("forget", "Delete memories: /forget #a/#b"),
            ("skills", "List skills"),
            ("tasks", "Reminders, tasks and watches: /tasks del|pause|resume #n"),
            ("jobs", "Background jobs: /jobs cancel #n"),
            ("cancel", "Cancel the running task"),
            ("status", "Show status"),
            ("notes", "A day's conversation notes"),
            ("steer", "Add to the running task: /steer text"),
            ("next", "Queue after the running task: /next text"),
            ("compact", "Compact the session context"),
            ("retry", "Answer the last message again: /retry [model]"),
            ("usage", "Token usage and cost"),
            ("doctor", "Check the setup"),
            ("web", "A one-time web console login link"),
        ],
        )
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
