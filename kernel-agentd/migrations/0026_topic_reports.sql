-- Schema version 26: the session a scheduled task's run and a background job belong to (issue 46).
--
-- A task scheduled inside a Telegram topic runs in that topic's session and answers there, and a
-- job started by a turn in a topic reports there: the run copies its schedule's `session_id` as
-- it fires (a one-shot's schedule is deleted then), the job keeps its turn's session. NULL
-- (older rows, schedules and jobs of the main chat): the main chat, as before.

ALTER TABLE task_runs ADD COLUMN session_id INTEGER;
ALTER TABLE jobs ADD COLUMN session_id INTEGER;
