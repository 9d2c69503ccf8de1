//! The one conversion from `ApiError` to `tonic::Status`: logs the cause, returns a redacted message.

use tonic::{Code, Status};

use crate::error::ApiError;

/// Maps a domain error to a gRPC status. Internal causes are logged at ERROR and replaced by a
/// generic message; the other messages are already meant for humans.
pub fn to_status(err: ApiError) -> Status {
    let code = match &err {
        ApiError::InvalidArgument(_) => Code::InvalidArgument,
        ApiError::NotFound(_) => Code::NotFound,
        ApiError::FailedPrecondition(_) => Code::FailedPrecondition,
        ApiError::ResourceExhausted(_) => Code::ResourceExhausted,
        ApiError::Unimplemented(_) => Code::Unimplemented,
        ApiError::Internal(cause) => {
            tracing::error!(error = %format!("{cause:#}"), "internal error while serving a request");
            Code::Internal
        }
    };
    Status::new(code, err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_messages() {
        let s = to_status(ApiError::InvalidArgument("empty message".into()));
        assert_eq!(
            (s.code(), s.message()),
            (Code::InvalidArgument, "empty message")
        );
        let s = to_status(ApiError::internal(anyhow::anyhow!(
            "SELECT * FROM secrets failed"
        )));
        assert_eq!(s.code(), Code::Internal);
        assert!(!s.message().contains("SELECT"));
        let s = to_status(ApiError::Unimplemented("Chat"));
        assert_eq!(s.code(), Code::Unimplemented);
    }
}
