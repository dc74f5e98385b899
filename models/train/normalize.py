"""What a detector sees at runtime: each model is trained on the same view of a text that
Rampart hands it, so training and serving see the same bytes."""

from __future__ import annotations

import html
import re
import urllib.parse

_PCT = re.compile(r"%[0-9a-fA-F]{2}")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WS = re.compile(r"\s+")


def runtime_view(text: str) -> str:
    """Approximates what Rampart's normaliser hands a detector for one field: repeated
    percent-decoding, HTML entities, comment removal, whitespace collapse, ASCII case folding."""
    t = text
    for _ in range(3):
        if not _PCT.search(t):
            break
        t = urllib.parse.unquote(t, errors="replace")
    for _ in range(2):
        u = html.unescape(t)
        if u == t:
            break
        t = u
    t = t.replace("\x00", "")
    t = _BLOCK_COMMENT.sub(" ", t)
    t = _HTML_COMMENT.sub(" ", t)
    t = _WS.sub(" ", t).strip()
    return t.lower()


def query_values(qs: str) -> list[str]:
    """Splits a query string / form body into its values (one model call per field)."""
    out = []
    for part in qs.split("&"):
        if not part:
            continue
        _, _, v = part.partition("=")
        if v:
            out.append(v)
    return out


def pi_prep(text: str) -> str:
    # No lower-casing here: the featurizer folds ASCII case itself.
    return _WS.sub(" ", text).strip()
