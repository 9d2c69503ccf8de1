//! The web console's memory RPCs: `BrowseMemories` (by source and local creation day, a page
//! at a time) and `EditMemory` (the owner's new text replaces a memory by id); proto ⇄ domain.

use chrono::NaiveDate;
use kernel_proto::v1 as pb;
use kernel_proto::words;
use tonic::Status;

use super::{AgentService, to_status};
use crate::error::ApiError;
use crate::store::MemorySource;

fn invalid(message: String) -> Status {
    to_status(ApiError::InvalidArgument(message))
}

fn source(s: &str) -> Result<Option<MemorySource>, Status> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    match words::MemorySource::parse(s) {
        Some(words::MemorySource::Owner) => Ok(Some(MemorySource::Owner)),
        Some(words::MemorySource::Auto) => Ok(Some(MemorySource::Auto)),
        Some(words::MemorySource::Outside) => Ok(Some(MemorySource::Outside)),
        None => Err(invalid(
            "source is \"owner\", \"auto\", \"outside\" or empty".to_owned(),
        )),
    }
}

fn day(s: &str, field: &str) -> Result<Option<NaiveDate>, Status> {
    match s.trim() {
        "" => Ok(None),
        d => NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| invalid(format!("{field} is not a YYYY-MM-DD date"))),
    }
}

fn info(m: crate::memory::MemoryInfo) -> pb::MemoryInfo {
    pb::MemoryInfo {
        number: m.number,
        id: m.id,
        text: m.text,
        date: m.date,
        auto: m.auto,
        origin: m.origin.unwrap_or_default(),
        superseded: m.set_aside.is_some(),
        superseded_by: m.set_aside.as_ref().and_then(|s| s.by).unwrap_or_default(),
        superseded_reason: m.set_aside.map(|s| s.reason).unwrap_or_default(),
    }
}

impl AgentService {
    pub(super) async fn browse_memories_rpc(
        &self,
        req: pb::BrowseMemoriesRequest,
    ) -> Result<pb::BrowseMemoriesResponse, Status> {
        let source = source(&req.source)?;
        let from = day(&req.from, "from")?;
        let to = day(&req.to, "to")?;
        let page = self
            .agent
            .memories()
            .browse(source, from, to, req.page, req.include_superseded)
            .await
            .map_err(|e| to_status(e.into()))?;
        Ok(pb::BrowseMemoriesResponse {
            memories: page.memories.into_iter().map(info).collect(),
            total: u32::try_from(page.total).unwrap_or(u32::MAX),
            page: page.page,
            pages: page.pages,
        })
    }

    pub(super) async fn edit_memory_rpc(
        &self,
        req: pb::EditMemoryRequest,
    ) -> Result<pb::EditMemoryResponse, Status> {
        let memories = self.agent.memories();
        let row = memories
            .edit(req.id, &req.text)
            .await
            .map_err(|e| to_status(e.into()))?
            .ok_or_else(|| to_status(ApiError::NotFound("no memory with that id".to_owned())))?;
        Ok(pb::EditMemoryResponse {
            memory: Some(info(crate::memory::MemoryInfo {
                number: 0,
                id: row.id,
                date: memories.local_date(row.created_at),
                auto: row.auto,
                origin: row.origin,
                text: row.text,
                set_aside: None,
            })),
        })
    }
}
