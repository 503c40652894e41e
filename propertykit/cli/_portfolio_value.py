"""``propertykit portfolio ... --value``: the matched homes valued, each from the evidence around
it (``client.appraise``), within a budget of credits said before anything billable is sent.

The options are checked with the rest of the command's, before the first request:
``--radius`` (metres, above 0, at most 8,000), ``--as-of`` (a date up to today) and
``--budget`` (a number of credits). After matching, the plan of the valuation (the homes'
lookups and neighbourhoods: at most so many credits, by ``Endpoints``' cost rule) is printed, and
a plan over the budget ends the command before any lookup is sent. After it, what was charged is
printed beside the plan. An interrupted run, run again, pays only for what the cache lacks.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
from dataclasses import dataclass

import pandas as pd

from propertykit.cli._service import DEFAULT_RADIUS_M
from propertykit.client import AppraisalPlan, Client
from propertykit.errors import InvalidInput
from propertykit.frames import ValuationSearch, check_as_of
from propertykit.text import plural, visible


@dataclass(frozen=True)
class ValueOptions:
    """What ``--value`` was asked with, checked: radius (m), date (or ``None``), budget."""

    radius_m: float
    as_of: pd.Timestamp | None
    budget: float | None


def configure_value(parser: argparse.ArgumentParser) -> None:
    """The ``--value`` options of ``propertykit portfolio``."""
    parser.add_argument(
        "--value",
        action="store_true",
        help="value each matched home from the sales around it (client.appraise)",
    )
    parser.add_argument(
        "--radius",
        metavar="M",
        help=f"metres about each home (default {DEFAULT_RADIUS_M:,.0f}, as the report's and the "
        "valuation form's)",
    )
    parser.add_argument("--as-of", metavar="D", help="the valuation date (default: each home's)")
    parser.add_argument(
        "--budget", metavar="CREDITS", help="refuse, sending nothing, if it could cost more"
    )


def check_pdf_extra() -> None:
    """A PDF report needs Playwright (the ``export`` extra): said before anything is sent."""
    if importlib.util.find_spec("playwright") is None:
        raise InvalidInput(
            "--report as .pdf needs Playwright: pip install 'propertykit[export]' (or write "
            ".html); nothing was sent"
        )


def check_value_options(args: argparse.Namespace) -> ValueOptions | None:
    """The ``--value`` options read and checked (``None``: not valuing); refused before anything
    is sent."""
    given = [name for name in ("radius", "as_of", "budget") if getattr(args, name) is not None]
    if not args.value:
        if given:
            names = ", ".join("--" + name.replace("_", "-") for name in given)
            raise InvalidInput(f"{names} only apply with --value")
        return None
    radius = DEFAULT_RADIUS_M if args.radius is None else _number(args.radius, "--radius", "metres")
    budget = None if args.budget is None else _number(args.budget, "--budget", "credits")
    if budget is not None and budget < 0:
        raise InvalidInput(f"--budget {visible(args.budget)!r}: give 0 credits or more")
    checked = ValuationSearch(radius_m=radius).radius_m  # above 0, at most 8 km
    return ValueOptions(float(checked or 0), check_as_of(args.as_of), budget)


def _number(text: str, option: str, unit: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise InvalidInput(f"{option} {visible(text)!r} is not a number of {unit}") from None
    if not math.isfinite(number):
        raise InvalidInput(f"{option} {visible(text)!r} is not a number of {unit}")
    return number


def matched_ids(matches: pd.DataFrame) -> list[str]:
    """The matched location ids, each once, in the order of the list."""
    status = matches["status"].astype("object")
    ids = matches.loc[status == "matched", "locationId"].dropna().astype(str)
    return list(dict.fromkeys(ids))


def plan_within_budget(client: Client, ids: list[str], options: ValueOptions) -> AppraisalPlan:
    """The valuation's plan, printed; :class:`InvalidInput` when it could pass the budget."""
    plan = client.appraise(ids, radius_m=options.radius_m, as_of=options.as_of, dry_run=True)
    print(f"Valuing: {_credits(plan)} planned, before anything is sent ({_plain(plan)})")
    if options.budget is None:
        return plan
    if plan.credits is None:
        raise InvalidInput(
            "--budget: the service's credit costs are not known (Endpoints.credits_per_record "
            "and least_credits_per_request); nothing was sent"
        )
    if plan.credits > options.budget:
        raise InvalidInput(
            f"the valuation could cost {plan.credits:,.0f} credits, over --budget "
            f"{options.budget:,.0f}; nothing was sent for it (a run whose homes' records are "
            "cached is priced closer)"
        )
    return plan


def value_book(
    client: Client, ids: list[str], options: ValueOptions, plan: AppraisalPlan
) -> pd.DataFrame | None:
    """Every matched home valued, one row each (those not valued say why)."""
    if not ids:
        return None
    values = client.appraise(ids, radius_m=options.radius_m, as_of=options.as_of).values
    valued = int(values["estimate"].notna().sum())
    borrowed = int(values["wider"].notna().sum())
    print(
        f"Valued {valued:,} of {plural(len(values), 'property', 'properties')} from the sales "
        f"within {options.radius_m:,.0f} m of each ({borrowed:,} with too few around them "
        "borrowing their outcode's); the Valuation sheet says why for the rest"
    )
    values.attrs = {**values.attrs, "credits": {"planned": plan.credits, "charged": None}}
    return values


def say_charged(values: pd.DataFrame | None, plan: AppraisalPlan, spent: int | None) -> None:
    """What the homes' lookups and the valuation charged, beside the plan (kept in the rows'
    ``attrs["credits"]`` for the workbook's notes); ``spent``: ``None`` when not reported."""
    text = "not reported by the service" if spent is None else f"{spent:,} credits"
    print(f"Valuing: charged {text} (planned {_credits(plan)})")
    if values is not None:
        values.attrs["credits"] = {"planned": plan.credits, "charged": spent}


def _credits(plan: AppraisalPlan) -> str:
    if plan.credits is None:
        return "credits unknown"
    bound = "" if plan.exact else "at most "
    return f"{bound}{plan.credits:,.0f} credits"


def _plain(plan: AppraisalPlan) -> str:
    return repr(plan).removeprefix("<").removesuffix(">")
