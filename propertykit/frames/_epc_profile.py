"""The EPC profile of a book of properties: how many in each band, how many below C, and how
many certificates have run out or will within a year.

Lenders report this of their mortgage books every quarter (climate-risk disclosures), landlords
of their rentals (letting a home rated below E is unlawful in England and Wales, and C is the
proposed floor). :func:`epc_profile` counts each property's current rating
(``epc.currentEnergyRating``) once, and its certificate's ``epc.validTo`` against a day: expired
(before the day), expiring within a year (from the day up to a year later), or without an end
date. Shares are of the rated properties; the properties without a rating are counted, never
dropped. The workbook's "EPC profile" sheet and the report's section both draw this one result.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import pandas as pd

from propertykit.frames._schema import EPC_RATINGS
from propertykit.frames._tables import epc_table, judged_day

#: The bands below C (the threshold lenders and landlords report against).
BELOW_C = ("D", "E", "F", "G")


@dataclass(frozen=True)
class EpcProfile:
    """The EPC profile of a frame: one computed result for every view that shows it.

    Attributes
    ----------
    bands
        One row per band A to G: ``band``, ``count`` (properties whose current rating is the
        band) and ``share`` (of the rated properties; missing when none is rated).
    properties
        How many properties the frame holds.
    rated, not_rated
        Properties with and without a current rating (``rated + not_rated == properties``).
    below_c, share_below_c
        Rated properties in bands D to G, and their share of the rated ones.
    expired, expiring
        Certificates whose ``validTo`` is before ``today``, and from ``today`` up to a year
        after it (the day a year on excluded).
    no_end_date
        Certificates (properties with a rating or a ``validFrom``) without a ``validTo``.
    today
        The day the certificates were judged on.
    """

    bands: pd.DataFrame
    properties: int
    rated: int
    not_rated: int
    below_c: int
    share_below_c: float
    expired: int
    expiring: int
    no_end_date: int
    today: pd.Timestamp

    def summary(self) -> list[tuple[str, int | float | str]]:
        """The profile's totals as (label, value) rows, in the words a reader sees.

        Shares are fractions (0.25 for a quarter); a share of nothing is ``"n/a"``.

        Examples
        --------
        >>> import propertykit as pk
        >>> df = pk.frame([{"epc": {"currentEnergyRating": "D", "validTo": "2025-03-01"}}])
        >>> epc_profile(df, today="2025-01-01").summary()[3]
        ('Share below C (D to G)', 1.0)
        """
        share = "n/a" if pd.isna(self.share_below_c) else self.share_below_c
        day = f"{self.today:%d %B %Y}"
        return [
            ("Properties", self.properties),
            ("With a current EPC rating", self.rated),
            ("Without a rating", self.not_rated),
            ("Share below C (D to G)", share),
            ("Rated below C (D to G)", self.below_c),
            (f"Certificates expired before {day}", self.expired),
            (f"Certificates expiring within a year of {day}", self.expiring),
            ("Certificates without an end date (validTo)", self.no_end_date),
        ]


def epc_profile(df: pd.DataFrame, *, today: date | datetime | str | None = None) -> EpcProfile:
    """Count and share per EPC band, the share below C, and certificates expired or expiring.

    Parameters
    ----------
    df
        A property frame (:func:`propertykit.frame`, ``client.properties(...)``).
    today
        The day certificates are judged on (default: today in UTC). Expiring means a ``validTo``
        on or after ``today`` and before the same date a year later.

    Returns
    -------
    EpcProfile
        The bands table and the totals (see :class:`EpcProfile`).

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([
    ...     {"epc": {"currentEnergyRating": "C", "validTo": "2031-01-01"}},
    ...     {"epc": {"currentEnergyRating": "E", "validTo": "2025-06-30"}},
    ...     {"epc": {"currentEnergyRating": "E", "validTo": "2019-02-01"}},
    ...     {"propertyId": "no certificate"},
    ... ])
    >>> profile = epc_profile(df, today="2025-01-01")
    >>> profile.bands.set_index("band").loc[["C", "E"], "count"].tolist()
    [1, 2]
    >>> profile.rated, profile.not_rated, round(profile.share_below_c, 3)
    (3, 1, 0.667)
    >>> profile.expired, profile.expiring, profile.no_end_date
    (1, 1, 0)
    """
    day = judged_day(today)
    table = epc_table(df, today=day)
    ratings = table["currentEnergyRating"].astype("object")
    rated_mask = ratings.isin(EPC_RATINGS)
    rated = int(rated_mask.sum())
    counts = [int((ratings == band).sum()) for band in EPC_RATINGS]
    shares = [count / rated if rated else float("nan") for count in counts]
    bands = pd.DataFrame({"band": list(EPC_RATINGS), "count": counts, "share": shares})
    below_c = sum(count for band, count in zip(EPC_RATINGS, counts, strict=True) if band in BELOW_C)
    valid_to = table["validTo"]
    a_year_on = day + pd.DateOffset(years=1)
    certified = rated_mask | table["validFrom"].notna() | valid_to.notna()
    return EpcProfile(
        bands=bands,
        properties=len(table),
        rated=rated,
        not_rated=len(table) - rated,
        below_c=below_c,
        share_below_c=below_c / rated if rated else float("nan"),
        expired=int((valid_to < day).sum()),
        expiring=int(((valid_to >= day) & (valid_to < a_year_on)).sum()),
        no_end_date=int((certified & valid_to.isna()).sum()),
        today=day,
    )
