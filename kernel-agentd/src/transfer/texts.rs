//! What `kernel-agentd export` and `import` print, and their errors, in the owner's locale
//! (Chinese by default, English with `general.locale = "en"`). The errors' `Display` stays
//! English (for English and for callers that log it); the operating system's and the JSON parser's messages are quoted.

use std::path::Path;

use kernel_common::config::Locale;

use super::{BadFile, Exported, Imported, MARKER, TransferError};

/// An export just written to `to`.
pub fn exported(locale: Locale, to: &Path, done: &Exported) -> String {
    let Exported {
        sessions,
        memories,
        set_aside,
        notes,
        schedules,
        usage,
    } = done;
    let to = to.display();
    locale.pick(
        format!(
            "已导出到 {to}：{sessions} 个会话、{memories} 条记忆（另有 {set_aside} 条已搁置）、\
             {notes} 篇每日笔记、{schedules} 个定时任务、{usage} 条用量记录"
        ),
        format!(
            "exported to {to}: {sessions} sessions, {memories} memories ({set_aside} more set \
             aside), {notes} notes, {schedules} schedules, {usage} usage rows"
        ),
    )
}

/// An import (or dry run) from `from`; a dry run lists the memories it would add.
pub fn imported(locale: Locale, from: &Path, done: &Imported) -> String {
    let added = &done.added;
    let (sessions, memories, notes, schedules) =
        (added.sessions, added.memories, added.notes, added.schedules);
    let (from, kind) = (from.display(), done.from);
    // Set-aside memories are named only when there are some.
    let (aside_zh, aside_en) = match added.set_aside {
        0 => (String::new(), String::new()),
        n => (
            format!("（另有 {n} 条已搁置）"),
            format!(" ({n} more set aside)"),
        ),
    };
    let mut text = if done.dry_run {
        locale.pick(
            format!(
                "{from}（{kind}）：将新增 {sessions} 个会话、{memories} 条记忆{aside_zh}、\
                 {notes} 篇每日笔记、{schedules} 个定时任务"
            ),
            format!(
                "{from} ({kind}): would add {sessions} sessions, {memories} memories{aside_en}, \
                 {notes} notes, {schedules} schedules"
            ),
        )
    } else {
        locale.pick(
            format!(
                "{from}（{kind}）：已新增 {sessions} 个会话、{memories} 条记忆{aside_zh}、\
                 {notes} 篇每日笔记、{schedules} 个定时任务"
            ),
            format!(
                "{from} ({kind}): added {sessions} sessions, {memories} memories{aside_en}, \
                 {notes} notes, {schedules} schedules"
            ),
        )
    };
    if done.dry_run {
        for memory in &done.memories {
            text.push_str(&format!("\n  + {memory}"));
        }
    }
    text
}

/// Why an export or import failed.
pub fn error(locale: Locale, error: &TransferError) -> String {
    match error {
        TransferError::BadFile { path, why } => locale.pick(
            format!("{}：{}", path.display(), bad_file(locale, why)),
            error.to_string(),
        ),
        TransferError::NotEmpty(dir) => locale.pick(
            format!("{} 不是空文件夹：请为导出选一个新文件夹", dir.display()),
            error.to_string(),
        ),
        TransferError::Unknown(dir) => locale.pick(
            format!(
                "{} 里既没有 Kernel 的导出（{MARKER}），也没有 OpenClaw、nanobot 或 \
                 Hermes 的记忆文件",
                dir.display()
            ),
            error.to_string(),
        ),
        TransferError::AgentdRunning(dir) => locale.pick(
            format!(
                "kernel-agentd 正在 {} 上运行：请先停止它（systemctl --user stop kernel-agentd）",
                dir.display()
            ),
            error.to_string(),
        ),
        TransferError::Store(e) => {
            locale.pick(format!("数据库出错：{}", e.detail()), error.to_string())
        }
    }
}

fn bad_file(locale: Locale, why: &BadFile) -> String {
    let zh = match why {
        BadFile::Io(e) => e.clone(),
        BadFile::OutsideFolder => "它指向文件夹之外（符号链接）；请把文件复制进来".into(),
        BadFile::TooLarge { mb, max_mb } => {
            format!("它有 {mb} MB，超过导入读取的上限 {max_mb} MB")
        }
        BadFile::NotUtf8 => "它不是 UTF-8 文本".into(),
        BadFile::NotExportJson(e) => format!("不是导出写出的 JSON：{e}"),
    };
    locale.pick(zh, why.to_string())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::store::transfer::Added;

    #[test]
    fn an_export_and_an_import_are_reported_in_the_owners_language() {
        let done = Exported {
            sessions: 1,
            memories: 2,
            set_aside: 6,
            notes: 3,
            schedules: 4,
            usage: 5,
        };
        let zh = super::exported(Locale::Zh, Path::new("/e"), &done);
        assert_eq!(
            zh,
            "已导出到 /e：1 个会话、2 条记忆（另有 6 条已搁置）、3 篇每日笔记、4 个定时任务、5 条用量记录"
        );
        let en = super::exported(Locale::En, Path::new("/e"), &done);
        assert!(en.ends_with("4 schedules, 5 usage rows"), "{en}");
        let dry = Imported {
            from: "nanobot",
            added: Added {
                sessions: 0,
                memories: 1,
                set_aside: 0,
                notes: 0,
                schedules: 0,
            },
            memories: vec!["likes tea".into()],
            dry_run: true,
        };
        let zh = super::imported(Locale::Zh, Path::new("/n"), &dry);
        assert!(
            zh.starts_with("/n（nanobot）：将新增 0 个会话、1 条记忆"),
            "{zh}"
        );
        assert!(zh.ends_with("\n  + likes tea"), "{zh}");
        let done = Imported {
            dry_run: false,
            ..dry
        };
        let en = super::imported(Locale::En, Path::new("/n"), &done);
        assert_eq!(
            en,
            "/n (nanobot): added 0 sessions, 1 memories, 0 notes, 0 schedules"
        );
        let aside = Imported {
            added: Added {
                set_aside: 2,
                ..done.added
            },
            ..done
        };
        assert_eq!(
            super::imported(Locale::Zh, Path::new("/k"), &aside),
            "/k（nanobot）：已新增 0 个会话、1 条记忆（另有 2 条已搁置）、0 篇每日笔记、0 个定时任务"
        );
        assert!(
            super::imported(Locale::En, Path::new("/k"), &aside)
                .contains("1 memories (2 more set aside), 0 notes"),
        );
    }

    #[test]
    fn every_error_reads_in_chinese_and_english_keeps_the_log_text() {
        let file = |why| TransferError::BadFile {
            path: PathBuf::from("/n/MEMORY.md"),
            why,
        };
        let errors = [
            file(BadFile::Io("permission denied".into())),
            file(BadFile::OutsideFolder),
            file(BadFile::TooLarge { mb: 70, max_mb: 64 }),
            file(BadFile::NotUtf8),
            file(BadFile::NotExportJson("expected value".into())),
            TransferError::NotEmpty(PathBuf::from("/e")),
            TransferError::Unknown(PathBuf::from("/e")),
            TransferError::AgentdRunning(PathBuf::from("/d")),
        ];
        for error in &errors[1..] {
            let zh = super::error(Locale::Zh, error);
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
        }
        for error in &errors {
            assert_eq!(super::error(Locale::En, error), error.to_string());
        }
        assert_eq!(
            super::error(Locale::Zh, &errors[2]),
            "/n/MEMORY.md：它有 70 MB，超过导入读取的上限 64 MB"
        );
    }
}
