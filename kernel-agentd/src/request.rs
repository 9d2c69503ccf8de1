//! Building a model request from plain inputs, apart from running it: the byte-stable system
//! prompt and the per-turn block (`context`), the session's history within the token budget
//! (`history`, `budget`, `tokens`), what is stored of each message (`slim`), the session
//! summary rounds fold into (`session_summary`), and the repair of a stored transcript so it is
//! valid to send (`repair`). It never imports `crate::turn`.

pub(crate) mod budget;
pub(crate) mod context;
pub(crate) mod history;
pub(crate) mod repair;
pub(crate) mod session_summary;
pub(crate) mod slim;
pub(crate) mod tokens;
