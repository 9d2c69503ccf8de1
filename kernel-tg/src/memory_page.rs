//! One page of `/memory` with its previous/next buttons (`mem:<page>`): the command shows it as
//! a reply, a press of a button shows the other page in the same message. The numbers are agentd's
//! (`ListMemoriesPage`: by position, every page shown joining the mapping for `/forget #n`). A
//! page too long for one message goes in chunks without buttons.

use kernel_proto::v1 as pb;
use teloxide::types::InlineKeyboardMarkup;
use tonic::Status;

use crate::agentd::Client;
use crate::buttons;
use crate::texts::{MemoryEntry, MemoryPageView, Texts};
use kernel_render::MAX_CHUNK_UTF16;

/// Page `page` as HTML, with its buttons when there is another page to go to.
pub(crate) async fn page(
    client: &mut Client,
    texts: Texts,
    page: u32,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let list = client
        .list_memories_page(pb::ListMemoriesPageRequest {
            page,
            include_superseded: false,
        })
        .await?
        .into_inner();
    let entries: Vec<MemoryEntry<'_>> = list
        .memories
        .iter()
        .map(|m| MemoryEntry {
            number: m.number,
            date: &m.date,
            text: &m.text,
            auto: m.auto,
            origin: &m.origin,
        })
        .collect();
    let view = MemoryPageView {
        total: list.total,
        page: list.page,
        pages: list.pages,
    };
    let html = texts.memory_page(&entries, view);
    // Buttons only on a page that goes as one message (its HTML is never shorter than what
    // Telegram counts); a longer page is sent in chunks, its footer saying how to page.
    let fits = html.encode_utf16().count() <= MAX_CHUNK_UTF16;
    let keyboard = (fits && !entries.is_empty())
        .then(|| buttons::memory_pages(list.page, list.pages, texts))
        .flatten();
    Ok((html, keyboard))
}
