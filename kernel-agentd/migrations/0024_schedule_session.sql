-- Schema version 24: the session a schedule was set in (issue 46).
--
-- A reminder set inside a Telegram topic reports in that topic: when it fires, agentd looks up
-- the topic the session is bound to (`topic_sessions`). NULL (older rows, schedules set through
-- the API or imported): the main chat. Deleting the session leaves the schedule (main chat).

ALTER TABLE schedules ADD COLUMN session_id INTEGER;
