-- Schema version 22: messages that live (issue 47): the owner's feedback on Kernel's answers, and
-- the full message `/retry` runs again.
--
-- `outbox.answer_message` is the `messages` row of the answer an 'answer' item delivers (the
-- session's last assistant message when the item was stored with it; NULL for other kinds and
-- for rows from before this migration), so a reaction on one of the chat messages the item
-- became (`message_ids`) finds the answer it is about while the item is kept.
--
-- `answer_feedback` holds one reaction (an emoji) per answer; the web console's session view
-- and `export` show it. It goes with its message (a /retry dropping the round, a deleted
-- session). `chat_message_id` is the chat message the owner reacted to. Times are unix
-- milliseconds.

ALTER TABLE outbox ADD COLUMN answer_message INTEGER;

CREATE TABLE answer_feedback (
    message_id       INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    feedback         TEXT    NOT NULL,
    chat_message_id  INTEGER NOT NULL,
    created_at       INTEGER NOT NULL
);

-- `retry_inputs` keeps, per session, the full message of its last owner turn that ended
-- (copied from `running_turns` in the transaction that stores the outcome): `/retry` runs it
-- again as the model first saw it (`input`, JSON blocks, NULL when the stored message is the
-- same) and as trusted as it was (`outside_content`), with the voice reply it asked for.
-- `message_id` is the stored user message it belongs to (a newer round makes it stale).

CREATE TABLE retry_inputs (
    session_id       INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    message_id       INTEGER NOT NULL,
    input            TEXT,
    outside_content  INTEGER NOT NULL,
    voice_reply      INTEGER NOT NULL
);
