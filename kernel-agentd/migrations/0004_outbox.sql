-- Schema version 4: the outbox, everything meant for the owner until it is delivered.
--
-- A row is written in the same transaction that stores what it delivers (a turn's final
-- answer) or on its own (a failure or cancellation notice). `seq` is the delivery order and is
-- never reused (AUTOINCREMENT), even after acknowledged rows are pruned. `kind` is 'answer'
-- (`text` is Markdown, `voice` an optional Ogg/Opus reply), 'failed' (`text` the redacted
-- message) or 'cancelled'. `reply_to` and `placeholder` are the client's Telegram message ids;
-- `parts_done` counts the parts acknowledged so far, `message_ids` (a JSON array) the messages
-- they became. `acked_at` is set once the whole item is delivered. Times are unix milliseconds.

CREATE TABLE outbox (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_id      TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    text         TEXT    NOT NULL,
    voice        BLOB,
    reply_to     INTEGER,
    placeholder  INTEGER,
    parts_done   INTEGER NOT NULL DEFAULT 0,
    failed_parts INTEGER NOT NULL DEFAULT 0,
    message_ids  TEXT    NOT NULL DEFAULT '[]',
    created_at   INTEGER NOT NULL,
    acked_at     INTEGER
);

CREATE INDEX outbox_pending ON outbox (seq) WHERE acked_at IS NULL;

CREATE INDEX outbox_by_turn ON outbox (turn_id);
