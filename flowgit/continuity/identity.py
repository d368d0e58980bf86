"""Names as identities: one key per pattern or section however it is typed.

A pattern's name is its identity across history, so two spellings that a
reader cannot tell apart must be one name: NFKC folds compatibility forms
(full-width letters, ligatures), case folding ignores case, and the common
Cyrillic and Greek look-alikes of Latin letters map to the letter they mimic.
A name that mixes scripts (``rеtry`` with a Cyrillic ``е``) is refused by the
gate outright; the skeleton only makes sure a look-alike cannot pose as a new,
unjudged pattern.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Cyrillic and Greek letters that render like Latin ones (lower case, after case folding).
CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q",
    "ԝ": "w", "ɡ": "g", "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ѵ": "v", "ӏ": "l",
    # Han, kana and Hangul letters that render like Latin ones or a hyphen: a script written with Latin (see
    # SCRIPTS_WRITTEN_TOGETHER) must not pose as another name by one of them
    "丨": "l", "ㅣ": "l", "亅": "j", "工": "i", "エ": "i", "口": "o", "ロ": "o", "〇": "o", "ㅇ": "o", "ㅁ": "o",
    "一": "-", "ー": "-", "ㅡ": "-", "ㄧ": "-", "卜": "t", "ト": "t", "乙": "z", "〡": "l", "乚": "l", "ㄥ": "l",
    # Latin letters of other alphabets that render like the basic ones
    "ᴄ": "c", "ı": "i", "ɑ": "a", "ᴏ": "o", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z", "ꜱ": "s", "ʀ": "r", "ǀ": "l", "ȷ": "j",
    "ㄨ": "x",
    # Armenian and Coptic letters drawn as Latin ones
    "օ": "o", "ս": "u", "հ": "h", "ո": "n", "զ": "q", "ց": "g", "ⲟ": "o", "ⲣ": "p", "ⲥ": "c", "ⲭ": "x",
    # Cherokee letters drawn as Latin capitals (case folding keeps Cherokee capitals; their small forms too)
    **{cherokee: latin for capital, latin in zip("ᎪᏴᏟᎬᏀᎻᎫᏦᏞᎷᏢᏚᎢᏙᎳᏃᏒᎠᏫ", "abceghjklmpstvwzrdo")
       for cherokee in (capital, capital.lower())},
    # Lisu letters, drawn as Latin capitals (Lisu has no case: a name or heading all in them is one script,
    # which the mixed-script refusal does not see); the turned ones (ꓕ, ꓯ, ꓱ …) are drawn as no letter
    **dict(zip("ꓐꓑꓓꓔꓖꓗꓚꓜꓝꓟꓠꓡꓢꓣꓦꓧꓪꓫꓬꓮꓰꓲꓳꓴ", "bpdtgkczfmnlsrvhwxyaeiou")),
    # Greek and Cyrillic letters the table above lacked: yot drawn as j, straight u as y; Coptic gamma as r,
    # Myanmar wa as o (the lunate sigma, drawn as c, is read with the capitals below)
    "ϳ": "j", "ү": "y", "ⲅ": "r", "ဝ": "o",
    # Latin small capitals, drawn as small Latin capitals
    **dict(zip("ᴀʙᴅᴇɢʜɪᴊᴋʟᴍɴᴘʏᴛᴜ", "abdeghijklmnpytu")),
    # Han letters that render like the kana a Japanese name is written with (both fold to the kana)
    "力": "カ", "夕": "タ", "八": "ハ", "二": "ニ",
    # (NFKC turns Hangul compatibility letters into conjoining ones before the table is read)
    "\u1175": "l", "\u110b": "o", "\u11bc": "o", "\u1106": "o", "\u11b7": "o", "\u1173": "-",
})
# Greek and Cyrillic capitals drawn as a Latin capital whose small letter is drawn otherwise (`Η` is an H,
# its small `η` an n; `Μ` an M, its small `μ` a u), and the lunate sigma drawn as c (NFKC makes it a final
# sigma, which the fold makes a σ): read before case folding, or the fold hides them
CAPITALS = str.maketrans({"Η": "h", "Ν": "n", "Μ": "m", "Ζ": "z", "Υ": "y", "Ү": "y",
                          "Ϲ": "c", "ϲ": "c", "ς": "c"})  # (the fold makes the lunate and final sigmas a σ)


def fold_lookalikes(text: str) -> str:
    """``text`` case-folded with look-alike letters read as the Latin ones they mimic (capitals first)."""
    return text.translate(CAPITALS).casefold().translate(CONFUSABLES)


# Characters that draw nothing: zero-width and format characters, and the combining marks and fillers that
# render as nothing (the grapheme joiner, variation selectors, Mongolian free variation selectors, Hangul
# fillers, Khmer inherent vowels): a name typed with one reads as the name without it.
INVISIBLE_RE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u034f\u115f\u1160\u17b4\u17b5"
                          "\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")


# Modifier letters drawn as an apostrophe: Hawaiian's ʻokina, the apostrophe letter of Ukrainian or Nenets `ʼ`,
# the half rings of transliterated Arabic `ʾ ʿ`, primes and stress marks, the Latin saltillo `ꞌ`. Letters of no
# script (Unicode's Common), written inside words of Latin, Cyrillic and other scripts; drawn alike, so identity
# reads none of them: `hawaiʻi`, `hawaiʼi`, `hawaiꞌi` and `hawaii` are one name (a reader reads one word, with
# or without its okina), and no one of them can pose as another, unjudged pattern.
APOSTROPHE_LETTERS = "\u02b9\u02ba\u02bb\u02bc\u02bd\u02be\u02bf\u02c8\u02ca\u02cb\u02ee\ua78b\ua78c"
APOSTROPHES_DROPPED = dict.fromkeys(map(ord, APOSTROPHE_LETTERS))


# Diacritics that stay a combining mark after NFKC (no letter composes with them: `i` + U+0307, `_` + U+0332)
GENERIC_MARKS_RE = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


@lru_cache(maxsize=8192)
def name_key(name: str) -> str:
    """The identity of a name: NFKC, case-folded, invisible characters dropped, look-alikes mapped, and
    combining marks that compose with no letter dropped (`rate_li̇mit` with a dot above its `i` draws as
    `rate_limit`; an accented letter that composes, `é`, stays a letter of its own), and the modifier letters
    drawn as an apostrophe (:data:`APOSTROPHE_LETTERS`) dropped."""
    text = unicodedata.normalize("NFKC", INVISIBLE_RE.sub("", name))
    if not text.isascii():
        text = _marks_on_ascii(GENERIC_MARKS_RE.sub("", text)).translate(APOSTROPHES_DROPPED)
    return fold_lookalikes(text).replace("-", "_")


def _marks_on_ascii(text: str) -> str:
    """``text`` without combining marks written on an ASCII character (a Devanagari nukta under a Latin
    `c`): no script writes them so, and they draw as a speck on a letter a reader reads as plain."""
    return _marks_on_ascii_re().sub("", text)


@lru_cache(maxsize=1)
def _marks_on_ascii_re() -> "re.Pattern[str]":
    from flowgit.words import MARKS

    return re.compile(f"(?<=[\x00-\x7f])[{MARKS}]+")


TAGS_RE = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>")  # HTML a renderer shows nothing of


def as_seen(text: str) -> str:
    """``text`` as a reader sees its characters: tags and comments gone, entities decoded (``&#32;``,
    ``&nbsp;``), NFKC, characters that draw nothing dropped (format characters, :data:`INVISIBLE_RE`). One
    reading for a heading's name and for the words the append rules compare."""
    if "<" in text:
        text = TAGS_RE.sub("", text)
    if "&" in text:
        import html

        text = html.unescape(text)
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    hidden = [ch for ch in set(text)  # (each distinct character once)
              if ch > "\x7f" and (unicodedata.category(ch) == "Cf" or INVISIBLE_RE.match(ch))]
    return text.translate(dict.fromkeys(map(ord, hidden))) if hidden else text


GIST_DROPPED_RE = re.compile(r"[`*_~]|[^\w\s]")  # markup, then every mark that is not a letter, digit or space


def description_gist(text: str) -> str:
    """A description's words: without markup, punctuation, case, spacing, invisible characters or look-alike
    letters (what a rename keeps; a full stop added to a demoted pattern's description, or a Cyrillic `е` in
    it, does not make another claim of it)."""
    folded = fold_lookalikes(unicodedata.normalize("NFKC", INVISIBLE_RE.sub("", text)))
    return " ".join(GIST_DROPPED_RE.sub(" ", folded).split())


def is_rename(old, new) -> bool:
    """Whether pattern ``new`` (under another name) is pattern ``old`` renamed: the same description, or all of
    ``old``'s evidence. The one identity rule: the gate judges a renamed pattern as the pattern, and the
    history and the merge must follow the same life (else a misspelt name the gate let through as a rename
    shows in ``flowgit log`` as a new pattern appearing at 2x)."""
    gist = description_gist(new.text)
    if gist and description_gist(old.text) == gist:
        return True
    return bool(old.evidence) and set(old.evidence) <= set(new.evidence)


# The first word of a letter's Unicode name that is not its script's own: what it is read as instead.
SCRIPT_OF_NAME_WORD = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KANA",
                       "ARABIC-INDIC": "ARABIC", "EXTENDED": "ARABIC"}  # (the Arabic-Indic digits, Persian's too)
# Letters whose script is Common (used by every script): the micro sign, which NFKC turns into a Greek mu.
COMMON_LETTERS = frozenset("\u00b5")
# Scripts written together in one language, none a look-alike of another's letters (UTS #39's "highly
# restrictive" sets): Japanese mixes Han, Hiragana and Katakana; Chinese Han and Bopomofo; Korean Han and
# Hangul; each may also hold Latin (``API呼び出し``). KANA is the prolonged sound mark shared by both kana.
SCRIPTS_WRITTEN_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA", "KANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def scripts(name: str) -> set[str]:
    """The writing systems of a name's letters (LATIN, CYRILLIC, GREEK, HAN, …), each letter read as NFKC
    reads it (a full-width ``ａ`` is Latin); a digit of another script counts as a letter of it (an Oriya
    ``୦`` in ``time୦ut`` is no ASCII ``0``). An apostrophe letter (``hawaiʻi``, ``обʼєкт``) is of none."""
    found = set()
    for raw in name:
        if raw in COMMON_LETTERS or raw in APOSTROPHE_LETTERS:
            continue
        for ch in unicodedata.normalize("NFKC", raw):
            if ch.isalpha() or (ch.isdigit() and not ch.isascii()):
                word = unicodedata.name(ch, "UNKNOWN").split(" ")[0]
                found.add(SCRIPT_OF_NAME_WORD.get(word, word))
    return found


@lru_cache(maxsize=8192)
def is_mixed_script(name: str) -> bool:
    """Whether a name's letters come from scripts no one language writes together (``rеtry`` with a
    Cyrillic ``е``), or one letter of Han, kana or Hangul sits between Latin letters (``CACHE_F工RST``: a
    look-alike inside a Latin word, where ``APIキー`` writes two words); Japanese (``再試行の予算``) and
    Korean or Chinese with Han are one writing system."""
    found = scripts(name)
    if len(found) <= 1:
        return False
    if not any(found <= together for together in SCRIPTS_WRITTEN_TOGETHER):
        return True
    return "LATIN" in found and _letter_inside_a_latin_word(unicodedata.normalize("NFKC", name))


def name_as_shown(name: str) -> str:
    """A pattern's name for a person's reading: a name that mixes scripts (G113's) said so right after it, as
    a look-alike reads exactly as the name it imitates (``rеtry_budget`` beside ``retry_budget``)."""
    if not is_mixed_script(name):
        return name
    return f"{name} [look-alike: mixes {scripts_named(name)} letters; {ascii(name)}]"


def scripts_named(name: str) -> str:
    """The scripts of a name's letters, for a message: ``Cyrillic and Latin``."""
    found = sorted(s.title() for s in scripts(name))
    return ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else "".join(found)


def _letter_inside_a_latin_word(text: str) -> bool:
    """Whether a look-alike of a Latin letter (:data:`CONFUSABLES`) from another script has Latin letters
    right before and right after it (``CACHE_F工RST``); a word of its own there is a word (``iOS和Android``)."""
    latin = [ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN") for ch in text]
    return any(not latin[i] and ord(ch) in CONFUSABLES and 0 < i < len(text) - 1 and latin[i - 1] and latin[i + 1]
               for i, ch in enumerate(text))


SUFFIX_RE = re.compile(r"\s*(?:\(.*\)|\[.*\]|[—–]\s*.*|\s-\s.*|:\s.*|,\s.*|\|.*)$")


def section_key(title: str) -> str:
    """A heading's name without BOM, zero-width characters, case or trailing decoration."""
    return " ".join(unicodedata.normalize("NFKC", INVISIBLE_RE.sub("", title)).casefold().split())


def canonical_section(name: str, table: dict[str, str]) -> str | None:
    """The canonical section a heading names, tolerant of suffixes (``Current State (Nov 30)``, ``— week 48``)."""
    key = section_key(name).rstrip(":").strip()
    if key in table:
        return table[key]
    stripped = SUFFIX_RE.sub("", key).strip()
    if stripped in table:
        return table[stripped]
    for alias in sorted(table, key=len, reverse=True):  # `Proven Knowledge 2026` -> Proven Knowledge
        rest = key[len(alias):]
        joined = rest[:1] in "-/'’" and rest[1:2].isalpha()  # `state-machine`, `actions/reactions`, `state's`
        if key.startswith(alias) and not rest[:1].isalnum() and not joined and (
                alias not in WORD_ALIASES or NUMBER_OR_MARK_RE.fullmatch(rest)):
            return table[alias]
    return None


# Short aliases that begin many names of a user's own sections (`## State machine design`, `## Recent papers`,
# `## Developing the plugin API`, `## Actions we rejected`): followed by more words they name another section;
# only a number or a mark after them (`## State 2026`, `## Recent — week 48`) leaves them the protocol's.
WORD_ALIASES = frozenset({"state", "recent", "developing", "actions"})
NUMBER_OR_MARK_RE = re.compile(r"\s*(?:\d[\w./:-]*|[^\w\s\-/'’].*|\s-\s.*)?")
