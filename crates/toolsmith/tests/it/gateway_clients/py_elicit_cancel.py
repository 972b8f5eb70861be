"""Elicitation and cancellation through a gateway, with the official Python SDK (`mcp`).

  py_elicit_cancel.py --stdio "CMD ARGS..." --pidfile PATH

Calls server-everything's `trigger-elicitation-request` through the gateway and answers
the form it asks; then starts the inner Toolsmith's `linger` tool (which writes its pids to
PATH), and once it runs, cancels the call the way an SDK user does (cancelling the task
that waits for it); then checks the session still answers. Prints one JSON document.
"""
import argparse
import asyncio
import json
import os
import shlex

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters


def dump(obj):
    return obj.model_dump(mode="json", by_alias=True, exclude_none=True)


asked = []


async def elicit(context, params):
    asked.append(params.message)
    return types.ElicitResult(
        action="accept",
        content={"name": "Ada Lovelace", "check": True, "email": "ada@example.com", "integer": 42},
    )


async def run(ns):
    argv = shlex.split(ns.stdio)
    target = StdioServerParameters(command=argv[0], args=argv[1:])
    out = {}
    async with Client(target, read_timeout_seconds=60, elicitation_callback=elicit, cache=None) as client:
        out["elicited"] = dump(await client.call_tool("everything_trigger-elicitation-request", {}))
        out["asked"] = asked

        async def linger():
            await client.call_tool("inner_linger", {"pidfile": ns.pidfile})

        async with anyio.create_task_group() as group:
            group.start_soon(linger)
            while True:
                if os.path.exists(ns.pidfile) and len(open(ns.pidfile).read().split()) == 2:
                    break
                await anyio.sleep(0.05)
            # The SDK sends `notifications/cancelled` for a request whose caller is cancelled.
            group.cancel_scope.cancel()
        out["cancelled"] = True
        out["after"] = dump(await client.call_tool("everything_echo", {"message": "after the cancel"}))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stdio", required=True)
    parser.add_argument("--pidfile", required=True)
    ns = parser.parse_args()
    print(json.dumps(asyncio.run(asyncio.wait_for(run(ns), 240))))


if __name__ == "__main__":
    main()
