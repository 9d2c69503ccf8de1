//! Downloads kept by real turns are deleted by retention once 7 days old (the sweep with its clock
//! moved forward; `retention`'s own tests cover the task that runs it at start and daily).

use std::time::{Duration, SystemTime};

use kernel_agentd::retention::{MAX_AGE, sweep};
use tests::chat::completed;
use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::harness::Harness;
use tests::media::{PNG, document, downloads, image, request, turn_with};

const DAY: Duration = Duration::from_secs(24 * 3600);

async fn kept_two_files(h: &mut Harness) {
    let req = request(
        "",
        vec![image("image/png", PNG), document("a.md", b"# hi")],
        false,
    );
    completed(&turn_with(&mut h.client, req).await);
    assert_eq!(downloads(&h.cfg).len(), 2);
}

#[tokio::test]
async fn downloads_go_after_seven_days_and_not_before() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    kept_two_files(&mut h).await;
    let data = h.cfg.data_dir();

    let swept = sweep(&data, MAX_AGE, SystemTime::now() + 6 * DAY);
    assert_eq!(swept.deleted, 0);
    assert_eq!(downloads(&h.cfg).len(), 2);

    let swept = sweep(&data, MAX_AGE, SystemTime::now() + 8 * DAY);
    assert_eq!(swept.deleted, 2);
    assert!(downloads(&h.cfg).is_empty());
    assert!(data.join("downloads").is_dir(), "the folder stays");
    h.stop().await;
}
