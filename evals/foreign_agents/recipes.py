"""The one tool the hand-written agents share: a recipe lookup over a fixed table."""

from __future__ import annotations

RECIPES = {
    "pad thai": "Soak rice noodles, fry garlic and shallots, add tamarind, fish sauce and palm sugar.",
    "tom kha gai": "Simmer coconut milk with galangal, lemongrass and kaffir lime leaves; add chicken.",
}

INSTRUCTIONS = ("You are a Thai cooking assistant. Look a dish up with lookup_recipe before you answer, "
                "and answer in two sentences at most.")

PARAMETERS = {
    "type": "object",
    "properties": {"dish": {"type": "string", "description": "The dish's name, e.g. pad thai."}},
    "required": ["dish"],
    "additionalProperties": False,
}
DESCRIPTION = "Look up how a Thai dish is made."


def lookup_recipe(dish: str) -> str:
    return RECIPES.get(dish.strip().lower(), f"No recipe for {dish}.")


def dated(instructions: str, clock) -> str:
    """The instructions with today's date, read from the clock the harness freezes."""
    return f"{instructions}\nToday is {clock:%Y-%m-%d}."
