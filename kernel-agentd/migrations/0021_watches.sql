-- Schema version 20: watches (issue 52) and paused schedules.
--
-- A schedule's `mode` may now be 'watch': at each firing a bounded turn on the cheap model
-- runs with its message as the instruction, and the owner hears only what it passes to
-- `notify_owner`. `paused` = 1 keeps a schedule from firing until it is resumed (its
-- `next_fire` is set from the resume time then).
--
-- `watch_runs` keeps each watch's recent runs (pruned to the last few per watch): when it ran,
-- how it ended ('quiet', 'notified', 'failed', 'skipped'), its summary (what it told the owner,
-- or "nothing new"), and its tokens and cost (USD, NULL when the model has no price). A run's
-- row, its outbox item (if it told the owner) and the deletion of its pending `task_runs` row
-- are one transaction. Times are unix milliseconds, UTC.

ALTER TABLE schedules ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;

CREATE TABLE watch_runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_id  INTEGER NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    ran_at       INTEGER NOT NULL,
    outcome      TEXT    NOT NULL,
    summary      TEXT    NOT NULL,
    tokens       INTEGER NOT NULL DEFAULT 0,
    cost_usd     REAL
);

CREATE INDEX watch_runs_by_schedule ON watch_runs (schedule_id, ran_at);
