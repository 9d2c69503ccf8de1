//! Conversation recall (issue 48) through the real daemon: three sessions (a Hangzhou hotel in
//! Chinese, a dentist in English, cooking) found by `SearchHistory` with their session and time,
//! nothing before 2001, bad input refused clearly or searched safely, the model's
//! `history_search` tool, and the index's progress in `GetStatus`.

use std::time::Duration;

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::chat::{completed, session_id, stored, turn};
use tests::config::TestConfig;
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tests::wait::eventually;
use tonic::Code;
use tonic::transport::Channel;

const DEADLINE: Duration = Duration::from_secs(20);

/// Today in the test config's time zone (Asia/Shanghai, UTC+8 all year).
fn today() -> String {
    let tz = chrono::FixedOffset::east_opt(8 * 3600).unwrap();
    chrono::Utc::now()
        .with_timezone(&tz)
        .format("%Y-%m-%d")
        .to_string()
}

fn words(query: &str) -> pb::SearchHistoryRequest {
    pb::SearchHistoryRequest {
        query: query.to_owned(),
        ..Default::default()
    }
}

async fn search(
    c: &mut AgentClient<Channel>,
    req: pb::SearchHistoryRequest,
) -> Result<Vec<pb::HistoryHit>, tonic::Status> {
    c.search_history(req).await.map(|r| r.into_inner().hits)
}

/// Three sessions; their ids in order.
async fn three_sessions(fake: &FakeLlm, c: &mut AgentClient<Channel>) -> [i64; 3] {
    let talks = [
        (
            "帮我订杭州西湖边的酒店，下周五入住",
            "好的，西湖附近有三家酒店可选。",
        ),
        (
            "Remind me: dentist appointment on Friday at 3pm",
            "Noted: the dentist on Friday at 3pm.",
        ),
        (
            "How long do I boil an egg?",
            "About nine minutes for a hard one.",
        ),
    ];
    let mut ids = [0; 3];
    for (i, (said, answer)) in talks.into_iter().enumerate() {
        if i > 0 {
            c.new_session(pb::NewSessionRequest::default())
                .await
                .unwrap();
        }
        fake.push(Script::text(answer));
        let events = turn(c, said).await;
        completed(&events);
        ids[i] = session_id(&events);
    }
    ids
}

#[tokio::test]
async fn three_sessions_are_found_by_words_and_time_and_by_the_model() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    let [hotel, dentist, _] = three_sessions(&fake, &mut h.client).await;
    let c = &mut h.client;

    let hits = eventually("the Hangzhou message indexed", DEADLINE, async || {
        let hits = search(c, words("杭州 酒店")).await.unwrap();
        (!hits.is_empty()).then_some(hits)
    })
    .await;
    assert_eq!(hits[0].session_id, hotel, "{hits:?}");
    assert!(
        hits.iter()
            .any(|h| h.text.contains("杭州西湖边的酒店") && h.role == "user")
    );
    assert!(hits[0].time.starts_with(&today()), "{hits:?}");

    let hits = eventually("the dentist message indexed", DEADLINE, async || {
        let hits = search(c, words("dentist")).await.unwrap();
        (hits.len() == 2).then_some(hits)
    })
    .await;
    assert!(hits.iter().all(|h| h.session_id == dentist), "{hits:?}");
    let asked = hits.iter().find(|h| h.role == "user").unwrap();
    assert!(asked.text.contains("dentist appointment on Friday"));
    assert!(asked.after.starts_with("assistant: Noted"), "{asked:?}");
    assert!(asked.time.starts_with(&today()));

    let old = pb::SearchHistoryRequest {
        before: "2000-12-31".into(),
        ..words("dentist")
    };
    assert!(search(c, old).await.unwrap().is_empty());
    let today_only = pb::SearchHistoryRequest {
        after: today(),
        before: today(),
        ..Default::default()
    };
    assert_eq!(
        search(c, today_only).await.unwrap().len(),
        6,
        "that day's talk"
    );

    // The model asks in a turn; the tool's result carries the dentist message.
    fake.push(Script::tool_call(
        "history_search",
        r#"{"query":"牙医 dentist"}"#,
    ));
    fake.push(Script::text("Friday at 3pm."));
    let events = turn(c, "我的牙医预约是哪天？").await;
    completed(&events);
    let tools = fake.requests().last().unwrap().body["tools"].to_string();
    assert!(tools.contains("\"history_search\""), "offered: {tools}");
    // The tool result as the model got it (the stored one is slimmed once the turn is done).
    let sent = fake.requests().last().unwrap().body.to_string();
    assert!(sent.contains("dentist appointment on Friday"), "{sent}");
    assert!(sent.contains(r#"\"who\":\"owner\""#), "{sent}");
    assert!(
        sent.contains(&format!(r#"\"session\":{dentist}"#)),
        "{sent}"
    );
    assert_eq!(
        stored(&h.cfg, session_id(&events)).await.len(),
        6,
        "the cooking round and one tool round"
    );

    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.history_messages >= 8, "{status:?}");
    h.stop().await;
}

#[tokio::test]
async fn bad_input_is_refused_clearly_or_searched_safely() {
    let fake = FakeLlm::start().await;
    let mut h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    three_sessions(&fake, &mut h.client).await;
    let c = &mut h.client;
    let refused = [
        words("   "),
        pb::SearchHistoryRequest {
            after: "2026-03-02".into(),
            before: "2026-03-01".into(),
            ..words("x")
        },
        pb::SearchHistoryRequest {
            after: "last tuesday".into(),
            ..words("x")
        },
    ];
    for req in refused {
        let e = search(c, req.clone()).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{req:?}");
        // The owner's language (zh by default).
        assert!(
            e.message()
                .chars()
                .any(|ch| ('\u{4e00}'..='\u{9fff}').contains(&ch)),
            "{}",
            e.message()
        );
    }
    let odd = [
        "\"",
        "*",
        "NEAR(dentist egg)",
        "dent*",
        "\"dentist",
        "a OR",
        "col:dentist",
        "^egg",
    ];
    for q in odd {
        search(c, words(q))
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let long = "dentist ".repeat(1_300);
    search(c, words(&long)).await.unwrap();
    let many = pb::SearchHistoryRequest {
        limit: u32::MAX,
        ..words("the")
    };
    assert!(search(c, many).await.unwrap().len() <= 50);
    h.stop().await;
}
