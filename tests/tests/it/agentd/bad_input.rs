//! Hostile and careless input through the real gRPC service (KERNEL.md §7 "Bad input"): each is
//! refused with the proper status code and a human message (no SQL, FTS5, panic text or secret)
//! or answered cleanly, and nothing changes afterwards.

use std::time::{Duration, Instant};

use kernel_proto::v1 as pb;
use kernel_proto::v1::chat_event::Event;
use tests::chat::{completed, next, rest, send, until};
use tests::config::{AGENTD_TOKEN, PROVIDER_KEY, TELEGRAM_TOKEN, TestConfig};
use tests::fake_llm::{FakeLlm, Script};
use tests::harness::Harness;
use tonic::{Code, Status};

/// Text that must never reach a client in an error message.
const LEAKS: &[&str] = &[
    "sql",
    "fts5",
    "fts",
    "syntax error",
    "no such",
    "constraint",
    "panicked",
    "called `",
    "unwrap",
    "internal error",
    "rusqlite",
    "select ",
    "insert ",
    "delete from",
];

/// Asserts `status` has `code` and a short, clean message for a human.
pub(super) fn assert_refused(status: &Status, code: Code, what: &str) {
    assert_eq!(status.code(), code, "{what}: {status:?}");
    assert_clean(status, what);
}

fn assert_clean(status: &Status, what: &str) {
    let msg = status.message();
    assert!(!msg.trim().is_empty(), "{what}: an empty message");
    assert!(
        msg.chars().count() <= 2_000,
        "{what}: a message no human reads ({} characters)",
        msg.chars().count()
    );
    let lower = msg.to_lowercase();
    for leak in LEAKS {
        assert!(!lower.contains(leak), "{what}: {leak:?} leaked in {msg:?}");
    }
    for secret in [PROVIDER_KEY, TELEGRAM_TOKEN, AGENTD_TOKEN] {
        assert!(!msg.contains(secret), "{what}: a secret leaked in {msg:?}");
        assert!(
            !msg.contains(&secret[4..secret.len() - 4]),
            "{what}: {msg:?}"
        );
    }
}

pub(super) async fn start() -> (FakeLlm, Harness) {
    let fake = FakeLlm::start().await;
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    (fake, h)
}

fn chat(text: &str, attachments: Vec<pb::Attachment>) -> pb::ChatRequest {
    pb::ChatRequest {
        text: text.into(),
        attachments,
        ..Default::default()
    }
}

fn image(mime: &str, data: Vec<u8>) -> pb::Attachment {
    pb::Attachment {
        kind: Some(pb::attachment::Kind::Image(pb::Image {
            data,
            mime_type: mime.into(),
        })),
    }
}

pub(super) async fn sessions(h: &mut Harness) -> Vec<pb::SessionInfo> {
    h.client
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .unwrap()
        .into_inner()
        .sessions
}

async fn memories(h: &mut Harness) -> Vec<pb::MemoryInfo> {
    h.client
        .list_memories(pb::ListMemoriesRequest {})
        .await
        .unwrap()
        .into_inner()
        .memories
}

pub(super) async fn status(h: &mut Harness) -> pb::GetStatusResponse {
    h.client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner()
}

async fn add_memory(h: &mut Harness, text: &str) -> Result<i64, Status> {
    h.client
        .add_memory(pb::AddMemoryRequest { text: text.into() })
        .await
        .map(|r| r.into_inner().id)
}

#[tokio::test]
async fn empty_blank_oversized_and_bad_image_messages_are_refused_before_any_model_call() {
    let (fake, mut h) = start().await;
    let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3];
    let cases = [
        ("empty", chat("", vec![])),
        ("whitespace", chat(" \t\n\u{3000} \r\n", vec![])),
        ("200 000 characters", chat(&"长".repeat(200_000), vec![])),
        (
            "no attachment kind",
            chat("", vec![pb::Attachment { kind: None }]),
        ),
        (
            "pdf as image",
            chat("look", vec![image("application/pdf", png.clone())]),
        ),
        (
            "svg as image",
            chat("look", vec![image("image/svg+xml", png.clone())]),
        ),
        ("no mime type", chat("look", vec![image("", png.clone())])),
        (
            "10 000-character mime type",
            chat("look", vec![image(&"x".repeat(10_000), png.clone())]),
        ),
        (
            "empty image",
            chat("look", vec![image("image/png", vec![])]),
        ),
        (
            "two bad of two",
            chat(
                "look",
                vec![
                    image("text/html", png.clone()),
                    image("application/pdf", png.clone()),
                ],
            ),
        ),
    ];
    for (what, req) in cases {
        let t = Instant::now();
        let err = h.client.chat(req).await.unwrap_err();
        assert_refused(&err, Code::InvalidArgument, what);
        assert!(t.elapsed() < Duration::from_secs(5), "{what}: at once");
    }
    assert!(fake.requests().is_empty(), "no model call");
    assert!(sessions(&mut h).await.is_empty(), "nothing stored");
    let s = status(&mut h).await;
    assert!(s.running_turn.is_none() && s.last_error.is_none(), "{s:?}");

    // The service is unharmed: a good message still runs a turn.
    fake.push(Script::text("fine"));
    let events = rest(&mut send(&mut h.client, "hello").await).await;
    assert_eq!(completed(&events).text, "fine");
    assert_eq!(fake.requests().len(), 1);

    // One bad attachment of several (an album) is left out and named; the rest runs.
    fake.push(Script::text("one image seen"));
    let mut stream = h
        .client
        .chat(chat(
            "look",
            vec![image("image/png", png.clone()), image("text/html", png)],
        ))
        .await
        .unwrap()
        .into_inner();
    let events = rest(&mut stream).await;
    let Some(Event::Started(started)) = events.first() else {
        panic!("a turn: {events:?}")
    };
    assert_eq!(started.left_out.len(), 1, "{started:?}");
    assert_eq!(completed(&events).text, "one image seen");
    assert_eq!(fake.requests().len(), 2);
    h.stop().await;
}

#[tokio::test]
async fn a_request_over_the_size_cap_is_refused_and_the_server_keeps_answering() {
    let (fake, mut h) = start().await;
    let huge = vec![0u8; kernel_agentd::server::MAX_REQUEST_BYTES + 1];
    let err = h
        .client
        .chat(chat("look", vec![image("image/png", huge)]))
        .await
        .unwrap_err();
    assert!(
        matches!(err.code(), Code::ResourceExhausted | Code::OutOfRange),
        "{err:?}"
    );
    assert_clean(&err, "oversized request");
    assert!(fake.requests().is_empty(), "no model call");

    // Same connection and a fresh one both keep working.
    assert_eq!(status(&mut h).await.provider, "fake");
    let mut other = h.client().await;
    assert!(other.get_status(pb::GetStatusRequest {}).await.is_ok());
    assert!(sessions(&mut h).await.is_empty(), "nothing stored");
    h.stop().await;
}

#[tokio::test]
async fn bad_memory_numbers_and_texts_are_refused_and_change_nothing() {
    let (fake, mut h) = start().await;
    add_memory(&mut h, "The owner's cat is called Miso.")
        .await
        .unwrap();
    add_memory(&mut h, "The owner prefers tea.").await.unwrap();

    for n in [0, 1, u32::MAX] {
        let err = h
            .client
            .delete_memories(pb::DeleteMemoriesRequest {
                numbers: vec![n],
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::FailedPrecondition, &format!("delete #{n}"));
    }
    let before = memories(&mut h).await;
    assert_eq!(before.len(), 2);
    for n in [0, 3, 1_000_000, u32::MAX] {
        let err = h
            .client
            .delete_memories(pb::DeleteMemoriesRequest {
                numbers: vec![1, n],
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("delete #{n}"));
    }
    let err = h
        .client
        .delete_memories(pb::DeleteMemoriesRequest {
            numbers: vec![],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_refused(&err, Code::InvalidArgument, "delete nothing");

    for (what, text) in [
        ("empty", String::new()),
        ("whitespace", " \n\t ".to_owned()),
        ("20 000 characters", "记".repeat(20_000)),
        ("20 000 ASCII", "a".repeat(20_000)),
    ] {
        let err = add_memory(&mut h, &text).await.unwrap_err();
        assert_refused(&err, Code::InvalidArgument, what);
    }
    assert_eq!(memories(&mut h).await, before, "nothing changed");
    assert!(fake.requests().is_empty(), "no model call");
    h.stop().await;
}

#[tokio::test]
async fn bad_provider_and_model_names_are_refused_and_change_nothing() {
    let (fake, mut h) = start().await;
    let long_ascii = "p".repeat(10_000);
    let long_wide = "模".repeat(10_000);
    for name in ["", " ", long_ascii.as_str(), long_wide.as_str(), "fake\0"] {
        let what = format!("provider of {} chars", name.chars().count());
        let err = h
            .client
            .select_provider(pb::SelectProviderRequest { name: name.into() })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &what);
        let err = h
            .client
            .select_model(pb::SelectModelRequest { model: name.into() })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("model: {what}"));
    }
    let s = status(&mut h).await;
    assert_eq!(
        (s.provider.as_str(), s.model.as_str()),
        ("fake", "fake-model")
    );
    assert!(fake.requests().is_empty(), "no model call");

    // The selection survives a restart unchanged too.
    let mut h = h.restart().await;
    let s = status(&mut h).await;
    assert_eq!(
        (s.provider.as_str(), s.model.as_str()),
        ("fake", "fake-model")
    );
    h.stop().await;
}

#[tokio::test]
async fn memory_search_takes_any_text_as_words_and_clamps_its_limit() {
    let (_fake, mut h) = start().await;
    let hostile = r#"He said "hello" to *everyone* NEAR(the door) col:value OR not; '; DROP TABLE memories; --"#;
    add_memory(&mut h, hostile).await.unwrap();
    for i in 0..60 {
        add_memory(&mut h, &format!("pebble note number {i}"))
            .await
            .unwrap();
    }
    let fts = status(&mut h).await.fts5_available;
    let count = memories(&mut h).await.len();
    assert_eq!(count, 61);

    let queries = [
        "\"",
        "\"\"\"",
        "*",
        "hello*",
        "NEAR(",
        "NEAR(the door",
        "col:",
        "col:value",
        "text:door",
        "OR",
        "AND OR NOT",
        "'; DROP TABLE memories; --",
        "^door",
        "(((",
        "%",
        "_",
        "\\",
        "\u{0}",
    ];
    for query in queries {
        let reply = h
            .client
            .search_memories(pb::SearchMemoriesRequest {
                query: query.into(),
                limit: u32::MAX,
                numbered: false,
            })
            .await
            .unwrap_or_else(|e| panic!("{query:?} refused: {e:?}"))
            .into_inner();
        assert!(
            reply.mode == "fts5" || reply.mode == "like",
            "{query:?}: {reply:?}"
        );
        assert!(reply.memories.len() <= 50, "{query:?}: clamped");
    }

    // SQL and FTS5 syntax are searched as words and find the memory holding them.
    for query in ["'; DROP TABLE memories; --", "NEAR(the door", "col:value"] {
        let reply = h
            .client
            .search_memories(pb::SearchMemoriesRequest {
                query: query.into(),
                limit: 0,
                numbered: false,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            reply.memories.first().map(|m| m.text.as_str()),
            Some(hostile),
            "{query:?}: {reply:?}"
        );
        if fts {
            assert_eq!(reply.mode, "fts5", "{query:?}: FTS5 did not choke");
        }
    }

    // The limit is clamped, not refused.
    let reply = h
        .client
        .search_memories(pb::SearchMemoriesRequest {
            query: "pebble".into(),
            limit: u32::MAX,
            numbered: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.memories.len(), 50, "u32::MAX is clamped to 50");
    let reply = h
        .client
        .search_memories(pb::SearchMemoriesRequest {
            query: "pebble".into(),
            limit: 0,
            numbered: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.memories.len(), 5, "0 means the default");

    // An empty query is a clear refusal.
    for query in ["", "   "] {
        let err = h
            .client
            .search_memories(pb::SearchMemoriesRequest {
                query: query.into(),
                limit: 5,
                numbered: false,
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, "empty query");
    }
    assert_eq!(memories(&mut h).await.len(), count, "the table is intact");
    h.stop().await;
}

#[tokio::test]
async fn twenty_concurrent_chats_run_exactly_one_turn_and_listing_keeps_answering() {
    let (fake, mut h) = start().await;
    let (held, release) = Script::hold("the one answer");
    fake.push(held);
    let mut first = send(&mut h.client, "one").await;
    until(&mut first, |e| matches!(e, Event::TextDelta(_))).await;

    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(h.client().await);
    }
    let t = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            tokio::spawn(async move {
                let mut stream = send(&mut c, &format!("flood {i}")).await;
                let mut events = Vec::new();
                while let Some(e) = next(&mut stream).await {
                    events.push(e);
                }
                events
            })
        })
        .collect();

    let s = status(&mut h).await;
    assert!(s.running_turn.is_some(), "{s:?}");
    assert_eq!(sessions(&mut h).await.len(), 1, "listing answers meanwhile");

    let mut flagged = 0;
    for task in tasks {
        let events = task.await.unwrap();
        match events.as_slice() {
            [Event::Busy(b)] => flagged += usize::from(b.first_in_window),
            other => panic!("expected one busy event, got {other:?}"),
        }
    }
    assert!(t.elapsed() < Duration::from_secs(5), "refused at once");
    assert!(flagged <= 1, "at most one refusal flagged per window");
    assert_eq!(fake.requests().len(), 1, "exactly one turn runs");

    let s = status(&mut h).await;
    assert!(s.running_turn.is_some(), "the held turn still runs");
    release.release();
    let events = rest(&mut first).await;
    assert_eq!(completed(&events).text, "the one answer");
    assert_eq!(fake.requests().len(), 1);
    assert!(status(&mut h).await.running_turn.is_none());
    h.stop().await;
}
