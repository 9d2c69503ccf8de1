//! `/history <words>`: `SearchHistory` with the found sessions made the `#n` listing; one line
//! per session (its best match) and a Resume button for each.

use kernel_proto::v1 as pb;
use kernel_proto::words::MessageRole;
use teloxide::types::InlineKeyboardMarkup;
use tonic::Status;

use crate::agentd::Client;
use crate::buttons;
use crate::texts::{HistoryFound, Texts};

/// Hits asked for (their sessions are what is shown).
const HITS: u32 = 50;
/// Most sessions shown.
const MAX_SESSIONS: usize = 10;

/// The reply to `/history <words>` and its Resume buttons.
pub(crate) async fn search(
    client: &mut Client,
    texts: Texts,
    words: &str,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let reply = client
        .search_history(pb::SearchHistoryRequest {
            query: words.to_owned(),
            limit: HITS,
            list_sessions: true,
            ..Default::default()
        })
        .await?
        .into_inner();
    // The best hit of each session, in the order of the sessions' numbers.
    let mut best: Vec<&pb::HistoryHit> = Vec::new();
    for hit in &reply.hits {
        if !best.iter().any(|b| b.session_id == hit.session_id) {
            best.push(hit);
        }
    }
    best.sort_by_key(|h| h.session_number);
    best.truncate(MAX_SESSIONS);
    let found: Vec<HistoryFound<'_>> = best
        .iter()
        .map(|h| HistoryFound {
            number: h.session_number,
            title: &h.session_title,
            by_owner: match MessageRole::parse(&h.role) {
                Some(MessageRole::User) => true,
                Some(MessageRole::Assistant) | None => false,
            },
            time: &h.time,
            line: &h.text,
        })
        .collect();
    let html = texts.history_found(words, &found);
    let ids: Vec<(u32, i64)> = best
        .iter()
        .map(|h| (h.session_number, h.session_id))
        .collect();
    Ok((html, buttons::resume(&ids, texts)))
}
