//! `[backup] daily`: while agentd runs, a backup when the newest one is a day old (checked 10
//! minutes after start, then hourly), verified, then the oldest beyond `keep` deleted.

use std::time::{Duration, SystemTime};

use kernel_common::Config;
use tokio_util::sync::CancellationToken;

/// The first check after start (a restart loop makes no backups).
const FIRST_CHECK: Duration = Duration::from_secs(10 * 60);
/// Between checks.
const EVERY: Duration = Duration::from_secs(60 * 60);
/// A backup younger than this is recent enough.
const MAX_AGE: Duration = Duration::from_secs(23 * 60 * 60);

/// Runs the daily backups until `cancel` (nothing when `backup.daily` is off).
pub fn spawn(config: Config, cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if !config.backup.daily {
            return;
        }
        let mut wait = FIRST_CHECK;
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            wait = EVERY;
            if !due(&config) {
                continue;
            }
            match super::create(&config, None).await {
                Ok(made) => {
                    let deleted = super::prune(&config.backup.dir, config.backup.keep);
                    tracing::info!(dir = %made.dir.display(), deleted = deleted.len(), "daily backup made");
                }
                Err(e) => tracing::error!(error = %e, "daily backup failed"),
            }
        }
    })
}

/// Whether the newest backup is older than a day (or there is none).
fn due(config: &Config) -> bool {
    let Some((dir, _)) = super::last(&config.backup.dir) else {
        return true;
    };
    let made = std::fs::metadata(dir.join(super::manifest::FILE)).and_then(|m| m.modified());
    made.ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_none_or(|age| age >= MAX_AGE)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn fake_backup(dir: &Path, name: &str, manifest: bool) {
        let path = dir.join(name);
        std::fs::create_dir_all(&path).unwrap();
        if manifest {
            std::fs::write(path.join(crate::backup::manifest::FILE), "{}").unwrap();
        }
    }

    #[test]
    fn prune_keeps_the_newest_and_leaves_other_folders_alone() {
        let dir = tempfile::tempdir().unwrap();
        for day in 1..=9 {
            fake_backup(dir.path(), &format!("kernel-2026010{day}-000000"), true);
        }
        fake_backup(dir.path(), "kernel-20250101-000000", false);
        fake_backup(dir.path(), "pre-migration-v13-20250101-000000", true);
        let deleted = crate::backup::prune(dir.path(), 7);
        let names: Vec<String> = deleted
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["kernel-20260101-000000", "kernel-20260102-000000"]);
        assert_eq!(crate::backup::list(dir.path()).len(), 7);
        assert!(dir.path().join("kernel-20250101-000000").exists());
        assert!(
            dir.path()
                .join("pre-migration-v13-20250101-000000")
                .exists()
        );
    }
}
