"""The official MCP Python SDK drives the two gates the server judges itself against the
built binary:

    python gate_client.py <bmad-mcp binary> <legacy|auto>

A score alone cannot pass: a four-line PRD that claims `Quality Score: 95/100` goes back to
`refining`, the reply naming the missing sections. A failing verdict stops at the human: a
review that says `Review Status: Fail` stops at the human, who sends the work back to `dev`
with the findings; a QA score below the gate stops at the human, who accepts the risk; the
final message states the review status and the QA score. Every reply is checked against the
reply's JSON Schema (sdk_client.Run). Exits non-zero with a message on the first failed
check. tests/it/python_sdk.rs runs it.
"""

import os
import tempfile

from mcp import Client, StdioServerParameters

from sdk_client import EXPECTED_VERSION, Run, check, fixture, run_from_command_line

SHORT_PRD = "# PRD: Todo app\n## Executive Summary\nA todo app for teams.\nQuality Score: 95/100\n"
MISSING = ["Business Goals", "User Stories", "Functional Requirements", "Technical Requirements",
           "Success Metrics"]
DECIDES = ("Show `user_message` to the human and stop. The human decides: accept the risk (`confirm`), "
           "or send the work back to `dev` (`reject` with `feedback` in their words); never decide for them.")


def check_the_human_decides(v, failure):
    check(v["interaction_type"] == "user_decision" and v["requires_user_confirmation"] is True,
          f"the human decides: {v['interaction_type']}")
    check(v["pending_user_actions"] == ["confirm", "reject"], f"pending {v['pending_user_actions']}")
    # With notices (the project has no checks), `next_step` also says to pass them on.
    tell = " Also tell the human what `notices` says: it is for them." if v.get("notices") else ""
    check(v["next_step"] == DECIDES + tell, f"next_step {v['next_step']!r}")
    check(f"does not pass: {failure}." in v["user_message"], f"message {v['user_message']!r}")
    check(v["gate_passed"] is False, f"gate_passed {v.get('gate_passed')}")


async def drive(binary, mode):
    with tempfile.TemporaryDirectory(prefix="bmad-pygates-") as tmp:
        project = os.path.realpath(tmp)
        env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn"}
        params = StdioServerParameters(command=binary, args=[], cwd=project, env=env)
        async with Client(params, mode=mode) as client:
            negotiated = client.protocol_version
            check(negotiated == EXPECTED_VERSION[mode], f"negotiated {negotiated}, expected {EXPECTED_VERSION[mode]}")
            tool = (await client.list_tools()).tools[0]
            run = Run(client)
            v = await run.ok({"action": "start", "cwd": project, "objective": "Build a team todo app"},
                             "po", "generating")
            run.session_id = v["session_id"]

            # A score alone does not pass the gate.
            v = await run.ok({"action": "submit", "claude_result": SHORT_PRD}, "po", "refining")
            check((v["score"], v["score_source"], v["gate_passed"]) == (95, "reported", False),
                  f"score {v['score']} {v['score_source']} gate {v['gate_passed']}")
            check(v["missing_sections"] == MISSING, f"missing_sections {v.get('missing_sections')}")
            check("a score alone does not pass the gate of 90" in v["user_message"], v["user_message"])
            for name in MISSING:
                check(name in v["user_message"], f"the message names {name}")
                check(f'Add a "{name}" section.' in v["guidance"], f"the guidance names {name}")

            # On to the review with the example's documents.
            steps = [
                ({"action": "submit", "claude_result": fixture("po-final.json")}, "po", "awaiting_confirmation"),
                ({"action": "confirm"}, "architect", "generating"),
                ({"action": "submit", "claude_result": fixture("architect-final.json")},
                 "architect", "awaiting_confirmation"),
                ({"action": "confirm"}, "sm", "generating"),
                ({"action": "submit", "claude_result": fixture("sprint-plan.md")}, "sm", "awaiting_approval"),
                ({"action": "approve", "scope": "all"}, "dev", "generating"),
                ({"action": "submit", "codex_result": fixture("dev-report.md")}, "review", "generating"),
            ]
            for args, stage, state in steps:
                await run.ok(args, stage, state)

            # A failing review stops at the human, who sends the work back to dev.
            failing_review = fixture("review.md").replace("Pass with Risk", "Fail")
            v = await run.ok({"action": "submit", "codex_result": failing_review}, "review", "awaiting_confirmation")
            check_the_human_decides(v, "Review Status: Fail")
            report = v["artifact_path"]
            feedback = "Add the CSRF check before anything else."
            v = await run.ok({"action": "reject", "feedback": feedback, "digest": v["document_digest"]},
                             "dev", "generating")
            # The feedback names this round's report, kept in a file of its own.
            round_one = report.replace(".md", ".round-1.md")
            check(round_one in v["role_prompt"] and feedback in v["role_prompt"]
                  and "Review Status: Fail" in v["role_prompt"], "dev's prompt carries the findings")
            await run.ok({"action": "submit", "codex_result": fixture("dev-report.md")}, "review", "generating")
            await run.ok({"action": "submit", "codex_result": fixture("review.md")}, "qa", "generating")

            # A QA score below the gate stops at the human, who accepts the risk.
            failing_qa = fixture("qa-report.md").replace("Quality Score: 91/100", "Quality Score: 72/100")
            v = await run.ok({"action": "submit", "codex_result": failing_qa}, "qa", "awaiting_confirmation")
            check_the_human_decides(v, "Quality Score: 72/100, below the gate of 90")
            v = await run.ok({"action": "confirm"}, "qa", "completed")
            final = ("Review status: Pass with Risk. "
                     "QA score: 72/100 (below the gate of 90, risk accepted, as the host asserted).")
            check(final in v["user_message"], f"final message {v['user_message']!r}")
            v = await run.ok({"action": "status"}, "qa", "completed")
            stages = v["session"]["stages"]
            check(stages["qa"].get("accepted_risk") is True and "accepted_risk" not in stages["review"],
                  "the accepted risk is recorded on the QA stage only")
            decisions = [(d["stage"], d["action"], d["decided_by"]) for d in v["decisions"]
                         if d["stage"] in ("review", "qa")]
            check(decisions == [("review", "reject", "host"), ("qa", "confirm", "host")], f"decisions {decisions}")
        return negotiated


def main():
    run_from_command_line("gate_client.py", drive, "gates checked: a score without its sections "
                          "refused, a failing review sent back, a failing QA risk accepted")


if __name__ == "__main__":
    main()
