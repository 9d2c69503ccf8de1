//! `[backup]` (daily, keep, dir).

use std::path::Path;

use super::Ctx;
use crate::config::backup::{BackupConfig, DEFAULT_BACKUP_KEEP, MAX_BACKUP_KEEP};
use crate::config::raw::RawBackup;

/// The validated `[backup]` (daily, 7 kept, under `data_dir` when the section is absent).
pub(super) fn backup(ctx: &mut Ctx<'_>, raw: Option<&RawBackup>, data_dir: &Path) -> BackupConfig {
    let default = RawBackup::default();
    let raw = raw.unwrap_or(&default);
    let keep = match raw.keep {
        None => DEFAULT_BACKUP_KEEP,
        Some(n) if (1..=MAX_BACKUP_KEEP).contains(&n) => n,
        Some(n) => {
            ctx.refuse(format!(
                "backup.keep = {n} is out of range: keep 1 to {MAX_BACKUP_KEEP} backups \
                 (default {DEFAULT_BACKUP_KEEP})"
            ));
            DEFAULT_BACKUP_KEEP
        }
    };
    let dir = match raw.dir.as_deref() {
        Some(dir) => ctx.path(Some(dir), "backups"),
        None => data_dir.join("backups"),
    };
    BackupConfig {
        daily: raw.daily.unwrap_or(true),
        keep,
        dir,
    }
}
