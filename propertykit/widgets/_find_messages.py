"""What the lookup form's Find tab says: the area searched in words, and why an area or a price
range cannot be sent.

Shown through :mod:`propertykit.widgets._messages`, which names these sentences with the rest.
"""

from __future__ import annotations


def describe_area(area: dict[str, object], filters: dict[str, object]) -> str:
    """The area searched and its filters, as the Find tab's outcome names them.

    Examples
    --------
    >>> describe_area({"type": "outcode", "value": "SE11"}, {})
    'in SE11'
    >>> describe_area({"type": "point", "coordinates": [-0.1276, 51.5072], "radius": 1000},
    ...               {"beds": [2, 3], "propertyType": ["flat"], "priceMax": 300000})
    'within 1,000 m of 51.5072, -0.1276 (2 or 3 beds; flat; up to £300,000)'
    """
    if area.get("type") == "point":
        lng, lat = (float(value) for value in area["coordinates"])  # type: ignore[attr-defined]
        radius = float(area["radius"])  # type: ignore[arg-type]
        where = f"within {radius:,.0f} m of {lat:g}, {lng:g}"
    else:
        where = f"in {area.get('value')}"
    conditions = []
    beds = filters.get("beds")
    if isinstance(beds, list) and beds:
        conditions.append(
            f"{' or '.join(map(str, beds[:-1]))}{' or ' if len(beds) > 1 else ''}{beds[-1]} beds"
        )
    kinds = filters.get("propertyType")
    if isinstance(kinds, list) and kinds:
        conditions.append(" or ".join(map(str, kinds)))
    low, high = filters.get("priceMin"), filters.get("priceMax")
    if low and high:
        conditions.append(f"£{low:,} to £{high:,}")
    elif low:
        conditions.append(f"from £{low:,}")
    elif high:
        conditions.append(f"up to £{high:,}")
    return f"{where} ({'; '.join(conditions)})" if conditions else where


AREA_NAMES = {"postcode": "postcode", "outcode": "outcode (district)"}
AREA_EXAMPLES = {"postcode": "SW1A 1AA", "outcode": "SW1A"}


def describe_area_problem(kind: str, value: str) -> str:
    """A postcode or outcode the form will not send.

    Examples
    --------
    >>> describe_area_problem("outcode", "")
    'Nothing was sent: type an outcode (district) in Code, such as SW1A.'
    >>> describe_area_problem("postcode", "SW1A")
    'Nothing was sent: “SW1A” is not a full UK postcode; type one such as SW1A 1AA.'
    """
    name, example = AREA_NAMES.get(kind, kind), AREA_EXAMPLES.get(kind, "")
    if not value.strip():
        article = "an" if name[0] in "aeiou" else "a"
        return f"Nothing was sent: type {article} {name} in Code, such as {example}."
    full = "full UK postcode" if kind == "postcode" else f"UK {name}"
    return f"Nothing was sent: “{value.strip()}” is not a {full}; type one such as {example}."


POINT_PROBLEM = (
    "Nothing was sent: the longitude must be between -180 and 180, the latitude between -90 and "
    "90, and the radius above 0 metres."
)
NEGATIVE_PRICE = "Nothing was sent: a price cannot be below £0."
PRICES_CROSSED = "Nothing was sent: Min £ is above Max £."
