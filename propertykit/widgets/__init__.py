"""widgets — ipywidgets forms over a :class:`propertykit.Client`: look properties up, value one
from its comparable sales, buy title deeds, review the addresses a match left uncertain.

>>> import propertykit as pk
>>> form = pk.widgets.LookupForm(client)  # in a notebook, a cell ending in `form` shows it
>>> form.ids.value = "L00000001, L00000002"
>>> form.fetch_button.click()
>>> form.value["locationId"].tolist()  # the fetched DataFrame
['L00000001', 'L00000002']

Every error the client raises appears in the form as plain words
(:mod:`propertykit.widgets._messages`), never as a traceback. The forms hold no state about the
service beyond what the client keeps: the cache, the budget and the usage counts are the client's.

May import: ``client``, ``deeds``, ``frames``, ``views`` and core, through their packages' public
names. The plain logic (timing, messages) holds no ipywidgets, so it is tested without a kernel.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.widgets._lookup_form import LookupForm
from propertykit.widgets._match_review import MatchReview
from propertykit.widgets._purchase_form import PurchaseForm
from propertykit.widgets._valuation_form import ValuationForm

__all__ = ["LookupForm", "MatchReview", "PurchaseForm", "ValuationForm"]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
