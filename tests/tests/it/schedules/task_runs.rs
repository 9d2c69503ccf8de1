//! A scheduled task's run is never lost: in-process agentd (`Harness`) restarted on the same data
//! dir. A task that fired while the owner's turn ran and was cut off by a shutdown before its turn
//! runs after the restart; one cut off mid-turn runs again; one whose turn completed does not;
//! deleting the schedule drops its pending run.

use chrono::{TimeDelta, Utc};
use kernel_agentd::store::Store;
use kernel_agentd::store::outbox::ItemBody;
use kernel_agentd::store::schedules::NewSchedule;
use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, send, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::stack::PROMPT;
use tests::wait::eventually;

/// A second handle on the database of `cfg` (opened before agentd starts or once it answers:
/// never while it applies the migrations).
async fn open(cfg: &TestConfig) -> Store {
    Store::open(&cfg.data_dir().join("kernel.db"))
        .await
        .expect("open the database")
}

/// A second handle on the database of the harness, once it answers.
async fn open_running(h: &mut Harness) -> Store {
    schedules(h).await;
    open(&h.cfg).await
}

/// Adds a one-shot task due in a second.
async fn add_task(h: &mut Harness, message: &str) {
    h.client
        .add_schedule(pb::AddScheduleRequest {
            when: "PT1S".into(),
            message: message.into(),
            mode: "task".into(),
            model: String::new(),
        })
        .await
        .expect("AddSchedule");
}

async fn schedules(h: &mut Harness) -> Vec<pb::ScheduleInfo> {
    h.client
        .list_schedules(pb::ListSchedulesRequest {})
        .await
        .expect("ListSchedules")
        .into_inner()
        .schedules
}

/// The prompts of the pending task runs.
async fn pending(store: &Store) -> Vec<String> {
    let runs = store.task_runs().await.expect("read the task runs");
    runs.into_iter().map(|r| r.prompt).collect()
}

/// Waits until an answer containing `needle` is in the outbox and no task run is pending.
async fn answered(store: &Store, needle: &str) {
    eventually(
        format!("the answer {needle:?} in the outbox"),
        PROMPT,
        async || {
            let items = store.pending_outbox(0).await.expect("read the outbox");
            items
                .iter()
                .any(|i| matches!(&i.body, ItemBody::Answer { text, .. } if text.contains(needle)))
        },
    )
    .await;
    eventually("no pending task run", PROMPT, async || {
        pending(store).await.is_empty()
    })
    .await;
}

/// How many items of the outbox contain `needle`.
async fn answers_containing(store: &Store, needle: &str) -> usize {
    let items = store.pending_outbox(0).await.expect("read the outbox");
    items
        .iter()
        .filter(|i| matches!(&i.body, ItemBody::Answer { text, .. } if text.contains(needle)))
        .count()
}

#[tokio::test]
async fn a_task_due_during_the_owners_turn_runs_after_a_shutdown_cut_it_off() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let store = open_running(&mut h).await;
    let (owner, _release) = Script::hold("owner answer");
    fake.push(owner);
    let _stream = send(&mut h.client, "a long question").await;
    fake.wait_requests(1, PROMPT).await;

    add_task(&mut h, "run the weekly report").await;
    // Fired (the one-shot is gone) and pending behind the owner's turn.
    eventually("the task to fire", PROMPT, async || {
        schedules(&mut h).await.is_empty()
    })
    .await;
    let runs = pending(&store).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].contains("run the weekly report"), "{runs:?}");
    assert_eq!(
        fake.requests().len(),
        1,
        "the task waits for the owner's turn"
    );

    // Shut down before the task's turn ran; it runs after the restart.
    fake.push(Script::text("weekly report: all green"));
    let h = h.restart().await;
    fake.wait_requests(2, PROMPT).await;
    answered(&store, "weekly report: all green").await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let prompt = &requests[1].raw_body;
    assert!(
        prompt.contains("run the weekly report") && prompt.contains("定时任务"),
        "{prompt}"
    );
    assert_eq!(answers_containing(&store, "all green").await, 1);
    h.stop().await;
    store.close().await;
}

#[tokio::test]
async fn a_task_turn_cut_off_mid_turn_runs_again_and_a_completed_one_does_not() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let store = open_running(&mut h).await;
    let (held, _release) = Script::hold("news: the first try");
    fake.push(held);
    add_task(&mut h, "summarise the news").await;
    // The task's turn streams its answer when agentd shuts down.
    fake.wait_requests(1, PROMPT).await;
    assert_eq!(pending(&store).await.len(), 1);

    fake.push(Script::text("news: the second try"));
    let h = h.restart().await;
    fake.wait_requests(2, PROMPT).await;
    answered(&store, "news: the second try").await;
    let requests = fake.requests();
    assert!(
        requests[1].raw_body.contains("summarise the news"),
        "{}",
        requests[1].raw_body
    );
    // The cut-off turn told the owner it was cancelled, as any turn cut off by shutdown does.
    let items = store.pending_outbox(0).await.unwrap();
    let bodies: Vec<_> = items.iter().map(|i| &i.body).collect();
    assert!(
        matches!(bodies[..], [ItemBody::Cancelled, ItemBody::Answer { .. }]),
        "{bodies:?}"
    );

    // Completed: nothing is pending, so the next start runs nothing; the owner's turn is next.
    let mut h = h.restart().await;
    fake.push(Script::text("hello owner"));
    let events = turn(&mut h.client, "hello").await;
    assert_eq!(completed(&events).text, "hello owner");
    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "the completed task did not run again");
    assert!(requests[2].raw_body.contains("hello"));
    assert!(pending(&store).await.is_empty());
    assert_eq!(answers_containing(&store, "news: the second try").await, 1);
    h.stop().await;
    store.close().await;
}

#[tokio::test]
async fn deleting_a_schedule_drops_its_pending_run() {
    let fake = FakeLlm::start().await;
    let cfg = TestConfig::new(&fake.url(), "");
    // Two daily tasks missed while agentd was down: both fire at start, in due order.
    let store = open(&cfg).await;
    let now = Utc::now();
    for (message, ago) in [("first daily task", 3), ("second daily task", 2)] {
        store
            .add_schedule(&NewSchedule {
                spec: "cron".into(),
                expr: "0 9 * * *".into(),
                mode: "task".into(),
                message: message.into(),
                next_fire: now - TimeDelta::minutes(ago),
                model: None,
            })
            .await
            .unwrap();
    }
    let (held, release) = Script::hold("first done");
    fake.push(held);
    let mut h = Harness::start(cfg).await;

    // The first runs (held); the second waits behind it.
    fake.wait_requests(1, PROMPT).await;
    assert!(fake.requests()[0].raw_body.contains("first daily task"));
    eventually("both runs pending", PROMPT, async || {
        pending(&store).await.len() == 2
    })
    .await;
    let listed = schedules(&mut h).await;
    let second = listed
        .iter()
        .find(|s| s.message == "second daily task")
        .expect("listed");
    let deleted = h
        .client
        .delete_schedules(pb::DeleteSchedulesRequest {
            numbers: vec![second.number],
        })
        .await
        .expect("DeleteSchedules")
        .into_inner()
        .deleted;
    assert_eq!(deleted, 1);
    let runs = pending(&store).await;
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].contains("first daily task"), "{runs:?}");

    release.release();
    answered(&store, "first done").await;
    h.stop().await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "the deleted schedule's run never ran");
    assert!(
        !requests
            .iter()
            .any(|r| r.raw_body.contains("second daily task"))
    );
    store.close().await;
}

/// The owner's `/cancel` of a task's turn ends its run: it does not run again after a restart.
#[tokio::test]
async fn a_task_turn_the_owner_cancels_does_not_run_again() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let store = open_running(&mut h).await;
    let (held, _release) = Script::hold("never finished");
    fake.push(held);
    add_task(&mut h, "a long analysis").await;
    fake.wait_requests(1, PROMPT).await;
    let cancelled = h
        .client
        .cancel(pb::CancelRequest::default())
        .await
        .expect("Cancel")
        .into_inner()
        .cancelled;
    assert!(cancelled);
    eventually("the run to be dropped", PROMPT, async || {
        pending(&store).await.is_empty()
    })
    .await;

    let mut h = h.restart().await;
    fake.push(Script::text("hello owner"));
    let events = turn(&mut h.client, "hello").await;
    assert!(
        matches!(events.last(), Some(Event::Completed(_))),
        "{events:?}"
    );
    assert_eq!(
        fake.requests().len(),
        2,
        "the cancelled task did not run again"
    );
    h.stop().await;
    store.close().await;
}

#[tokio::test]
async fn deleting_a_schedule_while_its_run_waits_for_the_owners_turn_drops_the_run() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let store = open_running(&mut h).await;
    let (owner, release) = Script::hold("owner answer");
    fake.push(owner);
    let mut first = send(&mut h.client, "a long question").await;
    fake.wait_requests(1, PROMPT).await;

    // A daily task already due; adding another schedule wakes the scheduler, which fires it.
    store
        .add_schedule(&NewSchedule {
            spec: "cron".into(),
            expr: "0 9 * * *".into(),
            mode: "task".into(),
            message: "the daily digest".into(),
            next_fire: Utc::now() - TimeDelta::minutes(1),
            model: None,
        })
        .await
        .unwrap();
    h.client
        .add_schedule(pb::AddScheduleRequest {
            when: "PT1H".into(),
            message: "stretch".into(),
            mode: String::new(),
            model: String::new(),
        })
        .await
        .expect("AddSchedule");
    eventually("the daily task to fire", PROMPT, async || {
        pending(&store).await.len() == 1
    })
    .await;

    // The owner deletes it while its run waits for the owner's turn: it never runs.
    let listed = schedules(&mut h).await;
    let daily = listed
        .iter()
        .find(|s| s.message == "the daily digest")
        .expect("listed");
    h.client
        .delete_schedules(pb::DeleteSchedulesRequest {
            numbers: vec![daily.number],
        })
        .await
        .expect("DeleteSchedules");
    assert!(pending(&store).await.is_empty());
    release.release();
    let events = tests::chat::rest(&mut first).await;
    assert_eq!(completed(&events).text, "owner answer");
    fake.push(Script::text("second answer"));
    let events = turn(&mut h.client, "and another").await;
    assert_eq!(completed(&events).text, "second answer");
    h.stop().await;
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "the deleted task never ran");
    assert!(
        !requests
            .iter()
            .any(|r| r.raw_body.contains("the daily digest"))
    );
    store.close().await;
}
