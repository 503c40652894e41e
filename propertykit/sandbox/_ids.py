"""The identifiers of the sandbox's records: each one encodes the record's index.

=================  =====================================  ===================================
what               format                                  example (index 42)
=================  =====================================  ===================================
locationId         ``L`` + 8 digits (the index)            ``L00000042``
propertyId         ``PK`` + 8 digits (the index)           ``PK00000042``
source ids         ``rightmove::`` 100000000 + 3 x index   ``rightmove::100000126``
                   ``zoopla::`` 50000000 + 7 x index       ``zoopla::50000294``
                   ``onthemarket::OTM`` + 7 digits          ``onthemarket::OTM0000042``
                   (not when ``index % 4 == 3``)
                   ``epc::`` 4-4-4-4 digit groups           ``epc::8200-0000-0000-0042``
                   (not when ``index % 5 == 4``)
title number       Land Registry office prefix + 6 digits  ``NGL100042``
                   (100000 + index; prefix of the town)
=================  =====================================  ===================================

A title number's prefix is its town's: the first draw of the record's generator, so a title
number is checked without drawing the record.
"""

from __future__ import annotations

from propertykit.sandbox._geography import record_rng, town_of

#: Source-id providers, in the order :func:`source_ids_for` lists them.
PROVIDERS = ("rightmove", "zoopla", "onthemarket", "epc")


def location_id(index: int) -> str:
    """The locationId of the record at ``index``.

    Examples
    --------
    >>> location_id(42)
    'L00000042'
    """
    return f"L{index:08d}"


def index_from_location_id(value: str) -> int | None:
    """The record index a locationId encodes, or ``None`` when it is not one of ours.

    Examples
    --------
    >>> index_from_location_id("L00000042")
    42
    """
    if len(value) == 9 and value[0] == "L" and value[1:].isdigit() and value[1:].isascii():
        return int(value[1:])
    return None


def source_id(index: int, provider: str) -> str:
    """The ``<provider>::<id>`` source id of the record at ``index`` (whether or not it exists).

    Examples
    --------
    >>> source_id(42, "zoopla")
    'zoopla::50000294'
    """
    if provider == "rightmove":
        return f"rightmove::{100_000_000 + 3 * index}"
    if provider == "zoopla":
        return f"zoopla::{50_000_000 + 7 * index}"
    if provider == "onthemarket":
        return f"onthemarket::OTM{index:07d}"
    if provider == "epc":
        digits = f"8200{index:012d}"
        return "epc::" + "-".join(digits[i : i + 4] for i in range(0, 16, 4))
    raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")


def _has_source(index: int, provider: str) -> bool:
    if provider == "onthemarket":
        return index % 4 != 3
    if provider == "epc":
        return index % 5 != 4
    return True


def source_ids_for(index: int) -> list[str]:
    """Every source id that resolves to the record at ``index`` (two to four of them).

    Examples
    --------
    >>> source_ids_for(3)
    ['rightmove::100000009', 'zoopla::50000021', 'epc::8200-0000-0000-0003']
    """
    return [source_id(index, p) for p in PROVIDERS if _has_source(index, p)]


def _decode_source(provider: str, local: str) -> int | None:
    if provider == "rightmove" and local.isdigit():
        offset = int(local) - 100_000_000
        return offset // 3 if offset >= 0 and offset % 3 == 0 else None
    if provider == "zoopla" and local.isdigit():
        offset = int(local) - 50_000_000
        return offset // 7 if offset >= 0 and offset % 7 == 0 else None
    if provider == "onthemarket" and local.startswith("OTM") and local[3:].isdigit():
        return int(local[3:])
    if provider == "epc":
        digits = local.replace("-", "")
        if len(local) == 19 and len(digits) == 16 and digits.isdigit() and digits[:4] == "8200":
            return int(digits[4:])
    return None


def index_from_source_id(value: str) -> int | None:
    """The record index a ``<provider>::<id>`` source id resolves to, or ``None``.

    Examples
    --------
    >>> index_from_source_id("rightmove::100000126")
    42
    """
    provider, sep, local = value.partition("::")
    if not sep or not local.isascii():
        return None
    index = _decode_source(provider, local)
    if index is None or not _has_source(index, provider) or source_id(index, provider) != value:
        return None
    return index


def title_number(index: int, seed: int = 0) -> str:
    """The title number of the record at ``index``: its town's registry prefix + 6 digits.

    Examples
    --------
    >>> title_number(42)[-6:]
    '100042'
    """
    return f"{town_of(record_rng(index, seed)).title_prefix}{100_000 + index}"


def index_from_title_number(value: str, seed: int = 0) -> int | None:
    """The record index a title number belongs to (for this ``seed``), or ``None``.

    Examples
    --------
    >>> index_from_title_number(title_number(42))
    42
    """
    prefix = value.rstrip("0123456789")
    digits = value[len(prefix) :]
    if not (prefix.isalpha() and prefix.isascii() and len(digits) == 6):
        return None
    index = int(digits) - 100_000
    if index < 0 or title_number(index, seed) != value:
        return None
    return index
