//! A POST body's arrival. rmcp reads a body only after it has checked `Host`, `Origin` and the
//! media types, and refused a request that fails them; so the body handed to it reads the client
//! only when rmcp reads it, and nothing of a refused request's body is read or counted. On rmcp's
//! first read the body takes its share of the budget that the bodies being read at once share
//! (`BMAD_HTTP_BODIES_BYTES`: its announced length, or the largest message when it announces none),
//! must arrive whole within `BMAD_HTTP_REQUEST_SECS`, and is vetted as a stdio line is
//! ([`jsonrpc::answer_for`](crate::jsonrpc::answer_for)) before rmcp parses it. A body over the
//! message limit is handed on as soon as it is over, and rmcp's own limit refuses it (413). What
//! the arrival refuses reaches rmcp as a failed read, and the answer rmcp gives that (500) is
//! replaced here by the refusal: 503 (no room in the budget in time), 408 (not in time), or 400
//! with the JSON-RPC error that names the request's own id.
//!
//! Why not tower-http's `RequestBodyTimeoutLayer` and tower's `ConcurrencyLimitLayer`: the
//! first restarts its timer at every frame, so a body sent a byte at a time would never be
//! cut and would hold its share of the budget as long as it liked; the second holds its
//! permit until the response is made, which in the 2026-07-28 era is when the call has been
//! answered (minutes, when it waits for the human or the checks): it would bound the calls
//! being answered, not the bodies being read.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tokio::sync::Semaphore;
use tokio::time::{timeout_at, Instant};

/// How long a request's body may take to arrive, how large a message may be, and the
/// budget, in KiB, that the bodies being read at once share.
#[derive(Clone)]
pub struct Arrival {
    time: Duration,
    max_bytes: usize,
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
    fn share(&self, headers: &HeaderMap) -> u32 {
        let announced = headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<usize>().ok());
        let bytes = announced.unwrap_or(self.max_bytes).min(self.max_bytes);
        u32::try_from(bytes.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .clamp(1, self.budget_kib)
    }
}

/// Why a body was not handed to rmcp.
enum Refusal {
    /// No room in the budget in time.
    Crowded,
    /// Not arrived in time.
    Late,
    /// No request rmcp can serve: the JSON-RPC error it gets instead.
    Answer(Vec<u8>),
}

impl Refusal {
    fn response(&self, limit: &Arrival) -> Response {
        match self {
            Refusal::Crowded => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: too many request bodies are being read at once (BMAD_HTTP_BODIES_BYTES); retry\n",
            )
                .into_response(),
            Refusal::Late => (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the request did not arrive within {} s (BMAD_HTTP_REQUEST_SECS)\n",
                    limit.time.as_secs()
                ),
            )
                .into_response(),
            Refusal::Answer(answer) => (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                answer.clone(),
            )
                .into_response(),
        }
    }
}

/// Hands rmcp a POST whose body is read only when rmcp reads it, and answers what its
/// arrival refused. The answer itself has no time limit: a call may wait for the human's
/// dialog or run the project's checks for minutes.
pub async fn arrive(State(limit): State<Arrival>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let share = limit.share(request.headers());
    let refused = Arc::new(OnceLock::new());
    let (parts, body) = request.into_parts();
    let read = read(limit.clone(), share, body, refused.clone());
    let body = Body::from_stream(futures_util::stream::once(read));
    let response = next.run(Request::from_parts(parts, body)).await;
    match refused.get() {
        Some(refusal) => refusal.response(&limit),
        None => response,
    }
}

/// The body, read once its share of the budget is held, within the time limit; a refusal
/// is kept in `refused` and read as an error.
async fn read(
    limit: Arrival,
    share: u32,
    mut body: Body,
    refused: Arc<OnceLock<Refusal>>,
) -> Result<Bytes, std::io::Error> {
    let refuse = |why: Refusal| {
        let _ = refused.set(why);
        std::io::Error::other("the request's body was refused")
    };
    let deadline = Instant::now() + limit.time;
    let budget = limit.budget.clone().acquire_many_owned(share);
    let Ok(Ok(_reading)) = timeout_at(deadline, budget).await else {
        tracing::warn!("no budget to read a request's body in time: too many bodies arriving");
        return Err(refuse(Refusal::Crowded));
    };
    let mut bytes = Vec::new();
    while bytes.len() <= limit.max_bytes {
        match timeout_at(deadline, body.frame()).await {
            Err(_) => {
                tracing::warn!("a request's body did not arrive in time");
                return Err(refuse(Refusal::Late));
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(std::io::Error::other(e)),
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
        }
    }
    // Over the limit, it goes to rmcp as it is, whose limit refuses it.
    if bytes.len() <= limit.max_bytes && bytes.trim_ascii_start().starts_with(b"{") {
        if let Some(answer) = crate::jsonrpc::answer_for(&bytes) {
            return Err(refuse(Refusal::Answer(answer)));
        }
    }
    Ok(Bytes::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::post;
    use axum::Router;
    use hyper_util::service::TowerToHyperService;

    /// A POST of `body` to an app whose handler reads the body when `reads`.
    async fn post_to(limit: &Arrival, reads: bool, body: &'static str) -> (u16, String) {
        let app = Router::new()
            .route(
                "/read",
                post(|body: Bytes| async move { format!("read {}", body.len()) }),
            )
            .route("/unread", post(|| async { "not read" }))
            .layer(axum::middleware::from_fn_with_state(limit.clone(), arrive));
        let path = if reads { "/read" } else { "/unread" };
        let request = axum::http::Request::post(path)
            .body(Body::from(body))
            .unwrap();
        let app = TowerToHyperService::new(app);
        let response = hyper::service::Service::call(&app, request).await.unwrap();
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn a_body_takes_its_share_only_when_read_and_waits_for_it_within_the_time() {
        let limit = Arrival::new(Duration::from_millis(200), 4096, 4096);
        assert_eq!(post_to(&limit, true, "ok").await, (200, "read 2".into()));
        // A body nobody reads holds nothing, even with the budget spent elsewhere.
        let spent = limit.budget.clone().acquire_many_owned(4).await.unwrap();
        assert_eq!(post_to(&limit, false, "ok").await.0, 200);
        let (status, text) = post_to(&limit, true, "ok").await;
        assert_eq!(status, 503, "{text}");
        assert!(text.contains("BMAD_HTTP_BODIES_BYTES"), "{text}");
        drop(spent);
        assert_eq!(
            limit.budget.available_permits(),
            4,
            "every share given back"
        );
    }

    #[tokio::test]
    async fn a_body_rmcp_cannot_serve_is_answered_with_its_own_id() {
        let limit = Arrival::new(Duration::from_secs(5), 4096, 4096);
        let (status, text) = post_to(
            &limit,
            true,
            r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#,
        )
        .await;
        assert_eq!(status, 400, "{text}");
        let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (7.into(), (-32600).into())
        );
    }
}
