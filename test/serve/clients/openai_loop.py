"""A tool loop written the way a Python agent author writes one with the official `openai` package.

Usage: python openai_loop.py '<json config>'
  config: base_url, api ("chat" | "responses"), stream (bool), model, system, task,
          files (directory read_file reads from), max_turns, headers (extra request headers)

The model may call read_file(path); the loop reads that file from `files` and sends the whole
history back every turn, until the model answers without a call. One JSON line per turn goes
to stdout: the text, the calls, and for streams whether the deltas add up to the final values
(`intact`). The last line is {"final": text}.
"""

import json
import os
import sys

from openai import OpenAI

cfg = json.loads(sys.argv[1])
client = OpenAI(
    base_url=cfg["base_url"],
    api_key="sk-test-not-a-real-key",
    max_retries=0,
    default_headers=cfg.get("headers") or None,
)
PARAMETERS = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Path relative to the repository root"}},
    "required": ["path"],
    "additionalProperties": False,
}
DESCRIPTION = "Read a source file of the repository and return its text."


def read_file(arguments):
    path = json.loads(arguments)["path"]
    with open(os.path.join(cfg["files"], path), encoding="utf-8") as f:
        return f.read()


def emit(record):
    print(json.dumps(record), flush=True)


def chat_turn(messages):
    tools = [{"type": "function", "function": {"name": "read_file", "description": DESCRIPTION, "parameters": PARAMETERS}}]
    if not cfg["stream"]:
        r = client.chat.completions.create(model=cfg["model"], messages=messages, tools=tools)
        m = r.choices[0].message
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in m.tool_calls or []]
        return m.content or "", calls, {"id": r.id, "finish": r.choices[0].finish_reason, "usage": r.usage.prompt_tokens}
    text, calls, finish, usage, chunks, ids = "", {}, None, None, 0, set()
    stream = client.chat.completions.create(
        model=cfg["model"], messages=messages, tools=tools, stream=True, stream_options={"include_usage": True}
    )
    for chunk in stream:
        chunks += 1
        ids.add(chunk.id)
        if chunk.usage is not None:
            usage = chunk.usage.prompt_tokens
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for d in choice.delta.tool_calls or []:
                c = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                c["id"] += d.id or ""
                c["name"] += (d.function.name or "") if d.function else ""
                c["arguments"] += (d.function.arguments or "") if d.function else ""
            finish = choice.finish_reason or finish
    calls = [calls[i] for i in sorted(calls)]
    intact = finish is not None and len(ids) == 1 and all(is_json(c["arguments"]) for c in calls)
    return text, calls, {"id": ids.pop() if ids else None, "finish": finish, "usage": usage, "chunks": chunks, "intact": intact}


def chat_loop():
    messages = [{"role": "system", "content": cfg["system"]}, {"role": "user", "content": cfg["task"]}]
    for _ in range(cfg["max_turns"]):
        text, calls, info = chat_turn(messages)
        emit({"text": text, "calls": calls, **info})
        assistant = {"role": "assistant", "content": text}
        if calls:
            assistant["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in calls
            ]
        messages.append(assistant)
        if not calls:
            return text
        for c in calls:
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": read_file(c["arguments"])})
    raise SystemExit("the loop did not end within max_turns")


def responses_turn(items):
    tools = [{"type": "function", "name": "read_file", "description": DESCRIPTION, "parameters": PARAMETERS, "strict": True}]
    args = dict(model=cfg["model"], instructions=cfg["system"], input=items, tools=tools)
    if not cfg["stream"]:
        r = client.responses.create(**args)
        return r, {"id": r.id, "usage": r.usage.input_tokens}
    deltas, args_deltas, done_text, done_args, final, events = {}, {}, {}, {}, None, 0
    for event in client.responses.create(**args, stream=True):
        events += 1
        if event.type == "response.output_text.delta":
            deltas[event.item_id] = deltas.get(event.item_id, "") + event.delta
        elif event.type == "response.output_text.done":
            done_text[event.item_id] = event.text
        elif event.type == "response.function_call_arguments.delta":
            args_deltas[event.item_id] = args_deltas.get(event.item_id, "") + event.delta
        elif event.type == "response.function_call_arguments.done":
            done_args[event.item_id] = event.arguments
        elif event.type == "response.completed":
            final = event.response
    if final is None:
        raise SystemExit("the stream ended without response.completed")
    intact = deltas == done_text and args_deltas == done_args
    for item in final.output:
        if item.type == "message":
            intact = intact and done_text.get(item.id) == "".join(p.text for p in item.content)
        elif item.type == "function_call":
            intact = intact and done_args.get(item.id) == item.arguments
    usage = final.usage.input_tokens if final.usage else None
    return final, {"id": final.id, "usage": usage, "events": events, "intact": intact}


def responses_loop():
    items = [{"role": "user", "content": cfg["task"]}]
    for _ in range(cfg["max_turns"]):
        r, info = responses_turn(items)
        text = "".join(p.text for item in r.output if item.type == "message" for p in item.content)
        calls = [{"id": i.call_id, "name": i.name, "arguments": i.arguments} for i in r.output if i.type == "function_call"]
        emit({"text": text, "calls": calls, **info})
        items += r.output
        if not calls:
            return text
        for c in calls:
            items.append({"type": "function_call_output", "call_id": c["id"], "output": read_file(c["arguments"])})
    raise SystemExit("the loop did not end within max_turns")


def is_json(s):
    try:
        json.loads(s)
        return True
    except ValueError:
        return False


emit({"final": chat_loop() if cfg["api"] == "chat" else responses_loop()})
