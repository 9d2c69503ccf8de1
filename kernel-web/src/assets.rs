//! The embedded static assets (`assets/`): the one stylesheet and the one script, served with
//! their types; anything else is 404.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("../assets/kernel.css");
const JS: &str = include_str!("../assets/kernel.js");

/// `GET /assets/{name}`.
pub(crate) async fn serve(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "kernel.css" => (CSS, "text/css; charset=utf-8"),
        "kernel.js" => (JS, "text/javascript; charset=utf-8"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        body,
    )
        .into_response()
}
