//! `LogCapture` sees every thread: lines logged from a std thread, `spawn_blocking` and a tokio
//! worker are captured, and a capture holds only what was logged while it was alive.

use tests::fake_llm::LogCapture;

fn has(lines: &[String], marker: &str) -> bool {
    lines.iter().any(|l| l.contains(marker))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_logged_on_other_threads_are_captured() {
    let (logs, _guard) = LogCapture::install();
    let test_thread = std::thread::current().id();

    let other = std::thread::spawn(move || {
        assert_ne!(std::thread::current().id(), test_thread);
        tracing::info!(marker = "capture-std-thread-5d1e", "from a std thread");
    });
    other.join().unwrap();
    tokio::task::spawn_blocking(move || {
        assert_ne!(std::thread::current().id(), test_thread);
        tracing::warn!(marker = "capture-blocking-5d1e", "from spawn_blocking");
    })
    .await
    .unwrap();
    tokio::spawn(async {
        tracing::debug!(marker = "capture-worker-5d1e", "from a runtime worker");
    })
    .await
    .unwrap();

    let lines = logs.lines();
    for marker in [
        "capture-std-thread-5d1e",
        "capture-blocking-5d1e",
        "capture-worker-5d1e",
    ] {
        assert!(has(&lines, marker), "{marker} missing: {lines:#?}");
    }
}

#[test]
fn a_capture_keeps_what_was_logged_while_it_was_alive() {
    // Hit the callsite before any capture exists: its cached interest must not silence it.
    let log = |marker: &str| tracing::info!(marker, "a line");
    log("capture-before-9c2b");
    let (logs, guard) = LogCapture::install();
    log("capture-during-9c2b");
    drop(guard);
    log("capture-after-9c2b");

    let lines = logs.lines();
    assert!(has(&lines, "capture-during-9c2b"), "{lines:#?}");
    assert!(!has(&lines, "capture-before-9c2b"), "{lines:#?}");
    assert!(!has(&lines, "capture-after-9c2b"), "{lines:#?}");
}
