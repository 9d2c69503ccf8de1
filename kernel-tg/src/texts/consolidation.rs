//! Memory consolidation's texts: a proposed merge's buttons and what a press answers.

use super::Texts;

impl Texts {
    /// The button that merges a proposal's memories.
    pub fn memory_merge_button(self) -> &'static str {
        self.pick("合并", "Merge")
    }

    /// The button that keeps them as they are.
    pub fn memory_keep_button(self) -> &'static str {
        self.pick("保留原样", "Keep as is")
    }

    /// The memories were merged.
    pub fn memory_merged(self) -> &'static str {
        self.pick("已合并", "Merged")
    }

    /// They stay as they are.
    pub fn memory_kept(self) -> &'static str {
        self.pick("已保留原样", "Kept as they are")
    }

    /// The proposal was decided already, its memories changed, or the press was not Kernel's.
    pub fn memory_proposal_stale(self) -> &'static str {
        self.pick(
            "这个建议已过期，记忆没有改动",
            "This proposal is stale; nothing was changed",
        )
    }
}
