"""Checks provider JSON against the providers' own SDK types (pinned in scripts/test).

Usage: validate.py CASES.json, where CASES.json is a list of
  {"name", "provider", "kind": "response" | "chunk" | "event" | "message", "value"}.
Responses, stream chunks and stream events are parsed with the SDK's response types (so the
fixtures are known-true shapes); messages are validated with the SDK's request parameter types
and must survive validation unchanged (no key the type does not declare, no wrong type).
Prints one line per failure and exits 1 if there was any.
"""

import collections.abc
import json
import sys

import pydantic
from anthropic.types import Message, MessageParam, RawMessageStreamEvent
from google.genai import types as genai
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam
from openai.types.responses import Response, ResponseInputItemParam


def materialize(value):
    """Consumes the lazy validators pydantic puts on `Iterable` fields (which validates them)."""
    if isinstance(value, dict):
        return {k: materialize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [materialize(v) for v in value]
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, collections.abc.Iterable):
        return [materialize(v) for v in value]
    return value


def typed_dict(adapter, value):
    checked = materialize(adapter.validate_python(value))
    if checked != value:
        raise ValueError(
            "the SDK type does not keep the value as sent (an undeclared key or a coerced "
            f"value): sent {json.dumps(value)}, typed {json.dumps(checked, default=str)}"
        )


RESPONSES = {
    "openai-chat": lambda v: ChatCompletion.model_validate(v),
    "openai-responses": lambda v: Response.model_validate(v),
    "anthropic": lambda v: Message.model_validate(v),
    "gemini": lambda v: genai.GenerateContentResponse.model_validate_json(json.dumps(v)),
}
CHUNKS = {
    "openai-chat": lambda v: ChatCompletionChunk.model_validate(v),
    "anthropic": lambda v: pydantic.TypeAdapter(RawMessageStreamEvent).validate_python(v),
}
chat_message = pydantic.TypeAdapter(ChatCompletionMessageParam)
responses_item = pydantic.TypeAdapter(ResponseInputItemParam)
anthropic_message = pydantic.TypeAdapter(MessageParam)


def gemini_content(value):
    content = genai.Content.model_validate_json(json.dumps(value))
    if content.role != "user":
        raise ValueError(f"role {content.role!r} is not \"user\"")
    for part in content.parts or []:
        if part.function_response is not None and part.function_response.response is None:
            raise ValueError("functionResponse without response")


MESSAGES = {
    "openai-chat": lambda v: typed_dict(chat_message, v),
    "openai-responses": lambda v: typed_dict(responses_item, v),
    "anthropic": lambda v: typed_dict(anthropic_message, v),
    "gemini": gemini_content,
}
TABLES = {"response": RESPONSES, "chunk": CHUNKS, "event": CHUNKS, "message": MESSAGES}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    failures = 0
    for case in cases:
        check = TABLES[case["kind"]][case["provider"]]
        try:
            check(case["value"])
        except Exception as error:  # noqa: BLE001 - every failure is reported
            failures += 1
            detail = str(error).replace("\n", " | ")
            print(f"FAIL {case['name']} ({case['provider']} {case['kind']}): {detail}")
    print(f"{len(cases) - failures} valid, {failures} invalid")
    sys.exit(1 if failures else 0)


main()
