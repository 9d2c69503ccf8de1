//! Delivering an answer (or what is sent like one): the reasoning first when shown, its rendered
//! chunks (the first as a reply) and its voice note, each acknowledged once Telegram accepted
//! it; then the notice when some part was refused, and the placeholder removed.

use kernel_proto::v1 as pb;
use kernel_render as render;

use super::{End, Item, part_number};

impl Item<'_> {
    /// Sends the parts from `parts_done` on (`parts_failed` of the done ones were refused),
    /// acknowledging each; then the notice when something was refused, and removes the
    /// placeholder (unless the notice took its place).
    pub(super) async fn answer(
        &self,
        done: pb::TurnCompleted,
        parts_done: u32,
        parts_failed: u32,
    ) -> Result<(), End> {
        let chunks = render::render(&done.text);
        if chunks.is_empty() {
            if parts_done == 0 {
                let empty = self.app.texts().empty_answer();
                self.show_part(1, empty, self.placeholder, self.reply_to)
                    .await?;
            }
            return Ok(());
        }
        if parts_done == 0 && self.app.form().show_reasoning && !done.reasoning.trim().is_empty() {
            self.send_reasoning(&done.reasoning).await?;
        }
        tracing::info!(
            seq = self.seq,
            chunks = chunks.len(),
            from = parts_done,
            "delivering an answer"
        );
        let mut failed = parts_failed as usize + self.send_chunks(&chunks, parts_done).await?;
        let mut parts = chunks.len();
        if let Some(ogg) = done.voice_reply.filter(|v| !v.is_empty()) {
            parts += 1;
            let part = part_number(chunks.len());
            if part > parts_done && self.send_voice(ogg, part).await? {
                failed += 1;
            }
        }
        self.close_answer(failed, parts, parts_done).await?;
        tracing::info!(
            seq = self.seq,
            chunks = chunks.len(),
            failed,
            "answer delivered"
        );
        Ok(())
    }

    /// The model's reasoning, before the answer. Not a part of the item: resent only when
    /// kernel-tg died before the first ack.
    async fn send_reasoning(&self, reasoning: &str) -> Result<(), End> {
        let html = self.app.texts().reasoning(reasoning);
        let telegram = self.app.telegram();
        if let Err(e) = self
            .attempt(|| telegram.send_html(&html, self.reply_to))
            .await?
        {
            tracing::warn!(error = %e, seq = self.seq, "the reasoning was refused");
        }
        Ok(())
    }

    /// Sends the chunks after the first `parts_done`, acknowledging each; how many Telegram
    /// refused for good.
    async fn send_chunks(&self, chunks: &[render::Chunk], parts_done: u32) -> Result<usize, End> {
        let telegram = self.app.telegram();
        let mut refused = 0;
        for (index, chunk) in chunks.iter().enumerate().skip(parts_done as usize) {
            let reply_to = if index == 0 { self.reply_to } else { None };
            let part = part_number(index);
            match self
                .attempt(|| telegram.send_chunk(chunk, reply_to))
                .await?
            {
                Ok(id) => self.ack(part, vec![i64::from(id.0)], false, false).await?,
                Err(e) => {
                    refused += 1;
                    tracing::error!(error = %e, seq = self.seq, chunk = index + 1, of = chunks.len(), "a chunk of the answer was refused for good");
                    self.ack(part, Vec::new(), true, false).await?;
                }
            }
        }
        Ok(refused)
    }

    /// Sends the voice reply as part `part`, acknowledging it; `true` when Telegram refused it
    /// for good.
    async fn send_voice(&self, ogg: Vec<u8>, part: u32) -> Result<bool, End> {
        let telegram = self.app.telegram();
        match self
            .attempt(|| telegram.send_voice(ogg.clone(), self.reply_to))
            .await?
        {
            Ok(id) => {
                self.ack(part, vec![i64::from(id.0)], false, false).await?;
                Ok(false)
            }
            Err(e) => {
                tracing::error!(error = %e, seq = self.seq, "the voice reply was refused for good");
                self.ack(part, Vec::new(), true, false).await?;
                Ok(true)
            }
        }
    }

    /// After an answer's `parts`: the notice when `failed` of them were refused (unless sent
    /// before a replay: `parts_done`), in place of the placeholder when nothing arrived (the
    /// placeholder then stays); else the placeholder is removed.
    async fn close_answer(&self, failed: usize, parts: usize, parts_done: u32) -> Result<(), End> {
        // Nothing arrived: the placeholder itself says so (and stays).
        let nothing_arrived = failed == parts;
        if failed > 0 {
            let part = part_number(parts);
            if part > parts_done {
                let html = self.app.texts().delivery_failed(failed, parts);
                let (instead_of, reply_to) = if nothing_arrived {
                    (self.placeholder, self.reply_to)
                } else {
                    (None, None)
                };
                self.show_part(part, &html, instead_of, reply_to).await?;
            }
        }
        if !(nothing_arrived && self.placeholder.is_some()) {
            self.remove_placeholder().await?;
        }
        Ok(())
    }
}
