//! What the model reads when a risky call did not run (English, like every tool result).

/// The tool's result when the owner denied the action.
pub(crate) const DENIED: &str = "not run: denied by the owner. Do not try it another way; tell the owner what you would have done, or ask.";
/// The tool's result when nobody answered the approval in time.
pub(crate) const NOT_ANSWERED: &str =
    "not run: the owner's approval was not answered in time (counted as denied).";
