//! The titles client: a non-streaming "short title" call with the `[titles]` provider.
