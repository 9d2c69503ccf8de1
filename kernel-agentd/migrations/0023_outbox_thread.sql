-- Schema version 22: the Telegram topic an outbox item goes to (issue 46).
--
-- `thread_id` is the client's `message_thread_id` the turn's owner message came from (opaque to
-- agentd, like `reply_to`); NULL: the main chat.

ALTER TABLE outbox ADD COLUMN thread_id INTEGER;
