//! What the page shows of a task's traceability matrix (docs/traceability.md): one row per
//! id the PRD defines (its text, the components that design it, the sprints that plan it and
//! whether the approved scope keeps them, whether the developer's report built it, the
//! closing result and its evidence), each with the gaps it has, as the closing gate reads
//! them. Read from the session as it is; nothing is decided here.

use serde_json::{json, Value};

use crate::workflow::trace::{Matrix, Outcome, Row};
use crate::workflow::Session;

/// The matrix of `s`, or `None` when its PRD gives no ids.
pub fn view(s: &Session) -> Option<Value> {
    let m = Matrix::of(s)?;
    let rows: Vec<Value> = m.rows.iter().map(|r| row(&m, r)).collect();
    let unknown: Vec<String> = m
        .unknown
        .iter()
        .map(|(stage, id)| format!("{id} ({stage})"))
        .collect();
    Some(json!({
        "rows": rows,
        "designed_any": m.designed_any,
        "planned_any": m.planned_any,
        "approved": m.approved,
        "verified": m.verified,
        "unknown": unknown,
        "intent": m.intent.map(|i| i.verdict_text()),
    }))
}

fn row(m: &Matrix, r: &Row) -> Value {
    json!({
        "id": r.req.id,
        "text": r.req.text,
        "criterion": r.is_criterion(),
        "design": r.design,
        "plan": r.plan,
        "sprints": r.sprints,
        "in_scope": r.in_scope,
        "built": r.built,
        "result": r.result.map(|t| t.outcome.word()),
        "evidence": r.result.map(|t| t.evidence.as_str()),
        "accepted": r.accepted,
        "passes": r.passes(),
        "gaps": gaps(m, r),
    })
}

/// What the row lacks, in the words of the matrix's own lists (unplanned, left out,
/// undesigned, without a pass); an acceptance criterion is verified, not designed or
/// planned itself.
fn gaps(m: &Matrix, r: &Row) -> Vec<String> {
    let mut out = Vec::new();
    let requirement = !r.is_criterion();
    if requirement && m.designed_any && r.design.is_empty() {
        out.push("no component designs it".to_string());
    }
    if requirement && m.planned_any && r.sprints.is_empty() {
        out.push("no sprint plans it".to_string());
    }
    if requirement && !r.sprints.is_empty() && r.in_scope == Some(false) {
        out.push("left out of the approved scope".to_string());
    }
    if m.verified && r.in_scope != Some(false) && !r.passes() {
        let why = match r.result {
            None => "no result".to_string(),
            Some(t) if t.outcome == Outcome::Pass => "a pass without evidence".to_string(),
            Some(t) => t.outcome.word().to_string(),
        };
        out.push(if r.accepted {
            format!("{why} (risk accepted)")
        } else {
            why
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::trace::documents;
    use crate::workflow::Stage;

    #[test]
    fn once_verified_a_row_without_a_pass_says_why_and_an_accepted_risk_says_so() {
        let mut s = Session::test()
            .id("id")
            .task("todo")
            .objective("Build a todo app")
            .build();
        s.record_mut(Stage::Po).trace.defined = documents::prd(
            "## Functional Requirements\n- FR-1: add\n- FR-2: share\n- FR-3: export\n",
        )
        .0;
        let qa = s.record_mut(Stage::Qa);
        qa.iteration = 1;
        qa.trace.results = documents::results("| FR-1 | pass | t1 |\n| FR-2 | fail | t2 |\n");
        qa.trace.accepted = vec![crate::workflow::trace::Open {
            id: "FR-3".into(),
            why: "no result".into(),
        }];
        let v = view(&s).unwrap();
        let rows = v["rows"].as_array().unwrap();
        let gaps: Vec<&Value> = rows.iter().map(|r| &r["gaps"]).collect();
        assert_eq!(
            gaps,
            [
                &json!([]),
                &json!(["fail"]),
                &json!(["no result (risk accepted)"])
            ]
        );
        assert_eq!(rows[0]["evidence"], "t1");
        assert_eq!(rows[1]["result"], "fail");
        assert_eq!(v["verified"], true);
        assert!(view(&Session::test().id("id").task("todo").objective("x").build()).is_none());
    }
}
