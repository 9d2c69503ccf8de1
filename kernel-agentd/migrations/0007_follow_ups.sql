-- Schema version 7: the owner's `/next` queue — messages that run as their own turns, in `id`
-- order, once the running turn ends. A row is deleted when its turn starts.

CREATE TABLE follow_ups (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    text        TEXT    NOT NULL,
    -- The owner's message the answer replies to (a Telegram message id, opaque here).
    reply_to    INTEGER,
    created_at  INTEGER NOT NULL
);
