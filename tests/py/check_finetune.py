"""Checks an AlphaScout fine-tuning export the way a trainer would take it.

Usage: check_finetune.py DIR SECRET...

DIR holds the unzipped export (README.md, train.jsonl, validation.jsonl). Every line is
checked against the rules of an OpenAI-style chat fine-tuning file, the files are loaded
with Hugging Face `datasets` (by file, and by the card's own `configs`), and none of the
SECRETs may appear anywhere. Prints a JSON summary; exits non-zero on the first problem.
"""

import json
import os
import sys

ROLES = {"system", "user", "assistant"}
# The Navigator's answer schema, as the prompt files ship it: a target must have its shape.
with open(os.path.join(os.path.dirname(__file__), "..", "..", "prompts", "navigator", "schema.json"), encoding="utf-8") as f:
    NAVIGATOR_SCHEMA = json.load(f)
MESSAGE_KEYS = {"role", "content", "name", "weight"}
IMAGE_PREFIXES = ("data:image/jpeg;base64,", "data:image/png;base64,", "data:image/webp;base64,", "https://")


def fail(where, why):
    print(f"{where}: {why}", file=sys.stderr)
    sys.exit(1)


def check_parts(where, role, content):
    if not content:
        fail(where, "an empty list of content parts")
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in ("text", "image_url"):
            fail(where, f"a content part of unknown type: {part!r:.80}")
        if part["type"] == "text":
            if not isinstance(part.get("text"), str) or set(part) - {"type", "text"}:
                fail(where, "a text part needs a string 'text' and nothing else")
        else:
            if role != "user":
                fail(where, f"an image in a {role} message (images go in user messages only)")
            url = (part.get("image_url") or {}).get("url")
            if not isinstance(url, str) or not url.startswith(IMAGE_PREFIXES):
                fail(where, "an image_url part needs a data: or https: url")


def check_example(where, example):
    """The rules an OpenAI-style chat fine-tuning validator applies to one line."""
    if not isinstance(example, dict):
        fail(where, "not a JSON object")
    if set(example) != {"messages"}:
        fail(where, f"unexpected top-level keys {sorted(set(example) - {'messages'})}")
    messages = example["messages"]
    if not isinstance(messages, list) or not messages:
        fail(where, "'messages' is not a non-empty list")
    shapes = set()
    for i, message in enumerate(messages):
        at = f"{where} message {i}"
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            fail(at, "a message needs a role and content")
        if set(message) - MESSAGE_KEYS:
            fail(at, f"unrecognized keys {sorted(set(message) - MESSAGE_KEYS)}")
        if message["role"] not in ROLES:
            fail(at, f"unrecognized role {message['role']!r}")
        content = message["content"]
        if isinstance(content, str):
            if not content.strip():
                fail(at, "empty content")
            shapes.add("text")
        elif isinstance(content, list):
            check_parts(at, message["role"], content)
            shapes.add("parts")
        else:
            fail(at, "content is neither a string nor a list of parts")
    if len(shapes) != 1:
        fail(where, "content mixes strings and lists of parts (one table shape per file)")
    roles = [m["role"] for m in messages]
    if "system" in roles[1:]:
        fail(where, "a system message after the first")
    if roles[-1] != "assistant":
        fail(where, "the last message (the target) is not the assistant's")
    if "user" not in roles:
        fail(where, "no user message")
    return messages[-1]


def answer_text(message):
    content = message["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content if p["type"] == "text")


def main():
    folder, secrets = sys.argv[1], sys.argv[2:]
    files = {split: os.path.join(folder, f"{split}.jsonl") for split in ("train", "validation")}
    files = {split: path for split, path in files.items() if os.path.exists(path)}
    if "train" not in files:
        fail(folder, "no train.jsonl")
    counts = {}
    for split, path in files.items():
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for n, line in enumerate(lines, 1):
            where = f"{split}.jsonl line {n}"
            try:
                example = json.loads(line)
            except json.JSONDecodeError as e:
                fail(where, f"not JSON: {e}")
            target = check_example(where, example)
            answer = json.loads(answer_text(target))
            state = answer.get("current_state", {})
            if sorted(answer) != sorted(NAVIGATOR_SCHEMA["required"]):
                fail(where, f"the target's keys {sorted(answer)} are not the Navigator's answer")
            if sorted(state) != sorted(NAVIGATOR_SCHEMA["properties"]["current_state"]["required"]):
                fail(where, "the target's current_state is not the Navigator's (its three thoughts)")
            if not 1 <= len(answer.get("actions", [])) <= 5:
                fail(where, "the target has no actions, or more than the schema's five")
        counts[split] = len(lines)

    from datasets import load_dataset

    loaded = load_dataset("json", data_files=files)
    by_card = load_dataset(folder)
    for split, count in counts.items():
        if loaded[split].num_rows != count or by_card[split].num_rows != count:
            fail(split, f"datasets read {loaded[split].num_rows} / {by_card[split].num_rows} rows of {count}")
    first = loaded["train"][0]["messages"]
    if [m["role"] for m in first] != ["system", "user", "assistant"]:
        fail("datasets", "the loaded messages lost their roles")

    everything = ""
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            everything += f.read()
    for secret in secrets:
        if secret in everything:
            fail(folder, "a secret appears in the export")

    print(json.dumps({"counts": counts, "columns": loaded["train"].column_names,
                      "splits_from_card": sorted(by_card.keys())}))


if __name__ == "__main__":
    main()
