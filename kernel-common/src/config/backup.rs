//! `[backup]`: kernel-agentd's automatic daily backups (on by default), where they go and how
//! many are kept.

use std::path::PathBuf;

/// Backups kept when `backup.keep` is not set.
pub const DEFAULT_BACKUP_KEEP: u32 = 7;
/// The largest `backup.keep`.
pub const MAX_BACKUP_KEEP: u32 = 365;

/// `[backup]`.
#[derive(Debug, Clone)]
pub struct BackupConfig {
    /// Take a verified backup once a day while agentd runs (`daily`, default true).
    pub daily: bool,
    /// Daily backups kept; older ones are deleted after a new one verifies (`keep`, default 7).
    pub keep: u32,
    /// Where backups go (`dir`, default `<data_dir>/backups`).
    pub dir: PathBuf,
}
