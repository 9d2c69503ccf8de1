//! The status page's texts (Chinese by default, English with `general.locale = "en"`).

use super::Texts;

texts! {
    status_agentd => "kernel-agentd", "kernel-agentd";
    status_version => "版本", "Version";
    status_uptime => "已运行", "Up for";
    status_provider => "提供方 / 模型", "Provider / model";
    status_running => "正在进行", "Running";
    status_last_error => "最近的错误", "Last error";
    status_context => "上下文（token）", "Context (tokens)";
    status_spent => "今日 / 本月花费", "Spent today / this month";
    status_outbox => "待发送消息", "Outbox";
    status_backlog => "未送达", "Undelivered";
    status_oldest => "最早一条已等待", "Oldest waiting for";
    status_cooldowns => "冷却中的提供方", "Providers cooling down";
    status_until => "直到", "Until";
    status_failures => "连续失败", "Failures";
    status_none => "无", "None";
    status_mcp => "MCP 服务器", "MCP servers";
    status_state => "状态", "State";
    status_tools => "工具数", "Tools";
    status_detail => "说明", "Detail";
    status_clis => "CLI", "CLIs";
    status_sandbox => "沙箱", "Sandbox";
    status_doctor => "运行环境检查", "Doctor";
    status_doctor_ok => "检查全部通过", "All checks passed";
    status_doctor_failed => "检查发现问题（修复方法见各项）", "Some checks failed (each with its fix)";
    status_check => "检查", "Check";
    status_verdict => "结果", "Verdict";
    status_fix => "修复", "Fix";
    sandbox_on => "已隔离", "sandboxed";
    sandbox_off => "未隔离", "off";
    sandbox_unavailable => "本机无法运行沙箱", "unavailable here";
    sandbox_unknown => "未知", "unknown";
}

impl Texts {
    /// No turn running (shared with kernel-tg).
    pub(crate) fn status_idle(self) -> &'static str {
        self.said().idle()
    }
}
