"""Objects Arrow refuses as a whole, read by Arrow but for the leaves it refuses.

:func:`read_objects` reads a list of objects (dicts or ``None``) as a struct type, a block at
a time. When Arrow refuses a block, halving the leaves still read by Arrow finds one it
refuses; that leaf alone is set aside (or, when the object holding it is not an object at all,
that object), and the block is read again without it. Each block is finished before the next:
the leaves set aside so far are read from the block's Python values by the caller's ``read``
(:func:`propertykit.frames.records.read_values`, which coerces values leniently) and put back
in their places while the block's objects are still in the processor's cache (a pass over
objects long out of cache costs several times more). So an odd value costs only its own column
from its block on: every other leaf, ``saleHistory``'s entries included, stays on the Arrow
path. :func:`read_blocks` gives the blocks (for a chunked array, no copy); :func:`read_objects`
one array.

Leaves are paths of names: a field of a struct adds its name, a list of structs adds its own
name and then its entries' field names (``("saleHistory", "price")``). Objects nest one level
below the records, and lists of objects hold objects only, as in the service's records.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "BLOCKS",
    "Path",
    "Read",
    "concat_structs",
    "leaves",
    "prune",
    "read_blocks",
    "read_objects",
]

Path = tuple[str, ...]
#: Reads Python values as a type: (values, type, dotted column name, rows of the frame).
Read = Callable[[list[Any], pa.DataType, str, Sequence[int] | None], pa.Array]
#: Objects Arrow reads at a time, at first and at most: blocks grow while Arrow takes them, so
#: that a refused one (searched for the leaf Arrow refuses) is small while odd leaves are new.
BLOCKS = (64, 512)
_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError)


def _objects_of(arrow_type: pa.DataType) -> pa.StructType | None:
    """The struct type of a struct, or of a list's entries; ``None`` for a leaf."""
    if isinstance(arrow_type, pa.StructType):
        return arrow_type
    if isinstance(arrow_type, pa.ListType) and isinstance(arrow_type.value_type, pa.StructType):
        return arrow_type.value_type
    return None


def leaves(arrow_type: pa.StructType, prefix: Path = ()) -> list[Path]:
    """Every leaf of ``arrow_type``, in order."""
    found: list[Path] = []
    for field in arrow_type:
        inner = _objects_of(field.type)
        path = (*prefix, field.name)
        found.extend(leaves(inner, path) if inner is not None else [path])
    return found


@functools.lru_cache(maxsize=256)
def _leaves_of(field: pa.Field, prefix: Path) -> frozenset[Path]:
    return frozenset(leaves(pa.struct([field]), prefix))


@functools.lru_cache(maxsize=256)
def prune(
    arrow_type: pa.StructType, kept: frozenset[Path], prefix: Path = ()
) -> pa.StructType:  # fmt: skip
    """``arrow_type`` with only the ``kept`` leaves (and the objects holding them)."""
    fields = []
    for field in arrow_type:
        path = (*prefix, field.name)
        inner = _objects_of(field.type)
        if inner is None:
            if path in kept:
                fields.append(field)
            continue
        sub = prune(inner, kept, path)
        if len(sub) or any(k[: len(path)] == path for k in kept):
            is_list = isinstance(field.type, pa.ListType)
            fields.append(pa.field(field.name, pa.list_(sub) if is_list else sub))
    return pa.struct(fields)


def _refused_leaf(block: list[Any], full: pa.StructType, kept: list[Path]) -> Path:
    """A leaf of ``kept`` Arrow refuses in ``block`` (it refuses them all together)."""
    while len(kept) > 1:
        half = kept[: len(kept) // 2]
        try:
            pa.array(block, type=prune(full, frozenset(half)))
        except _ERRORS:
            kept = half
        else:
            kept = kept[len(kept) // 2 :]
    return kept[0]


def _odd(value: Any, arrow_type: pa.DataType) -> bool:
    """Whether ``value`` is not the object (or list of objects) ``arrow_type`` describes."""
    if value is None:
        return False
    if isinstance(arrow_type, pa.StructType):
        return type(value) is not dict
    return type(value) is not list or any(v is not None and type(v) is not dict for v in value)


def read_objects(
    objects: list[dict[str, Any] | None],
    full: pa.StructType,
    column: str,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.StructArray:
    """``objects`` as ``full``: by Arrow, but for the leaves it refuses (read by ``read``)."""
    return concat_structs(read_blocks(objects, full, column, rows, read), full)


def read_blocks(
    objects: list[dict[str, Any] | None],
    full: pa.StructType,
    column: str,
    rows: Sequence[int] | None,
    read: Read,
    visit: Callable[[list[dict[str, Any] | None]], None] | None = None,
) -> list[pa.StructArray]:
    """:func:`read_objects`, a block of ``objects`` at a time, each finished before the next is
    read: Arrow's leaves, the refused ones read from the block's objects while they are still in
    the processor's cache, and ``visit`` called with the block (for values Arrow does not read).
    """
    kept = leaves(full)
    odd_objects: set[str] = set()  # top fields whose value is not the object expected
    blocks: list[pa.StructArray] = []
    start, size = 0, BLOCKS[0]
    while start < len(objects):
        block = objects[start : start + size]
        try:
            arrow = pa.array(block, type=prune(full, frozenset(kept)))
        except _ERRORS:
            leaf = _refused_leaf(block, full, kept)
            top = full.field(leaf[0]).type
            if len(leaf) > 1 and any(_odd(o.get(leaf[0]), top) for o in block if o is not None):
                odd_objects.add(leaf[0])
                kept = [k for k in kept if k[0] != leaf[0]]
            else:
                kept.remove(leaf)
            continue
        if visit is not None:
            visit(block)
        if arrow.type != full:
            stop = start + len(block)
            at = range(start, stop) if rows is None else rows[start:stop]
            odd = frozenset(odd_objects)
            arrow = _graft(block, full, arrow, frozenset(kept), odd, (), column, at, read)
        blocks.append(arrow)
        start += len(block)
        size = min(2 * size, BLOCKS[1])
    return blocks


def concat_structs(blocks: list[pa.StructArray], arrow_type: pa.StructType) -> pa.StructArray:
    """``blocks`` as one array, one field at a time: each field's blocks are let go as soon as
    they are copied, so the copy needs little more memory than the largest field."""
    if len(blocks) == 1:
        return blocks[0]
    if not blocks:
        return pa.array([], arrow_type)
    nulls = any(b.null_count for b in blocks)
    mask = pa.concat_arrays([b.is_null() for b in blocks]) if nulls else None
    by_field = [[b.field(i) for b in blocks] for i in range(arrow_type.num_fields)]
    blocks.clear()
    children = []
    for i in range(len(by_field)):
        children.append(pa.concat_arrays(by_field[i]))
        by_field[i] = []
    return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)


def _join(column: str, name: str) -> str:
    return f"{column}.{name}" if column else name


def _graft(
    objects: list[Any],
    full: pa.StructType,
    by_arrow: pa.StructArray | None,
    kept: frozenset[Path],
    odd_objects: frozenset[str],
    prefix: Path,
    column: str,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.StructArray:
    """The struct array of ``full``: Arrow's leaves, and the others read from ``objects``
    (dicts or ``None``; Arrow's array, where given, holds the same objects in order)."""
    present = {f.name for f in by_arrow.type} if by_arrow is not None else set()
    children = []
    for field in full:
        path, name = (*prefix, field.name), _join(column, field.name)
        inner = _objects_of(field.type)
        arrow = (
            by_arrow.field(field.name) if by_arrow is not None and field.name in present else None
        )
        if arrow is not None and _leaves_of(field, prefix) <= kept:
            children.append(arrow)  # every leaf in it read by Arrow
        elif inner is None or (not prefix and field.name in odd_objects):
            children.append(read(_values(objects, field.name), field.type, name, rows))
        elif arrow is not None and all(_objects_of(f.type) is None for f in inner):
            children.append(_patch(objects, field, arrow, kept, path, name, rows, read))
        elif arrow is None:  # every leaf in it refused: Arrow may not have seen odd objects here
            children.append(read(_values(objects, field.name), field.type, name, rows))
        elif isinstance(field.type, pa.StructType):
            inside = _values(objects, field.name)
            children.append(_graft(inside, inner, arrow, kept, odd_objects, path, name, rows, read))
        else:  # a list of objects, some of whose leaves Arrow refused
            lists = _values(objects, field.name)
            lengths = [0 if v is None else len(v) for v in lists]
            items = [item for v in lists if v is not None for item in v]
            parents = np.arange(len(lists)) if rows is None else np.asarray(rows)
            owners = np.repeat(parents, lengths).tolist()
            entries = arrow.flatten() if isinstance(arrow, pa.ListArray) else None
            sub = _graft(items, inner, entries, kept, odd_objects, path, name, owners, read)
            ends = np.concatenate([np.zeros(1, np.int32), np.cumsum(lengths, dtype=np.int32)])
            missing = pa.array([v is None for v in lists], type=pa.bool_())
            children.append(pa.ListArray.from_arrays(pa.array(ends), sub, mask=missing))
    mask = pa.array([o is None for o in objects], type=pa.bool_()) if None in objects else None
    return pa.StructArray.from_arrays(children, fields=list(full), mask=mask)


def _patch(
    objects: list[Any],
    field: pa.Field,
    arrow: pa.Array,
    kept: frozenset[Path],
    path: Path,
    column: str,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.Array:
    """An object (or list of objects) of leaves Arrow read, but for the leaves it refused,
    which alone are taken from ``objects`` in Python; validity and offsets are Arrow's."""
    key = field.name
    if isinstance(arrow, pa.ListArray):
        entries = arrow.flatten()
        entries_of = list(itertools.chain.from_iterable(filter(None, _values(objects, key))))
        owners = pc.list_parent_indices(arrow).to_numpy()
        at = owners if rows is None else np.asarray(rows)[owners]
    else:
        entries = arrow
    inner = entries.type
    full = _objects_of(field.type)
    assert full is not None
    children = []
    for leaf in full:
        if (*path, leaf.name) in kept and inner.get_field_index(leaf.name) >= 0:
            children.append(entries.field(leaf.name))
            continue
        name = leaf.name
        if isinstance(arrow, pa.ListArray):
            served = _values(entries_of, name)
            children.append(read(served, leaf.type, _join(column, name), at))
        else:
            served = _values(_values(objects, key), name)
            children.append(read(served, leaf.type, _join(column, name), rows))
    items = pa.StructArray.from_arrays(children, fields=list(full), mask=entries.is_null())
    if not isinstance(arrow, pa.ListArray):
        return items
    offsets = pc.subtract(arrow.offsets, arrow.offsets[0])
    return pa.ListArray.from_arrays(offsets, items, mask=arrow.is_null())


def _values(objects: list[Any], name: str) -> list[Any]:
    """``name`` of each object; ``None`` where it is absent or the object is none (an empty
    text or list Arrow took for an object of missing values)."""
    try:
        return list(map(dict.get, objects, itertools.repeat(name)))  # every one a dict
    except TypeError:
        return [o.get(name) if isinstance(o, Mapping) else None for o in objects]
