"""Content words: the small vocabulary model shared by relevance, pairing and restatement.

Lower-cased runs of letters and digits of any script, three or more long, stop
words removed, with a light suffix stem so "retries", "retried" and "retry"
meet. Names like ``retry_budget`` split on ``_`` and ``-``. Chinese and
Japanese write no spaces between words: their ideographs and katakana are read
as overlapping pairs of characters (a search engine's usual reading without a
dictionary: ``商品缓存`` holds ``商品``, ``品缓``, ``缓存``), and hiragana, mostly
particles and endings there, separate them. Thai, Lao, Khmer and Burmese write
no spaces either, in letters that carry their vowels and tones as marks: their
runs are read as overlapping pairs of letter clusters (a letter with its marks,
a vowel written before it, or a letter stacked under it), the same reading in a
smaller unit. Korean writes spaces, and a two-syllable word is a word.
"""

from __future__ import annotations

import re
from functools import lru_cache

TOKEN_RE = re.compile(r"[^\W_]+")  # letters and digits of any script
# Ideographs (with their extensions and compatibility forms) and katakana: written without spaces
PAIRED_RUN_RE = re.compile("[\u3005\u3007\u3021-\u3029\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                           "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d\U00020000-\U0003134f]+")
HIRAGANA_RE = re.compile("[\u3041-\u309f]+")
# Thai, Lao, Myanmar and Khmer letters (with their marks and extensions): written without spaces between words
CLUSTERED_RUN_RE = re.compile("[\u0e01-\u0e5b\u0e81-\u0edf\u1000-\u109f\u1780-\u17dd\u17e0-\u17e9"
                              "\u19e0-\u19ff\ua9e0-\ua9fe\uaa60-\uaa7f]+")
UNSPACED_RE = re.compile(f"{PAIRED_RUN_RE.pattern[:-2]}\u3041-\u309f{CLUSTERED_RUN_RE.pattern[1:-2]}]")
MYANMAR_RE = re.compile("[\u1000-\u109f\ua9e0-\ua9fe\uaa60-\uaa7f]")
LEADING_VOWELS = "\u0e40-\u0e44\u0ec0-\u0ec4"  # Thai and Lao vowels written before the letter they follow
FOLLOWING_VOWELS = "\u0e30\u0e32\u0e33\u0e45\u0eb0\u0eb2\u0eb3"  # vowels that are letters, not marks
STACKERS = "\u1039\u17d2"  # Myanmar virama, Khmer coeng: the next letter is written under this one
MYANMAR_ASAT = "\u103a"  # a letter it kills ends the cluster before it
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
RUSSIAN_STEM_MIN = 4


def _russian_stem(word: str) -> str:
    """A Russian word without its reflexive `-ся`/`-сь` and its inflection, four letters kept at least (a
    shorter stem joins unrelated words: `ответ` and `отвал` are no `отв`)."""
    if word.endswith(("ся", "сь")) and len(word) > 6:
        word = word[:-2]
    for ending in RUSSIAN_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= RUSSIAN_STEM_MIN:
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


# The combining marks (Unicode categories Mn, Mc, Me) of Unicode 14.0, Python 3.11's tables, as a regular
# expression's class (written out: reading them from unicodedata costs every process that meets one non-ASCII
# text 30 ms; tests/test_words.py holds it to the live tables of the Unicode version it was written from)
MARKS_UNICODE_VERSION = "14.0.0"
MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5\u05c7\u0610-\u061a"
    "\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7-\u06e8\u06ea-\u06ed\u0711\u0730-\u074a"
    "\u07a6-\u07b0\u07eb-\u07f3\u07fd\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d\u0859-\u085b"
    "\u0898-\u089f\u08ca-\u08e1\u08e3-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957\u0962-\u0963"
    "\u0981-\u0983\u09bc\u09be-\u09c4\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe\u0a01-\u0a03"
    "\u0a3c\u0a3e-\u0a42\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83\u0abc"
    "\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c\u0b3e-\u0b44"
    "\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62-\u0b63\u0b82\u0bbe-\u0bc2\u0bc6-\u0bc8\u0bca-\u0bcd"
    "\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d\u0c55-\u0c56\u0c62-\u0c63"
    "\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd\u0cd5-\u0cd6\u0ce2-\u0ce3\u0d00-\u0d03"
    "\u0d3b-\u0d3c\u0d3e-\u0d44\u0d46-\u0d48\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca"
    "\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2-\u0df3\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc"
    "\u0ec8-\u0ecd\u0f18-\u0f19\u0f35\u0f37\u0f39\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97"
    "\u0f99-\u0fbc\u0fc6\u102b-\u103e\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074"
    "\u1082-\u108d\u108f\u109a-\u109d\u135d-\u135f\u1712-\u1715\u1732-\u1734\u1752-\u1753\u1772-\u1773"
    "\u17b4-\u17d3\u17dd\u180b-\u180d\u180f\u1885-\u1886\u18a9\u1920-\u192b\u1930-\u193b\u1a17-\u1a1b"
    "\u1a55-\u1a5e\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace\u1b00-\u1b04\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82"
    "\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9"
    "\u1dc0-\u1dff\u20d0-\u20f0\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u302a-\u302f\u3099-\u309a\ua66f-\ua672"
    "\ua674-\ua67d\ua69e-\ua69f\ua6f0-\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c\ua880-\ua881"
    "\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983\ua9b3-\ua9c0\ua9e5"
    "\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4\uaab7-\uaab8\uaabe-\uaabf\uaac1"
    "\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed\ufb1e\ufe00-\ufe0f\ufe20-\ufe2f\U000101fd"
    "\U000102e0\U00010376-\U0001037a\U00010a01-\U00010a03\U00010a05-\U00010a06\U00010a0c-\U00010a0f"
    "\U00010a38-\U00010a3a\U00010a3f\U00010ae5-\U00010ae6\U00010d24-\U00010d27\U00010eab-\U00010eac"
    "\U00010f46-\U00010f50\U00010f82-\U00010f85\U00011000-\U00011002\U00011038-\U00011046\U00011070"
    "\U00011073-\U00011074\U0001107f-\U00011082\U000110b0-\U000110ba\U000110c2\U00011100-\U00011102"
    "\U00011127-\U00011134\U00011145-\U00011146\U00011173\U00011180-\U00011182\U000111b3-\U000111c0"
    "\U000111c9-\U000111cc\U000111ce-\U000111cf\U0001122c-\U00011237\U0001123e\U000112df-\U000112ea"
    "\U00011300-\U00011303\U0001133b-\U0001133c\U0001133e-\U00011344\U00011347-\U00011348"
    "\U0001134b-\U0001134d\U00011357\U00011362-\U00011363\U00011366-\U0001136c\U00011370-\U00011374"
    "\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5\U000115b8-\U000115c0"
    "\U000115dc-\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7\U0001171d-\U0001172b"
    "\U0001182c-\U0001183a\U00011930-\U00011935\U00011937-\U00011938\U0001193b-\U0001193e\U00011940"
    "\U00011942-\U00011943\U000119d1-\U000119d7\U000119da-\U000119e0\U000119e4\U00011a01-\U00011a0a"
    "\U00011a33-\U00011a39\U00011a3b-\U00011a3e\U00011a47\U00011a51-\U00011a5b\U00011a8a-\U00011a99"
    "\U00011c2f-\U00011c36\U00011c38-\U00011c3f\U00011c92-\U00011ca7\U00011ca9-\U00011cb6"
    "\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d\U00011d3f-\U00011d45\U00011d47"
    "\U00011d8a-\U00011d8e\U00011d90-\U00011d91\U00011d93-\U00011d97\U00011ef3-\U00011ef6"
    "\U00016af0-\U00016af4\U00016b30-\U00016b36\U00016f4f\U00016f51-\U00016f87\U00016f8f-\U00016f92"
    "\U00016fe4\U00016ff0-\U00016ff1\U0001bc9d-\U0001bc9e\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46"
    "\U0001d165-\U0001d169\U0001d16d-\U0001d172\U0001d17b-\U0001d182\U0001d185-\U0001d18b"
    "\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c\U0001da75"
    "\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf\U0001e000-\U0001e006\U0001e008-\U0001e018"
    "\U0001e01b-\U0001e021\U0001e023-\U0001e024\U0001e026-\U0001e02a\U0001e130-\U0001e136\U0001e2ae"
    "\U0001e2ec-\U0001e2ef\U0001e8d0-\U0001e8d6\U0001e944-\U0001e94a\U000e0100-\U000e01ef"
)


@lru_cache(maxsize=1)
def _marked_token_re() -> "re.Pattern[str]":
    """Letters and digits with the combining marks written on them: Hindi, Thai or Tamil vowel signs, an accent
    saved decomposed (Python's ``\\w`` leaves marks out, which cut `पुनःप्रयास` into single letters; compiled
    when a text first needs it)."""
    return re.compile(f"(?:[^\\W_]|[{MARKS}])+")


def tokens(text: str) -> list[str]:
    """The words of ``text`` in order, as written: runs of letters and digits (with the marks written on
    them, read in compatibility form (NFKC): an accent saved decomposed, a word typed in fullwidth letters
    (``ＫＡＮＢＡＮ``) or with a ligature (``ﬁx``) is the same word), with Chinese and Japanese read as pairs
    of characters (see the module's docstring). ``_`` separates words."""
    if text.isascii():
        return TOKEN_RE.findall(text.replace("_", " "))
    import unicodedata

    found = _marked_token_re().findall(unicodedata.normalize("NFKC", text).replace("_", " "))
    out: list[str] = []
    for word in found:
        if word.isascii() or not UNSPACED_RE.search(word):
            out.append(word)
        else:
            out.extend(_paired(word))
    return out


def _paired(word: str) -> list[str]:
    """A run holding letters of a script written without spaces: the other letters as words, each run of
    ideographs or katakana as its overlapping pairs of characters, each Thai, Lao, Khmer or Burmese run as
    its overlapping pairs of clusters (one unit alone as itself), hiragana left out."""
    out: list[str] = []
    for part in HIRAGANA_RE.split(word):
        pos = 0
        for run in _unspaced_run_re().finditer(part):
            if run.start() > pos:
                out.append(part[pos:run.start()])
            units = list(run.group()) if run.lastgroup == "paired" else clusters(run.group())
            out.extend(["".join(units[i:i + 2]) for i in range(len(units) - 1)] if len(units) > 1 else units)
            pos = run.end()
        if pos < len(part):
            out.append(part[pos:])
    return out


@lru_cache(maxsize=1)
def _unspaced_run_re() -> "re.Pattern[str]":
    return re.compile(f"(?P<paired>{PAIRED_RUN_RE.pattern})|(?P<clustered>{CLUSTERED_RUN_RE.pattern})")


@lru_cache(maxsize=1)
def _cluster_re() -> "re.Pattern[str]":
    """A letter cluster of Thai, Lao, Khmer or Burmese: a letter with the vowels written before it, the marks
    and vowel letters after it, letters stacked under it, and a final letter killed by the Burmese asat (what
    a reader sees as one unit; compiled when a text first needs it)."""
    return re.compile(f"[{LEADING_VOWELS}]*[^{MARKS}]"
                      f"(?:[{STACKERS}][^{MARKS}]|[^{MARKS}{LEADING_VOWELS}]{MYANMAR_ASAT}|[{MARKS}{FOLLOWING_VOWELS}])*")


@lru_cache(maxsize=8192)
def clusters(run: str) -> list[str]:
    """The letter clusters of a run of Thai, Lao, Khmer or Burmese (``แคช`` is ``แค``, ``ช``)."""
    return _cluster_re().findall(run)


def is_character_pair(word: str) -> bool:
    """Whether the word is a pair of ideographs or katakana, or of Burmese clusters (how Chinese, Japanese and
    Burmese are read here: units of a syllable or more; a Burmese cluster holds its final letter)."""
    if len(word) == 2 and PAIRED_RUN_RE.fullmatch(word) is not None:
        return True
    return MYANMAR_RE.match(word) is not None and _clusters_pair(word)


def is_cluster_pair(word: str) -> bool:
    """Whether the word is a pair of Thai, Lao or Khmer letter clusters (units of about half a syllable: a
    final letter is a cluster of its own)."""
    return not word.isascii() and MYANMAR_RE.match(word) is None and _clusters_pair(word)


def _clusters_pair(word: str) -> bool:
    return CLUSTERED_RUN_RE.fullmatch(word) is not None and len(clusters(word)) == 2


def _meaningful(token: str) -> bool:
    """Whether a word counts: three or more letters (two for a pair of ideographs or kana, or a Korean
    word; a Thai, Lao, Khmer or Burmese one is a pair of clusters, one alone is none), not a stop word, not
    a number."""
    if not token.isascii() and CLUSTERED_RUN_RE.fullmatch(token):
        return _clusters_pair(token) and token not in STOP and not token.isdigit()
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
