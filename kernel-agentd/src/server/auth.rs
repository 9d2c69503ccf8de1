//! `BearerAuth`: the TCP endpoint's check of `authorization: Bearer <token>` on every call.

use kernel_common::Secret;
use tonic::{Request, Status, service::Interceptor};

/// Rejects calls without the configured bearer token with `UNAUTHENTICATED`.
#[derive(Clone, Debug)]
pub struct BearerAuth {
    expected: Secret,
}

impl BearerAuth {
    /// Checks for `token`.
    pub fn new(token: Secret) -> Self {
        Self { expected: token }
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            });
        match given {
            Some(t) if constant_time_eq(t.as_bytes(), self.expected.expose().as_bytes()) => Ok(req),
            Some(_) => Err(Status::unauthenticated("invalid bearer token")),
            None => Err(Status::unauthenticated(
                "missing bearer token: send `authorization: Bearer <token>`",
            )),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(header: Option<&str>) -> Result<(), tonic::Code> {
        let mut req = Request::new(());
        if let Some(h) = header {
            req.metadata_mut()
                .insert("authorization", h.parse().unwrap());
        }
        BearerAuth::new(Secret::new("s3cret-token-123"))
            .call(req)
            .map(|_| ())
            .map_err(|s| s.code())
    }

    #[test]
    fn checks_the_token() {
        assert_eq!(call(Some("Bearer s3cret-token-123")), Ok(()));
        assert_eq!(
            call(Some("Bearer wrong")),
            Err(tonic::Code::Unauthenticated)
        );
        assert_eq!(
            call(Some("s3cret-token-123")),
            Err(tonic::Code::Unauthenticated)
        );
        assert_eq!(call(None), Err(tonic::Code::Unauthenticated));
    }
}
