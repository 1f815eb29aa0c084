"""A scripted fake model API on 127.0.0.1 for the host end-to-end tests (tests/it/hosts.rs).

It speaks the four wire formats the agent hosts use, streaming where the real API streams:
the OpenAI Responses API (Codex CLI), the Gemini API (Gemini CLI, with its non-streaming
"router" call), OpenAI Chat Completions (opencode, Copilot CLI) and the Anthropic Messages
API (Claude Code). It has no state: the
step it plays is the number of tool results already in the conversation the host sends, so
a host that retries gets the same answer. Each step calls the bmad tool (found among the
tools the host offers by its name) or the host's shell tool, with `{session_id}` in an
argument replaced by the last session id a tool result showed.

Usage: fake_model.py SCRIPT.json. The script names `port_file` (the port is written there
once listening), `log` (one JSON line per request: the API, the tool names offered, and the
text of every tool result in the conversation, as the host gave it to the model), `steps`
and `shell` ({"names": [...], "arg": "command", "extra": {...}}). Its `final` answer is the
model's last text; `{relay}` in it stands for the `user_message` of the last tool result, as
a model that shows it to the person (what each reply's `next_step` asks) would relay it.
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOCK = threading.Lock()
SESSION = re.compile(r"session_id\W{1,6}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def log(record):
    with LOCK, open(SCRIPT["log"], "a") as f:
        f.write(json.dumps(record) + "\n")


def text_of(value):
    """The text of a tool result as the host put it in the conversation."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(text_of(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "response", "result"):
            if key in value:
                return text_of(value[key])
        return json.dumps(value)
    return json.dumps(value)


def fill(value, results, prompt=""):
    ids = [m for r in results for m in SESSION.findall(r)]
    sid = ids[-1] if ids else "none"
    own = SESSION.findall(prompt)
    if isinstance(value, str):
        return value.replace("{session_id}", sid).replace("{prompt_session}", own[0] if own else "none")
    if isinstance(value, dict):
        return {k: fill(v, results, prompt) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, results, prompt) for v in value]
    return value


def steps_for(prompt):
    """The script's steps: those of the first `by_prompt` entry whose `when` strings are all
    in the prompt the host was given (one fake serves many sessions, each its own script),
    else `steps`."""
    for entry in SCRIPT.get("by_prompt", []):
        if all(w in prompt for w in entry["when"]):
            return entry["steps"]
    return SCRIPT["steps"]


def prompt_text(messages):
    """The text of the user's messages before the first tool result: the prompt."""
    text = []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            text.append(content)
            continue
        blocks = [c for c in content or [] if isinstance(c, dict)]
        if any(c.get("type") in ("tool_result", "function_call_output") for c in blocks):
            break
        text += [c.get("text", "") for c in blocks]
    return "\n".join(text)


def user_message(result):
    """The `user_message` a tool result's text gives: its first line beside the key, the
    rest indented beneath (or, in a result a host gave as JSON, escaped)."""
    text = result.replace("\\n", "\n")
    at = text.find("user_message: ")
    if at < 0:
        return "(no user_message)"
    lines = text[at + len("user_message: "):].split("\n")
    said = [lines[0]]
    for line in lines[1:]:
        if not line.startswith("  "):
            break
        said.append(line[2:])
    return "\n".join(said)


def final_text(results):
    """The model's last answer: the script's `final`, the last user_message relayed."""
    text = SCRIPT.get("final", "Done.")
    if "{relay}" in text:
        text = text.replace("{relay}", user_message(results[-1]) if results else "")
    return text


def next_call(tool_names, results, prompt=""):
    """The tool to call and its arguments, or None for the final answer."""
    steps = steps_for(prompt)
    if len(results) >= len(steps):
        return None
    step = steps[len(results)]
    if step["tool"] == "bmad":
        # A host that does not offer the tool gets the final answer: the log shows it.
        name = next((n for n in tool_names if "bmad" in n), None)
        return name and (name, fill(step["args"], results, prompt))
    shell = SCRIPT["shell"]
    name = next(n for n in shell["names"] if n in tool_names)
    args = dict(shell.get("extra", {}))
    args[shell["arg"]] = fill(step["command"], results, prompt)
    return name, args


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        # Model catalogues: one model.
        body = json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}], "models": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else self.read_chunked()
        body = json.loads(raw or b"{}")
        path = self.path
        if path.endswith("/responses"):
            self.openai_responses(body)
        elif ":streamGenerateContent" in path:
            self.gemini(body, stream=True)
        elif ":generateContent" in path:
            self.gemini(body, stream=False)
        elif path.endswith("/chat/completions"):
            self.chat(body)
        elif path.split("?")[0].endswith("/v1/messages"):
            self.anthropic(body)
        elif path.split("?")[0].endswith("/v1/messages/count_tokens"):
            self.json_reply({"input_tokens": 10})
        else:
            log({"api": "unknown", "path": path})
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    def read_chunked(self):
        data = b""
        while True:
            size = int(self.rfile.readline().strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return data
            data += self.rfile.read(size)
            self.rfile.readline()

    def sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(event.encode())
            self.wfile.flush()
        self.close_connection = True

    # OpenAI Responses API (Codex CLI).
    def openai_responses(self, body):
        tools = []
        for t in body.get("tools", []):
            if t.get("type") == "namespace":
                tools += [(t["name"], s.get("name")) for s in t.get("tools", [])]
            else:
                tools.append((None, t.get("name")))
        results = [text_of(i.get("output")) for i in body.get("input", []) if i.get("type") == "function_call_output"]
        names = [n for _, n in tools]
        prompt = prompt_text([i for i in body.get("input", []) if i.get("type") in ("message", "function_call_output") or "role" in i])
        log({"api": "responses", "tools": names, "results": results, "body": body, "prompt_session": (SESSION.findall(prompt) or [None])[0], "usage": 15})
        call = next_call(names, results, prompt)
        n = len(results)
        if call is None:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                    "content": [{"type": "output_text", "text": final_text(results), "annotations": []}]}
        else:
            name, args = call
            item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
                    "arguments": json.dumps(args), "status": "completed"}
            space = next((ns for ns, t in tools if t == name), None)
            if space:
                item["namespace"] = space
        rid = f"resp_{n}"
        events = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": {
                "input_tokens": 10, "input_tokens_details": None, "output_tokens": 5,
                "output_tokens_details": None, "total_tokens": 15}}}),
        ]
        self.sse(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)

    # Gemini API (Gemini CLI).
    def gemini(self, body, stream):
        names = [f["name"] for t in body.get("tools", []) for f in t.get("functionDeclarations", [])]
        results = [text_of(p["functionResponse"].get("response"))
                   for c in body.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p]
        log({"api": "gemini", "stream": stream, "tools": names, "results": results, "body": body})
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        if not stream:
            # The router asks which model should answer, as JSON.
            text = json.dumps({"complexity_reasoning": "a scripted task", "complexity_score": 10})
            reply = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                     "finishReason": "STOP", "index": 0}], "usageMetadata": usage}
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        call = next_call(names, results) if names else None
        if call is None:
            part = {"text": final_text(results)}
        else:
            part = {"functionCall": {"name": call[0], "args": call[1]}}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": "fake-model"}
        self.sse([f"data: {json.dumps(chunk)}\r\n\r\n"])

    # OpenAI Chat Completions (opencode, Copilot CLI).
    def chat(self, body):
        names = [t["function"]["name"] for t in body.get("tools", []) if "function" in t]
        results = [text_of(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]
        log({"api": "chat", "tools": names, "results": results, "body": body})
        n = len(results)
        call = next_call(names, results) if names else None
        base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 1, "model": body.get("model", "fake-model")}
        if call is None:
            text = final_text(results) if names else "Scripted task"
            deltas = [({"role": "assistant", "content": text}, None), ({}, "stop")]
        else:
            tc = {"index": 0, "id": f"call_{n}", "type": "function",
                  "function": {"name": call[0], "arguments": json.dumps(call[1])}}
            deltas = [({"role": "assistant", "content": None, "tool_calls": [tc]}, None), ({}, "tool_calls")]
        events = []
        for delta, finish in deltas:
            chunk = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
            if finish:
                chunk["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            events.append(f"data: {json.dumps(chunk)}\n\n")
        events.append("data: [DONE]\n\n")
        self.sse(events)


    def json_reply(self, value):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # Anthropic Messages API (Claude Code).
    def anthropic(self, body):
        names = [t.get("name") for t in body.get("tools", []) if t.get("name")]
        results = []
        for m in body.get("messages", []):
            if m.get("role") != "user" or not isinstance(m.get("content"), list):
                continue
            for c in m["content"]:
                if c.get("type") == "tool_result":
                    results.append(text_of(c.get("content")))
        prompt = prompt_text(body.get("messages", []))
        log({"api": "anthropic", "stream": body.get("stream", False), "tools": names, "results": results, "body": body,
             "prompt_session": (SESSION.findall(prompt) or [None])[0], "usage": 15})
        n = len(results)
        call = next_call(names, results, prompt) if names else None
        usage = {"input_tokens": 10, "output_tokens": 5}
        if call is None:
            block = {"type": "text", "text": final_text(results) if names else "Scripted task"}
            stop = "end_turn"
        else:
            block = {"type": "tool_use", "id": f"toolu_{n}", "name": call[0], "input": call[1]}
            stop = "tool_use"
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
                   "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self.json_reply(message)
            return
        start = dict(message, content=[], stop_reason=None)
        if block["type"] == "text":
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = dict(block, input={})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events = [
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self.sse(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(SCRIPT["port_file"] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.replace(SCRIPT["port_file"] + ".tmp", SCRIPT["port_file"])
    server.serve_forever()


if __name__ == "__main__":
    main()
