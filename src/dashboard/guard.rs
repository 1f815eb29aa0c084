//! Who may use the page, checked before anything is read: a connection from this machine
//! (loopback) only, a `Host` that is one of the server's names (against DNS rebinding),
//! and the secret: in the URL the server printed (`?k=…`, which sets a cookie named after
//! the port and redirects to the same page without it), or in that cookie. A request that
//! changes anything also needs the secret in the `x-bmad-secret` header (the page reads
//! it from its own HTML, which no other origin can read) and an `Origin` that is the
//! server's own. Every response carries a strict Content-Security-Policy: the page loads
//! its own script and style and nothing else, so no text shown in it can run or load.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Dashboard;
use crate::http::guard::Token;
use crate::http::hosts;

/// The header a state-changing request carries the secret in.
pub const SECRET_HEADER: &str = "x-bmad-secret";

/// The Content-Security-Policy of every response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// What the guard knows: the secret, the names and origins that are the server's own.
pub struct Keys {
    pub secret: String,
    pub token: Token,
    pub hosts: Vec<String>,
    pub origins: Vec<String>,
    /// The cookie's name: one per port, since a browser sends a host's cookies to all.
    pub cookie: String,
}

impl Keys {
    pub fn new(secret: String, bound: SocketAddr) -> Keys {
        Keys {
            token: Token::new(&secret),
            secret,
            hosts: crate::http::options::allowed_hosts(bound, &[]),
            origins: crate::http::options::allowed_origins(bound, &[]),
            cookie: format!("bmad_dashboard_{}", bound.port()),
        }
    }

    fn cookie_in(&self, request: &Request) -> Option<String> {
        request
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value.to_string())
    }
}

/// A fresh secret: 256 random bits as hex.
pub fn fresh_secret() -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("{a}{b}")
}

fn refuse(status: StatusCode, why: &str) -> Response {
    tracing::warn!(%status, why, "dashboard: refused a request");
    (status, format!("{why}\n")).into_response()
}

fn query_secret(request: &Request) -> Option<String> {
    let query = request.uri().query()?;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "k")
        .map(|(_, v)| v.into_owned())
}

/// The checks, in order; then the security headers on whatever the page answers.
pub async fn check(State(dash): State<Arc<Dashboard>>, request: Request, next: Next) -> Response {
    let keys = &dash.keys;
    if let Some(refused) = connection_refused(keys, &request) {
        return secured(refused);
    }
    let changes = !matches!(*request.method(), Method::GET | Method::HEAD);
    if changes {
        if let Some(refused) = change_refused(keys, &request) {
            return secured(refused);
        }
    }
    if let Some(k) = query_secret(&request) {
        if !keys.token.matches(&k) {
            return secured(refuse(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: wrong secret",
            ));
        }
        if request.method() == Method::GET {
            return secured(secret_to_cookie(keys, &request));
        }
    } else if !keys
        .cookie_in(&request)
        .is_some_and(|c| keys.token.matches(&c))
    {
        return secured(refuse(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: open the dashboard with the address `bmad-mcp dashboard` printed",
        ));
    }
    secured(next.run(request).await)
}

/// Refuses a connection from elsewhere than this machine, or a `Host` that is not one of
/// the dashboard's names.
fn connection_refused(keys: &Keys, request: &Request) -> Option<Response> {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if !peer.is_some_and(|p| p.ip().is_loopback()) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: the dashboard answers only this machine (loopback)",
        ));
    }
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| axum::http::uri::Authority::try_from(v).ok());
    match host {
        None => Some(refuse(
            StatusCode::BAD_REQUEST,
            "Bad Request: missing or invalid Host",
        )),
        Some(h) if !hosts::host_allowed(&h, &keys.hosts) => Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: Host is not the dashboard's",
        )),
        Some(_) => None,
    }
}

/// Refuses a change that does not come from the dashboard's own page: its `Origin`, the
/// site the browser says it comes from, and the secret in [`SECRET_HEADER`].
fn change_refused(keys: &Keys, request: &Request) -> Option<Response> {
    let origin_ok = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .is_some_and(|o| o != "null" && hosts::origin_allowed(o, &keys.origins));
    if !origin_ok {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: a change must come from the dashboard's own page (Origin)",
        ));
    }
    let site_ok = request
        .headers()
        .get("sec-fetch-site")
        .is_none_or(|v| v.as_bytes() == b"same-origin");
    let header_ok = request
        .headers()
        .get(SECRET_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| keys.token.matches(v));
    (!site_ok || !header_ok).then(|| {
        refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: a change needs the dashboard's secret from its own page",
        )
    })
}

/// The answer to the address with the secret: the secret leaves the address bar (and
/// the history) for a cookie, and the browser goes to the same page without it.
fn secret_to_cookie(keys: &Keys, request: &Request) -> Response {
    let cookie = format!(
        "{}={}; Path={}; HttpOnly; SameSite=Strict",
        keys.cookie,
        keys.secret,
        super::PREFIX
    );
    let mut r = (StatusCode::SEE_OTHER, "").into_response();
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        h.insert(header::SET_COOKIE, v);
    }
    let to = request.uri().path().to_string();
    if let Ok(v) = HeaderValue::from_str(&to) {
        h.insert(header::LOCATION, v);
    }
    r
}

/// The security headers every response carries.
pub fn secured(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    r
}
