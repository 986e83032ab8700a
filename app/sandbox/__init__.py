"""The program runner: the security boundary between learners' code and the server."""
