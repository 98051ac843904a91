"""Runs of a harness (hooks_real.py, threads_real.py) in forks of a server
process, `python -S -I -B HARNESS --serve` (harness_common.serve), instead of
one interpreter each: a short real run is mostly the interpreter's start-up.
A child starts from the state a fresh `python -S -I -B HARNESS ARGS...` has
when the harness's main() is called, and answers with that process's exit
status, stdout and stderr.

Idle servers are kept per interpreter; a server serves one run at a time,
so --jobs N threads use at most N per interpreter. A server whose run times
out is killed with its child and not used again. The servers end when this
process does (close(), at exit), so their CPU time is counted as its
children's."""
import atexit
import json
import os
import queue
import select
import signal
import subprocess


class ForkedRuns:
    def __init__(self, harness):
        self.harness = harness
        self.idle = {}  # interpreter -> queue of idle servers
        self.started = []
        atexit.register(self.close)

    def run(self, py, args, timeout, cwd=None):
        """(returncode, stdout, stderr) of `py -S -I -B HARNESS ARGS...` (in
        the folder cwd), (None, "", why) when it timed out or the server
        died."""
        idle = self.idle.setdefault(py, queue.SimpleQueue())
        try:
            server = idle.get_nowait()
        except queue.Empty:
            server = subprocess.Popen([py, "-S", "-I", "-B", self.harness, "--serve"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, start_new_session=True)
            self.started.append(server)
        try:
            server.stdin.write(json.dumps({"args": list(args), "cwd": cwd}) + "\n")
            server.stdin.flush()
        except BrokenPipeError:
            self.kill(server)
            return None, "", f"{os.path.basename(self.harness)} --serve ended (exit {server.returncode})"
        ready, _, _ = select.select([server.stdout], [], [], timeout)
        line = server.stdout.readline() if ready else ""
        if not line:
            self.kill(server)
            if not ready:
                return None, "", f"timed out after {timeout:g} s"
            return None, "", f"{os.path.basename(self.harness)} --serve ended (exit {server.returncode})"
        idle.put(server)
        answer = json.loads(line)
        return answer["rc"], answer["out"], answer["err"]

    @staticmethod
    def kill(server):
        """The server and the child it forked (its session)."""
        try:
            os.killpg(server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        server.wait()

    def close(self):
        """Ends the idle servers (the end of their stdin)."""
        for server in self.started:
            if server.poll() is None:
                server.stdin.close()
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.kill(server)
