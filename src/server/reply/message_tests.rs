//! One test per state the reply can describe, on sessions built by hand.

use chrono::Utc;

use super::*;
use crate::server::reply::built::completed;
use crate::workflow::session::{Artifact, ContentRef, Question, ScoreSource, Sprint};
use crate::workflow::DecidedBy;

/// The state's message and fields, with the built-in role prompts.
fn generate_built_in(s: &Session, facts: &Facts, action: Action, r: &mut Reply) -> String {
    generate(
        s,
        facts,
        (action, Repeat::after(action)),
        Some(&Template::built_in(s.current_stage)),
        r,
    )
}

fn session(stage: Stage, state: State) -> Session {
    let mut s = Session::new(
        "6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f".into(),
        "todo-app".into(),
        "/p".into(),
        "Build a todo app".into(),
        vec![Engine::Claude],
        Utc::now(),
    );
    s.current_stage = stage;
    s.current_state = state;
    s
}

fn artifact(s: &mut Session, stage: Stage, size: u64) -> String {
    let path = s.artifact_path(stage);
    s.record_mut(stage).artifact = Some(Artifact {
        path: path.clone(),
        sha256: "0".repeat(64),
        size,
    });
    path
}

#[test]
fn a_completed_stage_is_named_with_its_saved_document() {
    let mut s = session(Stage::Architect, State::Generating);
    assert_eq!(completed_stage(&s, None), "");
    let path = artifact(&mut s, Stage::Po, 1234);
    assert_eq!(
        completed_stage(&s, Some(Stage::Po)),
        format!("Product Owner stage complete: {path} saved (1234 bytes). ")
    );
}

#[test]
fn generating_hands_over_the_role_prompt_and_context() {
    let s = session(Stage::Po, State::Generating);
    let mut r = Reply::default();
    let msg = generate_built_in(&s, &Facts::default(), Action::Start, &mut r);
    assert_eq!(msg, "The Product Owner writes the document (po).");
    assert!(r.role_prompt.unwrap().contains("Build a todo app"));
    assert_eq!(r.context.unwrap().specs_dir, ".claude/specs/todo-app");
    assert_eq!(r.sprints, None);
}

#[test]
fn refining_says_why_the_document_came_back() {
    let mut s = session(Stage::Po, State::Refining);
    s.record_mut(Stage::Po).score = Some(72);
    s.record_mut(Stage::Po).score_source = Some(ScoreSource::Estimated);
    let facts = Facts {
        guidance: vec!["Add a \"User Stories\" section.".into()],
        ..Facts::default()
    };
    let cases = [
        (
            Action::Submit,
            "The document scored 72/100 (estimated by the server: no score was stated), below the gate of 90. ",
        ),
        (Action::Answer, "Answers recorded. "),
        (Action::Reject, "Sent back for revision. "),
        (Action::Approve, "Sent back for revision. "),
    ];
    for (action, opening) in cases {
        let mut r = Reply::default();
        let msg = generate_built_in(&s, &facts, action, &mut r);
        assert!(msg.starts_with(opening), "{action}: {msg}");
        assert!(
            msg.ends_with("The Product Owner revises the document (po)."),
            "{msg}"
        );
        assert_eq!(r.guidance.as_deref(), Some(&facts.guidance[..]));
    }
}

#[test]
fn development_starts_with_the_approved_scope_and_sprints() {
    let mut s = session(Stage::Dev, State::Generating);
    let plan = s.record_mut(Stage::Sm);
    plan.scope = Some("sprint 1".into());
    plan.sprints = vec![Sprint {
        number: 1,
        title: "Core".into(),
    }];
    let mut r = Reply::default();
    let msg = generate_built_in(&s, &Facts::default(), Action::Approve, &mut r);
    assert!(
        msg.starts_with("Sprint plan approved; scope to build: sprint 1. The Developer writes"),
        "{msg}"
    );
    assert_eq!(r.sprints.unwrap()[0].title, "Core");
    assert_eq!(r.context.unwrap().scope.as_deref(), Some("sprint 1"));
}

#[test]
fn clarifying_lists_only_the_open_questions() {
    let mut s = session(Stage::Po, State::Clarifying);
    let rec = s.record_mut(Stage::Po);
    rec.score = Some(70);
    rec.score_source = Some(ScoreSource::Reported);
    rec.gaps = vec!["platforms".into()];
    for (i, q) in ["Which platforms?", "Which users?"].iter().enumerate() {
        rec.questions.push(Question {
            id: format!("q{}", i + 1),
            question: q.to_string(),
            context: None,
            round: 1,
        });
    }
    rec.answers.insert("q1".into(), "Web".into());
    let mut r = Reply::default();
    let msg = clarifying(&s, &mut r);
    assert_eq!(
        msg,
        "The Product Owner draft scored 70/100 (reported by the author). Please answer these questions:\n- q2: Which users?\nAnswer each by its id; the next draft assumes what is left open."
    );
    assert_eq!(r.questions.unwrap().len(), 1);
    assert_eq!(r.gaps.unwrap(), ["platforms"]);
}

#[test]
fn awaiting_confirmation_points_at_the_document_to_read() {
    let mut s = session(Stage::Po, State::AwaitingConfirmation);
    let path = artifact(&mut s, Stage::Po, 10);
    let rec = s.record_mut(Stage::Po);
    rec.score = Some(93);
    rec.gate_passed = Some(true);
    let mut r = Reply::default();
    let msg = awaiting_confirmation(&s, &Facts::default(), &mut r);
    assert!(
        msg.contains("scored 93/100 and passed the quality gate"),
        "{msg}"
    );
    assert!(msg.contains(&path));
    assert_eq!(r.artifact_path.as_deref(), Some(path.as_str()));

    // Below the gate after the round cap: the draft is what the human reads.
    let mut s = session(Stage::Architect, State::AwaitingConfirmation);
    let rec = s.record_mut(Stage::Architect);
    rec.score = Some(80);
    rec.gate_passed = Some(false);
    rec.iteration = 7;
    rec.below_gate = 5;
    rec.draft_ref = Some(ContentRef::new(
        ".bmad-task/temp/x/d.md".into(),
        "d",
        Utc::now(),
    ));
    let mut r = Reply::default();
    let msg = awaiting_confirmation(&s, &Facts::default(), &mut r);
    assert!(
        msg.contains("still below the gate after 5 submissions, at 80/100. "),
        "{msg}"
    );
    assert_eq!(r.artifact_path.as_deref(), Some(".bmad-task/temp/x/d.md"));
    // A score at the gate that the server's check disagrees with: the sections named.
    let rec = s.record_mut(Stage::Architect);
    rec.score = Some(95);
    rec.missing_sections = vec!["Security".into()];
    rec.empty_sections = vec!["Data Model".into()];
    let msg = awaiting_confirmation(&s, &Facts::default(), &mut r);
    assert!(
        msg.contains("at 95/100 (missing sections: Security; empty sections: Data Model)"),
        "{msg}"
    );
}

#[test]
fn a_score_the_check_disagrees_with_is_sent_back_naming_the_sections() {
    let mut s = session(Stage::Po, State::Refining);
    let rec = s.record_mut(Stage::Po);
    rec.score = Some(95);
    rec.score_source = Some(ScoreSource::Reported);
    rec.gate_passed = Some(false);
    rec.missing_sections = vec!["Business Goals".into(), "User Stories".into()];
    let mut r = Reply::default();
    let msg = generate_built_in(&s, &Facts::default(), Action::Submit, &mut r);
    assert!(
        msg.starts_with("The document reports 95/100, but the server's own check of it disagrees (missing sections: Business Goals, User Stories): a score alone does not pass the gate of 90. "),
        "{msg}"
    );
    // Below the gate as well: the score, then what is lacking.
    s.record_mut(Stage::Po).score = Some(70);
    let msg = generate_built_in(&s, &Facts::default(), Action::Submit, &mut r);
    assert!(
        msg.starts_with("The document scored 70/100 (reported by the author), below the gate of 90; missing sections: Business Goals, User Stories. "),
        "{msg}"
    );
}

#[test]
fn awaiting_approval_lists_the_sprints_or_says_none_were_found() {
    let mut s = session(Stage::Sm, State::AwaitingApproval);
    let path = artifact(&mut s, Stage::Sm, 10);
    let mut r = Reply::default();
    let msg = awaiting_approval(&s, &mut r);
    assert!(
        msg.starts_with(&format!(
            "The sprint plan is saved at {path} (no `## Sprint N: Title` headings were found). "
        )),
        "{msg}"
    );
    s.record_mut(Stage::Sm).sprints = vec![
        Sprint {
            number: 1,
            title: "Core".into(),
        },
        Sprint {
            number: 2,
            title: "UI".into(),
        },
    ];
    let msg = awaiting_approval(&s, &mut r);
    assert!(
        msg.contains(" with 2 sprints:\n- Sprint 1: Core\n- Sprint 2: UI\nPlease approve it"),
        "{msg}"
    );
    assert_eq!(r.sprints.unwrap().len(), 2);
}

#[test]
fn completion_names_the_sprints_built_and_those_left_out() {
    let mut s = session(Stage::Qa, State::Completed);
    let plan = s.record_mut(Stage::Sm);
    plan.sprints = (1..=3)
        .map(|n| Sprint {
            number: n,
            title: format!("Part {n}"),
        })
        .collect();
    plan.scope_sprints = Some(vec![1, 2, 3]);
    assert!(completed(&s).contains(
        " Sprints built: all 3 of the plan: 1 (Part 1), 2 (Part 2), 3 (Part 3). Intent: not stated. Trace: the PRD gives its requirements no ids. Documents:"
    ));
    s.record_mut(Stage::Sm).scope_sprints = Some(vec![1]);
    assert!(completed(&s).contains(" Sprints built: 1 (Part 1). Left out of scope: 2 (Part 2), 3 (Part 3); to build them later, start a new BMAD task whose objective names them and the plan, e.g. “Build sprints 2, 3 of the plan in .claude/specs/todo-app/03-sprint-plan.md”. Intent: not stated. Trace: the PRD gives its requirements no ids. Documents:"), "{}", completed(&s));
}

#[test]
fn a_parent_built_as_stories_states_their_reviews() {
    let mut s = session(Stage::Qa, State::Completed);
    let story = |sprint: u32, review: Option<&str>| crate::workflow::story::StoryState {
        sprint,
        session_id: format!("story-{sprint}"),
        task_name: format!("todo-app-sprint-{sprint}"),
        owner: "Ben".into(),
        branch: None,
        worktree: "/wt".into(),
        stage: Stage::Qa,
        state: State::Completed,
        updated_at: "2026-11-27T12:00:00.000Z".into(),
        review_status: review.map(str::to_string),
        gone: false,
    };
    s.stories = vec![story(1, Some("Pass")), story(2, Some("Pass"))];
    let msg = completed(&s);
    assert!(
        msg.contains("Review status: Pass, in each story's review (sprints 1, 2). QA score"),
        "{msg}"
    );
    s.stories = vec![story(1, Some("Pass")), story(2, None)];
    let msg = completed(&s);
    assert!(
        msg.contains("Review status: by story: sprint 1 Pass; sprint 2 not stated. QA score"),
        "{msg}"
    );
    // The parent's own review, when it ran one, is what it states.
    s.record_mut(Stage::Review).review_status = Some("Pass with risks".into());
    assert!(completed(&s).contains("Review status: Pass with risks. QA score"));
}

#[test]
fn completion_lists_the_documents() {
    let mut s = session(Stage::Qa, State::Completed);
    s.artifacts = vec!["a.md".into(), "b.md".into()];
    assert_eq!(
        completed(&s),
        "The workflow is complete. Review status: not stated. QA score: not stated. Built: the whole plan (.claude/specs/todo-app/03-sprint-plan.md names no sprints). Intent: not stated. Trace: the PRD gives its requirements no ids. Documents:\n- a.md\n- b.md"
    );
    // Under the task's folder, by name.
    let dir = s.specs_dir();
    s.artifacts = vec![
        format!("{dir}/01-product-requirements.md"),
        format!("{dir}/05-qa-report.md"),
    ];
    assert!(
        completed(&s).ends_with(&format!(
            "Documents, in {dir}/:\n- 01-product-requirements.md\n- 05-qa-report.md"
        )),
        "{}",
        completed(&s)
    );
    s.record_mut(Stage::Review).review_status = Some("Pass with Risk".into());
    s.record_mut(Stage::Qa).score = Some(91);
    assert!(completed(&s)
        .starts_with("The workflow is complete. Review status: Pass with Risk. QA score: 91/100."));
}

/// `status` of a completed task lists the documents in `session`; the person is told the
/// folder they are in, not a field of the reply.
#[test]
fn status_of_a_completed_task_names_the_documents_folder() {
    let mut s = session(Stage::Qa, State::Completed);
    let dir = s.specs_dir();
    s.artifacts = vec![format!("{dir}/01-product-requirements.md")];
    let r = crate::server::reply::for_status(&s, None);
    assert!(
        !r.user_message.contains("session.artifacts"),
        "{}",
        r.user_message
    );
    assert!(
        r.user_message.ends_with(&format!("Documents: in {dir}/.")),
        "{}",
        r.user_message
    );
}

#[test]
fn every_state_has_one_instruction_and_those_waiting_for_the_human_say_stop() {
    for state in State::ALL {
        let s = session(Stage::Po, state);
        let step = next_step(&s);
        let waits = matches!(
            state,
            State::Clarifying | State::AwaitingConfirmation | State::AwaitingApproval
        );
        assert_eq!(
            step.starts_with("Show `user_message` to the human and stop."),
            waits,
            "{state}: {step}"
        );
        if waits {
            assert!(step.contains("never"), "{state}: {step}");
        }
        // Never two contradicting orders: regenerating is said only where it is the task.
        assert_eq!(
            step.contains("`submit`"),
            matches!(state, State::Generating | State::Refining),
            "{state}: {step}"
        );
    }
}

#[test]
fn a_failing_report_asks_the_human_to_accept_the_risk_or_send_the_work_back() {
    let mut s = session(Stage::Review, State::AwaitingConfirmation);
    let path = artifact(&mut s, Stage::Review, 10);
    s.record_mut(Stage::Review).review_status = Some("Fail".into());
    let mut r = Reply::default();
    let msg = awaiting_confirmation(&s, &Facts::default(), &mut r);
    assert_eq!(
        msg,
        format!("The Code Reviewer's report does not pass: Review Status: Fail. Please read {path} (SHA-256 000000000000…), then decide: accept the risk and go on to the QA Engineer (qa), or send the work back to the Developer (dev) with these findings and your feedback.")
    );
    assert_eq!(r.artifact_path.as_deref(), Some(path.as_str()));
    assert_eq!(r.document_digest.as_deref(), Some("000000000000"));
    assert_eq!(r.review_status.as_deref(), Some("Fail"));
    // Where a dialog asks the human, the host does not call the failing work ready.
    let dialog = dialog_next_step(s.current_state, r.failing).unwrap();
    assert!(dialog.contains("does not pass"), "{dialog}");
    assert!(!dialog.contains("ready for review"), "{dialog}");
    let step = next_step(&s);
    assert_eq!(
        step,
        "Show `user_message` to the human and stop. The human decides: accept the risk (`confirm`), or send the work back to `dev` (`reject` with `feedback` in their words); never decide for them."
    );

    let mut s = session(Stage::Qa, State::AwaitingConfirmation);
    artifact(&mut s, Stage::Qa, 10);
    s.record_mut(Stage::Qa).score = Some(70);
    let msg = awaiting_confirmation(&s, &Facts::default(), &mut r);
    assert!(
        msg.starts_with(
            "The QA Engineer's report does not pass: Quality Score: 70/100, below the gate of 90."
        ) && msg.contains("accept the risk and complete the workflow"),
        "{msg}"
    );
    assert_eq!(r.score, Some(70));
    // Every reply that asks the human about it says the score and the gate's outcome,
    // a decision's (left open in a dialog) as a submission's.
    s.record_mut(Stage::Qa).gate_passed = Some(false);
    for action in [
        Action::Submit,
        Action::Confirm,
        Action::Reject,
        Action::Status,
    ] {
        let r = crate::server::reply::for_session(&s, &Facts::default(), action, None);
        assert_eq!(
            (r.score, r.gate_passed),
            (Some(70), Some(false)),
            "{action:?}"
        );
    }
}

#[test]
fn completion_states_the_risks_the_human_accepted() {
    let mut s = session(Stage::Qa, State::Completed);
    let review = s.record_mut(Stage::Review);
    review.review_status = Some("Fail".into());
    review.accepted_risk = true;
    let qa = s.record_mut(Stage::Qa);
    qa.score = Some(70);
    qa.accepted_risk = true;
    // Who accepted each risk is read from the decision in the history.
    assert!(
        completed(&s).starts_with("The workflow is complete. Review status: Fail (risk accepted). QA score: 70/100 (below the gate of 90, risk accepted)."),
        "{}",
        completed(&s)
    );
    for (stage, by) in [
        (Stage::Review, DecidedBy::Human),
        (Stage::Qa, DecidedBy::Host),
    ] {
        s.history.push(crate::workflow::session::HistoryEntry {
            at: "2026-11-21T12:00:00.000Z".into(),
            action: Action::Confirm,
            stage,
            from: Some(State::AwaitingConfirmation),
            to: State::Generating,
            decided_by: Some(by),
            via: Some(crate::workflow::Via::Tool),
            decider: None,
            digest: None,
            provenance: None,
            note: None,
            feedback: None,
            lessons: Vec::new(),
            taught: Vec::new(),
        });
    }
    assert!(
        completed(&s).starts_with("The workflow is complete. Review status: Fail (risk accepted by the human). QA score: 70/100 (below the gate of 90, risk accepted, as the host asserted)."),
        "{}",
        completed(&s)
    );
}

/// The fix track's developer may submit without the failing test its track asks for: a
/// risk the human accepted there is in the final message too.
#[test]
fn completion_states_a_risk_accepted_at_dev_on_the_fix_track() {
    let mut s = session(Stage::Review, State::Completed);
    s.track = crate::workflow::Track::Fix;
    s.record_mut(Stage::Review).review_status = Some("Pass".into());
    let dev = s.record_mut(Stage::Dev);
    dev.missing_sections = vec!["Failing Test".into()];
    dev.accepted_risk = true;
    let msg = completed(&s);
    assert!(
        msg.contains(" At the Developer (dev): the report has no `Failing Test` section (this track writes a test that fails before the fix, and shows it failing) (risk accepted)."),
        "{msg}"
    );
    s.record_mut(Stage::Dev).accepted_risk = false;
    assert!(!completed(&s).contains("At the Developer"));
}

#[test]
fn the_generate_step_says_what_a_codex_result_is_and_what_to_do_without_one() {
    let mut s = session(Stage::Po, State::Generating);
    let alone = next_step(&s);
    assert!(alone.contains("`claude_result`"), "{alone}");
    assert!(
        !alone.contains("codex"),
        "a host of one model never hears of codex: {alone}"
    );

    s.engines = vec![Engine::Claude, Engine::Codex];
    let both = next_step(&s);
    for says in [
        "`codex_result` in the same call",
        "second, independent model",
        "Codex MCP server",
        "Without a second model, submit `claude_result` alone",
        "never write `codex_result` yourself",
    ] {
        assert!(both.contains(says), "{says}: {both}");
    }
    // A stage the table gives to codex: the second model does it, or the host does.
    s.current_stage = Stage::Dev;
    let dev = next_step(&s);
    assert!(dev.starts_with("Have a second, independent model"), "{dev}");
    assert!(
        dev.contains("do it yourself and submit it as `claude_result`"),
        "{dev}"
    );
    // The sprint plan is the host's model's alone, even with a second model.
    s.current_stage = Stage::Sm;
    assert!(!next_step(&s).contains("codex"));
}

#[test]
fn a_notice_that_user_message_says_is_not_listed_again_nor_relayed() {
    let mut r = Reply {
        user_message: "The human decided in the terminal: confirm at the po stage.\nThe System Architect writes the document (architect).".into(),
        next_step: Some("Do as `role_prompt` says.".into()),
        notices: Some(vec![
            "The human decided in the terminal: confirm at the po stage.".into(),
        ]),
        ..Reply::default()
    };
    crate::server::reply::name_notices(&mut r);
    assert_eq!(r.notices, None);
    assert_eq!(r.next_step.as_deref(), Some("Do as `role_prompt` says."));
    // A notice with something new stays, and the model is asked to relay it.
    r.notices = Some(vec![
        "The human decided in the terminal: confirm at the po stage.".into(),
        "The confirmed PRD defines 3 ids.".into(),
    ]);
    crate::server::reply::name_notices(&mut r);
    assert_eq!(
        r.notices,
        Some(vec!["The confirmed PRD defines 3 ids.".to_string()])
    );
    assert!(
        r.next_step
            .as_deref()
            .unwrap()
            .ends_with("Also tell the human what `notices` says: it is for them."),
        "{r:?}"
    );
    // One the model knows (its own dialog's) is listed but not relayed.
    let mut r = Reply {
        user_message: "Answers recorded.".into(),
        next_step: Some("Go on.".into()),
        notices: Some(vec!["The human decided this through the dialog.".into()]),
        ..Reply::default()
    };
    r.known.notices = r.notices.clone().unwrap();
    crate::server::reply::name_notices(&mut r);
    assert_eq!(r.next_step.as_deref(), Some("Go on."));
}

/// The notice of the checks' outcome says what `checks` shows: alone, it is not relayed.
#[test]
fn a_notice_that_repeats_the_checks_is_not_relayed() {
    let ran = format!(
        "{}`test` failed (exit 1).",
        crate::workflow::machine::CHECKS_RAN
    );
    let mut r = Reply {
        user_message: "The Developer's work does not pass.".into(),
        next_step: Some("Show `user_message` to the human and stop.".into()),
        notices: Some(vec![ran.clone()]),
        checks: Some(crate::workflow::evidence::CheckRun {
            at: "2026-11-27T12:23:00Z".into(),
            config_sha256: "0".repeat(64),
            git: None,
            checks: Vec::new(),
        }),
        ..Reply::default()
    };
    crate::server::reply::name_notices(&mut r);
    assert_eq!(r.notices, Some(vec![ran]), "still listed");
    assert_eq!(
        r.next_step.as_deref(),
        Some("Show `user_message` to the human and stop.")
    );
    r.notices
        .as_mut()
        .unwrap()
        .push("Recorded a lesson.".into());
    crate::server::reply::name_notices(&mut r);
    assert!(r.next_step.unwrap().contains("what `notices` says"));
}
