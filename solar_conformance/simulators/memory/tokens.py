"""ServiceAccount tokens of the in-memory API server: JWTs with the claims a real one issues."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import jwt

AUTH_CACHE_TTL = timedelta(seconds=10)  # kube-apiserver's cache of successful token reviews


@dataclass(frozen=True)
class TokenClaims:
    namespace: str
    service_account: str
    service_account_uid: str
    secret: tuple[str, str] | None  # (name, uid) of the object the token is bound to
    expires_at: datetime
    jti: str = ""  # the token's own id; set by the issuer
    # The TokenRequest's spec.audiences; none: the API server's own (kube-apiserver's default)
    audiences: tuple[str, ...] = ()


class TokenIssuer:
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        # kube-apiserver's --api-audiences, by default its --service-account-issuer: a token is
        # accepted only when one of its audiences is one of these.
        self.api_audiences: tuple[str, ...] = (issuer,)
        self._key = secrets.token_bytes(32)
        # A token's signature and claims never change: check them once (PyJWT takes about a
        # millisecond), and only its expiry on every request.
        self._verified: dict[str, dict[str, Any] | None] = {}

    def issue(self, claims: TokenClaims, now: datetime) -> str:
        k8s: dict[str, Any] = {
            "namespace": claims.namespace,
            "serviceaccount": {"name": claims.service_account, "uid": claims.service_account_uid},
        }
        if claims.secret is not None:
            k8s["secret"] = {"name": claims.secret[0], "uid": claims.secret[1]}
        payload = {
            "iss": self.issuer,
            "sub": f"system:serviceaccount:{claims.namespace}:{claims.service_account}",
            "aud": list(claims.audiences or self.api_audiences),
            "iat": int(now.timestamp()),
            "nbf": int(now.timestamp()),
            "exp": int(claims.expires_at.timestamp()),
            "jti": claims.jti or secrets.token_hex(8),
            "kubernetes.io": k8s,
        }
        return jwt.encode(payload, self._key, algorithm="HS256")

    def verify(self, token: str, now: datetime) -> TokenClaims | None:
        """The claims of a token this issuer signed and that has not expired at `now`."""
        if token not in self._verified:
            try:
                self._verified[token] = jwt.decode(
                    token,
                    self._key,
                    algorithms=["HS256"],
                    audience=list(self.api_audiences),
                    options={"verify_exp": False, "verify_nbf": False, "verify_iat": False},
                )
            except jwt.PyJWTError:
                self._verified[token] = None
        payload = self._verified[token]
        if payload is None:
            return None
        if payload["exp"] <= now.timestamp():
            return None
        k8s = payload["kubernetes.io"]
        secret = k8s.get("secret")
        return TokenClaims(
            namespace=k8s["namespace"],
            service_account=k8s["serviceaccount"]["name"],
            service_account_uid=k8s["serviceaccount"]["uid"],
            secret=(secret["name"], secret["uid"]) if secret else None,
            expires_at=datetime.fromtimestamp(payload["exp"], tz=now.tzinfo),
            jti=str(payload.get("jti", "")),
        )
