//! The texts of the console's reading and tending pages (usage, session history and search,
//! notes, schedules and jobs, skills), Chinese by default, English with `general.locale = "en"`.

use kernel_proto::words::{BudgetPeriod, MemorySource};

use crate::texts::Texts;

macro_rules! page_texts {
    ($($name:ident => $zh:literal, $en:literal;)*) => {
        impl Texts {
            $(pub(crate) fn $name(self) -> &'static str {
                if self.lang() == "en" { $en } else { $zh }
            })*
        }
    };
}

page_texts! {
    nav_usage => "用量", "Usage";
    usage_cost_chart => "每日费用（美元）", "Cost per day (USD)";
    usage_tokens_chart => "每日 token 数", "Tokens per day";
    usage_by => "分组：", "Group by: ";
    usage_by_provider => "服务商", "provider";
    usage_by_model => "模型", "model";
    usage_by_purpose => "用途", "purpose";
    usage_unspecified => "未注明", "unspecified";
    usage_days => "最近 90 天", "Last 90 days";
    usage_none => "这段时间没有用量。", "No usage in this period.";
    usage_calls => "调用", "calls";
    usage_tokens => "token", "tokens";
    usage_cost => "费用", "cost";
    usage_cost_unknown => "未知（无价格）", "unknown (no price)";
    usage_no_budgets => "没有设置预算（[budget]）。", "No budgets configured ([budget]).";
    usage_period => "周期", "period";
    usage_scope => "范围", "scope";
    usage_all_providers => "全部服务商", "all providers";
    usage_spent => "已花费", "spent";
    usage_limit => "上限", "limit";
    usage_left => "剩余", "left";
    sessions_search => "搜索会话", "Search sessions";
    sessions_query => "标题或内容…", "Title or content…";
    sessions_rename => "重新命名", "Retitle";
    sessions_found => "个会话匹配", "sessions match";
    history_empty => "这个会话还没有消息。", "This session has no messages yet.";
    history_kernel => "Kernel", "Kernel";
    history_tools => "调用了工具：", "Called tools: ";
    history_feedback => "你的反馈：", "Your feedback: ";
    nav_notes => "笔记", "Notes";
    notes_none => "这一天没有笔记。", "No note for this day.";
    notes_show => "查看", "Show";
    nav_schedules => "计划", "Schedules";
    schedules_none => "没有提醒或计划任务。", "No reminders or scheduled tasks.";
    schedules_delete => "删除", "Delete";
    jobs_title => "后台任务", "Background jobs";
    jobs_none => "没有后台任务。", "No background jobs.";
    jobs_cancel => "取消", "Cancel";
    nav_skills => "技能", "Skills";
    skills_none => "没有技能。", "No skills.";
    memory_source => "来源", "Source";
    memory_source_all => "全部", "all";
    memory_source_owner => "我添加的", "added by me";
    memory_source_auto => "自动（我的话）", "auto (my words)";
    memory_source_outside => "自动（外部内容）", "auto (outside content)";
    memory_from => "从", "from";
    memory_to => "到", "to";
    memory_filter => "筛选", "Filter";
    memory_edit => "编辑", "Edit";
    memory_save => "保存", "Save";
    memory_page => "页", "page";
    memory_prev => "← 上一页", "← previous";
    memory_next => "下一页 →", "next →";
}

impl Texts {
    /// A background job's status (`ListJobs`' word) in the owner's language.
    pub(crate) fn job_status(self, status: &str) -> &'static str {
        self.said()
            .job_status(kernel_proto::words::JobStatus::parse(status))
    }

    /// Words shared with kernel-tg.
    pub(crate) fn sessions_untitled(self) -> &'static str {
        self.said().untitled()
    }

    pub(crate) fn schedules_next(self) -> &'static str {
        self.said().next_time()
    }

    pub(crate) fn history_you(self) -> &'static str {
        self.said().you()
    }

    pub(crate) fn usage_budgets(self) -> &'static str {
        self.said().budgets()
    }

    /// A budget line's period (`BudgetLine.period`) in the owner's language; a period this
    /// build does not know as agentd sent it.
    pub(crate) fn usage_period_of(self, period: &str) -> String {
        BudgetPeriod::parse(period).map_or_else(
            || period.to_owned(),
            |p| self.said().budget_period(p).to_owned(),
        )
    }

    /// A memory source filter's label (`None`: every source).
    pub(crate) fn memory_source_label(self, source: Option<MemorySource>) -> &'static str {
        match source {
            None => self.memory_source_all(),
            Some(MemorySource::Owner) => self.memory_source_owner(),
            Some(MemorySource::Auto) => self.memory_source_auto(),
            Some(MemorySource::Outside) => self.memory_source_outside(),
        }
    }
}

#[cfg(test)]
mod tests {
    use kernel_common::config::Locale;

    use super::Texts;

    #[test]
    fn job_statuses_are_in_the_owners_language_and_an_unknown_one_is_unknown() {
        let (zh, en) = (Texts::new(Locale::Zh), Texts::new(Locale::En));
        assert_eq!(zh.job_status("running"), "运行中");
        assert_eq!(zh.job_status("cancelled"), "已取消");
        assert_eq!(en.job_status("interrupted"), "interrupted");
        assert_eq!(en.job_status("<b>"), "unknown");
    }

    #[test]
    fn budget_periods_and_memory_sources_are_in_the_owners_language() {
        let (zh, en) = (Texts::new(Locale::Zh), Texts::new(Locale::En));
        assert_eq!(zh.usage_period_of("daily"), "每日");
        assert_eq!(en.usage_period_of("monthly"), "monthly");
        assert_eq!(zh.usage_period_of("weekly"), "weekly");
        assert_eq!(zh.memory_source_label(None), "全部");
        let outside = Some(kernel_proto::words::MemorySource::Outside);
        assert_eq!(en.memory_source_label(outside), "auto (outside content)");
    }
}
