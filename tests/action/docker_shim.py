"""A stand-in for the `docker` command: records its arguments, then does the container's work.

`docker build` is recorded and succeeds. `docker run … IMAGE COMMAND…` is recorded, and
COMMAND runs here in the `-w` folder with only what the container would get: the
variables named by `-e NAME` (taken from this process's environment, as docker does),
plus a PATH to this Python's tools and a HOME. The bubblewrap sandbox of the demo
dataset stands in for the task containers.

Each call appends one JSON line to the file named by `DOCKER_SHIM_LOG`:
`{"argv": [...], "env": [names the command got]}`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Options of `docker run` that take a value (the ones the Action uses, and a few more).
VALUED = {"-v", "--volume", "-w", "--workdir", "-e", "--env", "--user", "-u", "--name",
          "--group-add", "--network", "--entrypoint"}  # fmt: skip


def parse_run(args: list[str]) -> tuple[dict[str, list[str]], str, list[str]]:
    """`run`'s options (by flag), its image, and the command after it."""
    options: dict[str, list[str]] = {}
    index = 0
    while index < len(args) and args[index].startswith("-"):
        flag = args[index]
        if flag in VALUED:
            options.setdefault(flag, []).append(args[index + 1])
            index += 2
        else:
            options.setdefault(flag, []).append("")
            index += 1
    return options, args[index], args[index + 1 :]


def main(argv: list[str]) -> int:
    log = Path(os.environ["DOCKER_SHIM_LOG"])
    if argv[:1] != ["run"]:
        with log.open("a") as stream:
            stream.write(json.dumps({"argv": argv, "env": []}) + "\n")
        return 0
    options, _image, command = parse_run(argv[1:])
    names = [value for flag in ("-e", "--env") for value in options.get(flag, [])]
    if any("=" in name for name in names):
        print("the shim refuses -e NAME=value: values must not be on the command line")
        return 2
    env = {name: os.environ[name] for name in names if name in os.environ}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"
    env["HOME"] = os.environ.get("HOME", "/root")
    with log.open("a") as stream:
        stream.write(json.dumps({"argv": argv, "env": sorted(env)}) + "\n")
    workdir = options.get("-w", options.get("--workdir", [str(Path.cwd())]))[-1]
    return subprocess.run(command, cwd=workdir, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
