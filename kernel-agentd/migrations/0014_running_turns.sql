-- Schema version 14: owner turns that are running, so that one cut off by a crash leaves a trace.
--
-- An owner turn's row is stored with its user message (same transaction) and deleted with its
-- outcome's outbox item (same transaction). At start, every row still 'running' belongs to a turn
-- an agentd crash cut off: it becomes an outbox item telling the owner (reason TURN_CUT_OFF) and
-- its state 'cut_off'; `RerunTurn` runs its message again once ('rerun'). `message_id` is the
-- stored user message; `reply_to`/`placeholder` are where the answer was going (Telegram ids).
-- Times are unix milliseconds, UTC.

CREATE TABLE running_turns (
    turn_id      TEXT    PRIMARY KEY,
    session_id   INTEGER NOT NULL,
    message_id   INTEGER NOT NULL,
    reply_to     INTEGER,
    placeholder  INTEGER,
    state        TEXT    NOT NULL DEFAULT 'running'
                 CHECK (state IN ('running', 'cut_off', 'rerun')),
    created_at   INTEGER NOT NULL
) WITHOUT ROWID;
