#!/usr/bin/env python3
"""Runs a command on a pseudo-terminal and types replies when prompts appear (a tiny `expect`).

usage: pty-run.py --timeout SECONDS --dialog JSON -- COMMAND [ARGS...]

The command gets a new session whose controlling terminal is the pty: stdin, stdout and stderr
are all the terminal. Everything it prints is copied to this script's stdout. DIALOG is a JSON
list of [pattern, reply] pairs, taken in order: once `pattern` (a Python regex) matches the
output printed since the previous reply, `reply` is typed. The first line on stderr is
`pty-run: pid N` (the command's pid); a dialog step whose pattern never shows is reported on
stderr at the end.

Exit status: the command's exit code, 128+N when a signal N ended it, or 124 after the timeout
(the command's process group is then killed with SIGKILL).
"""
import json
import os
import pty
import re
import select
import signal
import sys
import time


def main() -> int:
    args = sys.argv[1:]
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    timeout = float(options[options.index("--timeout") + 1])
    dialog = json.loads(options[options.index("--dialog") + 1])

    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    sys.stderr.write(f"pty-run: pid {pid}\n")
    sys.stderr.flush()

    deadline = time.monotonic() + timeout
    seen = ""
    step = 0
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: every holder of the terminal's slave side has closed it
            break
        if not chunk:
            break
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()
        seen += chunk.decode("utf-8", errors="replace")
        while step < len(dialog) and re.search(dialog[step][0], seen):
            os.write(fd, dialog[step][1].encode())
            seen = ""
            step += 1

    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    if step < len(dialog):
        sys.stderr.write(f"pty-run: never saw {dialog[step][0]!r}\n")
    if timed_out:
        sys.stderr.write(f"pty-run: timed out after {timeout}s\n")
        return 124
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())
