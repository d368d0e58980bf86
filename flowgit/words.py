"""Content words: the small vocabulary model shared by relevance, pairing and restatement.

Lower-cased runs of letters and digits of any script, three or more long, stop
words removed, with a light suffix stem so "retries", "retried" and "retry"
meet. Names like ``retry_budget`` split on ``_`` and ``-``. Chinese and
Japanese write no spaces between words: their ideographs and katakana are read
as overlapping pairs of characters (a search engine's usual reading without a
dictionary: ``商品缓存`` holds ``商品``, ``品缓``, ``缓存``), and hiragana, mostly
particles and endings there, separate them. Korean writes spaces, and a
two-syllable word is a word.
"""

from __future__ import annotations

import re
from functools import lru_cache

TOKEN_RE = re.compile(r"[^\W_]+")  # letters and digits of any script
# Ideographs (with their extensions and compatibility forms) and katakana: written without spaces
PAIRED_RUN_RE = re.compile("[\u3005\u3007\u3021-\u3029\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                           "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d\U00020000-\U0003134f]+")
HIRAGANA_RE = re.compile("[\u3041-\u309f]+")
HANGUL_RE = re.compile("[\uac00-\ud7a3]")
STOP = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers him his how i if in into is it its itself just let me more most my no nor not now of off
on once only or other our ours out over own same she should so some such than that the their them then
there these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours via per one two three get got make made use used using
thing things way ways still already really much many every need needs new next last keep kept
basically generally overall essentially simply actually literally mostly largely typically usually normally
quite rather fairly pretty somewhat truly indeed definitely certainly clearly obviously arguably
""".split()) | frozenset("""
для что как это так его она они оно уже или при без над под про все всё был была были было быть есть если чем
там тут где когда тоже также только ещё еще очень чтобы после перед между через который которая которые этот
эта эти того этого нас вас них ему мне себя свой своя свои можно нужно надо снова опять теперь сейчас сегодня
für und der die das den dem des ein eine einen einem einer nicht mit von auf aus bei nach über unter vor zum
zur ist sind war waren wird werden hat haben auch noch schon wie was wenn dass oder aber sich sie wir ihr ich
man nur sehr dann hier dort heute wieder alle alles kein keine
pour les des une dans par sur avec sans sous est sont était été être avoir ont pas plus mais que qui quoi dont
cette ces cet son ses leur leurs nous vous ils elle elles aux très aussi encore déjà tout tous toute toutes
comme quand alors puis hier
para por los las una uno unos unas con sin sobre entre desde hasta qué como cuando donde este esta estos
estas ese esa eso del está están ser estar hay muy más pero también otra otro todo todos nos sus hoy ayer
per che non della delle dei degli nel nella sono anche più com não uma dos das nas pelo pela são foi mais
可以 我们 一个 这个 那个 没有 因为 所以 但是 如果 就是 不是 已经 然后 可能 需要 他们 你们 什么 还是 或者 这些 那些
自己 今天 昨天 时候 现在
今回 今日 場合 以上 以下 必要 確認 対応 本日 前回 次回
그리고 하지만 그래서 그런데 또는 그러나 오늘 어제 이번 다음 우리 그것 이것
jest dla nie się oraz ale czy jak tak już przez przy tylko jego być był była było są ich
için bir ile ama daha çok gibi olarak kadar sonra değil var yok ve bu şu
""".split())  # (the adverbs: words that add no claim, such as a restatement padded to look new; then the
# commonest function words of other languages (Russian, German, French, Spanish, Italian, Portuguese, Chinese,
# Japanese, Korean, Polish, Turkish), which would otherwise weigh as rare words that make an episode "about" a
# pattern)


# Words too everyday to make an episode "about" a pattern on their own (stemmed at use).
EVERYDAY = frozenset("""
time times day days week weeks month today yesterday tomorrow hour hours minute minutes second seconds year
work worked working fix fixed fixes issue issues problem problems good bad better worse best run runs ran
test tests tested change changed changes update updated start started stop stopped open opened close closed
look looked find found show showed add added remove removed set sets call called line lines part parts
case cases place point points fact facts note notes small large big high low fast slow long short right
wrong true false five four six ten twenty hundred first again once twice always never often today's
people person team user users thing stuff something nothing everything lot lots kind sort number numbers
data file files code system systems tool tools step steps end ends side sides word words name names
""".split())


# Russian endings, longest first: case, number and gender of nouns and adjectives, a verb's infinitive, tense
# and person, and the `-ение` of a verbal noun (so `ограничить`, `ограничение` and `ограничили` meet)
RUSSIAN_ENDINGS = tuple(sorted("""
ением ениям ениях ения ение ению ений ость ости остью ами ями ого его ому ему ыми ими ать ять ить еть уть ыть
ешь ете ите ала ила ыла ела али или ыли ели ало ило ыло ело ют ут ат ят ит ет ал ил ыл ел ах ях ов ев ей ам ям
ом ем ая яя ое ее ые ие ый ий ой ым им ую юю их ых ию ия ь а я о е ы и у ю
""".split(), key=len, reverse=True))
CYRILLIC_RE = re.compile("[\u0400-\u04ff]")


def _russian_stem(word: str) -> str:
    """A Russian word without its reflexive `-ся`/`-сь` and its inflection, three letters kept at least."""
    if word.endswith(("ся", "сь")) and len(word) > 5:
        word = word[:-2]
    for ending in RUSSIAN_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: len(word) - len(ending)]
    return word


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light stem: plural and tense endings off, then a final silent ``e`` (cache/caches/cached meet); a
    Russian word's inflection off (Russian marks case, number and tense by endings: without this, no two
    texts but those repeating a word's very form share it)."""
    w = word.lower()
    if not w.isascii() and CYRILLIC_RE.match(w):
        return _russian_stem(w)
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""),
                         ("ly", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: len(w) - len(suffix)] + keep
            if suffix in ("ing", "ed") and len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # "stopped" -> "stop"
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


EVERYDAY_STEMS = frozenset(stem(w) for w in EVERYDAY)


@lru_cache(maxsize=1)
def marks_class() -> str:
    """The combining marks of this Python's Unicode tables, as the inside of a regular expression's class."""
    import unicodedata

    ranges: list[list[int]] = []
    for cp in (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0)):
        if unicodedata.category(chr(cp))[0] == "M":
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in ranges)


@lru_cache(maxsize=1)
def _marked_token_re() -> "re.Pattern[str]":
    """Letters and digits with the combining marks written on them: Hindi, Thai or Tamil vowel signs, an accent
    saved decomposed. (Python's ``\\w`` leaves marks out, which cut `पुनःप्रयास` into single letters; the class
    is read from this Python's Unicode tables, once, when a text first needs it.)"""
    return re.compile(f"(?:[^\\W_]|[{marks_class()}])+")


def tokens(text: str) -> list[str]:
    """The words of ``text`` in order, as written: runs of letters and digits (with the marks written on
    them, read composed: an accent saved decomposed is the same word), with Chinese and Japanese read as
    pairs of characters (see the module's docstring). ``_`` separates words."""
    if text.isascii():
        return TOKEN_RE.findall(text.replace("_", " "))
    import unicodedata

    found = _marked_token_re().findall(unicodedata.normalize("NFC", text).replace("_", " "))
    out: list[str] = []
    for word in found:
        if word.isascii() or not PAIRED_RUN_RE.search(word) and not HIRAGANA_RE.search(word):
            out.append(word)
        else:
            out.extend(_paired(word))
    return out


def _paired(word: str) -> list[str]:
    """A run holding ideographs, katakana or hiragana: the other letters as words, each ideograph or katakana
    run as its overlapping pairs (one character alone as itself), hiragana left out."""
    out: list[str] = []
    for part in HIRAGANA_RE.split(word):
        pos = 0
        for run in PAIRED_RUN_RE.finditer(part):
            if run.start() > pos:
                out.append(part[pos:run.start()])
            chars = run.group()
            out.extend([chars[i:i + 2] for i in range(len(chars) - 1)] if len(chars) > 1 else [chars])
            pos = run.end()
        if pos < len(part):
            out.append(part[pos:])
    return out


def is_character_pair(word: str) -> bool:
    """Whether the word is a pair of ideographs or katakana (how Chinese and Japanese are read here)."""
    return len(word) == 2 and PAIRED_RUN_RE.fullmatch(word) is not None


def _meaningful(token: str) -> bool:
    """Whether a word counts: three or more letters (two for a pair of ideographs or kana, or a Korean
    word), not a stop word, not a number."""
    if len(token) < 3 and not (len(token) == 2 and (PAIRED_RUN_RE.fullmatch(token) or HANGUL_RE.search(token))):
        return False
    return token.lower() not in STOP and not token.isdigit()


def content_words(text: str) -> frozenset[str]:
    """The stemmed meaningful words of ``text``."""
    return frozenset(stem(t) for t in tokens(text) if _meaningful(t))


def written_words(text: str) -> dict[str, str]:
    """{stem: the word as ``text`` first writes it, lower-cased} of its content words: what a reader is shown
    of a word the model knows by its stem ("balance", not "balanc")."""
    out: dict[str, str] = {}
    for token in tokens(text):
        if _meaningful(token):
            out.setdefault(stem(token), token.lower())
    return out


def word_count(text: str) -> int:
    return len(tokens(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the smaller set found in the other (1.0 = one says nothing the other doesn't)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def as_written(text: str, stems: frozenset[str] | set[str]) -> list[str]:
    """Each of ``stems`` as ``text`` first writes it (``outage`` for ``outag``), in the text's order; a stem
    the text does not hold is given as it is. What a person reads back is words, not stems."""
    found: dict[str, str] = {}
    for token in tokens(text):
        key = stem(token)
        if key in stems and key not in found:
            found[key] = token.lower()
    return [*found.values(), *sorted(s for s in stems if s not in found)]
