//! Tests of the conversation index and its search.

use kernel_common::config::Locale;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::*;
use crate::conversation::{Block, Message};
use crate::test_support::env;

/// 2026-03-10 12:00 +08:00.
const MARCH_10_NOON: i64 = 1_773_115_200_000;

async fn history(store: &Store) -> (History, CancellationToken) {
    let cancel = CancellationToken::new();
    let h = History::open(
        store.clone(),
        "Asia/Shanghai".parse().unwrap(),
        Locale::En,
        &TaskTracker::new(),
        cancel.clone(),
    )
    .await;
    (h, cancel)
}

/// Three sessions: a Hangzhou hotel (zh), a dentist (en), cooking; returns their ids.
async fn three_sessions(store: &Store) -> [i64; 3] {
    let mut ids = [0; 3];
    let talks: [&[(&str, &str)]; 3] = [
        &[
            (
                "帮我订杭州西湖边的酒店，下周五入住",
                "好的，我找到了三家西湖附近的酒店。",
            ),
            ("就订第二家吧", "已记下：第二家，湖滨路那家。"),
        ],
        &[(
            "Remind me: dentist appointment on Friday at 3pm",
            "Noted: the dentist on Friday at 3pm.",
        )],
        &[(
            "How long do I boil an egg?",
            "About nine minutes for a hard-boiled egg.",
        )],
    ];
    for (i, talk) in talks.iter().enumerate() {
        let s = store.create_session("p", "m").await.unwrap();
        store
            .set_session_title(s.id, ["杭州酒店", "Dentist", "Cooking"][i])
            .await
            .unwrap();
        for (user, answer) in *talk {
            let m = [Message::user_text(*user), Message::assistant_text(*answer)];
            let msg_ids = store.append_messages(s.id, &m).await.unwrap();
            for (k, id) in msg_ids.iter().enumerate() {
                let at = MARCH_10_NOON + (i as i64) * 86_400_000 + k as i64 * 60_000;
                store.set_message_time(*id, at).await.unwrap();
            }
        }
        ids[i] = s.id;
    }
    ids
}

fn q(query: &str) -> HistoryQuery<'_> {
    HistoryQuery {
        query,
        ..Default::default()
    }
}

#[tokio::test]
async fn three_sessions_are_found_by_words_with_session_and_time() {
    let env = env("").await;
    let [hotel, dentist, _] = three_sessions(&env.store).await;
    let (h, _cancel) = history(&env.store).await;
    h.catch_up().await.unwrap();
    let hits = h.search(&q("杭州 酒店")).await.unwrap();
    assert!(!hits.is_empty());
    assert_eq!(hits[0].session_id, hotel);
    assert_eq!(hits[0].session_title, "杭州酒店");
    assert!(hits[0].text.contains("杭州"), "{:?}", hits[0]);
    assert_eq!(h.local_time(hits[0].at), "2026-03-10 12:00");
    assert_eq!(hits[0].after.as_ref().unwrap().role, Role::Assistant);
    let hits = h.search(&q("dentist")).await.unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|hit| hit.session_id == dentist));
    let asked = hits.iter().find(|hit| hit.role == Role::User).unwrap();
    assert!(asked.text.contains("dentist appointment"));
    assert_eq!(h.local_time(asked.at), "2026-03-11 12:00");
    // Bilingual: either word finds it.
    let hits = h.search(&q("牙医 dentist")).await.unwrap();
    assert_eq!(hits[0].session_id, dentist);
    // Before 2001: nothing.
    let old = HistoryQuery {
        query: "dentist",
        before: Some("2000-12-31"),
        ..Default::default()
    };
    assert!(h.search(&old).await.unwrap().is_empty());
    // A day with an empty query: that day's talk, oldest first.
    let day = HistoryQuery {
        after: Some("2026-03-12"),
        before: Some("2026-03-12"),
        ..Default::default()
    };
    let hits = h.search(&day).await.unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits[0].text.contains("egg"));
    assert_eq!(hits[1].role, Role::Assistant);
}

#[tokio::test]
async fn bad_input_is_refused_clearly_or_searched_safely() {
    let env = env("").await;
    three_sessions(&env.store).await;
    let (h, _cancel) = history(&env.store).await;
    h.catch_up().await.unwrap();
    assert!(matches!(
        h.search(&q("  ")).await,
        Err(HistoryError::EmptyQuery)
    ));
    let reversed = HistoryQuery {
        query: "x",
        after: Some("2026-03-02"),
        before: Some("2026-03-01"),
        ..Default::default()
    };
    let e = h.search(&reversed).await.unwrap_err();
    assert!(matches!(e, HistoryError::Range(RangeError::Reversed)));
    assert!(e.owner_text(Locale::Zh).unwrap().contains("颠倒"));
    for odd in [
        "\"",
        "*",
        "NEAR(a b)",
        "dent*",
        "\"dentist",
        "a OR",
        ":",
        "西湖\" OR \"x",
    ] {
        h.search(&q(odd))
            .await
            .unwrap_or_else(|e| panic!("{odd}: {e}"));
    }
    let long = "牙医 dentist ".repeat(1_000);
    let hits = h.search(&q(&long)).await.unwrap();
    assert!(!hits.is_empty());
    let huge = HistoryQuery {
        query: "酒店",
        limit: usize::MAX,
        ..Default::default()
    };
    assert!(h.search(&huge).await.unwrap().len() <= MAX_LIMIT);
}

#[tokio::test]
async fn new_messages_are_indexed_and_deleted_sessions_leave_the_index() {
    let env = env("").await;
    let store = &env.store;
    let [hotel, ..] = three_sessions(store).await;
    let (h, cancel) = history(store).await;
    // The background indexer catches up with existing messages and then follows new ones.
    let s = store.create_session("p", "m").await.unwrap();
    let tool_round = Message {
        role: Role::User,
        content: vec![Block::ToolResult {
            call_id: "c".into(),
            content: "zebra-secret".into(),
            is_error: false,
        }],
    };
    store
        .append_messages(
            s.id,
            &[
                Message::user_text("the zebra password is in the drawer"),
                tool_round,
            ],
        )
        .await
        .unwrap();
    let mut waited = 0;
    loop {
        let p = h.progress().await.unwrap();
        if p.done == p.total && !h.search(&q("zebra")).await.unwrap().is_empty() {
            break;
        }
        waited += 1;
        assert!(waited < 500, "the indexer did not catch up: {p:?}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let hits = h.search(&q("zebra")).await.unwrap();
    assert_eq!(hits.len(), 1, "tool results are not indexed");
    assert!(h.search(&q("西湖")).await.unwrap()[0].session_id == hotel);
    store.delete_sessions(&[hotel]).await.unwrap();
    assert!(h.search(&q("西湖")).await.unwrap().is_empty());
    let ids = store.history_index_ids(true).await.unwrap();
    let docs = store.history_index_ids(false).await.unwrap();
    assert_eq!(ids, docs, "the FTS entries follow the docs");
    cancel.cancel();
}

#[tokio::test]
async fn a_new_segmenter_reindexes_everything() {
    let env = env("").await;
    three_sessions(&env.store).await;
    let (h, _c) = history(&env.store).await;
    h.catch_up().await.unwrap();
    let before = env.store.history_index_ids(true).await.unwrap();
    assert_eq!(before.len(), 8);
    env.store
        .prepare_history_index("another-segmenter", true)
        .await
        .unwrap();
    assert!(env.store.history_index_ids(true).await.unwrap().is_empty());
    assert_eq!(env.store.history_cursor().await.unwrap(), 0);
    h.catch_up().await.unwrap();
    assert_eq!(env.store.history_index_ids(true).await.unwrap(), before);
}

#[tokio::test]
async fn a_text_said_again_and_again_is_one_hit() {
    let env = env("").await;
    let s = env.store.create_session("p", "m").await.unwrap();
    for fact in ["the boiler is serviced in May", "the boiler code is 4417"] {
        let m = [
            Message::user_text(fact),
            Message::assistant_text("Got it, noted."),
        ];
        env.store.append_messages(s.id, &m).await.unwrap();
    }
    let (h, _c) = history(&env.store).await;
    h.catch_up().await.unwrap();
    let hits = h.search(&q("noted boiler")).await.unwrap();
    let texts: Vec<&str> = hits.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(
        texts.iter().filter(|t| **t == "Got it, noted.").count(),
        1,
        "{texts:?}"
    );
    assert_eq!(
        hits.len(),
        3,
        "both facts and one acknowledgement: {texts:?}"
    );
    // A day's listing keeps every message.
    let all = HistoryQuery {
        after: Some("2000-01-01"),
        ..Default::default()
    };
    assert_eq!(h.search(&all).await.unwrap().len(), 4);
}

#[tokio::test]
async fn a_word_said_thousands_of_times_does_not_hide_a_rare_one() {
    use crate::store::history_index::SCORED_PER_QUERY;
    let env = env("").await;
    let s = env.store.create_session("p", "m").await.unwrap();
    let first = [
        Message::user_text("the boiler code is 4417"),
        Message::assistant_text("Noted, the code."),
    ];
    let ids = env.store.append_messages(s.id, &first).await.unwrap();
    // More messages with a common word than one full-text query scores, all newer.
    let chatter: Vec<Message> = (0..SCORED_PER_QUERY + 100)
        .map(|i| Message::user_text(format!("nice weather again, day {i}")))
        .collect();
    env.store.append_messages(s.id, &chatter).await.unwrap();
    let (h, _c) = history(&env.store).await;
    h.catch_up().await.unwrap();
    // No message has both words: each term alone, summed, and the rare word's message is first
    // (a single OR query over the newest matches would have missed it).
    for query in ["boiler weather", "weather boiler"] {
        let hits = h.search(&q(query)).await.unwrap();
        assert_eq!(hits[0].message_id, ids[0], "{query}: {:?}", hits[0]);
        assert!(hits[0].before.is_none());
        assert_eq!(hits[0].after.as_ref().unwrap().text, "Noted, the code.");
        assert_eq!(hits.len(), DEFAULT_LIMIT);
        // The others are the newest chatter, each with its neighbours.
        assert!(hits[1].text.contains("nice weather"), "{:?}", hits[1]);
        assert!(hits[1].before.is_some(), "{:?}", hits[1]);
    }
    // Within a time range too (the ranged form of the same queries).
    let ranged = HistoryQuery {
        query: "boiler weather",
        after: Some("2000-01-01"),
        ..Default::default()
    };
    assert_eq!(h.search(&ranged).await.unwrap()[0].message_id, ids[0]);
}

/// Without `[embeddings]`, a question in one language finds what was said in the other through
/// the lexicon.
#[tokio::test]
async fn a_question_in_the_other_language_finds_the_message_without_vectors() {
    let env = env("").await;
    let [hotel, dentist, _] = three_sessions(&env.store).await;
    let s = env.store.create_session("p", "m").await.unwrap();
    let zh = [
        Message::user_text("医生说我每天吃阿莫西林，饭后一片，连吃两周"),
        Message::assistant_text("好的，记下了。"),
    ];
    let said = env.store.append_messages(s.id, &zh).await.unwrap()[0];
    let (h, _cancel) = history(&env.store).await;
    h.catch_up().await.unwrap();
    // English question, Chinese message.
    let hits = h
        .search(&q("Which medicine did the doctor prescribe?"))
        .await
        .unwrap();
    assert_eq!(hits[0].message_id, said, "{hits:?}");
    // Chinese question, English message.
    let hits = h.search(&q("牙医预约")).await.unwrap();
    assert!(!hits.is_empty(), "{hits:?}");
    assert!(hits.iter().all(|hit| hit.session_id == dentist), "{hits:?}");
    // A long message found through the lexicon is shown around the word that matched.
    let long = format!(
        "{}医生说要多休息{}",
        "今天天气不错。".repeat(120),
        "明天再说。".repeat(60)
    );
    let s2 = env.store.create_session("p", "m").await.unwrap();
    let long_id = env
        .store
        .append_messages(s2.id, &[Message::user_text(&long)])
        .await
        .unwrap()[0];
    h.catch_up().await.unwrap();
    let hits = h.search(&q("doctor")).await.unwrap();
    let hit = hits.iter().find(|hit| hit.message_id == long_id).unwrap();
    assert!(hit.text.contains("医生说要多休息"), "{}", hit.text);
    assert!(hit.text.starts_with('…'), "{}", hit.text);
    // The other language's words never displace the question's own: 酒店 is the hotel.
    let hits = h.search(&q("酒店")).await.unwrap();
    assert!(hits.iter().all(|hit| hit.session_id == hotel), "{hits:?}");
}
