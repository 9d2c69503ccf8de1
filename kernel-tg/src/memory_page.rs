//! One page of `/memory` with its previous/next buttons (`mem:<page>`): the command shows it as
//! a reply, a press of a button shows the other page in the same message. The numbers are agentd's
//! (`ListMemoriesPage`: by position, every page shown joining the mapping for `/forget #n`). A
//! page too long for one message goes in chunks without buttons. `/memory all` (`mema:<page>`)
//! lists the memories consolidation set aside too, each marked with why.

use kernel_proto::v1 as pb;
use teloxide::types::InlineKeyboardMarkup;
use tonic::Status;

use crate::agentd::Client;
use crate::buttons;
use crate::texts::{MemoryEntry, MemoryPageView, Texts};
use kernel_render::MAX_CHUNK_UTF16;

/// Page `page` as HTML (`all`: set-aside memories too), with its buttons when there is another
/// page to go to.
pub(crate) async fn page(
    client: &mut Client,
    texts: Texts,
    page: u32,
    all: bool,
) -> Result<(String, Option<InlineKeyboardMarkup>), Status> {
    let list = client
        .list_memories_page(pb::ListMemoriesPageRequest {
            page,
            include_superseded: all,
        })
        .await?
        .into_inner();
    let shown: Vec<String> = list
        .memories
        .iter()
        .map(|m| match m.superseded {
            true => format!(
                "{} {}",
                texts.memory_set_aside_mark(&m.superseded_reason),
                m.text
            ),
            false => m.text.clone(),
        })
        .collect();
    let entries: Vec<MemoryEntry<'_>> = list
        .memories
        .iter()
        .zip(&shown)
        .map(|(m, text)| MemoryEntry {
            number: m.number,
            date: &m.date,
            text,
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
        .then(|| match all {
            true => buttons::memory_all_pages(list.page, list.pages, texts),
            false => buttons::memory_pages(list.page, list.pages, texts),
        })
        .flatten();
    Ok((html, keyboard))
}
