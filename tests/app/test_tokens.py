"""Token text: its form, its entropy, its hash and the constant-time comparison."""

from __future__ import annotations

import hashlib

from app.auth.tokens import (
    display_prefix,
    hash_token,
    hashes_match,
    is_api_token,
    is_run_token,
    new_api_token,
    new_run_token,
)


def test_api_and_run_tokens_have_their_prefixes_and_256_random_bits() -> None:
    api, run = new_api_token(), new_run_token()
    assert api.startswith("hpg_") and run.startswith("hpr_")
    # 43 base64url characters carry 258 bits, of which token_urlsafe(32) fills 256.
    assert len(api) == len(run) == 4 + 43
    assert is_api_token(api) and not is_run_token(api)
    assert is_run_token(run) and not is_api_token(run)
    assert len({new_api_token() for _ in range(1000)}) == 1000


def test_forms_that_are_not_tokens() -> None:
    token = new_api_token()
    for text in ("", "hpg_", token[:-1], token + "x", token.replace("hpg_", "HPG_"), " " + token):
        assert not is_api_token(text), text


def test_the_hash_is_sha256_hex_and_compares_in_constant_time() -> None:
    token = new_api_token()
    stored = hash_token(token)
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    assert len(stored) == 64
    assert hashes_match(stored, token)
    assert not hashes_match(stored, new_api_token())
    assert not hashes_match(stored.upper(), token)


def test_lists_show_the_prefix_and_eight_characters() -> None:
    token = new_api_token()
    assert display_prefix(token) == token[:12]
    assert display_prefix(token).startswith("hpg_")
