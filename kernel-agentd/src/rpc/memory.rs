//! The memory RPC bodies: `AddMemory`, `ListMemories` (`#n`), `SearchMemories` and
//! `DeleteMemories` (`#n`), `ListMemoriesPage` (`#n` by position, set-aside memories on
//! request), proto ⇄ domain over `Memories`; `GetNotes`, the daily notes of auto memory;
//! `UndoConsolidation` and `DecideMemoryProposal`, memory consolidation's.

use kernel_proto::v1 as pb;
use tonic::Status;

use super::{AgentService, to_status};
use crate::error::ApiError;
use crate::memory::MemoryInfo;

impl AgentService {
    /// Remembers a text directly (no model call).
    pub(super) async fn add_memory_rpc(
        &self,
        req: pb::AddMemoryRequest,
    ) -> Result<pb::AddMemoryResponse, Status> {
        let row = self
            .agent
            .memories()
            .add(&req.text)
            .await
            .map_err(|e| to_status(e.into()))?;
        Ok(pb::AddMemoryResponse { id: row.id })
    }

    /// Lists memories numbered `#1..` (the mapping for `DeleteMemories`) and how many there are.
    pub(super) async fn list_memories_rpc(&self) -> Result<pb::ListMemoriesResponse, Status> {
        let list = self
            .agent
            .memories()
            .list_numbered()
            .await
            .map_err(to_status)?;
        let total = self
            .agent
            .memories()
            .count()
            .await
            .map_err(|e| to_status(e.into()))?;
        let total = total.max(list.len() as u64);
        Ok(pb::ListMemoriesResponse {
            memories: list.into_iter().map(memory_info).collect(),
            total: u32::try_from(total).unwrap_or(u32::MAX),
        })
    }

    /// Searches memories; says whether FTS5 or LIKE answered.
    pub(super) async fn search_memories_rpc(
        &self,
        req: pb::SearchMemoriesRequest,
    ) -> Result<pb::SearchMemoriesResponse, Status> {
        let memories = self.agent.memories();
        let (list, mode) = if req.numbered {
            memories.search_numbered(&req.query, req.limit).await
        } else {
            memories.search_info(&req.query, req.limit).await
        }
        .map_err(to_status)?;
        Ok(pb::SearchMemoriesResponse {
            memories: list.into_iter().map(memory_info).collect(),
            mode: mode.as_str().to_string(),
        })
    }

    /// One page of all memories, numbered by position.
    pub(super) async fn list_memories_page_rpc(
        &self,
        req: pb::ListMemoriesPageRequest,
    ) -> Result<pb::ListMemoriesPageResponse, Status> {
        let page = self
            .agent
            .memories()
            .list_page(req.page, req.include_superseded)
            .await
            .map_err(to_status)?;
        Ok(pb::ListMemoriesPageResponse {
            memories: page.memories.into_iter().map(memory_info).collect(),
            total: u32::try_from(page.total).unwrap_or(u32::MAX),
            page: page.page,
            pages: page.pages,
        })
    }

    /// Undoes a consolidation run (0: the newest one not undone that changed something).
    pub(super) async fn undo_consolidation_rpc(
        &self,
        req: pb::UndoConsolidationRequest,
    ) -> Result<pb::UndoConsolidationResponse, Status> {
        if req.run_id < 0 {
            return Err(Status::invalid_argument("run_id must be 0 or a run's id"));
        }
        let undone = self
            .agent
            .consolidation()
            .undo(req.run_id)
            .await
            .map_err(to_status)?;
        Ok(match undone {
            Some((run_id, restored)) => pb::UndoConsolidationResponse {
                undone: true,
                run_id,
                restored: u32::try_from(restored).unwrap_or(u32::MAX),
            },
            None => pb::UndoConsolidationResponse::default(),
        })
    }

    /// The owner's merge / keep on a proposal; a stale or forged one changes nothing.
    pub(super) async fn decide_memory_proposal_rpc(
        &self,
        req: pb::DecideMemoryProposalRequest,
    ) -> Result<pb::DecideMemoryProposalResponse, Status> {
        use crate::store::consolidation::Decided;
        let decided = self
            .agent
            .consolidation()
            .decide(req.proposal_id, req.merge)
            .await
            .map_err(to_status)?;
        use kernel_proto::words::ProposalOutcome;
        let outcome = match decided {
            Decided::Merged(_) => ProposalOutcome::Merged,
            Decided::Kept => ProposalOutcome::Kept,
            Decided::Stale => ProposalOutcome::Stale,
        };
        Ok(pb::DecideMemoryProposalResponse {
            outcome: outcome.as_str().to_owned(),
        })
    }

    /// The daily note of a local day (default today).
    pub(super) async fn get_notes_rpc(
        &self,
        req: pb::GetNotesRequest,
    ) -> Result<pb::GetNotesResponse, Status> {
        let (date, note) = self
            .agent
            .memory_auto()
            .note(&req.date)
            .await
            .map_err(to_status)?;
        Ok(pb::GetNotesResponse {
            date,
            text: note.map(|n| n.text),
        })
    }

    /// Deletes memories by `#n` of the latest listing and by id.
    pub(super) async fn delete_memories_rpc(
        &self,
        req: pb::DeleteMemoriesRequest,
    ) -> Result<pb::DeleteMemoriesResponse, Status> {
        let mut deleted = 0;
        // Numbers as before (none and no ids: refused as an empty request is).
        if !req.numbers.is_empty() || req.ids.is_empty() {
            deleted += self
                .agent
                .memories()
                .delete_numbered(&req.numbers)
                .await
                .map_err(to_status)?;
        }
        if !req.ids.is_empty() {
            deleted += self
                .agent
                .memories()
                .delete(&req.ids)
                .await
                .map_err(|e| to_status(ApiError::from(e)))?;
        }
        Ok(pb::DeleteMemoriesResponse {
            deleted: u32::try_from(deleted).unwrap_or(u32::MAX),
        })
    }
}

/// A memory for the wire.
fn memory_info(m: MemoryInfo) -> pb::MemoryInfo {
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
