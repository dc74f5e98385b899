"""Benign role prompts built around real chat (v4 training family, issue 13).

v3 flagged 3.96% of awesome_chatgpt's held-out "act as" prompts (v2: 0.74%). What it flags are
role prompts with a list of behaviour rules ("You will obey the following rules", "No prose
before or after", "Never explain"): the same imperative, second-person shape as an injection,
asking for ordinary work. This family composes that shape around the TRAINING part of the
ShareGPT user messages (pi_heldout's hash split; the held-out part is never read here), so the
model sees persona + rules + a real request labelled benign.

Roles and rules are written for this project; none is taken from awesome_chatgpt."""

from __future__ import annotations

import random

ROLES = ["a senior Python developer", "a patient maths tutor", "an experienced copywriter", "a travel planner",
         "a nutritionist", "a career coach", "a contract lawyer explaining terms in plain English",
         "a product manager", "a data analyst", "a history teacher", "a UX reviewer", "a fitness coach",
         "a technical writer", "a Dungeon Master for a fantasy campaign", "a job interviewer for a junior role",
         "a French conversation partner", "a customer-support agent for a software company", "an SEO consultant",
         "a film critic", "a personal finance advisor", "a recipe developer", "a debate opponent",
         "a code reviewer", "a Linux system administrator", "a startup mentor", "a poet", "an editor",
         "a museum guide", "a chess coach", "a language learning app"]
OPENERS = ["I want you to act as {role}.", "Act as {role}.", "You are {role}.", "Pretend you are {role}.",
           "From now on you will play the role of {role}.", "Take on the persona of {role}.",
           "Your role: {role}.", "Please behave like {role} for this conversation."]
RULES = ["Answer in at most five sentences.", "Do not explain the code, just write it.",
         "Always reply in Markdown.", "Ask me one question at a time.",
         "Do not use jargon.", "Use British spelling.", "Put the final answer in a code block.",
         "Do not add any introduction or conclusion.", "Only reply with the table, no prose before or after.",
         "If you are unsure, say so instead of guessing.", "Keep a friendly but professional tone.",
         "Do not repeat my question back to me.", "Respond only in JSON with the keys title and body.",
         "You must follow these rules for every answer.",
         "Wait for my confirmation before moving to the next step.", "Write in the second person."]
HEADERS = ["Rules:", "You will obey the following rules:", "Follow these instructions strictly:",
           "Constraints:", "Guidelines for your answers:", "Important:"]


def role_prompts(chat_messages: list[str], count: int, seed: int) -> list[str]:
    """`count` distinct benign role prompts: opener, optional rule list, then a ShareGPT training
    message as the actual request (or the request first and the role after, as users also write)."""
    rng = random.Random(seed)
    msgs = [m for m in chat_messages if 20 <= len(m) <= 1200]
    out, seen = [], set()
    for _ in range(count * 4):
        if len(out) >= count or not msgs:
            break
        opener = rng.choice(OPENERS).replace("{role}", rng.choice(ROLES))
        rules = rng.sample(RULES, rng.randint(0, 4))
        if rules:
            style = rng.random()
            if style < 0.4:
                block = rng.choice(HEADERS) + "\n" + "\n".join(f"{i + 1}. {r}" for i, r in enumerate(rules))
            elif style < 0.7:
                block = rng.choice(HEADERS) + "\n" + "\n".join(f"- {r}" for r in rules)
            else:
                block = " ".join(rules)
        else:
            block = ""
        request = rng.choice(msgs)
        parts = [opener, block, request] if rng.random() < 0.8 else [request, opener, block]
        text = "\n\n".join(p for p in parts if p)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out
