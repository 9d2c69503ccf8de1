//! `SearchHistory`: the conversation index searched by words and time (`recall`), proto ⇄
//! domain; and the web console's `SearchSessions` on the same index.

use std::collections::HashMap;

use kernel_proto::v1 as pb;
use kernel_proto::words::MessageRole;
use tonic::Status;

use super::convert::session_info;
use super::{AgentService, to_status};
use crate::conversation::Role;
use crate::error::ApiError;
use crate::recall::{HistoryError, HistoryHit, HistoryQuery, KeptSearch, Neighbour};

/// Most sessions the web console's search returns, and the hits read to find them.
const SESSION_SEARCH_LIMIT: usize = 50;

/// A stored message's author as the wire says it.
pub(super) fn role(role: Role) -> &'static str {
    match role {
        Role::User => MessageRole::User,
        Role::Assistant => MessageRole::Assistant,
    }
    .as_str()
}

fn neighbour(n: Option<Neighbour>) -> String {
    n.map(|n| format!("{}: {}", role(n.role), n.text))
        .unwrap_or_default()
}

/// The distinct sessions of `hits`, in the order of their first hit.
fn sessions_of(hits: &[HistoryHit]) -> Vec<i64> {
    let mut ids: Vec<i64> = Vec::new();
    for h in hits {
        if !ids.contains(&h.session_id) {
            ids.push(h.session_id);
        }
    }
    ids
}

impl AgentService {
    pub(super) async fn search_history_rpc(
        &self,
        req: pb::SearchHistoryRequest,
    ) -> Result<pb::SearchHistoryResponse, Status> {
        let history = self.agent.history();
        let failed = |e: HistoryError| to_status(e.into_api(history.locale()));
        let (search, search_id) = match req.search_id {
            0 => {
                let search = KeptSearch {
                    query: req.query,
                    after: req.after,
                    before: req.before,
                };
                (search, 0)
            }
            id => {
                let id = i64::try_from(id).unwrap_or(i64::MAX);
                let search = history.kept(id).await.map_err(failed)?.ok_or_else(|| {
                    to_status(ApiError::NotFound(format!(
                        "search {id} is no longer kept; search again"
                    )))
                })?;
                (search, id)
            }
        };
        let hits = history
            .search(&search.as_query(req.limit as usize))
            .await
            .map_err(failed)?;
        // Kept only once it ran: a refused search gets no number.
        let search_id = match (search_id, req.keep) {
            (0, true) => history.keep(&search).await.map_err(failed)?,
            (id, _) => id,
        };
        let sessions = self
            .agent
            .sessions()
            .found(&sessions_of(&hits), req.list_sessions)
            .await
            .map_err(to_status)?;
        let numbers: HashMap<i64, u32> = sessions.iter().map(|s| (s.id, s.number)).collect();
        Ok(pb::SearchHistoryResponse {
            hits: hits
                .into_iter()
                .map(|h| pb::HistoryHit {
                    session_id: h.session_id,
                    session_number: numbers.get(&h.session_id).copied().unwrap_or(0),
                    session_title: h.session_title,
                    role: role(h.role).to_owned(),
                    time: history.local_time(h.at),
                    text: h.text,
                    before: neighbour(h.before),
                    after: neighbour(h.after),
                })
                .collect(),
            search_id: u64::try_from(search_id).unwrap_or(0),
            query: search.query,
        })
    }

    /// The web console's session search: sessions whose title contains the query, then those
    /// with a message matching it in the conversation index (best match first).
    pub(super) async fn search_sessions_rpc(
        &self,
        req: pb::SearchSessionsRequest,
    ) -> Result<pb::SearchSessionsResponse, Status> {
        let sessions = self.agent.sessions();
        let by_title = sessions.search(&req.query).await.map_err(to_status)?;
        let history = self.agent.history();
        let query = HistoryQuery {
            query: &req.query,
            limit: SESSION_SEARCH_LIMIT,
            ..Default::default()
        };
        let hits = history
            .search(&query)
            .await
            .map_err(|e| to_status(e.into_api(history.locale())))?;
        let mut found = by_title;
        let by_message = sessions
            .found(&sessions_of(&hits), false)
            .await
            .map_err(to_status)?;
        for s in by_message {
            if found.len() >= SESSION_SEARCH_LIMIT {
                break;
            }
            if !found.iter().any(|f| f.id == s.id) {
                found.push(s);
            }
        }
        Ok(pb::SearchSessionsResponse {
            sessions: found.into_iter().map(session_info).collect(),
        })
    }
}
