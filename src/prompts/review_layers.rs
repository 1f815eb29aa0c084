//! The review in layers: which layers the review stage's prompt names, where each layer's
//! instructions are, and the few lines that ask the host to run them. With a v6 install
//! whose code review lists its layers (`bmad_method::review::layers`: by `id`, as the team
//! and the person customized them), those are the layers: each one's instruction, its
//! placeholders filled in (the round's diff, the task's first document, the development
//! report, the skill's folder), is written by the server under the task's specs folder for
//! the host to run (a subagent reads a file; it cannot ask for an MCP prompt), and each is
//! reported in the section [`KNOWN`] gives its `id` (a layer of the team's own, in one named
//! after it), its own output written there as that table says. An install without such a
//! list gets the built-in layers (`prompts/layers/`) as files there; without an install the
//! server writes nothing, and the prompt gives each built-in layer its one-line brief. The
//! files are rewritten at each review from their sources: derived, never edited.

use crate::bmad_method::review::{skill_files, ReviewLayer, REVIEW_SKILL};
use crate::bmad_method::Method;
use crate::workflow::Session;

/// How every layer file of the server's begins: a file there that does not is someone's
/// own, never replaced.
pub const LAYER_MARK: &str = "<!-- bmad-mcp: a review layer";

/// A layer the server knows: the review's section it is reported in (`sections::LAYERS`),
/// the install's `id` for it, its built-in instructions (file name and text), and how the
/// installed layer's own output, as the method's text asks for it, is written in the
/// section.
#[derive(Debug)]
pub struct Known {
    pub section: &'static str,
    pub id: &'static str,
    pub file: &'static str,
    pub text: &'static str,
    pub output: &'static str,
}

/// The one table of the layers the server knows, in the order of `sections::LAYERS`; the
/// prompt says each line from here, docs/bmad-users.md repeats it.
pub const KNOWN: [Known; 4] = [
    Known {
        section: "Edge Cases",
        id: "edge-case-hunter",
        file: "edge-cases.md",
        text: include_str!("../../prompts/layers/edge-cases.md"),
        output: "its JSON array, a bullet per object: `location`: `trigger_condition` → `potential_consequence`; guard: `guard_snippet`",
    },
    Known {
        section: "Verification Gaps",
        id: "verification-gap",
        file: "verification-gaps.md",
        text: include_str!("../../prompts/layers/verification-gaps.md"),
        output: "a bullet per `### <gap>` block (its title, `file:line`, consequence) and per `## Other findings` item",
    },
    Known {
        section: "Blind Pass",
        id: "blind-hunter",
        file: "blind-pass.md",
        text: include_str!("../../prompts/layers/blind-pass.md"),
        output: "its list",
    },
    Known {
        section: "Acceptance Audit",
        id: "acceptance-auditor",
        file: "acceptance-audit.md",
        text: include_str!("../../prompts/layers/acceptance-audit.md"),
        output: "its list, each with the criterion it breaks",
    },
];

/// How a layer the server does not know by its `id` (the team's own, or one the team
/// rewrote) is written in its section.
const ANY_OUTPUT: &str = "its findings as a list";

/// One layer of the review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The review's section it is reported in (`## <section>`).
    pub section: String,
    /// The file of its instructions, relative to the project; `None` without an install
    /// (its brief is in the prompt).
    pub file: Option<String>,
    /// What the server writes at `file`, after [`LAYER_MARK`]'s line.
    pub text: Option<String>,
    /// An installed layer's `id` and how its output is written in its section; `None` for
    /// a built-in layer, whose own text says how it replies.
    pub installed: Option<(String, &'static str)>,
    /// A built-in layer's one-line brief.
    pub brief: &'static str,
}

/// The `In brief:` line of a built-in layer's text.
fn brief(text: &'static str) -> &'static str {
    text.lines()
        .find_map(|l| l.strip_prefix("In brief: "))
        .unwrap_or_default()
}

/// The folder of the task's layer files.
pub fn folder(session: &Session) -> String {
    format!("{}/review-layers", session.specs_dir())
}

/// The round's diff every layer reads, written by the server when the review begins: the
/// project's files from the round's base commit to the work tree, new files included.
pub fn diff_path(session: &Session) -> String {
    format!("{}/changes.diff", folder(session))
}

/// The built-in layers: as files in the task's folder (`files`), or as briefs.
fn built_in(session: &Session, files: bool) -> Vec<Layer> {
    KNOWN
        .iter()
        .map(|k| built_in_one(session, k, files))
        .collect()
}

fn built_in_one(session: &Session, k: &Known, files: bool) -> Layer {
    Layer {
        section: k.section.to_string(),
        file: files.then(|| format!("{}/{}", folder(session), k.file)),
        text: files.then(|| k.text.to_string()),
        installed: None,
        brief: brief(k.text),
    }
}

/// The layers of `session`'s review in the project of `method`, and what reading the
/// install's said.
pub fn for_review(method: &Method, session: &Session) -> (Vec<Layer>, Vec<String>) {
    if method.install().is_none() {
        return (built_in(session, false), Vec::new());
    }
    let (installed, read) = method.review_layers();
    let mut notices = read.to_vec();
    let Some(installed) = installed else {
        return (built_in(session, true), notices);
    };
    let layers = installed
        .iter()
        .filter_map(|l| installed_one(method, session, l, &mut notices))
        .collect();
    (layers, notices)
}

/// An installed layer, its instruction's files read through the confined reader first: a
/// file it names that cannot be read (a link, too large, missing) gives the layer to the
/// built-in one of its section, or leaves out one the server does not know, and says so.
fn installed_one(
    method: &Method,
    session: &Session,
    l: &ReviewLayer,
    notices: &mut Vec<String>,
) -> Option<Layer> {
    let known = KNOWN.iter().find(|k| k.id == l.id);
    let unreadable = skill_files(&l.instruction)
        .into_iter()
        .find_map(|rel| method.review_prompt(&rel).err());
    if let Some(why) = unreadable {
        let instead = match known {
            Some(k) => format!("the built-in {} layer stands for it", k.section),
            None => "it was left out".into(),
        };
        notices.push(format!(
            "The BMAD method's review layer `{}` names a file that could not be read ({why}); {instead}.",
            l.id
        ));
        return known.map(|k| built_in_one(session, k, true));
    }
    let skill_root = method.install().and_then(|i| {
        let skill = i.skills.iter().find(|s| s.name == REVIEW_SKILL)?;
        skill.dir()
    });
    let output = match known {
        Some(k) if !l.customized => k.output,
        _ => ANY_OUTPUT,
    };
    Some(Layer {
        section: known.map_or_else(|| l.name.clone(), |k| k.section.to_string()),
        file: Some(format!("{}/{}.md", folder(session), l.id)),
        text: Some(instruction_text(session, l, skill_root.as_deref())),
        installed: Some((l.id.clone(), output)),
        brief: "",
    })
}

/// The task's document a layer checks the change against: the first confirmed one before
/// development (the technical spec, the bug report, the PRD; a story's is its parent's).
fn spec_file(session: &Session) -> Option<String> {
    crate::workflow::Stage::ALL
        .into_iter()
        .take_while(|s| !s.builds_scope())
        .find_map(|s| session.record(s).artifact.as_ref())
        .map(|a| a.path.clone())
}

/// An installed layer's file: its name, then its instruction with the method's
/// placeholders filled in as the method's code review fills them, paths relative to the
/// project's folder.
fn instruction_text(session: &Session, l: &ReviewLayer, skill_root: Option<&str>) -> String {
    let spec = spec_file(session);
    // The change's own account: the report of the stage before the review.
    let stages = session.track.stages();
    let before = stages
        .iter()
        .position(|s| *s == session.current_stage)
        .and_then(|i| i.checked_sub(1))
        .map(|i| stages[i]);
    let claims = before
        .and_then(|b| session.record(b).artifact.as_ref())
        .map(|a| a.path.clone());
    let mode = if spec.is_some() { "full" } else { "no-spec" };
    let fill = |text: &str| {
        let mut out = text.to_string();
        for (key, value) in [
            ("{skill-root}", skill_root.unwrap_or(REVIEW_SKILL)),
            ("{project-root}", "."),
            ("{diff_file}", &diff_path(session)),
            ("{spec_file}", spec.as_deref().unwrap_or("")),
            ("{claims_file}", claims.as_deref().unwrap_or("")),
            ("{review_mode}", mode),
        ] {
            out = out.replace(key, value);
        }
        out
    };
    let when = l
        .when
        .as_deref()
        .map(|w| format!("Its condition, as the install words it: {}, where `{{review_mode}}` is `{mode}`. If it does not hold, reply `Skipped:` and why.\n\n", crate::code::inline(w)))
        .unwrap_or_default();
    format!(
        "# Review layer: {} (`{}`, the BMAD method's {REVIEW_SKILL}; paths are relative to the project's folder)\n\n{when}{}\n",
        l.name,
        l.id,
        fill(&l.instruction)
    )
}

/// The sections a review submission on `session` must give, one per layer: none unless a
/// v6 install is present and neither the team nor the person turned `review_layers` off.
pub fn required(method: &Method, session: &Session) -> Vec<String> {
    match method.install() {
        Some(i) if i.settings.review_layers => for_review(method, session)
            .0
            .into_iter()
            .map(|l| l.section)
            .collect(),
        _ => Vec::new(),
    }
}

/// The content of a layer's file.
pub fn file_text(text: &str) -> String {
    format!("{LAYER_MARK}, written by the server at each review from its source; edits are replaced. -->\n\n{text}")
}

/// The lines the review prompt gains in a stage's first round: each layer with its file
/// (by its name in the task's folder, which the prompt names) or its brief, and how to run
/// them and report each; an installed layer's line says how its output is written in its
/// section. A later round (`again`) gains nothing: the host had them with the stage's
/// rules, and a review without them is refused with the reason.
pub fn block(layers: &[Layer], (folder, diff): (&str, &str), again: bool) -> String {
    if layers.is_empty() || again {
        return String::new();
    }
    let files = layers.iter().any(|l| l.file.is_some());
    let place = if files {
        format!(" (ours in `{folder}/`)")
    } else {
        String::new()
    };
    let run = if layers.iter().any(|l| l.installed.is_some()) {
        format!("Follow each layer's file{place}, from the install's `{REVIEW_SKILL}` layers (each launches its reviewer in a fresh context: Claude Code a subagent, elsewhere a new session) and reads the diff")
    } else {
        format!("Run each in a fresh context (Claude Code: a subagent; elsewhere a new session) with its file{place} and the diff")
    };
    let each: Vec<String> = layers
        .iter()
        .map(|l| {
            let shown = match &l.file {
                Some(f) => crate::code::inline(f.rsplit('/').next().unwrap_or(f)),
                None => l.brief.to_string(),
            };
            let section = crate::code::visible(&l.section);
            match &l.installed {
                Some((_, output)) => format!("- {section}: {shown} → {output}"),
                None => format!("- {section}: {shown}"),
            }
        })
        .collect();
    format!(
        "\n## Review in layers\n\n{run} {} (every file the round changed, new ones included, written by the server when the review began); a `## <layer>` section each (its findings, or `No findings.`){}:\n{}\n",
        crate::code::inline(diff),
        if layers.iter().any(|l| l.installed.is_some()) {
            ", its reviewer's reply written there as after the arrow"
        } else {
            ""
        },
        each.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_install_each_layer_is_given_its_brief_and_no_file() {
        let (_dir, project) = crate::files::project::tests::project();
        let s = Session::test()
            .task("add-login-ada-0000")
            .objective("Add login")
            .build();
        let method = Method::known(&project, None);
        let (layers, notices) = for_review(&method, &s);
        assert!(notices.is_empty());
        let names: Vec<&str> = layers.iter().map(|l| l.section.as_str()).collect();
        let listed: Vec<&str> = crate::workflow::sections::LAYERS
            .iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(names, listed, "one name per layer, the table's");
        assert!(layers.iter().all(|l| l.file.is_none() && l.text.is_none()));
        assert!(required(&method, &s).is_empty());
        let first = block(&layers, (&folder(&s), &diff_path(&s)), false);
        assert!(
            first.contains("- Blind Pass: the diff alone (no documents, no report): what is wrong or missing.\n"),
            "{first}"
        );
        for k in &KNOWN {
            assert!(!brief(k.text).is_empty(), "every layer has its brief");
            assert!(k
                .text
                .starts_with(&format!("# Review layer: {}\n", k.section)));
        }
        assert!(!first.contains("ours in"), "no file of ours: {first}");
        assert_eq!(
            block(&layers, (&folder(&s), &diff_path(&s)), true),
            "",
            "said in the first round"
        );
        assert!(file_text("x").starts_with(LAYER_MARK));
    }

    /// An installed layer's file fills the method's placeholders as its code review does:
    /// the round's diff, the skill's folder, the track's first document as the spec (and
    /// `review_mode` full), the report of the stage before the review as the claims; on
    /// each track, and without a spec the mode is `no-spec`.
    #[test]
    fn an_installed_layers_file_fills_the_methods_placeholders() {
        use crate::workflow::{session::Artifact, Stage, Track};
        let l = ReviewLayer {
            id: "auditor".into(),
            name: "Auditor".into(),
            instruction: "Read `{skill-root}/r.md` and `{project-root}/x`; diff `{diff_file}`, spec `{spec_file}`, claims `{claims_file}`.".into(),
            when: Some("Only when {review_mode} = \"full\".".into()),
            customized: false,
        };
        let doc = |path: &str| {
            Some(Artifact {
                path: path.into(),
                sha256: String::new(),
                size: 1,
            })
        };
        for (track, first, dev) in [
            (Track::Quick, Stage::Spec, Stage::Dev),
            (Track::Fix, Stage::Bug, Stage::Dev),
            (Track::Full, Stage::Po, Stage::Dev),
        ] {
            let mut s = Session::test().task("t-1").build();
            s.track = track;
            s.current_stage = Stage::Review;
            let text = instruction_text(&s, &l, Some(".agents/skills/bmad-code-review"));
            assert!(
                text.contains("is `no-spec`") && text.contains("spec ``"),
                "{track:?}: {text}"
            );
            s.record_mut(first).artifact = doc("first.md");
            s.record_mut(dev).artifact = doc("dev.md");
            let text = instruction_text(&s, &l, Some(".agents/skills/bmad-code-review"));
            let want = format!("Read `.agents/skills/bmad-code-review/r.md` and `./x`; diff `{}`, spec `first.md`, claims `dev.md`.", diff_path(&s));
            assert!(text.contains(&want), "{track:?}: {text}");
            assert!(text.contains("is `full`"), "{text}");
        }
    }

    /// docs/bmad-users.md's table says each known layer's `id` and section as [`KNOWN`].
    #[test]
    fn the_users_page_says_the_table() {
        let page = include_str!("../../docs/bmad-users.md");
        for k in &KNOWN {
            let row = format!("| `{}` | {} |", k.id, k.section);
            assert!(page.contains(&row), "{row}");
        }
    }

    #[test]
    fn an_installed_layers_section_stays_quoted() {
        let layers = [Layer {
            section: crate::code::FORGED.to_string(),
            file: Some("x/review.md".into()),
            text: None,
            installed: Some(("x".into(), ANY_OUTPUT)),
            brief: "",
        }];
        let b = block(&layers, ("x", "x/changes.diff"), false);
        assert!(!crate::code::forged_in(&b), "{b}");
    }
}
