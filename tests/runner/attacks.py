"""The classic moves of a program that wants out, run inside a walled child as a learner's own
program would be: plain Python with ctypes, as if nothing above the kernel stood in the way.

tests/runner/test_walls.py sends this file's text as the program, with TARGET set first (the
server's pid, a TCP port listening on this machine, a file the child may read). It prints one
JSON object: each attack's name, and "blocked: <errno>" or what got through. Every probe is made
harmless where it can succeed: signal 0 tests the right to kill without killing, a reboot with a
wrong magic number is refused after the permission check, a chmod keeps the file's own mode.
"""

import ctypes
import errno
import json
import os
import socket
import subprocess

TARGET = {"server_pid": 1, "port": 1, "readable": "/usr/lib/os-release",
          "memory": 1 << 40}  # set by the test

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}


def attempt(name, move):
    """Run one move: what it got, or the errno that stopped it."""
    try:
        got = move()
    except OSError as error:
        results[name] = "blocked: " + errno.errorcode.get(error.errno, str(error.errno))
    except Exception as error:  # noqa: BLE001 - whatever stopped it, it did not get through
        results[name] = "blocked: " + type(error).__name__
    else:
        results[name] = "succeeded: " + repr(got)[:200]


def raw(number, *args):
    """A system call by number, as ctypes makes it: no Python wrapper in the way."""
    ctypes.set_errno(0)
    result = libc.syscall(number, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result


def forked():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return pid


def raw_clone():
    pid = raw(56, 17, 0, 0, 0, 0)  # clone(SIGCHLD): a new process, not a thread
    if pid == 0:
        libc._exit(0)
    return pid


def descriptors():
    """Every descriptor open past 0-2, and what it is: the child should hold its two pipes."""
    held = []
    for fd in range(3, 256):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        held.append((fd, "pipe" if (mode & 0o170000) == 0o010000 else oct(mode)))
    return held


def connect(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        s.connect(("127.0.0.1", port))
        return s.getpeername()


# Files: the system's secrets, the server's environment, anything outside the imports.
attempt("read /etc/passwd", lambda: open("/etc/passwd").read(100))
attempt("read the server's environ", lambda: open(f"/proc/{TARGET['server_pid']}/environ",
                                                  "rb").read(100))
attempt("read its own environ", lambda: open("/proc/self/environ", "rb").read(100))
attempt("list /", lambda: os.listdir("/"))
attempt("list its working directory", lambda: os.listdir("."))
attempt("write a file here", lambda: open("escape.txt", "w").write("x"))
attempt("write a file in /tmp", lambda: open("/tmp/gradient-lab-escape.txt", "w").write("x"))
attempt("raw openat /etc/passwd", lambda: raw(257, -100, b"/etc/passwd", 0, 0))
# The network: the server's port, and any socket at all.
attempt("connect to the server's port", lambda: connect(TARGET["port"]))
attempt("open a socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).fileno())
attempt("raw socket", lambda: raw(41, 2, 1, 0))
# Processes.
attempt("execv /bin/sh", lambda: os.execv("/bin/sh", ["sh", "-c", "true"]))
attempt("subprocess.run", lambda: subprocess.run(["true"]).returncode)
attempt("os.fork", forked)
attempt("raw clone of a process", raw_clone)
attempt("os.kill the server", lambda: os.kill(TARGET["server_pid"], 0))
attempt("raw kill of the server", lambda: raw(62, TARGET["server_pid"], 0))
attempt("ptrace the server", lambda: raw(101, 16, TARGET["server_pid"], 0, 0))  # ATTACH
attempt("process_vm_readv", lambda: raw(310, TARGET["server_pid"], 0, 0, 0, 0, 0))
# The machine: calls a root child with its capabilities could make (issue 22).
attempt("reboot", lambda: raw(169, 0, 0, 0, 0))  # wrong magic: EINVAL once permitted
attempt("sethostname", lambda: raw(170, socket.gethostname().encode(),
                                   len(socket.gethostname())))
attempt("settimeofday", lambda: raw(164, 0, 0))  # no time given: nothing changes
attempt("init_module", lambda: raw(175, 0, 0, b""))
attempt("kexec_load", lambda: raw(246, 0, 0, 0, 0xFFFFFFFF))  # bad flags, after the check
attempt("swapoff", lambda: raw(168, b"/nonexistent"))
attempt("chmod a readable file", lambda: os.chmod(TARGET["readable"],
                                                  os.stat(TARGET["readable"]).st_mode & 0o7777))
attempt("raw chmod", lambda: raw(90, TARGET["readable"].encode(),
                                 os.stat(TARGET["readable"]).st_mode & 0o7777))
attempt("chown a readable file", lambda: os.chown(TARGET["readable"],
                                                  os.stat(TARGET["readable"]).st_uid,
                                                  os.stat(TARGET["readable"]).st_gid))
attempt("raw chown", lambda: raw(92, TARGET["readable"].encode(), -1, -1))
attempt("setxattr", lambda: os.setxattr(TARGET["readable"], "user.gradient-lab", b"",
                                        os.XATTR_REPLACE))
attempt("raw setxattr", lambda: raw(188, TARGET["readable"].encode(), b"user.gradient-lab",
                                    b"", 0, 2))
attempt("utime", lambda: os.utime(TARGET["readable"], ns=(os.stat(TARGET["readable"]).st_atime_ns,
                                                          os.stat(TARGET["readable"]).st_mtime_ns)))
attempt("raw utimensat", lambda: raw(280, -100, TARGET["readable"].encode(), 0, 0))
attempt("mknod", lambda: os.mknod("fifo", 0o600 | 0o010000))
attempt("raw mknod", lambda: raw(133, b"fifo2", 0o600 | 0o010000, 0))
attempt("setuid 0", lambda: os.setuid(0))
attempt("raw setuid 0", lambda: raw(105, 0))
attempt("io_uring_setup", lambda: raw(425, 1, 0))
attempt("userfaultfd", lambda: raw(323, 0))
attempt("perf_event_open", lambda: raw(298, 0, 0, -1, -1, 0))
attempt("bpf", lambda: raw(321, 0, 0, 0))
attempt("keyctl", lambda: raw(250, 0, -3, 0))  # KEYCTL_GET_KEYRING_ID of the session ring
attempt("personality", lambda: raw(135, 0xFFFFFFFF))  # only asks
attempt("unshare a user namespace", lambda: raw(272, 0x10000000))
attempt("mount", lambda: raw(165, b"none", b"/tmp", b"tmpfs", 0, 0))
attempt("allocate past the memory limit", lambda: len(bytearray(TARGET["memory"])))
if TARGET.get("traceme", True):  # left out where nothing would stop it: it would stay traced
    attempt("ptrace(PTRACE_TRACEME)", lambda: raw(101, 0, 0, 0, 0))
results["descriptors"] = descriptors()

print(json.dumps(results))
