#!/usr/bin/env python3
"""A FastMCP server over stdio, an upstream of the gateway tests (upstream_fastmcp.rs).

  .ci/sdk/.venv/bin/python server.py

FastMCP (pip `fastmcp`, pinned in .ci/sdk/requirements.txt) as a user writes it: a text
tool, a structured one, one that fails, one that reports progress and logs, and one that
asks the user for their name by elicitation.
"""
import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from typing_extensions import TypedDict  # noqa: E402  (pydantic needs it on Python 3.11)

from fastmcp import Context, FastMCP  # noqa: E402
from fastmcp.exceptions import ToolError  # noqa: E402

mcp = FastMCP("fast")


class Sum(TypedDict):
    sum: int


@mcp.tool
def echo(text: str) -> str:
    """Echo the given text back."""
    return text


@mcp.tool
def add(a: int, b: int) -> Sum:
    """Add two integers; returns structured {sum}."""
    return {"sum": a + b}


@mcp.tool
def fail() -> str:
    """Always fails with a tool error (isError: true)."""
    raise ToolError("fail: this tool always fails")


@mcp.tool
async def count(steps: int, ctx: Context) -> str:
    """Count to `steps`, reporting each step as progress, and log when done."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    await ctx.warning(f"counted to {steps}")
    return f"counted to {steps}"


@mcp.tool
async def greet(ctx: Context) -> str:
    """Ask the user for their name, then greet them."""
    answer = await ctx.elicit("What is your name?", response_type=str)
    if answer.action == "accept":
        return f"Hello, {answer.data}!"
    return f"No name ({answer.action})"


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
