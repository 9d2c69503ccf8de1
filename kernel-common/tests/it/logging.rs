//! `logging::init` installs the global subscriber once: lines land in
//! `<data_dir>/logs/<binary>.log`, redacted, in a 0700 folder.

use kernel_common::Redactor;
use kernel_common::logging::{self, LogError};

#[test]
fn init_writes_redacted_lines_to_the_log_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data_dir = tmp.path().join("fresh/data");
    let redactor = Redactor::new(["sk-global-secret-0123456789"]);
    let guard = logging::init_with_redactor("kernel-test", &data_dir, redactor).unwrap();
    tracing::info!(user = 42, "hello from init sk-global-secret-0123456789");
    tracing::debug!("below the default level");
    let again = logging::init("kernel-test", &data_dir);
    assert!(matches!(again, Err(LogError::AlreadyInitialised)));
    drop(guard);

    let text = std::fs::read_to_string(logging::log_path("kernel-test", &data_dir)).unwrap();
    assert!(text.contains("hello from init"), "{text}");
    assert!(text.contains("user=42"), "{text}");
    assert!(text.contains("sk-g…6789"), "{text}");
    assert!(!text.contains("sk-global-secret-0123456789"), "{text}");
    assert!(!text.contains("below the default level") || std::env::var_os("RUST_LOG").is_some());
    #[cfg(unix)]
    for dir in [data_dir.clone(), data_dir.join("logs")] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
}
