//! Sessions (`#n` mapping, resume, delete several, delete current) and provider/model selection
//! (whitelist, persistence across a restart, fall back when the saved provider lost its key),
//! through the real gRPC service.

use kernel_proto::v1 as pb;
use tests::config::TestConfig;
use tests::harness::Harness;
use tonic::Code;

const SECOND: &str = r#"
[providers.second]
type = "openai_compat"
api_base = "http://127.0.0.1:9/v1"
api_key = "sk-second-provider-key-abcdef"
default_model = "m2"
models = ["m2", "m3"]

[providers.nokey]
type = "openai_compat"
api_base = "http://127.0.0.1:9/v1"
default_model = "x"
"#;

async fn harness() -> Harness {
    Harness::start(TestConfig::new("http://127.0.0.1:9", SECOND)).await
}

async fn list(h: &mut Harness) -> Vec<pb::SessionInfo> {
    h.client
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .unwrap()
        .into_inner()
        .sessions
}

/// A new session that is then used (an empty current session would be kept by the next one).
async fn new_session(h: &mut Harness) -> pb::SessionInfo {
    let session = h
        .client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    tests::chat::store_message(&h.cfg, session.id, "hi").await;
    session
}

#[tokio::test]
async fn sessions_are_numbered_newest_first_and_resumable() {
    let mut h = harness().await;
    assert!(
        list(&mut h).await.is_empty(),
        "a fresh start has no sessions"
    );
    let a = new_session(&mut h).await;
    let b = new_session(&mut h).await;
    let c = new_session(&mut h).await;
    assert!(c.current && c.id > b.id && b.id > a.id);

    let listed = list(&mut h).await;
    let ids: Vec<i64> = listed.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![c.id, b.id, a.id]);
    assert_eq!(
        listed.iter().map(|s| s.number).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(listed[0].current && !listed[1].current);
    let date = &listed[0].date;
    assert!(
        date.len() == 10 && date.as_bytes()[4] == b'-' && date.as_bytes()[7] == b'-',
        "{date}"
    );
    assert!(listed.iter().all(|s| s.title.is_empty()), "untitled");

    let resumed = h
        .client
        .resume_session(pb::ResumeSessionRequest {
            number: 3,
            thread_id: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.session.unwrap().id, a.id);
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.current_session.unwrap().id, a.id);
    assert_eq!(status.provider, "fake");
    assert_eq!(status.model, "fake-model");

    for bad in [0, 4, 99] {
        let err = h
            .client
            .resume_session(pb::ResumeSessionRequest {
                number: bad,
                thread_id: None,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "#{bad}: {err:?}");
    }
    h.stop().await;
}

#[tokio::test]
async fn deleting_several_and_the_current_one() {
    let mut h = harness().await;
    let a = new_session(&mut h).await;
    let b = new_session(&mut h).await;
    let c = new_session(&mut h).await;
    list(&mut h).await; // #1 = c (current), #2 = b, #3 = a

    // A bad number anywhere refuses the whole request and deletes nothing.
    let err = h
        .client
        .delete_sessions(pb::DeleteSessionsRequest {
            numbers: vec![1, 7],
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = h
        .client
        .delete_sessions(pb::DeleteSessionsRequest { numbers: vec![] })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(list(&mut h).await.len(), 3);

    let reply = h
        .client
        .delete_sessions(pb::DeleteSessionsRequest {
            numbers: vec![1, 3, 3],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.deleted, 2);
    let fresh = reply
        .new_current
        .expect("the current session was deleted: a fresh one starts");
    assert!(fresh.current && fresh.id != c.id && fresh.id != a.id);

    // #n still means what the last listing showed: #1 (c) is gone now.
    let err = h
        .client
        .resume_session(pb::ResumeSessionRequest {
            number: 1,
            thread_id: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let resumed = h
        .client
        .resume_session(pb::ResumeSessionRequest {
            number: 2,
            thread_id: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(resumed.session.unwrap().id, b.id);

    let ids: Vec<i64> = list(&mut h).await.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![fresh.id, b.id]);
    h.stop().await;
}

#[tokio::test]
async fn provider_and_model_selection_is_validated_and_persisted() {
    let mut h = harness().await;
    let listed = h
        .client
        .list_providers(pb::ListProvidersRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.current_provider, "fake");
    assert_eq!(listed.current_model, "fake-model");
    let by_name = |n: &str| {
        listed
            .providers
            .iter()
            .find(|p| p.name == n)
            .cloned()
            .unwrap()
    };
    assert!(by_name("fake").current && by_name("fake").available);
    assert_eq!(by_name("fake").r#type, "claude");
    assert!(
        !by_name("nokey").available,
        "a provider without a key is listed but unavailable"
    );
    assert_eq!(by_name("second").models, vec!["m2", "m3"]);

    let err = select_model(&mut h, "gpt-9").await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("fake-model"),
        "lists the allowed models: {}",
        err.message()
    );
    let err = select_provider(&mut h, "nope").await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = select_provider(&mut h, "nokey").await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(
        err.message().contains("KERNEL_PROVIDER_NOKEY_API_KEY"),
        "{}",
        err.message()
    );
    assert_eq!(
        select_model(&mut h, "fake-model-2").await.unwrap(),
        pair("fake", "fake-model-2")
    );

    // Restored after a restart of the service on the same database.
    let mut h = h.restart().await;
    let status = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (status.provider, status.model),
        pair("fake", "fake-model-2")
    );
    assert!(
        status.current_session.is_none(),
        "a restart never resumes a session by itself"
    );

    assert_eq!(
        select_provider(&mut h, "second").await.unwrap(),
        pair("second", "m2")
    );
    assert_eq!(
        select_model(&mut h, "m3").await.unwrap(),
        pair("second", "m3")
    );
    let mut h = h.restart().await;
    assert_eq!(current(&mut h).await, pair("second", "m3"));

    // The saved provider loses its key: the next start falls back to the default provider.
    let cfg = h.stop().await;
    cfg.rewrite(|t| t.replace("api_key = \"sk-second-provider-key-abcdef\"\n", ""));
    let mut h = Harness::start(cfg).await;
    assert_eq!(current(&mut h).await, pair("fake", "fake-model"));
    h.stop().await;
}

fn pair(provider: &str, model: &str) -> (String, String) {
    (provider.to_string(), model.to_string())
}

async fn current(h: &mut Harness) -> (String, String) {
    let s = h
        .client
        .get_status(pb::GetStatusRequest {})
        .await
        .unwrap()
        .into_inner();
    (s.provider, s.model)
}

async fn select_provider(h: &mut Harness, name: &str) -> Result<(String, String), tonic::Status> {
    let name = name.to_string();
    let s = h
        .client
        .select_provider(pb::SelectProviderRequest { name })
        .await?
        .into_inner();
    Ok((s.provider, s.model))
}

async fn select_model(h: &mut Harness, model: &str) -> Result<(String, String), tonic::Status> {
    let model = model.to_string();
    let s = h
        .client
        .select_model(pb::SelectModelRequest { model })
        .await?
        .into_inner();
    Ok((s.provider, s.model))
}
