-- Schema version 1: sessions, their messages, and key/value settings.
-- Times are unix milliseconds (UTC). A message's `content` is the JSON array of its blocks.

CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT,
    provider    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL,
    role        TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (session_id, ordinal)
);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL
);
