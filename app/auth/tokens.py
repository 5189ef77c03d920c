"""Token text: making API tokens (`hpg_…`) and run tokens (`hpr_…`), hashing and comparing them.

Only a token's SHA-256 is stored. A fast, unsalted hash is right here, unlike for
passwords: each token carries 256 random bits, so there is no dictionary to try and no
way to brute-force the preimage however fast the hash is, and a salt or a slow KDF
(bcrypt, argon2) would only add work on every request. Being unsalted, the hash doubles
as the lookup key, through a unique index (PyPI's API tokens and GitHub's do the same).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

API_TOKEN_PREFIX = "hpg_"  # noqa: S105  # a public marker, not a secret
RUN_TOKEN_PREFIX = "hpr_"  # noqa: S105  # same
TOKEN_ENTROPY_BYTES = 32
# The prefix plus this many characters is shown in token lists, so people can tell their
# tokens apart; 8 of 43 random characters reveal 48 of the 256 bits.
DISPLAY_CHARS = 8

_BODY = r"[A-Za-z0-9_-]{43}"  # token_urlsafe(32): 32 bytes in unpadded base64url
API_TOKEN_PATTERN = re.compile(rf"{API_TOKEN_PREFIX}{_BODY}")
RUN_TOKEN_PATTERN = re.compile(rf"{RUN_TOKEN_PREFIX}{_BODY}")


def new_api_token() -> str:
    """A fresh API token; show it once, store only `hash_token` of it."""
    return API_TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_ENTROPY_BYTES)


def new_run_token() -> str:
    """A fresh run token, good for one issued run's upload."""
    return RUN_TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_ENTROPY_BYTES)


def hash_token(token: str) -> str:
    """The token's SHA-256 as 64 hex digits: what the database keeps and looks up."""
    return hashlib.sha256(token.encode()).hexdigest()


def hashes_match(stored: str, token: str) -> bool:
    """Whether a token hashes to a stored hash, compared in constant time."""
    return hmac.compare_digest(stored.encode(), hash_token(token).encode())


def display_prefix(token: str) -> str:
    """The start of a token that lists show, such as `hpg_Ab3dE9xQ`."""
    return token[: len(API_TOKEN_PREFIX) + DISPLAY_CHARS]


def is_api_token(text: str) -> bool:
    """Whether text has the form of an API token (it may still be unknown)."""
    return API_TOKEN_PATTERN.fullmatch(text) is not None


def is_run_token(text: str) -> bool:
    """Whether text has the form of a run token (it may still be unknown)."""
    return RUN_TOKEN_PATTERN.fullmatch(text) is not None
