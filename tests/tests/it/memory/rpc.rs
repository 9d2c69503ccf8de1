//! The memory RPCs through the real gRPC service: AddMemory validation, ListMemories `#n`,
//! DeleteMemories by `#n` (malformed / out-of-range refused with nothing changed), and
//! SearchMemories (mode, hostile queries, limits).

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::config::TestConfig;
use tests::fake_llm::FakeLlm;
use tests::harness::Harness;
use tonic::Code;
use tonic::transport::Channel;

type Client = AgentClient<Channel>;

async fn start() -> (FakeLlm, Harness) {
    let fake = FakeLlm::start().await;
    let h = Harness::start(TestConfig::new(&fake.url(), "")).await;
    (fake, h)
}

async fn add(c: &mut Client, text: &str) -> Result<i64, tonic::Status> {
    let req = pb::AddMemoryRequest { text: text.into() };
    c.add_memory(req).await.map(|r| r.into_inner().id)
}

async fn list(c: &mut Client) -> Vec<pb::MemoryInfo> {
    let req = pb::ListMemoriesRequest {};
    c.list_memories(req).await.unwrap().into_inner().memories
}

async fn delete(c: &mut Client, numbers: &[u32]) -> Result<u32, tonic::Status> {
    let req = pb::DeleteMemoriesRequest {
        numbers: numbers.to_vec(),
        ..Default::default()
    };
    c.delete_memories(req).await.map(|r| r.into_inner().deleted)
}

async fn search(c: &mut Client, query: &str, limit: u32) -> pb::SearchMemoriesResponse {
    let req = pb::SearchMemoriesRequest {
        query: query.into(),
        limit,
        numbered: false,
    };
    match c.search_memories(req).await {
        Ok(r) => r.into_inner(),
        Err(e) => panic!("search {query:?} failed: {e:?}"),
    }
}

fn ids(list: &[pb::MemoryInfo]) -> Vec<i64> {
    list.iter().map(|m| m.id).collect()
}

#[tokio::test]
async fn add_memory_refuses_empty_and_oversized_text() {
    let (_fake, mut h) = start().await;
    for bad in [String::new(), " \n\t".into(), "长".repeat(10_001)] {
        let err = add(&mut h.client, &bad).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    }
    assert!(list(&mut h.client).await.is_empty(), "nothing stored");
    let id = add(&mut h.client, &"长".repeat(10_000)).await.unwrap();
    assert!(id > 0);
    let again = add(&mut h.client, &"长".repeat(10_000)).await.unwrap();
    assert_eq!(again, id, "the same text is not stored twice");
    h.stop().await;
}

#[tokio::test]
async fn listing_numbers_memories_newest_first_and_deletes_by_number() {
    let (_fake, mut h) = start().await;
    let err = delete(&mut h.client, &[1]).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "no listing yet");

    let mut added = Vec::new();
    for text in [
        "主人喜欢猫",
        "主人住在上海",
        "The owner likes jazz",
        "主人的生日是五月三日",
    ] {
        added.push(add(&mut h.client, text).await.unwrap());
    }
    let listing = list(&mut h.client).await;
    assert_eq!(
        listing.iter().map(|m| m.number).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert_eq!(
        ids(&listing),
        added.iter().rev().copied().collect::<Vec<_>>()
    );
    assert_eq!(listing[3].text, "主人喜欢猫");
    let date = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}$").unwrap();
    assert!(
        listing.iter().all(|m| date.is_match(&m.date)),
        "{listing:?}"
    );

    // Malformed or out-of-range numbers are refused and nothing is deleted.
    for bad in [vec![], vec![0], vec![5], vec![2, 99], vec![u32::MAX]] {
        let err = delete(&mut h.client, &bad).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad:?}: {err:?}");
        assert_eq!(
            list(&mut h.client).await.len(),
            4,
            "{bad:?} changed nothing"
        );
    }
    // #2 (jazz) and #4 (猫); duplicates collapse.
    assert_eq!(delete(&mut h.client, &[2, 4, 2]).await.unwrap(), 2);
    // Numbers keep meaning the latest listing's: #3 is still "主人住在上海".
    assert_eq!(delete(&mut h.client, &[3]).await.unwrap(), 1);
    assert_eq!(
        delete(&mut h.client, &[2]).await.unwrap(),
        0,
        "already gone"
    );
    let left = list(&mut h.client).await;
    assert_eq!(ids(&left), [added[3]]);
    assert_eq!(left[0].number, 1);
    h.stop().await;
}

#[tokio::test]
async fn search_finds_words_reports_its_mode_and_survives_restarts() {
    let (_fake, mut h) = start().await;
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(status.fts5_available);
    for text in [
        "北京明天的天气怎么样",
        "北京的天气很好",
        "主人喜欢喝乌龙茶",
        "The owner's cat is called Miso",
    ] {
        add(&mut h.client, text).await.unwrap();
    }
    let found = search(&mut h.client, "天气", 0).await;
    assert_eq!(found.mode, "fts5");
    let texts: Vec<&str> = found.memories.iter().map(|m| m.text.as_str()).collect();
    assert!(
        texts.contains(&"北京明天的天气怎么样") && texts.contains(&"北京的天气很好"),
        "{texts:?}"
    );
    assert!(
        found
            .memories
            .iter()
            .all(|m| m.number == 0 && !m.date.is_empty())
    );
    assert_eq!(search(&mut h.client, "天气", 1).await.memories.len(), 1);
    let found = search(&mut h.client, "cat", 0).await;
    assert_eq!(found.memories[0].text, "The owner's cat is called Miso");
    let found = search(&mut h.client, "Mis", 0).await;
    assert_eq!(
        (found.mode.as_str(), found.memories.len()),
        ("like", 1),
        "LIKE when FTS5 finds nothing"
    );

    let mut h = h.restart().await;
    let found = search(&mut h.client, "乌龙茶", 0).await;
    assert_eq!((found.mode.as_str(), found.memories.len()), ("fts5", 1));
    h.stop().await;
}

#[tokio::test]
async fn hostile_queries_never_fail() {
    let (_fake, mut h) = start().await;
    add(
        &mut h.client,
        "Notes: NEAR the OR gate, col: value, a * star and a \"quote\"",
    )
    .await
    .unwrap();
    add(&mut h.client, "北京的天气很好").await.unwrap();
    for q in [
        "\"",
        "*",
        "NEAR(",
        "col:",
        "OR",
        "'; DROP TABLE memories; --",
        "\")",
        "NOT",
        "北京 -天气",
    ] {
        let found = search(&mut h.client, q, 50).await;
        assert!(
            found.mode == "fts5" || found.mode == "like",
            "{q:?}: {found:?}"
        );
    }
    for q in ["NEAR(", "col:", "OR", "\"", "*"] {
        let found = search(&mut h.client, q, 5).await;
        assert_eq!(
            found.memories.len(),
            1,
            "{q:?} is searched as words: {found:?}"
        );
    }
    let err = h
        .client
        .search_memories(pb::SearchMemoriesRequest {
            query: "  ".into(),
            limit: 5,
            numbered: false,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(list(&mut h.client).await.len(), 2, "the table is intact");
    h.stop().await;
}
