//! `/history <words>`: `SearchHistory` with the found sessions made the `#n` listing; one line
//! per session (its best match) and a Resume button for each, [`PAGE`] sessions a page. The
//! search is kept by agentd (`keep`), and the previous / next buttons (`hsp:<id>:<page>`) run
//! it again by its id (`search_id`), so a press works after either binary restarts.

use kernel_proto::v1 as pb;
use kernel_proto::words::MessageRole;
use teloxide::types::InlineKeyboardMarkup;
use tonic::Status;

use crate::agentd::Client;
use crate::buttons;
use crate::texts::{HistoryFound, Texts};

/// Hits asked for (their sessions are what is shown).
const HITS: u32 = 50;
/// Sessions a page shows.
const PAGE: usize = 5;

/// The reply to `/history <words>` (its first page) and its buttons.
pub(crate) async fn search(
    client: &mut Client,
    texts: Texts,
    words: &str,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let request = pb::SearchHistoryRequest {
        query: words.to_owned(),
        keep: true,
        ..Default::default()
    };
    run(client, texts, request, 1).await
}

/// Page `page` of the kept search `search_id` (NOT_FOUND when no longer kept).
pub(crate) async fn page(
    client: &mut Client,
    texts: Texts,
    search_id: u64,
    page: u32,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let request = pb::SearchHistoryRequest {
        search_id,
        ..Default::default()
    };
    run(client, texts, request, page).await
}

/// Runs `request` for [`HITS`] hits, their sessions made the listing; page `page` of them.
async fn run(
    client: &mut Client,
    texts: Texts,
    request: pb::SearchHistoryRequest,
    page: u32,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let request = pb::SearchHistoryRequest {
        limit: HITS,
        list_sessions: true,
        ..request
    };
    let reply = client.search_history(request).await?.into_inner();
    Ok(shown(&reply, texts, page))
}

/// Page `page` (clamped to the last) of `reply`'s sessions.
fn shown(
    reply: &pb::SearchHistoryResponse,
    texts: Texts,
    page: u32,
) -> (String, Option<InlineKeyboardMarkup>) {
    // The best hit of each session, in the order of the sessions' numbers.
    let mut best: Vec<&pb::HistoryHit> = Vec::new();
    for hit in &reply.hits {
        if !best.iter().any(|b| b.session_id == hit.session_id) {
            best.push(hit);
        }
    }
    best.sort_by_key(|h| h.session_number);
    let pages = best.len().div_ceil(PAGE).max(1) as u32;
    let page = page.clamp(1, pages);
    let on_page: Vec<&pb::HistoryHit> = best
        .iter()
        .skip((page as usize - 1) * PAGE)
        .take(PAGE)
        .copied()
        .collect();
    let found: Vec<HistoryFound<'_>> = on_page
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
    let html = texts.history_found(&reply.query, &found, (page, pages));
    let ids: Vec<(u32, i64)> = on_page
        .iter()
        .map(|h| (h.session_number, h.session_id))
        .collect();
    let keyboard = buttons::history_found(&ids, (reply.search_id, page, pages), texts);
    (html, keyboard)
}
