"""The system calls a walled child may make: everything else fails with EPERM.

Derived by running the whole test suite, the real-world corpus and the GPU path's start-up under
the filter in its logging mode (scripts/learn-syscalls.py says how, and what it found); each
group says why a torch program needs it. The calls that take arguments worth checking are not
here but in seccomp.py, beside the checks: clone, clone3, kill, tgkill, prctl, ioctl,
prlimit64 and the calls that name another process.
"""

from __future__ import annotations

ALLOWED: dict[str, tuple[str, ...]] = {
    # Memory: Python's and torch's allocators, numpy's buffers, oneDNN's code made at run time.
    "memory": ("brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "membarrier",
               "get_mempolicy", "mbind"),
    # Reading what is already open or what Landlock lets it open: imports, the job's pipe.
    # Opening for writing is refused by Landlock; these calls themselves change no file.
    "files it may read": ("read", "readv", "pread64", "preadv", "preadv2", "openat", "open",
                          "close", "lseek", "fstat", "newfstatat", "stat", "lstat", "statx",
                          "getdents64", "readlink", "readlinkat", "access", "faccessat",
                          "faccessat2", "fcntl", "dup", "dup2", "dup3", "getcwd", "statfs",
                          "fstatfs", "pipe2"),
    # Writing to descriptors it holds: the reply's pipe and /dev/null on 0-2.
    "writing to its own pipe": ("write", "writev", "pwrite64"),
    # Waiting: torch's thread pools, Python's locks, the program's time.sleep().
    "waiting": ("futex", "futex_waitv", "sched_yield", "nanosleep", "clock_nanosleep", "poll",
                "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait",
                "epoll_pwait", "eventfd2"),
    # Threads of its own (clone is checked in seccomp.py): OpenMP's and torch's pools.
    "threads": ("set_robust_list", "get_robust_list", "set_tid_address", "rseq", "exit",
                "exit_group", "sched_getparam", "sched_getscheduler",
                "sched_get_priority_max", "sched_get_priority_min"),
    # Its own signals: Python's handlers, the CPU and wall-clock timers the child sets.
    "signals to itself": ("rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
                          "rt_sigpending", "rt_sigtimedwait", "rt_sigsuspend", "setitimer",
                          "getitimer", "alarm", "timer_create", "timer_settime",
                          "timer_gettime", "timer_delete", "restart_syscall"),
    # Reading the clock, its own ids and usage, randomness: time, os, random and torch ask.
    "asking about itself": ("clock_gettime", "clock_getres", "gettimeofday", "time", "getpid",
                            "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid",
                            "getgroups", "getresuid", "getresgid", "getpgrp", "getrusage",
                            "times", "getrandom", "uname", "sysinfo", "getcpu", "capget",
                            "getrlimit", "umask"),
}
