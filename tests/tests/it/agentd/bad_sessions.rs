//! Bad session numbers and topic ids, and retries of sessions that do not exist, through the
//! real gRPC service: refused with the proper status and a clean message, nothing changed.

use kernel_proto::v1 as pb;
use tonic::Code;

use super::bad_input::{assert_refused, sessions, start, status};

#[tokio::test]
async fn bad_session_numbers_are_refused_and_change_nothing() {
    let (_fake, mut h) = start().await;
    for _ in 0..3 {
        let session = h
            .client
            .new_session(pb::NewSessionRequest::default())
            .await
            .unwrap()
            .into_inner()
            .session
            .unwrap();
        tests::chat::store_message(&h.cfg, session.id, "hi").await;
    }
    let current = status(&mut h).await.current_session.unwrap().id;

    // Before any listing, every number is refused as premature.
    for n in [0, 1, u32::MAX] {
        let err = h
            .client
            .resume_session(pb::ResumeSessionRequest {
                number: n,
                thread_id: None,
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::FailedPrecondition, &format!("resume #{n}"));
        let err = h
            .client
            .delete_sessions(pb::DeleteSessionsRequest { numbers: vec![n] })
            .await
            .unwrap_err();
        assert_refused(&err, Code::FailedPrecondition, &format!("delete #{n}"));
        let err = h
            .client
            .retitle_session(pb::RetitleSessionRequest {
                number: Some(n),
                thread_id: None,
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::FailedPrecondition, &format!("retitle #{n}"));
    }

    let before = sessions(&mut h).await;
    assert_eq!(before.len(), 3);
    for n in [0, 4, 1_000_000, u32::MAX] {
        let err = h
            .client
            .resume_session(pb::ResumeSessionRequest {
                number: n,
                thread_id: None,
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("resume #{n}"));
        let err = h
            .client
            .delete_sessions(pb::DeleteSessionsRequest {
                numbers: vec![1, 2, n],
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("delete #{n}"));
        let err = h
            .client
            .retitle_session(pb::RetitleSessionRequest {
                number: Some(n),
                thread_id: None,
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("retitle #{n}"));
    }
    let err = h
        .client
        .delete_sessions(pb::DeleteSessionsRequest { numbers: vec![] })
        .await
        .unwrap_err();
    assert_refused(&err, Code::InvalidArgument, "delete nothing");

    assert_eq!(sessions(&mut h).await, before, "nothing deleted");
    assert_eq!(status(&mut h).await.current_session.unwrap().id, current);
    h.stop().await;
}

/// The fields the topics and living-message waves added: a topic id that is not a Telegram
/// `message_thread_id` (zero, negative) and a retry of a session that does not exist, with or
/// without `resume`, are refused with a clear status, and no session is made, bound or changed.
#[tokio::test]
async fn bad_topic_ids_and_a_retry_of_an_unknown_session_are_refused_and_change_nothing() {
    let (_fake, mut h) = start().await;
    let current = h
        .client
        .new_session(pb::NewSessionRequest::default())
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
        .id;
    tests::chat::store_message(&h.cfg, current, "hi").await;
    let before = sessions(&mut h).await;
    for thread in [0, -1, i64::MIN] {
        let err = h
            .client
            .retitle_session(pb::RetitleSessionRequest {
                number: None,
                thread_id: Some(thread),
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("retitle in {thread}"));
        let err = h
            .client
            .new_session(pb::NewSessionRequest {
                thread_id: Some(thread),
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("new in {thread}"));
        let err = h
            .client
            .resume_session(pb::ResumeSessionRequest {
                number: 1,
                thread_id: Some(thread),
            })
            .await
            .unwrap_err();
        assert_refused(&err, Code::InvalidArgument, &format!("resume in {thread}"));
    }
    for (session, resume) in [(i64::MAX, true), (i64::MAX, false), (-1, true), (0, true)] {
        let err = h
            .client
            .retry(pb::RetryRequest {
                session_id: Some(session),
                resume,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_refused(
            &err,
            Code::NotFound,
            &format!("retry {session} (resume {resume})"),
        );
    }
    assert_eq!(sessions(&mut h).await, before, "no session made or bound");
    assert_eq!(status(&mut h).await.current_session.unwrap().id, current);
    h.stop().await;
}
