//! `OnFirstCall`: a gRPC service built when its first request arrives, not at start-up.
//!
//! Server reflection (what lets `grpcurl` list and call the API without the `.proto` files) decodes
//! every registered file descriptor set when it is built: ~0.7 MB of agentd's heap and the code
//! pages that decode them, held from start-up to exit although reflection is asked for only when
//! someone points `grpcurl` at agentd (BENCHMARKS.md "The third wave side by side"). Wrapped in
//! `OnFirstCall`, it costs nothing until then and stays built afterwards.

use std::convert::Infallible;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tonic::body::Body;
use tonic::server::NamedService;
use tower::Service;

/// The service `build` makes, built by the first request and shared by every clone. If building
/// fails (the embedded descriptor sets are compile-time constants, so only a broken build could),
/// each request is answered `UNIMPLEMENTED` and the error is logged.
pub(crate) struct OnFirstCall<S, F> {
    built: Arc<OnceLock<Option<S>>>,
    build: F,
}

impl<S, F: Clone> Clone for OnFirstCall<S, F> {
    fn clone(&self) -> Self {
        Self {
            built: Arc::clone(&self.built),
            build: self.build.clone(),
        }
    }
}

impl<S, F, E> OnFirstCall<S, F>
where
    F: Fn() -> Result<S, E>,
    E: std::fmt::Display,
{
    /// A service that calls `build` once, on its first request.
    pub(crate) fn new(build: F) -> Self {
        Self {
            built: Arc::new(OnceLock::new()),
            build,
        }
    }

    /// The built service, building it now if this is the first request.
    fn service(&self) -> Option<&S> {
        self.built
            .get_or_init(|| match (self.build)() {
                Ok(service) => Some(service),
                Err(e) => {
                    tracing::error!(error = %e, "cannot build a gRPC service on first use");
                    None
                }
            })
            .as_ref()
    }
}

impl<S: NamedService, F> NamedService for OnFirstCall<S, F> {
    const NAME: &'static str = S::NAME;
}

impl<S, F, E> Service<http::Request<Body>> for OnFirstCall<S, F>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    F: Fn() -> Result<S, E>,
    E: std::fmt::Display,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<http::Response<Body>, Infallible>>;

    /// Always ready: tonic's generated servers are (they take no back-pressure), and the wrapped
    /// one may not exist yet.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        match self.service() {
            Some(service) => Box::pin(service.clone().call(request)),
            None => Box::pin(async {
                Ok(tonic::Status::unimplemented("this service is not available").into_http())
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A stand-in service that answers every request with an empty 200.
    #[derive(Clone)]
    struct Answers;

    impl Service<http::Request<Body>> for Answers {
        type Response = http::Response<Body>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<http::Response<Body>, Infallible>>;

        fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _request: http::Request<Body>) -> Self::Future {
            std::future::ready(Ok(http::Response::new(Body::empty())))
        }
    }

    fn request() -> http::Request<Body> {
        http::Request::new(Body::empty())
    }

    #[tokio::test]
    async fn builds_on_the_first_request_only_and_clones_share_it() {
        let builds = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&builds);
        let mut lazy = OnFirstCall::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, String>(Answers)
        });
        let mut clone = lazy.clone();
        assert_eq!(
            builds.load(Ordering::SeqCst),
            0,
            "nothing built before a request"
        );
        let first = lazy.call(request()).await.unwrap();
        let second = clone.call(request()).await.unwrap();
        assert_eq!(first.status(), http::StatusCode::OK);
        assert_eq!(second.status(), http::StatusCode::OK);
        assert_eq!(
            builds.load(Ordering::SeqCst),
            1,
            "built once, shared by the clone"
        );
    }

    #[tokio::test]
    async fn a_service_that_cannot_be_built_answers_unimplemented() {
        let mut lazy = OnFirstCall::new(|| Err::<Answers, _>("broken descriptor set"));
        let response = lazy.call(request()).await.unwrap();
        let status = tonic::Status::from_header_map(response.headers()).expect("a grpc-status");
        assert_eq!(status.code(), tonic::Code::Unimplemented);
    }

    #[test]
    fn the_shipped_descriptor_sets_build_both_reflection_services() {
        assert!(super::super::reflection().build_v1().is_ok());
        assert!(super::super::reflection().build_v1alpha().is_ok());
    }
}
