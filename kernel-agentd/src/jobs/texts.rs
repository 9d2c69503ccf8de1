//! What the owner and the model are told about background jobs, in `general.locale`: the
//! follow-up turn's prompt, the raw status notice (when a turn was running), and the notice
//! for a job an agentd stop interrupted.

use kernel_common::config::Locale;

use crate::delegate::cut_middle;
use crate::store::jobs::JobRow;

/// The most characters of a job's output in a follow-up prompt (the file has it all).
const PROMPT_OUTPUT_CHARS: usize = 8_000;
/// The most characters of a job's output in a raw status notice.
const NOTICE_OUTPUT_CHARS: usize = 1_500;
/// The most characters of a job's task in a notice.
const TASK_CHARS: usize = 200;

/// A status word for the owner.
pub(super) fn status_word(locale: Locale, status: &str) -> &'static str {
    use kernel_proto::words::JobStatus;
    let Some(status) = JobStatus::parse(status) else {
        return locale.pick("未知", "unknown");
    };
    match status {
        JobStatus::Running => locale.pick("运行中", "running"),
        JobStatus::Done => locale.pick("已完成", "done"),
        JobStatus::Failed => locale.pick("失败", "failed"),
        JobStatus::Cancelled => locale.pick("已取消", "cancelled"),
        JobStatus::Interrupted => locale.pick("已中断", "interrupted"),
    }
}

fn code(job: &JobRow) -> String {
    job.exit_code
        .map_or_else(|| "-".to_owned(), |c| c.to_string())
}

fn short_task(job: &JobRow) -> String {
    kernel_common::text::fit(job.task.trim(), TASK_CHARS).into_owned()
}

/// The prompt of the follow-up turn that summarises an ended job for the owner.
pub(super) fn follow_up_prompt(locale: Locale, job: &JobRow) -> String {
    let output = cut_middle(job.output.trim(), PROMPT_OUTPUT_CHARS);
    match locale {
        Locale::Zh => format!(
            "[后台任务 #{id} 已结束：{status}，退出码 {code}] 任务：{task}\n输出文件：{path}\n\
             输出：\n{output}\n\n请向主人简短总结这个后台任务的结果。",
            id = job.id,
            status = status_word(locale, &job.status),
            code = code(job),
            task = job.task.trim(),
            path = job.output_path,
        ),
        Locale::En => format!(
            "[background job #{id} ended: {status}, exit code {code}] Task: {task}\nOutput file: \
             {path}\nOutput:\n{output}\n\nSummarise this background job's result for the owner \
             briefly.",
            id = job.id,
            status = status_word(locale, &job.status),
            code = code(job),
            task = job.task.trim(),
            path = job.output_path,
        ),
    }
}

/// The raw status sent instead of a summary when a turn was running as the job ended.
pub(super) fn raw_status(locale: Locale, job: &JobRow) -> String {
    let output = cut_middle(job.output.trim(), NOTICE_OUTPUT_CHARS);
    let fence = if output.is_empty() {
        String::new()
    } else {
        format!("\n\n```\n{}\n```", output.replace("```", "'''"))
    };
    match locale {
        Locale::Zh => format!(
            "后台任务 #{} （{}）{}，退出码 {}：{}\n输出文件：`{}`{fence}",
            job.id,
            job.cli,
            status_word(locale, &job.status),
            code(job),
            short_task(job),
            job.output_path,
        ),
        Locale::En => format!(
            "Background job #{} ({}) {}, exit code {}: {}\nOutput file: `{}`{fence}",
            job.id,
            job.cli,
            status_word(locale, &job.status),
            code(job),
            short_task(job),
            job.output_path,
        ),
    }
}

/// Told when agentd stopped (or crashed) while `job` ran.
pub(super) fn interrupted(locale: Locale, job: &JobRow) -> String {
    match locale {
        Locale::Zh => format!(
            "后台任务 #{} （{}）因 Kernel 停止而中断，它的进程已结束：{}",
            job.id,
            job.cli,
            short_task(job)
        ),
        Locale::En => format!(
            "Background job #{} ({}) was interrupted because Kernel stopped; its processes were \
             ended: {}",
            job.id,
            job.cli,
            short_task(job)
        ),
    }
}
