-- Schema version 17: memory consolidation (issue 39). A background job merges near-duplicate
-- automatic memories, retires done or past tasks and sets aside a memory a newer one
-- contradicts. Nothing is deleted: a memory the job takes out of recall moves, row for row and
-- with its id, to `memories_set_aside` (never recalled or searched; listed on request), and
-- every change is logged in `memory_changes` under its run (`consolidation_runs`), so undoing a
-- run puts everything back as it was. The owner's memories are never changed by the job; it
-- may only propose a merge (`memory_proposals`), applied when the owner presses merge.

CREATE TABLE consolidation_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    -- ok | malformed | failed
    outcome     TEXT    NOT NULL,
    merged      INTEGER NOT NULL DEFAULT 0,
    retired     INTEGER NOT NULL DEFAULT 0,
    superseded  INTEGER NOT NULL DEFAULT 0,
    proposed    INTEGER NOT NULL DEFAULT 0,
    undone_at   INTEGER
);

CREATE TABLE memory_changes (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id             INTEGER NOT NULL REFERENCES consolidation_runs (id),
    -- merge | retire | supersede
    kind               TEXT    NOT NULL,
    -- merge: the memory kept (its text rewritten); retire / supersede: the memory set aside
    memory_id          INTEGER NOT NULL,
    -- merge: the kept memory before the change
    before_text        TEXT,
    before_created_at  INTEGER,
    before_origin      TEXT,
    before_importance  INTEGER,
    at                 INTEGER NOT NULL,
    undone_at          INTEGER
);

CREATE INDEX memory_changes_run ON memory_changes (run_id);

CREATE TABLE memories_set_aside (
    -- The memory's own id (AUTOINCREMENT never hands it out again, so undo puts it back).
    id            INTEGER PRIMARY KEY,
    text          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    source        TEXT    NOT NULL,
    importance    INTEGER,
    refreshed_at  INTEGER,
    origin        TEXT,
    -- merged | retired | superseded
    reason        TEXT    NOT NULL,
    -- merged: the memory kept; superseded: the newer memory
    by_id         INTEGER,
    change_id     INTEGER NOT NULL REFERENCES memory_changes (id),
    set_aside_at  INTEGER NOT NULL
);

CREATE TABLE memory_proposals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL REFERENCES consolidation_runs (id),
    -- JSON array of memory ids, and each one's text when proposed (a changed memory makes the
    -- proposal stale)
    memories    TEXT    NOT NULL,
    text        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    -- merged | kept | stale
    decision    TEXT,
    decided_at  INTEGER
);
