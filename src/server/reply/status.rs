//! The reply to `status`: the session, its decisions.

use crate::prompts::{Repeat, Template};
use crate::store::Drift;
use crate::workflow::{Action, Facts, Session, State};

use super::{for_round, some_vec, DecisionEntry, Reply};

/// `status`: the reply for the session's state, and the session as stored, its content
/// references without their summaries (the files are named; `role_prompt` already gives a
/// line of each earlier document).
pub fn for_status(s: &Session, prompt: Option<&Template>) -> Reply {
    for_status_round(s, prompt, Repeat::Full)
}

/// [`for_status`] with the role prompt cut to `round` (what is new since the prompts the
/// host had, when it is known to have had them).
pub fn for_status_round(s: &Session, prompt: Option<&Template>, round: Repeat) -> Reply {
    let mut r = for_round(s, &Facts::default(), (Action::Status, round), None, prompt);
    if s.current_state == State::Completed {
        // The documents are listed once, in `session.artifacts`; the person is told where
        // they are.
        if let Some(i) = r.user_message.find(" Documents") {
            r.user_message.truncate(i);
            r.user_message
                .push_str(&format!(" Documents: in {}/.", s.specs_dir()));
        }
    }
    r.decisions = some_vec(
        s.decisions()
            .filter_map(|h| {
                Some(DecisionEntry {
                    stage: h.stage,
                    action: h.action,
                    decided_by: h.decided_by?,
                    via: h.via?,
                    decider: h.decider.clone(),
                    digest: h.digest.as_ref().map(|d| d.chars().take(12).collect()),
                    client: h.provenance.as_ref().and_then(client_of),
                    at: h.at.clone(),
                })
            })
            .collect(),
    );
    // A resumed round's reply says what changed; the owner and branch did not.
    if (s.owner.is_some() || s.branch.is_some()) && round != Repeat::Resumed {
        let owner = s.owner.as_ref().map_or("unknown".into(), |o| o.to_string());
        let branch = s.branch.as_deref().unwrap_or("unknown");
        r.user_message
            .push_str(&format!(" Owner: {owner}; branch: {branch}."));
    }
    let mut stored = s.clone();
    for rec in stored.stages.iter_mut() {
        // The checks' output ends are in `checks` (the current stage's) and in the files.
        for c in rec.checks.iter_mut().flat_map(|run| run.checks.iter_mut()) {
            c.tail.clear();
            if let Some(o) = c.output.as_mut() {
                o.summary.clear();
            }
        }
        for c in [
            &mut rec.claude_result_ref,
            &mut rec.codex_result_ref,
            &mut rec.final_result_ref,
            &mut rec.draft_ref,
        ]
        .into_iter()
        .flatten()
        {
            c.summary.clear();
        }
        for c in rec.round_reports.iter_mut() {
            c.summary.clear();
        }
    }
    r.session = Some(stored);
    r
}

/// Adds the drift warning to a reply: in `drift`, and said in `notices`.
pub fn with_drift(r: &mut Reply, drift: Option<Drift>) {
    if let Some(d) = drift {
        r.notices.get_or_insert_with(Vec::new).push(d.describe());
        r.drift = Some(d);
    }
}

/// A `status` of a session stopped before more work is done (a story whose sprint another
/// story holds on the team's remote: `why`): no role prompt, and the host told to stop.
pub fn stopped(r: &mut Reply, why: &str) {
    r.role_prompt = None;
    r.role_prompt_source = None;
    r.user_message = format!("{why}\n\n{}", r.user_message);
    r.next_step = Some(
        "Show `user_message` to the human and stop: this story builds nothing more until they decide. Never submit here meanwhile."
            .into(),
    );
}

/// The client a decision came through and how, as recorded: `claude-code 2.1 over stdio`.
fn client_of(p: &crate::workflow::Provenance) -> Option<String> {
    let client = p.client.as_deref()?;
    Some(match &p.channel {
        Some(channel) => format!("{client} over {channel}"),
        None => client.to_string(),
    })
}
