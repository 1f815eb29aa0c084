//! Running the calls: a tool call against the [`Store`] on a blocking thread, the reads
//! of prompts and resources, and the resource-list notification.

use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::args::Call;
use super::fault::{self, Scene};
use super::{dialog, reply, BmadServer, Reply};
use crate::act::{self, Change, Handover};
use crate::error::ErrorCode;
use crate::fault::Fault;
use crate::policy::Watched;
use crate::prompts;
use crate::store::{faults, SessionKey, Store};
use crate::workflow::{Command, Decision, Engine, Track};

impl BmadServer {
    /// Handles one parsed call (blocking), reporting the progress of checks and stopping
    /// them on cancel. A reply where the human decides carries the policy when it keeps the
    /// decision for them (`human_gates`, for [`reply::human_channel`]); `cannot_ask` names
    /// who cannot ask the human ([`crate::hosts`], [`super::dialog`]).
    pub(super) fn run_watched(
        &self,
        call: Call,
        watched: &Watched,
        cannot_ask: Option<&str>,
    ) -> Reply {
        let cwd = match &call {
            Call::Act { cwd, .. } | Call::Status { cwd, .. } => Some(cwd.clone()),
            Call::Start { .. } | Call::List { .. } | Call::Lessons(_) => None,
        };
        // A decision the host asks for: the human may have decided elsewhere meanwhile
        // (the dashboard, the terminal), which the reply then says (`status` says it from
        // the session it read).
        let asked = match &call {
            Call::Act {
                key, command: c, ..
            } if c.action().decides() => Some(key.clone()),
            _ => None,
        };
        let r = self.run_call(call, watched, cannot_ask);
        let refused_late = r.error.as_ref().map(|e| e.code) == Some(ErrorCode::InvalidState);
        match (cwd, asked) {
            (Some(cwd), Some(key)) if refused_late => self
                .decided_elsewhere(cwd.as_deref(), &key, None, cannot_ask)
                .unwrap_or(r),
            _ => r,
        }
    }

    fn run_call(&self, call: Call, watched: &Watched, cannot_ask: Option<&str>) -> Reply {
        let store = &self.inner.store;
        // What failed, when nothing more precise says so.
        let _doing = crate::fault::doing("call", Scene::of(&call).handling());
        let done = match call {
            Call::Start {
                cwd,
                objective,
                engines,
                track,
                story,
            } => start(store, cwd.as_deref(), &objective, engines, track, story),
            Call::List { cwd, cursor, mine } => store.project(cwd.as_deref()).and_then(|project| {
                let page = store.list_of(cwd.as_deref(), cursor.as_deref(), mine)?;
                Ok(reply::for_list(page, &project.display(), mine))
            }),
            Call::Status { cwd, key } => self.status(cwd.as_deref(), &key, cannot_ask),
            Call::Lessons(call) => return super::lessons::run(store, call),
            Call::Act {
                cwd,
                key,
                command,
                decision,
            } => return act(store, cwd, key, command, decision, watched),
        };
        done.unwrap_or_else(|e| reply::for_error(&e, None))
    }

    /// Runs `f` on tokio's blocking pool (file locks and fsync block); a panic in it is a
    /// [`Fault`] that says what was being done.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&BmadServer) -> T + Send + 'static,
    ) -> Result<T, Fault> {
        let server = self.clone();
        let ran = tokio::task::spawn_blocking(move || crate::fault::catch(|| f(&server))).await;
        ran.unwrap_or_else(|e| {
            Err(match e.try_into_panic() {
                Ok(payload) => Fault::from_payload(payload.as_ref()),
                Err(e) => Fault {
                    doing: None,
                    message: format!("the call's thread ended early: {e}"),
                    location: None,
                    panicked: false,
                },
            })
        })
    }

    /// The reply to `failed` in the call `scene` describes, recorded in the project on a
    /// blocking thread (the record not written if that fails too, and said).
    pub(super) async fn fault_reply(&self, scene: Scene, failed: Fault) -> Reply {
        let (scene_now, failed_now) = (scene.clone(), failed.clone());
        match self
            .blocking(move |s| fault::answer(&s.inner.store, &scene_now, failed_now))
            .await
        {
            Ok(reply) => reply,
            Err(again) => fault::unrecorded(&scene, &failed, &again.cause()),
        }
    }

    /// A read of the project for prompts and resources, on a blocking thread; a fault in
    /// it is answered as the server's own (`what`: the MCP method read for).
    pub(super) async fn read<T: Send + 'static>(
        &self,
        what: &str,
        f: impl FnOnce(&Store) -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let scene = Scene {
            action: what.to_string(),
            ..Scene::default()
        };
        match self.blocking(move |s| f(&s.inner.store)).await {
            Ok(done) => done,
            Err(failed) => {
                let r = self.fault_reply(scene, failed).await;
                let message = r.error.map(|e| e.message).unwrap_or_default();
                Err(ErrorData::internal_error(message, None))
            }
        }
    }

    /// Tells the client the resource list may have changed: a notification in the
    /// 2025 era, through `subscriptions/listen` in the 2026-07-28 era. Never waited for:
    /// a peer that stopped reading (stdin closed while the call ran) must not keep the
    /// answer to the call from being written.
    pub(super) fn resources_changed(&self, context: &RequestContext<RoleServer>) {
        if dialog::is_modern(context) {
            // No listener is fine: nobody asked.
            let _ = self.inner.resources_changed.send(());
            return;
        }
        let peer = context.peer.clone();
        tokio::spawn(async move {
            let sent = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                peer.notify_resource_list_changed(),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                tracing::debug!("the resource list notification was not sent");
            }
        });
    }
}

/// Applies a session action (blocking); a submission that needs the project's checks runs
/// them outside the project lock, watched. The error reply names the state and what is
/// legal now, when the session exists ([`crate::act`] has the order of a change).
fn act(
    store: &Store,
    cwd: Option<String>,
    key: SessionKey,
    command: Command,
    decision: Decision,
    watched: &Watched,
) -> Reply {
    let change = Change {
        command,
        decision,
        handover: Handover::Prompt,
    };
    match act::act(store, cwd.as_deref(), &key, change, watched) {
        Ok(done) => reply::for_done(&done),
        Err((e, session)) => reply::for_error(&e, session.as_deref()),
    }
}

/// `start`, through the act that starts a task.
fn start(
    store: &Store,
    cwd: Option<&str>,
    objective: &str,
    engines: Option<Vec<Engine>>,
    track: Track,
    story: Option<(String, u32)>,
) -> crate::error::Result<Reply> {
    let asked = act::Start {
        objective,
        engines: engines.as_deref(),
        track,
        story: story
            .as_ref()
            .map(|(parent, sprint)| (parent.as_str(), *sprint)),
    };
    let started = act::start(store, cwd, asked)?;
    Ok(reply::for_start(
        &started.session,
        started.notices,
        engines.is_some(),
        Some(&started.prompt),
    ))
}

impl BmadServer {
    /// `status`: the session as stored, its drift, the role prompt its state asks for; the
    /// first after a decision made elsewhere gives what changed and what is new in the
    /// prompt (`elsewhere`). A read-only call is not refused for an optional file it merely
    /// consults: the state is answered, and a prompt override's problem named.
    fn status(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        cannot_ask: Option<&str>,
    ) -> crate::error::Result<Reply> {
        let store = &self.inner.store;
        let (project, s, claims) = store.load_fresh(cwd, key, false)?;
        // The BMAD install, read once for the whole reply.
        let method = crate::bmad_method::Method::of(&project);
        let drift = crate::store::drift(&project, &s);
        let (round, only_new) = self.status_round(&s);
        let mut r = match prompts::needed(&method, store.user_prompts(), &s) {
            Ok(prompt) => reply::for_status_round(&s, prompt.as_ref(), round),
            Err(e) => {
                let mut r = reply::for_status(&s, None);
                r.notices.get_or_insert_with(Vec::new).push(format!(
                    "This reply carries no role prompt ({}): {e}",
                    e.code()
                ));
                r
            }
        };
        reply::with_drift(&mut r, drift);
        // A fault of the server's own that nothing has moved past: the task is stuck on
        // it, and the human is to know it is not the work.
        let fault = faults::since_last_change(&project, &s);
        if fault.is_some() {
            // The call that failed would fail the same way: the model does not make it again.
            r.next_step = Some(super::fault::STANDING.to_string());
        }
        let said = [
            crate::store::went_back(&project, &s),
            fault.map(|f| faults::describe(&project, &f)),
            crate::store::stories::stale_copy(&project, &s),
            claims.as_ref().and_then(|c| store.holders_in(c, &s)),
            crate::store::stories::twice(&s),
            act::offer_to_begin(&method, &s),
            store.done_by_hand(&method, &s),
            store.held_by_method(&method, &s),
        ];
        for n in said.into_iter().flatten() {
            r.notices.get_or_insert_with(Vec::new).push(n);
        }
        // A story whose sprint another story holds now stops here, before more work.
        match store.stopped(&s, claims.as_ref()) {
            Some(why) => reply::stopped(&mut r, &why),
            None => {
                let news = store.claim_news(&s, claims.as_ref());
                r.notices.get_or_insert_with(Vec::new).extend(news);
            }
        }
        // The policy, read once for the summary and the human's gates.
        let policy = crate::policy::approval::Policy::read(&project);
        r.project = Some(super::project_context::summary(&project, policy.as_ref()));
        super::dialog::decided_elsewhere::say_in_status(&mut r, &s, only_new);
        let gates = policy
            .as_ref()
            .ok()
            .and_then(|p| crate::policy::admission::keeps_for_human(p, cannot_ask));
        if let Some(human) = act::for_human(&project, &s, Some(gates), cannot_ask) {
            reply::for_human(&mut r, &human);
        }
        Ok(r)
    }
}
