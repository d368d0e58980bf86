"""Words as the rules compare them (stems), and as a person reads them back (as written)."""

from __future__ import annotations

from flowgit.output import counted
from flowgit.words import as_written, content_words


def test_stems_are_read_back_as_the_text_writes_them():
    text = "retry_budget: cap retries per request so an outage cannot multiply load"
    stems = content_words("the retries during outages capped the load") & content_words(text)
    assert as_written(text, stems) == ["retry", "cap", "outage", "load"]
    assert as_written("nothing here", frozenset({"outag"})) == ["outag"]  # not written there: as it is


def test_a_count_takes_its_noun_in_the_right_number():
    assert [counted(n, "day") for n in (0, 1, 2)] == ["0 days", "1 day", "2 days"]
    assert counted(1, "try", "tries") == "1 try" and counted(3, "try", "tries") == "3 tries"


# --- words of any script -------------------------------------------------------------------------

import re  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from flowgit.words import clusters, is_character_pair, is_cluster_pair, tokens, word_count  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60))
def test_ascii_text_is_read_as_runs_of_ascii_letters_and_digits_as_before(text):
    assert tokens(text) == re.findall(r"[A-Za-z0-9]+", text.replace("_", " "))


def test_letters_of_other_alphabets_are_words_whole():
    assert sorted(content_words("прогрели кэш товаров до утреннего пика")) == \
        ["кэш", "пика", "прогр", "товар", "утренн"]  # (`до`, two letters, is no word; endings off, see below)
    assert {"größ", "mémoir"} <= content_words("die Größe der mémoire")  # not `gr` and `moire`
    assert content_words("캐시 예열 후 미스 감소") == {"캐시", "예열", "미스", "감소"}  # a two-syllable word is one


def test_chinese_and_japanese_are_read_as_pairs_of_characters_between_hiragana():
    assert tokens("商品缓存") == ["商品", "品缓", "缓存"]
    assert tokens("朝のピーク前に予熱した") == ["朝", "ピー", "ーク", "ク前", "予熱"]  # hiragana separate
    assert content_words("朝のピーク前に予熱した") == {"ピー", "ーク", "ク前", "予熱"}  # one ideograph alone is none
    assert tokens("API的缓存") == ["API", "的缓", "缓存"] and word_count("缓存预热") == 3


def test_thai_lao_khmer_and_burmese_are_read_as_pairs_of_letter_clusters():
    """Written without spaces, a run is one word to ``\\w``: no two texts share it. A cluster is a letter with
    the vowel written before it, its marks and vowel letters after it, a letter stacked under it (Khmer coeng),
    a final letter killed by the Burmese asat; one cluster alone is no word."""
    assert clusters("แคช") == ["แค", "ช"] and clusters("เปลี่ยน") == ["เป", "ลี่", "ย", "น"]
    assert tokens("อุ่นแคช") == ["อุ่น", "นแค", "แคช"] and content_words("ไม่") == frozenset()
    assert tokens("ຂຶ້ນໄວ") == ["ຂຶ້ນ", "ນໄວ"]
    assert clusters("ខ្មែរ") == ["ខ្មែ", "រ"] and clusters("ကက်ရှ်ကို") == ["ကက်", "ရှ်", "ကို"]
    assert tokens("API แคช") == ["API", "แคช"] and tokens("APIแคช") == ["API", "แคช"]
    assert is_cluster_pair("แคช") and not is_cluster_pair("ကက်ရှ်") and is_character_pair("ကက်ရှ်")


def test_a_restatement_in_chinese_has_fewer_words_and_the_same_meaning():
    """Without words, a Chinese item could be cut to a third and no compression rule would see it."""
    long, short = "早高峰前预热商品缓存可以减少未命中", "预热缓存减少未命中"
    assert word_count(short) < word_count(long)
    assert content_words(short) - content_words(long) == {"热缓", "存减"}  # pairs across the joins, the rest shared


def test_the_marks_written_on_letters_stay_in_the_word():
    """Hindi, Thai and Tamil vowel signs are combining marks, which ``\\w`` leaves out: they cut a word into
    letters no other text shares as words."""
    assert tokens("प्रति अनुरोध पुनःप्रयास सीमित करें") == ["प्रति", "अनुरोध", "पुनःप्रयास", "सीमित", "करें"]
    assert tokens("ลองใหม่ ไม่เกิน") == ["ลอ", "อง", "งให", "ใหม่", "ไม่เกิ", "เกิน"]  # (pairs of clusters, below)
    assert "மறுமுயற்சி" in tokens("மறுமுயற்சி வரம்பு")


def test_an_accent_saved_decomposed_is_the_word_saved_composed():
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "Größenänderung bei Lastspitzen")
    assert content_words(decomposed) == content_words("Größenänderung bei Lastspitzen")


def test_a_word_typed_in_fullwidth_letters_or_with_a_ligature_is_the_same_word():
    """An input method left in fullwidth mode writes `ＫＡＮＢＡＮ`; a PDF paste brings `ﬁx`: read in compatibility
    form they are `kanban` and `fix`, so an episode or a deposit written so is found by the plain word."""
    assert content_words("ＫＡＮＢＡＮ ｂｏａｒｄ") == content_words("kanban board")
    assert content_words("ﬁx the ﬂaky test") == content_words("fix the flaky test")


def test_a_russian_word_meets_its_other_forms():
    """Russian inflects by endings: `запросы`/`запросов`, `ограничить`/`ограничение` are one word each."""
    assert content_words("ограничить повторные запросы") == content_words("ограничение повторных запросов")
    assert content_words("нагрузка") == content_words("нагрузку") and content_words("удержались") == \
        content_words("удержал")
    assert content_words("запрос") != content_words("запрет")  # a request is no ban
    assert content_words("ответ") != content_words("отвал") and content_words("минут") != content_words("мины")
    assert content_words("ответы") == content_words("ответ")  # (a stem keeps four letters at least)


def test_the_marks_written_out_are_those_of_the_unicode_tables_they_were_read_from():
    import unicodedata

    import pytest

    from flowgit.words import MARKS, MARKS_UNICODE_VERSION

    if unicodedata.unidata_version != MARKS_UNICODE_VERSION:
        pytest.skip(f"the marks were read from Unicode {MARKS_UNICODE_VERSION}; this Python has "
                    f"{unicodedata.unidata_version}: read them again from its tables")
    live = {cp for cp in (*range(0x300, 0x20000), *range(0xE0100, 0xE01F0))
            if unicodedata.category(chr(cp))[0] == "M"}
    written = {cp for cp in range(0x110000) if re.fullmatch(f"[{MARKS}]", chr(cp))}
    assert written == live
