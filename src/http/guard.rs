//! Axum middlewares in front of rmcp's service: the bearer token check, the `Host` and
//! `Origin` checks (rmcp makes them too, but after reading the body), the time and size
//! limit on a request's arrival and the byte budget shared by the bodies being read, and
//! the count of requests still being answered, which
//! shutdown waits for.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::task::TaskTracker;

use super::hosts;

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

/// How long a request's body may take to arrive, how large it may be, and the budget, in
/// KiB, that the bodies being read at once share.
#[derive(Clone)]
pub struct Arrival {
    pub time: Duration,
    pub max_bytes: usize,
    budget: Arc<Semaphore>,
    budget_kib: u32,
}

impl Arrival {
    pub fn new(time: Duration, max_bytes: usize, budget_bytes: usize) -> Arrival {
        let budget_kib = u32::try_from(budget_bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, Semaphore::MAX_PERMITS as u32);
        Arrival {
            time,
            max_bytes,
            budget: Arc::new(Semaphore::new(budget_kib as usize)),
            budget_kib,
        }
    }

    /// The share of the budget a body holds while it is read: its announced length (or
    /// the largest message when it announces none), never more than the whole budget.
    fn share(&self, request: &Request) -> u32 {
        let announced = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<usize>().ok());
        let bytes = announced.unwrap_or(self.max_bytes).min(self.max_bytes);
        u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, self.budget_kib)
    }
}

/// Reads the request's body within the time limit (408 otherwise) and the size limit (413
/// otherwise), then hands it on. The answer itself has no time limit: a call may wait for
/// the human's dialog or run the project's checks for minutes.
pub async fn arrive_in_time(
    State(limit): State<Arrival>,
    request: Request,
    next: Next,
) -> Response {
    let deadline = tokio::time::Instant::now() + limit.time;
    let share = limit.share(&request);
    let budget = tokio::time::timeout_at(deadline, limit.budget.clone().acquire_many_owned(share));
    let Ok(Ok(_reading)) = budget.await else {
        tracing::warn!("no budget to read a request's body in time: too many bodies arriving");
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: too many request bodies are being read at once (BMAD_HTTP_BODIES_BYTES); retry\n",
        )
            .into_response();
    };
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout_at(deadline, axum::body::to_bytes(body, limit.max_bytes));
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
    drop(_reading);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The `Host` and `Origin` values accepted, as given to rmcp (`options::allowed_hosts`,
/// `options::allowed_origins`), compared as rmcp compares them.
#[derive(Clone)]
pub struct Allowed {
    pub hosts: Arc<[String]>,
    pub origins: Arc<[String]>,
}

/// Refuses, before its body is read, a request whose `Host` is not one of the server's
/// names (400 when missing or malformed, 403 otherwise) or whose `Origin` is not allowed
/// (403). rmcp checks them again.
pub async fn check_host_and_origin(
    State(allowed): State<Allowed>,
    request: Request,
    next: Next,
) -> Response {
    let host = match request.headers().get(header::HOST) {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| axum::http::uri::Authority::try_from(v).ok()),
        None => request.uri().authority().cloned(),
    };
    let Some(host) = host else {
        return (
            StatusCode::BAD_REQUEST,
            "Bad Request: missing or invalid Host header\n",
        )
            .into_response();
    };
    if !hosts::host_allowed(&host, &allowed.hosts) {
        tracing::warn!(host = %host, "refused a request with a Host that is not the server's (possible DNS rebinding)");
        return (
            StatusCode::FORBIDDEN,
            "Forbidden: Host header is not allowed\n",
        )
            .into_response();
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        if !origin
            .to_str()
            .is_ok_and(|o| hosts::origin_allowed(o, &allowed.origins))
        {
            tracing::warn!(origin = ?origin, "refused a request from an Origin not allowed");
            return (
                StatusCode::FORBIDDEN,
                "Forbidden: Origin header is not allowed\n",
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// Counts a request as in flight until its response has been sent in full (the body is
/// dropped). A GET opens a stream that lasts as long as the client keeps it: it is not
/// waited for.
pub async fn track(State(tracker): State<TaskTracker>, request: Request, next: Next) -> Response {
    if request.method() == Method::GET {
        return next.run(request).await;
    }
    let in_flight = tracker.token();
    holding(next.run(request).await, in_flight)
}

/// `response`, keeping `held` until its body has been sent in full (or dropped).
pub(super) fn holding<T: Send + 'static>(response: Response, held: T) -> Response {
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _held = &held;
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
