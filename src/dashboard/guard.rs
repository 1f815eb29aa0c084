//! Who may use the page, checked before anything is read: a connection from this machine
//! (loopback) only, a `Host` that is one of the server's names (against DNS rebinding),
//! and a login. The address the server prints carries a one-time key (`?k=…`): its first
//! use sets a cookie named after the port (HttpOnly, SameSite=Strict, a value never
//! printed) and redirects to the same page without it; the key is then spent, so a copy
//! left in the browser's history, a terminal pane or a log opens nothing. A key unused
//! for [`LOGIN_TTL`] dies too, and a new one replaces it. A request that changes anything
//! also needs the page's token in the `x-bmad-secret` header (the page reads it from its
//! own HTML, which no other origin can read; it is not the login key) and an `Origin`
//! that is the server's own. Every login is kept (its time) and shown on the page: a
//! browser the human did not sign in is seen. Every response carries a strict Content-Security-Policy: the
//! page loads its own script and style and nothing else, so no text shown in it can run
//! or load.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Dashboard;
use crate::http::guard::Token;

/// A host's name as compared: `[::1]` is `::1`, `LOCALHOST` is `localhost`.
fn name(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}

/// The header a state-changing request carries the page's token in.
pub const SECRET_HEADER: &str = "x-bmad-secret";

/// How long a printed address opens the page if nobody uses it: past that, a copy of it
/// in a log is dead even unused.
pub const LOGIN_TTL: Duration = Duration::from_secs(10 * 60);

/// The Content-Security-Policy of every response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// What the guard knows: the keys, the names and origins that are the server's own.
pub struct Keys {
    /// The one-time key of the address printed last, and when it was made.
    login: Mutex<Option<(Token, Instant)>>,
    /// The cookie's value: given only for a login key, never printed.
    session: String,
    session_token: Token,
    /// The token the page's script sends with a change: written in the page only.
    pub page: String,
    page_token: Token,
    /// The server's own names, `(name, port)`: the bound address, and `localhost` on
    /// loopback.
    hosts: Vec<(String, u16)>,
    /// The cookie's name: one per port, since a browser sends a host's cookies to all.
    pub cookie: String,
    /// When each login key was spent (RFC 3339, oldest first): every browser signed in.
    logins: Mutex<Vec<String>>,
}

/// The most logins kept to show; older ones are dropped first.
const MAX_LOGINS: usize = 100;

impl Keys {
    pub fn new(bound: SocketAddr) -> Keys {
        let (session, page) = (fresh_secret(), fresh_secret());
        Keys {
            login: Mutex::new(None),
            session_token: Token::new(&session),
            session,
            page_token: Token::new(&page),
            page,
            hosts: crate::http::options::allowed_hosts(bound, &[])
                .iter()
                .filter_map(|h| axum::http::uri::Authority::try_from(h.as_str()).ok())
                .map(|a| (name(a.host()), a.port_u16().unwrap_or(bound.port())))
                .collect(),
            cookie: format!("bmad_dashboard_{}", bound.port()),
            logins: Mutex::new(Vec::new()),
        }
    }

    /// Whether `host` (a `Host` header's name, or an origin's) and `port` are one of the
    /// server's own names: names compare in lower case and without brackets.
    fn own(&self, host: &str, port: Option<u16>) -> bool {
        let host = name(host);
        self.hosts
            .iter()
            .any(|(h, p)| *h == host && port == Some(*p))
    }

    /// A fresh one-time login key; the one printed before it dies.
    pub fn mint(&self) -> String {
        let key = fresh_secret();
        *self.login.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Token::new(&key), Instant::now()));
        key
    }

    /// Whether `key` is the live login key, younger than [`LOGIN_TTL`] at `now`: if so,
    /// it is spent.
    fn spend(&self, key: &str, now: Instant) -> bool {
        let mut login = self.login.lock().unwrap_or_else(|e| e.into_inner());
        let live = login.as_ref().is_some_and(|(token, made)| {
            token.matches(key) && now.saturating_duration_since(*made) < LOGIN_TTL
        });
        if live {
            *login = None;
            let mut logins = self.logins.lock().unwrap_or_else(|e| e.into_inner());
            if logins.len() == MAX_LOGINS {
                logins.remove(0);
            }
            logins.push(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        }
        live
    }

    /// When each browser signed in (RFC 3339, oldest first), for the page to show.
    pub fn logins(&self) -> Vec<String> {
        self.logins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
        // Only a GET exchanges a key, and only once; any other use of one opens nothing.
        if request.method() != Method::GET || !keys.spend(&k, Instant::now()) {
            return secured(refuse(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: this address was used already, replaced or is too old; press Enter in the terminal of `bmad-mcp dashboard` (or of `serve --http`) for a new one",
            ));
        }
        return secured(secret_to_cookie(keys, &request));
    }
    if !keys
        .cookie_in(&request)
        .is_some_and(|c| keys.session_token.matches(&c))
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
        Some(h) if !keys.own(h.host(), h.port_u16()) => Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: Host is not the dashboard's",
        )),
        Some(_) => None,
    }
}

/// Refuses a change that does not come from the dashboard's own page: its `Origin`, the
/// site the browser says it comes from, and the page's token in [`SECRET_HEADER`].
fn change_refused(keys: &Keys, request: &Request) -> Option<Response> {
    let origin_ok = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .and_then(|o| axum::http::Uri::try_from(o.trim()).ok())
        .is_some_and(|o| {
            o.scheme_str()
                .is_some_and(|s| s.eq_ignore_ascii_case("http"))
                && o.authority()
                    .is_some_and(|a| keys.own(a.host(), Some(a.port_u16().unwrap_or(80))))
        });
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
        .is_some_and(|v| keys.page_token.matches(v));
    (!site_ok || !header_ok).then(|| {
        refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: a change needs the dashboard's token from its own page",
        )
    })
}

/// The answer to the address with a live login key: a cookie of the session instead, and
/// the same page without the key (which is spent already).
fn secret_to_cookie(keys: &Keys, request: &Request) -> Response {
    let cookie = format!(
        "{}={}; Path={}; HttpOnly; SameSite=Strict",
        keys.cookie,
        keys.session,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A login key opens once, only while it is the last one printed and young enough.
    #[test]
    fn a_login_key_is_spent_replaced_or_too_old() {
        let keys = Keys::new("127.0.0.1:1".parse().unwrap());
        let now = Instant::now();
        assert!(!keys.spend("", now), "none printed yet");
        let first = keys.mint();
        assert!(!keys.spend(&keys.page, now) && !keys.spend(&keys.session, now));
        assert!(keys.spend(&first, now));
        assert!(!keys.spend(&first, now), "spent");
        let replaced = keys.mint();
        let last = keys.mint();
        assert!(!keys.spend(&replaced, now), "replaced");
        assert!(!keys.spend(&last, Instant::now() + LOGIN_TTL), "too old");
        assert!(keys.spend(&last, now), "a wrong or late try spends nothing");
        let fresh = keys.mint();
        assert!(keys.spend(&fresh, Instant::now() + LOGIN_TTL / 2));
    }
}
