"""Drives a gateway with the official Python SDK (`mcp` on PyPI, .ci/sdk/requirements.txt).

  py_client.py --stdio "CMD ARGS..." | --url URL

Lists and calls tools, gets prompts, reads resources and templates, and has a long call
report progress and a tool ask for sampling; prints one JSON document of what it saw.
"""
import argparse
import asyncio
import json
import shlex
import sys

from mcp import Client, types
from mcp.client.stdio import StdioServerParameters


def dump(obj):
    return obj.model_dump(mode="json", by_alias=True, exclude_none=True)


async def sample(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled by the python client"),
        model="test-model",
    )


async def run(ns):
    if ns.stdio:
        argv = shlex.split(ns.stdio)
        target = StdioServerParameters(command=argv[0], args=argv[1:])
    else:
        target = ns.url
    out = {}
    async with Client(target, read_timeout_seconds=60, sampling_callback=sample, cache=None) as client:
        out["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        out["echo"] = dump(await client.call_tool("everything_echo", {"message": "from python"}))
        out["prompts"] = [prompt.name for prompt in (await client.list_prompts()).prompts]
        out["args_prompt"] = dump(
            await client.get_prompt("everything_args-prompt", {"city": "Oslo", "state": "Viken"})
        )
        out["own_prompt"] = dump(await client.get_prompt("own", {}))
        out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
        out["templates"] = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
        out["static"] = dump(await client.read_resource("demo://resource/static/document/features.md"))
        out["dynamic"] = dump(await client.read_resource("demo://resource/dynamic/text/7"))
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        out["long"] = dump(
            await client.call_tool(
                "everything_trigger-long-running-operation",
                {"duration": 1, "steps": 3},
                progress_callback=on_progress,
            )
        )
        out["progress"] = progress
        out["sampling"] = dump(
            await client.call_tool("everything_trigger-sampling-request", {"prompt": "hi"})
        )
    return out


def main():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio")
    group.add_argument("--url")
    ns = parser.parse_args()
    print(json.dumps(asyncio.run(asyncio.wait_for(run(ns), 240))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
