"""Linear forms over the model's integer unknowns: the one piece of algebra every model shares.

Value-free: variable indices and integer coefficients only.
"""

from __future__ import annotations

Form = tuple[tuple[int, int], ...]
"""A linear form: sorted (variable index, nonzero integer coefficient) pairs."""


def add(*terms: tuple[Form, int]) -> Form:
    """The linear combination ``sum(coefficient * form)`` as a form."""
    total: dict[int, int] = {}
    for form, coefficient in terms:
        for variable, value in form:
            total[variable] = total.get(variable, 0) + coefficient * value
    return tuple(sorted((v, c) for v, c in total.items() if c))


def variable(index: int) -> Form:
    """The form of one unknown."""
    return ((index, 1),)


def equal(first: Form, second: Form) -> list[Form]:
    """``first == second`` as the two rows ``first - second >= 0`` and ``second - first >= 0``."""
    difference = add((first, 1), (second, -1))
    return [difference, add((difference, -1))] if difference else []
