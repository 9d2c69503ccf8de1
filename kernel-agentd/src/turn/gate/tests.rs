//! The gate: lanes, busy windows, parallel turns, steers, cancels, status.

use super::*;

const MAIN: Lane = Lane {
    session_id: 1,
    main: true,
};

#[test]
fn one_turn_at_a_time_with_busy_windows() {
    let gate = Gate::default();
    let permit = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    assert_eq!(
        gate.try_enter(MAIN, CancellationToken::new()).unwrap_err(),
        Refused::Busy(Busy {
            first_in_window: true
        })
    );
    assert_eq!(
        gate.try_enter(MAIN, CancellationToken::new()).unwrap_err(),
        Refused::Busy(Busy {
            first_in_window: false
        })
    );
    drop(permit);
    let permit = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    assert_eq!(
        gate.try_enter(MAIN, CancellationToken::new()).unwrap_err(),
        Refused::Busy(Busy {
            first_in_window: true
        })
    );
    drop(permit);
    assert!(gate.status().running_turn.is_none());
}

#[tokio::test]
async fn kernel_work_waits_for_the_gate_without_counting_as_busy() {
    let gate = Gate::default();
    let owner = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    let waiter = tokio::spawn({
        let gate = gate.clone();
        async move {
            gate.enter_when_free(MAIN, CancellationToken::new(), Origin::Kernel)
                .await
                .map(|permit| (permit.gate.running_origin(Scope::All), permit))
        }
    });
    tokio::task::yield_now().await;
    assert_eq!(gate.running_origin(Scope::All), Some(Origin::Owner));
    drop(owner);
    let (origin, permit) = waiter.await.unwrap().unwrap();
    assert_eq!(origin, Some(Origin::Kernel));
    // The owner's first refusal while Kernel's turn runs still opens a busy window.
    assert_eq!(
        gate.try_enter(MAIN, CancellationToken::new()).unwrap_err(),
        Refused::Busy(Busy {
            first_in_window: true
        })
    );
    drop(permit);
    let cancel = CancellationToken::new();
    let _owner = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    cancel.cancel();
    assert!(
        gate.enter_when_free(MAIN, cancel, Origin::Kernel)
            .await
            .is_none()
    );
}

#[tokio::test]
async fn an_owner_turn_waits_for_one_whose_answer_is_on_its_way() {
    let gate = Gate::default();
    let running = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    assert!(!gate.worth_waiting_for(MAIN));
    running.concluding();
    assert!(gate.worth_waiting_for(MAIN));
    let waiter = tokio::spawn({
        let gate = gate.clone();
        async move {
            gate.enter_when_free(MAIN, CancellationToken::new(), Origin::Owner)
                .await
                .map(|permit| (permit.gate.worth_waiting_for(MAIN), permit))
        }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    drop(running);
    let (next_concluding, _next) = waiter.await.unwrap().unwrap();
    assert!(!next_concluding, "the next turn starts fresh");
}

#[test]
fn steers_reach_the_running_turn_in_order_and_come_back_when_none_runs() {
    let gate = Gate::default();
    assert_eq!(
        gate.steer(Scope::Main, "early".into(), false),
        Err("early".to_owned())
    );
    let permit = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    assert!(!permit.steered());
    gate.steer(Scope::Main, "one".into(), false).unwrap();
    gate.steer(Scope::Main, "two".into(), true).unwrap();
    assert!(permit.steered());
    let taken = permit.take_steers();
    assert_eq!(taken.texts, ["one", "two"]);
    assert!(taken.outside, "one carried outside content");
    assert!(!permit.steered() && permit.take_steers() == Steers::default());
    gate.steer(Scope::Main, "three".into(), false).unwrap();
    assert!(
        !permit.take_steers().outside,
        "the mark was taken with its texts"
    );
    drop(permit);
    assert_eq!(
        gate.steer(Scope::Main, "late".into(), false),
        Err("late".to_owned())
    );
}

#[test]
fn cancel_reaches_the_running_turn_only() {
    let gate = Gate::default();
    assert_eq!(gate.cancel(Scope::All), 0);
    let token = CancellationToken::new();
    let permit = gate.try_enter(MAIN, token.clone()).unwrap();
    permit.set_turn_id("t1");
    assert!(!gate.cancel_turn("t0") && !token.is_cancelled());
    assert!(gate.cancel_turn("t1"));
    assert_eq!(gate.cancel(Scope::All), 1);
    assert!(token.is_cancelled());
    drop(permit);
    assert_eq!(gate.cancel(Scope::All), 0);
}

#[test]
fn status_shows_running_tools_and_last_error() {
    let gate = Gate::default();
    let permit = gate.try_enter(MAIN, CancellationToken::new()).unwrap();
    permit.tool_started("search");
    permit.tool_started("echo");
    assert_eq!(
        gate.status().running_turn.unwrap().running_tool.as_deref(),
        Some("search, echo")
    );
    permit.tool_finished("search");
    assert_eq!(
        gate.status().running_turn.unwrap().running_tool.as_deref(),
        Some("echo")
    );
    permit.tools_finished();
    assert_eq!(gate.status().running_turn.unwrap().running_tool, None);
    gate.record_error("rate limited");
    drop(permit);
    let status = gate.status();
    assert_eq!(
        (status.running_turn, status.last_error.as_deref()),
        (None, Some("rate limited"))
    );
}

#[test]
fn sessions_run_side_by_side_one_turn_each_within_the_cap() {
    let gate = Gate::new(2);
    let a = Lane::session(10);
    let b = Lane::session(11);
    let ta = CancellationToken::new();
    let pa = gate.try_enter(a, ta.clone()).unwrap();
    // The same session is busy; another runs at once.
    assert!(matches!(
        gate.try_enter(a, CancellationToken::new()),
        Err(Refused::Busy(Busy {
            first_in_window: true
        }))
    ));
    let tb = CancellationToken::new();
    let pb = gate.try_enter(b, tb.clone()).unwrap();
    // The cap is reached: a third session waits for a slot (not a busy refusal).
    assert!(matches!(
        gate.try_enter(Lane::session(12), CancellationToken::new()),
        Err(Refused::Full)
    ));
    assert!(gate.worth_waiting_for(Lane::session(12)));
    // A main-lane message in session 10 conflicts with session 10's turn.
    assert!(matches!(
        gate.try_enter(Lane::main(10), CancellationToken::new()),
        Err(Refused::Busy(_))
    ));
    pa.set_turn_id("ta");
    pb.set_turn_id("tb");
    let status = gate.status();
    assert_eq!(
        status
            .running_turns
            .iter()
            .map(|r| (r.session_id, r.turn_id.as_deref()))
            .collect::<Vec<_>>(),
        [(10, Some("ta")), (11, Some("tb"))]
    );
    assert_eq!(gate.session_of("tb"), Some(11));
    assert_eq!(
        gate.running(11).and_then(|r| r.turn_id).as_deref(),
        Some("tb")
    );
    assert_eq!(gate.running(12), None);
    // Cancelling one session leaves the other running.
    assert_eq!(gate.cancel(Scope::Session(10)), 1);
    assert!(ta.is_cancelled() && !tb.is_cancelled());
    assert_eq!(gate.steer(Scope::Session(11), "x".into(), false), Ok(()));
    assert!(pb.steered() && !pa.steered());
    drop(pa);
    // Session 10's busy window ended with its turn.
    let pa = gate.try_enter(a, CancellationToken::new()).unwrap();
    assert_eq!(gate.cancel(Scope::All), 2);
    drop((pa, pb));
    assert!(gate.status().running_turns.is_empty());
}

#[tokio::test]
async fn a_turn_waiting_for_a_slot_starts_when_one_frees() {
    let gate = Gate::new(1);
    let first = gate
        .try_enter(Lane::session(1), CancellationToken::new())
        .unwrap();
    let waiter = tokio::spawn({
        let gate = gate.clone();
        async move {
            gate.enter_when_free(Lane::session(2), CancellationToken::new(), Origin::Owner)
                .await
                .map(|p| p.lane())
        }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    drop(first);
    assert_eq!(waiter.await.unwrap().unwrap(), Some(Lane::session(2)));
}
