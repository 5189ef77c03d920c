"""The OIDC tokens used already, by `jti`: each verified token issues one run
(`consume_jti`, in the transaction that acts on the token)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.auth.claims import LEEWAY, ActionsClaims
from app.db.models import UsedOidcToken, utcnow
from hbench.errors import HbenchError


def consume_jti(session: Session, claims: ActionsClaims, now: datetime | None = None) -> None:
    """Record the token's `jti` as used, in the session's transaction (the caller commits
    it with what the token was used for); refuse a token used before. Tokens past their
    expiry are forgotten: they can't pass `verify` any more. When two requests race with
    one token, the loser's transaction is rolled back as it is refused."""
    moment = now or utcnow()
    session.execute(delete(UsedOidcToken).where(UsedOidcToken.expires_at < moment))
    reused = HbenchError(
        "oidc-token-reused",
        "this OIDC token was used before; each token issues one run, so request a new one",
    )
    if session.scalar(select(UsedOidcToken.jti).where(UsedOidcToken.jti == claims.jti)):
        raise reused
    expires = datetime.fromtimestamp(claims.exp, moment.tzinfo) + LEEWAY
    session.add(UsedOidcToken(jti=claims.jti, expires_at=expires, used_at=moment))
    try:
        session.flush()
    except IntegrityError:
        # Another request recorded it between our look-up and our insert.
        session.rollback()
        raise reused from None
