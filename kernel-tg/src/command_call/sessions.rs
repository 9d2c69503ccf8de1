//! Session commands: `/new`, `/history`, `/resume`, `/retitle`, `/delhistory` and `/compact`.

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::Client;
use crate::texts::{SessionEntry, Texts};

/// `/new`: starts a fresh session.
pub(super) async fn new(client: &mut Client, texts: Texts) -> Result<String, Status> {
    client.new_session(pb::NewSessionRequest::default()).await?;
    Ok(texts.new_session().to_owned())
}

/// `/history`: the numbered list of sessions.
pub(super) async fn history(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let list = client
        .list_sessions(pb::ListSessionsRequest {})
        .await?
        .into_inner();
    let entries: Vec<_> = list.sessions.iter().map(session_entry).collect();
    Ok(texts.history(&entries))
}

/// `/resume <n>`: makes session `number` the current one.
pub(super) async fn resume(
    client: &mut Client,
    texts: Texts,
    number: u32,
    thread: Option<i64>,
) -> Result<String, Status> {
    let request = pb::ResumeSessionRequest {
        number,
        thread_id: thread,
    };
    let reply = client.resume_session(request).await?;
    let session = reply.into_inner().session.unwrap_or_default();
    Ok(match thread {
        // Sent inside a topic: the session now lives in that topic.
        Some(_) => texts.resumed_in_topic(&session_entry(&session)),
        None => texts.resumed(&session_entry(&session)),
    })
}

/// `/retitle [n]`: has session `number` (else the session of topic `thread` it was sent in,
/// else the current one) titled anew.
pub(super) async fn retitle(
    client: &mut Client,
    texts: Texts,
    number: Option<u32>,
    thread: Option<i64>,
) -> Result<String, Status> {
    let request = pb::RetitleSessionRequest {
        number,
        thread_id: thread,
    };
    let reply = client.retitle_session(request).await?;
    Ok(texts.retitled(&reply.into_inner().session.unwrap_or_default().title))
}

/// `/delhistory <n…>`: deletes the numbered sessions.
pub(super) async fn delete(
    client: &mut Client,
    texts: Texts,
    numbers: Vec<u32>,
) -> Result<String, Status> {
    let reply = client
        .delete_sessions(pb::DeleteSessionsRequest { numbers })
        .await?;
    Ok(texts.sessions_deleted(reply.into_inner().deleted as usize))
}

/// `/compact`: summarises the current session's context, saying its size before and after.
pub(super) async fn compact(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let c = client.compact(pb::CompactRequest {}).await?.into_inner();
    Ok(texts.compacted(c.tokens_before, c.tokens_after, c.summary_rounds))
}

/// A session as the texts list it.
pub(super) fn session_entry(s: &pb::SessionInfo) -> SessionEntry<'_> {
    SessionEntry {
        number: s.number,
        date: &s.date,
        title: &s.title,
        current: s.current,
        topic: s
            .thread_id
            .map(|_| s.thread_name.as_deref().unwrap_or_default()),
    }
}
