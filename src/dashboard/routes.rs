//! The page's endpoints, every one behind [`super::guard::check`]:
//!
//! | method | path | what |
//! |---|---|---|
//! | GET | `/dashboard/` | the page (its script and style beside it) |
//! | GET | `/dashboard/api/tasks` | every task of every project served, and when each browser signed in |
//! | GET | `/dashboard/api/task?project=N&id=ID` | one task in full |
//! | GET | `/dashboard/api/events` | server-sent events: `change` when a file changes, `signin` when a browser signs in |
//! | POST | `/dashboard/api/decide` | a decision (JSON, at most [`MAX_BODY`] bytes) |
//! | POST | `/dashboard/api/config` | approve `.bmad/config.toml` as shown (`{"project", "sha256"}`) |
//! | POST | `/dashboard/api/lesson` | retire or restore a lesson (`{"project", "id", "change", "sha256"}`) |

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde_json::{json, Value};

use super::decide::{self, PageAnswer, Posted};
use super::{events, view, Dashboard, PREFIX};

/// The largest body a request may send.
pub const MAX_BODY: usize = 64 * 1024;

/// The page, its script and its style, embedded in the binary.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
pub const APP_JS: &str = include_str!("assets/app.js");
pub const APP_CSS: &str = include_str!("assets/app.css");
/// The tab's icon: declared by the page, so that a browser does not ask for
/// `/favicon.ico`, outside the dashboard's paths and its cookie, on every open.
pub const ICON_SVG: &str = include_str!("assets/icon.svg");

/// The bytes of the embedded assets.
pub fn asset_bytes() -> usize {
    INDEX_HTML.len() + APP_JS.len() + APP_CSS.len() + ICON_SVG.len()
}

pub fn routes(dash: Arc<Dashboard>) -> Router {
    Router::new()
        .route(PREFIX, get(|| async { Redirect::to("/dashboard/") }))
        .route("/dashboard/", get(index))
        .route(
            "/dashboard/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/dashboard/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route(
            "/dashboard/icon.svg",
            get(|| async { asset("image/svg+xml", ICON_SVG) }),
        )
        .route("/dashboard/api/tasks", get(tasks))
        .route("/dashboard/api/task", get(task))
        .route("/dashboard/api/events", get(stream))
        .route("/dashboard/api/decide", post(decide_posted))
        .route("/dashboard/api/config", post(config))
        .route("/dashboard/api/lesson", post(lesson))
        // Only paths under the prefix are the page's: beside `/mcp`, every other path
        // stays the MCP server's.
        .route(
            "/dashboard/{*rest}",
            axum::routing::any(|| async { (StatusCode::NOT_FOUND, "Not Found\n") }),
        )
        .with_state(dash)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn index(State(dash): State<Arc<Dashboard>>) -> Response {
    let html = INDEX_HTML.replace("{{TOKEN}}", &dash.keys.page);
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

/// Runs a read or a decision on a blocking thread (locks, fsync).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

async fn tasks(State(dash): State<Arc<Dashboard>>) -> Response {
    let d = dash.clone();
    match blocking(move || {
        d.pick_up_worktrees();
        view::tasks(&d)
    })
    .await
    {
        Some(rows) => json_response(
            StatusCode::OK,
            &json!({ "tasks": rows, "projects": dash.dirs(), "logins": dash.keys.logins() }),
        ),
        None => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": "internal"}),
        ),
    }
}

fn query(request: &Request, key: &str) -> Option<String> {
    url::form_urlencoded::parse(request.uri().query()?.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

async fn task(State(dash): State<Arc<Dashboard>>, request: Request) -> Response {
    let project = query(&request, "project")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(0);
    let Some(id) = query(&request, "id").filter(|i| !i.is_empty() && i.len() <= 200) else {
        return json_response(StatusCode::BAD_REQUEST, &json!({"error": "`id` is needed"}));
    };
    let Some(store) = dash.store(project) else {
        return json_response(StatusCode::NOT_FOUND, &json!({"error": "no such project"}));
    };
    match blocking(move || view::task(&store, project, &id)).await {
        Some(Ok(v)) => json_response(StatusCode::OK, &v),
        Some(Err(e)) => json_response(StatusCode::NOT_FOUND, &json!({"error": view::message(&e)})),
        None => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"error": "internal"}),
        ),
    }
}

async fn stream(State(dash): State<Arc<Dashboard>>) -> Response {
    let (signed, served) = (dash.clone(), dash.clone());
    // The projects looked at are asked again at each look: a work tree added to a clone
    // while the page is open joins them, and the page hears of it as a change.
    let projects = move || {
        served.pick_up_worktrees();
        served.dirs()
    };
    events::stream(projects, dash.stop.clone(), move || {
        signed.keys.logins().len()
    })
    .into_response()
}

/// The body of a request, at most [`MAX_BODY`] bytes, as JSON of type `T`.
async fn body<T: serde::de::DeserializeOwned>(request: Request) -> Result<T, Response> {
    let bytes = axum::body::to_bytes(request.into_body(), MAX_BODY)
        .await
        .map_err(|_| {
            json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &json!({"error": format!("the body is over {MAX_BODY} bytes")}),
            )
        })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        json_response(
            StatusCode::BAD_REQUEST,
            &json!({"error": format!("the body is not a decision: {e}")}),
        )
    })
}

fn answered(answer: PageAnswer) -> Response {
    match answer {
        PageAnswer::Done(message) => {
            json_response(StatusCode::OK, &json!({"ok": true, "message": message}))
        }
        PageAnswer::Bad(why) => json_response(StatusCode::BAD_REQUEST, &json!({"error": why})),
        PageAnswer::Forbidden(why) => json_response(StatusCode::FORBIDDEN, &json!({"error": why})),
        PageAnswer::Conflict { message, sha256 } => json_response(
            StatusCode::CONFLICT,
            &json!({"error": message, "sha256": sha256}),
        ),
    }
}

/// A state-changing request's one path: the body read as `T`, its project checked, then
/// `act` on a blocking thread with the provenance of the connection's peer (a request from
/// an assistant's shell is refused before `act` runs).
async fn posted<T, F>(
    dash: Arc<Dashboard>,
    request: Request,
    project: fn(&T) -> usize,
    act: F,
) -> Response
where
    T: serde::de::DeserializeOwned + Send + 'static,
    F: FnOnce(&crate::store::Store, T, crate::workflow::Provenance) -> PageAnswer + Send + 'static,
{
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let posted: T = match body(request).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let index = project(&posted);
    let Some(store) = dash.store(index) else {
        return answered(PageAnswer::Bad("no such project".into()));
    };
    let done = blocking(move || match decide::provenance(peer) {
        Err(why) => PageAnswer::Forbidden(why),
        Ok(provenance) => act(&store, posted, provenance),
    })
    .await;
    answered(done.unwrap_or(PageAnswer::Bad("internal error".into())))
}

async fn decide_posted(State(dash): State<Arc<Dashboard>>, request: Request) -> Response {
    posted(dash, request, |p: &Posted| p.project, decide::decide).await
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigPosted {
    #[serde(default)]
    project: usize,
    sha256: String,
}

async fn config(State(dash): State<Arc<Dashboard>>, request: Request) -> Response {
    posted(
        dash,
        request,
        |p: &ConfigPosted| p.project,
        |store, p, _| decide::approve_config(store, &p.sha256),
    )
    .await
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LessonPosted {
    #[serde(default)]
    project: usize,
    id: String,
    /// `retire` or `restore`.
    change: String,
    /// The digest of the lesson as the page showed it.
    sha256: String,
}

async fn lesson(State(dash): State<Arc<Dashboard>>, request: Request) -> Response {
    posted(
        dash,
        request,
        |p: &LessonPosted| p.project,
        |store, p, _| decide::lesson(store, &p.id, &p.change, &p.sha256),
    )
    .await
}
