-- Schema version 5: a 'failed' outbox item's machine-readable reason and its arguments, so the
-- client says the failure in the owner's language. `reason` is NULL for rows written before
-- (an unknown reason: the client shows `text`); `args` is a JSON object of strings.

ALTER TABLE outbox ADD COLUMN reason TEXT;

ALTER TABLE outbox ADD COLUMN args TEXT;
