//! Axum middlewares in front of rmcp's service: the bearer token check, the time and size
//! limit on a request's arrival, and the count of requests still being answered, which
//! shutdown waits for.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::task::TaskTracker;

/// The token every request must present, kept as its digest: comparing digests in
/// constant time tells a caller neither a matching prefix nor the token's length.
#[derive(Clone)]
pub struct Token(Arc<[u8; 32]>);

impl Token {
    pub fn new(token: &str) -> Token {
        Token(Arc::new(Sha256::digest(token.as_bytes()).into()))
    }

    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        digest.ct_eq(&*self.0).into()
    }
}

/// The credentials of an `Authorization: Bearer …` header (the scheme in any case).
fn bearer(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, credentials) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// Refuses, with 401, a request without the server's bearer token.
pub async fn require_token(State(token): State<Token>, request: Request, next: Next) -> Response {
    if bearer(&request).is_some_and(|presented| token.matches(presented)) {
        return next.run(request).await;
    }
    tracing::warn!(
        path = %request.uri().path(),
        "refused a request without the right bearer token"
    );
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "Unauthorized: send `Authorization: Bearer <token>` with the server's token\n",
    )
        .into_response()
}

/// How long a request's body may take to arrive, and how large it may be.
#[derive(Clone, Copy)]
pub struct Arrival {
    pub time: Duration,
    pub max_bytes: usize,
}

/// Reads the request's body within the time limit (408 otherwise) and the size limit (413
/// otherwise), then hands it on. The answer itself has no time limit: a call may wait for
/// the human's dialog or run the project's checks for minutes.
pub async fn arrive_in_time(
    State(limit): State<Arrival>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(limit.time, axum::body::to_bytes(body, limit.max_bytes));
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: a message may be at most {} bytes (BMAD_MAX_LINE_BYTES)\n",
                    limit.max_bytes
                ),
            )
                .into_response()
        }
        Err(_) => {
            tracing::warn!(
                path = %parts.uri.path(),
                "a request's body did not arrive in time"
            );
            return (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the request did not arrive within {} s (BMAD_HTTP_REQUEST_SECS)\n",
                    limit.time.as_secs()
                ),
            )
                .into_response();
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Counts a request as in flight until its response has been sent in full (the body is
/// dropped). A GET opens a stream that lasts as long as the client keeps it: it is not
/// waited for.
pub async fn track(State(tracker): State<TaskTracker>, request: Request, next: Next) -> Response {
    if request.method() == Method::GET {
        return next.run(request).await;
    }
    let in_flight = tracker.token();
    let response = next.run(request).await;
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            // Holds the count for as long as the body lives.
            let _held = &in_flight;
            frame
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_token_itself_matches() {
        let t = Token::new("0123456789abcdef");
        assert!(t.matches("0123456789abcdef"));
        for other in [
            "",
            "0123456789abcde",
            "0123456789abcdefg",
            "x123456789abcdef",
        ] {
            assert!(!t.matches(other), "{other}");
        }
    }
}
