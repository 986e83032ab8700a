"""The system calls a walled child may make: everything else fails with EPERM.

Derived with scripts/learn-syscalls.py, which runs the tutorial's examples, the real-world corpus
(tests/corpus), every built-in job and the runner's own tests with strace on each child from the
moment its filter is loaded. On x86-64 with torch 2.13 they made 33 distinct calls; each is
here, in a group that says why a torch program needs it, with the few a program reaches on a
path those runs did not take (marked "also"). The calls that take arguments worth checking are
in seccomp.py, beside their checks: clone, clone3, kill, tgkill, prlimit64, sched_getaffinity,
sched_setaffinity, getpriority, prctl and ioctl.
"""

from __future__ import annotations

ALLOWED: dict[str, tuple[str, ...]] = {
    # Memory: Python's and torch's allocators, numpy's buffers, oneDNN's code made at run time.
    "memory": ("brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mbind"),
    # Reading what Landlock lets it open (imports, lazily) and its own pipes. No call here
    # changes a file; opening one for writing is refused by Landlock. Also: readlink
    # (os.path.realpath), getcwd (os.getcwd()).
    "files it may read": ("openat", "read", "lseek", "close", "newfstatat", "fstat", "statx",
                          "getdents64", "fcntl", "readlink", "readlinkat", "getcwd"),
    # Its reply, down its own pipe; print() lands in the lab's buffer.
    "writing to its own pipe": ("write",),
    # Waiting: Python's locks and torch's thread pools, time.sleep(). Also: sched_yield
    # (OpenMP's spinning, with torch.set_num_threads above 1).
    "waiting": ("futex", "clock_nanosleep", "sched_yield"),
    # Threads of its own, made with clone (checked in seccomp.py) and ended. Also: exit (a
    # thread's end), set_tid_address (glibc's thread start on some versions).
    "threads": ("set_robust_list", "rseq", "set_tid_address", "exit", "exit_group"),
    # Its own signals: the wall-clock and CPU timers the child sets, Python's handlers, a
    # signal interrupting a sleep. Also: getitimer (signal.getitimer), restart_syscall.
    "signals to itself": ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "setitimer",
                          "getitimer", "restart_syscall"),
    # Clocks, its own ids and usage, randomness. Also: clock_gettime and gettimeofday, which
    # the vDSO answers on most machines but not every VM; getrusage and times
    # (time.process_time, resource); uname (platform); its user and groups, and capget (the
    # walls job's self-check asks them, and os.getuid() is a program's to ask).
    "asking about itself": ("clock_gettime", "clock_getres", "gettimeofday", "getpid", "gettid",
                            "getrandom", "getrusage", "times", "uname", "getuid", "geteuid",
                            "getgid", "getegid", "getgroups", "capget"),
}
