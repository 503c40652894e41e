"""Objects Arrow refuses as a whole, read by Arrow but for the leaves it refuses.

:func:`read_objects` reads a list of objects (dicts or ``None``) as a struct type, a block at
a time. When Arrow refuses a block, halving the leaves still read by Arrow finds one it
refuses; that leaf alone is set aside (or, when the object holding it is not an object at all,
that object), and the block is read again without it. Each block is finished before the next:
the leaves set aside so far are read from the block's Python values by the caller's ``read``
(:func:`propertykit.frames.records.read_values`, which coerces values leniently) and put back
in their places while the block's objects are still in the processor's cache (a pass over
objects long out of cache costs several times more). How each field is put back is decided once
for each set of leaves set aside (:func:`_plan`), not again for every block. So an odd value
costs only its own column from its block on: every other leaf, ``saleHistory``'s entries
included, stays on the Arrow path. :func:`read_blocks` gives the blocks; :func:`read_objects`
(and :func:`concat_structs`) one array.

Leaves are paths of names: a field of a struct adds its name, a list of structs adds its own
name and then its entries' field names (``("saleHistory", "price")``). Objects nest one level
below the records, and lists of objects hold objects only, as in the service's records.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
    "values_of",
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
    arrow_type, plan = full, None  # what Arrow reads; how the rest is put back (None: nothing)
    start, size = 0, BLOCKS[0]
    while start < len(objects):
        block = objects[start : start + size]
        try:
            arrow = pa.array(block, type=arrow_type)
        except _ERRORS:
            leaf = _refused_leaf(block, full, kept)
            top = full.field(leaf[0]).type
            if len(leaf) > 1 and any(_odd(o.get(leaf[0]), top) for o in block if o is not None):
                odd_objects.add(leaf[0])
                kept = [k for k in kept if k[0] != leaf[0]]
            else:
                kept.remove(leaf)
            arrow_type = prune(full, frozenset(kept))
            plan = _plan(full, arrow_type, frozenset(kept), frozenset(odd_objects), (), column)
            continue
        if visit is not None:
            visit(block)
        if plan is not None:
            stop = start + len(block)
            at = range(start, stop) if rows is None else rows[start:stop]
            arrow = _graft(block, full, arrow, plan, at, read)
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


# How a field of a struct is put together from a block of objects (:class:`_Step`).
_ARROW = "arrow"  # Arrow's field, as read
_READ = "read"  # read from the objects' values by the caller's ``read``
_PATCH = "patch"  # Arrow's object (or list of objects) of leaves, but for those it refused
_GRAFT = "graft"  # objects of objects, some of whose leaves Arrow refused: by :func:`_graft`


@dataclass(frozen=True, slots=True)
class _Step:
    how: str  # _ARROW, _READ, _PATCH or _GRAFT
    field: pa.Field
    column: str  # dotted name
    at: int = -1  # the field's index in Arrow's struct (-1: Arrow did not read it)
    leaves: tuple[_Step, ...] = ()  # _PATCH: each leaf of its objects, _ARROW or _READ


@dataclass(frozen=True, slots=True)
class _Plan:
    """How the struct ``full`` is put together from a block: decided once for every block
    Arrow reads with the same leaves refused (see :func:`_plan`)."""

    full: pa.StructType
    fields: list[pa.Field]
    steps: list[_Step]
    kept: frozenset[Path]
    odd_objects: frozenset[str]
    prefix: Path


def _plan(
    full: pa.StructType,
    by_arrow: pa.StructType | None,
    kept: frozenset[Path],
    odd_objects: frozenset[str],
    prefix: Path,
    column: str,
) -> _Plan:
    """How each field of ``full`` is put together when Arrow read ``by_arrow`` of it."""
    steps = []
    for field in full:
        path, name = (*prefix, field.name), _join(column, field.name)
        inner = _objects_of(field.type)
        at = by_arrow.get_field_index(field.name) if by_arrow is not None else -1
        if at >= 0 and _leaves_of(field, prefix) <= kept:
            steps.append(_Step(_ARROW, field, name, at))  # every leaf in it read by Arrow
        elif inner is None or (not prefix and field.name in odd_objects) or at < 0:
            # a leaf, an object that is not one, or every leaf in it refused (Arrow may not
            # have seen odd objects here)
            steps.append(_Step(_READ, field, name))
        elif all(_objects_of(f.type) is None for f in inner):
            served = _objects_of(by_arrow.field(at).type)  # type: ignore[union-attr]
            assert served is not None
            patched = []
            for leaf in inner:
                index = served.get_field_index(leaf.name)
                if (*path, leaf.name) in kept and index >= 0:
                    patched.append(_Step(_ARROW, leaf, _join(name, leaf.name), index))
                else:
                    patched.append(_Step(_READ, leaf, _join(name, leaf.name)))
            steps.append(_Step(_PATCH, field, name, at, tuple(patched)))
        else:
            steps.append(_Step(_GRAFT, field, name, at))
    return _Plan(full, list(full), steps, kept, odd_objects, prefix)


def _graft(
    objects: list[Any],
    full: pa.StructType,
    by_arrow: pa.StructArray | None,
    plan: _Plan,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.StructArray:
    """The struct array of ``full``: Arrow's leaves, and the others read from ``objects``
    (dicts or ``None``; Arrow's array, where given, holds the same objects in order)."""
    children = []
    for step in plan.steps:
        if step.how is _ARROW:
            children.append(by_arrow.field(step.at))  # type: ignore[union-attr]
        elif step.how is _READ:
            values = values_of(objects, step.field.name)
            children.append(read(values, step.field.type, step.column, rows))
        elif step.how is _PATCH:
            arrow = by_arrow.field(step.at)  # type: ignore[union-attr]
            children.append(_patch(objects, step, arrow, rows, read))
        else:
            arrow = by_arrow.field(step.at) if step.at >= 0 else None  # type: ignore[union-attr]
            children.append(_graft_objects(objects, step, arrow, plan, rows, read))
    mask = pa.array([o is None for o in objects], type=pa.bool_()) if None in objects else None
    return pa.StructArray.from_arrays(children, fields=plan.fields, mask=mask)


def _graft_objects(
    objects: list[Any],
    step: _Step,
    arrow: pa.Array | None,
    plan: _Plan,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.Array:
    """An object (or list of objects) of objects, some of whose leaves Arrow refused."""
    field, name = step.field, step.column
    inner = _objects_of(field.type)
    assert inner is not None
    path = (*plan.prefix, field.name)
    if isinstance(field.type, pa.StructType):
        inside = values_of(objects, field.name)
        by_arrow = arrow.type if arrow is not None else None
        sub = _plan(inner, by_arrow, plan.kept, plan.odd_objects, path, name)
        return _graft(inside, inner, arrow, sub, rows, read)
    lists = values_of(objects, field.name)
    lengths = [0 if v is None else len(v) for v in lists]
    items = [item for v in lists if v is not None for item in v]
    parents = np.arange(len(lists)) if rows is None else np.asarray(rows)
    owners = np.repeat(parents, lengths).tolist()
    entries = arrow.flatten() if isinstance(arrow, pa.ListArray) else None
    by_arrow = entries.type if entries is not None else None
    sub = _plan(inner, by_arrow, plan.kept, plan.odd_objects, path, name)
    grafted = _graft(items, inner, entries, sub, owners, read)
    ends = np.concatenate([np.zeros(1, np.int32), np.cumsum(lengths, dtype=np.int32)])
    missing = pa.array([v is None for v in lists], type=pa.bool_())
    return pa.ListArray.from_arrays(pa.array(ends), grafted, mask=missing)


def _patch(
    objects: list[Any],
    step: _Step,
    arrow: pa.Array,
    rows: Sequence[int] | None,
    read: Read,
) -> pa.Array:
    """An object (or list of objects) of leaves Arrow read, but for the leaves it refused,
    which alone are taken from ``objects`` in Python; validity and offsets are Arrow's."""
    parents = values_of(objects, step.field.name)
    if isinstance(arrow, pa.ListArray):
        entries = arrow.flatten()
        served = list(itertools.chain.from_iterable(filter(None, parents)))
        owners = pc.list_parent_indices(arrow).to_numpy()
        at = owners if rows is None else _rows_of(rows, owners)
    else:
        entries, served, at = arrow, parents, rows
    children = [
        entries.field(leaf.at)
        if leaf.how is _ARROW
        else read(values_of(served, leaf.field.name), leaf.field.type, leaf.column, at)
        for leaf in step.leaves
    ]
    fields = [leaf.field for leaf in step.leaves]
    missing = entries.is_null() if entries.null_count else None
    items = pa.StructArray.from_arrays(children, fields=fields, mask=missing)
    if not isinstance(arrow, pa.ListArray):
        return items
    offsets = pc.subtract(arrow.offsets, arrow.offsets[0])
    return pa.ListArray.from_arrays(
        offsets, items, mask=arrow.is_null() if arrow.null_count else None
    )


def _rows_of(rows: Sequence[int], positions: np.ndarray) -> Any:  # an array of rows
    """``rows[i]`` for each ``i`` of ``positions`` (a block's rows are mostly a range)."""
    if isinstance(rows, range) and rows.step == 1:
        return positions + rows.start
    return np.asarray(rows)[positions]


def values_of(objects: list[Any], name: str) -> list[Any]:
    """``name`` of each object; ``None`` where it is absent or the object is none (an empty
    text or list Arrow took for an object of missing values)."""
    try:
        return list(map(dict.get, objects, itertools.repeat(name)))  # every one a dict
    except TypeError:
        return [o.get(name) if type(o) is dict else _value(o, name) for o in objects]


def _value(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, Mapping) else None
