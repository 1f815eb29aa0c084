//! The bearer token, the first check of every request (before rmcp's `Host` and `Origin`,
//! before any byte of a body is read): compared in constant time, which no crate in the
//! tree does for a header.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

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
