-- Schema version 15: budgets (issue 36).
--
-- `budget_marks` remembers, per period, what the budget already did so that a restart repeats
-- nothing: `period` is 'day:YYYY-MM-DD' or 'month:YYYY-MM' in general.timezone; `kind` is
-- 'warn:<scope>' (the owner was warned at warn_at of that limit), 'override' (the owner pressed
-- Continue for that period) or 'skipped' (the owner was told scheduled tasks were skipped).
-- The spend itself is never stored here: it is summed from `usage` (the ledger is the truth).
-- `usage.purpose` says what a model call was for ('owner', 'task', 'title', 'memory',
-- 'summary'); rows from before are owner turns. Times are unix milliseconds, UTC.

CREATE TABLE budget_marks (
    period      TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (period, kind)
) WITHOUT ROWID;

ALTER TABLE usage ADD COLUMN purpose TEXT NOT NULL DEFAULT 'owner';
