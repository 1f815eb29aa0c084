//! The matrix (requirement → architecture → sprint → closing result), built from what each
//! stage's record holds of its document's ids, and the compact summary every view shows.

use super::summary::Summary;
use super::{at_most, few, ids, Intent, Open, Outcome, Requirement, TestResult, Traced};
use crate::workflow::session::Session;
use crate::workflow::stage::Stage;

/// What a stage's document does with the ids, asked of the stage table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The PRD defines them.
    Defines,
    /// The architecture maps its components to them.
    Designs,
    /// The sprint plan names them per sprint.
    Plans,
    /// The developer's report names what it implemented.
    Implements,
    /// The report that closes the track gives a result per id and the intent verdict.
    Verifies,
    /// Nothing (the review, in the full track).
    None,
}

pub fn part(stage: Stage) -> Part {
    if stage == Stage::FIRST {
        Part::Defines
    } else if stage == crate::workflow::Track::Full.last() {
        // QA; the last stage of a light track verifies too (`trace::part_in`).
        Part::Verifies
    } else if stage == Stage::approval() {
        Part::Plans
    } else if stage.builds_scope() {
        Part::Implements
    } else if stage > Stage::FIRST && stage < Stage::approval() {
        // Between the PRD and the plan (the architecture); the light tracks' first
        // documents (`spec`, `bug`) come before the PRD in the table and define nothing.
        Part::Designs
    } else {
        Part::None
    }
}

/// The stage whose record holds what `part`'s document says.
fn stage_of(want: Part) -> Option<Stage> {
    Stage::ALL.into_iter().find(|s| part(*s) == want)
}

/// One requirement's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    pub req: &'a Requirement,
    pub design: &'a [String],
    /// The headings of the plan that name it (a sprint's, or a story's within it).
    pub plan: &'a [String],
    /// The sprints that plan it (0, a mention outside any sprint, is left out).
    pub sprints: Vec<u32>,
    /// In the approved scope: `None` before the approval.
    pub in_scope: Option<bool>,
    pub built: bool,
    pub result: Option<&'a TestResult>,
    pub accepted: bool,
}

impl Row<'_> {
    /// An acceptance criterion, which is verified but not designed or planned itself.
    pub fn is_criterion(&self) -> bool {
        ids::prefix(&self.req.id) == "AC"
    }

    pub fn passes(&self) -> bool {
        self.result
            .is_some_and(|r| r.outcome == Outcome::Pass && !r.evidence.is_empty())
    }
}

/// The matrix of a session whose PRD defines ids.
#[derive(Debug, Clone)]
pub struct Matrix<'a> {
    pub rows: Vec<Row<'a>>,
    /// Ids a later document names that the PRD does not define, with the stage naming it.
    pub unknown: Vec<(Stage, String)>,
    /// Whether the architecture, the plan, the developer's report name any id.
    pub designed_any: bool,
    pub planned_any: bool,
    pub approved: bool,
    /// Whether the closing stage has a report.
    pub verified: bool,
    pub intent: Option<&'a Intent>,
}

static EMPTY: Vec<String> = Vec::new();

impl<'a> Matrix<'a> {
    /// The matrix of `s`, or `None` when its PRD defines no id.
    pub fn of(s: &'a Session) -> Option<Matrix<'a>> {
        let get = |p: Part| -> Option<&'a Traced> { stage_of(p).map(|st| &s.record(st).trace) };
        let defined = &get(Part::Defines)?.defined;
        if defined.is_empty() {
            return None;
        }
        let design = get(Part::Designs);
        let plan = get(Part::Plans);
        let built = get(Part::Implements);
        let closing = stage_of(Part::Verifies);
        let verify = closing.map(|st| s.record(st));
        let verified = verify.is_some_and(|r| r.iteration > 0);
        let approval = s.record(Stage::approval());
        let scope = approval.scope_sprints.as_ref();
        // Whether the plan names any id under a sprint (one named outside every sprint plans
        // nothing).
        let planned_any =
            plan.is_some_and(|p| p.sprints.values().any(|v| v.iter().any(|n| *n > 0)));
        let whole = approval.sprints.is_empty() || !planned_any;
        let mut rows: Vec<Row> = defined
            .iter()
            .map(|req| {
                let sprints: Vec<u32> = plan
                    .and_then(|p| p.sprints.get(&req.id))
                    .map(|v| v.iter().copied().filter(|n| *n > 0).collect())
                    .unwrap_or_default();
                let in_scope = scope.map(|sc| whole || sprints.iter().any(|n| sc.contains(n)));
                Row {
                    req,
                    design: design
                        .and_then(|d| d.covers.get(&req.id))
                        .map_or(&EMPTY[..], |v| &v[..]),
                    plan: plan
                        .and_then(|p| p.covers.get(&req.id))
                        .map_or(&EMPTY[..], |v| &v[..]),
                    sprints,
                    in_scope,
                    built: built.is_some_and(|b| b.covers.contains_key(&req.id)),
                    result: verify.and_then(|r| r.trace.results.get(&req.id)),
                    accepted: verify
                        .is_some_and(|r| r.trace.accepted.iter().any(|o| o.id == req.id)),
                }
            })
            .collect();
        if !whole {
            criteria_in_scope(&mut rows);
        }
        Some(Matrix {
            rows,
            unknown: unknown_ids(s, defined),
            designed_any: design.is_some_and(|d| !d.covers.is_empty()),
            planned_any,
            approved: scope.is_some(),
            verified,
            intent: verify.and_then(|r| r.trace.intent.as_ref()),
        })
    }

    fn requirements(&self) -> impl Iterator<Item = &Row<'a>> {
        self.rows.iter().filter(|r| !r.is_criterion())
    }

    /// Requirements no sprint plans (once the plan names ids).
    pub fn unplanned(&self) -> Vec<String> {
        if !self.planned_any {
            return Vec::new();
        }
        self.requirements()
            .filter(|r| r.sprints.is_empty())
            .map(|r| r.req.id.clone())
            .collect()
    }

    /// Planned requirements whose sprints the approved scope leaves out.
    pub fn left_out(&self) -> Vec<String> {
        self.requirements()
            .filter(|r| !r.sprints.is_empty() && r.in_scope == Some(false))
            .map(|r| r.req.id.clone())
            .collect()
    }

    /// Requirements no component names (once the architecture names ids).
    pub fn undesigned(&self) -> Vec<String> {
        if !self.designed_any {
            return Vec::new();
        }
        self.requirements()
            .filter(|r| r.design.is_empty())
            .map(|r| r.req.id.clone())
            .collect()
    }

    /// In-scope ids (requirements and criteria) without a passing result, and why.
    pub fn open(&self) -> Vec<Open> {
        self.rows
            .iter()
            .filter(|r| r.in_scope != Some(false) && !r.passes())
            .map(|r| Open {
                id: r.req.id.clone(),
                why: match r.result {
                    None => "no result".into(),
                    Some(t) if t.outcome == Outcome::Pass => "pass without evidence".into(),
                    Some(t) => t.outcome.word().into(),
                },
            })
            .collect()
    }

    /// The compact view: counts, and at most ten ids per list.
    pub fn summary(&self, path: Option<String>) -> Summary {
        let reqs: Vec<&Row> = self.requirements().collect();
        let cut = |v: Vec<String>| at_most(&v, 10);
        let without_pass = if self.verified {
            self.open()
                .into_iter()
                .filter(|o| !self.rows.iter().any(|r| r.req.id == o.id && r.accepted))
                .map(|o| format!("{} ({})", o.id, o.why))
                .collect()
        } else {
            Vec::new()
        };
        Summary {
            requirements: reqs.len(),
            criteria: self.rows.len() - reqs.len(),
            designed: reqs.iter().filter(|r| !r.design.is_empty()).count(),
            planned: reqs.iter().filter(|r| !r.sprints.is_empty()).count(),
            in_scope: self.approved.then(|| {
                self.rows
                    .iter()
                    .filter(|r| r.in_scope == Some(true))
                    .count()
            }),
            passing: self
                .verified
                .then(|| self.rows.iter().filter(|r| r.passes()).count()),
            unplanned: cut(self.unplanned()),
            left_out: cut(self.left_out()),
            undesigned: cut(self.undesigned()),
            without_pass: cut(without_pass),
            accepted_risk: cut(self
                .rows
                .iter()
                .filter(|r| r.accepted)
                .map(|r| r.req.id.clone())
                .collect()),
            unknown: cut(self
                .unknown
                .iter()
                .map(|(st, id)| format!("{id} ({st})"))
                .collect()),
            intent: self.intent.map(Intent::verdict_text),
            matrix: path,
        }
    }
}

/// The whole matrix as a Markdown document, one row per id.
pub fn markdown(m: &Matrix, summary: &Summary) -> String {
    let mut out = String::from("# Traceability matrix\n\n");
    out.push_str(&summary.line());
    out.push_str("\n\n| Id | Requirement | Architecture | Sprints | Planned under | Scope | Built | Result | Evidence |\n|---|---|---|---|---|---|---|---|---|\n");
    let cell = |s: &str| s.replace('|', "\\|");
    for r in &m.rows {
        let sprints: Vec<String> = r.sprints.iter().map(u32::to_string).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.req.id,
            cell(&r.req.text),
            cell(&few(r.design, 3)),
            few(&sprints, 5),
            cell(&few(r.plan, 3)),
            match r.in_scope {
                None => "-",
                Some(true) => "in",
                Some(false) => "out",
            },
            if r.built { "yes" } else { "-" },
            match (r.result, r.accepted) {
                (Some(t), true) => format!("{} (risk accepted)", t.outcome.word()),
                (None, true) => "none (risk accepted)".into(),
                (Some(t), false) => t.outcome.word().into(),
                (None, false) => "-".into(),
            },
            cell(r.result.map_or("", |t| t.evidence.as_str())),
        ));
    }
    out
}

/// A criterion without sprints of its own is in scope with the requirements it names
/// (with none named, it is in scope).
fn criteria_in_scope(rows: &mut [Row]) {
    let scope_of: Vec<(String, Option<bool>)> = rows
        .iter()
        .map(|r| (r.req.id.clone(), r.in_scope))
        .collect();
    for r in rows
        .iter_mut()
        .filter(|r| r.is_criterion() && r.sprints.is_empty() && r.in_scope.is_some())
    {
        let named: Vec<Option<bool>> = scope_of
            .iter()
            .filter(|(id, _)| r.req.refs.contains(id))
            .map(|(_, s)| *s)
            .collect();
        r.in_scope = Some(named.is_empty() || named.contains(&Some(true)));
    }
}

/// The ids a later document names that the PRD does not define, each once, with the first
/// stage naming it.
fn unknown_ids(s: &Session, defined: &[Requirement]) -> Vec<(Stage, String)> {
    let mut unknown = Vec::new();
    for st in Stage::ALL {
        let t = &s.record(st).trace;
        let named = t
            .covers
            .keys()
            .chain(t.sprints.keys())
            .chain(t.results.keys());
        for id in named {
            if !defined.iter().any(|r| &r.id == id) && !unknown.iter().any(|(_, u)| u == id) {
                unknown.push((st, id.clone()));
            }
        }
    }
    unknown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::session::Sprint;
    use crate::workflow::trace::documents;

    /// A session whose PRD, architecture and plan are `prd`, `arch` and `plan`, approved
    /// with `scope` (sprint numbers) when given.
    fn session(prd: &str, arch: &str, plan: &str, scope: Option<Vec<u32>>) -> Session {
        let mut s = Session::test()
            .id("id")
            .task("todo")
            .objective("Build a todo app")
            .build();
        s.record_mut(Stage::Po).trace.defined = documents::prd(prd).0;
        s.record_mut(Stage::Architect).trace.covers = documents::covers(arch);
        let sm = s.record_mut(Stage::Sm);
        sm.trace.sprints = documents::plan(plan);
        sm.sprints = crate::workflow::submission::sprints(plan)
            .into_iter()
            .map(|(number, title)| Sprint { number, title })
            .collect();
        sm.scope_sprints = scope;
        s
    }

    const PRD: &str = "## Functional Requirements\n- FR-1: add\n- FR-2: share\n- FR-3: export\n## Technical Requirements\n- NFR-1: fast\n## Acceptance\n- AC-1 (FR-2): shared lists show\n- AC-2: any\n";
    const ARCH: &str = "## API\nCovers: FR-1, FR-2, FR-8\n";
    const PLAN: &str = "## Sprint 1: Core\nCovers: FR-1, NFR-1\n## Sprint 2: Share\nCovers: FR-2\n";

    #[test]
    fn the_matrix_names_what_is_unplanned_left_out_undesigned_and_unknown() {
        let s = session(PRD, ARCH, PLAN, Some(vec![1]));
        let m = Matrix::of(&s).unwrap();
        assert_eq!(m.unplanned(), ["FR-3"]);
        assert_eq!(m.left_out(), ["FR-2"]);
        assert_eq!(m.undesigned(), ["FR-3", "NFR-1"]);
        assert_eq!(m.unknown, [(Stage::Architect, "FR-8".to_string())]);
        // A criterion follows the requirements it names (AC-1 → FR-2, left out); one that
        // names none is in scope.
        let scope: Vec<(&str, Option<bool>)> = m
            .rows
            .iter()
            .map(|r| (r.req.id.as_str(), r.in_scope))
            .collect();
        assert_eq!(
            scope,
            [
                ("FR-1", Some(true)),
                ("FR-2", Some(false)),
                ("FR-3", Some(false)),
                ("NFR-1", Some(true)),
                ("AC-1", Some(false)),
                ("AC-2", Some(true)),
            ]
        );
        let open: Vec<String> = m.open().into_iter().map(|o| o.id).collect();
        assert_eq!(open, ["FR-1", "NFR-1", "AC-2"]);
    }

    #[test]
    fn before_the_approval_nothing_is_in_or_out_and_a_plan_without_ids_keeps_all_in_scope() {
        let s = session(PRD, "", PLAN, None);
        let m = Matrix::of(&s).unwrap();
        assert!(m.rows.iter().all(|r| r.in_scope.is_none()));
        assert!(
            m.undesigned().is_empty(),
            "an architecture without ids says nothing"
        );
        let s = session(
            PRD,
            "",
            "## Sprint 1: All\n- it\n## Sprint 2: More\n",
            Some(vec![1]),
        );
        let m = Matrix::of(&s).unwrap();
        assert!(m.rows.iter().all(|r| r.in_scope == Some(true)));
        assert!(m.unplanned().is_empty());
        // No ids in the PRD: no matrix.
        assert!(Matrix::of(&session(
            "## Functional Requirements\n- add\n",
            "",
            "",
            None
        ))
        .is_none());
    }

    #[test]
    fn a_pass_needs_evidence_and_the_summary_stays_short() {
        let prd: String = (1..=200).map(|n| format!("- FR-{n}: r{n}\n")).collect();
        let mut s = session(&prd, "", "", Some(vec![1]));
        let qa = s.record_mut(Stage::Qa);
        qa.iteration = 1;
        qa.trace.results = documents::results("| FR-1 | pass | t1 |\n| FR-2 | pass |  |\n");
        let m = Matrix::of(&s).unwrap();
        let open = m.open();
        assert_eq!(open.len(), 199);
        assert_eq!(open[0].id, "FR-2");
        assert_eq!(open[0].why, "pass without evidence");
        let summary = m.summary(None);
        assert_eq!(summary.passing, Some(1));
        assert_eq!(summary.without_pass.len(), 11);
        assert_eq!(summary.without_pass[10], "and 189 more");
        assert!(summary.line().len() < 600, "{}", summary.line());
        let table = markdown(&m, &summary);
        assert_eq!(
            table.lines().filter(|l| l.starts_with("| FR-")).count(),
            200
        );
    }
}
