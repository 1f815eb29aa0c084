"""The human decides: the official MCP Python SDK plays a client that can show its user a
dialog (its `elicitation_callback` is the scripted human) and one that cannot, against the
built binary.

    python sdk_gates.py <bmad-mcp binary> <legacy|auto>

In `legacy` mode the server asks with `elicitation/create` during the call (2025-11-25); in
`auto` mode it answers with input-required results and the SDK's multi-round-trip driver
routes them to the same callback (2026-07-28). Scenarios: answers asked in a form, decline,
cancel (asked once, still pending), a document edited between question and answer (asked
again, the edited version recorded), reject with the human's feedback, approve with a scope
chosen from the plan's sprints, a client without a dialog (recorded as the host's word),
strict mode refusing the host and taking the human's dialog answer, a broken policy file.
tests/it/python_sdk.rs runs it.
"""

import asyncio
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

import mcp_types as types
from mcp import Client, StdioServerParameters

from sdk_client import EXPECTED_VERSION, CheckFailed, Run, check, first_failed_check, fixture


class Human:
    """A scripted human: each dialog is answered by the next step of the plan."""

    def __init__(self):
        self.plan = []
        self.asked = []

    def expect(self, *steps):
        check(not self.plan, f"the human was not asked {len(self.plan)} time(s) planned")
        self.plan = list(steps)
        self.asked = []

    def done(self):
        check(not self.plan, f"{len(self.plan)} planned dialog(s) never came")

    async def __call__(self, context, params):
        self.asked.append(params)
        if not self.plan:
            raise CheckFailed(f"asked once more than planned: {params.message!r}")
        result = self.plan.pop(0)(params)
        # A person reads the form before they decline or close it: one closed sooner than
        # that is the client's doing (the server's rule), not a person's.
        if result.action != "accept":
            await asyncio.sleep(PERSON_READS)
        return result


# Longer than the server's "nobody read it" time (a second).
PERSON_READS = 1.2


def accept(content, check_form=None):
    def step(params):
        if check_form is not None:
            check_form(params)
        return types.ElicitResult(action="accept", content=content)
    return step


def reply(action):
    return lambda params: types.ElicitResult(action=action)


def props(params):
    return params.requested_schema["properties"]


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


async def last_decision(run):
    _, v = await run.call({"action": "status"})
    return v["session"]["history"][-1], v


def connect(binary, project, human=None, mode="legacy"):
    env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn"}
    params = StdioServerParameters(command=binary, args=[], cwd=project, env=env)
    return Client(params, mode=mode, elicitation_callback=human)


async def human_decides(binary, mode, project):
    human = Human()
    async with connect(binary, project, human, mode) as client:
        check(client.protocol_version == EXPECTED_VERSION[mode], f"negotiated {client.protocol_version}")
        tool = (await client.list_tools()).tools[0]
        run = Run(client)
        v = await run.ok({"action": "start", "cwd": project, "objective": "Build a weekly team changelog service"},
                         "po", "generating")
        run.session_id = v["session_id"]
        await run.ok({"action": "submit", "claude_result": fixture("po-draft.json")}, "po", "clarifying")

        # `answer` without answers: one form, a text field per open question.
        def questions_form(params):
            check(sorted(props(params)) == ["q1", "q2", "q3"], f"question fields {sorted(props(params))}")
            check(all(p.get("description") for p in props(params).values()), "each question is shown")
        human.expect(accept({"q1": "GitHub first", "q2": "Web only", "q3": "Repository maintainers"},
                            questions_form))
        await run.ok({"action": "answer"}, "po", "refining")
        human.done()
        entry, _ = await last_decision(run)
        check((entry["action"], entry["decided_by"], entry["via"]) == ("answer", "human", "elicitation"),
              f"the answers are the human's: {entry}")

        v = await run.ok({"action": "submit", "claude_result": fixture("po-final.json")}, "po", "awaiting_confirmation")
        check("then call `confirm`: a dialog asks them" in v["next_step"],
              f"a client with a dialog is told to open it: {v['next_step']}")
        prd = Path(project, v["artifact_path"])
        digest = sha256(prd)
        check(v["document_digest"] == digest[:12], f"document_digest {v['document_digest']}")

        # What is decided is shown: path, size, digest, score.
        def confirm_form(params):
            m = params.message
            for part in (v["artifact_path"], f"{prd.stat().st_size} bytes", f"sha256 {digest[:12]}", "93/100"):
                check(part in m, f"the dialog shows {part!r}: {m!r}")
            check({"decision", "feedback"} <= set(props(params)), f"fields {props(params)}")
        human.expect(lambda params: (confirm_form(params), types.ElicitResult(action="decline"))[1])
        v = await run.ok({"action": "confirm"}, "po", "awaiting_confirmation")
        check("error" not in v and "declined" in v["user_message"], f"decline: {v['user_message']}")
        human.done()

        # Cancel: still pending, asked once, the reply says how else to decide.
        human.expect(reply("cancel"))
        v = await run.ok({"action": "confirm"}, "po", "awaiting_confirmation")
        check(len(human.asked) == 1, f"asked {len(human.asked)} times after a cancel")
        check("still pending" in v["user_message"] and "bmad-mcp confirm" in v["user_message"],
              f"cancel: {v['user_message']}")
        human.done()

        # The document is edited while the dialog is open: the answer is stale and the
        # human is asked again about the version on disk.
        def edit_then_confirm(params):
            with prd.open("a") as f:
                f.write("\nEdited by the human while deciding.\n")
            return types.ElicitResult(action="accept", content={"decision": "confirm"})

        def asked_again(params):
            check(f"sha256 {sha256(prd)[:12]}" in params.message and "changed" in params.message,
                  f"asked again about the edited version: {params.message!r}")
            return types.ElicitResult(action="accept", content={"decision": "confirm"})
        human.expect(edit_then_confirm, asked_again)
        await run.ok({"action": "confirm"}, "architect", "generating")
        human.done()
        entry, _ = await last_decision(run)
        check((entry["action"], entry["decided_by"], entry["via"], entry["digest"])
              == ("confirm", "human", "elicitation", sha256(prd)),
              f"the edited version is the one confirmed: {entry}")

        # The host proposes answers; the human's words are the ones recorded.
        await run.ok({"action": "submit", "claude_result": fixture("architect-draft.json")},
                     "architect", "clarifying")
        human.expect(accept({"q1": "Our own Kubernetes cluster"},
                            lambda p: check(props(p)["q1"].get("default") == "AWS", f"pre-filled {props(p)['q1']}")))
        await run.ok({"action": "answer", "answers": {"q1": "AWS"}}, "architect", "refining")
        _, status = await last_decision(run)
        check(status["session"]["stages"]["architect"]["answers"] == {"q1": "Our own Kubernetes cluster"},
              "the human's answer is recorded, not the host's")

        # Reject with the human's feedback sends the stage back.
        await run.ok({"action": "submit", "claude_result": fixture("architect-final.json")},
                     "architect", "awaiting_confirmation")
        human.expect(accept({"decision": "reject", "feedback": "Add a rollback plan and SLOs"},
                            lambda p: check(props(p)["decision"].get("default") == "reject", "reject pre-selected")))
        await run.ok({"action": "reject", "feedback": "Add a rollback plan"}, "architect", "refining")
        _, status = await last_decision(run)
        said = {"by": "human", "via": "elicitation", "text": "Add a rollback plan and SLOs"}
        check(status["session"]["stages"]["architect"]["feedback"] == [said],
              f"feedback {status['session']['stages']['architect']['feedback']}")
        await run.ok({"action": "submit", "claude_result": fixture("architect-final.json")},
                     "architect", "awaiting_confirmation")
        human.expect(accept({"decision": "confirm"}))
        await run.ok({"action": "confirm_save"}, "sm", "generating")

        # Approve: the scope is chosen from the plan's sprints.
        await run.ok({"action": "submit", "claude_result": fixture("sprint-plan.md")}, "sm", "awaiting_approval")

        def scope_form(params):
            offered = [o["const"] for o in props(params)["scope"]["oneOf"]]
            check(offered == ["all", "1", "2", "1-2"], f"scopes offered {offered}")
        human.expect(accept({"decision": "approve", "scope": "1"}, scope_form))
        v = await run.ok({"action": "approve"}, "dev", "generating")
        check(v["context"]["scope"] == "1", f"scope {v['context'].get('scope')}")
        _, status = await last_decision(run)
        decisions = [(d["action"], d["decided_by"], d["via"]) for d in status["decisions"]]
        check(all(by == "human" and via == "elicitation" for _, by, via in decisions),
              f"every decision is the human's: {decisions}")
        check(len(decisions) == 6, f"decisions {decisions}")

        # A failing review: the human sends the work back to development in the dialog.
        await run.ok({"action": "submit", "codex_result": fixture("dev-report.md")}, "review", "generating")
        failing = fixture("review.md").replace("Pass with Risk", "Fail")
        await run.ok({"action": "submit", "codex_result": failing}, "review", "awaiting_confirmation")

        def verdict_form(params):
            check("Review Status: Fail" in params.message, f"the failure is shown: {params.message!r}")
            titles = [o["title"] for o in props(params)["decision"]["oneOf"]]
            check(titles == ["Accept the risk and go on", "Send the work back to development with feedback"],
                  f"the choices say what they do: {titles}")
        human.expect(accept({"decision": "reject", "feedback": "Fix the flaky publish test first"}, verdict_form))
        v = await run.ok({"action": "confirm"}, "dev", "generating")
        check("Fix the flaky publish test first" in v["role_prompt"], "dev's prompt carries the human's feedback")
        human.done()


async def host_and_strict_mode(binary, mode, project):
    # A client without a dialog: the host's word, recorded as such.
    async with connect(binary, project, None, mode) as client:
        tool = (await client.list_tools()).tools[0]
        run = Run(client)
        v = await run.ok({"action": "start", "cwd": project, "objective": "Build a changelog bot"}, "po", "generating")
        run.session_id = v["session_id"]
        v = await run.ok({"action": "submit", "claude_result": fixture("po-final.json")}, "po", "awaiting_confirmation")
        check(v["next_step"].startswith("Show `user_message` to the human and stop"),
              f"without a dialog the host waits for the human: {v['next_step']}")
        await run.ok({"action": "confirm"}, "architect", "generating")
        entry, _ = await last_decision(run)
        check((entry["decided_by"], entry["via"]) == ("host", "tool"), f"host-asserted: {entry}")

        # Strict mode: the host's word is refused, with the way for the human.
        v = await run.ok({"action": "start", "cwd": project, "objective": "Build a release bot"}, "po", "generating")
        run.session_id = v["session_id"]
        task = v["task_name"]
        await run.ok({"action": "submit", "claude_result": fixture("po-final.json")}, "po", "awaiting_confirmation")
        config = Path(project, ".bmad", "config.toml")
        config.parent.mkdir(exist_ok=True)
        config.write_text("gate = \"human\"\n")
        is_error, v = await run.call({"action": "confirm"})
        check(is_error and v["error"]["code"] == "invalid_config" and "config.toml" in v["error"]["message"]
              and "gate" in v["error"]["message"], f"a broken policy is an error naming file and key: {v}")
        config.write_text("gates = \"human\"\n")
        is_error, v = await run.call({"action": "confirm"})
        check(is_error and v["error"]["code"] == "human_required", f"strict mode refuses the host: {v}")
        check(f"bmad-mcp confirm {task}" in v["error"]["message"], f"says how the human decides: {v['error']}")
        check(v["state"] == "awaiting_confirmation", "nothing changed")

    # Strict mode takes the human's answer in the dialog.
    human = Human()
    async with connect(binary, project, human, mode) as client:
        tool = (await client.list_tools()).tools[0]
        run = Run(client)
        run.session_id = v["session_id"]
        human.expect(accept({"decision": "confirm"}))
        await run.ok({"action": "confirm"}, "architect", "generating")
        entry, _ = await last_decision(run)
        check((entry["decided_by"], entry["via"]) == ("human", "elicitation"), f"strict, by the human: {entry}")


async def drive(binary, mode):
    with tempfile.TemporaryDirectory(prefix="bmad-gates-") as tmp:
        await human_decides(binary, mode, os.path.realpath(tmp))
    with tempfile.TemporaryDirectory(prefix="bmad-strict-") as tmp:
        await host_and_strict_mode(binary, mode, os.path.realpath(tmp))


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in EXPECTED_VERSION:
        sys.exit("usage: sdk_gates.py <bmad-mcp binary> <legacy|auto>")
    binary, mode = sys.argv[1], sys.argv[2]
    try:
        asyncio.run(drive(binary, mode))
    except BaseException as e:
        failed = first_failed_check(e)
        if failed is None:
            raise
        sys.exit(f"FAILED ({mode}): {failed}")
    print(f"mode={mode}: the human decided in the dialog; decline, cancel, stale, reject, scope, "
          f"host-asserted and strict mode checked")


if __name__ == "__main__":
    main()
