"""What a task's outcome is worth (seed 002 §9, §5.3): the signal's own amount where it has one, else the type's
revenue multiplier times the tenant's average value; an outcome that attributes no revenue is worth nothing."""

from __future__ import annotations

from typing import Literal

from loopline.domain.task_contract import Outcome

Basis = Literal["signal_amount", "multiplier", "none"]
"""How a value was reached: the signal's amount, the outcome's multiplier, or no revenue for the outcome."""


def attributed_value(outcome: Outcome | None, average_value: float, amount: float | None) -> tuple[float, Basis]:
    """The value of ending with `outcome` and how it was reached; a positive `amount` (a payment's) is the value itself."""
    if outcome is None or not outcome.attribute_revenue:
        return 0.0, "none"
    if amount is not None and amount > 0:
        return round(float(amount), 2), "signal_amount"
    return round(average_value * (outcome.revenue_multiplier or 0.0), 2), "multiplier"
