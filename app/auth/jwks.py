"""The OIDC issuer's signing keys: where they come from (its discovery document names its
JWKS), and the cache that holds them by `kid`, fetched again when an unknown `kid` shows up,
at most once a minute (`app.auth.oidc.OidcVerifier` reads them)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import httpx
import jwt

from hbench.errors import HbenchError

log = logging.getLogger(__name__)

REFRESH_COOLDOWN_SECONDS = 60.0
FETCH_TIMEOUT_SECONDS = 10.0


class JwksSource(Protocol):
    """Where the issuer's signing keys come from: its JWKS document."""

    async def fetch_jwks(self) -> dict[str, Any]:
        """The issuer's current key set, `{"keys": [...]}`; raises on failure."""
        ...


class HttpJwksSource:
    """The keys an OIDC issuer publishes: its discovery document names the JWKS URL."""

    def __init__(self, issuer: str, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.issuer = issuer
        self._transport = transport

    async def fetch_jwks(self) -> dict[str, Any]:
        async with httpx.AsyncClient(
            transport=self._transport, timeout=FETCH_TIMEOUT_SECONDS
        ) as client:
            answer = await client.get(f"{self.issuer}/.well-known/openid-configuration")
            discovery = answer.raise_for_status().json()
            if discovery.get("issuer") != self.issuer:
                raise ValueError(f"the discovery document names issuer {discovery.get('issuer')}")
            keys: dict[str, Any] = (
                (await client.get(str(discovery["jwks_uri"]))).raise_for_status().json()
            )
        return keys


class JwksCache:
    """The issuer's keys by `kid`. An unknown `kid` fetches the keys again, unless they
    were fetched less than `cooldown` seconds ago (so a flood of forged `kid`s can't make
    the service hammer the issuer); a failed or empty fetch keeps the keys it had."""

    def __init__(
        self,
        source: JwksSource,
        *,
        cooldown: float = REFRESH_COOLDOWN_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = source
        self.cooldown = cooldown
        self._monotonic = monotonic
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()

    async def key(self, kid: str) -> jwt.PyJWK:
        """The key with this id, fetching the key set once more if it is unknown."""
        if kid in self._keys:
            return self._keys[kid]
        async with self._lock:
            if kid not in self._keys and self._may_refresh():
                await self._refresh()
        if kid not in self._keys:
            raise HbenchError(
                "oidc-key-unknown",
                f"the token was signed with key {kid!r}, which the issuer does not publish",
            )
        return self._keys[kid]

    def _may_refresh(self) -> bool:
        if self._fetched_at is None:
            return True
        return self._monotonic() - self._fetched_at >= self.cooldown

    async def _refresh(self) -> None:
        self._fetched_at = self._monotonic()
        try:
            document = await self.source.fetch_jwks()
        except (httpx.HTTPError, ValueError, KeyError) as error:
            log.warning("could not fetch the OIDC issuer's keys: %s", error)
            if not self._keys:
                raise HbenchError(
                    "oidc-issuer-unavailable",
                    "the OIDC issuer's keys could not be fetched; try again in a minute",
                ) from None
            return
        keys = parse_jwks(document)
        if keys:
            self._keys = keys


def parse_jwks(document: dict[str, Any]) -> dict[str, jwt.PyJWK]:
    """The RS256 signing keys of a JWKS document, by `kid`; others are skipped."""
    keys: dict[str, jwt.PyJWK] = {}
    entries = document.get("keys")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("kty") != "RSA" or "kid" not in entry:
            continue
        if entry.get("use", "sig") != "sig":
            continue
        try:
            keys[str(entry["kid"])] = jwt.PyJWK(entry, algorithm="RS256")
        except jwt.PyJWTError:
            log.warning("skipped an unreadable key in the OIDC issuer's JWKS")
    return keys
