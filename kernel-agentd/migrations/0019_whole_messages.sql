-- Schema version 19: owner messages kept to run later keep what the owner sent, not only its
-- text.
--
-- running_turns: the stored user message is slimmed (an image becomes `[图片已处理]`, a
-- document's text `[文件 name 已处理]`, a transcript `[语音已处理]`), so a re-run of a cut-off
-- turn from it alone would lose them. `input` holds the message as the model saw it (JSON blocks,
-- as `messages.content`) while the turn runs, only when it differs from the stored one (NULL
-- otherwise); it is cleared once the turn runs again. `outside_content` (0/1): the message
-- carried content from outside the owner (a forward, a document), so the re-run asks for
-- approvals as the first run would (rows from before this migration are taken as outside
-- content: the safe side). `voice_reply` (0/1): the owner wants the answer spoken. Deleting a
-- session forgets its cut-off turns, full messages and all.
--
-- follow_ups: a queued message (a `/next`, or a message a budget limit refused and the owner's
-- Continue released) keeps its images and documents in `whole` (JSON blocks; NULL for text
-- only, `text` then being the message) and whether it is outside content.

ALTER TABLE running_turns ADD COLUMN input TEXT;
ALTER TABLE running_turns ADD COLUMN outside_content INTEGER NOT NULL DEFAULT 0;
ALTER TABLE running_turns ADD COLUMN voice_reply INTEGER NOT NULL DEFAULT 0;
UPDATE running_turns SET outside_content = 1 WHERE state = 'cut_off';

CREATE TRIGGER running_turns_of_a_deleted_session AFTER DELETE ON sessions
BEGIN
    DELETE FROM running_turns WHERE session_id = OLD.id AND state != 'running';
END;

ALTER TABLE follow_ups ADD COLUMN whole TEXT;
ALTER TABLE follow_ups ADD COLUMN outside_content INTEGER NOT NULL DEFAULT 0;
