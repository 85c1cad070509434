#!/usr/bin/env python3
"""Lists every field of every Envoy API message at one Envoy commit, one "<message> <field>" per line.

The deploy tests compare the configs we ship against this list, so a field newer than the oldest Envoy we
support fails the build instead of being dropped with a warning by an older proxy. Regenerate it when the
minimum version changes:

    python3 envoy_api_fields.py <envoy git dir> <commit> > ../resources/envoy-api-fields-<version>.txt

Only message fields are listed (enum values and options are not), which is what a config can set, and only of
the packages a bootstrap or an EnvoyFilter can use: envoy.config, envoy.extensions and envoy.type, v3.
"""
import re
import subprocess
import sys


def git(gitdir, *args):
    return subprocess.run(["git", "-C", gitdir, *args], check=True, capture_output=True, text=True).stdout


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def strip_bracketed(text):
    """Removes field options ("[...]", which may nest brackets and braces) and string literals."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    out, depth = [], 0
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


FIELD = re.compile(r"^(?:repeated\s+|optional\s+)?(map\s*<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*\d+\s*$")


def fields_of(text):
    """Yields (message path, field) for every message field in one .proto file's text."""
    text = strip_bracketed(strip_comments(text))
    package = re.search(r"\bpackage\s+([\w.]+)\s*;", text).group(1)
    stack = []  # (kind, name): message, enum, oneof, service, block
    tokens = re.split(r"([{};])", text)
    statement = ""
    for tok in tokens:
        if tok == "{":
            head = statement.strip()
            m = re.match(r"^(message|enum|oneof|service|extend)\s+([\w.]+)$", head)
            stack.append((m.group(1), m.group(2)) if m else ("block", head))
            statement = ""
        elif tok == "}":
            if stack:
                stack.pop()
            statement = ""
        elif tok == ";":
            head = " ".join(statement.split())
            statement = ""
            kinds = [k for k, _ in stack]
            if not kinds or "enum" in kinds or "block" in kinds or "service" in kinds or "extend" in kinds:
                continue
            if kinds[-1] not in ("message", "oneof"):
                continue
            m = FIELD.match(head)
            if m and not head.startswith(("option ", "reserved ", "extensions ")):
                messages = [name for kind, name in stack if kind == "message"]
                yield package + "." + ".".join(messages), m.group(2)
        else:
            statement += tok


def main():
    gitdir, commit = sys.argv[1], sys.argv[2]
    version = git(gitdir, "show", commit + ":VERSION.txt").strip()
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", commit, "api/envoy").split()
             if f.endswith(".proto")]
    config_package = re.compile(r"^envoy\.(config|extensions|type)\.([\w.]*\.)?v3\.")
    lines = set()
    for f in files:
        for message, field in fields_of(git(gitdir, "show", commit + ":" + f)):
            if config_package.match(message):
                lines.add(message + " " + field)
    print("# Envoy API message fields at commit " + commit + " (VERSION.txt " + version + "),")
    print("# listed by extproc/src/test/scripts/envoy_api_fields.py. One '<message> <field>' per line.")
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
