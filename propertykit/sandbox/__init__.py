"""A local, faithful implementation of the property-data service (work in progress)."""

from __future__ import annotations
