//! The `openai_compat` provider: `/chat/completions` over SSE.
