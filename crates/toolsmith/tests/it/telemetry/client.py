"""FastMCP's client calls tools inside a span of its own, for
crates/toolsmith/tests/it/telemetry.rs.

    client.py COMMAND TOOL...

Starts COMMAND (a `toolsmith serve` over stdio) with the OTEL_* variables of this process,
and calls each TOOL (no arguments) while a span of the caller's is current. FastMCP's
client puts that span's W3C trace context in each request's `_meta` (`traceparent`), as
OpenTelemetry's MCP conventions say. This venv has the OpenTelemetry API without an SDK,
so the span is a non-recording one with ids made here, and FastMCP's own client span is
that same span. Prints the ids and each call's error flag as JSON.
"""

import asyncio
import json
import os
import random
import shlex
import sys

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags


async def main():
    command, *rest = shlex.split(sys.argv[1])
    env = {key: value for key, value in os.environ.items() if key.startswith("OTEL_")}
    env["PATH"] = os.environ["PATH"]
    caller = SpanContext(
        trace_id=random.getrandbits(128) or 1,
        span_id=random.getrandbits(64) or 1,
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    seen = {
        "trace_id": format(caller.trace_id, "032x"),
        "span_id": format(caller.span_id, "016x"),
        "calls": {},
    }
    async with Client(StdioTransport(command=command, args=rest, env=env)) as client:
        with trace.use_span(NonRecordingSpan(caller)):
            for tool in sys.argv[2:]:
                result = await client.call_tool(tool, {}, raise_on_error=False)
                seen["calls"][tool] = result.is_error
        # The upstream exports its spans on its own schedule; it is stopped with the gateway.
        await asyncio.sleep(1.0)
    print(json.dumps(seen))


asyncio.run(main())
