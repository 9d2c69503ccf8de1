-- Schema version 11: background delegations (`delegate_to_cli` with `background = true`).
--
-- `status` is 'running' until the CLI ends, then 'done' (exit code 0 and an answer), 'failed',
-- 'timed_out', 'cancelled' (by the owner, `/jobs cancel`) or 'interrupted' (agentd stopped or
-- crashed while it ran; the owner is told by an outbox notice queued in the same transaction).
-- `output` is the CLI's answer cut for the model; the full output stays in `output_path`.
-- Times are unix milliseconds, UTC.

CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    cli         TEXT    NOT NULL,
    task        TEXT    NOT NULL,
    cwd         TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    exit_code   INTEGER,
    output_path TEXT    NOT NULL DEFAULT '',
    output      TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    ended_at    INTEGER
);

CREATE INDEX jobs_recent ON jobs (started_at);
