"""FastMCP's own client reads the skills a Toolsmith server serves (SEP-2640).

Run by crates/toolsmith/tests/it/skills_serving.rs:

    fastmcp_skills.py (--url URL | --stdio COMMAND) [--tamper FILE]

Lists the skills (`skills/list`), reads every one with `read_skill()` (which fetches each
file with `resources/read` and checks its size and sha256 digest against `skills/get`),
and prints what it saw as JSON. With --tamper FILE (a file of the first skill, served with
--watch), it then changes FILE on disk, waits until the server serves the new bytes, and
reads the skill again against the manifest it listed before the change: FastMCP's check
must refuse it.
"""

import argparse
import asyncio
import json
import shlex
import sys
import time

from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from fastmcp.skills import SkillsClientExtension


def target(args):
    if args.url:
        return args.url
    command, *rest = shlex.split(args.stdio)
    return StdioTransport(command=command, args=rest)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--stdio")
    parser.add_argument("--tamper")
    args = parser.parse_args()
    seen = {}
    async with Client(target(args), extensions=[SkillsClientExtension()]) as client:
        seen["protocol"] = client.protocol_version
        listed = await client.list_skills()
        seen["skills"] = [skill.frontmatter.name for skill in listed]
        seen["read"] = {}
        for entry in listed:
            skill = await client.read_skill(entry.uri)
            seen["read"][skill.name] = {
                "files": sorted(skill.files),
                "description": skill.frontmatter.description,
            }
        # What a client of the 2025-11-25 era sees: the same files, as resources.
        resources = await client.list_resources()
        seen["resources"] = sorted(
            str(r.uri) for r in resources if str(r.uri).startswith("skill://")
        )
        if args.tamper:
            name = "/" + args.tamper.replace("\\", "/").rsplit("/", 1)[-1]
            entry, file_uri = next(
                (skill, r.uri)
                for skill in listed
                for r in skill.resources
                if r.uri.endswith(name)
            )
            before = await client.read_resource(file_uri)
            with open(args.tamper, "a", encoding="utf-8") as file:
                file.write("\ntampered after listing\n")
            deadline = time.monotonic() + 20
            while (await client.read_resource(file_uri)) == before:
                if time.monotonic() > deadline:
                    raise SystemExit("the server never served the changed file")
                await asyncio.sleep(0.1)

            async def as_listed(uri, **_):
                return next(skill for skill in listed if skill.uri == uri)

            client.get_skill = as_listed
            try:
                await client.read_skill(entry.uri)
                seen["tamper"] = None
            except ValueError as error:
                seen["tamper"] = str(error)
    json.dump(seen, sys.stdout)


asyncio.run(main())
