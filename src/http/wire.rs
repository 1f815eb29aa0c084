//! An error rmcp answers as JSON (a header that does not match the body, an unsupported version)
//! cut to size ([`server::bounded_errors::bound`](crate::server::bounded_errors::bound),
//! docs/spec.md §12), where it quoted a 1 MB value whole. A POST body that is no request rmcp can
//! serve is answered before rmcp sees it (`arrival`).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The largest error body that is read to be cut (rmcp's are far smaller, or quote the
/// request, which the message limit bounds).
const MAX_ERROR_BODY: usize = 64 * 1024 * 1024;

/// The answer to `request`; an error answered as JSON, cut to size when it is over it.
pub async fn answer_bounded(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status().is_success() || !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BODY).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(mut message) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    if !crate::server::bounded_errors::bound_message(&mut message) {
        return Response::from_parts(parts, Body::from(bytes));
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(message.to_string()))
}
