"""Names and headings as identities: NFKC, case folding, look-alikes, suffixes and BOMs."""

from __future__ import annotations

from flowgit.continuity.document import Document
from flowgit.continuity.flowscript import lint_text
from flowgit.continuity.identity import canonical_section, is_mixed_script, name_key
from flowgit.continuity.patterns import grammar_fix, looks_like_pattern_loose, parse_pattern
from flowgit.continuity.sections import alias_table


def test_name_keys_fold_what_a_reader_cannot_tell_apart():
    assert name_key("Retry_Budget") == name_key("retry_budget") == name_key("ｒｅｔｒｙ_budget")
    assert name_key("re\u200btry-budget") == name_key("retry_budget")
    assert name_key("rеtry") == name_key("retry")  # Cyrillic е
    assert name_key("retry") != name_key("retries")


def test_mixed_scripts_are_detected_single_scripts_are_not():
    assert is_mixed_script("rеtry")  # Latin + Cyrillic
    assert not is_mixed_script("café_rule") and not is_mixed_script("кэш") and not is_mixed_script("p01")


def test_scripts_one_language_writes_together_are_one_writing_system():
    """Japanese mixes Han, Hiragana and Katakana (and the prolonged sound mark both kana share); Korean and
    Chinese mix Han with Hangul or Bopomofo; each may hold Latin. None is a look-alike of another's letters."""
    for name in ("サーバー負荷", "キャッシュ無効化", "再試行の予算", "APIキー", "缓存失效", "캐시_무효화", "漢字한글",
                 "µs_latency", "ｒｅｔｒｙ_budget"):
        assert not is_mixed_script(name), name


def test_an_apostrophe_letter_belongs_to_no_script_and_no_identity():
    """Hawaiian's ʻokina and the apostrophe letter `ʼ` are written inside Latin (or Cyrillic) words: no mix of
    scripts. Drawn alike, they are read as nothing by identity, so one cannot make a twin of another."""
    for name in ("hawaiʻi_cache", "hawaiʼi_cache", "obʼekt_cache", "обʼєкт_кеш", "ʻokina"):
        assert not is_mixed_script(name), name
    for name in ("hawaiʻi_сache", "hawaiʻi_κache"):  # a Cyrillic `с`, a Greek `κ`: still mixed
        assert is_mixed_script(name), name
    for twin in ("hawaiʼi_cache", "hawaiꞌi_cache", "hawaiʽi_cache", "hawaii_cache", "HAWAIʻI_cache"):
        assert name_key(twin) == name_key("hawaiʻi_cache") == "hawaii_cache", twin
    assert name_key("cache_fiʻrst") == name_key("cache_first")


def test_scripts_no_language_writes_together_are_mixed():
    for name in ("retryκ", "ローカルα", "한글ひらがな", "rеtry", "сache_ttl", "ㄅretry한"):
        assert is_mixed_script(name), name


def test_a_han_kana_or_hangul_letter_inside_a_latin_word_is_mixed_and_folds_to_what_it_mimics():
    """Latin may be written beside Han or kana (`APIキー`, `API鍵`), but one such letter between Latin letters is
    a look-alike posing in a Latin word; and the look-alikes fold to what they mimic, so a twin is a twin."""
    for name in ("CACHE_F工RST", "CACHE_FㅣRST", "retryーbudget", "retry一budget"):
        assert is_mixed_script(name), name
    for name in ("APIキー", "API鍵", "サーバー負荷", "iOS和Android兼容", "JavaとPython比較", "iOS와Android호환"):
        assert not is_mixed_script(name), name  # a word of its own between Latin words is a word
    assert is_mixed_script("time୦ut_policy")  # an Oriya zero in a Latin name is no ASCII digit
    for name in ("حد_الإعادة_٣", "مهلة_۵_ثانیه"):  # Arabic and Persian digits belong with Arabic letters
        assert not is_mixed_script(name), name
    for twin, name in (("ttǀ_limit", "ttl_limit"), ("reȷect", "reject"), ("proㄨy_cache", "proxy_cache"),
                       ("力ード", "カード")):
        assert name_key(twin) == name_key(name), twin
    for twin, name in (("tt〡_limit", "ttl_limit"), ("ᴄache_first", "cache_first"), ("cache_fırst", "cache_first"),
                       ("cɑche_first", "cache_first")):
        assert name_key(twin) == name_key(name), twin
    assert name_key("tt丨_limit") == name_key("ttl_limit") and name_key("CACHE_F工RST") == name_key("cache_first")
    assert name_key("retryーbudget") == name_key("retry-budget") == name_key("retry一budget")
    assert name_key("CACHE_FㅣRST") == name_key("cache_flrst")  # (NFKC's conjoining jamo folded too)


def test_section_names_tolerate_suffixes_and_boms():
    table = alias_table()
    for heading in ("Current State (Nov 30)", "Current State — week 48", "\ufeffCurrent State", "State: today",
                    "Proven Knowledge (graduated)", "CURRENT STATE"):
        assert canonical_section(heading, table) in ("Current State", "Proven Knowledge"), heading
    assert canonical_section("Statement of work", table) is None
    doc = Document.parse("\ufeff## Current State — week 48\nx\n\n## Recent Context (Nov)\ny\n")
    assert [s.canonical for s in doc.sections] == ["Current State", "Recent Context"]


def test_loose_recognition_and_the_fix_it_names():
    for line, fix in [("!! p01: x | 2X", "lower-case x"), ("1. ! p01: x | 1x", "numbered"),
                      ("> ! p01: x | 1x", "quoted"), ("!! retry budget: x | 2x", "one word"),
                      ("!! p01: a hard-wrapped line", "same line"), ("!! **p01**: x | 2x", "emphasis")]:
        assert looks_like_pattern_loose(line) and parse_pattern(line) is None, line
        assert fix in grammar_fix(line), (line, grammar_fix(line))
    for plain in ("- a plain item", "! urgent: call the provider", "a | b table", "speed 2x faster"):
        assert parse_pattern(plain) is None
    assert not looks_like_pattern_loose("- a plain item") and not looks_like_pattern_loose("a | b | c")


def test_lint_skips_comment_lines_and_addresses():
    text = "# FS: -> <- = != + | >< {block} ! ?\n- mail <ops@example.com> [decided(rationale: \"x\", on: \"Nov 30\")]\n"
    assert lint_text(text) == []
    assert [f.code for f in lint_text("- speed >< safety\n")] == ["E001"]
