//! The loop closes by itself: a decision the human made in another channel (the dashboard,
//! the terminal) while the assistant waited is found and said. A call waiting on the
//! client's dialog returns as soon as it lands on disk; a retry of an input-required round,
//! or the host's own decision call that is no longer legal, is answered with where the
//! workflow is now and who decided; `status` says it too. The first reply of this server
//! to say such a decision gives what changed (who decided what) and what is new in the
//! role prompt, which the host had before; a `status` after it gives everything again, the
//! whole prompt too, as that prompt's first line promises. A reply that asks the human to
//! decide carries the dashboard's deep link while one serves the project
//! (`.bmad-task/dashboard.json`, written by `bmad-mcp dashboard`).

use std::time::Duration;

use super::reply::{self, Reply};
use super::BmadServer;
use crate::prompts::{self, Repeat};
use crate::store::SessionKey;
use crate::workflow::{DecidedBy, Session, Via};

/// How often a call waiting on the dialog looks for a decision made elsewhere.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// The decision the human made in another channel (the dashboard, the terminal), when it
/// is the last thing that happened to `s`: what was decided, where, and the human's words.
/// `None` for the host's word or the dialog (which the call itself asked). Only the
/// human's own words are quoted as theirs; the server's note on the step (`note`) is
/// never passed off as them.
struct Elsewhere {
    decided: String,
    words: Option<String>,
    /// The answers the human typed with an `answer` (question id, answer), their words too.
    answers: Vec<(String, String)>,
}

impl Elsewhere {
    /// Said for both: "The human decided on the dashboard: reject at the po stage. The
    /// human's words: …". Words the reply's role prompt quotes whole as theirs (the
    /// feedback, a note) are said there once, and here named.
    fn said(&self, prompt: Option<&str>) -> String {
        if !self.answers.is_empty() {
            let ids: Vec<&str> = self.answers.iter().map(|(id, _)| id.as_str()).collect();
            let quoted = prompt.is_some_and(|p| self.answers.iter().all(|(_, a)| p.contains(a)));
            return if quoted {
                format!(
                    "{} Their answers ({}) are in the role prompt, as theirs.",
                    self.decided,
                    ids.join(", ")
                )
            } else {
                let each: Vec<String> = self
                    .answers
                    .iter()
                    .map(|(id, a)| format!("{id}: {a}"))
                    .collect();
                format!(
                    "{} Their answers: {}",
                    self.decided,
                    crate::code::clip(&each.join("; "), 400)
                )
            };
        }
        match self.words.as_deref() {
            Some(w) if prompt.is_some_and(|p| p.contains(w)) => format!(
                "{} The human's words are in the role prompt, as theirs.",
                self.decided
            ),
            Some(w) => format!(
                "{} The human's words: {}",
                self.decided,
                crate::code::clip(w, 400)
            ),
            None => format!("{} They gave no words with it.", self.decided),
        }
    }
}

fn last_decided_elsewhere(s: &Session) -> Option<Elsewhere> {
    let h = s.last_step()?;
    let channel = match (h.decided_by?, h.via?) {
        (DecidedBy::Human, Via::Dashboard) => "on the dashboard",
        (DecidedBy::Human, Via::Cli) => "in the terminal",
        _ => return None,
    };
    Some(Elsewhere {
        decided: format!(
            "The human decided {channel}: {} at the {} stage.",
            h.action.name(),
            h.stage
        ),
        words: h.feedback.clone(),
        answers: answered(s, h),
    })
}

/// The answers the human gave with the `answer` decision `h`: those of the latest round's
/// questions they answered through its channel, by question id.
fn answered(s: &Session, h: &crate::workflow::session::HistoryEntry) -> Vec<(String, String)> {
    if h.action != crate::workflow::Action::Answer {
        return Vec::new();
    }
    let rec = s.record(h.stage);
    let latest = rec
        .questions
        .iter()
        .map(|q| q.round)
        .max()
        .unwrap_or_default();
    rec.questions
        .iter()
        .filter(|q| q.round == latest)
        .filter(|q| {
            rec.answered_by.get(&q.id).is_some_and(|a| {
                a.by == crate::workflow::authorship::Speaker::Human && a.via == h.via
            })
        })
        .filter_map(|q| Some((q.id.clone(), rec.answers.get(&q.id)?.clone())))
        .collect()
}

/// What a `status` says that the host has already when the human decided elsewhere since
/// its last call: the decisions (the new one opens `user_message`), the last submission's
/// score, checks and sections (its reply gave them), the trace (a decision writes no
/// document), the project and the stored session (nothing the decision changed). The text
/// leaves them out; `structuredContent` keeps them, and a `status` with nothing decided
/// elsewhere since gives them all.
const HAD: [&str; 13] = [
    "decisions",
    "checks",
    "score",
    "scores",
    "score_source",
    "gate_passed",
    "iteration",
    "missing_sections",
    "empty_sections",
    "review_status",
    "trace",
    "project",
    "session",
];

/// How many decisions [`BmadServer::first_to_say`] keeps before it starts afresh (then a
/// decision may be said with only what changed once more, which the prompt's own line
/// covers: `status` then gives it all).
const BRIEFED_KEPT: usize = 4096;

/// Opens the reply with what changed: who decided what, where; the rest of the text is
/// what follows from it (the stage now, the next role prompt). `only_new`: the text leaves
/// out what the host had already ([`HAD`]).
fn open_with(r: &mut Reply, said: &Elsewhere, only_new: bool) {
    let said = said.said(r.role_prompt.as_deref());
    r.user_message = format!("{said}\n{}", r.user_message);
    if only_new {
        r.known.fields.extend(HAD);
    }
}

/// Opens `status`'s reply of `s` with the decision the human made elsewhere, when that is
/// the last thing that happened to the session: from the session the call already read.
/// `only_new`: as [`open_with`]. A parent waiting on its stories keeps its last decision
/// (the plan's approval) last while they run, and is asked for its `status` again and
/// again: once said, it is no longer news there (`decisions` lists it).
pub(super) fn say_in_status(r: &mut Reply, s: &Session, only_new: bool) {
    if !only_new && crate::workflow::story::waits_on_stories(s) {
        return;
    }
    if let Some(said) = last_decided_elsewhere(s) {
        open_with(r, &said, only_new);
    }
}

/// How much of the role prompt goes with the first reply to say the decision that ends
/// `s`'s history: what is new after that decision, as the reply to the decision itself
/// would have carried.
fn round_after_decision(s: &Session) -> Repeat {
    s.last_step()
        .map_or(Repeat::Full, |h| Repeat::after(h.action))
}

impl BmadServer {
    /// For a `status` of `s`: how much of the role prompt it carries, and whether it opens
    /// with a decision made elsewhere that no reply of this server said before. Then the
    /// host had the stage's role and rules and gets the round that decision opens whole
    /// (docs/spec.md §11.4), and the other fields give only what changed; any other
    /// `status` gives it all.
    pub(super) fn status_round(&self, s: &Session) -> (Repeat, bool) {
        if last_decided_elsewhere(s).is_some() && self.first_to_say(s) {
            (Repeat::Resumed, true)
        } else {
            (Repeat::Full, false)
        }
    }

    /// Whether no reply of this server said the decision that ends `s`'s history yet;
    /// notes that one does now.
    fn first_to_say(&self, s: &Session) -> bool {
        let mut said = self
            .inner
            .briefed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if said.len() >= BRIEFED_KEPT {
            said.clear();
        }
        said.insert((s.session_id.clone(), s.steps()))
    }

    /// `status` (with what is new in its role prompt, when one is needed), opening with the
    /// decision the human made elsewhere, when that is the last thing that happened to the
    /// session (and, with `since`, was made after the history had `since` entries): the
    /// reply to the host's own call, which had the earlier replies.
    pub(super) fn decided_elsewhere(
        &self,
        cwd: Option<&str>,
        key: &SessionKey,
        since: Option<usize>,
        cannot_ask: Option<&str>,
    ) -> Option<Reply> {
        let (project, s) = self.inner.store.load(cwd, key).ok()?;
        if since.is_some_and(|n| s.steps() <= n) {
            return None;
        }
        let said = last_decided_elsewhere(&s)?;
        let method = crate::bmad_method::Method::of(&project);
        let prompt = prompts::needed(&method, self.inner.store.user_prompts(), &s)
            .ok()
            .flatten();
        // The host's own call: it had the prompts, and learns what changed; a `status`
        // after this gives it all.
        self.first_to_say(&s);
        let mut r = reply::for_status_round(&s, prompt.as_ref(), round_after_decision(&s));
        open_with(&mut r, &said, true);
        if let Some(human) = crate::act::for_human(&project, &s, None, cannot_ask) {
            reply::for_human(&mut r, &human);
        }
        Some(r)
    }

    /// Waits until the human decides `session`'s pending decision in another channel;
    /// then the reply that says so. Never ends otherwise (the caller races it).
    pub(super) async fn until_decided_elsewhere(&self, session: &Session) -> Reply {
        let (cwd, key, since) = (
            Some(session.cwd.clone()),
            SessionKey::from_task(&session.session_id),
            session.steps(),
        );
        loop {
            tokio::time::sleep(LOOK_EVERY).await;
            let (cwd, key) = (cwd.clone(), key.clone());
            let found = self
                .blocking(move |s| s.decided_elsewhere(cwd.as_deref(), &key, Some(since), None))
                .await
                .ok()
                .flatten();
            if let Some(r) = found {
                return r;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompts::Template;
    use crate::workflow::session::HistoryEntry;
    use crate::workflow::{Action, Engine, Stage, State};

    /// A session at the PO's second round, the human having sent the PRD back in a terminal.
    fn sent_back_in_a_terminal() -> Session {
        let mut s = Session::new(
            "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f".into(),
            "todo-app".into(),
            "/p".into(),
            "Build a todo app".into(),
            vec![Engine::Claude],
            chrono::Utc::now(),
        );
        s.current_state = State::Refining;
        let po = s.record_mut(Stage::Po);
        po.score = Some(93);
        po.gate_passed = Some(true);
        po.iteration = 2;
        let decision = crate::workflow::Decision {
            decided_by: DecidedBy::Human,
            via: Via::Cli,
            seen_digest: None,
            provenance: None,
            decider: None,
            cannot_ask: None,
        };
        po.feedback.push(crate::workflow::authorship::Said::of(
            &decision,
            "Say what is out of scope.",
        ));
        s.history.push(HistoryEntry {
            at: "2026-11-26T08:00:00.000Z".into(),
            action: Action::Reject,
            stage: Stage::Po,
            from: Some(State::AwaitingConfirmation),
            to: State::Refining,
            decided_by: Some(DecidedBy::Human),
            via: Some(Via::Cli),
            decider: None,
            digest: Some("05ac57ada735".into()),
            provenance: None,
            note: None,
            feedback: Some("Say what is out of scope.".into()),
            lessons: Vec::new(),
            taught: Vec::new(),
        });
        s
    }

    fn server() -> BmadServer {
        BmadServer::new(
            crate::files::DefaultRoot {
                source_name: "test",
                value: "/p".into(),
            },
            crate::server::args::Limits::default(),
        )
    }

    /// `status`'s reply as the text the model reads, with its round as the server picks it.
    fn status_text(server: &BmadServer, s: &Session) -> (Reply, String) {
        let (round, only_new) = server.status_round(s);
        let mut r = reply::for_status_round(s, Some(&Template::built_in(Stage::Po)), round);
        say_in_status(&mut r, s, only_new);
        reply::name_notices(&mut r);
        let text = reply::render_text(&serde_json::to_value(&r).unwrap(), &r.known);
        (r, text)
    }

    /// The decision, and where its words are: the prompt that follows quotes them whole.
    const SAID: &str = "The human decided in the terminal: reject at the po stage. The human's words are in the role prompt, as theirs.";

    #[test]
    fn a_status_after_a_decision_made_elsewhere_says_what_changed_and_the_next_prompt() {
        let s = sent_back_in_a_terminal();
        let server = server();
        let (r, text) = status_text(&server, &s);
        assert!(r.user_message.starts_with(SAID), "{}", r.user_message);
        assert!(
            !r.next_step
                .as_deref()
                .unwrap_or_default()
                .contains("notices"),
            "{r:?}"
        );
        // Said once, in `user_message`; not again as a notice.
        assert_eq!(text.matches(SAID).count(), 1, "{text}");
        assert!(text.contains("state: refining\n"), "{text}");
        for had in [
            "decisions:",
            "score:",
            "gate_passed:",
            "iteration:",
            "trace:",
            "session:",
        ] {
            assert!(!text.contains(had), "{had} in {text}");
        }
        // The prompt: the round whole, all the next submission needs (its instructions,
        // every piece of feedback, the form of the reply), the role and its rules named
        // as the stage's first prompt gave them.
        let prompt = r.role_prompt.clone().unwrap();
        assert!(
            prompt.contains("- the user, in the terminal: Say what is out of scope.\n"),
            "{prompt}"
        );
        let named = format!("(The Product Owner: {}", prompts::SENT_BEFORE);
        assert!(prompt.starts_with(&named), "{prompt}");
        assert!(!prompt.contains(prompts::REVISE_AGAIN), "{prompt}");
        assert!(!prompt.contains("as sent before"), "{prompt}");
        assert!(prompt.contains("## This round: revise the PRD"), "{prompt}");
        assert!(prompt.contains("\"prd_updated\""), "{prompt}");
        // Programs still find the whole state.
        let value = serde_json::to_value(&r).unwrap();
        assert_eq!(value["decisions"][0]["via"], "cli", "{value:#}");
        assert_eq!(value["score"], 93);
        assert!(value["session"].is_object());

        // A `status` after it gives everything again.
        let (r, text) = status_text(&server, &s);
        assert!(r.user_message.starts_with(SAID), "{}", r.user_message);
        for shown in [
            "decisions:",
            "iteration: 2",
            "session:",
            "role_prompt: # Role: Product Owner",
        ] {
            assert!(text.contains(shown), "{shown} in {text}");
        }
        // Another server (a restarted one) has said nothing yet.
        let (r, _) = status_text(&self::server(), &s);
        assert!(!r.role_prompt.unwrap().contains("# Role: Product Owner"));
    }

    /// Answers typed in the terminal are the human's words: a `status` after them never
    /// says the human gave none.
    #[test]
    fn answers_typed_in_the_terminal_are_said_as_the_humans_words() {
        let mut s = sent_back_in_a_terminal();
        let po = s.record_mut(Stage::Po);
        po.feedback.clear();
        for n in 1..=4 {
            let id = format!("q{n}");
            po.questions.push(crate::workflow::session::Question {
                id: id.clone(),
                question: format!("Question {n}?"),
                context: None,
                round: 1,
            });
            po.answers.insert(id.clone(), format!("Answer number {n}"));
            po.answered_by.insert(
                id,
                crate::workflow::authorship::Author {
                    by: crate::workflow::authorship::Speaker::Human,
                    via: Some(Via::Cli),
                },
            );
        }
        let last = s.history.last_mut().unwrap();
        last.action = Action::Answer;
        last.from = Some(State::Clarifying);
        last.feedback = None;
        let mut bare = reply::for_status_round(&s, None, Repeat::Full);
        say_in_status(&mut bare, &s, true);
        assert!(
            bare.user_message.starts_with("The human decided in the terminal: answer at the po stage. Their answers: q1: Answer number 1; q2: Answer number 2; q3: Answer number 3; q4: Answer number 4"),
            "{}",
            bare.user_message
        );
        let (r, _) = status_text(&server(), &s);
        assert!(!r.user_message.contains("no words"), "{}", r.user_message);
        assert!(
            r.user_message
                .contains("Their answers (q1, q2, q3, q4) are in the role prompt, as theirs."),
            "{}",
            r.user_message
        );
    }

    #[test]
    fn a_status_with_nothing_decided_elsewhere_gives_the_whole_state() {
        let mut s = sent_back_in_a_terminal();
        s.history.last_mut().unwrap().via = Some(Via::Tool);
        let (r, text) = status_text(&server(), &s);
        assert!(!text.contains("The human decided"), "{text}");
        // A reply without the prompt quotes the human's words itself.
        let mut bare = reply::for_status_round(&s, None, Repeat::Full);
        s.history.last_mut().unwrap().via = Some(Via::Cli);
        say_in_status(&mut bare, &s, true);
        assert!(
            bare.user_message
                .starts_with("The human decided in the terminal: reject at the po stage. The human's words: Say what is out of scope."),
            "{}",
            bare.user_message
        );
        for shown in ["decisions:", "iteration: 2", "session:"] {
            assert!(text.contains(shown), "{shown} in {text}");
        }
        assert!(r.role_prompt.unwrap().contains("# Role: Product Owner"));
    }
}
