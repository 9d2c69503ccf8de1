//! Texts of the topics Kernel opens in the owner's chat (`/new` with topics on).

use super::Texts;

impl Texts {
    /// The name of a topic `/new` opens, until the session's title renames it.
    pub fn new_topic_name(self) -> &'static str {
        self.pick("新对话", "New chat")
    }
}
