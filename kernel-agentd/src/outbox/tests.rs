//! The outbox service: replay before live, re-attaching mid-turn, placeholders, acks.

use std::time::Duration;

use futures::StreamExt as _;

use super::*;

async fn outbox() -> (tempfile::TempDir, Outbox<String>, i64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
    let session = store.create_session("p", "m").await.unwrap().id;
    (dir, Outbox::new(store, CancellationToken::new()), session)
}

fn answer(turn: &str, text: &str) -> NewItem {
    NewItem {
        turn_id: turn.into(),
        body: ItemBody::Answer {
            text: text.into(),
            voice: None,
            reasoning: String::new(),
        },
        reply_to: Some(1),
        placeholder: None,
        thread_id: None,
        outside: false,
    }
}

async fn next(sub: &mut Subscription<String>) -> Delivery<String> {
    tokio::time::timeout(Duration::from_secs(10), sub.next())
        .await
        .expect("a delivery in time")
        .expect("the subscription goes on")
        .expect("no store error")
}

fn item_seq(d: &Delivery<String>) -> i64 {
    match d {
        Delivery::Item(item) => item.seq,
        Delivery::Live(live) => panic!("expected an item, got {live:?}"),
    }
}

fn live_event(d: &Delivery<String>) -> (String, String) {
    match d {
        Delivery::Live(live) => (live.turn_id.clone(), live.event.clone()),
        Delivery::Item(item) => panic!("expected live progress, got {item:?}"),
    }
}

#[tokio::test]
async fn unacknowledged_items_are_replayed_in_order_then_new_ones_follow() {
    let (_dir, outbox, session) = outbox().await;
    let ended = || "failed".to_owned();
    let a = outbox
        .commit(
            session,
            &[Message::assistant_text("a")],
            answer("t1", "a"),
            ended,
        )
        .await
        .unwrap();
    let b = outbox
        .commit(session, &[], answer("t2", "b"), ended)
        .await
        .unwrap();
    outbox
        .ack(&Ack {
            seq: a,
            parts_done: 1,
            done: true,
            ..Ack::default()
        })
        .await
        .unwrap();

    let mut sub = outbox.subscribe(0);
    assert_eq!(item_seq(&next(&mut sub).await), b);
    let c = outbox
        .commit(session, &[], answer("t3", "c"), ended)
        .await
        .unwrap();
    assert_eq!(item_seq(&next(&mut sub).await), c);
    let mut later = outbox.subscribe(b);
    assert_eq!(item_seq(&next(&mut later).await), c);
    assert_eq!(outbox.backlog().await.unwrap().count, 2);
}

#[tokio::test]
async fn a_client_connecting_mid_turn_re_attaches_and_gets_the_placeholder() {
    let (_dir, outbox, session) = outbox().await;
    let delivery = OwnerDelivery {
        reply_to: Some(5),
        placeholder: None,
        thread_id: None,
    };
    outbox.begin_turn("t", delivery, "started".into());
    outbox.progress("t", "delta".into(), false);
    outbox.progress("t", "tool".into(), true);
    outbox.progress("t", "delta 2".into(), false);
    outbox.progress("other", "ignored".into(), true);
    outbox.set_placeholder("t", 77).await.unwrap();

    let mut sub = outbox.subscribe(0);
    let first = next(&mut sub).await;
    let Delivery::Live(started) = &first else {
        panic!("{first:?}")
    };
    assert_eq!(started.event, "started");
    assert_eq!(
        started.delivery,
        Some(OwnerDelivery {
            reply_to: Some(5),
            placeholder: Some(77),
            thread_id: None,
        })
    );
    assert_eq!(
        live_event(&next(&mut sub).await),
        ("t".into(), "tool".into())
    );
    outbox.progress("t", "delta 3".into(), false);
    assert_eq!(
        live_event(&next(&mut sub).await),
        ("t".into(), "delta 3".into())
    );
    let seq = outbox
        .commit(session, &[], answer("t", "done"), || "failed".into())
        .await
        .unwrap();
    let Delivery::Item(item) = next(&mut sub).await else {
        panic!("expected the item")
    };
    assert_eq!(
        (item.seq, item.placeholder, item.reply_to),
        (seq, Some(77), Some(1))
    );
    // The turn is over: a new subscriber gets only the item, no stale `started`.
    let mut fresh = outbox.subscribe(0);
    assert_eq!(item_seq(&next(&mut fresh).await), seq);
    assert_eq!(
        outbox.inner.store.pending_outbox(0).await.unwrap()[0].placeholder,
        Some(77)
    );
}

#[tokio::test]
async fn a_failed_store_ends_the_live_turn_and_subscriptions_end_at_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("kernel.db")).await.unwrap();
    let cancel = CancellationToken::new();
    let outbox: Outbox<String> = Outbox::new(store.clone(), cancel.clone());
    let mut sub = outbox.subscribe(0);
    outbox.begin_turn("t", OwnerDelivery::default(), "started".into());
    assert_eq!(live_event(&next(&mut sub).await).1, "started");
    // Session 999 does not exist: nothing is stored.
    let err = outbox
        .commit(
            999,
            &[Message::assistant_text("x")],
            answer("t", "x"),
            || "failed".into(),
        )
        .await;
    assert!(err.is_err());
    assert_eq!(
        live_event(&next(&mut sub).await),
        ("t".into(), "failed".into())
    );
    cancel.cancel();
    let end = tokio::time::timeout(Duration::from_secs(10), sub.next()).await;
    assert!(matches!(end, Ok(None)), "{end:?}");
}
