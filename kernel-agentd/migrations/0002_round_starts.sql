-- Schema version 2: find where conversation rounds begin, and list sessions by activity,
-- without scanning.
--
-- `starts_round` is 1 for a user turn: a `user` message with at least one block that is not a
-- tool result. Existing rows are backfilled from their JSON; a row whose content is not a JSON
-- array of objects keeps 0 (it is reported as corrupt when loaded, never here).

ALTER TABLE messages ADD COLUMN starts_round INTEGER NOT NULL DEFAULT 0;

UPDATE messages
SET starts_round = CASE
    WHEN role <> 'user' THEN 0
    WHEN NOT json_valid(content) THEN 0
    WHEN json_type(content) <> 'array' THEN 0
    ELSE EXISTS (
        SELECT 1
        FROM json_each(messages.content) AS block
        WHERE CASE
            WHEN block.type = 'object'
                THEN json_extract(block.value, '$.type') IS NOT 'tool_result'
            ELSE 0
        END
    )
END;

CREATE INDEX messages_round_starts ON messages (session_id, ordinal) WHERE starts_round = 1;

CREATE INDEX sessions_by_activity ON sessions (updated_at DESC, id DESC);
