//! `Host` and `Origin` compared with the allowed values as rmcp compares them (its
//! streamable HTTP service checks them too, but only once the body has been read): names
//! without brackets and in lower case, a port compared when the allowed value has one, the
//! origin `null`, and `:*` for any port, the scheme's default port when an origin omits it.

use axum::http::uri::Authority;
use axum::http::Uri;

fn name(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// Whether `host` is one of `allowed` (`NAME` or `NAME:PORT`); an empty list allows all.
pub fn host_allowed(host: &Authority, allowed: &[String]) -> bool {
    let (host_name, port) = (name(host.host()), host.port_u16());
    allowed.is_empty()
        || allowed.iter().any(|a| {
            let a = a.trim();
            if a.is_empty() {
                return false;
            }
            match Authority::try_from(a) {
                Ok(auth) => {
                    name(auth.host()) == host_name
                        && auth.port_u16().is_none_or(|p| port == Some(p))
                }
                Err(_) => name(a) == host_name,
            }
        })
}

/// `(scheme, name, port)` of an origin, or `None` for `null` (`Some(None)`), and `None`
/// when it does not parse.
fn origin(value: &str) -> Option<Option<(String, String, Option<u16>)>> {
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    if value.eq_ignore_ascii_case("null") {
        return Some(None);
    }
    let uri = Uri::try_from(value).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    Some(Some((scheme, name(authority.host()), authority.port_u16())))
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Whether the `Origin` value is one of `allowed`.
pub fn origin_allowed(value: &str, allowed: &[String]) -> bool {
    let Some(presented) = origin(value) else {
        return false;
    };
    allowed.iter().any(|raw| {
        let raw = raw.trim();
        let (base, any_port) = match raw.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (raw, false),
        };
        match (origin(base), &presented) {
            (Some(None), None) => !any_port,
            (Some(Some((scheme, host, port))), Some((o_scheme, o_host, o_port))) => {
                if any_port && port.is_some() {
                    return false;
                }
                scheme == *o_scheme
                    && host == *o_host
                    && (any_port
                        || port
                            .is_none_or(|p| o_port.or_else(|| default_port(o_scheme)) == Some(p)))
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_compare_as_rmcp_compares_them() {
        let hosts = ["127.0.0.1:9".to_string(), "box.lan".to_string()];
        let ok = |h: &str| host_allowed(&Authority::try_from(h).unwrap(), &hosts);
        assert!(ok("127.0.0.1:9") && ok("BOX.lan:1") && ok("box.lan"));
        assert!(!ok("127.0.0.1:8") && !ok("127.0.0.1") && !ok("evil.example:9"));
        let origins = [
            "http://127.0.0.1:9".to_string(),
            "https://app.example".to_string(),
            "http://localhost:*".to_string(),
        ];
        let ok = |o: &str| origin_allowed(o, &origins);
        assert!(ok("http://127.0.0.1:9") && ok("https://app.example:8443"));
        assert!(ok("http://localhost:3000") && ok("HTTP://LOCALHOST"));
        assert!(!ok("null") && !ok("http://127.0.0.1:10") && !ok("https://127.0.0.1:9"));
        assert!(!ok("garbage") && !ok(""));
        assert!(origin_allowed("null", &["null".to_string()]));
    }
}
