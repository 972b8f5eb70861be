#!/usr/bin/env python3
"""Turn the gathered corpus into a Toolsmith tools folder, one TOML manifest per tool.

    python3 bench/discovery/make_folder.py bench/discovery/corpus.json /tmp/corpus-tools [--flat]

Each server's tools go into a subfolder named by its slug (`github/create_issue.toml`), as
someone gathering the tools of many products into one folder would group them; `--flat`
writes every manifest directly into OUT_DIR instead.
A tool keeps its name when no other server in the corpus has one like it; names that
collide are written `<slug>_<name>`. Names outside `^[A-Za-z0-9_.-]{1,128}$` are
sanitized. OUT_DIR/_ids.json maps each corpus key "<slug>/<original name>" to the
folder's tool name (the `_` prefix keeps the folder loader from reading it).

Each input schema becomes `[[parameters]]` tables (name, type, description, required
and the JSON Schema keywords a parameter takes) plus `[params.NAME]` overlays for any
other keyword (anyOf, oneOf, $ref targets inlined, ...). TOML has no null, so null
values in schemas (a `default = null`, a null in an enum) are dropped. Every tool gets
`command = ["true"]`, so it is runnable but does nothing. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# Keys a [[parameters]] table takes besides name/type/description/required
# (crates/toolsmith-folder/src/manifest.rs SCHEMA_KEYWORDS).
PARAM_KEYWORDS = {
    "default", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "pattern", "format", "minItems", "maxItems",
    "uniqueItems", "items", "properties", "additionalProperties", "examples", "title",
}
SIMPLE_TYPES = {"string", "integer", "number", "boolean", "object", "array"}


def sanitize(name: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:128]
    return clean or "tool"


def folded(name: str) -> str:
    """What `toolsmith check` compares names by: case and `_ - .` ignored."""
    return re.sub(r"[_.-]", "", name.lower())


def assign_names(tools: list[dict]) -> dict[str, str]:
    """Corpus key "<slug>/<name>" -> unique folder name.

    Names that are equal once case and punctuation are ignored (`list_databases`,
    `list-databases`) count as the same name, as Toolsmith's checks treat them.
    """
    base = {f"{t['server']}/{t['name']}": sanitize(t["name"]) for t in tools}
    counts = Counter(folded(name) for name in base.values())
    names: dict[str, str] = {}
    taken: set[str] = set()
    for tool in tools:
        key = f"{tool['server']}/{tool['name']}"
        name = base[key]
        if counts[folded(name)] > 1:
            name = sanitize(f"{tool['server']}_{tool['name']}")
        candidate, n = name, 2
        while folded(candidate) in taken:
            suffix = f"_{n}"
            candidate = name[: 128 - len(suffix)] + suffix
            n += 1
        taken.add(folded(candidate))
        names[key] = candidate
    return names


# ---------------------------------------------------------------- schemas


def inline_refs(node, root: dict, seen: tuple = ()):  # noqa: ANN001
    """Replaces local `$ref`s (#/$defs/..., #/definitions/...) by what they point to."""
    if isinstance(node, list):
        return [inline_refs(item, root, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        if ref in seen:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return inline_refs(rest, root, seen) if rest else {}
        target = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        if isinstance(target, dict):
            merged = dict(target)
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            return inline_refs(merged, root, seen + (ref,))
    return {
        key: inline_refs(value, root, seen)
        for key, value in node.items()
        if key not in ("$defs", "definitions")
    }


def drop_nulls(value):  # noqa: ANN001
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value if v is not None]
    return value


def parameters_of(schema: dict) -> list[tuple[dict, dict]]:
    """[(parameter table, overlay)] for the top-level properties of an input schema."""
    schema = inline_refs(schema, schema)
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    result = []
    for name, prop in properties.items():
        prop = drop_nulls(prop) if isinstance(prop, dict) else {}
        kind = prop.get("type")
        if not isinstance(kind, str):
            kind = None if kind is None else "__list__"
        table: dict = {"name": name, "type": kind if kind in SIMPLE_TYPES else "any"}
        if isinstance(prop.get("description"), str):
            table["description"] = prop["description"]
        if name in required:
            table["required"] = True
        overlay: dict = {}
        for key, value in prop.items():
            if key == "type":
                if kind not in SIMPLE_TYPES:
                    overlay[key] = value  # a list of types, say
                continue
            if key == "description" and isinstance(value, str):
                continue
            (table if key in PARAM_KEYWORDS else overlay)[key] = value
        result.append((table, overlay))
    return result


# ---------------------------------------------------------------- TOML writing


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def toml_string(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04X}" if not 0xD800 <= code <= 0xDFFF else "\\uFFFD")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value) -> str:  # noqa: ANN001
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(value)]
        text = repr(value)
        return text if any(c in text for c in ".eE") else text + ".0"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def manifest(tool: dict) -> str:
    lines = [f"# {tool['server']}/{tool['name']} (generated by bench/discovery/make_folder.py)"]
    if tool.get("title"):
        lines.append(f"title = {toml_string(tool['title'])}")
    lines.append(f"description = {toml_string(tool.get('description') or '')}")
    annotations = tool.get("annotations") or {}
    for source, key in (("readOnlyHint", "read_only"), ("destructiveHint", "destructive"),
                        ("idempotentHint", "idempotent"), ("openWorldHint", "open_world")):
        if isinstance(annotations.get(source), bool):
            lines.append(f"{key} = {toml_value(annotations[source])}")
    lines.append('command = ["true"]')
    params = parameters_of(tool.get("inputSchema") or {})
    for table, _ in params:
        lines.append("")
        lines.append("[[parameters]]")
        lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items())
    for table, overlay in params:
        if overlay:
            lines.append("")
            lines.append(f"[params.{toml_key(table['name'])}]")
            lines.extend(f"{toml_key(k)} = {toml_value(v)}" for k, v in overlay.items())
    return "\n".join(lines) + "\n"


def main() -> int:
    flat = "--flat" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--flat"]
    if len(args) != 2:
        sys.exit("usage: make_folder.py CORPUS OUT_DIR [--flat]")
    corpus = json.loads(Path(args[0]).read_text())
    out = Path(args[1])
    if out.exists():
        for old in list(out.rglob("*.toml")) + [out / "_ids.json"]:
            if old.exists():
                old.unlink()
    out.mkdir(parents=True, exist_ok=True)
    tools = corpus["tools"]
    names = assign_names(tools)
    for tool in tools:
        key = f"{tool['server']}/{tool['name']}"
        folder = out if flat else out / tool["server"]
        folder.mkdir(exist_ok=True)
        (folder / f"{names[key]}.toml").write_text(manifest(tool), encoding="utf-8")
    (out / "_ids.json").write_text(json.dumps(names, indent=1, ensure_ascii=False) + "\n")
    renamed = sum(1 for key, name in names.items() if key.split("/", 1)[1] != name)
    print(f"{len(names)} tools written to {out} ({renamed} renamed)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
