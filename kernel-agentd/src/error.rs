//! `ApiError`: what a domain operation tells the caller; mapped to `tonic::Status` only in `rpc`.

/// A refusal or failure of an API operation. Messages are for humans and never contain SQL,
/// panic text or secrets; `Internal` keeps its cause for the log only.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
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

impl ApiError {
    /// Wraps an internal cause.
    pub fn internal(cause: impl Into<anyhow::Error>) -> Self {
        Self::Internal(cause.into())
    }
}
