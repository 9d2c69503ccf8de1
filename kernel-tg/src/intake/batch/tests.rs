//! Grouping: one batch is one turn, an album waits for its last part, a text at the split
//! length for its continuation, and a single ordinary message never waits.

use super::*;
use crate::incoming::{Media, MediaKind, TurnInput};
use chrono::DateTime;
use proptest::prelude::*;

fn text(id: i32, text: &str) -> Part {
    Part {
        thread: None,
        chat_id: 1,
        message_id: id,
        date: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        media_group: None,
        input: TurnInput {
            text: text.to_owned(),
            media: None,
            outside: false,
            replied_to: None,
        },
        late: false,
    }
}

fn photo(id: i32, group: Option<&str>) -> Part {
    let mut part = text(id, "");
    part.media_group = group.map(str::to_owned);
    part.input.media = Some(Media {
        file_id: format!("f{id}"),
        size: 10,
        kind: MediaKind::Image {
            mime_type: "image/jpeg".into(),
        },
    });
    part
}

fn ids(bundle: &Bundle) -> Vec<i32> {
    bundle.parts.iter().map(|p| p.message_id).collect()
}

#[test]
fn a_single_ordinary_message_goes_at_once() {
    let mut c = Coalescer::default();
    let now = Instant::now();
    assert!(c.add(1, text(1, "hi")).is_none());
    let bundle = c.end_batch(now).expect("goes at the batch's end");
    assert_eq!(ids(&bundle), vec![1]);
    assert_eq!(c.deadline(), None);
}

#[test]
fn everything_in_one_batch_is_one_turn() {
    let mut c = Coalescer::default();
    for id in 1..=3 {
        assert!(c.add(id, text(id, "x")).is_none());
    }
    let bundle = c.end_batch(Instant::now()).unwrap();
    assert_eq!(ids(&bundle), vec![1, 2, 3]);
    assert_eq!(bundle.updates, vec![1, 2, 3]);
}

#[test]
fn an_album_waits_for_its_quiet_window_and_gathers_later_parts() {
    let mut c = Coalescer::default();
    let t0 = Instant::now();
    c.add(1, photo(1, Some("g")));
    assert!(c.end_batch(t0).is_none(), "an album part waits");
    assert_eq!(c.deadline(), Some(t0 + MEDIA_GROUP_QUIET));
    let t1 = t0 + Duration::from_millis(300);
    assert!(c.add(2, photo(2, Some("g"))).is_none());
    assert!(c.add(3, photo(3, Some("g"))).is_none());
    assert!(c.end_batch(t1).is_none());
    assert!(c.due(t1 + MEDIA_GROUP_QUIET / 2).is_none());
    let bundle = c.due(t1 + MEDIA_GROUP_QUIET).unwrap();
    assert_eq!(ids(&bundle), vec![1, 2, 3]);
}

#[test]
fn another_album_or_a_plain_message_ends_the_waiting_album() {
    let mut c = Coalescer::default();
    let t0 = Instant::now();
    c.add(1, photo(1, Some("g")));
    c.end_batch(t0);
    let first = c
        .add(2, photo(2, Some("h")))
        .expect("a new album ends the first");
    assert_eq!(ids(&first), vec![1]);
    c.end_batch(t0);
    let second = c.add(3, text(3, "hello")).unwrap();
    assert_eq!(ids(&second), vec![2]);
    assert_eq!(ids(&c.end_batch(t0).unwrap()), vec![3]);
}

#[test]
fn a_text_at_the_split_length_waits_for_its_continuation() {
    let mut c = Coalescer::default();
    let t0 = Instant::now();
    c.add(1, text(1, &"a".repeat(4_096)));
    assert!(c.end_batch(t0).is_none());
    assert_eq!(c.deadline(), Some(t0 + SPLIT_WINDOW));
    assert!(c.add(2, text(2, "the rest")).is_none());
    let bundle = c
        .end_batch(t0)
        .expect("the continuation is short: the turn goes");
    assert_eq!(ids(&bundle), vec![1, 2]);
    // Nothing comes: the text goes alone after the window.
    c.add(3, text(3, &"b".repeat(NEAR_SPLIT_CHARS)));
    c.end_batch(t0);
    assert_eq!(ids(&c.due(t0 + SPLIT_WINDOW).unwrap()), vec![3]);
}

#[test]
fn an_unsupported_album_part_is_left_out_of_its_album_only() {
    let mut c = Coalescer::default();
    c.add(1, photo(1, Some("g")));
    assert!(c.left_out(2, Some("g"), "a video".into()));
    assert!(!c.left_out(3, Some("other"), "a video".into()));
    assert!(!c.left_out(4, None, "a sticker".into()));
    c.end_batch(Instant::now());
    let bundle = c.flush().unwrap();
    assert_eq!(bundle.left_out, vec!["a video".to_owned()]);
    assert_eq!(bundle.updates, vec![1, 2]);
}

proptest! {
    /// Whatever arrives, every message ends up in exactly one turn, in order.
    #[test]
    fn every_message_lands_in_one_turn_in_order(
        batches in proptest::collection::vec(
            proptest::collection::vec((0u8..4, 0u8..3), 1..5), 1..6)
    ) {
        let mut c = Coalescer::default();
        let mut now = Instant::now();
        let mut out = Vec::new();
        let mut next = 1;
        for batch in batches {
            for (kind, group) in batch {
                let part = match kind {
                    0 => text(next, "short"),
                    1 => text(next, &"x".repeat(NEAR_SPLIT_CHARS)),
                    _ => photo(next, (group > 0).then_some(if group == 1 { "g" } else { "h" })),
                };
                out.extend(c.add(next, part));
                next += 1;
            }
            out.extend(c.end_batch(now));
            now += Duration::from_millis(500);
            out.extend(c.due(now));
        }
        out.extend(c.flush());
        let all: Vec<i32> = out.iter().flat_map(|b| b.updates.clone()).collect();
        prop_assert_eq!(all, (1..next).collect::<Vec<_>>());
        prop_assert!(out.iter().all(|b| !b.parts.is_empty()));
    }
}
