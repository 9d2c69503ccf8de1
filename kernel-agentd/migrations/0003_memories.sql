-- Schema version 3: long-term memories.
--
-- `memories` keeps the original text; times are unix milliseconds (UTC). The full-text index
-- (`memories_fts`, an FTS5 table of the jieba-segmented text with rowid = memory id) is not
-- created here: it needs the FTS5 extension, and a SQLite without it must still open the
-- database (search then falls back to LIKE). kernel-agentd creates and back-fills it at start
-- when FTS5 is available.

CREATE TABLE memories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    text        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
