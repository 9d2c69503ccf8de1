//! A turn's start: what its request is built from (the persona, the skills index, the tools,
//! the stored history, the recalled memories), the owner's message stored beside it, and the
//! request built, a fold it made saved.

use chrono::Utc;

use super::persist::store_failed;
use super::{Stop, Turn, media};
use crate::request::RequestInputs;
use crate::turn::context::format_now;
use crate::turn::session_history;

impl Turn {
    /// Gathers what the request is built from — the persona, the skills index, the tools, the
    /// stored history, the recalled memories — stores the user message, and builds the request
    /// (`request::build`); a fold it made is saved.
    pub(super) async fn prepare(&mut self) -> Result<(), Stop> {
        let turns = &self.turns.inner;
        let (k, tz) = (turns.memory_recall_k, turns.tz);
        let (persona, skills) = tokio::join!(turns.soul.system_prompt(), turns.skills.index());
        self.specs = turns.tools.specs();
        self.token_budget = self.token_budget_for_model();
        // Memory recall reads only the memories, so it runs beside reading the history and
        // storing the owner's message (each on its own pool connection), not after them.
        let query = media::recall_query(&self.user);
        let recall = async {
            if k == 0 || query.trim().is_empty() {
                return Some(Vec::new());
            }
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => None,
                m = turns.recall.recall(&query, k) => Some(m.into_iter().take(k).collect::<Vec<_>>()),
            }
        };
        let unstarted = self.unstarted.take();
        let stored = async {
            let stored = session_history::read(&turns.store, self.session_id)
                .await
                .map_err(store_failed)?;
            self.persist_user().await?;
            if let Some(left_out) = unstarted {
                // The message and its keys are stored: it is taken.
                self.emit_started(left_out);
            }
            Ok::<_, Stop>(stored)
        };
        let (stored, memories) = tokio::join!(stored, recall);
        let stored = stored?;
        let memories = memories.ok_or(Stop::Cancelled)?;
        let built = crate::request::build(RequestInputs {
            persona,
            skills_index: &skills,
            tools: &self.specs,
            stored,
            rounds: turns.context_rounds,
            token_budget: self.token_budget,
            kind: self.model.kind,
            user: &self.user,
            now: &format_now(Utc::now(), tz),
            memories: &memories,
        });
        if let Some(folded) = built.folded {
            session_history::save_fold(&turns.store, self.session_id, &built.summary, folded)
                .await
                .map_err(store_failed)?;
            turns.after_fold.folded(self.session_id);
        }
        self.system = built.system;
        self.prefix_estimate = built.prefix_tokens;
        self.messages = built.messages;
        self.stable_prefix = built.stable_prefix;
        self.turn_start = built.stable_prefix;
        Ok(())
    }
}
