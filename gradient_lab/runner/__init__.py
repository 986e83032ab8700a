"""Strangers' code, run in single-use processes walled in by the kernel.

child/ is what runs inside a walled child; pool/ is the server's side. frames.py is the one
format that crosses between them, read by the server as data from a stranger.
"""
