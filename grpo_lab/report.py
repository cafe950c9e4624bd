"""Markdown for the reports of ``grpo-lab compare``, ``profile`` and ``inspect``: one table helper, so that every
report's tables are built the same way from their data (rows of cells), apart from the wording around them."""

from __future__ import annotations


def md_table(header, rows) -> list[str]:
    """The lines of a markdown table: ``header`` (cell texts), a separator, one line per row of ``rows``
    (each a sequence of cells, written with ``str``). A row of another width than the header is an error."""
    header = [str(h) for h in header]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        cells = [str(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"table row {i} has {len(cells)} cells for {len(header)} columns: {cells}")
        out.append("| " + " | ".join(cells) + " |")
    return out
