//! `ApiError`: what a domain operation tells the caller; mapped to `tonic::Status` only in `rpc`.

pub(crate) use crate::refusal::Refusal;

/// A refusal or failure of an API operation. Messages are for humans and never contain SQL,
/// panic text or secrets; `Internal` keeps its cause for the log only.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The owner's request is refused for a reason the owner can fix; its kind and arguments
    /// reach the client, which says it in the owner's language.
    #[error("{0}")]
    Refused(Refusal),
    /// The request itself is wrong (empty text, malformed `#n`, unknown model…).
    #[error("{0}")]
    InvalidArgument(String),
    /// A referenced thing does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request is valid but the state does not allow it.
    #[error("{0}")]
    FailedPrecondition(String),
    /// A size or rate limit was hit.
    #[error("{0}")]
    ResourceExhausted(String),
    /// The feature has not been built yet.
    #[error("{0} is not implemented yet")]
    Unimplemented(&'static str),
    /// Something broke inside; the cause is logged, the caller sees a generic message.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

impl ApiError {
    /// Wraps an internal cause.
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        Self::Internal(cause.into())
    }
}
