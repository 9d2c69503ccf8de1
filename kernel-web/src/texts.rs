//! Every owner-visible text of the console, Chinese by default, English with
//! `general.locale = "en"`.

use kernel_common::config::Locale;
use kernel_common::said::Said;

/// The console's texts in the owner's language.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Texts {
    en: bool,
}

macro_rules! texts {
    ($($name:ident => $zh:literal, $en:literal;)*) => {
        impl Texts {
            $(pub(crate) fn $name(self) -> &'static str {
                if self.en { $en } else { $zh }
            })*
        }
    };
}

impl Texts {
    pub(crate) fn new(locale: Locale) -> Self {
        Self {
            en: locale == Locale::En,
        }
    }

    /// The words both adapters say (failures, refusals), in the same locale.
    pub(crate) fn said(self) -> Said {
        Said::new(if self.en { Locale::En } else { Locale::Zh })
    }

    /// The Stop button (shared with kernel-tg).
    pub(crate) fn chat_stop(self) -> &'static str {
        self.said().stop()
    }

    /// The page's `lang`.
    pub(crate) fn lang(self) -> &'static str {
        if self.en { "en" } else { "zh" }
    }
}

texts! {
    login_title => "登录 Kernel", "Log in to Kernel";
    login_needed => "请先登录：在 Telegram 发送 /web，或在本机运行 kernel-web --login-url，然后打开得到的一次性链接（10 分钟内有效，只能用一次）。",
        "Please log in: send /web in Telegram, or run kernel-web --login-url on this machine, then open the one-time link (valid 10 minutes, works once).";
    login_invalid => "这个登录链接无效、已过期或已经用过。请重新获取一个。",
        "This login link is unknown, expired or already used. Please get a new one.";
    agentd_unreachable => "暂时连不上 kernel-agentd，稍后刷新重试。", "kernel-agentd cannot be reached right now; reload in a moment.";
    csrf_refused => "请求被拒绝：缺少或不匹配的 CSRF 令牌。请刷新页面后重试。", "Refused: the CSRF token is missing or wrong. Reload the page and try again.";
    nav_chat => "对话", "Chat";
    nav_memory => "记忆", "Memory";
    nav_sessions => "会话", "Sessions";
    nav_status => "状态", "Status";
    chat_placeholder => "输入消息…", "Type a message…";
    chat_send => "发送", "Send";
    chat_busy => "上一轮还在进行中。", "A turn is still running.";
    chat_failed => "这一轮失败了：", "The turn failed: ";
    chat_cancelled => "已停止。", "Stopped.";
    memory_search => "搜索", "Search";
    memory_query => "搜索记忆…", "Search memories…";
    memory_forget => "忘记", "Forget";
    memory_none => "没有记忆。", "No memories.";
    memory_total => "条记忆", "memories";
    sessions_resume => "继续", "Resume";
    sessions_delete => "删除", "Delete";
    sessions_current => "当前", "current";
    sessions_none => "还没有会话。", "No sessions yet.";
    status_title => "状态", "Status";
    refused => "请求被拒绝：", "Refused: ";
}

mod chat;
mod memory_aside;
mod status;
