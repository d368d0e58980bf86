"""Reading the deposit files in their exact on-disk formats, quirks included.

* frontmatter is YAML between ``---`` lines; a re-indexed ``narrative.md``
  holds several frontmatter + body blocks (the last one wins, earlier ones are
  kept as history);
* ``topics: [a, b]`` in narratives is unquoted and may not be valid YAML (a
  topic with a comma or colon): when YAML refuses a block, a tolerant
  line reader takes the keys it can;
* older ``cross_refs`` are bare strings (``  - #309``) that YAML reads as null
  because ``#`` starts a comment: they are recovered from the raw text;
* tables (coinage, entropy) are markdown pipe tables.

``discover_fields`` is the cheap discovery pass (no YAML, a few keys);
``read_full`` reads every file of a deposit with python-frontmatter.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from flowgit.ascend import surrogates
from flowgit.ascend.model import Anchor, Coinage

FM_BLOCK_RE = re.compile(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S | re.M)
KEY_RE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*)$")
FLOW_MAP_RE = re.compile(r"\{([^{}]*)\}")


# A later block is a re-index's frontmatter only when it names its session as the first does: text between
# two horizontal rules (`---` lines) of a body is body, not a block that would win over the real frontmatter
REINDEX_KEY_RE = re.compile(r"^session_id:", re.M)


def split_blocks(text: str) -> list[tuple[str, str]]:
    """(frontmatter, body) for each block; a file without frontmatter is one block with none."""
    blocks: list[tuple[str, str]] = []
    matches = list(FM_BLOCK_RE.finditer(text))
    if not matches or matches[0].start() != 0:
        return [("", text)]
    matches = matches[:1] + [m for m in matches[1:] if REINDEX_KEY_RE.search(m.group(1))]
    for i, m in enumerate(matches):
        body_end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        # only a '---' block that starts a line right after a body counts as a new block
        blocks.append((m.group(1), text[m.end():body_end]))
    return blocks


def first_frontmatter(text: str) -> str:
    """The first frontmatter block's text, found without a regular expression (the discovery hot path)."""
    if not text.startswith("---"):
        return ""
    start = text.find("\n") + 1
    end = text.find("\n---", start - 1)
    return text[start:end] if end != -1 else ""


def _scalar(value: str) -> Any:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        if "\\" not in value:
            return value[1:-1]
        try:
            return surrogates.loads(value)  # YAML double-quoted escapes are JSON's, for what deposits use
        except ValueError:
            return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if value in ("", "~", "null"):
        return None
    return value


FLOW_ITEM_RE = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^,]*?)\s*(?:,|$)""")


def _split_flow(inner: str) -> list[str]:
    """Split ``a, "b, c", d`` on top-level commas (quotes protect commas)."""
    return [m.group(1) for m in FLOW_ITEM_RE.finditer(inner) if m.group(1)]


def _flow_map(text: str) -> dict[str, Any]:
    out = {}
    for part in _split_flow(text):
        key, _, value = part.partition(":")
        out[key.strip()] = _scalar(value)
    return out


def tolerant_yaml(fm: str) -> dict[str, Any]:
    """Key/value, inline lists, block lists and flow maps, line by line; never raises."""
    data: dict[str, Any] = {}
    current: str | None = None
    for raw in fm.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#") and not raw.startswith(" "):
            continue
        m = KEY_RE.match(raw)
        if m and not raw.startswith((" ", "\t")):
            key, value = m.group(1), m.group(2).strip()
            current = key
            if value.startswith("[") and value.endswith("]"):
                data[key] = [_scalar(x) for x in _split_flow(value[1:-1])]
            elif value.startswith("{") and value.endswith("}"):
                data[key] = _flow_map(value[1:-1])
            elif value == "":
                data[key] = None
            else:
                data[key] = _scalar(value)
            continue
        item = raw.strip()
        if current and item.startswith("- "):
            entry = item[2:].strip()
            existing = data.get(current)
            if not isinstance(existing, list):
                existing = []
                data[current] = existing
            if entry.startswith("{") and entry.endswith("}"):
                existing.append(_flow_map(entry[1:-1]))
            else:
                existing.append(_scalar(entry) if not entry.startswith("#") else entry)
        elif current and ":" in item and isinstance(data.get(current), (dict, type(None))):
            key, _, value = item.partition(":")
            if not isinstance(data.get(current), dict):
                data[current] = {}
            data[current][key.strip()] = _scalar(value)
    return data


DISCOVERY_KEYS = ("session_id", "cwd", "date", "started_at", "last_turn_at", "topics", "keywords",
                  "initial_request", "cross_refs")
TOP_KEY_RE = re.compile(r"^(" + "|".join(DISCOVERY_KEYS) + r"):[ \t]*(.*)$", re.M)
BLOCK_ITEMS_RE = re.compile(r"(?:\r?\n)((?:[ \t]+-[^\n]*(?:\n|$))*)")


def discover_fields(fm: str) -> dict[str, Any]:
    """The few top-level keys discovery needs, by one regular-expression pass (no YAML).

    Ten thousand deposits are read on every run; this is what keeps that close
    to the cost of reading the files at all. Values follow the tolerant rules.
    """
    data: dict[str, Any] = {}
    for m in TOP_KEY_RE.finditer(fm):
        key, value = m.group(1), m.group(2).strip()
        if value.startswith("[") and value.endswith("]"):
            data[key] = [_scalar(x) for x in _split_flow(value[1:-1])]
        elif value == "":
            block = BLOCK_ITEMS_RE.match(fm, m.end())
            items = [ln.strip()[2:].strip() for ln in block.group(1).splitlines()] if block else []
            data[key] = [_flow_map(i[1:-1]) if i.startswith("{") and i.endswith("}")
                         else (i if i.startswith("#") else _scalar(i)) for i in items if i] or None
        else:
            data[key] = _scalar(value)
    return data


_LOADER = None


def _no_alias_loader():
    """Safe YAML that refuses aliases (built on first use: yaml loads only when a deposit is read in full).

    Deposits never use aliases, and an alias bomb (a kilobyte expanding to
    billions of nodes) would hang whatever walks the result. The pure-Python
    loader is used because the C one composes documents where no hook reaches.
    """
    global _LOADER
    if _LOADER is None:
        import yaml

        class NoAliasLoader(yaml.SafeLoader):
            def compose_node(self, parent, index):  # noqa: ANN001 (yaml's signature)
                if self.check_event(yaml.AliasEvent):
                    raise yaml.YAMLError("YAML aliases (*name) are not accepted in deposit front matter")
                return super().compose_node(parent, index)

        _LOADER = NoAliasLoader
    return _LOADER


def load_frontmatter(fm: str) -> tuple[dict[str, Any], str]:
    """Parse a front-matter block as safe YAML without aliases, size-capped.

    Returns (data, how): ``yaml``; ``tolerant`` when YAML refused it (an
    unquoted topic with a colon) and the line reader took the keys it could;
    ``alias`` when the block uses YAML aliases (refused; line reader instead,
    which treats ``*name`` as text); ``too_large`` when it exceeds the cap
    (line reader over the first part only). Never raises, never hangs.
    """
    import yaml

    from flowgit.ascend.safeio import FRONTMATTER_LIMIT

    if len(fm) > FRONTMATTER_LIMIT:
        return tolerant_yaml(fm[:FRONTMATTER_LIMIT]), "too_large"
    try:
        data = yaml.load(fm, Loader=_no_alias_loader())  # noqa: S506 (a SafeLoader)
        if isinstance(data, dict):
            return (surrogates.scrub(data) if surrogates.may_hold(fm) else data), "yaml"
    except yaml.YAMLError as exc:
        if "aliases" in str(exc):
            return tolerant_yaml(fm), "alias"
    except (ValueError, TypeError, RecursionError):
        pass
    return tolerant_yaml(fm), "tolerant"


def raw_list(fm: str, key: str) -> list[str]:
    """The raw ``  - item`` lines under ``key:`` (for legacy values YAML turns into null)."""
    out: list[str] = []
    inside = False
    for line in fm.splitlines():
        if re.match(rf"^{re.escape(key)}:\s*(.*)$", line):
            inside = True
            rest = line.split(":", 1)[1].strip()
            if rest and rest != "[]":
                return []
            continue
        if inside:
            if line.startswith((" ", "\t")) and line.strip().startswith("- "):
                out.append(line.strip()[2:].strip())
            elif line.strip() and not line.startswith((" ", "\t")):
                break
    return out


def anchors_from(fm: str, data: dict[str, Any]) -> tuple[list[Anchor], list[str]]:
    """Structured anchors, plus legacy bare strings recovered from the raw text. (anchors, notes)"""
    anchors: list[Anchor] = []
    notes: list[str] = []
    value = data.get("cross_refs")
    items = value if isinstance(value, list) else []
    needs_raw = (not items and "cross_refs:" in fm) or any(item is None for item in items)
    raw = raw_list(fm, "cross_refs") if needs_raw else []
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("ref"):
            anchors.append(Anchor(str(item.get("kind") or "legacy"), str(item["ref"]), str(item.get("channel") or "")))
        elif isinstance(item, str) and item.strip():
            legacy = item.strip().strip("\"'")
            anchors.append(Anchor("legacy", legacy))
            notes.append(f"legacy cross-reference {legacy!r} read as a bare string")
        elif item is None and index < len(raw):
            legacy = raw[index].strip().strip("\"'")
            if legacy:
                anchors.append(Anchor("legacy", legacy))
                notes.append(f"legacy cross-reference {legacy!r} recovered from the raw text")
    if not items and raw:  # YAML saw only comments: every line was a bare '#…' string
        for legacy in raw:
            legacy = legacy.strip().strip("\"'")
            if legacy and not legacy.startswith("{"):
                anchors.append(Anchor("legacy", legacy))
                notes.append(f"legacy cross-reference {legacy!r} recovered from the raw text")
    return anchors, notes


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict):  # an unquoted "topic: detail" that YAML read as a mapping
                out.extend(f"{k}: {w}" if w is not None else str(k) for k, w in v.items())
            elif v is not None and str(v).strip():
                out.append(str(v).strip())
        return out
    text = str(value).strip()
    if text.startswith("[") and text.endswith("]"):
        return [str(_scalar(x)) for x in _split_flow(text[1:-1])]
    return [text] if text else []


def as_text(value: Any) -> str:
    if value is None:
        return ""
    return str(value).strip()


def as_path(value: Any) -> str | None:
    """A path a deposit records (a working directory): a string, or nothing. A list or a number is no
    directory to resume in (read as text, a list became its Python spelling inside a `cd` command)."""
    return value.strip() or None if isinstance(value, str) else None


def day_of(value: Any) -> str | None:
    text = as_text(value)
    m = re.match(r"(\d{4}-\d{2}-\d{2})", text)
    return m.group(1) if m else None


def read_text(path: Path | str, tree=None) -> str | None:
    """A deposit file's text through ``tree`` (a :class:`~flowgit.ascend.safeio.Tree`): regular files
    inside the deposit tree only, size-capped. Without a tree (trusted callers), a plain bounded read."""
    if tree is not None:
        return tree.read_text(path)
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            return fh.read(1 << 20)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


# The files a deposit is read from (the others only add to one): a directory under hypomnesis/ without
# either is not a deposit, and the session's transcript stands in for it.
INDEX_FILES = ("clue.md", "narrative.md")


def holds_an_index_file(entry: str) -> bool:
    """Whether the deposit directory ``entry`` holds one of :data:`INDEX_FILES` (as a file: its reader decides)."""
    return any(os.path.isfile(os.path.join(entry, name)) for name in INDEX_FILES)


def parse_table(text: str) -> list[dict[str, str]]:
    """A markdown pipe table as a list of rows keyed by the header cells."""
    rows: list[dict[str, str]] = []
    header: list[str] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if header and rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
        elif all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue
        else:
            rows.append(dict(zip(header, cells)))
    return rows


def coinage_rows(text: str) -> list[Coinage]:
    if text.count("\n") <= 2:
        return []  # a header and its rule: no coined tokens
    out = []
    for row in parse_table(text):
        token = row.get("token", "").strip("`\"' ")
        if not token:
            continue
        out.append(Coinage(token, _num(row.get("precision")), int(_num(row.get("session_occ"))),
                           int(_num(row.get("corpus_occ")))))
    return out


def _num(value: str | None) -> float:
    try:
        return float((value or "0").strip())
    except ValueError:
        return 0.0


def narrative_sections(body: str) -> dict[str, str]:
    """``### Origin`` / ``### Direction`` / ``### Outcome`` bodies of a narrative block."""
    out: dict[str, str] = {}
    current = None
    lines: list[str] = []
    for line in body.splitlines():
        m = re.match(r"^###\s+(.+?)\s*$", line)
        if m:
            if current:
                out[current] = " ".join(" ".join(lines).split())
            current, lines = m.group(1).lower(), []
        elif current:
            lines.append(line)
    if current:
        out[current] = " ".join(" ".join(lines).split())
    return out


def marker_tokens(text: str) -> list[str]:
    """Tokens listed under ``### coinage (N)`` in markers.md."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("### "):
            inside = line[4:].lower().startswith("coinage")
            continue
        if inside and line.strip().startswith(("-", "*")):
            token = line.strip()[1:].strip().strip("`\"' ")
            token = re.split(r"\s+[—(-]\s*|\s*\(", token)[0].strip("`\"' ")
            if token:
                out.append(token)
    return out


def vector_decisions(data: dict[str, Any], body: str) -> list[str]:
    labels = as_list(data.get("decisions"))
    if labels:
        return labels
    return [m.group(1).strip() for m in re.finditer(r"^###\s+(.+?)\s*$", body, re.M)]
