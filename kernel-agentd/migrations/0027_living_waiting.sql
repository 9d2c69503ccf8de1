-- Schema version 27: messages that live, third pass (issue 47).
--
-- `follow_ups.message_key` is the idempotency key of the owner's message a `/next` item came
-- from (kernel-tg: "tg:<chat>:<message>"; NULL: none, e.g. a late steer or a kept message), so
-- an edit of that message while it waits replaces its text, and the turn that runs it takes
-- the key (a later edit then finds that turn).

ALTER TABLE follow_ups ADD COLUMN message_key TEXT;
CREATE INDEX follow_ups_message_key ON follow_ups (message_key) WHERE message_key IS NOT NULL;

-- `edit_offers` holds the owner's edits of answered messages waiting for "Answer the edited
-- message", keyed by the edited message's idempotency key: its session, its newest text, and
-- the chat message that offers it (NULL until the client said), so an offer outlives a
-- kernel-tg restart and a second edit updates the same offer. A press takes the row; rows
-- last changed more than a week ago are forgotten (like the keys). Times are unix milliseconds.

CREATE TABLE edit_offers (
    message_key       TEXT    PRIMARY KEY,
    session_id        INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    text              TEXT    NOT NULL,
    offer_message_id  INTEGER,
    updated_at        INTEGER NOT NULL
);

-- `answer_chat_messages` maps each chat message an answer item became (as acknowledged) to the
-- answer's `messages` row. Outbox rows are pruned a week after delivery; this map is kept as
-- long as the answer itself (it goes with its message: a /retry dropping the round, a deleted
-- session), so a reaction on an answer of any age still finds it. Filled from the outbox rows
-- kept when this migration runs.

CREATE TABLE answer_chat_messages (
    chat_message_id  INTEGER PRIMARY KEY,
    message_id       INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE
);
CREATE INDEX answer_chat_messages_message ON answer_chat_messages (message_id);

INSERT OR REPLACE INTO answer_chat_messages (chat_message_id, message_id)
    SELECT j.value, o.answer_message FROM outbox o, json_each(o.message_ids) j
    WHERE o.kind = 'answer' AND o.answer_message IS NOT NULL
      AND EXISTS (SELECT 1 FROM messages WHERE id = o.answer_message)
    ORDER BY o.seq;
