//! The web console's reading and tending pages and their RPCs under bad input (spec §7), with
//! the real kernel-agentd and kernel-web: malformed dates, sources and ids, an empty or huge
//! search, an empty edit, a title with control characters — each a clear refusal with the right
//! status (gRPC and HTTP), no internal error text, nothing changed; a state-changing page
//! request without the CSRF token is refused.

use kernel_proto::v1 as pb;
use kernel_proto::v1::agent_client::AgentClient;
use tests::config::TestConfig;
use tests::harness::unix_channel;
use tests::process::AgentdProcess;
use tests::web::{WEB_SECTION, WebConsole, csrf_of, get, log_in, memory_texts, post_form};
use tonic::Code;

/// The refusal's code of a call that must fail.
fn code<T: std::fmt::Debug>(r: Result<T, tonic::Status>) -> Code {
    r.expect_err("refused").code()
}

/// The texts of the memories `BrowseMemories` lists by default.
async fn browsed(client: &mut AgentClient<tonic::transport::Channel>) -> Vec<String> {
    let request = pb::BrowseMemoriesRequest::default();
    let reply = client
        .browse_memories(request)
        .await
        .expect("BrowseMemories");
    memory_texts(reply.into_inner().memories)
}

#[tokio::test]
async fn bad_input_to_the_new_rpcs_is_refused_with_the_right_code() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);

    let bad_source = pb::BrowseMemoriesRequest {
        source: "evil".into(),
        ..Default::default()
    };
    assert_eq!(
        code(client.browse_memories(bad_source).await),
        Code::InvalidArgument
    );
    let bad_day = pb::BrowseMemoriesRequest {
        from: "2026-13-45".into(),
        ..Default::default()
    };
    assert_eq!(
        code(client.browse_memories(bad_day).await),
        Code::InvalidArgument
    );
    for query in ["", "   ", &"x".repeat(201)] {
        let r = client
            .search_sessions(pb::SearchSessionsRequest {
                query: query.to_owned(),
            })
            .await;
        assert_eq!(code(r), Code::InvalidArgument, "{query:?}");
    }
    let r = client
        .get_session_history(pb::GetSessionHistoryRequest { session_id: 424242 })
        .await;
    assert_eq!(code(r), Code::NotFound);
    let r = client
        .edit_memory(pb::EditMemoryRequest {
            id: 424242,
            text: "x".into(),
        })
        .await;
    assert_eq!(code(r), Code::NotFound);
    assert!(browsed(&mut client).await.is_empty(), "nothing added");

    let id = client
        .add_memory(pb::AddMemoryRequest {
            text: "keep me".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .id;
    for text in ["", "  ", &"x".repeat(10_001)] {
        let r = client
            .edit_memory(pb::EditMemoryRequest {
                id,
                text: text.to_owned(),
            })
            .await;
        assert_eq!(code(r), Code::InvalidArgument, "{} chars", text.len());
    }
    assert_eq!(browsed(&mut client).await, ["keep me"]);

    client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    client
        .list_sessions(pb::ListSessionsRequest {})
        .await
        .unwrap();
    for title in ["", "a\nb", &"t".repeat(101)] {
        let r = client
            .rename_session(pb::RenameSessionRequest {
                number: Some(1),
                title: title.to_owned(),
            })
            .await;
        assert_eq!(code(r), Code::InvalidArgument, "{title:?}");
    }
    let r = client
        .rename_session(pb::RenameSessionRequest {
            number: Some(9),
            title: "ok".into(),
        })
        .await;
    assert_eq!(
        code(r),
        Code::InvalidArgument,
        "a number outside the listing"
    );

    let history = client
        .get_usage_history(pb::GetUsageHistoryRequest { days: u32::MAX })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(history.dates.len(), 366, "clamped");
    assert!(history.days.is_empty());
}

#[tokio::test]
async fn the_pages_answer_bad_input_with_a_clear_400_and_change_nothing() {
    let cfg = TestConfig::new("http://127.0.0.1:9", WEB_SECTION);
    let _agentd = AgentdProcess::start(&cfg.path, &[]);
    let mut client = AgentClient::new(unix_channel(cfg.socket()).await);
    let id = client
        .add_memory(pb::AddMemoryRequest {
            text: "keep me".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .id;
    let web = WebConsole::start(&cfg.path);
    let cookie = log_in(&web, &cfg.path).await;
    let (status, page) = get(&web, "/memory", Some(&cookie)).await;
    assert_eq!(status, 200, "{page}");
    let csrf = csrf_of(&page);

    let long = format!("/sessions?q={}", "x".repeat(201));
    for path in [
        "/memory?from=2026-13-45",
        "/memory?source=evil",
        "/notes?date=yesterday",
        "/sessions/424242",
        "/sessions/not-a-number",
        long.as_str(),
    ] {
        let (status, body) = get(&web, path, Some(&cookie)).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert!(!body.to_lowercase().contains("internal"), "{path}: {body}");
    }

    // An empty edit and an unknown memory: refused, nothing changed; without the token: 403.
    for body in [
        format!("id={id}&text=+++&csrf={csrf}"),
        format!("id=424242&text=new&csrf={csrf}"),
        format!("id=oops&text=new&csrf={csrf}"),
    ] {
        let (status, page) = post_form(&web, "/memory/edit", &cookie, body.clone()).await;
        assert!(status == 400 || status == 422, "{body}: {status} {page}");
    }
    let (status, _) = post_form(&web, "/memory/edit", &cookie, format!("id={id}&text=new")).await;
    assert_eq!(status, 403, "no CSRF token");
    assert_eq!(browsed(&mut client).await, ["keep me"]);

    // A title with a control character.
    client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap();
    let (status, _) = get(&web, "/sessions", Some(&cookie)).await;
    assert_eq!(status, 200);
    let (status, page) = post_form(
        &web,
        "/sessions/rename",
        &cookie,
        format!("number=1&title=a%0Ab&csrf={csrf}"),
    )
    .await;
    assert_eq!(status, 400, "{page}");
    let (status, _) = post_form(&web, "/schedules/delete", &cookie, "number=1".to_owned()).await;
    assert_eq!(status, 403, "no CSRF token");
}
