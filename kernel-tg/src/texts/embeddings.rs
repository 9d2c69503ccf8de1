//! The `/status` line about recall by meaning: the embeddings model, how many memories have
//! vectors, and the endpoint's last error.

use std::fmt::Write as _;

use super::{MAX_DETAIL_CHARS, MAX_TITLE_CHARS, Texts, escape_truncated};

/// agentd's embeddings state, when `[embeddings]` is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmbeddingsEntry<'a> {
    pub model: &'a str,
    pub with_vectors: u64,
    pub memories: u64,
    pub last_error: Option<&'a str>,
}

impl Texts {
    /// `向量检索：<model>，N/M 条记忆已有向量（最近错误：…）`, or nothing without `[embeddings]`.
    pub(super) fn push_embeddings(self, out: &mut String, entry: Option<&EmbeddingsEntry<'_>>) {
        let Some(e) = entry else {
            return;
        };
        let model = escape_truncated(e.model, MAX_TITLE_CHARS);
        let _ = write!(
            out,
            "{}<code>{model}</code>{}{}/{}{}",
            self.pick("向量检索：", "Embeddings: "),
            self.pick("，", ", "),
            e.with_vectors,
            e.memories,
            self.pick(" 条记忆已有向量", " memories have vectors"),
        );
        if let Some(error) = e.last_error {
            let _ = write!(
                out,
                "{}{}{}",
                self.pick("（最近错误：", " (last error: "),
                escape_truncated(error, MAX_DETAIL_CHARS),
                self.pick("）", ")")
            );
        }
        out.push('\n');
    }
}
