//! `user_message` is the person's: what happened and what they can do. What the host's
//! model does is `next_step`'s. [`instructs_the_model`] names the words that only make
//! sense said to the model (a reply's own fields, a tool call to make or not, words to
//! relay, a resubmission): the unit tests run it over every reply builder, and the
//! integration tests over every reply they read (`tests/it/support`).

/// The words, lower-cased, that tell the model what to do: one of them in `user_message`
/// is an instruction the person was not meant to read (and `opencode run` prints to them).
const MODEL_WORDS: [&str; 32] = [
    // The reply's fields, which only the model reads.
    "user_message",
    "next_step",
    "role_prompt",
    "allowed_actions",
    // A tool call to make, or not.
    "do not call",
    "don't call",
    "never call",
    "call `",
    "call again",
    "call it again",
    "call status",
    "retry this call",
    "do not retry",
    // Words to relay, or whom to ask.
    "show the human",
    "tell the human",
    "ask the human what",
    "ask the human to",
    "show them",
    "tell them",
    "ask them",
    // A document to send again.
    "submit again",
    "submit it again",
    "submit it with",
    "then submit",
    "resubmit",
    "send less",
    // Deciding in the human's place.
    "never decide for",
    "do not decide for",
    "never answer for",
    "in a loop",
    "give only one",
    "and stop",
];

/// The first word of [`MODEL_WORDS`] in `user_message`, or `None` when it is all the
/// person's.
pub fn instructs_the_model(user_message: &str) -> Option<&'static str> {
    let lower = user_message.to_lowercase();
    MODEL_WORDS.into_iter().find(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::super::*;
    use super::instructs_the_model;
    use crate::code::ErrorCode;
    use crate::workflow::machine::{Asked, Pending, Shown};
    use crate::workflow::session::{Artifact, Question, Sprint};
    use crate::workflow::WorkflowError;

    fn session(track: Track, stage: Stage, state: State) -> Session {
        let mut s = Session::new(
            "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f".into(),
            "todo-app".into(),
            "/p".into(),
            "Build a todo app".into(),
            vec![Engine::Claude],
            Utc::now(),
        );
        s.track = track;
        s.current_stage = stage;
        s.current_state = state;
        let rec = s.record_mut(stage);
        rec.score = Some(93);
        rec.gate_passed = Some(true);
        rec.iteration = 1;
        rec.questions = vec![Question {
            id: "q1".into(),
            question: "Which platforms?".into(),
            context: None,
            round: 1,
        }];
        rec.sprints = vec![Sprint {
            number: 1,
            title: "Core".into(),
        }];
        let path = s.artifact_path(stage);
        s.record_mut(stage).artifact = Some(Artifact {
            path,
            sha256: "0".repeat(64),
            size: 10,
        });
        s
    }

    fn person(r: &Reply, what: &str) {
        if let Some(w) = instructs_the_model(&r.user_message) {
            panic!("{what}: `{w}` in user_message: {}", r.user_message);
        }
    }

    /// Every error the tool can answer with. The match has no wildcard: a new variant does
    /// not build until it has a sample here.
    fn every_error() -> Vec<Error> {
        let workflow = every_workflow_error().into_iter().map(Error::Workflow);
        let mut all: Vec<Error> = workflow.collect();
        all.extend(callers_errors());
        all.extend(projects_errors());
        all.iter().for_each(error_covered);
        all
    }

    /// The errors about what the call sent.
    fn callers_errors() -> Vec<Error> {
        vec![
            Error::argument(ErrorCode::InvalidArgument, "field `x`: not a string"),
            Error::TooLarge {
                field: "claude_result".into(),
                size: 9,
                limit: 1,
                variable: "BMAD_MAX_RESULT_BYTES",
            },
            Error::SessionNotFound {
                what: "`t`".into(),
                project: "/p".into(),
            },
            Error::InvalidProject {
                source_name: "cwd",
                value: "x".into(),
                reason: "not absolute".into(),
            },
            Error::ForbiddenProject {
                cwd: "/x".into(),
                roots: "/p".into(),
            },
            Error::ConflictingIds {
                id: "i".into(),
                its_task: "a".into(),
                task_name: "b".into(),
                named: "another session".into(),
            },
        ]
    }

    /// The errors about the project, the policy and the server.
    fn projects_errors() -> Vec<Error> {
        vec![
            Error::UnsafePath {
                path: "/p/.bmad-task".into(),
                reason: "a link".into(),
            },
            Error::Corrupt {
                path: "/p/s.json".into(),
                detail: "bad JSON".into(),
            },
            Error::Storage {
                op: "write",
                path: "/p/s.json".into(),
                reason: "No space left on device".into(),
            },
            Error::Busy {
                lock_file: "/p/.bmad-task/.lock".into(),
                holder: Some(7),
                waited: std::time::Duration::from_secs(10),
            },
            Error::SpecsFolderTaken {
                folder: "f".into(),
                owner: "o".into(),
                session_id: "s".into(),
            },
            Error::SessionConflicted {
                path: "p".into(),
                versions: "v".into(),
                keep: "k".into(),
            },
            Error::InvalidConfig {
                path: ".bmad/config.toml".into(),
                problem: "bad".into(),
            },
            Error::HumanRequired {
                action: "confirm".into(),
                policy: "`gates = \"auto\"` with Gemini CLI, which cannot ask the human in a dialog, so the gate waits for the human's terminal or dashboard".into(),
                commands: "`bmad-mcp confirm t`".into(),
                dashboard: Some("http://127.0.0.1:1/t".into()),
            },
            Error::InvalidPrompt {
                path: ".bmad/prompts/po.md".into(),
                problem: "is empty".into(),
            },
            Error::ChecksFailed {
                failure: "`test` failed".into(),
                command: "bmad-mcp confirm t".into(),
                dashboard: None,
            },
            Error::Internal {
                failed: "judge it".into(),
                yours: "your call",
                cause: "boom".into(),
                record: "Its record: r.".into(),
            },
        ]
    }

    /// Builds only while every variant has a sample above: no wildcard.
    fn error_covered(e: &Error) {
        match e {
            Error::Workflow(_)
            | Error::Argument { .. }
            | Error::TooLarge { .. }
            | Error::SessionNotFound { .. }
            | Error::InvalidProject { .. }
            | Error::ForbiddenProject { .. }
            | Error::UnsafePath { .. }
            | Error::Corrupt { .. }
            | Error::Storage { .. }
            | Error::Busy { .. }
            | Error::ConflictingIds { .. }
            | Error::SpecsFolderTaken { .. }
            | Error::SessionConflicted { .. }
            | Error::InvalidConfig { .. }
            | Error::HumanRequired { .. }
            | Error::InvalidPrompt { .. }
            | Error::ChecksFailed { .. }
            | Error::Internal { .. } => {}
        }
    }

    /// Every refusal of the machine's, one sample each (no wildcard, as above).
    fn every_workflow_error() -> Vec<WorkflowError> {
        let mut all = refusals_of_the_call();
        all.extend(refusals_of_the_document());
        all.iter().for_each(workflow_covered);
        all
    }

    /// The machine's refusals of the call itself.
    fn refusals_of_the_call() -> Vec<WorkflowError> {
        vec![
            WorkflowError::IllegalAction {
                action: Action::Confirm,
                state: State::Generating,
                stage: Stage::Po,
                allowed: vec![Action::Submit, Action::Status],
            },
            WorkflowError::StoriesOpen {
                open: "sprint 1".into(),
            },
            WorkflowError::StageMismatch {
                given: Stage::Dev,
                current: Stage::Po,
            },
            WorkflowError::MissingResult {
                stage: Stage::Po,
                fields: vec!["claude_result"],
            },
            WorkflowError::EmptyDocument {
                field: "claude_result",
            },
            WorkflowError::NoDocumentField {
                field: "claude_result",
                stage: Stage::Po,
                accepted: vec!["prd".into()],
                seen: vec!["x".into()],
            },
            WorkflowError::DocumentFile {
                problem: "is a link".into(),
            },
            WorkflowError::UnknownQuestions {
                unknown: vec!["q9".into()],
                known: vec!["q1".into()],
            },
            WorkflowError::NoAnswers {
                known: vec!["q1".into()],
            },
            WorkflowError::EmptyAnswer { id: "q1".into() },
        ]
    }

    /// The machine's refusals of the document submitted or decided on.
    fn refusals_of_the_document() -> Vec<WorkflowError> {
        vec![
            WorkflowError::DocumentUnavailable {
                path: "d.md".into(),
            },
            WorkflowError::StaleDecision {
                path: "d.md".into(),
                given: "ab".into(),
                current: "cd".repeat(32),
            },
            WorkflowError::FeedbackRequired,
            WorkflowError::SubmissionTooLarge {
                field: "claude_result",
                problem: "too long".into(),
            },
            WorkflowError::DocumentUnreadable {
                path: "d.md".into(),
                reason: "is empty".into(),
                todo: "Put it back.",
            },
            WorkflowError::ContradictoryVerdict {
                field: "claude_result",
                json: "Pass".into(),
                stated: "Fail".into(),
            },
            WorkflowError::InvalidScope {
                problem: "sprint 9".into(),
                sprints: "1, 2".into(),
            },
            WorkflowError::NothingChanged {
                commit: "abc".into(),
                uncommitted: 0,
            },
            WorkflowError::LayersUnreported {
                field: "claude_result",
                lacking: "Edge Cases".into(),
            },
        ]
    }

    /// Builds only while every variant has a sample above: no wildcard.
    fn workflow_covered(e: &WorkflowError) {
        match e {
            WorkflowError::IllegalAction { .. }
            | WorkflowError::StoriesOpen { .. }
            | WorkflowError::StageMismatch { .. }
            | WorkflowError::MissingResult { .. }
            | WorkflowError::EmptyDocument { .. }
            | WorkflowError::NoDocumentField { .. }
            | WorkflowError::DocumentFile { .. }
            | WorkflowError::UnknownQuestions { .. }
            | WorkflowError::NoAnswers { .. }
            | WorkflowError::EmptyAnswer { .. }
            | WorkflowError::DocumentUnavailable { .. }
            | WorkflowError::StaleDecision { .. }
            | WorkflowError::FeedbackRequired
            | WorkflowError::SubmissionTooLarge { .. }
            | WorkflowError::DocumentUnreadable { .. }
            | WorkflowError::ContradictoryVerdict { .. }
            | WorkflowError::InvalidScope { .. }
            | WorkflowError::NothingChanged { .. }
            | WorkflowError::LayersUnreported { .. } => {}
        }
    }

    #[test]
    fn no_error_reply_tells_the_person_what_the_model_is_to_do() {
        let s = session(Track::Full, Stage::Po, State::AwaitingConfirmation);
        for e in every_error() {
            for on in [None, Some(&s)] {
                let r = for_error(&e, on);
                person(&r, &format!("{e:?}"));
                assert!(r.user_message.starts_with("Error ("), "{}", r.user_message);
            }
        }
    }

    /// Every state of every track, after each action that leaves a session there, with and
    /// without the dialog, under a policy that keeps the decision for the human.
    #[test]
    fn no_reply_about_a_session_tells_the_person_what_the_model_is_to_do() {
        for track in Track::ALL {
            for stage in track.stages().iter().copied() {
                for state in State::ALL {
                    let s = session(track, stage, state);
                    let prompt = crate::prompts::Template::built_in(stage);
                    let facts = Facts {
                        notices: vec!["The human decided this through the dialog.".into()],
                        ..Facts::default()
                    };
                    for action in Action::ALL {
                        let mut r = for_session(&s, &facts, action, Some(&prompt));
                        r.human_gates = Some("`gates = \"human\"`".into());
                        let what = format!("{track} {stage} {state} after {action}");
                        person(&r, &what);
                        for dialog in [false, true] {
                            let mut r = r.clone();
                            human_channel(&mut r, dialog);
                            name_notices(&mut r);
                            person(&r, &format!("{what}, dialog {dialog}"));
                        }
                    }
                    person(&for_status(&s, Some(&prompt)), "status");
                    person(&for_start(&s, Vec::new(), false, Some(&prompt)), "start");
                }
            }
        }
    }

    #[test]
    fn no_reply_to_a_dialog_left_undecided_tells_the_person_what_the_model_is_to_do() {
        let unseen = crate::hosts::Unseen {
            when: "in `claude -p` (its print mode)",
            shown: "run `claude` interactively, without `-p`",
        };
        for asked in [Asked::Answer, Asked::Confirm, Asked::Approve] {
            let s = session(Track::Full, Stage::Sm, State::AwaitingApproval);
            let p = Pending {
                asked,
                stage: Stage::Sm,
                task_name: "todo-app".into(),
                session_id: s.session_id.clone(),
                document: Some(Shown {
                    path: "d.md".into(),
                    sha256: "ab".repeat(32),
                    size: 1,
                }),
                score: None,
                gate: None,
                sprints: vec![],
                questions: vec![],
                assumed: vec![],
                notices: vec![],
                failed_verdict: None,
            };
            // No wildcard: a new way to leave the dialog undecided needs its case here.
            for how in [
                Undecided::Declined,
                Undecided::ClosedUnseen(None),
                Undecided::ClosedUnseen(Some(("Claude Code", unseen))),
                Undecided::Cancelled,
                Undecided::Unusable("The human left every question empty.".into()),
                Undecided::Failed("the client could not show it".into()),
                Undecided::KeptChanging,
                Undecided::Stopping,
            ] {
                match &how {
                    Undecided::Declined
                    | Undecided::ClosedUnseen(_)
                    | Undecided::Cancelled
                    | Undecided::Unusable(_)
                    | Undecided::Failed(_)
                    | Undecided::KeptChanging
                    | Undecided::Stopping => {}
                }
                let r = for_undecided(&s, &p, how.clone());
                person(&r, &format!("{how:?}"));
                assert!(
                    r.user_message.contains("bmad-mcp dashboard"),
                    "{how:?}: {}",
                    r.user_message
                );
            }
        }
    }

    #[test]
    fn the_words_are_found_whatever_their_case() {
        assert_eq!(
            instructs_the_model("Show the human user_message."),
            Some("user_message")
        );
        assert_eq!(
            instructs_the_model("Do not call `confirm` again."),
            Some("do not call")
        );
        assert_eq!(instructs_the_model("Please review it, then decide."), None);
    }
}
