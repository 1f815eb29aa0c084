//! `bmad-mcp serve`'s options, and the checks that keep an HTTP server locked down
//! before it binds: a non-loopback address needs a token, the roots must exist, the
//! addresses must parse. A refusal is a message for the person who started it (exit 2).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use crate::files::{find_project, Roots};

/// Where `--http` without an address listens.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// The environment variable that holds the bearer token (safer than `--token`, which
/// other users of the machine can read in the process list).
pub const TOKEN_ENV: &str = "BMAD_MCP_TOKEN";

/// Serve MCP: over stdio (the default, as with no command at all), or over streamable
/// HTTP at `/mcp` with `--http`, for several IDEs sharing one server.
#[derive(clap::Args, Debug, Default)]
pub struct ServeArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (default ADDR
    /// 127.0.0.1:8765). Any address other than loopback needs a token.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = DEFAULT_ADDR)]
    pub http: Option<String>,
    /// A directory whose projects HTTP clients may use; repeat for several. A call's
    /// `cwd` must lie inside one; with a single root, `cwd` may be left out. Default: the
    /// project the working directory is in.
    #[arg(long = "root", value_name = "DIR", requires = "http")]
    pub roots: Vec<PathBuf>,
    /// Require `Authorization: Bearer TOKEN` on every request. Prefer the environment
    /// variable: the process list shows arguments to every user of the machine.
    #[arg(long, value_name = "TOKEN", env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
    /// A browser origin allowed to call the server, such as `http://localhost:3000`
    /// (repeatable). By default a request carrying an `Origin` other than the server's
    /// own (which no page has: it serves none) is refused (403), so no web page can drive
    /// the server.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origins: Vec<String>,
    /// A further name clients reach the server by, `NAME` or `NAME:PORT`, accepted in
    /// the `Host` header (repeatable). The bound address (and `localhost` on loopback)
    /// always is; any other `Host` is refused (403) against DNS rebinding.
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    pub allow_hosts: Vec<String>,
}

/// A checked plan for an HTTP server.
#[derive(Debug)]
pub struct Plan {
    pub addr: SocketAddr,
    pub roots: Roots,
    pub token: Option<String>,
    pub allow_origins: Vec<String>,
    pub allow_hosts: Vec<String>,
}

/// Parses `127.0.0.1:8765`, `[::1]:8765`, `localhost:8765` (loopback) or a bare port.
pub fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        if let Ok(port) = port.parse::<u16>() {
            return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
        }
    }
    Err(format!(
        "--http {text}: not an address; give IP:PORT such as {DEFAULT_ADDR} or [::1]:8765"
    ))
}

impl ServeArgs {
    /// Checks the options for `--http ADDR`.
    pub fn plan(&self, addr: &str) -> Result<Plan, String> {
        let addr = parse_addr(addr)?;
        let token = self.token.clone().filter(|t| !t.is_empty());
        if token
            .as_ref()
            .is_some_and(|t| t.trim() != t || t.len() < 16)
        {
            return Err(format!(
                "the token must be at least 16 characters without surrounding spaces (generate one, e.g. `openssl rand -hex 32`, and pass it in {TOKEN_ENV})"
            ));
        }
        if !addr.ip().is_loopback() && token.is_none() {
            return Err(format!(
                "refusing to listen on {addr} without a token: any machine that reaches it could drive the server. Set {TOKEN_ENV} (or --token), or listen on loopback ({DEFAULT_ADDR})"
            ));
        }
        for origin in &self.allow_origins {
            if !(origin.starts_with("http://") || origin.starts_with("https://")) {
                return Err(format!(
                    "--allow-origin {origin}: give a scheme, host and port, such as http://localhost:3000"
                ));
            }
        }
        let roots = if self.roots.is_empty() {
            let here = std::env::current_dir()
                .map_err(|e| format!("cannot read the working directory: {e}; give --root"))?;
            vec![find_project(&here)]
        } else {
            self.roots.clone()
        };
        let roots = Roots::new(&roots)?;
        Ok(Plan {
            addr,
            roots,
            token,
            allow_origins: self.allow_origins.clone(),
            allow_hosts: self.allow_hosts.clone(),
        })
    }
}

/// The `Host` values accepted for a server bound to `addr`: the address itself, the
/// loopback names when it listens there, and the names the user added.
pub fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string()];
    let ip = addr.ip();
    if ip.is_loopback() || ip.is_unspecified() {
        hosts.push(format!("localhost:{port}"));
    }
    if ip.is_unspecified() {
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("[::1]:{port}"));
    }
    hosts.extend(extra.iter().cloned());
    hosts
}

/// The `Origin` values accepted: the server's own (`http://` and a bound name, as in
/// [`allowed_hosts`]), which no page can have since the server serves none, and the ones
/// the user allowed.
pub fn allowed_origins(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    allowed_hosts(addr, &[])
        .into_iter()
        .map(|host| format!("http://{host}"))
        .chain(extra.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(token: Option<&str>) -> ServeArgs {
        ServeArgs {
            roots: vec![std::env::temp_dir()],
            token: token.map(str::to_string),
            ..ServeArgs::default()
        }
    }

    #[test]
    fn addresses_parse_and_bad_ones_are_named() {
        assert_eq!(parse_addr("127.0.0.1:1").unwrap().port(), 1);
        assert!(parse_addr("[::1]:2").unwrap().ip().is_loopback());
        assert!(parse_addr("localhost:3").unwrap().ip().is_loopback());
        assert!(parse_addr("8765").unwrap().ip().is_loopback());
        assert!(parse_addr("example.com:80")
            .unwrap_err()
            .contains("example.com"));
    }

    #[test]
    fn a_non_loopback_address_needs_a_token_of_some_length() {
        let e = args(None).plan("0.0.0.0:8765").unwrap_err();
        assert!(e.contains(TOKEN_ENV), "{e}");
        assert!(args(Some("short")).plan("0.0.0.0:8765").is_err());
        let plan = args(Some("a-token-of-sixteen-chars"))
            .plan("0.0.0.0:8765")
            .unwrap();
        assert!(plan.token.is_some());
        assert!(args(None).plan("127.0.0.1:0").unwrap().token.is_none());
    }

    #[test]
    fn hosts_are_the_bound_names_and_the_ones_added() {
        let loopback = allowed_hosts("127.0.0.1:9".parse().unwrap(), &[]);
        assert_eq!(loopback, ["127.0.0.1:9", "localhost:9"]);
        let v6 = allowed_hosts("[::1]:9".parse().unwrap(), &["box.lan".into()]);
        assert_eq!(v6, ["[::1]:9", "localhost:9", "box.lan"]);
        let public = allowed_hosts("192.0.2.1:9".parse().unwrap(), &[]);
        assert_eq!(public, ["192.0.2.1:9"]);
        let origins = allowed_origins("127.0.0.1:9".parse().unwrap(), &["http://a:1".into()]);
        assert_eq!(
            origins,
            ["http://127.0.0.1:9", "http://localhost:9", "http://a:1"]
        );
    }
}
