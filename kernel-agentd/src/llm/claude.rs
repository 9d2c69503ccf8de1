//! The `claude` provider: Anthropic Messages API over SSE.
