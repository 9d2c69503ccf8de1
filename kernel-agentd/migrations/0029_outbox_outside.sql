-- Schema version 29: whether an outbox item carried content from outside the owner (issue 49).
--
-- `outside` is 1 for an answer of a turn that read outside content (a forward, a document, an
-- MCP result, a job's output) and for a background job's notice. A reply to the chat message
-- such an item became (`message_ids`) makes the owner's turn outside content too, so with
-- `approvals.mode = "untrusted"` its risky actions still wait for the owner's tap.

ALTER TABLE outbox ADD COLUMN outside INTEGER NOT NULL DEFAULT 0;
