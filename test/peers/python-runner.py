#!/usr/bin/env python3
"""A second RunnerFrame runner, in Python (standard library only), written from
docs/process-runner.md and runner-frame.schema.json: an OpenAI chat-completions model loop
whose conversation is kept append-only in <dir>/conversation.jsonl. It proves the published
protocol is enough to write a runner in another language."""
import json
import os
import sys
import threading
import urllib.request

lock = threading.Lock()
sessions = {}  # attachment -> dict(dir, model, tools, provider, messages)
waits = {}  # tool.call id -> [threading.Event, result]
counter = [0]


def write(frame):
    with lock:
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()


def reply(req, **body):
    frame = {"attachment": req["attachment"], "id": req["id"]}
    if "turn" in req:
        frame["turn"] = req["turn"]
    frame.update(body)
    write(frame)


def append(state, message):
    state["messages"].append(message)
    with open(os.path.join(state["dir"], "conversation.jsonl"), "a") as f:
        f.write(json.dumps(message) + "\n")


def tool_call(req, call):
    with lock:
        counter[0] += 1
        tid = "py%d" % counter[0]
    waits[tid] = [threading.Event(), None]
    write({"attachment": req["attachment"], "turn": req["turn"], "id": tid, "method": "tool.call", "params": call})
    waits[tid][0].wait()
    return waits.pop(tid)[1]


def model_call(state, req):
    body = {
        "model": state["model"] or "default",
        "stream": True,
        "messages": [{"role": "system", "content": "You are a coding agent."}] + state["messages"],
        "tools": [{"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                    "parameters": t["input_schema"]}} for t in state["tools"]],
    }
    headers = {"content-type": "application/json"}
    if state["provider"].get("apiKey"):
        headers["authorization"] = "Bearer " + state["provider"]["apiKey"]
    request = urllib.request.Request(state["provider"]["baseUrl"].rstrip("/") + "/chat/completions",
                                     data=json.dumps(body).encode(), headers=headers, method="POST")
    text, finish, usage, calls = "", "stop", None, {}
    with urllib.request.urlopen(request) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            chunk = json.loads(line[5:])
            if chunk.get("usage"):
                usage = {"input": chunk["usage"].get("prompt_tokens", 0), "output": chunk["usage"].get("completion_tokens", 0)}
            for choice in chunk.get("choices", []):
                finish = choice.get("finish_reason") or finish
                delta = choice.get("delta", {})
                if delta.get("content"):
                    text += delta["content"]
                    write({"attachment": req["attachment"], "turn": req["turn"], "event": "assistant.delta",
                           "data": {"text": delta["content"]}})
                for part in delta.get("tool_calls") or []:
                    call = calls.setdefault(part.get("index", 0), {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.get("id") or call["id"]
                    call["name"] += (part.get("function") or {}).get("name") or ""
                    call["arguments"] += (part.get("function") or {}).get("arguments") or ""
    return text, finish, usage, [calls[k] for k in sorted(calls)]


def prompt(req):
    state = sessions[req["attachment"]]
    state["steering"] = []
    try:
        append(state, {"role": "user", "content": req["params"]["text"]})
        while True:
            while state["steering"]:  # steers are the next request's user messages
                append(state, {"role": "user", "content": state["steering"].pop(0)})
            text, finish, usage, calls = model_call(state, req)
            data = {"text": text, "stop_reason": finish}
            if usage:
                data["usage"] = usage
            write({"attachment": req["attachment"], "turn": req["turn"], "event": "assistant.message", "data": data})
            message = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [{"id": c["id"], "type": "function",
                                          "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
            append(state, message)
            if not calls and not state["steering"]:
                return reply(req, result={"stop_reason": finish})
            for call in calls:
                result = tool_call(req, {"id": call["id"], "name": call["name"], "arguments": json.loads(call["arguments"] or "{}")})
                append(state, {"role": "tool", "tool_call_id": call["id"], "content": result["content"]})
    except Exception as error:  # the model endpoint failed: the turn fails with provider_error
        reply(req, error={"code": "provider_error", "message": str(error)})


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        frame = json.loads(line)
        method = frame.get("method")
        if method is None and "result" in frame:
            waits[frame["id"]][1] = frame["result"]
            waits[frame["id"]][0].set()
        elif method == "open":
            params = frame["params"]
            path = os.path.join(params["dir"], "conversation.jsonl")
            messages = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
            sessions[frame["attachment"]] = {"dir": params["dir"], "model": params["config"].get("model"),
                                             "tools": params["tools"], "provider": params["provider"], "messages": messages}
            reply(frame, result={"resumed": len(messages) > 0})
        elif method == "prompt":
            threading.Thread(target=prompt, args=(frame,), daemon=True).start()
        elif method == "checkpoint":
            path = os.path.join(sessions[frame["attachment"]]["dir"], "conversation.jsonl")
            files = [{"path": "conversation.jsonl", "size": os.path.getsize(path)}] if os.path.exists(path) else []
            reply(frame, result={"files": files})
        elif method == "steer":
            sessions[frame["attachment"]].setdefault("steering", []).append(frame["params"]["text"])
            reply(frame, result={})
        elif method in ("interrupt", "detach"):
            reply(frame, result={})
        else:
            reply(frame, error={"code": "runner_error", "message": "unknown method %s" % method})


main()
