-- Schema version 12: pending runs of scheduled tasks.
--
-- A 'task' schedule that fires stores its run here in the same transaction that moves (or
-- deletes) the schedule, and the row stays until the run's turn has ended with an outcome the
-- owner gets (or the owner cancelled it), so a run cut off by a shutdown or a crash runs at the
-- next start. `prompt` is the text the turn is given, its due time already in it. Deleting a
-- schedule deletes its pending runs; `schedule_id` is NULL for a one-shot's run, whose schedule
-- is deleted as it fires. Times are unix milliseconds, UTC.

CREATE TABLE task_runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    schedule_id  INTEGER REFERENCES schedules (id) ON DELETE CASCADE,
    prompt       TEXT    NOT NULL,
    created_at   INTEGER NOT NULL
);

CREATE INDEX task_runs_by_schedule ON task_runs (schedule_id);
