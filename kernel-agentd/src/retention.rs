//! Data retention: CLI outputs (`data_dir/cli_outputs/`) and downloads (`data_dir/downloads/`)
//! are deleted once older than [`MAX_AGE`] (by modification time), by a task that sweeps at
//! start and then every [`INTERVAL`] until shutdown; the same sweep forgets the idempotency keys
//! of owner messages older than [`MAX_AGE`] (`store::intake_keys`), the cut-off turns reported
//! before then (`store::running_turns`: a week-old "run again" button, like a week-old
//! download, is gone) the messages a budget limit refused before then (`store::budget`) and the edits offered
//! for an answer before then (`store::edit_offers`). Sessions and memories are kept forever. History may still name an output file that is gone; that is accepted.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::store::Store;

/// Files older than this are deleted.
pub const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Time between sweeps.
pub const INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// The folders under `data_dir` that are swept.
pub const SWEPT_DIRS: [&str; 2] = ["cli_outputs", "downloads"];

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Files deleted.
    pub deleted: usize,
    /// Files that were due but could not be deleted (logged).
    pub failed: usize,
}

/// Spawns the retention task on `tasks`: a sweep of `data_dir` and of `store`'s old idempotency
/// keys (when given) now, then every [`INTERVAL`], until `cancel` fires.
pub fn spawn(
    tasks: &TaskTracker,
    data_dir: PathBuf,
    store: Option<Store>,
    cancel: CancellationToken,
) {
    tasks.spawn(async move {
        let mut ticks = tokio::time::interval(INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let dir = data_dir.clone();
            let swept =
                tokio::task::spawn_blocking(move || sweep(&dir, MAX_AGE, SystemTime::now())).await;
            match swept {
                Ok(s) if s.deleted > 0 || s.failed > 0 => {
                    tracing::info!(deleted = s.deleted, failed = s.failed, "retention sweep");
                }
                Ok(_) => tracing::debug!("retention sweep: nothing to delete"),
                Err(e) => tracing::warn!(error = %e, "retention sweep failed"),
            }
            let Some(store) = &store else { continue };
            tokio::select! {
                biased;
                () = cancel.cancelled() => return,
                () = forget_old(store) => {}
            }
        }
    });
}

/// Forgets what the store keeps for [`MAX_AGE`] only: owner messages' idempotency keys, cut-off
/// turns (with a message kept whole) and messages a budget limit refused.
async fn forget_old(store: &Store) {
    let forgotten = [
        (
            "idempotency keys",
            store.forget_intake_keys_older_than(MAX_AGE).await,
        ),
        (
            "cut-off turns",
            store.forget_cut_off_turns_older_than(MAX_AGE).await,
        ),
        (
            "refused messages",
            store.forget_budget_refusals_older_than(MAX_AGE).await,
        ),
        (
            "edit offers",
            store.forget_edit_offers_older_than(MAX_AGE).await,
        ),
    ];
    for (what, result) in forgotten {
        match result {
            Ok(0) => {}
            Ok(n) => tracing::info!(forgotten = n, what, "old rows forgotten"),
            Err(e) => tracing::warn!(error = %e, what, "cannot forget old rows"),
        }
    }
}

/// Deletes the files under `data_dir`'s swept folders last modified more than `max_age` before
/// `now` (sub-folders included; folders emptied this way go too, the swept folders stay).
/// Symbolic links are deleted themselves, never followed.
pub fn sweep(data_dir: &Path, max_age: Duration, now: SystemTime) -> Swept {
    let cutoff = now.checked_sub(max_age).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut swept = Swept::default();
    for name in SWEPT_DIRS {
        sweep_dir(&data_dir.join(name), cutoff, &mut swept);
    }
    swept
}

/// Sweeps `dir`; whether it is empty afterwards.
fn sweep_dir(dir: &Path, cutoff: SystemTime, swept: &mut Swept) -> bool {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot list a folder to clean");
            return false;
        }
    };
    let mut left = 0usize;
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            left += 1;
            continue;
        };
        if meta.is_dir() {
            if sweep_dir(&path, cutoff, swept) && std::fs::remove_dir(&path).is_ok() {
                continue;
            }
            left += 1;
            continue;
        }
        let due = meta.modified().map(|m| m < cutoff).unwrap_or(false);
        if !due {
            left += 1;
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => swept.deleted += 1,
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "cannot delete an old file");
                swept.failed += 1;
                left += 1;
            }
        }
    }
    left == 0
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 3600);

    fn file_aged(path: &Path, age: Duration) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = File::create(path).unwrap();
        f.set_modified(SystemTime::now() - age).unwrap();
    }

    #[test]
    fn old_files_go_new_ones_stay() {
        let data = tempfile::tempdir().unwrap();
        let d = data.path();
        file_aged(&d.join("cli_outputs/old.txt"), 8 * DAY);
        file_aged(&d.join("cli_outputs/new.txt"), 6 * DAY);
        file_aged(&d.join("downloads/old.jpg"), 30 * DAY);
        file_aged(&d.join("downloads/nested/old.pdf"), 9 * DAY);
        file_aged(&d.join("downloads/keep/new.pdf"), DAY);
        file_aged(&d.join("kernel.db"), 100 * DAY);
        file_aged(&d.join("logs/old.log"), 100 * DAY);

        let swept = sweep(d, MAX_AGE, SystemTime::now());

        assert_eq!(
            swept,
            Swept {
                deleted: 3,
                failed: 0
            }
        );
        assert!(!d.join("cli_outputs/old.txt").exists());
        assert!(d.join("cli_outputs/new.txt").exists());
        assert!(!d.join("downloads/old.jpg").exists());
        assert!(
            !d.join("downloads/nested").exists(),
            "an emptied folder goes"
        );
        assert!(d.join("downloads/keep/new.pdf").exists());
        assert!(d.join("downloads").is_dir() && d.join("cli_outputs").is_dir());
        assert!(d.join("kernel.db").exists() && d.join("logs/old.log").exists());
    }

    #[test]
    fn missing_folders_are_fine() {
        let data = tempfile::tempdir().unwrap();
        assert_eq!(
            sweep(data.path(), MAX_AGE, SystemTime::now()),
            Swept::default()
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_removed_not_followed() {
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious.txt");
        file_aged(&target, 30 * DAY);
        std::fs::create_dir_all(data.path().join("downloads")).unwrap();
        let link = data.path().join("downloads/link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // The link itself is new: kept. Sweeping far in the future: removed, target untouched.
        assert_eq!(sweep(data.path(), MAX_AGE, SystemTime::now()).deleted, 0);
        let later = SystemTime::now() + 30 * DAY;
        assert_eq!(sweep(data.path(), MAX_AGE, later).deleted, 1);
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert!(target.exists());
    }

    /// Files only: SQLite's worker thread and paused time do not mix (the store has its own test
    /// below, in real time).
    #[tokio::test(start_paused = true)]
    async fn the_task_sweeps_at_start_and_daily_until_cancelled() {
        let data = tempfile::tempdir().unwrap();
        let tasks = TaskTracker::new();
        let cancel = CancellationToken::new();
        let first = data.path().join("cli_outputs/first.txt");
        file_aged(&first, 8 * DAY);
        spawn(&tasks, data.path().to_path_buf(), None, cancel.clone());
        wait_until(|| !first.exists()).await;

        let second = data.path().join("downloads/second.txt");
        file_aged(&second, 8 * DAY);
        tokio::time::sleep(INTERVAL / 2).await;
        assert!(second.exists(), "no sweep before a day has passed");
        tokio::time::sleep(INTERVAL / 2).await;
        wait_until(|| !second.exists()).await;

        cancel.cancel();
        tasks.close();
        tasks.wait().await;
    }

    #[tokio::test]
    async fn the_sweep_at_start_forgets_idempotency_keys_older_than_a_week() {
        let data = tempfile::tempdir().unwrap();
        let store = Store::open(&data.path().join("kernel.db")).await.unwrap();
        let session = store.create_session("p", "m").await.unwrap();
        let (old, new) = (vec!["tg:1:1".to_owned()], vec!["tg:1:2".to_owned()]);
        for (keys, turn) in [(&old, "t1"), (&new, "t2")] {
            let message = crate::conversation::Message::user_text("hi");
            store
                .append_user_message(session.id, &message, turn, keys, None)
                .await
                .unwrap()
                .unwrap();
        }
        store.age_intake_key_for_test(&old[0], 8 * DAY).await;
        let (tasks, cancel) = (TaskTracker::new(), CancellationToken::new());
        spawn(
            &tasks,
            data.path().to_path_buf(),
            Some(store.clone()),
            cancel.clone(),
        );
        while store.taken_keys(&old).await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(
            store.taken_keys(&new).await.unwrap().is_some(),
            "a new key stays"
        );
        cancel.cancel();
        tasks.close();
        tasks.wait().await;
    }

    /// Yields (paused time stands still) until `done` holds; the sweep runs on a blocking thread.
    async fn wait_until(done: impl Fn() -> bool) {
        for _ in 0..10_000 {
            if done() {
                return;
            }
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("the sweep did not happen");
    }
}
