//! A gate decision asked of the human in the client's own dialog, which the model cannot
//! answer for them (MCP elicitation, form mode):
//!
//! * up to protocol 2025-11-25 the server sends `elicitation/create` while the call is
//!   open, and applies the answer before replying;
//! * from 2026-07-28 the call ends with an input-required result carrying the form and a
//!   sealed request state; the client asks the human and calls again with the answer.
//!
//! Either way the answer is bound to the digest of the document as the form showed it: a
//! document changed in between makes the answer stale, and the human is asked again with
//! the current version. Decline changes nothing; cancel leaves the decision pending and
//! the call ends with a reply that says how else the human can decide. A form closed
//! sooner than a person reads one was closed by the client itself, unseen, and the reply
//! says so rather than blame the human. The server never asks twice after a cancel within
//! one call.
//!
//! The dialog's whole path is this folder: who decides a call ([`decides`]: the dialog, or
//! the host's word where who is behind the connection cannot ask the human, [`origin`], or
//! a hook on the dialog would answer in their place, [`hooks`]), the form and how its
//! answer is read ([`ask`]), and a decision the human made elsewhere while the host waited
//! ([`decided_elsewhere`]).

mod ask;
pub(super) mod decided_elsewhere;
mod hooks;
mod origin;

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, InputRequiredResult, ProtocolVersion, Request, ServerRequest,
};
use rmcp::model::{RequestStateCodec, SealOptions};
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde::{Deserialize, Serialize};

use crate::server::args::Call;
use crate::server::fault::Scene;
use crate::server::per_host;
use crate::server::reply::{self, Reply, Undecided};
use crate::server::result::{to_result, Readers};
use crate::server::BmadServer;
use crate::workflow::DecidedBy;
use chrono::Utc;

use crate::act::human::{self, Asking, Decided};
use crate::act::Handover;
use crate::fault::Fault;
use crate::policy::config::CONFIG_REL;
use crate::policy::{self, approval::Waiting};
use crate::store::SessionKey;
use crate::workflow::machine::Pending;
use crate::workflow::{Command, Provenance, Via};

/// The key of the one input request in an input-required result.
const INPUT_KEY: &str = "decision";
/// How many times one call asks again because the document changed while the human
/// was deciding.
const MAX_ASKS: usize = 3;
/// How long a sealed question stays answerable.
const STATE_TTL: Duration = Duration::from_secs(60 * 60);
/// Bound into every sealed state, so that no other sealed value of this process opens.
const STATE_CONTEXT: &[u8] = b"bmad-task gate decision v1";

/// The client's answer to a form, and how long after the form went out it came.
struct Answered {
    answer: ElicitResult,
    within: Duration,
}

/// A call whose decision the dialog asks the human for, as parsed.
pub struct DialogCall {
    pub cwd: Option<String>,
    pub key: SessionKey,
    pub command: Command,
    /// Who is behind the channel that asks ([`origin`]), kept with the decision.
    pub provenance: Provenance,
    /// Who reads the call's result ([`crate::server::result`]).
    pub readers: Readers,
    /// The host, and when it closes every dialog unseen
    /// ([`crate::hosts::Dialog::DeclinedUnattended`]), for the reply to a dialog closed
    /// sooner than a person answers one.
    pub unattended: Option<(&'static str, crate::hosts::Unseen)>,
    /// The connection's first process and the client's declared name: where the hooks on
    /// the dialog are read again once it is answered ([`hooks`]).
    pub first: Option<crate::process_origin::Proc>,
    pub client: Option<String>,
}

impl DialogCall {
    /// The call, for a fault in it.
    fn scene(&self) -> Scene {
        Scene {
            cwd: self.cwd.clone(),
            key: Some(self.key.clone()),
            action: self.command.action().name().to_string(),
        }
    }
}

/// What the sealed request state carries back: which session, which action, and the
/// digest of the document as the form showed it. Signed, not encrypted: nothing secret.
#[derive(Serialize, Deserialize)]
struct Asked {
    session_id: String,
    action: String,
    sha256: Option<String>,
    /// The digest of `.bmad/config.toml` as the form offered to approve it, if it did.
    config_sha256: Option<String>,
    /// When the form went out, in milliseconds since the Unix epoch: an answer that closes
    /// it sooner than a person reads one was nobody's ([`NO_PERSON_WITHIN`]).
    #[serde(default)]
    asked_at_ms: u64,
}

/// How soon after a form went out an answer that closes it cannot be a person's: no one
/// reads a form and answers it within a second, and the hosts that close every dialog in
/// a mode without a person (`claude -p` cancels 9 ms after, `codex exec` and `copilot -p`
/// decline at once) do it well within.
const NO_PERSON_WITHIN: Duration = Duration::from_secs(1);

/// Milliseconds since the Unix epoch, now.
fn now_ms() -> u64 {
    u64::try_from(Utc::now().timestamp_millis()).unwrap_or_default()
}

/// Whether the client declared that it can show a form to its user.
pub fn can_ask(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        // An empty capability object means form mode (the 2025-06-18 shape).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

pub(in crate::server) fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// A codec with a key of this process: a state sealed before a restart does not open,
/// and the human is asked again.
pub fn new_codec() -> RequestStateCodec {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    RequestStateCodec::new_unchecked(key)
}

/// Who decides a call.
pub(super) enum Decides {
    /// The human, in the client's dialog.
    Dialog(Box<DialogCall>),
    /// The host's word, as the policy takes it: `cannot_ask`, who cannot ask the human
    /// (kept in the decision, and named in the reply where the human decides);
    /// `dialog_shut`, why the client's dialog stayed shut.
    Word {
        cannot_ask: Option<String>,
        dialog_shut: Option<String>,
    },
}

/// Who decides `call`. A decision the host asserts goes to the human when the client can
/// ask them (`can_ask`), unless the connection is an assistant's own, or a hook the human
/// did not approve would answer the dialog in their place: then it stays the host's, and
/// where it was opened from a host's shell (or a hook stands in the dialog) it waits for
/// the human by default.
pub(super) fn decides(
    call: &mut Call,
    context: &RequestContext<RoleServer>,
    can_ask: bool,
    readers: &Readers,
    store: &crate::store::Store,
) -> Decides {
    let client = context.client_info().map(|i| i.name);
    let host_cannot_ask = per_host::waits_for_human(client.as_deref(), can_ask);
    let mut cannot_ask = host_cannot_ask.map(per_host::host_cannot_ask);
    let mut dialog_shut = None;
    if let Call::Act {
        cwd,
        key,
        command,
        decision,
    } = call
    {
        if command.action().decides() && decision.decided_by == DecidedBy::Host {
            let route = origin::route(context, can_ask, host_cannot_ask);
            let route = past_the_hooks(route, store, cwd.as_deref(), client.as_deref());
            match route {
                origin::Route::Dialog(provenance, first) => {
                    return Decides::Dialog(Box::new(DialogCall {
                        cwd: cwd.clone(),
                        key: key.clone(),
                        command: command.clone(),
                        provenance,
                        readers: readers.clone(),
                        unattended: per_host::declines_unattended(client.as_deref()),
                        first,
                        client: client.clone(),
                    }))
                }
                origin::Route::Word {
                    cannot_ask: why,
                    provenance,
                    dialog_shut: shut,
                } => {
                    cannot_ask = why;
                    decision.provenance = provenance.map(Box::new);
                    dialog_shut = shut;
                }
            }
        }
        decision.cannot_ask.clone_from(&cannot_ask);
    }
    Decides::Word {
        cannot_ask,
        dialog_shut,
    }
}

/// `route` once the hooks on the dialog are read: a dialog that a hook the human did not
/// approve would answer in their place is not opened, and the decision is the host's word
/// (which waits for the human by default), recorded with the hook; an approved hook is
/// recorded with the human's answer.
fn past_the_hooks(
    route: origin::Route,
    store: &crate::store::Store,
    cwd: Option<&str>,
    client: Option<&str>,
) -> origin::Route {
    let origin::Route::Dialog(mut provenance, first) = route else {
        return route;
    };
    let hooks = hooks::on_the_dialog(store, cwd, first.as_ref(), client).unwrap_or_default();
    provenance.hooks = hooks.approved_named();
    let Some(why) = hooks.why_not_the_human() else {
        return origin::Route::Dialog(provenance, first);
    };
    provenance
        .hooks
        .extend(hooks.unapproved.iter().map(crate::policy::hooks::named));
    origin::Route::Word {
        cannot_ask: Some(why.clone()),
        provenance: Some(provenance),
        dialog_shut: Some(why),
    }
}

impl BmadServer {
    /// The server is stopping: every call waiting on the human's dialog answers now that
    /// the decision is still pending and how to decide later, and no dialog is opened
    /// after this (spec §shutdown; `serve --http` and stdio call it on SIGTERM).
    pub fn stop(&self) {
        self.inner.stopping.cancel();
    }

    /// What the decision would ask (and what of the project's config waits for the
    /// human beside it), or the reply that refuses it.
    async fn pending(&self, call: &DialogCall) -> Result<(Asking, Option<Waiting>), Box<Reply>> {
        let (cwd, key, action) = (call.cwd.clone(), call.key.clone(), call.command.action());
        let found = self
            .blocking(move |s| {
                let asking = human::asking(&s.inner.store, cwd.as_deref(), &key, action)
                    .map_err(|(e, session)| Box::new(reply::for_error(&e, session.as_deref())))?;
                // A config that cannot be read refuses the decision before the human is
                // asked in vain.
                match asking.config_waiting() {
                    Ok(waiting) => Ok((asking, waiting)),
                    Err(e) => Err(Box::new(reply::for_error(&e, Some(&asking.session)))),
                }
            })
            .await;
        match found {
            Ok(found) => found,
            Err(failed) => Err(Box::new(self.fault_reply(call.scene(), failed).await)),
        }
    }

    /// The call's answer when the human decides in the dialog.
    pub async fn decide_in_dialog(
        &self,
        call: DialogCall,
        request: &CallToolRequestParams,
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if is_modern(ctx) {
            self.decide_by_rounds(call, request).await
        } else {
            let readers = call.readers.clone();
            to_result(self.decide_within_call(call, ctx).await, &readers).into()
        }
    }

    /// Up to 2025-11-25: ask while the call is open.
    async fn decide_within_call(
        &self,
        call: DialogCall,
        ctx: &RequestContext<RoleServer>,
    ) -> Reply {
        let mut note = None;
        for _ in 0..MAX_ASKS {
            let (asking, config) = match self.pending(&call).await {
                Ok(found) => found,
                Err(reply) => return *reply,
            };
            let (session, pending) = (&asking.session, &asking.pending);
            let form = ask::form(pending, &call.command, note, config.as_ref());
            let request = ServerRequest::ElicitRequest(Request::new(form));
            let options = rmcp::service::PeerRequestOptions::no_options();
            let handle = match ctx.peer.send_cancellable_request(request, options).await {
                Ok(handle) => handle,
                Err(e) => {
                    let why = format!("the client could not show the dialog ({e})");
                    return reply::for_undecided(session, pending, Undecided::Failed(why));
                }
            };
            let asked = handle.id.clone();
            let sent = std::time::Instant::now();
            let (ended, why) = tokio::select! {
                biased;
                () = self.inner.stopping.cancelled() => {
                    (Err(reply::for_undecided(session, pending, Undecided::Stopping)), "")
                }
                answer = handle.await_response() => (Ok(answer), ""),
                // Decided on the dashboard or in the terminal meanwhile: the call returns.
                found = self.until_decided_elsewhere(session) => {
                    (Err(found), "the human decided elsewhere (the dashboard or the terminal)")
                }
                () = ctx.ct.cancelled() => {
                    (Err(reply::for_undecided(session, pending, Undecided::Cancelled)), "the call was cancelled")
                }
            };
            let answer = match ended {
                Ok(answer) => answer,
                Err(reply) => {
                    close_dialog(&ctx.peer, asked, why).await;
                    return reply;
                }
            };
            let answer = match answer {
                Ok(result) => elicit_result(result),
                Err(e) => {
                    let why = format!("the client could not show the dialog ({e})");
                    return reply::for_undecided(session, pending, Undecided::Failed(why));
                }
            };
            let Some(answer) = answer else {
                let why = "the client's answer to the dialog is not an elicitation result".into();
                return reply::for_undecided(session, pending, Undecided::Failed(why));
            };
            let config_seen = config.map(|w| w.sha256);
            let seen = human::shown_digest(&asking);
            let answered = Answered {
                answer,
                within: sent.elapsed(),
            };
            match self
                .apply(&call, &asking, seen, answered, config_seen)
                .await
            {
                Some(reply) => return reply,
                None => note = Some(CHANGED),
            }
        }
        let (asking, _) = match self.pending(&call).await {
            Ok(found) => found,
            Err(reply) => return *reply,
        };
        reply::for_undecided(&asking.session, &asking.pending, Undecided::KeptChanging)
    }

    /// From 2026-07-28: the form goes back as an input-required result; the client's
    /// retry carries the answer and the sealed question.
    async fn decide_by_rounds(
        &self,
        call: DialogCall,
        request: &CallToolRequestParams,
    ) -> CallToolResponse {
        let (asking, config) = match self.pending(&call).await {
            Ok(found) => found,
            // The retry of a round the human answered elsewhere meanwhile.
            Err(reply) => {
                let (cwd, key) = (call.cwd.clone(), call.key.clone());
                let found = self
                    .blocking(move |s| s.decided_elsewhere(cwd.as_deref(), &key, None, None))
                    .await
                    .ok()
                    .flatten();
                return to_result(found.unwrap_or(*reply), &call.readers).into();
            }
        };
        let action = call.command.action();
        let Some(sealed) = request.request_state.as_deref() else {
            return self
                .input_required(&asking.pending, &call, None, config.as_ref())
                .await;
        };
        let opened: Option<Asked> = self
            .inner
            .codec
            .open_json_with(sealed, STATE_CONTEXT)
            .ok()
            .filter(|a: &Asked| {
                a.session_id == asking.session.session_id && a.action == action.name()
            });
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(INPUT_KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let (Some(asked), Some(answer)) = (opened, answer) else {
            return self
                .input_required(&asking.pending, &call, Some(UNMATCHED), config.as_ref())
                .await;
        };
        // The answer is about the version the form showed, not the one on disk now, and
        // the config's approval, if offered, about the version the form showed.
        let seen = asking
            .pending
            .document
            .as_ref()
            .map(|d| asked.sha256.clone().unwrap_or_else(|| d.sha256.clone()));
        let within = Duration::from_millis(now_ms().saturating_sub(asked.asked_at_ms));
        let answered = Answered { answer, within };
        match self
            .apply(&call, &asking, seen, answered, asked.config_sha256)
            .await
        {
            Some(reply) => to_result(reply, &call.readers).into(),
            None => match self.pending(&call).await {
                Ok((now, config)) => {
                    self.input_required(&now.pending, &call, Some(CHANGED), config.as_ref())
                        .await
                }
                Err(reply) => to_result(*reply, &call.readers).into(),
            },
        }
    }

    async fn input_required(
        &self,
        pending: &Pending,
        call: &DialogCall,
        note: Option<&str>,
        config: Option<&Waiting>,
    ) -> CallToolResponse {
        let command = &call.command;
        let asked = Asked {
            session_id: pending.session_id.clone(),
            action: command.action().name().to_string(),
            sha256: pending.document.as_ref().map(|d| d.sha256.clone()),
            config_sha256: config.map(|w| w.sha256.clone()),
            asked_at_ms: now_ms(),
        };
        let options = SealOptions::new()
            .associated_data(STATE_CONTEXT)
            .ttl(STATE_TTL);
        let state = match self.inner.codec.seal_json_with(&asked, &options) {
            Ok(state) => state,
            Err(e) => {
                let failed =
                    Fault::error("seal the dialog's question for the client", e.to_string());
                let r = self.fault_reply(call.scene(), failed).await;
                return to_result(r, &call.readers).into();
            }
        };
        let form: ElicitRequestParams = ask::form(pending, command, note, config);
        let requests = [(
            INPUT_KEY.to_string(),
            InputRequest::Elicitation(Request::new(form)),
        )]
        .into();
        InputRequiredResult::new(Some(requests), Some(state)).into()
    }

    /// Applies the human's answer, bound to the digest of the document they were shown
    /// (`seen`), and their approval of the config when the form offered it (`config_seen`:
    /// the digest of the version shown) and they gave it: the reply, or `None` when the
    /// document changed between the question and the answer.
    async fn apply(
        &self,
        call: &DialogCall,
        asking: &Asking,
        seen: Option<String>,
        answered: Answered,
        config_seen: Option<String>,
    ) -> Option<Reply> {
        let (session, pending) = (&asking.session, &asking.pending);
        let Answered { answer, within } = answered;
        let how = match answer.action {
            ElicitationAction::Accept => None,
            // Closed before anyone could read it: the client's own doing, not the human's.
            _ if within < NO_PERSON_WITHIN => Some(Undecided::ClosedUnseen(call.unattended)),
            ElicitationAction::Decline => Some(Undecided::Declined),
            // Cancel, or an action this server does not know: still pending.
            _ => Some(Undecided::Cancelled),
        };
        if let Some(how) = how {
            return Some(reply::for_undecided(session, pending, how));
        }
        let config_seen = config_seen.filter(|_| ask::approves_config(answer.content.as_ref()));
        let command = match command_of(call, pending, &answer) {
            Ok(command) => command,
            Err(why) => {
                let why = Undecided::Unusable(why);
                return Some(reply::for_undecided(session, pending, why));
            }
        };
        if let Some(why) = self.hooks_since(call).await {
            return Some(reply::for_undecided(
                session,
                pending,
                Undecided::Unusable(why),
            ));
        }
        let answer = human::Answer {
            command,
            via: Via::Elicitation,
            provenance: call.provenance.clone(),
            seen_digest: seen,
            handover: Handover::Prompt,
        };
        let (at, key) = (asking.at.clone(), asking.key.clone());
        let decided = self
            .blocking(move |s| human::decide(&s.inner.store, &at, &key, answer))
            .await;
        let mut reply = match decided {
            Ok(Decided::Done(done)) => reply::for_done(&done),
            Ok(Decided::Stale { .. }) => return None,
            Ok(Decided::Refused((e, session))) => reply::for_error(&e, session.as_deref()),
            Err(failed) => self.fault_reply(call.scene(), failed).await,
        };
        if reply.error.is_none() && !call.provenance.hooks.is_empty() {
            reply.notices.get_or_insert_with(Vec::new).push(format!(
                "The dialog's answer may have come from a hook you approved ({}): it is taken as yours, and the hook is recorded with the decision.",
                call.provenance.hooks.join("; ")
            ));
        }
        if let Some(sha) = config_seen {
            let said = self.approve_config_too(session.cwd.clone(), sha).await;
            reply.notices.get_or_insert_with(Vec::new).push(said);
        }
        Some(reply)
    }

    /// Why the dialog's answer is not the human's after all: a hook the human did not
    /// approve stands on the dialog now (written while it was open: the host reads its
    /// settings again as they change). `None` when none does, or they cannot be read.
    async fn hooks_since(&self, call: &DialogCall) -> Option<String> {
        let (cwd, first, client) = (call.cwd.clone(), call.first.clone(), call.client.clone());
        self.blocking(move |s| {
            hooks::on_the_dialog(
                &s.inner.store,
                cwd.as_deref(),
                first.as_ref(),
                client.as_deref(),
            )
            .and_then(|h| h.why_not_the_human())
        })
        .await
        .ok()
        .flatten()
        .map(|why| format!("The dialog's answer was not taken as yours: {why}. Nothing changed."))
    }

    /// Approves `.bmad/config.toml` as the form showed it (`sha`), as the human did beside
    /// their decision; what the reply says of it.
    async fn approve_config_too(&self, cwd: String, sha: String) -> String {
        let scene = Scene {
            cwd: Some(cwd.clone()),
            key: None,
            action: "config approve".into(),
        };
        let approved = self
            .blocking(move |s| {
                policy::approve_config(
                    &s.inner.store,
                    Some(&cwd),
                    &sha,
                    Via::Elicitation,
                    &Utc::now,
                )
            })
            .await;
        let approved = match approved {
            Ok(done) => done.map_err(|e| e.to_string()),
            Err(failed) => Err(self
                .fault_reply(scene, failed)
                .await
                .error
                .map(|e| e.message)
                .unwrap_or_default()),
        };
        match approved {
            Ok(a) => format!(
                "The human also approved {CONFIG_REL} (sha256 {}) in the dialog: its checks and gates policy hold from now on.",
                &a.sha256[..12]
            ),
            Err(e) => format!("{CONFIG_REL} was not approved: {e}"),
        }
    }
}

/// The command the human's accepted form means: what [`ask::read`] reads, with the
/// answers the host gave with its `confirm` to questions the form did not show (those it
/// showed, each assumption pre-filled with the host's answer, are what the human left
/// there); or why nothing is applied.
fn command_of(
    call: &DialogCall,
    pending: &Pending,
    answer: &ElicitResult,
) -> Result<Command, String> {
    match ask::read(pending, answer.content.as_ref())? {
        Command::Confirm {
            action,
            note,
            answers: corrected,
        } => {
            let shown = |id: &String| pending.assumed.iter().any(|(q, _)| &q.id == id);
            let mut answers = match &call.command {
                Command::Confirm { answers, .. } => answers.clone(),
                _ => Default::default(),
            };
            answers.retain(|id, _| !shown(id));
            answers.extend(corrected);
            Ok(Command::Confirm {
                action,
                note,
                answers,
            })
        }
        command => Ok(command),
    }
}

const CHANGED: &str =
    "The document changed while the dialog was open; this is the version on disk now.";
const UNMATCHED: &str =
    "The earlier answer did not match a question this server asked (it expired after an hour, or the server restarted): please decide again.";

/// Tells the client that the dialog it shows for request `asked` is void (the call it
/// belonged to returned without it), so that it can close it: nobody reads its answer.
/// Not while the server stops (`why` empty): its transport is closing, and the reply must
/// not wait on it; a second at most otherwise.
async fn close_dialog(peer: &rmcp::Peer<RoleServer>, asked: rmcp::model::RequestId, why: &str) {
    if why.is_empty() {
        return;
    }
    let cancelled =
        rmcp::model::CancelledNotificationParam::new(Some(asked), Some(why.to_string()));
    let told = tokio::time::timeout(DIALOG_CLOSE_WAIT, peer.notify_cancelled(cancelled)).await;
    if !matches!(told, Ok(Ok(()))) {
        tracing::debug!("the client was not told the dialog is void");
    }
}

/// How long telling the client its dialog is void may take.
const DIALOG_CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The elicitation result in a client's response, whatever shape rmcp read it as.
fn elicit_result(result: ClientResult) -> Option<ElicitResult> {
    match result {
        ClientResult::ElicitResult(r) => Some(r),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok()),
    }
}
