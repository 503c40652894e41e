"""deeds — title-deed purchases that are never charged twice and never leave the buyer guessing.

:mod:`~propertykit.deeds._decisions` decides what to do next as plain data;
:mod:`~propertykit.deeds._flow` carries it out over a :class:`PurchaseTransport` and writes every
step to the append-only :class:`Journal`; a :class:`Purchase` is the result.

May import: ``wire`` (the one session, retry settings) and core. Never ``client``, ``frames``,
``views``, ``widgets`` or ``cli``.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.deeds._decisions import RetryPolicy, read_delivery_status, read_money_state
from propertykit.deeds._earlier import EarlierPurchase, find_earlier_purchase
from propertykit.deeds._flow import buy_title_deed, check_title_number, purchase_status
from propertykit.deeds._journal import Journal, PurchaseRecord, as_rows
from propertykit.deeds._purchase import Purchase
from propertykit.deeds._transport import HttpPurchaseTransport, NotAnswered, PurchaseTransport, Sent

__all__ = [
    "EarlierPurchase",
    "HttpPurchaseTransport",
    "Journal",
    "NotAnswered",
    "Purchase",
    "PurchaseRecord",
    "PurchaseTransport",
    "RetryPolicy",
    "Sent",
    "as_rows",
    "buy_title_deed",
    "check_title_number",
    "find_earlier_purchase",
    "purchase_status",
    "read_delivery_status",
    "read_money_state",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
