"""A second real client: the official MCP Python SDK drives a whole bmad-mcp workflow over
stdio against the built binary.

    python sdk_client.py <bmad-mcp binary> <legacy|auto>

`legacy` connects with the `initialize` handshake (the SDK negotiates 2025-11-25); `auto`
probes `server/discover` and must end up in the 2026-07-28 era (the SDK would silently fall
back to `initialize` otherwise, so the negotiated version is checked). Every reply is checked
against the reply's JSON Schema (BMAD_REPLY_SCHEMA), and an action after completion must be refused.
Exits non-zero with a message on the first failed check. tests/it/python_sdk.rs runs it.
"""

import asyncio
import json
import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import jsonschema
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent.parent / "examples" / "fixtures"
EXPECTED_VERSION = {"legacy": "2025-11-25", "auto": "2026-07-28"}
ACTIONS = ["start", "submit", "answer", "confirm", "confirm_save", "approve", "reject", "status", "list"]


class CheckFailed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise CheckFailed(what)


def first_failed_check(e):
    """The CheckFailed inside `e`, which the SDK's task groups may have wrapped."""
    if isinstance(e, CheckFailed):
        return e
    for inner in getattr(e, "exceptions", ()):
        found = first_failed_check(inner)
        if found is not None:
            return found
    return None


def pinned_sdk_version():
    for line in (HERE / "requirements.txt").read_text().splitlines():
        if line.startswith("mcp=="):
            return line.split("==", 1)[1].strip()
    raise CheckFailed("requirements.txt pins no mcp version")


def fixture(name):
    return (FIXTURES / name).read_text()


def reply_schema():
    """The JSON Schema of structuredContent: not declared on the tool (docs/spec.md §10.8);
    tests/it/python_sdk.rs writes it to the file BMAD_REPLY_SCHEMA names."""
    with open(os.environ["BMAD_REPLY_SCHEMA"]) as f:
        return json.load(f)


class Run:
    """One connection: calls the tool and checks every reply's shape."""

    def __init__(self, client, output_schema=None):
        self.client = client
        self.output_schema = output_schema or reply_schema()
        self.session_id = None

    async def call(self, args):
        if self.session_id and "session_id" not in args and args["action"] not in ("start", "list"):
            args = {**args, "session_id": self.session_id}
        result = await self.client.call_tool("bmad-task", args)
        value = result.structured_content
        check(isinstance(value, dict), f"{args['action']}: structuredContent is an object, got {value!r}")
        jsonschema.validate(value, self.output_schema)
        texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
        check(len(texts) == 1, f"{args['action']}: one text block for the model, got {len(texts)}")
        first = value["user_message"].splitlines()[0] if value.get("user_message") else ""
        check(first in texts[0], f"{args['action']}: the text has user_message")
        if "role_prompt" in value:
            # The role prompt ends the text, as Markdown rather than an escaped JSON string.
            tail = "role_prompt: " + value["role_prompt"].strip() + "\n"
            check(texts[0].endswith(tail), f"{args['action']}: the role prompt last, as Markdown")
        return bool(result.is_error), value

    async def ok(self, args, stage, state):
        is_error, v = await self.call(args)
        check(not is_error, f"{args['action']} was refused: {v.get('error')}")
        check((v.get("stage"), v.get("state")) == (stage, state),
              f"{args['action']}: expected {stage}/{state}, got {v.get('stage')}/{v.get('state')}")
        return v


async def drive(binary, mode):
    with tempfile.TemporaryDirectory(prefix="bmad-pysdk-") as tmp:
        project = os.path.realpath(tmp)
        env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn"}
        params = StdioServerParameters(command=binary, args=[], cwd=project, env=env)
        async with Client(params, mode=mode) as client:
            negotiated = client.protocol_version
            check(client.protocol_version == EXPECTED_VERSION[mode],
                  f"negotiated {client.protocol_version}, expected {EXPECTED_VERSION[mode]}")
            if client.server_info is not None:
                check(client.server_info.name == "bmad-mcp", f"server name {client.server_info.name}")
            tools = (await client.list_tools()).tools
            check([t.name for t in tools] == ["bmad-task"], f"tools: {[t.name for t in tools]}")
            tool = tools[0]
            check(tool.output_schema is None, f"the tool declares no outputSchema, got {tool.output_schema!r}")
            schema = reply_schema()
            for key in ("session_id", "stage", "state", "user_message", "pending_user_actions"):
                check(key in schema.get("properties", {}), f"the reply schema lacks {key}")
            schema_text = json.dumps(tool.input_schema)
            for action in ACTIONS:
                check(f'"{action}"' in schema_text, f"inputSchema does not name action {action}")

            run = Run(client)
            v = await run.ok({"action": "start", "cwd": project,
                              "objective": "Build a service that publishes a weekly team changelog"},
                             "po", "generating")
            run.session_id = v["session_id"]
            check(v["engines"] == ["claude"], f"engines {v['engines']}")
            check("# Role: Product Owner" in v["role_prompt"], "the PO role prompt")

            v = await run.ok({"action": "submit", "stage": "po", "claude_result": fixture("po-draft.json")},
                             "po", "clarifying")
            check([q["id"] for q in v["questions"]] == ["q1", "q2", "q3"], f"questions {v['questions']}")
            check((v["score"], v["score_source"]) == (68, "reported"), f"score {v['score']}")
            check(v["requires_user_confirmation"] is True, "the human decides")
            await run.ok({"action": "answer", "answers": {"q1": "GitHub first", "q2": "Web only",
                                                          "q3": "Repository maintainers"}},
                         "po", "refining")
            v = await run.ok({"action": "submit", "claude_result": fixture("po-final.json")},
                             "po", "awaiting_confirmation")
            check(v["gate_passed"] is True and v["score"] == 93, f"gate {v['gate_passed']} score {v['score']}")
            prd = Path(project, v["artifact_path"])
            check(prd.is_file(), f"{prd} is written for the human to read")
            await run.ok({"action": "confirm"}, "architect", "generating")

            await run.ok({"action": "submit", "claude_result": fixture("architect-draft.json")},
                         "architect", "clarifying")
            await run.ok({"action": "answer", "answers": {"q1": "Our existing Kubernetes cluster"}},
                         "architect", "refining")
            await run.ok({"action": "submit", "claude_result": fixture("architect-final.json")},
                         "architect", "awaiting_confirmation")
            await run.ok({"action": "confirm_save"}, "sm", "generating")

            v = await run.ok({"action": "submit", "claude_result": fixture("sprint-plan.md")},
                             "sm", "awaiting_approval")
            check([s["number"] for s in v["sprints"]] == [1, 2], f"sprints {v['sprints']}")
            v = await run.ok({"action": "approve", "scope": "sprint 1"}, "dev", "generating")
            check(v["context"]["scope"] == "sprint 1", f"scope {v['context'].get('scope')}")
            check(v["engines"] == ["claude"], f"dev engines {v['engines']}")
            await run.ok({"action": "submit", "claude_result": fixture("dev-report.md")}, "review", "generating")
            v = await run.ok({"action": "submit", "claude_result": fixture("review.md")}, "qa", "generating")
            check(v["review_status"] == "Pass with Risk", f"review status {v.get('review_status')}")
            v = await run.ok({"action": "submit", "claude_result": fixture("qa-report.md")}, "qa", "completed")
            check(v["interaction_type"] == "workflow_completed" and v["score"] == 91, f"completion {v}")

            # After completion every action but status is refused, as a tool error.
            is_error, v = await run.call({"action": "submit", "codex_result": fixture("qa-report.md")})
            check(is_error, "a submit after completion is refused")
            check(v["error"]["code"] == "invalid_state", f"error {v['error']}")
            check(v["allowed_actions"] == ["status"], f"allowed {v.get('allowed_actions')}")
            is_error, v = await run.call({"action": "confirm"})
            check(is_error and v["state"] == "completed", "a confirm after completion is refused")
            v = await run.ok({"action": "status"}, "qa", "completed")
            check(v["session"]["stages"]["po"]["score"] == 93, "status shows the stored session")
            _, listed = await run.call({"action": "list", "cwd": project})
            check([s["current_state"] for s in listed["sessions"]] == ["completed"], f"list {listed}")

            # Engines for any host: the host's list overrides the objective's word, and a
            # list that is no list of engines is refused naming the field.
            one = await run.ok({"action": "start", "cwd": project, "objective": "Rename the Codex class",
                                "engines": ["claude"]}, "po", "generating")
            check(one["engines"] == ["claude"] and "codex" not in one["next_step"],
                  f"one engine: {one['engines']} {one['next_step']}")
            two = await run.ok({"action": "start", "cwd": project, "objective": "Rename the Codex class"},
                               "po", "generating")
            check(two["engines"] == ["claude", "codex"] and "Codex MCP server" in two["next_step"],
                  f"the objective's word: {two['engines']} {two['next_step']}")
            is_error, bad = await run.call({"action": "start", "cwd": project, "objective": "x",
                                            "engines": ["codex", "claude"]})
            check(is_error and bad["error"]["code"] == "invalid_argument"
                  and bad["error"]["message"].startswith("field `engines`"), f"bad engines {bad}")

        folder = Path(project, ".claude", "specs", v["task_name"])
        check((folder / ".bmad-session").read_text().strip() == v["session_id"], "the folder names its session")
        specs = sorted(p.name for p in folder.iterdir() if p.name != ".bmad-session")
        check(specs == ["01-product-requirements.md", "02-system-architecture.md", "03-sprint-plan.md",
                        "04-dev-reviewed.md", "05-qa-report.md", "code-implementation.md",
                        "review-layers", "traceability.md"], f"documents {specs}")
        return negotiated


def run_from_command_line(script, drive, done):
    """Runs `drive(binary, mode)` for `<script> <binary> <legacy|auto>`, exiting non-zero with
    the first failed check; prints `mcp <version>, mode=<mode>: negotiated <version>; <done>`."""
    if len(sys.argv) != 3 or sys.argv[2] not in EXPECTED_VERSION:
        sys.exit(f"usage: {script} <bmad-mcp binary> <legacy|auto>")
    binary, mode = sys.argv[1], sys.argv[2]
    pinned = pinned_sdk_version()
    installed = version("mcp")
    if installed != pinned:
        sys.exit(f"the venv has mcp {installed}, requirements.txt pins {pinned}: run ./scripts/test to rebuild it")
    try:
        negotiated = asyncio.run(drive(binary, mode))
    except BaseException as e:
        failed = first_failed_check(e)
        if failed is None:
            raise
        sys.exit(f"FAILED ({mode}): {failed}")
    print(f"mcp {installed}, mode={mode}: negotiated {negotiated}; {done}")


def main():
    run_from_command_line("sdk_client.py", drive, "whole workflow driven; "
                          "reply schema checked on every reply; action after completion refused")


if __name__ == "__main__":
    main()
