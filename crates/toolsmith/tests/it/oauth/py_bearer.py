"""Calls an OAuth-protected Toolsmith with the official Python SDK (`mcp` on PyPI,
.ci/sdk/requirements.txt), sending an access token as a bearer token on every request.

  py_bearer.py URL TOKEN

Lists the tools and calls each tool named after the token; prints one JSON document:
{"tools": [...], "calls": {name: result}}.
"""
import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def run(url, token, calls):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    out = {"calls": {}}
    async with http, Client(streamable_http_client(url, http_client=http), read_timeout_seconds=30) as client:
        out["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            out["calls"][name] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    print(json.dumps(out))


if __name__ == "__main__":
    url, token, *rest = sys.argv[1:]
    calls = [(rest[i], json.loads(rest[i + 1])) for i in range(0, len(rest), 2)]
    asyncio.run(run(url, token, calls))
