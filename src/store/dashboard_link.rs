//! Where a running dashboard serves the project: the file a `bmad-mcp dashboard` writes
//! with its page's address and process, read back (as untrusted: anyone may write it) for
//! the deep link that replies and refusals asking the human give.

use crate::files::Project;
use crate::process_origin::procs;

/// Where a running dashboard tells the project its page's address (without the secret)
/// and its process id: `{"url": …, "pid": …}`. Replies asking the human to decide link
/// to it while that process runs.
pub const DASHBOARD_REL: &str = ".bmad-task/dashboard.json";

/// The dashboard's page for the session `session_id`, while a dashboard serves `project`.
pub fn task_link(project: &Project, session_id: &str) -> Option<String> {
    dashboard_base(project).map(|base| format!("{base}#/task/{session_id}"))
}

/// The address of the dashboard serving `project`, while its process runs. The file is
/// anyone's to write (a model, a merged branch): its address is used only when it is a
/// dashboard's on loopback and its process runs this build of bmad-mcp (whatever its file
/// is named) and listens there.
fn dashboard_base(project: &Project) -> Option<String> {
    let text = project.read_at_most(DASHBOARD_REL, 4096).ok().flatten()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = v["url"].as_str()?;
    let addr = loopback_dashboard(url)?;
    let pid = u32::try_from(v["pid"].as_u64()?).ok()?;
    let alive = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
    // Where processes cannot be read (elsewhere than Linux) a live process is taken at
    // its word.
    let ours = alive
        && procs::runs_this_build(pid) != Some(false)
        && procs::holds(pid, addr) != Some(false);
    ours.then(|| url.to_string())
}

/// The socket address of `url` when it is exactly a dashboard's base on a loopback
/// address: `http://127.0.0.1:<port>/dashboard/` (or `[::1]`).
fn loopback_dashboard(url: &str) -> Option<std::net::SocketAddr> {
    let u = url::Url::parse(url).ok()?;
    let ip = match u.host()? {
        url::Host::Ipv4(ip) => std::net::IpAddr::V4(ip),
        url::Host::Ipv6(ip) => std::net::IpAddr::V6(ip),
        url::Host::Domain(_) => return None,
    };
    let plain = u.scheme() == "http"
        && u.username().is_empty()
        && u.password().is_none()
        && u.query().is_none()
        && u.fragment().is_none()
        && u.path() == "/dashboard/";
    let port = u.port()?;
    (plain && ip.is_loopback()).then(|| std::net::SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::loopback_dashboard;

    #[test]
    fn only_a_plain_loopback_dashboard_address_is_taken() {
        for url in [
            "http://127.0.0.1:4000/dashboard/",
            "http://[::1]:4000/dashboard/",
        ] {
            assert!(loopback_dashboard(url).is_some(), "{url}");
        }
        for url in [
            "http://example.com:4000/dashboard/",
            "https://127.0.0.1:4000/dashboard/",
            "http://10.0.0.2:4000/dashboard/",
            "http://user@127.0.0.1:4000/dashboard/",
            "http://127.0.0.1:4000/dashboard/?x=1",
            "http://127.0.0.1:4000/elsewhere/",
            "http://127.0.0.1/dashboard/",
        ] {
            assert!(loopback_dashboard(url).is_none(), "{url}");
        }
    }
}
