//! A turn's text, keys and bounds.

use super::*;
use crate::incoming::{Media, MediaKind};
use kernel_common::config::Locale;

fn part(id: i32, text: &str, media: bool) -> Part {
    Part {
        thread: None,
        chat_id: 42,
        message_id: id,
        // 2023-11-14 22:13 UTC.
        date: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        media_group: None,
        input: TurnInput {
            text: text.to_owned(),
            media: media.then(|| Media {
                file_id: format!("f{id}"),
                size: 1,
                kind: MediaKind::Image {
                    mime_type: "image/png".into(),
                },
            }),
            outside: false,
            replied_to: None,
        },
        late: false,
    }
}

fn bundle(parts: Vec<Part>) -> Bundle {
    let mut b = Bundle::default();
    for (i, p) in parts.into_iter().enumerate() {
        b.push(i as i32 + 100, p);
    }
    b
}

#[test]
fn each_message_has_its_key_and_the_answer_replies_to_the_last() {
    let b = bundle(vec![part(7, "a", false), part(8, "b", false)]);
    assert_eq!(b.keys(), vec!["tg:42:7", "tg:42:8"]);
    assert_eq!(b.reply_to(), Some(MessageId(8)));
    let rest = b.without(&["tg:42:7".to_owned()]);
    assert_eq!(rest.keys(), vec!["tg:42:8"]);
}

#[test]
fn late_messages_carry_their_send_time_in_the_owners_zone() {
    let mut b = bundle(vec![part(1, "first", false), part(2, "second", false)]);
    b.parts[0].late = true;
    let texts = Texts::new(Locale::Zh).with_timezone(chrono_tz::Asia::Shanghai);
    let now = b.parts[0].date + chrono::Duration::minutes(5);
    assert_eq!(
        b.text(texts, now, false),
        "[离线期间 06:13 收到] first\n\nsecond"
    );
    let en = Texts::new(Locale::En);
    let later = now + chrono::Duration::days(2);
    assert_eq!(
        b.text(en, later, true),
        "[received 2023-11-14 22:13 while Kernel was offline] first\n\n\
         [received 2023-11-14 22:13 while Kernel was offline] second"
    );
}

#[test]
fn a_huge_backlog_is_cut_to_a_bounded_turn_naming_what_was_cut() {
    let parts = (0..3_000).map(|i| part(i, "msg", i % 2 == 0)).collect();
    let mut b = bundle(parts);
    b.bound(Texts::new(Locale::En));
    assert_eq!(b.parts.len(), MAX_PARTS);
    assert_eq!(
        b.parts.last().unwrap().message_id,
        2_999,
        "the latest are kept"
    );
    assert_eq!(
        b.parts.iter().filter(|p| p.input.media.is_some()).count(),
        MAX_ATTACHMENTS
    );
    assert_eq!(b.updates.len(), 3_000, "every update is answered for");
    assert_eq!(b.left_out.len(), 2, "{:?}", b.left_out);
    assert!(b.left_out[0].contains("2950"), "{:?}", b.left_out);
    assert!(b.left_out[1].contains("15 attachment"), "{:?}", b.left_out);
}

#[test]
fn long_texts_are_bounded_by_characters() {
    let long = "字".repeat(MAX_TEXT_CHARS / 2 + 10);
    let mut b = bundle(vec![
        part(1, &long, false),
        part(2, &long, false),
        part(3, "x", false),
    ]);
    b.bound(Texts::new(Locale::Zh));
    assert_eq!(b.parts.len(), 2);
    let mut one = bundle(vec![part(1, &"a".repeat(MAX_TEXT_CHARS * 2), false)]);
    one.bound(Texts::new(Locale::Zh));
    assert_eq!(one.parts[0].input.text.chars().count(), MAX_TEXT_CHARS);
}
