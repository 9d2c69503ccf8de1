//! The Memory page's texts for the memories consolidation set aside and for undoing a run
//! (Chinese by default, English with `general.locale = "en"`).

use super::Texts;

texts! {
    aside_show => "显示已搁置的（被取代、合并、退役）", "Show set-aside (superseded, merged, retired)";
    aside_mark => "已搁置", "Set aside";
    aside_merged => "已合并到", "merged into";
    aside_retired => "已退役", "retired";
    aside_superseded => "已被取代，新记忆", "superseded by";
    undo_run => "撤销最近一次整理", "Undo the latest consolidation";
    undo_done => "已撤销整理，恢复的记忆数：", "Consolidation undone; memories restored: ";
    undo_nothing => "没有可撤销的整理。", "No consolidation to undo.";
}

impl Texts {
    /// Why a memory is set aside, and what replaced it (`by`: its id, 0 when none).
    pub(crate) fn aside_reason(self, reason: &str, by: i64) -> String {
        use kernel_proto::words::SetAsideReason;
        let why = match SetAsideReason::parse(reason) {
            Some(SetAsideReason::Merged) => self.aside_merged(),
            Some(SetAsideReason::Retired) => self.aside_retired(),
            Some(SetAsideReason::Superseded) | None => self.aside_superseded(),
        };
        if by > 0 {
            format!("{}: {why} #{by}", self.aside_mark())
        } else {
            format!("{}: {why}", self.aside_mark())
        }
    }
}
