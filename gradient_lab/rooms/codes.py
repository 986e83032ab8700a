"""Room codes students type, the teacher's secret token, and students' ids.

A code is 8 symbols of Crockford's base32 (40 bits; no I, L, O or U, and typing them reads as
1, 1, 0): with 200 rooms open, a guess finds one once in 5·10^9 tries, and the routes refuse an
address after 30 misses a minute. The teacher's token is 256 bits; the store keeps only its
SHA-256.
"""

from __future__ import annotations

import hashlib
import re
import secrets

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
LENGTH = 8
_TYPED = str.maketrans({"O": "0", "I": "1", "L": "1"})
CODE_PATTERN = re.compile(f"^[{ALPHABET}]{{{LENGTH}}}$")


def new_code() -> str:
    """A fresh random room code, e.g. "K7MXQ2PD"."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(typed: str) -> str | None:
    """The code a student meant ("k7mx-q2pd" -> "K7MXQ2PD"), or None if it cannot be one."""
    code = re.sub(r"[\s-]", "", typed).upper().translate(_TYPED)
    return code if CODE_PATTERN.match(code) else None


def shown(code: str) -> str:
    """The code as a projector shows it: two groups of four, "K7MX-Q2PD"."""
    return f"{code[:4]}-{code[4:]}"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_student_id() -> str:
    return secrets.token_urlsafe(12)


def new_question_id() -> str:
    return secrets.token_hex(4)
