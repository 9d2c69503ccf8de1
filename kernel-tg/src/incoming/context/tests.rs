//! Context lines from Telegram's JSON, as the Bot API sends it.

use super::*;
use proptest::prelude::*;
use serde_json::{Value, json};

const ZONE: chrono_tz::Tz = chrono_tz::Asia::Shanghai;

fn message(extra: Value) -> Message {
    let mut m = json!({
        "message_id": 9,
        "date": 1_700_000_000,
        "chat": { "id": 1, "type": "private", "first_name": "x" },
        "from": { "id": 1, "is_bot": false, "first_name": "x" },
    });
    m.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_str(&m.to_string()).unwrap()
}

fn replied(from_bot: bool, text: &str) -> Value {
    json!({
        "message_id": 3,
        "date": 1_700_000_000,
        "chat": { "id": 1, "type": "private", "first_name": "x" },
        "from": { "id": if from_bot { 99 } else { 1 }, "is_bot": from_bot, "first_name": "k" },
        "text": text,
    })
}

#[test]
fn a_plain_message_has_no_context() {
    assert!(lines(&message(json!({ "text": "hi" })), Locale::Zh, ZONE).is_empty());
}

#[test]
fn a_quote_wins_over_the_replied_to_text() {
    let m = message(json!({
        "text": "translate that",
        "reply_to_message": replied(true, "Bonjour tout le monde, long answer"),
        "quote": { "text": "Bonjour tout le monde", "position": 0 },
    }));
    assert_eq!(
        lines(&m, Locale::En, ZONE),
        vec!["[Quoted: \"Bonjour tout le monde\"]"]
    );
}

#[test]
fn a_reply_carries_the_replied_to_text_cut_to_its_limit() {
    let long = "字".repeat(MAX_QUOTE_CHARS + 500);
    let m = message(json!({ "text": "翻译", "reply_to_message": replied(true, &long) }));
    let got = lines(&m, Locale::Zh, ZONE);
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("[回复你的消息: \"字"), "{}", got[0]);
    assert!(got[0].chars().count() < MAX_QUOTE_CHARS + 20, "not cut");
    let own = message(json!({ "text": "again", "reply_to_message": replied(false, "my note") }));
    assert_eq!(
        lines(&own, Locale::En, ZONE),
        vec!["[In reply to: \"my note\"]"]
    );
}

#[test]
fn forwards_say_from_whom_and_when_in_the_owners_zone() {
    let user = message(json!({ "text": "fwd", "forward_origin": {
        "type": "user", "date": 1_700_000_000,
        "sender_user": { "id": 5, "is_bot": false, "first_name": "Alice", "last_name": "Li", "username": "alice" }
    }}));
    // 1_700_000_000 is 2023-11-14 22:13 UTC, 06:13 the next day in Shanghai.
    assert_eq!(
        lines(&user, Locale::Zh, ZONE),
        vec!["[转发自 Alice Li (@alice)，2023-11-15 06:13]"]
    );
    let hidden = message(json!({ "text": "fwd", "forward_origin": {
        "type": "hidden_user", "date": 1_700_000_000, "sender_user_name": "Bob"
    }}));
    assert_eq!(
        lines(&hidden, Locale::En, chrono_tz::UTC),
        vec!["[Forwarded from Bob (hidden user), 2023-11-14 22:13]"]
    );
    let channel = message(json!({ "text": "fwd", "forward_origin": {
        "type": "channel", "date": 1_700_000_000, "message_id": 4,
        "chat": { "id": -1_005, "type": "channel", "title": "News", "username": "news" }
    }}));
    assert_eq!(
        lines(&channel, Locale::En, chrono_tz::UTC),
        vec!["[Forwarded from channel News (@news), 2023-11-14 22:13]"]
    );
    let chat = message(json!({ "text": "fwd", "forward_origin": {
        "type": "chat", "date": 1_700_000_000, "author_signature": "admin",
        "sender_chat": { "id": -1_006, "type": "supergroup", "title": "Team" }
    }}));
    assert_eq!(
        lines(&chat, Locale::En, chrono_tz::UTC),
        vec!["[Forwarded from Team (admin), 2023-11-14 22:13]"]
    );
}

#[test]
fn places_contacts_polls_and_dice_become_text() {
    let location = message(json!({ "location": { "latitude": 31.2304, "longitude": 121.4737 } }));
    assert_eq!(
        lines(&location, Locale::En, ZONE),
        vec!["[Location (latitude, longitude): 31.230400, 121.473700]"]
    );
    let venue = message(json!({
        "location": { "latitude": 1.5, "longitude": 2.5 },
        "venue": { "location": { "latitude": 1.5, "longitude": 2.5 }, "title": "Cafe", "address": "1 Road" },
    }));
    assert_eq!(
        lines(&venue, Locale::En, ZONE),
        vec!["[Venue: Cafe — 1 Road (1.500000, 2.500000)]"]
    );
    let contact = message(
        json!({ "contact": { "phone_number": "+86 138", "first_name": "Wang", "last_name": "Wu" } }),
    );
    assert_eq!(
        lines(&contact, Locale::Zh, ZONE),
        vec!["[联系人: Wang Wu, +86 138]"]
    );
    let poll = message(json!({ "poll": {
        "id": "p", "question": "Lunch?", "options": [
            { "text": "noodles", "voter_count": 0 }, { "text": "rice", "voter_count": 0 }
        ],
        "total_voter_count": 0, "is_closed": false, "is_anonymous": true,
        "type": "regular", "allows_multiple_answers": false
    }}));
    assert_eq!(
        lines(&poll, Locale::En, ZONE),
        vec!["[Poll: Lunch?\n- noodles\n- rice]"]
    );
    let dice = message(json!({ "dice": { "emoji": "🎲", "value": 4 } }));
    assert_eq!(lines(&dice, Locale::En, ZONE), vec!["[Dice 🎲: 4]"]);
}

proptest! {
    /// Any quoted text is carried cut to its limit, never longer, never a panic.
    #[test]
    fn any_quote_is_carried_within_its_limit(text in "\\PC{1,3000}") {
        let m = message(json!({
            "text": "x",
            "reply_to_message": replied(true, "y"),
            "quote": { "text": text, "position": 0 },
        }));
        let got = lines(&m, Locale::En, ZONE);
        prop_assert_eq!(got.len(), 1);
        prop_assert!(got[0].chars().count() <= MAX_QUOTE_CHARS + "[Quoted: \"\"]".len());
    }
}
