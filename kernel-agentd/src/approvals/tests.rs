//! The approvals service: answers, session allowances, expiry, cancellation, bad ids.

use std::sync::Mutex;

use super::*;

fn service(mode: ApprovalMode, secs: u64) -> Approvals {
    Approvals::new(&ApprovalsConfig {
        mode,
        timeout: Duration::from_secs(secs),
    })
}

fn request(session_id: i64, text: &str) -> ApprovalRequest {
    ApprovalRequest {
        turn_id: "t1".into(),
        session_id,
        risk: Risk {
            action: "delegate_to_cli".into(),
            text: text.into(),
        },
    }
}

/// Starts a request and returns its task and the id it showed.
async fn asking(
    approvals: &Approvals,
    req: ApprovalRequest,
    cancel: CancellationToken,
) -> (
    tokio::task::JoinHandle<Decision>,
    String,
    Arc<Mutex<Vec<ToolEvent>>>,
) {
    let (_, mut rx) = approvals.watch();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = ToolEvents::new({
        let seen = seen.clone();
        move |e| seen.lock().unwrap().push(e)
    });
    let task = tokio::spawn({
        let approvals = approvals.clone();
        async move { approvals.request(req, &events, &cancel).await }
    });
    let Ok(ApprovalEvent::Requested(shown)) = rx.recv().await else {
        panic!("no request")
    };
    (task, shown.id, seen)
}

#[test]
fn the_policy_by_mode() {
    assert!(!service(ApprovalMode::Untrusted, 1).must_ask(false));
    assert!(service(ApprovalMode::Untrusted, 1).must_ask(true));
    assert!(service(ApprovalMode::Always, 1).must_ask(false));
    assert!(!service(ApprovalMode::Off, 1).must_ask(true));
}

#[tokio::test]
async fn allow_once_then_ids_are_single_use_and_forged_ones_refused() {
    let approvals = service(ApprovalMode::Always, 600);
    let (task, id, seen) = asking(&approvals, request(1, "ls"), CancellationToken::new()).await;
    assert!(id.starts_with("ap-") && id.len() == 35, "{id}");
    assert_eq!(approvals.watch().0.len(), 1, "pending is listed");
    assert_eq!(
        approvals.decide("ap-00000000000000000000000000000000", Choice::Deny),
        Err(ApprovalError::NotPending)
    );
    approvals.decide(&id, Choice::AllowOnce).unwrap();
    assert_eq!(task.await.unwrap(), Decision::Allowed);
    assert_eq!(
        approvals.decide(&id, Choice::Deny),
        Err(ApprovalError::NotPending)
    );
    assert!(approvals.watch().0.is_empty());
    let seen = seen.lock().unwrap().clone();
    assert!(matches!(&seen[0], ToolEvent::ApprovalRequested(s) if s.text == "ls"));
    assert!(
        matches!(&seen[1], ToolEvent::ApprovalClosed { decision, .. } if decision == "allowed")
    );
    // Once means once: the next request asks again.
    let (task, id, _) = asking(&approvals, request(1, "ls"), CancellationToken::new()).await;
    approvals.decide(&id, Choice::Deny).unwrap();
    assert_eq!(task.await.unwrap(), Decision::Denied);
}

#[tokio::test]
async fn allow_for_the_session_covers_that_session_only() {
    let approvals = service(ApprovalMode::Always, 600);
    let (task, id, _) = asking(&approvals, request(7, "a"), CancellationToken::new()).await;
    approvals.decide(&id, Choice::AllowForSession).unwrap();
    assert_eq!(task.await.unwrap(), Decision::Allowed);
    let no_events = ToolEvents::default();
    let cancel = CancellationToken::new();
    assert_eq!(
        approvals
            .request(request(7, "b"), &no_events, &cancel)
            .await,
        Decision::Allowed
    );
    let (task, id, _) = asking(&approvals, request(8, "c"), CancellationToken::new()).await;
    approvals.decide(&id, Choice::Deny).unwrap();
    assert_eq!(task.await.unwrap(), Decision::Denied);
}

#[tokio::test(start_paused = true)]
async fn unanswered_expires_as_denied_and_cancelled_runs_nothing() {
    let approvals = service(ApprovalMode::Always, 600);
    let cancel = CancellationToken::new();
    let out = approvals
        .request(request(1, "x"), &ToolEvents::default(), &cancel)
        .await;
    assert_eq!(out, Decision::Expired);
    let (task, id, _) = asking(&approvals, request(1, "y"), cancel.clone()).await;
    cancel.cancel();
    assert_eq!(task.await.unwrap(), Decision::Cancelled);
    assert_eq!(
        approvals.decide(&id, Choice::AllowOnce),
        Err(ApprovalError::NotPending)
    );
}

#[tokio::test]
async fn long_text_is_cut_with_its_full_length() {
    let approvals = service(ApprovalMode::Always, 600);
    let long = "é".repeat(MAX_TEXT_CHARS + 10);
    let (task, id, _) = asking(&approvals, request(1, &long), CancellationToken::new()).await;
    let shown = approvals.watch().0.remove(0);
    assert_eq!(shown.text.chars().count(), MAX_TEXT_CHARS);
    assert_eq!(shown.text_chars, (MAX_TEXT_CHARS + 10) as u64);
    approvals.decide(&id, Choice::Deny).unwrap();
    task.await.unwrap();
}
