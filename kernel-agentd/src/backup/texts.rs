//! What `kernel-agentd backup` and `restore` print, and their errors, in the owner's locale
//! (Chinese by default, English with `general.locale = "en"`). The errors' `Display` stays
//! English (for English and for callers that log it); the operating system's and SQLite's own messages are quoted as they are.

use std::path::Path;

use kernel_common::config::Locale;

use super::restore::Restored;
use super::{BackupError, Made, Manifest, Step};

/// A backup just made and verified.
pub fn made(locale: Locale, made: &Made) -> String {
    let verified = locale.pick(
        "备份已校验（integrity_check 通过，行数一致）",
        "backup verified (integrity_check ok, counts match)",
    );
    format!(
        "{}\n{verified}",
        describe(locale, &made.dir, &made.manifest)
    )
}

/// A restore that happened from the backup in `from`.
pub fn restored(locale: Locale, from: &Path, restored: &Restored) -> String {
    let mut lines = vec![describe(locale, from, &restored.manifest)];
    if let Some(kept) = &restored.kept {
        lines.push(locale.pick(
            format!("被替换的数据库保留在 {}", kept.display()),
            format!("the database it replaced is kept at {}", kept.display()),
        ));
    }
    let restored = locale.pick(
        "已恢复；备份里的 SOUL.md、技能和脱敏的配置不会被复制回去",
        "restored; SOUL.md, skills and the masked config in the backup are not copied back",
    );
    lines.push(restored.to_owned());
    lines.join("\n")
}

/// A backup in `dir`: when and by what it was made, and its rows.
fn describe(locale: Locale, dir: &Path, manifest: &Manifest) -> String {
    let counts: Vec<String> = manifest
        .counts
        .iter()
        .map(|(table, n)| format!("{table} {n}"))
        .collect();
    let (dir, at, version) = (
        dir.display(),
        &manifest.created_at,
        &manifest.kernel_version,
    );
    let (schema, counts) = (manifest.schema_version, counts.join(", "));
    locale.pick(
        format!(
            "备份 {dir}\n  由 kernel-agentd {version} 于 {at} 创建，数据库结构版本 {schema}\n  \
             行数：{counts}"
        ),
        format!(
            "backup {dir}\n  made {at} by kernel-agentd {version}, schema version {schema}\n  \
             rows: {counts}"
        ),
    )
}

/// Why a backup, its verification or a restore failed.
pub fn error(locale: Locale, error: &BackupError) -> String {
    match error {
        BackupError::Io { step, path, source } => locale.pick(
            format!(
                "{}：{}（{source}）",
                step_text(locale, *step),
                path.display()
            ),
            error.to_string(),
        ),
        BackupError::Store(e) => {
            locale.pick(format!("数据库出错：{}", e.detail()), error.to_string())
        }
        BackupError::NoDatabase(db) => locale.pick(
            format!("{} 还没有数据库：先启动一次 kernel-agentd", db.display()),
            error.to_string(),
        ),
        BackupError::NotEmpty(dir) => locale.pick(
            format!("{} 不是空文件夹：请为备份选一个新文件夹", dir.display()),
            error.to_string(),
        ),
        BackupError::NotABackup(dir) => locale.pick(
            format!(
                "{} 不是 Kernel 的备份（没有可读的 manifest.json）",
                dir.display()
            ),
            error.to_string(),
        ),
        BackupError::Verify { path, why } => locale.pick(
            format!("{} 的备份未通过校验：{why}", path.display()),
            error.to_string(),
        ),
        BackupError::AgentdRunning(dir) => locale.pick(
            format!(
                "kernel-agentd 正在 {} 上运行：请先停止它（systemctl --user stop kernel-agentd）",
                dir.display()
            ),
            error.to_string(),
        ),
        BackupError::NewerSchema { found, known } => locale.pick(
            format!(
                "这个备份的数据库结构版本是 {found}，比这个 kernel-agentd 认识的（{known}）\
                 新：请用更新的 kernel-agentd 恢复"
            ),
            error.to_string(),
        ),
    }
}

fn step_text(locale: Locale, step: Step) -> String {
    let zh = match step {
        Step::Lock => "无法锁定",
        Step::Read => "无法读取",
        Step::Create => "无法创建",
        Step::Write => "无法写入",
        Step::Copy => "无法复制",
        Step::Restrict => "无法收紧权限",
        Step::MoveAside => "无法移到一旁",
        Step::PutInPlace => "无法替换当前数据库",
    };
    locale.pick(zh.to_owned(), step.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn sample() -> Made {
        Made {
            dir: PathBuf::from("/b/kernel-1"),
            manifest: Manifest {
                format: "kernel-backup".into(),
                kernel_version: "0.3.0".into(),
                created_at: "2026-11-28T01:00:00Z".into(),
                schema_version: 18,
                counts: BTreeMap::from([("memories".into(), 2), ("messages".into(), 5)]),
            },
        }
    }

    #[test]
    fn a_made_backup_is_described_in_the_owners_language() {
        let zh = super::made(Locale::Zh, &sample());
        assert!(zh.starts_with("备份 /b/kernel-1\n"), "{zh}");
        assert!(zh.contains("数据库结构版本 18"), "{zh}");
        assert!(zh.contains("行数：memories 2, messages 5"), "{zh}");
        assert!(
            zh.ends_with("备份已校验（integrity_check 通过，行数一致）"),
            "{zh}"
        );
        let en = super::made(Locale::En, &sample());
        assert!(en.contains("schema version 18"), "{en}");
        assert!(en.ends_with("backup verified (integrity_check ok, counts match)"));
    }

    #[test]
    fn a_restore_names_where_the_replaced_database_is_kept() {
        let made = sample();
        let restored = Restored {
            manifest: made.manifest,
            kept: Some(PathBuf::from("/d/kernel.db.before-restore-1")),
        };
        let zh = super::restored(Locale::Zh, &made.dir, &restored);
        assert!(zh.contains("被替换的数据库保留在 /d/kernel.db.before-restore-1"));
        assert!(zh.ends_with("不会被复制回去"), "{zh}");
        let en = super::restored(Locale::En, &made.dir, &restored);
        assert!(
            en.contains("the database it replaced is kept at /d/"),
            "{en}"
        );
    }

    #[test]
    fn every_error_reads_in_chinese_and_english_keeps_the_log_text() {
        let errors = [
            BackupError::Io {
                step: Step::MoveAside,
                path: PathBuf::from("/d/kernel.db"),
                source: std::io::Error::other("disk full"),
            },
            BackupError::NoDatabase(PathBuf::from("/d/kernel.db")),
            BackupError::NotEmpty(PathBuf::from("/b")),
            BackupError::NotABackup(PathBuf::from("/b")),
            BackupError::Verify {
                path: PathBuf::from("/b"),
                why: "integrity_check: page 3".into(),
            },
            BackupError::AgentdRunning(PathBuf::from("/d")),
            BackupError::NewerSchema {
                found: 30,
                known: 18,
            },
        ];
        for error in &errors {
            let zh = super::error(Locale::Zh, error);
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{zh}"
            );
            assert_eq!(super::error(Locale::En, error), error.to_string());
        }
        let zh = super::error(Locale::Zh, &errors[0]);
        assert_eq!(zh, "无法移到一旁：/d/kernel.db（disk full）");
    }
}
