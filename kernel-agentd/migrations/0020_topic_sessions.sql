-- Schema version 20: Telegram topics bound to sessions (issue 46).
--
-- A topic of the owner's private chat (its `message_thread_id`) is one session: every message
-- in it belongs to that session. The binding is stored so a restart of either process keeps it.
-- A thread is bound to one session and a session to at most one thread; deleting the session
-- forgets its binding. `created_at` is unix milliseconds.

CREATE TABLE topic_sessions (
    thread_id  INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
);
