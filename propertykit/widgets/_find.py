"""The lookup form's "Find" tab: properties by area and a few filters, over ``client.query``.

The area is a postcode, an outcode, or a point and radius; the filters are a price range (typed in
pounds, sent in the service's money unit: pence under the ``vepler`` profile), bedrooms and
property types. Bad input is reported in the form, in plain words and once, and nothing is sent:
the area goes through the client's own check (:func:`propertykit.client._query_input.check_area`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from propertykit.client import check_area
from propertykit.errors import InvalidInput
from propertykit.frames import MINOR_PER_MAJOR
from propertykit.widgets import _messages as words
from propertykit.widgets._find_messages import (
    NEGATIVE_PRICE,
    POINT_PROBLEM,
    PRICES_CROSSED,
    describe_area,
    describe_area_problem,
)
from propertykit.widgets._messages import describe_error
from propertykit.widgets._parts import column, fill, fit_options, hint, label, paragraph, row

if TYPE_CHECKING:
    from propertykit.client import Client

logger = logging.getLogger("propertykit")

#: Property types offered by the picker (the service's own words).
PROPERTY_TYPES = ("detached", "semi-detached", "terraced", "flat", "maisonette", "bungalow")


class FindPanel:
    """Area and filters in, records out (to ``show``); what happened in its own ``message``.

    Parameters
    ----------
    client
        The client whose ``query_records`` is asked.
    show
        Called with the records found and the area searched, in words (``"in SE11"``); the
        lookup form builds its table, charts and map, and returns the sentence to say and its
        kind (``ok``, ``warn``).
    on_error
        Called, with why, when a search failed or found nothing (the form marks the results it
        still shows as earlier ones).
    lock
        Held while the client is in use (the form's timers share the client).

    Examples
    --------
    >>> found = []
    >>> panel = FindPanel(client, show=lambda records, where: (found.extend(records), "ok"))
    >>> panel.area_type.value, panel.area_value.value = "outcode", "SE11"
    >>> panel.max_results.value = 5
    >>> panel.find()
    5
    """

    def __init__(
        self,
        client: Client,
        *,
        show: Callable[[list[dict[str, Any]], str], tuple[Any, str]],
        on_error: Callable[[str], None] | None = None,
        lock: Any = None,
    ) -> None:
        self.client = client
        self._show = show
        self._on_error = on_error
        self._lock = lock
        self.area_type = widgets.Dropdown(
            options=[
                ("Postcode", "postcode"),
                ("Outcode (district)", "outcode"),
                ("Point and radius", "point"),
            ],
            value="postcode",
            description="Area",
            layout=fill(),
        )
        self.area_value = widgets.Text(placeholder="SW1A 1AA", description="Code", layout=fill())
        self.longitude = widgets.FloatText(description="Longitude", value=-0.1276, layout=fill())
        self.latitude = widgets.FloatText(description="Latitude", value=51.5072, layout=fill())
        self.radius = widgets.FloatText(description="Radius (m)", value=1000, layout=fill())
        self.price_min = widgets.FloatText(description="Min £", value=0, layout=fill())
        self.price_max = widgets.FloatText(description="Max £", value=0, layout=fill())
        beds = [str(n) for n in range(1, 7)]
        self.beds = widgets.SelectMultiple(
            options=[(n, int(n)) for n in beds], rows=6, layout=fit_options(beds)
        )
        self.property_types = widgets.SelectMultiple(
            options=list(PROPERTY_TYPES), rows=6, layout=fit_options(PROPERTY_TYPES)
        )
        self.max_results = widgets.BoundedIntText(
            value=100, min=1, max=10_000, description="At most", layout=fill()
        )
        self.find_button = widgets.Button(description="Find", button_style="primary", icon="search")
        self.note = widgets.HTML()
        self.message = widgets.HTML(layout=fill())  # the Find tab's own: what it found, or why not
        self.point_box = widgets.VBox([self.longitude, self.latitude, self.radius])
        lists = widgets.HBox(
            [self.beds, self.property_types], layout=widgets.Layout(grid_gap="8px", width="auto")
        )
        self.widget = widgets.VBox(
            [
                row(
                    [
                        column(  # how many beside where, so neither column ends in a gap
                            [
                                label("Where"),
                                self.area_type,
                                self.area_value,
                                self.point_box,
                                self.max_results,
                                hint(words.AT_MOST_HINT),
                            ],
                            basis="240px",
                        ),
                        column(
                            [
                                label("Price"),
                                self.price_min,
                                self.price_max,
                                hint(words.PRICE_HINT),
                            ],
                            basis="240px",
                        ),
                        column(
                            [label("Beds and type"), lists, hint(words.CHOOSE_SEVERAL_HINT)],
                            basis="250px",
                            grow=0,
                        ),
                    ]
                ),
                widgets.HBox([self.find_button, self.note]),
                self.message,
            ]
        )
        self.area_type.observe(lambda _change: self._layout(), names="value")
        self.find_button.on_click(lambda _button: self.find())
        self._layout()

    def _layout(self) -> None:
        point = self.area_type.value == "point"
        self.point_box.layout.display = None if point else "none"
        self.area_value.layout.display = "none" if point else None
        self.area_value.placeholder = "SW1A" if self.area_type.value == "outcode" else "SW1A 1AA"

    def area(self) -> dict[str, Any]:
        """The area in the service's shape, from the fields."""
        if self.area_type.value == "point":
            return {
                "type": "point",
                "coordinates": [self.longitude.value, self.latitude.value],
                "radius": self.radius.value,
            }
        return {"type": self.area_type.value, "value": self.area_value.value.strip()}

    def filters(self) -> dict[str, Any]:
        """The filters in the service's names; prices in its money unit."""
        factor = MINOR_PER_MAJOR if self.client.endpoints.money_unit == "minor" else 1
        filters: dict[str, Any] = {}
        if self.price_min.value:
            filters["priceMin"] = round(self.price_min.value * factor)
        if self.price_max.value:
            filters["priceMax"] = round(self.price_max.value * factor)
        if self.beds.value:
            filters["beds"] = list(self.beds.value)
        if self.property_types.value:
            filters["propertyType"] = list(self.property_types.value)
        return filters

    def problem(self) -> str | None:
        """Why the form's input cannot be sent, in plain words (``None``: it can be).

        The area goes through the client's own check; prices are pounds, 0 for no limit.

        Examples
        --------
        >>> panel = FindPanel(client, show=lambda records, where: ("", "ok"))
        >>> panel.area_type.value, panel.area_value.value = "postcode", "SW1A"
        >>> panel.problem()
        'Nothing was sent: “SW1A” is not a full UK postcode; type one such as SW1A 1AA.'
        """
        try:
            check_area(self.area())
        except InvalidInput:
            if self.area_type.value == "point":
                return POINT_PROBLEM
            return describe_area_problem(self.area_type.value, self.area_value.value)
        low, high = self.price_min.value, self.price_max.value
        if low < 0 or high < 0:
            return NEGATIVE_PRICE
        if high and low > high:
            return PRICES_CROSSED
        return None

    def describe(self) -> str:
        """The area searched and the filters, in words (prices in pounds, as typed).

        Examples
        --------
        >>> panel = FindPanel(client, show=lambda records, where: ("", "ok"))
        >>> panel.area_type.value, panel.area_value.value = "outcode", "se11 "
        >>> panel.describe()
        'in se11'
        """
        typed = {
            "beds": list(self.beds.value),
            "propertyType": list(self.property_types.value),
            "priceMin": round(self.price_min.value),
            "priceMax": round(self.price_max.value),
        }
        return describe_area(self.area(), typed)

    def find(self) -> int:
        """Ask the query endpoint (what the Find button does); returns how many were found."""
        problem = self.problem()
        if problem is not None:
            self._failed(problem)
            return 0
        where = self.describe()
        self.find_button.disabled = True
        self.note.value = paragraph(f"Asking the service for the properties {where}…")
        try:
            if self._lock is not None:
                with self._lock:
                    records = self._query(self.area(), self.filters())
            else:
                records = self._query(self.area(), self.filters())
        except Exception as exc:
            logger.debug("query failed", exc_info=True)
            self._failed(f"The search {where} failed. {describe_error(exc)}")
            return 0
        finally:
            self.find_button.disabled = False
            self.note.value = ""
        text, kind = self._show(records, where)
        self.message.value = paragraph(str(text), kind=kind)
        return len(records)

    def _failed(self, text: str) -> None:
        self.message.value = paragraph(text, kind="error")
        if self._on_error is not None:
            self._on_error("from before the error above")

    def _query(self, area: dict[str, Any], filters: dict[str, Any]) -> list[dict[str, Any]]:
        return self.client.query_records(area, max_results=self.max_results.value, **filters)
