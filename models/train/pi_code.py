"""Benign SQL statements for the prompt-injection transformer (v7 candidate, opt-in: --sql-benign N).

v6 flags SQL statements whose identifiers and literals are ordinary English words
(`SELECT * FROM brain WHERE guard = 'political'`) far more often than v3: it reads a few
charged words in a short, non-prose text as an attack. Real applications send SQL in fields
(query editors, BI dashboards, admin consoles), so the model should learn that a statement's
words are data. The grammar composes statements from clause shapes x an English vocabulary;
nothing here comes from a dataset. The vocabulary holds nouns, adjectives and a few charged
words (they are what the model over-reads) but no instruction verbs (ignore, forget, reveal,
pretend ...): an instruction hidden in a SQL string literal must stay an attack.
"""

from __future__ import annotations

import random

_WORDS = """
apple river cloud mountain window door table chair lamp garden flower tree forest ocean island
bridge castle village city street market bakery kitchen library museum school teacher student
doctor nurse farmer pilot driver sailor soldier police army battle war weapon knife gun bomb
fire smoke storm thunder winter summer autumn spring morning evening night shadow ghost
danger poison blood death kill crime prison judge court law vote election party political
money bank price market trade business company office manager worker factory machine engine
wheel train plane ship boat horse cow sheep goat wolf bear tiger snake eagle fish bird
red blue green yellow black white dark bright quiet loud happy angry brave proud gentle wild
old young tall short heavy light rich poor strong weak simple clever honest secret hidden
music poem story letter book page word number square circle line point edge corner center
""".split()

_TABLES = """
users orders products customers invoices employees departments sessions events accounts posts
comments payments shipments reviews categories suppliers inventory logs tickets projects
""".split()

_COLUMNS = """
id name email title status price amount total quantity city country created_at updated_at
user_id order_id product_id customer_id category description score rating level owner
""".split()


def _ident(rng: random.Random, real: float) -> str:
    """A column or table name: a real schema word, an English word, or a CamelCase join."""
    r = rng.random()
    if r < real:
        return rng.choice(_COLUMNS)
    if r < real + 0.15:
        return rng.choice(_WORDS).capitalize() + rng.choice(_WORDS).capitalize()
    return rng.choice(_WORDS)


def _table(rng: random.Random, real: float) -> str:
    return rng.choice(_TABLES) if rng.random() < real else rng.choice(_WORDS)


def _literal(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        return f"'{rng.choice(_WORDS)}'"
    if r < 0.7:
        return f"'[{rng.choice(_WORDS)}]%'"
    if r < 0.85:
        return str(rng.randint(0, 5000))
    return f"'{rng.choice(_WORDS)} {rng.choice(_WORDS)}'"


def _condition(rng: random.Random, real: float) -> str:
    col = _ident(rng, real)
    shape = rng.randrange(6)
    if shape == 0:
        return f"{col} = {_literal(rng)}"
    if shape == 1:
        return f"{col} {rng.choice(['LIKE', 'NOT LIKE'])} {_literal(rng)}"
    if shape == 2:
        return f"{col} {rng.choice(['BETWEEN', 'NOT BETWEEN'])} {_literal(rng)} AND {_literal(rng)}"
    if shape == 3:
        return f"{col} IN ({', '.join(_literal(rng) for _ in range(rng.randint(2, 4)))})"
    if shape == 4:
        return f"{col} {rng.choice(['>', '<', '>=', '<=', '<>'])} {rng.randint(0, 999)}"
    return f"{col} IS {rng.choice(['NULL', 'NOT NULL'])}"


def _where(rng: random.Random, real: float) -> str:
    conds = [_condition(rng, real) for _ in range(rng.choice([1, 1, 2, 3]))]
    joined = conds[0]
    for c in conds[1:]:
        joined += f" {rng.choice(['AND', 'OR'])} {c}"
    return f" WHERE {joined}"


def _select(rng: random.Random, real: float) -> str:
    cols = "*" if rng.random() < 0.4 else ", ".join(_ident(rng, real) for _ in range(rng.randint(1, 5)))
    if rng.random() < 0.2:
        cols = f"{_ident(rng, real)} AS {_ident(rng, real)}, {_ident(rng, real)} AS [{rng.choice(_WORDS)}]"
    top = f"TOP {rng.randint(1, 50)} " if rng.random() < 0.1 else ""
    sql = f"SELECT {top}{cols} FROM {_table(rng, real)}"
    if rng.random() < 0.3:
        a, b = _table(rng, real), _table(rng, real)
        sql += f" {rng.choice(['JOIN', 'LEFT JOIN', 'INNER JOIN'])} {b} ON {a}.{_ident(rng, real)} = {b}.{_ident(rng, real)}"
    if rng.random() < 0.8:
        sql += _where(rng, real)
    if rng.random() < 0.2:
        sql += f" GROUP BY {_ident(rng, real)}"
    if rng.random() < 0.3:
        sql += f" ORDER BY {_ident(rng, real)} {rng.choice(['ASC', 'DESC', ''])}".rstrip()
    if rng.random() < 0.2:
        sql += f" LIMIT {rng.randint(1, 100)}"
    return sql


def _statement(rng: random.Random, real: float) -> str:
    kind = rng.random()
    if kind < 0.6:
        sql = _select(rng, real)
    elif kind < 0.75:
        sets = ", ".join(f"{_ident(rng, real)} = {_literal(rng)}" for _ in range(rng.randint(1, 3)))
        sql = f"UPDATE {_table(rng, real)} SET {sets}{_where(rng, real)}"
    elif kind < 0.9:
        cols = [_ident(rng, real) for _ in range(rng.randint(1, 4))]
        vals = ", ".join(_literal(rng) for _ in cols)
        sql = f"INSERT INTO {_table(rng, real)} ({', '.join(cols)}) VALUES ({vals})"
    else:
        sql = f"DELETE FROM {_table(rng, real)}{_where(rng, real)}"
    if rng.random() < 0.5:
        sql = sql.lower() if rng.random() < 0.5 else sql
    return sql + (";" if rng.random() < 0.4 else "")


def sql_statements(count: int, seed: int) -> list[str]:
    """`count` distinct benign statements; a third use a real-looking schema, the rest English words."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        text = _statement(rng, real=0.33 if rng.random() < 0.33 else 0.0)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
