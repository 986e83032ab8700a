"""What runs inside a walled, single-use child: lock-in, the learner's program, the reply."""
