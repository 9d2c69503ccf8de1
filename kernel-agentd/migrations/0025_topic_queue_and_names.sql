-- Schema version 25: the `/next` queue per session, and the names of Telegram topics (issue 46).
--
-- follow_ups.session_id: a message queued with `/next` inside a topic runs in that topic's
-- session (its own lane) and answers there. NULL (older rows, the main chat): the main lane.
-- topic_sessions.name: the topic's name as the owner gave it (from the forum topic service
-- message), so an item for a deleted topic can say which topic it came from. NULL: not seen.

ALTER TABLE follow_ups ADD COLUMN session_id INTEGER;
ALTER TABLE topic_sessions ADD COLUMN name TEXT;
