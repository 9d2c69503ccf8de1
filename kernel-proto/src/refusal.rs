//! A [`Refusal`](crate::v1::Refusal) in a gRPC status: encoded as a `google.rpc.Status` whose
//! `details` hold one `Any` of `kernel.v1.Refusal` (the standard rich-error layout, so grpcurl
//! shows it), and read back by clients.

use prost::Message;
use tonic::codegen::Bytes;

use crate::v1::Refusal;

/// The `Any` type URL of a [`Refusal`].
pub const TYPE_URL: &str = "type.googleapis.com/kernel.v1.Refusal";

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
    #[prost(message, repeated, tag = "3")]
    details: Vec<Any>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, Message)]
struct Any {
    #[prost(string, tag = "1")]
    type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    value: Vec<u8>,
}

/// A status with `code` and `message` that carries `refusal` in its details.
pub fn status(code: tonic::Code, message: String, refusal: &Refusal) -> tonic::Status {
    let details = RpcStatus {
        code: code as i32,
        message: message.clone(),
        details: vec![Any {
            type_url: TYPE_URL.to_owned(),
            value: refusal.encode_to_vec(),
        }],
    };
    tonic::Status::with_details(code, message, Bytes::from(details.encode_to_vec()))
}

/// The refusal a status carries, if any.
pub fn of(status: &tonic::Status) -> Option<Refusal> {
    let details = RpcStatus::decode(status.details()).ok()?;
    details
        .details
        .into_iter()
        .find(|any| any.type_url == TYPE_URL)
        .and_then(|any| Refusal::decode(any.value.as_slice()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_survives_the_status() {
        let refusal = Refusal {
            reason: "NOT_IN_LISTING".into(),
            args: [("number".into(), "9".into()), ("max".into(), "3".into())].into(),
        };
        let s = status(tonic::Code::InvalidArgument, "#9 is not…".into(), &refusal);
        assert_eq!(s.message(), "#9 is not…");
        assert_eq!(of(&s), Some(refusal));
        assert_eq!(of(&tonic::Status::internal("x")), None);
    }
}
