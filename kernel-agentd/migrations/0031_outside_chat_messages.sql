-- Schema version 31: the chat messages that carried outside content, kept past the outbox (issue 49).
--
-- `outbox.outside` (0029) marks an item that carried content from outside the owner, but outbox
-- rows are pruned a week after delivery, and with them the mark: a reply to such a message
-- after that counted as clean. `outside_chat_messages` holds each chat message such an item
-- became (as acknowledged); one integer per message, kept for good (at least as long as
-- `answer_chat_messages`): a reply to it, of any age, makes the owner's turn outside content.
-- Filled from the outbox rows kept when this migration runs.

CREATE TABLE outside_chat_messages (
    chat_message_id  INTEGER PRIMARY KEY
);

INSERT OR IGNORE INTO outside_chat_messages (chat_message_id)
    SELECT j.value FROM outbox o, json_each(o.message_ids) j WHERE o.outside = 1;
