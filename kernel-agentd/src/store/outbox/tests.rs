//! The outbox table: written with the answer, replayed in order, acknowledged idempotently,
//! pruned, counted.

use super::*;
use crate::store::running_turns::{CutOffTurn, Destination, Running};

async fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
    (dir, store)
}

fn answer(turn: &str, text: &str) -> NewItem {
    NewItem {
        turn_id: turn.into(),
        body: ItemBody::Answer {
            text: text.into(),
            voice: None,
            reasoning: String::new(),
        },
        reply_to: Some(7),
        placeholder: None,
        thread_id: None,
        outside: false,
    }
}

#[tokio::test]
async fn the_item_is_stored_with_the_answer_in_one_transaction_and_replayed_in_order() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let first = store
        .append_with_outbox(
            s.id,
            &[Message::assistant_text("one")],
            &answer("t1", "one"),
        )
        .await
        .unwrap();
    let failed = NewItem {
        turn_id: "t2".into(),
        body: ItemBody::Failed {
            message: "boom".into(),
            reason: crate::failure::FailReason::llm(&crate::llm::LlmError::Overloaded {
                status: 529,
                message: "overloaded".into(),
            }),
        },
        reply_to: None,
        placeholder: Some(9),
        thread_id: None,
        outside: false,
    };
    let second = store.append_with_outbox(s.id, &[], &failed).await.unwrap();
    assert!(second > first);
    assert_eq!(store.message_count(s.id).await.unwrap(), 1);

    let pending = store.pending_outbox(0).await.unwrap();
    assert_eq!(
        pending.iter().map(|i| i.seq).collect::<Vec<_>>(),
        [first, second]
    );
    assert_eq!(pending[0].body, answer("t1", "one").body);
    assert_eq!(pending[0].reply_to, Some(7));
    assert_eq!(pending[1].body, failed.body);
    assert_eq!(pending[1].placeholder, Some(9));
    assert_eq!(store.pending_outbox(first).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_failure_stored_without_a_reason_reads_as_unknown() {
    let (_dir, store) = store().await;
    sqlx::query(
        "INSERT INTO outbox (turn_id, kind, text, created_at) VALUES ('old', 'failed', 'boom', 1)",
    )
    .execute(&store.pool)
    .await
    .unwrap();
    let pending = store.pending_outbox(0).await.unwrap();
    assert_eq!(
        pending[0].body,
        ItemBody::Failed {
            message: "boom".into(),
            reason: crate::failure::FailReason::default(),
        }
    );
}

#[tokio::test]
async fn nothing_is_stored_when_the_session_is_missing() {
    let (_dir, store) = store().await;
    let err = store
        .append_with_outbox(42, &[Message::assistant_text("x")], &answer("t", "x"))
        .await;
    assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
    assert!(store.pending_outbox(0).await.unwrap().is_empty());
}

#[tokio::test]
async fn acks_are_idempotent_and_never_move_backwards() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let seq = store
        .append_with_outbox(s.id, &[], &answer("t", "x"))
        .await
        .unwrap();
    let part = |n: u32, id: i64| Ack {
        seq,
        parts_done: n,
        message_ids: vec![id],
        ..Ack::default()
    };
    assert!(store.ack_outbox(&part(2, 100)).await.unwrap());
    assert!(store.ack_outbox(&part(1, 99)).await.unwrap());
    assert!(store.ack_outbox(&part(2, 100)).await.unwrap());
    let item = &store.pending_outbox(0).await.unwrap()[0];
    assert_eq!(item.parts_done, 2);
    let ids: String = sqlx::query_scalar("SELECT message_ids FROM outbox WHERE seq = ?1")
        .bind(seq)
        .fetch_one(&store.pool)
        .await
        .unwrap();
    assert_eq!(ids, "[100,99]");

    let done = Ack {
        seq,
        parts_done: 2,
        done: true,
        ..Ack::default()
    };
    assert!(store.ack_outbox(&done).await.unwrap());
    assert!(store.ack_outbox(&done).await.unwrap());
    assert!(store.pending_outbox(0).await.unwrap().is_empty());
    assert!(!store.ack_outbox(&Ack { seq: 999, ..done }).await.unwrap());
}

#[tokio::test]
async fn the_backlog_counts_undelivered_items_and_pruning_keeps_them() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    assert_eq!(store.outbox_backlog().await.unwrap(), Backlog::default());
    let a = store
        .append_with_outbox(s.id, &[], &answer("a", "x"))
        .await
        .unwrap();
    store
        .append_with_outbox(s.id, &[], &answer("b", "y"))
        .await
        .unwrap();
    store.set_outbox_placeholder("b", 55).await.unwrap();
    let backlog = store.outbox_backlog().await.unwrap();
    assert_eq!(backlog.count, 2);
    assert!(backlog.oldest.is_some());
    let done = Ack {
        seq: a,
        done: true,
        ..Ack::default()
    };
    store.ack_outbox(&done).await.unwrap();
    assert_eq!(store.outbox_backlog().await.unwrap().count, 1);
    let later = Utc::now() + chrono::Duration::seconds(5);
    assert_eq!(store.prune_outbox(later).await.unwrap(), 1);
    let left = store.pending_outbox(0).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].placeholder, Some(55));
    // A pruned seq is never reused.
    let next = store
        .append_with_outbox(s.id, &[], &answer("c", "z"))
        .await
        .unwrap();
    assert!(next > left[0].seq);
}

#[tokio::test]
async fn an_answer_keeps_its_reasoning_and_one_without_reads_as_none() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let mut thought = answer("t1", "one");
    thought.body = ItemBody::Answer {
        text: "one".into(),
        voice: None,
        reasoning: "Because <tea>.".into(),
    };
    store.append_with_outbox(s.id, &[], &thought).await.unwrap();
    store
        .append_with_outbox(s.id, &[], &answer("t2", "two"))
        .await
        .unwrap();
    let pending = store.pending_outbox(0).await.unwrap();
    assert_eq!(pending[0].body, thought.body);
    assert_eq!(pending[1].body, answer("t2", "two").body);
}

#[tokio::test]
async fn a_replayed_item_says_how_many_of_its_parts_were_refused() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let seq = store
        .append_with_outbox(s.id, &[], &answer("t1", "one"))
        .await
        .unwrap();
    let refused = Ack {
        seq,
        parts_done: 1,
        failed: true,
        ..Ack::default()
    };
    // Recorded once however often it is sent (a kept ack resent after a resubscription).
    store.ack_outbox(&refused).await.unwrap();
    store.ack_outbox(&refused).await.unwrap();
    let sent = Ack {
        seq,
        parts_done: 2,
        message_ids: vec![5],
        ..Ack::default()
    };
    store.ack_outbox(&sent).await.unwrap();
    let item = &store.pending_outbox(0).await.unwrap()[0];
    assert_eq!((item.parts_done, item.parts_failed), (2, 1));
}

fn notice(turn: &CutOffTurn) -> NewItem {
    NewItem {
        turn_id: turn.turn_id.clone(),
        body: ItemBody::Cancelled,
        reply_to: turn.to.reply_to,
        placeholder: turn.to.placeholder,
        thread_id: None,
        outside: false,
    }
}

#[tokio::test]
async fn a_turn_without_an_outcome_is_reported_once_and_runs_again_once() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let to = Destination {
        reply_to: Some(7),
        placeholder: None,
    };
    for turn in ["cut", "done"] {
        store
            .append_user_message(s.id, &Message::user_text(turn), turn, &[], Some(to.into()))
            .await
            .unwrap()
            .unwrap();
    }
    store.set_outbox_placeholder("cut", 8).await.unwrap();
    // "done" got its outcome: it is no longer running.
    let done = NewItem {
        turn_id: "done".into(),
        body: ItemBody::Cancelled,
        reply_to: Some(7),
        placeholder: None,
        thread_id: None,
        outside: false,
    };
    store.append_with_outbox(s.id, &[], &done).await.unwrap();

    let reported = store.report_cut_off_turns(notice).await.unwrap();
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0].1.turn_id, "cut");
    assert_eq!(reported[0].1.placeholder, Some(8));
    assert!(store.report_cut_off_turns(notice).await.unwrap().is_empty());

    assert_eq!(store.claim_rerun("done").await.unwrap(), None);
    assert_eq!(store.claim_rerun("forged-1").await.unwrap(), None);
    let claimed = store.claim_rerun("cut").await.unwrap().unwrap();
    assert_eq!(claimed.message.text(), "cut");
    assert_eq!(claimed.to.reply_to, Some(7));
    assert_eq!(store.claim_rerun("cut").await.unwrap(), None);
    // Given back (another turn ran): claimable again, once.
    store.release_rerun("cut").await.unwrap();
    assert!(store.claim_rerun("cut").await.unwrap().is_some());
    assert_eq!(store.claim_rerun("cut").await.unwrap(), None);
}

#[tokio::test]
async fn a_rerun_gets_the_message_in_full_and_its_trust_and_the_copy_goes_once_it_runs() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let full = Message {
        role: crate::conversation::Role::User,
        content: vec![
            crate::conversation::Block::Image {
                mime_type: "image/png".into(),
                data: vec![0x89, b'P', b'N', b'G'],
            },
            crate::conversation::Block::text("[文件: a.txt]\n```\nthe whole file\n```"),
            crate::conversation::Block::text("what is this?"),
        ],
    };
    let stored = crate::request::slim::slim(&full, |_| None);
    assert_ne!(stored, full);
    let running = Running {
        to: Destination {
            reply_to: Some(3),
            placeholder: None,
        },
        full: Some(full.clone()),
        outside_content: true,
        voice_reply: true,
    };
    store
        .append_user_message(s.id, &stored, "media", &[], Some(running))
        .await
        .unwrap()
        .unwrap();
    store.report_cut_off_turns(notice).await.unwrap();
    let claimed = store.claim_rerun("media").await.unwrap().unwrap();
    assert_eq!(claimed.message, full, "as the model first saw it");
    assert!(claimed.outside_content && claimed.voice_reply);
    // The session keeps the slimmed message.
    let history = store.load_messages(s.id).await.unwrap();
    assert_eq!(history[0].message, stored);
    // Given back, it is the same again; once it runs, the full copy is dropped.
    store.release_rerun("media").await.unwrap();
    let claimed = store.claim_rerun("media").await.unwrap().unwrap();
    assert_eq!(claimed.message, full);
    store.forget_rerun_input("media").await.unwrap();
    let input: Option<String> =
        sqlx::query_scalar("SELECT input FROM running_turns WHERE turn_id = 'media'")
            .fetch_one(&store.pool)
            .await
            .unwrap();
    assert_eq!(input, None);
}

#[tokio::test]
async fn an_ended_turn_keeps_its_message_in_full_and_its_trust_for_retry() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    let full = Message {
        role: crate::conversation::Role::User,
        content: vec![
            crate::conversation::Block::Image {
                mime_type: "image/png".into(),
                data: vec![0x89, b'P', b'N', b'G'],
            },
            crate::conversation::Block::text("what is this?"),
        ],
    };
    let stored = crate::request::slim::slim(&full, |_| None);
    let running = Running {
        to: Destination::default(),
        full: Some(full.clone()),
        outside_content: true,
        voice_reply: false,
    };
    store
        .append_user_message(s.id, &stored, "photo", &[], Some(running))
        .await
        .unwrap()
        .unwrap();
    let last = store.last_round_start(s.id).await.unwrap().unwrap();
    assert_eq!(
        store.retry_input(s.id, &last).await.unwrap(),
        None,
        "still running"
    );
    store
        .append_with_outbox(
            s.id,
            &[Message::assistant_text("a cat")],
            &answer("photo", "a cat"),
        )
        .await
        .unwrap();
    let kept = store.retry_input(s.id, &last).await.unwrap().unwrap();
    assert_eq!(kept.message, full, "as the model first saw it");
    assert!(kept.outside_content);

    // The next round's plain message replaces it, trusted as it was.
    let running = Running {
        outside_content: false,
        ..Running::default()
    };
    store
        .append_user_message(
            s.id,
            &Message::user_text("thanks"),
            "plain",
            &[],
            Some(running),
        )
        .await
        .unwrap()
        .unwrap();
    store
        .append_with_outbox(
            s.id,
            &[Message::assistant_text("ok")],
            &answer("plain", "ok"),
        )
        .await
        .unwrap();
    assert_eq!(
        store.retry_input(s.id, &last).await.unwrap(),
        None,
        "an older round"
    );
    let newest = store.last_round_start(s.id).await.unwrap().unwrap();
    let kept = store.retry_input(s.id, &newest).await.unwrap().unwrap();
    assert_eq!(kept.message, Message::user_text("thanks"));
    assert!(!kept.outside_content);
}

#[tokio::test]
async fn cut_off_turns_older_than_the_cutoff_are_forgotten_running_ones_never() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    for turn in ["old", "new", "running"] {
        store
            .append_user_message(
                s.id,
                &Message::user_text(turn),
                turn,
                &[],
                Some(Destination::default().into()),
            )
            .await
            .unwrap()
            .unwrap();
    }
    sqlx::query("UPDATE running_turns SET state = 'cut_off' WHERE turn_id != 'running'")
        .execute(&store.pool)
        .await
        .unwrap();
    let day = std::time::Duration::from_secs(24 * 3600);
    sqlx::query("UPDATE running_turns SET created_at = created_at - ?1 WHERE turn_id != 'new'")
        .bind(i64::try_from((8 * day).as_millis()).unwrap())
        .execute(&store.pool)
        .await
        .unwrap();
    assert_eq!(
        store
            .forget_cut_off_turns_older_than(7 * day)
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.claim_rerun("old").await.unwrap(), None);
    assert!(store.claim_rerun("new").await.unwrap().is_some());
    // A turn still running (a crash not yet reported) stays, however old.
    let left: Vec<String> =
        sqlx::query_scalar("SELECT turn_id FROM running_turns ORDER BY turn_id")
            .fetch_all(&store.pool)
            .await
            .unwrap();
    assert_eq!(left, ["new", "running"]);
}

#[tokio::test]
async fn a_turn_reported_after_a_long_outage_stays_a_week_and_goes_with_its_session() {
    let (_dir, store) = store().await;
    let s = store.create_session("p", "m").await.unwrap();
    store
        .append_user_message(
            s.id,
            &Message::user_text("before the outage"),
            "long",
            &[],
            Some(Destination::default().into()),
        )
        .await
        .unwrap()
        .unwrap();
    // agentd stayed down for ten days: the turn started then, it is reported now.
    let day = std::time::Duration::from_secs(24 * 3600);
    sqlx::query("UPDATE running_turns SET created_at = created_at - ?1")
        .bind(i64::try_from((10 * day).as_millis()).unwrap())
        .execute(&store.pool)
        .await
        .unwrap();
    assert_eq!(store.report_cut_off_turns(notice).await.unwrap().len(), 1);
    assert_eq!(
        store
            .forget_cut_off_turns_older_than(7 * day)
            .await
            .unwrap(),
        0
    );
    // Deleting the session forgets it.
    store.delete_sessions(&[s.id]).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM running_turns")
        .fetch_one(&store.pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn the_outside_mark_of_a_chat_message_outlives_its_pruned_outbox_row() {
    let (_dir, store) = store().await;
    let outside = store
        .store_outbox_item(&NewItem {
            outside: true,
            ..answer("o", "what the forward said")
        })
        .await
        .unwrap();
    let clean = store
        .store_outbox_item(&answer("c", "hello"))
        .await
        .unwrap();
    for (seq, id) in [(outside, 300), (clean, 301)] {
        let done = Ack {
            seq,
            parts_done: 1,
            message_ids: vec![id],
            done: true,
            ..Ack::default()
        };
        store.ack_outbox(&done).await.unwrap();
    }
    assert!(store.carried_outside(&[301, 300]).await.unwrap());
    assert!(!store.carried_outside(&[301, 999]).await.unwrap());

    // A week later the rows are pruned: the mark stays.
    let later = Utc::now() + chrono::Duration::seconds(5);
    assert_eq!(store.prune_outbox(later).await.unwrap(), 2);
    assert!(store.carried_outside(&[300]).await.unwrap());
    assert!(!store.carried_outside(&[301]).await.unwrap());
}
