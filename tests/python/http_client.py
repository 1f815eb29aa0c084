"""The official MCP Python SDK as an HTTP client of `bmad-mcp serve --http`:

    python http_client.py <bmad-mcp binary> <legacy|auto>

Starts the server on a free loopback port with the project as its one `--root`, connects by URL, takes a PRD
to the gate, lets the scripted human confirm it in the client's dialog (legacy: the server
asks on the call's event stream; auto: an input-required result), checks that a project
outside the root is refused with `forbidden_project`, lists the resources, and stops the
server with SIGTERM: exit status 0. Exits non-zero with a message on the first failed check.
tests/it/python_sdk.rs runs it.
"""

import os
import signal
import subprocess
import tempfile
import threading

import mcp_types as types
from mcp import Client

from sdk_client import EXPECTED_VERSION, Run, check, fixture, run_from_command_line


def start_server(binary, root):
    """The server on a free port; its URL, read from the line it logs when listening."""
    env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn", "XDG_CONFIG_HOME": "/nonexistent/bmad-mcp-tests/config"}
    proc = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:0", "--root", root],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)
    marker = "serving MCP over streamable HTTP at "
    for line in proc.stderr:
        if marker in line:
            url = line.split(marker, 1)[1].split()[0]
            # Keep reading stderr, so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, url
    proc.kill()
    raise RuntimeError(f"the server did not start (exit {proc.wait()})")


async def drive(binary, mode):
    with tempfile.TemporaryDirectory(prefix="bmad-pyhttp-") as tmp:
        project = os.path.realpath(tmp)
        outside = tempfile.mkdtemp(prefix="bmad-pyhttp-outside-")
        proc, url = start_server(binary, project)
        shown = []

        async def human(context, params):
            shown.append(params.message)
            return types.ElicitResult(action="accept", content={"decision": "confirm"})

        try:
            async with Client(url, mode=mode, elicitation_callback=human) as client:
                negotiated = client.protocol_version
                check(negotiated == EXPECTED_VERSION[mode], f"negotiated {negotiated}")
                run = Run(client)
                v = await run.ok({"action": "start", "cwd": project, "objective": "Build a team todo app"},
                                 "po", "generating")
                run.session_id = v["session_id"]
                v = await run.ok({"action": "submit", "cwd": project, "claude_result": fixture("po-final.json")},
                                 "po", "awaiting_confirmation")
                digest = v["document_digest"]
                v = await run.ok({"action": "confirm", "cwd": project}, "architect", "generating")
                check(len(shown) == 1 and f"sha256 {digest}" in shown[0], f"the dialog showed {shown}")
                _, s = await run.call({"action": "status", "cwd": project})
                last = s["session"]["history"][-1]
                check((last["decided_by"], last["via"]) == ("human", "elicitation"), f"recorded {last}")

                is_error, v = await run.call({"action": "start", "cwd": outside, "objective": "Escape"})
                check(is_error and v["error"]["code"] == "forbidden_project", f"outside the root: {v}")

                # With one root, the resources are that project's.
                listed = [str(r.uri) for r in (await client.list_resources()).resources]
                check(f"bmad://sessions/{run.session_id}/po" in listed, f"resources {listed}")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
            os.rmdir(outside)
        check(code == 0, f"SIGTERM: exit status {code}")
        return negotiated


def main():
    run_from_command_line("http_client.py", drive, "over HTTP: a decision in the dialog, "
                          "a project outside the root refused, SIGTERM exits 0")


if __name__ == "__main__":
    main()
