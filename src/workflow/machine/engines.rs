//! What `submit` says when the results given do not fit the session's engines (see
//! `workflow::engine`): the result is still used, and the host is told what a `codex`
//! result is for.

use super::super::stage::{Engine, Stage};
use super::Step;

impl Step<'_> {
    /// Points out a submission whose engines are not the ones this stage asks for: a
    /// result of an engine the session does not run, a stage of two engines with one
    /// result, a stage of one engine done by the other.
    pub(super) fn notice_engines(&mut self, stage: Stage, given: &[Engine]) {
        let asked = self.session.engines_for(stage);
        let runs = self.session.engines.clone();
        let list = |engines: &[Engine]| {
            engines
                .iter()
                .map(|e| e.id())
                .collect::<Vec<_>>()
                .join(" and ")
        };
        let notices = &mut self.facts.notices;
        for engine in given.iter().filter(|e| !runs.contains(e)) {
            notices.push(format!(
                "`{}` was used, though this session runs {} alone: send it only for the independent result of {}.",
                engine.result_field(),
                list(&runs),
                engine.what()
            ));
        }
        let from = |e: &Engine| given.contains(e);
        if asked.len() > 1 {
            if let [only] = given {
                let missing: Vec<Engine> = asked.iter().copied().filter(|e| !from(e)).collect();
                let fields: Vec<&str> = missing.iter().map(|e| e.result_field()).collect();
                notices.push(format!(
                    "Only `{}` was given: this session runs {} at stage `{stage}`, and no `{}` was scored. If no second model is at hand, start sessions with `engines: [\"{}\"]`; never write its result yourself.",
                    only.result_field(),
                    list(&asked),
                    fields.join("`, `"),
                    Engine::HOST
                ));
            }
        } else if let ([own], [other]) = (asked.as_slice(), given) {
            if other != own && runs.contains(other) {
                notices.push(format!(
                    "`{}` was taken in place of `{}`: this session gives stage `{stage}` to {}.",
                    other.result_field(),
                    own.result_field(),
                    own.id()
                ));
            }
        }
    }
}
