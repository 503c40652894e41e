"""The report's EPC profile: the same counts as the frames' profile, in the page's own section."""

from __future__ import annotations

import re

import pandas as pd

from propertykit.frames import epc_profile
from propertykit.views import build_report
from propertykit.views._epc_profile import epc_profile_html


def test_the_report_shows_the_books_epc_profile(properties: pd.DataFrame) -> None:
    page = build_report(properties.head(60))
    section = page[page.index("<h2>EPC profile</h2>") :]
    section = section[: section.index("</section>")]
    profile = epc_profile(properties.head(60))
    ratings = properties.head(60)["epc.currentEnergyRating"].astype("object")
    for band in "ABCDEFG":  # counted again here, from the frame's column
        count = int((ratings == band).sum())
        assert re.search(rf"<td>{band}</td><td class=\"number\">{count:,}</td>", section), band
    below = ratings.isin(list("DEFG")).sum() / ratings.isin(list("ABCDEFG")).sum()
    assert f'Share below C (D to G)</th><td class="number">{below:.1%}</td>' in section
    assert f"Certificates expired before {profile.today:%d %B %Y}" in section


def test_a_frame_without_ratings_says_n_a() -> None:
    fragment = epc_profile_html(pd.DataFrame({"propertyId": ["PK1"]}), today="2025-01-01")
    assert 'Share below C (D to G)</th><td class="number">n/a</td>' in fragment
