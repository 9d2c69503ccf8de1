//! `Store`: the SQLite database (sessions, messages, settings) behind a cheap `Clone` handle.
