-- Schema version 8: a session's summary of the rounds folded out of its request (a JSON object in
-- the fixed structure goal / constraints / decisions / open items / facts), the last message
-- ordinal it covers; and one row of token usage per model call (kept when its session is deleted).

CREATE TABLE session_summaries (
    session_id       INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    summary          TEXT    NOT NULL,
    through_ordinal  INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);

CREATE TABLE usage (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id          INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
    provider            TEXT    NOT NULL,
    model               TEXT    NOT NULL,
    input_tokens        INTEGER NOT NULL,
    output_tokens       INTEGER NOT NULL,
    cache_read_tokens   INTEGER NOT NULL,
    cache_write_tokens  INTEGER NOT NULL,
    created_at          INTEGER NOT NULL
);

CREATE INDEX usage_by_time ON usage (created_at);

CREATE INDEX usage_by_session ON usage (session_id);
