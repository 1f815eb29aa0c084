"""The official MCP Python SDK uses what the server offers a host besides its tool against
the built binary:

    python host_client.py <bmad-mcp binary> <legacy|auto>

The prompts (`start`, `status`, `resume`: listed, got, the briefing at most 4 KB), the
resources (`bmad://sessions…`: listed concretely with MIME types, read, templates, a stage
without a document refused), and the role prompt overrides (the project's file beats the
user's, which beats the built-in one; the reply names the source). Exits non-zero with a
message on the first failed check. tests/it/python_sdk.rs runs it.
"""

import json
import os
import tempfile

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from sdk_client import EXPECTED_VERSION, Run, check, run_from_command_line


async def prompt_text(client, name, arguments):
    result = await client.get_prompt(name, arguments)
    check(len(result.messages) == 1 and result.messages[0].role == "user", f"{name}: one user message")
    return result.messages[0].content.text


async def drive(binary, mode):
    with tempfile.TemporaryDirectory(prefix="bmad-pyhost-") as tmp:
        project = os.path.join(os.path.realpath(tmp), "project")
        config = os.path.join(os.path.realpath(tmp), "config")
        os.makedirs(os.path.join(project, ".bmad", "prompts"))
        os.makedirs(os.path.join(config, "bmad-mcp", "prompts"))
        env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn", "XDG_CONFIG_HOME": config}
        params = StdioServerParameters(command=binary, args=[], cwd=project, env=env)
        async with Client(params, mode=mode) as client:
            negotiated = client.protocol_version
            check(negotiated == EXPECTED_VERSION[mode], f"negotiated {negotiated}")
            run = Run(client)

            # Prompts.
            names = [p.name for p in (await client.list_prompts()).prompts]
            check(names == ["start", "status", "resume"], f"prompts {names}")
            text = await prompt_text(client, "start", {"objective": "Build a todo app"})
            check("«Build a todo app»" in text and 'action: "start"' in text, f"start prompt {text!r}")

            # Overrides: the user's file, then the project's.
            with open(os.path.join(config, "bmad-mcp", "prompts", "po.md"), "w") as f:
                f.write("# Role: my PO\n\nWrite the PRD for {{objective}}.\n")
            v = await run.ok({"action": "start", "cwd": project, "objective": "Build a todo app"}, "po", "generating")
            user_file = os.path.join(config, "bmad-mcp", "prompts", "po.md")
            check(v["role_prompt_source"] == f"user file {user_file}", f"source {v['role_prompt_source']}")
            check(v["role_prompt"] == "# Role: my PO\n\nWrite the PRD for Build a todo app.\n",
                  f"prompt {v['role_prompt']!r}")
            with open(os.path.join(project, ".bmad", "prompts", "po.md"), "w") as f:
                f.write("# Role: our PO\n")
            v = await run.ok({"action": "start", "cwd": project, "objective": "Build a wiki"}, "po", "generating")
            check(v["role_prompt_source"] == "project file .bmad/prompts/po.md", f"source {v['role_prompt_source']}")
            run.session_id = v["session_id"]
            task = v["task_name"]

            # Resources: listed concretely, read as stored.
            listed = (await client.list_resources()).resources
            uris = [r.uri for r in listed]
            check(str(uris[0]) == "bmad://sessions" and listed[0].mime_type == "application/json", f"first {uris[:1]}")
            session_uri = f"bmad://sessions/{run.session_id}"
            check(session_uri in [str(u) for u in uris], f"{session_uri} listed in {uris}")
            read = await client.read_resource(session_uri)
            stored = open(os.path.join(project, ".bmad-task", f"session-{run.session_id}.json")).read()
            check(read.contents[0].text == stored and read.contents[0].mime_type == "application/json",
                  "the session resource is the file as stored")
            page = json.loads((await client.read_resource("bmad://sessions")).contents[0].text)
            check(page["total"] == 2 and page["sessions"][0]["task_name"] == task, f"sessions page {page}")
            try:
                await client.read_resource(f"{session_uri}/architect")
                check(False, "a stage without a document is refused")
            except MCPError as e:
                expected = -32002 if mode == "legacy" else -32602
                check(e.code == expected and "has no architect document yet" in str(e), f"error {e.code} {e}")
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            check(templates == ["bmad://sessions/{session_id}", "bmad://sessions/{session_id}/{stage}"],
                  f"templates {templates}")

            # The briefing, for the task updated last.
            text = await prompt_text(client, "resume", {})
            check(len(text.encode()) <= 4096, f"briefing of {len(text.encode())} bytes")
            check(f"task `{task}`" in text and "stage Product Owner (po), state generating" in text,
                  f"briefing {text!r}")
            text = await prompt_text(client, "status", {"task": task})
            check(f"`{task}`" in text, f"status prompt {text!r}")
        return negotiated


def main():
    run_from_command_line("host_client.py", drive, "prompts, resources and prompt overrides checked")


if __name__ == "__main__":
    main()
