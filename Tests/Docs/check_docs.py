#!/usr/bin/env python3
"""Checks the documentation: every public symbol has a doc comment (from the compiler's symbol
graphs), and every Swift code block in the DocC articles is a verbatim copy of a region of the
compiled snippets target (DocsSource/Snippets), so article code always compiles.

usage: check_docs.py SYMBOLGRAPH_DIR [--root DIR]
       check_docs.py --write [--root DIR]   copies the snippets into the articles' marked blocks
"""
import argparse
import json
import pathlib
import re
import sys
import textwrap

MODULES = ["DBus", "DBusTestSupport", "BlueZ", "BLE", "BLESimulator"]
BEGIN = re.compile(r"^\s*// snippet\.begin (\S+)\s*$")
END = re.compile(r"^\s*// snippet\.end\s*$")
MARKER = re.compile(r"^<!-- snippet: (\S+) -->\s*$")


def undocumented(graph_dir: pathlib.Path) -> list[str]:
    problems = []
    for module in MODULES:
        path = graph_dir / f"{module}.symbols.json"
        if not path.exists():
            problems.append(f"{module}: no symbol graph at {path}")
            continue
        graph = json.loads(path.read_text())
        for symbol in graph["symbols"]:
            # Symbols without a source location are synthesized (Hashable, RawRepresentable, …).
            if symbol.get("accessLevel") not in ("public", "open") or "location" not in symbol:
                continue
            if symbol.get("docComment", {}).get("lines"):
                continue
            name = ".".join(symbol["pathComponents"])
            uri = symbol["location"]["uri"].split("/Sources/")[-1]
            line = symbol["location"]["position"]["line"] + 1
            problems.append(f"{module}.{name} has no doc comment (Sources/{uri}:{line})")
    return problems


def snippets(root: pathlib.Path) -> tuple[dict[str, str], list[str]]:
    found, problems = {}, []
    for path in sorted((root / "DocsSource" / "Snippets").rglob("*.swift")):
        name, lines = None, []
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := BEGIN.match(line):
                name, lines = match.group(1), []
            elif END.match(line):
                if name is None:
                    problems.append(f"{path}:{number}: snippet.end without begin")
                elif name in found:
                    problems.append(f"{path}:{number}: snippet {name} defined twice")
                else:
                    found[name] = textwrap.dedent("\n".join(lines)).strip("\n")
                name = None
            elif name is not None:
                lines.append(line)
        if name is not None:
            problems.append(f"{path}: snippet {name} is not closed")
    return found, problems


def article_blocks(root: pathlib.Path) -> tuple[list[tuple[str, str, str]], list[str]]:
    blocks, problems = [], []
    for path in sorted((root / "DocsSource").rglob("*.md")):
        lines = path.read_text().splitlines()
        index = 0
        while index < len(lines):
            if lines[index].strip() == "```swift":
                marker = MARKER.match(lines[index - 1]) if index > 0 else None
                end = index + 1
                while end < len(lines) and lines[end].strip() != "```":
                    end += 1
                body = textwrap.dedent("\n".join(lines[index + 1:end])).strip("\n")
                if marker is None:
                    problems.append(f"{path}:{index + 1}: swift block without <!-- snippet: NAME --> marker")
                else:
                    blocks.append((f"{path}:{index + 1}", marker.group(1), body))
                index = end
            index += 1
    return blocks, problems


def write_articles(root: pathlib.Path, known: dict[str, str]) -> None:
    for path in sorted((root / "DocsSource").rglob("*.md")):
        lines = path.read_text().splitlines()
        output, index = [], 0
        while index < len(lines):
            output.append(lines[index])
            marker = MARKER.match(lines[index - 1]) if index > 0 else None
            if lines[index].strip() == "```swift" and marker and marker.group(1) in known:
                end = index + 1
                while end < len(lines) and lines[end].strip() != "```":
                    end += 1
                output.extend(known[marker.group(1)].splitlines())
                index = end
                continue
            index += 1
        path.write_text("\n".join(output) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("graphs", type=pathlib.Path, nargs="?")
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path("."))
    parser.add_argument("--write", action="store_true")
    arguments = parser.parse_args()
    if arguments.write:
        write_articles(arguments.root, snippets(arguments.root)[0])
        return 0
    if arguments.graphs is None:
        parser.error("the symbol graph directory is required")
    problems = undocumented(arguments.graphs)
    known, snippet_problems = snippets(arguments.root)
    blocks, block_problems = article_blocks(arguments.root)
    problems += snippet_problems + block_problems
    used = set()
    for where, name, body in blocks:
        used.add(name)
        if name not in known:
            problems.append(f"{where}: unknown snippet {name}")
        elif known[name] != body:
            problems.append(f"{where}: differs from snippet {name} in DocsSource/Snippets; copy it again")
    for name in sorted(set(known) - used):
        problems.append(f"snippet {name} is not shown in any article")
    for problem in problems:
        print(problem)
    print(f"docs: {len(blocks)} article code blocks checked against {len(known)} snippets; "
          f"public symbols of {', '.join(MODULES)} checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
