-- Schema version 18: the model a scheduled task runs on (issue 36).
--
-- `schedules.model` and `task_runs.model` name the provider and model a task's turn uses,
-- "provider/model" as the owner gave it (checked against the configured providers when the
-- schedule was added); NULL: the current provider/model when it runs (as before).

ALTER TABLE schedules ADD COLUMN model TEXT;
ALTER TABLE task_runs ADD COLUMN model TEXT;
