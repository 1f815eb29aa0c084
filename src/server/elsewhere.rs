//! The loop closes by itself: a decision the human made in another channel (the dashboard,
//! the terminal) while the assistant waited is found and said. A call waiting on the
//! client's dialog returns as soon as it lands on disk; a retry of an input-required round,
//! or the host's own decision call that is no longer legal, is answered with where the
//! workflow is now and who decided; `status` says it too. A reply that asks the human to
//! decide carries the dashboard's deep link while one serves the project
//! (`.bmad-task/dashboard.json`, written by `bmad-mcp dashboard`).

use std::time::Duration;

use super::reply::{self, Reply};
use super::BmadServer;
use crate::assistant::procs;
use crate::files::Project;
use crate::prompts;
use crate::store::{SessionKey, DASHBOARD_REL};
use crate::workflow::{DecidedBy, Session, Via};

/// How often a call waiting on the dialog looks for a decision made elsewhere.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The decision the human made in another channel (the dashboard, the terminal), when it
/// is the last thing that happened to `s`, said for both: "The human decided on the
/// dashboard: reject at the po stage. The human's words: …". `None` for the host's word or
/// the dialog (which the call itself asked). Only the human's own words are quoted as
/// theirs; the server's note on the step (`note`) is never passed off as them.
fn last_decided_elsewhere(s: &Session) -> Option<String> {
    let h = s.history.last()?;
    let channel = match (h.decided_by?, h.via?) {
        (DecidedBy::Human, Via::Dashboard) => "on the dashboard",
        (DecidedBy::Human, Via::Cli) => "in the terminal",
        _ => return None,
    };
    let mut said = format!(
        "The human decided {channel}: {} at the {} stage.",
        h.action.name(),
        h.stage
    );
    match h.feedback.as_deref() {
        Some(words) => said.push_str(&format!(
            " The human's words: {}",
            crate::code::clip(words, 400)
        )),
        None => said.push_str(" They gave no words with it."),
    }
    Some(said)
}

fn open_with(r: &mut Reply, said: String) {
    r.user_message = format!("{said}\n{}", r.user_message);
    r.notices.get_or_insert_with(Vec::new).push(said);
}

/// Opens `status`'s reply of `s` with the decision the human made elsewhere, when that is
/// the last thing that happened to the session: from the session the call already read.
pub(super) fn say_in_status(r: &mut Reply, s: &Session) {
    if let Some(said) = last_decided_elsewhere(s) {
        open_with(r, said);
    }
}

impl BmadServer {
    /// `status` (with its role prompt when one is needed), opening with the decision the
    /// human made elsewhere, when that is the last thing that happened to the session (and,
    /// with `since`, was made after the history had `since` entries).
    pub(super) fn decided_elsewhere(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        since: Option<usize>,
    ) -> Option<Reply> {
        let (project, s) = self.inner.store.load(cwd, key).ok()?;
        if since.is_some_and(|n| s.history.len() <= n) {
            return None;
        }
        let said = last_decided_elsewhere(&s)?;
        let prompt = prompts::needed(&project, self.inner.store.user_prompts(), &s)
            .ok()
            .flatten();
        let mut r = reply::for_status(&s, prompt.as_ref());
        open_with(&mut r, said);
        Some(r)
    }

    /// Waits until the human decides `session`'s pending decision in another channel;
    /// then the reply that says so. Never ends otherwise (the caller races it).
    pub(super) async fn until_decided_elsewhere(&self, session: &Session) -> Reply {
        let (cwd, key, since) = (
            Some(session.cwd.clone()),
            SessionKey::from_task(&session.session_id),
            session.history.len(),
        );
        loop {
            tokio::time::sleep(LOOK_EVERY).await;
            let (cwd, key) = (cwd.clone(), key.clone());
            let found = self
                .blocking(move |s| s.decided_elsewhere(cwd.as_deref(), &key, Some(since)))
                .await
                .flatten();
            if let Some(r) = found {
                return r;
            }
        }
    }
}

/// The address of the dashboard serving `project`, while its process runs. The file is
/// anyone's to write (a model, a merged branch): its address is used only when it is a
/// dashboard's on loopback and its process is a `bmad-mcp` that listens there.
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
    let ours =
        alive && procs::runs_bmad_mcp(pid) != Some(false) && procs::holds(pid, addr) != Some(false);
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

/// Adds the dashboard's deep link to a reply where the human decides (or whose decision
/// the policy keeps for them), when a dashboard serves the project.
pub(super) fn link(r: &mut Reply, project: &Project) {
    let Some(sid) = r.session_id.clone() else {
        return;
    };
    let Some(base) = dashboard_base(project) else {
        return;
    };
    let url = format!("{base}#/task/{sid}");
    r.user_message.push_str(&format!(
        "\nYou can also read it, compare its rounds and decide on your dashboard: {url}"
    ));
    r.dashboard_url = Some(url);
}
