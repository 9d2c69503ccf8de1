//! The chat page's texts for approvals, attachments and progress (Chinese by default, English
//! with `general.locale = "en"`).

use kernel_proto::words::ApprovalOutcome;

use super::Texts;

texts! {
    approval_asks => "需要你的批准：", "Needs your approval: ";
    approval_allowed => "✅ 已允许", "✅ Allowed";
    approval_denied => "❌ 已拒绝", "❌ Denied";
    approval_cancelled => "这一轮已结束，不再需要批准", "The turn ended; no approval needed";
    chat_attach => "附件", "Attach";
    chat_attach_hint => "选择文件，或直接把图片粘贴到输入框", "Choose files, or paste an image into the text box";
    chat_remove_file => "移除", "Remove";
    chat_keys => "Enter 发送，Shift+Enter 换行", "Enter sends, Shift+Enter starts a new line";
    chat_new_session => "新会话", "New session";
    chat_all_sessions => "全部会话…", "All sessions…";
    chat_load_earlier => "加载更早的消息", "Load earlier messages";
    chat_empty => "新的对话，说点什么吧。", "A new conversation: say something.";
    chat_not_current => "这不是当前会话：在这里发的消息接着这个会话聊，Telegram 仍在当前会话。", "Not the current session: what you send here continues this one; Telegram stays in the current session.";
    chat_resume => "设为当前会话", "Make it the current session";
    chat_copy => "复制", "Copy";
    chat_copied => "已复制", "Copied";
    chat_reasoning => "思考过程", "Reasoning";
    chat_retry => "重试", "Retry";
    chat_edit => "编辑", "Edit";
    chat_save => "保存并重新回答", "Save and answer again";
    chat_cancel => "取消", "Cancel";
    chat_again => "正在重新回答…", "Answering again…";
    upload_too_large => "附件太大：每条消息最多 20 MB。", "The attachments are too large: at most 20 MB a message.";
    upload_too_many => "附件太多：每条消息最多 10 个。", "Too many attachments: at most 10 a message.";
    upload_malformed => "上传的内容无法读取，请重新选择文件。", "The upload could not be read; choose the files again.";
    upload_empty => "请输入消息或选择附件。", "Type a message or choose a file.";
    progress_retry => "模型暂时出错，稍后重试…", "The model failed for a moment; retrying…";
    progress_failover => "改用另一个提供方：", "Switched to another provider: ";
}

impl Texts {
    /// What an approval ended with (`decision` as agentd says it).
    pub(crate) fn approval_outcome(self, decision: &str) -> &'static str {
        match ApprovalOutcome::parse(decision) {
            Some(ApprovalOutcome::Allowed) => self.approval_allowed(),
            Some(ApprovalOutcome::Expired) => self.said().approval_expired(),
            Some(ApprovalOutcome::Cancelled) => self.approval_cancelled(),
            Some(ApprovalOutcome::Denied) | None => self.approval_denied(),
        }
    }

    /// The approval buttons (shared with kernel-tg).
    pub(crate) fn approval_once(self) -> &'static str {
        self.said().approve_once()
    }

    pub(crate) fn approval_session(self) -> &'static str {
        self.said().approve_for_session()
    }

    pub(crate) fn approval_deny(self) -> &'static str {
        self.said().deny()
    }
}
