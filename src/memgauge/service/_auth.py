"""API tokens: ``mg_`` and 43 URL-safe characters (256 random bits). The server keeps their SHA-256
only; the secret is shown once, when the token is made. What each role may do is in ``_rules``."""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "mg_"


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def shown_prefix(token: str) -> str:
    """What lists show of a token: enough to tell tokens apart, never enough to use one."""
    return token[: len(PREFIX) + 6]
