-- Schema version 9: auto memory. Memories say where they come from (`source`: 'owner' for
-- /remember and the memory tools, 'auto' for the background job), how important the job judged
-- them (1–5; NULL for the owner's) and when they were last confirmed (`refreshed_at`, unix ms;
-- a near-duplicate found again refreshes it). `daily_notes` holds one Markdown note per local
-- day (`YYYY-MM-DD`), appended by each run. The job's progress (the last message it read, its
-- last run) lives in `settings`.

ALTER TABLE memories ADD COLUMN source TEXT NOT NULL DEFAULT 'owner';

ALTER TABLE memories ADD COLUMN importance INTEGER;

ALTER TABLE memories ADD COLUMN refreshed_at INTEGER;

CREATE INDEX memories_auto ON memories (importance, refreshed_at) WHERE source = 'auto';

CREATE TABLE daily_notes (
    date        TEXT    PRIMARY KEY NOT NULL,
    text        TEXT    NOT NULL,
    updated_at  INTEGER NOT NULL
);
