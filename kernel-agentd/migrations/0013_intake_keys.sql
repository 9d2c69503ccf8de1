-- Schema version 13: idempotency keys of owner messages (exactly-once intake).
--
-- A `Chat` request carries one key per owner message it takes (kernel-tg: "tg:<chat>:<message>").
-- The keys are stored with the turn's user message, in the same transaction, so a message is
-- taken exactly when its key is; a repeated key starts no turn. `turn_id` is the turn that took
-- the key. The primary key makes two concurrent requests with the same key race safely: one
-- insert wins. Times are unix milliseconds, UTC.

CREATE TABLE intake_keys (
    key         TEXT    PRIMARY KEY,
    turn_id     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;
