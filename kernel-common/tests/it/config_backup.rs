//! `[backup]`: daily, 7 kept, under data_dir by default; the values; `keep` out of range
//! refused with the key and the fix.

use crate::support;

use kernel_common::config::Component;
use support::{VALID, load_text, problems};

fn with(extra: &str) -> String {
    format!("{VALID}\n{extra}")
}

#[test]
fn daily_seven_kept_under_data_dir_by_default() {
    let config = load_text(VALID, Component::Agentd).unwrap();
    assert!(config.backup.daily);
    assert_eq!(config.backup.keep, 7);
    assert_eq!(config.backup.dir, config.general.data_dir.join("backups"));
    assert!(
        config.summary().contains("backup: daily, newest 7 kept"),
        "{}",
        config.summary()
    );
    let config = load_text(
        &with("[backup]\ndaily = false\nkeep = 30\ndir = \"elsewhere\"\n"),
        Component::Agentd,
    )
    .unwrap();
    assert!(!config.backup.daily);
    assert_eq!(config.backup.keep, 30);
    assert_eq!(config.backup.dir, config.base_dir.join("elsewhere"));
}

#[test]
fn keep_out_of_range_is_refused_with_the_fix() {
    for keep in [0, 366] {
        let found = problems(load_text(
            &with(&format!("[backup]\nkeep = {keep}\n")),
            Component::Agentd,
        ));
        assert!(
            found
                .iter()
                .any(|p| p.contains("backup.keep") && p.contains("1 to 365")),
            "{found:?}"
        );
    }
}
