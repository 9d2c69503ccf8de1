//! Memory commands: `/remember`, `/memory` (a page, `all`, `undo`, a search), `/forget` and
//! `/notes` (auto memory's note of a day).

use kernel_proto::v1 as pb;
use tonic::Status;

use crate::agentd::Client;
use crate::texts::{MemoryEntry, Texts};

/// Most hits `/memory <words>` lists.
const SEARCH_HITS: u32 = 20;

/// `/remember <text>`: stores `text` as a memory.
pub(super) async fn remember(
    client: &mut Client,
    texts: Texts,
    text: String,
) -> Result<String, Status> {
    client
        .add_memory(pb::AddMemoryRequest { text: text.clone() })
        .await?;
    Ok(texts.remembered(&text))
}

/// `/memory undo`: undoes the last consolidation run.
pub(super) async fn undo(client: &mut Client, texts: Texts) -> Result<String, Status> {
    let request = pb::UndoConsolidationRequest { run_id: 0 };
    let reply = client.undo_consolidation(request).await?.into_inner();
    Ok(texts.memory_undone(reply.undone, reply.restored))
}

/// `/memory <words>`: the numbered memories that match `query`.
pub(super) async fn search(
    client: &mut Client,
    texts: Texts,
    query: String,
) -> Result<String, Status> {
    let request = pb::SearchMemoriesRequest {
        query: query.clone(),
        limit: SEARCH_HITS,
        numbered: true,
    };
    let found = client.search_memories(request).await?.into_inner();
    let entries: Vec<_> = found.memories.iter().map(memory_entry).collect();
    Ok(texts.memory_hits(&query, &entries))
}

/// `/forget <n…>`: deletes the numbered memories.
pub(super) async fn forget(
    client: &mut Client,
    texts: Texts,
    numbers: Vec<u32>,
) -> Result<String, Status> {
    let reply = client
        .delete_memories(pb::DeleteMemoriesRequest {
            numbers,
            ..Default::default()
        })
        .await?;
    Ok(texts.memories_deleted(reply.into_inner().deleted as usize))
}

/// `/notes [date]`: auto memory's note of `date` (today by default), rendered like an answer.
pub(super) async fn notes(
    client: &mut Client,
    texts: Texts,
    date: Option<String>,
) -> Result<String, Status> {
    let reply = client
        .get_notes(pb::GetNotesRequest {
            date: date.unwrap_or_default(),
        })
        .await?
        .into_inner();
    // Rendered like an answer (one piece here; `say` splits the reply when long).
    let html = reply.text.as_deref().map(|markdown| {
        kernel_render::render_with_limit(markdown, usize::MAX)
            .into_iter()
            .map(|chunk| chunk.html)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(texts.notes(&reply.date, html.as_deref()))
}

fn memory_entry(m: &pb::MemoryInfo) -> MemoryEntry<'_> {
    MemoryEntry {
        number: m.number,
        date: &m.date,
        text: &m.text,
        auto: m.auto,
        origin: &m.origin,
    }
}
