//! The one conversion from `ApiError` to `tonic::Status`: logs the cause, returns a redacted
//! message; a refusal also carries its kind and arguments (`kernel.v1.Refusal`) in the details.

use tonic::{Code, Status};

use crate::error::ApiError;
use crate::refusal::{Refusal, RefusalClass};

/// Maps a domain error to a gRPC status. Internal causes are logged at ERROR and replaced by a
/// generic message; the other messages are already meant for humans.
pub(crate) fn to_status(err: ApiError) -> Status {
    let code = match &err {
        ApiError::Refused(refusal) => return refused(refusal),
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

/// A refusal: its class's code, the English message, the kind and arguments in the details.
fn refused(refusal: &Refusal) -> Status {
    let code = match refusal.class() {
        RefusalClass::InvalidArgument => Code::InvalidArgument,
        RefusalClass::NotFound => Code::NotFound,
        RefusalClass::FailedPrecondition => Code::FailedPrecondition,
    };
    let detail = refusal.wire().to_proto();
    kernel_proto::refusal::status(code, refusal.to_string(), &detail)
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
        assert_eq!(kernel_proto::refusal::of(&s), None);
    }

    #[test]
    fn a_refusal_carries_its_kind_and_an_english_message() {
        let s = to_status(Refusal::NotInListing { number: 9, max: 3 }.into());
        assert_eq!(
            (s.code(), s.message()),
            (
                Code::InvalidArgument,
                "#9 is not in the latest listing (#1..#3)"
            )
        );
        let detail = kernel_proto::refusal::of(&s).expect("the refusal's kind");
        assert_eq!(detail.reason, "NOT_IN_LISTING");
        assert_eq!(detail.args["number"], "9");
        assert_eq!(detail.args["max"], "3");
        let s = to_status(Refusal::SessionGone { number: 2 }.into());
        assert_eq!(s.code(), Code::NotFound);
    }
}
