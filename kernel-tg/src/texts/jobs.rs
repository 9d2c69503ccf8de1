//! The /jobs replies: background jobs (`#n <status> <started> <cli> <task>`), running first,
//! and what `/jobs cancel #n` did.

use std::fmt::Write as _;

use kernel_common::config::Locale;
use kernel_proto::words::JobStatus;

use super::{MAX_MEMORY_CHARS, Texts, escape_html, escape_truncated};

/// A background job as listed by agentd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobEntry<'a> {
    pub number: u32,
    /// `running`, `done`, `failed`, `cancelled` or `interrupted`.
    pub status: &'a str,
    /// When it started, `YYYY-MM-DD HH:MM` local.
    pub started: &'a str,
    pub cli: &'a str,
    pub task: &'a str,
    pub exit_code: Option<i32>,
}

impl Texts {
    /// A job status in words.
    pub fn job_status(self, status: &str) -> &'static str {
        self.said().job_status(JobStatus::parse(status))
    }

    /// The /jobs reply.
    pub fn jobs(self, jobs: &[JobEntry<'_>]) -> String {
        if jobs.is_empty() {
            return self.pick("还没有后台任务", "No background jobs").to_owned();
        }
        let mut out = self
            .pick("<b>后台任务</b>\n", "<b>Background jobs</b>\n")
            .to_owned();
        for job in jobs {
            let code = match job.exit_code {
                Some(code) if JobStatus::parse(job.status) != Some(JobStatus::Running) => {
                    match self.locale() {
                        Locale::Zh => format!("（退出码 {code}）"),
                        Locale::En => format!(" (exit code {code})"),
                    }
                }
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "#{} {}{code} {} <code>{}</code> {}",
                job.number,
                self.job_status(job.status),
                escape_html(job.started),
                escape_html(job.cli),
                escape_truncated(job.task, MAX_MEMORY_CHARS)
            );
        }
        let running = |status: &str| match JobStatus::parse(status) {
            Some(JobStatus::Running) => true,
            Some(
                JobStatus::Done | JobStatus::Failed | JobStatus::Cancelled | JobStatus::Interrupted,
            )
            | None => false,
        };
        if jobs.iter().any(|j| running(j.status)) {
            out.push_str(self.pick(
                "\n/jobs cancel #n 取消运行中的任务",
                "\n/jobs cancel #n to cancel a running job",
            ));
        }
        out
    }

    /// `/jobs cancel #n`: whether the job was running (and is now being stopped).
    pub fn job_cancelled(self, cancelled: bool) -> String {
        if cancelled {
            self.pick(
                "已取消该后台任务，它的进程正在结束",
                "Cancelled the job; its processes are being ended",
            )
        } else {
            self.pick(
                "该后台任务已经结束，无需取消",
                "That job has already ended; nothing to cancel",
            )
        }
        .to_owned()
    }
}
