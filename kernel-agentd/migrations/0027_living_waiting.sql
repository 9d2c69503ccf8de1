-- Schema version 27: messages that live, third pass (issue 47).
--
-- `follow_ups.message_key` is the idempotency key of the owner's message a `/next` item came
-- from (kernel-tg: "tg:<chat>:<message>"; NULL: none, e.g. a late steer or a kept message), so
-- an edit of that message while it waits replaces its text, and the turn that runs it takes
-- the key (a later edit then finds that turn).

ALTER TABLE follow_ups ADD COLUMN message_key TEXT;
CREATE INDEX follow_ups_message_key ON follow_ups (message_key) WHERE message_key IS NOT NULL;
