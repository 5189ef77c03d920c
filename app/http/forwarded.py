"""Whose address a request comes from, when a proxy stands in front of the service.

Only the proxies `HBENCH_TRUSTED_PROXIES` names are believed (none by default), since any
client can write a forwarding header. `hbench-app serve` passes the list to uvicorn, which
reads `X-Forwarded-For` and `X-Forwarded-Proto` from those proxies alone (`server.py`);
`ForwardedFor` reads RFC 7239's `Forwarded` the same way, for a proxy that sends that
header instead. Either way the client is the nearest address that is not a trusted proxy,
walking the chain from the right, so what the client wrote itself further left is never
taken. Rate limits key on that address (`request.client`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.served import served_settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_ELEMENT = re.compile(r'(?:[^,"]|"(?:[^"\\]|\\.)*")+')
_PAIR = re.compile(r'\s*([A-Za-z0-9!#$%&\'*+.^_`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*)\s*')


@dataclass(frozen=True)
class Hop:
    """One element of a `Forwarded` header: the address it was forwarded for, and the
    protocol that hop was reached by."""

    host: str
    proto: str | None


def trusted_networks(proxies: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy, strict=False) for proxy in proxies)


def is_trusted(host: str, networks: Sequence[Network]) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in networks)


def parse_forwarded(values: Iterable[str]) -> list[Hop]:
    """The hops of every `Forwarded` header, in order (RFC 7239 §4)."""
    hops = []
    for value in values:
        for element in _ELEMENT.findall(value):
            pairs = {}
            for part in element.split(";"):
                matched = _PAIR.fullmatch(part)
                if matched:
                    pairs[matched.group(1).lower()] = unquote(matched.group(2))
            if "for" in pairs:
                hops.append(Hop(node_host(pairs["for"]), pairs.get("proto")))
    return hops


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def node_host(node: str) -> str:
    """A node's address without its port: `[2001:db8::1]:4711`, `192.0.2.60:80`."""
    if node.startswith("["):
        return node[1 : node.find("]")] if "]" in node else node
    if node.count(":") == 1:
        return node.split(":", 1)[0]
    return node


def forwarded_client(hops: Sequence[Hop], networks: Sequence[Network]) -> Hop | None:
    """The nearest hop that is not a trusted proxy (the leftmost if all are)."""
    for hop in reversed(hops):
        if not is_trusted(hop.host, networks):
            return hop
    return hops[0] if hops else None


class ForwardedFor:
    """Take the client from `Forwarded` when a trusted proxy sent it (and no
    `X-Forwarded-For`, which uvicorn has read already)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            self.resolve(scope)
        await self.app(scope, receive, send)

    def resolve(self, scope: Scope) -> None:
        networks = trusted_networks(served_settings(scope).trusted_proxies)
        peer = scope.get("client")
        if not networks or peer is None or not is_trusted(peer[0], networks):
            return
        headers = scope.get("headers", ())
        if any(name == b"x-forwarded-for" for name, _ in headers):
            return
        values = [value.decode("latin-1") for name, value in headers if name == b"forwarded"]
        client = forwarded_client(parse_forwarded(values), networks)
        if client is None or not client.host:
            return
        scope["client"] = (client.host, 0)
        if client.proto in ("http", "https"):
            scope["scheme"] = client.proto
