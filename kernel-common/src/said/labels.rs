//! Short labels both adapters show, said once: the approval buttons and outcomes, job
//! statuses, skill side effects, budget periods, and the words for "untitled", "stop", "next",
//! "you", "idle" and "budgets".

use kernel_proto::words::{BudgetPeriod, JobStatus, SkillSideEffects};

use super::Said;

impl Said {
    /// The "Allow once" approval button.
    pub fn approve_once(self) -> &'static str {
        self.pick("允许一次", "Allow once")
    }

    /// The "Allow for this session" approval button.
    pub fn approve_for_session(self) -> &'static str {
        self.pick("本会话内允许", "Allow for this session")
    }

    /// The "Deny" approval button.
    pub fn deny(self) -> &'static str {
        self.pick("拒绝", "Deny")
    }

    /// An approval nobody answered in time (it counts as denied).
    pub fn approval_expired(self) -> &'static str {
        self.pick("⌛ 未回应，已视为拒绝", "⌛ Not answered: denied")
    }

    /// A job's status; `None` for a status this build does not know.
    pub fn job_status(self, status: Option<JobStatus>) -> &'static str {
        match status {
            Some(JobStatus::Running) => self.pick("运行中", "running"),
            Some(JobStatus::Done) => self.pick("已完成", "done"),
            Some(JobStatus::Failed) => self.pick("失败", "failed"),
            Some(JobStatus::Cancelled) => self.pick("已取消", "cancelled"),
            Some(JobStatus::Interrupted) => self.pick("已中断", "interrupted"),
            None => self.pick("未知", "unknown"),
        }
    }

    /// A skill's side-effect level in words.
    pub fn side_effects(self, level: SkillSideEffects) -> &'static str {
        match level {
            SkillSideEffects::ReadOnly => self.pick("只读", "read-only"),
            SkillSideEffects::LocalWrite => self.pick("写本地文件", "writes local files"),
            SkillSideEffects::MessageSend => self.pick("发送消息", "sends messages"),
            SkillSideEffects::ProcessControl => self.pick("控制进程", "controls processes"),
        }
    }

    /// A session without a title.
    pub fn untitled(self) -> &'static str {
        self.pick("（无标题）", "(untitled)")
    }

    /// The button that stops the running turn.
    pub fn stop(self) -> &'static str {
        self.pick("停止", "Stop")
    }

    /// "next", before a schedule's next time.
    pub fn next_time(self) -> &'static str {
        self.pick("下次", "next")
    }

    /// The owner as the speaker of a message (next to "Kernel").
    pub fn you(self) -> &'static str {
        self.pick("你", "You")
    }

    /// No turn running.
    pub fn idle(self) -> &'static str {
        self.pick("空闲", "idle")
    }

    /// A `[budget]` limit's period in words.
    pub fn budget_period(self, period: BudgetPeriod) -> &'static str {
        match period {
            BudgetPeriod::Daily => self.pick("每日", "daily"),
            BudgetPeriod::Monthly => self.pick("每月", "monthly"),
        }
    }

    /// The heading of the budgets.
    pub fn budgets(self) -> &'static str {
        self.pick("预算", "Budgets")
    }
}
