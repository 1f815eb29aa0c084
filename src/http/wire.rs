//! The JSON-RPC answers the HTTP transport gives itself, bounded and with the request's id
//! (docs/spec.md §12): a POST body that is no valid request for rmcp (`jsonrpc` not
//! "2.0", an integer id past what an MCP id holds, params of the wrong shape) is answered
//! as over stdio (`jsonrpc::answer_for`), with its own id and the specified code, where
//! rmcp answered 415 with plain text; and an error rmcp answers as JSON (a header that
//! does not match the body, an unsupported version) is cut to size
//! (`server::bounded_errors::bound`), where it quoted a 1 MB value whole.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The largest error body that is read to be cut (rmcp's are far smaller, or quote the
/// request, which the arrival limit bounds).
const MAX_ERROR_BODY: usize = 64 * 1024 * 1024;

pub async fn answer_bounded(request: Request, next: Next) -> Response {
    let request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
            return StatusCode::BAD_REQUEST.into_response();
        };
        if bytes.trim_ascii_start().starts_with(b"{") {
            if let Some(answer) = crate::jsonrpc::answer_for(&bytes) {
                return (
                    StatusCode::BAD_REQUEST,
                    [(header::CONTENT_TYPE, "application/json")],
                    answer,
                )
                    .into_response();
            }
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    bound(next.run(request).await).await
}

/// An error answered as JSON, cut to size when it is over it.
async fn bound(response: Response) -> Response {
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
