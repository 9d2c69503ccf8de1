-- Schema version 19: what a cut-off owner turn needs to run again as the owner sent it.
--
-- The stored user message is slimmed (an image becomes `[图片已处理]`, a document's text
-- `[文件 name 已处理]`, a transcript `[语音已处理]`), so a re-run from it alone would lose them.
-- `input` holds the message as the model saw it (JSON blocks, as `messages.content`) while the
-- turn runs, only when it differs from the stored one (NULL otherwise); it is cleared once the
-- turn runs again. `outside_content` (0/1): the message carried content from outside the owner
-- (a forward, a document), so the re-run asks for approvals as the first run would.
-- `voice_reply` (0/1): the owner sent a voice note and wants the answer spoken.

ALTER TABLE running_turns ADD COLUMN input TEXT;
ALTER TABLE running_turns ADD COLUMN outside_content INTEGER NOT NULL DEFAULT 0;
ALTER TABLE running_turns ADD COLUMN voice_reply INTEGER NOT NULL DEFAULT 0;
