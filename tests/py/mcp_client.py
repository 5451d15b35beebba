"""An MCP client written with the official Python SDK (PyPI `mcp`), driven line by line.

    mcp_client.py stdio <client name> <alphascout-mcp binary> <ALPHASCOUT_MCP_DIR>
    mcp_client.py http <client name> <url> <bearer token>

It connects (stdio: starting `alphascout-mcp stdio` as a desktop client does; http: the
streamable HTTP endpoint with the token), says `{"ready": true}`, then reads one JSON
command a line from stdin and writes one JSON line per event to stdout:

    {"op": "list_tools", "tag": "t"}          -> {"tag": "t", "tools": [...]}
    {"op": "call", "tag": "t", "tool": "run_task", "arguments": {...}}
        -> {"tag": "t", "progress": 1.0, "message": "..."}   (one per notification)
        -> {"tag": "t", "result": {"content": [...], "structured": {...}, "is_error": false}}
           or {"tag": "t", "error": {"code": -32602, "message": "..."}}
    {"op": "quit"}

Calls run concurrently, so a test can start a job, look at the browser, and start another.
A `notifications/tools/list_changed` is written as {"event": "tools_changed"}.
"""

import asyncio
import json
import sys

from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def say(line):
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def on_message(message):
    if isinstance(message, types.ServerNotification) and isinstance(
        message.root, types.ToolListChangedNotification
    ):
        say({"event": "tools_changed"})


async def call(session, command):
    tag = command.get("tag")

    async def progress(done, total, message):
        say({"tag": tag, "progress": done, "total": total, "message": message})

    try:
        result = await session.call_tool(
            command["tool"], command.get("arguments") or {}, progress_callback=progress
        )
        content = [block.model_dump(mode="json", exclude_none=True) for block in result.content]
        say(
            {
                "tag": tag,
                "result": {
                    "content": content,
                    "structured": result.structuredContent,
                    "is_error": result.isError,
                },
            }
        )
    except McpError as error:
        say({"tag": tag, "error": {"code": error.error.code, "message": error.error.message}})


async def serve(session):
    await session.initialize()
    say({"ready": True})
    loop = asyncio.get_running_loop()
    calls = []
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        command = json.loads(line)
        if command["op"] == "quit":
            break
        if command["op"] == "list_tools":
            try:
                listed = await session.list_tools()
                tools = [tool.model_dump(mode="json", exclude_none=True) for tool in listed.tools]
                say({"tag": command.get("tag"), "tools": tools})
            except McpError as error:
                say(
                    {
                        "tag": command.get("tag"),
                        "error": {"code": error.error.code, "message": error.error.message},
                    }
                )
        elif command["op"] == "call":
            calls.append(asyncio.create_task(call(session, command)))
    for task in calls:
        task.cancel()


async def main():
    transport, name = sys.argv[1], sys.argv[2]
    info = types.Implementation(name=name, version="1.0.0")
    if transport == "stdio":
        binary, directory = sys.argv[3], sys.argv[4]
        params = StdioServerParameters(
            command=binary, args=["stdio"], env={"ALPHASCOUT_MCP_DIR": directory}
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=info, message_handler=on_message) as s:
                await serve(s)
    else:
        url, token = sys.argv[3], sys.argv[4]
        headers = {"Authorization": f"Bearer {token}"}
        async with streamablehttp_client(url, headers=headers) as (read, write, _):
            async with ClientSession(read, write, client_info=info, message_handler=on_message) as s:
                await serve(s)


asyncio.run(main())
