"""The server's side of the runner: the zygote that forks children, and the pool that hands
each request a ready child, watches its limits and reads its reply as untrusted bytes."""
