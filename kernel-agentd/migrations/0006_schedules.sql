-- Schema version 6: schedules — reminders and scheduled tasks the owner asked for — and files
-- sent to the owner through the outbox.
--
-- `spec` is how the owner's `when` was understood: 'at' (a one-shot; `expr` is the RFC 3339
-- instant it was due at) or 'cron' (`expr` a 5-field cron expression read in
-- `general.timezone`). `mode` is 'remind' (the message is sent as is) or 'task' (a turn runs
-- with the message as its prompt). `next_fire` is the next due instant (unix milliseconds,
-- UTC); a fired one-shot is deleted in the same transaction that queues what it delivers.
-- An outbox item may now also be a 'notice' (`text`: Markdown that is not a turn's answer).

CREATE TABLE schedules (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    spec       TEXT    NOT NULL,
    expr       TEXT    NOT NULL,
    mode       TEXT    NOT NULL,
    message    TEXT    NOT NULL,
    next_fire  INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX schedules_due ON schedules (next_fire);

-- A 'file' outbox item (the send_file tool): `text` is the caption, `voice` holds the file's
-- bytes and `file_name` its name.
ALTER TABLE outbox ADD COLUMN file_name TEXT;
