//! The text of the Stop offer a drafted turn gets once it runs a while.

use super::Texts;

impl Texts {
    /// The small message that carries a drafted turn's Stop button.
    pub fn stop_offer(self) -> &'static str {
        self.pick("⏳ 仍在处理中…", "⏳ Still working…")
    }
}
